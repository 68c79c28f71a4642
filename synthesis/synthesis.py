# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   mystnb:
#     execution_mode: force
# ---

# %% [markdown]
# # Synthesis — four papers, one model family, one ledger
#
# The four paper chapters each reproduce one paper in its own notation and setting. This chapter
# starts with the verdicts of all four and the open problems the reproduction surfaced; then it puts
# the papers side by side (what each proves and under which assumptions), runs one experiment that
# sends two papers' settings through the same code, and ends with the complete claims ledger of the
# book, one folded table per paper.
#
# The counts are those decided at the papers' own settings; the complete ledger collects the claims
# that every chapter measured when the book was built, so it shows the verdicts of the chapters as they are now.

# %% tags=["remove-cell"]
# Setup cell, generated from _config.yml by tools/check_notebooks.py --first-cell.
# In Colab it installs the icl_lab library from the book's repository; elsewhere it installs nothing.
# Pick the scale of the experiments here: scale="ci" (fastest), "book" or "paper";
# None keeps $ICL_LAB_SCALE if set, else "book". The table it prints gives the run time of each.
import subprocess
import sys

if "google.colab" in sys.modules:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "icl_lab @ git+https://github.com/icl-lab/icl-lab.git@main"], check=True)
import icl_lab.notebook

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.09, "book": 0.11, "paper": 0.1})

# %%
import functools

import torch
from IPython.display import Markdown

import icl_lab
from icl_lab import plotting, widgets
from icl_lab.claims import ClaimsTable
from icl_lab.data import LinearTask, PromptSampler, standard_basis
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.synthesis import checks
from icl_lab.papers.synthesis import figures as SF
from icl_lab.papers.synthesis.experiments import CrossPaperConfig, contrast_law_fit, run_cross_paper
from icl_lab.papers.synthesis.theory import nadaraya_watson_by_hand

SCALE, ledger = icl_lab.notebook.chapter("synthesis")

# %% tags=["remove-cell"]
# the headline: the ledgers shipped at the papers' own settings, as the introduction counts them
at_paper = ClaimsTable.load(icl_lab.paths.REFERENCE / "claims" / "paper")
build = ClaimsTable.load()  # this build's ledgers, of the papers' chapters
headline = ClaimsTable([c for c in build.claims if c.paper != "synthesis"],
                       [p for c, p in zip(build.claims, build.parts) if c.paper != "synthesis"])
missing = [p for p in headline.missing() if p != "synthesis"]
glue("syn-headline", Markdown(at_paper.counts_markdown("paper")))
glue("syn-consistency", SF.status_total(at_paper, "consistency"))
glue("syn-findings", SF.status_total(at_paper, "finding"))
glue("syn-build", Markdown(
    (f"Not yet run at this scale (run their notebooks, or build the book): {', '.join(missing)}. " if missing else "")
    + ("" if SCALE == "paper" else f"The chapters of this build ran at `{SCALE}` scale, where the papers' claims "
       f"stand at {SF.status_total(headline, 'paper')}; the reproduction page lists the claims whose status differs, "
       "with the reason. ") + "The complete ledger below is this build's."))
glue("syn-c13-slope", SF.measured_numbers(at_paper, "nonlinear", "C13", r"slope_at_the_step_of_Eq_8 = ([-0-9.]+)")[0])
glue("syn-c13-status", SF.claim_status(at_paper, "nonlinear", "C13"))
glue("syn-u2-K", SF.measured_numbers(at_paper, "convergence", "U2-p03", r"reaches -0\.49 log K: ([0-9.e+]+)")[0])
glue("syn-u2-status", SF.claim_status(at_paper, "convergence", "U2-p03"))
glue("syn-c8b-rate", SF.measured_numbers(at_paper, "nonlinear", "C8b", r"T ~ eps\^-([0-9.]+) \(median over sets")[0])
s3 = SF.measured_numbers(at_paper, "selectors", "S3", r"slope = ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]")
for name, value in zip(("slope", "lo", "hi"), s3):
    glue(f"syn-s3-{name}", value)
s3_violated = SF.violated_hypotheses(at_paper, "selectors", "S3")
glue("syn-s3-status", SF.claim_status(at_paper, "selectors", "S3")
     + (f", measured where {' and '.join(s3_violated)} does not hold" if s3_violated else ""))

# %% [markdown]
# ## The verdicts at a glance
#
# The papers' own claims, by status (how a status is decided: {ref}`claims-rules`). The complete
# ledger, claim by claim, is at the end of this page.
#
# ```{glue:md} syn-headline
# :format: myst
# ```
#
# Decided at the papers' own settings (`paper` scale). Counted apart: consistency checks of the
# library's own code or of identities, {glue:text}`syn-consistency`; findings of the book's own,
# {glue:text}`syn-findings`. {glue:md}`syn-build:myst`

# %% [markdown]
# ## Open problems the reproduction surfaced
#
# An item is listed here only if it survives the rules of {ref}`claims-rules`: a measurement inside
# the statement's hypotheses that the paper does not explain, or a question the measurements raise
# and cannot settle. Bounds that hold but are not tight and successes outside sufficient conditions
# are not open problems; they are recorded as caveats and findings in the chapters. The numbers and
# statuses quoted are those of the ledgers at the papers' own settings.
#
# 1. **Where do phase boundaries come from?** In the nonlinear paper's theory model GD at
#    $(\eta, L)$ is exactly GD at $(\eta L^2, 1)$, so $L$ only rescales time (finding R1): a
#    flat/sharp transition at a threshold $L^\star$ must be stated in terms of $\eta L^2$ and the
#    step size, not of $L$ alone. The feature norm enters the same way: App. C evaluates the attention
#    gradient for unit-norm features and drops the factor $\|v\|^4 = \Delta^4/4$ that features at
#    distance $\Delta$ carry, so at the paper's step the first phase shortens like $\Delta^{-6}$, not
#    $\Delta^{-2}$ (C13, {glue:text}`syn-c13-status`: measured log-log slope
#    {glue:text}`syn-c13-slope:.2f`). (The convergence paper's literal end of phase I at $p_1 = 0.3$,
#    $B_{k,1} \le -0.49\log K$, reached only for $K$ above about {glue:text}`syn-u2-K:.0e`, is not
#    open: the gap to $-\tfrac12\log K$ is the paper's own $O(\cdot)$ term, $\log((1-p_1)/p_1)/\log K$,
#    and U2-p03 is {glue:text}`syn-u2-status`.)
# 2. **The flat regime's logarithmic rate.** The nonlinear paper's Theorem 1 predicts that the time
#    to accuracy $\epsilon$ grows like $\log(K/\epsilon)$ in the flat regime; inside the theorem's
#    hypotheses ($K \ge 1/\epsilon$, $N = 2K^3$) it grows like a power of $1/\epsilon$ (C8b: exponent
#    {glue:text}`syn-c8b-rate:.2f`; over the factor of 4 in $\epsilon$ that $K \ge 1/\epsilon$ leaves, the times stay
#    below the bound with constant 1, so the bound is not contradicted, but the rate is not its logarithm), as the
#    sharp regime's $1/\epsilon$ law (C9) and the convergence paper's phase IV (B3, F1) do. The late
#    phase of both Q-only models is polynomial, $\mathcal L \approx (K-1)/(4\eta s^4 t)$ for the
#    nonlinear one (R2) and $\mathcal L_k \approx 1/(4p_k\tau)$ for the convergence one (U5); a
#    logarithmic rate would need an $\epsilon$-dependent step size.
# 3. **The practical block's training setup is unstated.** The nonlinear paper names no optimizer
#    for its practical block, and its ordering and timing claims ("larger $L$ converges faster",
#    Figs. 1 and 4; the epochs of Figs. 2 and 3) depend on that choice. Plain SGD is the reading
#    closest to the paper's gradient-descent analysis, but nothing in the paper says it trained that way;
#    under Adam, whose steps do not grow with the gradient, the sharp set's order is reversed and
#    Fig. 2's level is reached in time. Where the two disagree the nonlinear chapter files the figure
#    as inconclusive (F1b, F2). What is open is the paper's training setup, not a property of its
#    transformer. Separately, the convergence paper's optimiser settings cannot train the Q-only model
#    it analyses (A'2).
# 4. **Dimension in the window paper's rates.** The measured noise exponent is the intrinsic
#    $(d-1)/2$, not $d/2$, and the window's scaling with $\Lambda$ saturates gradually rather than at
#    a threshold; the theorem's admissible regime is empty for every $n$ we could simulate. In the
#    low-rank experiment (Fig. 9) Adam's alignment $\rho$ with the task subspace falls and then rises
#    back for the quadratic and cosine classes; the sphere's coupling of the directions outside the
#    subspace does not explain it alone (E-F9-sphere), and the paper gives no iteration count to
#    compare with.
# 5. **How the selectors paper's iteration count depends on $\lambda_*$.** Inside Theorem 1's regime
#    (width, batch, initialisation and noise conditions all met, $m = 3700$) the iterations to zero
#    error grow like $\lambda_*^{-s}$ with $s =$ {glue:text}`syn-s3-slope:.2f` (bootstrap interval over
#    seeds [{glue:text}`syn-s3-lo:.2f`, {glue:text}`syn-s3-hi:.2f`]), beyond the bound's
#    $\lambda_*^{-1}$ (S3, {glue:text}`syn-s3-status`; the
#    narrow setting gives $\lambda_*^{-2.2}$ too). The proof's initial score gap carries two factors,
#    $\lambda_s\lambda_{l+1}$, where Lemma 4 keeps one, which would explain a second power. The output
#    layer does not follow $\lambda_*$ either: Lemma 3's ratio of feature to label updates is flat in
#    $\lambda_*$ on the coordinate blocks of its statement and along the directions its proof evaluates
#    (S10). (The other two "failures" an
#    earlier reading listed are not open: the iteration count is flat in $M$ where eq. (6) grows
#    like $\sqrt M$, a bound that is not tight (S5), and combinations with negative coefficients
#    generalise out of domain, which Theorem 2's sufficient conditions allow (O6, a finding).)
# 6. **A common clock for the first phase.** The contrast law (below) puts the convergence and
#    nonlinear papers' first phases on one curve. Whether the same scalar governs the later phases,
#    the selectors paper's attention collapse (whose recursion (46) predicts the wrong dependence on
#    $\alpha$), or the window paper's growth of $\lVert M\rVert$ with $L$, is untested here.

# %% [markdown]
# ## The four papers side by side
#
# | | convergence {cite:p}`huang2024convergence` | nonlinear {cite:p}`li2025nonlinear` | window {cite:p}`collins2024softmax` | selectors {cite:p}`li2023selectors` |
# |---|---|---|---|---|
# | inputs | $K$ orthonormal features, token $= v_k$ w.p. $p_k$ | $K$ features separated by $\Theta(\Delta)$ | uniform on the sphere $S^{d-1}$ (also anisotropic, low-rank) | relevant pattern $\mu_j$ + irrelevant $\nu_k$ + bounded noise |
# | tasks | linear, $w$ zero-mean, identity covariance | non-degenerate $L$-Lipschitz class | affine, 2-ReLU, cosine with Lipschitz constant $L$; label noise $\sigma$ | binary: two relevant patterns labelled $\pm 1$ |
# | model | $\hat y=\sum_i a_i y_i$, logits $x_i^\top Q x_q$ | same | same with $M = W^\top W$; linear attention as baseline | full softmax attention + ReLU MLP, hinge loss |
# | training | GD on the population loss from $Q = 0$ | GD from $Q = 0$ | minimiser of the population loss (experiments: Adam) | online SGD from a structured init |
# | main statement | balanced: 2 phases; imbalanced: dominant 1 phase, others 4 | flat $L$: 2 phases; sharp $L$: 3 phases, the last one slow | optimal window width $\propto$ a power of $\Lambda = nL^2/\sigma^2$; linear attention $\ge L^2/3$ | zero in-domain error; out-of-domain under three conditions |
# | what the proof tracks | $A_k$ vs $B_{k,n}$ | $q_k$ vs $q_{k,k'}$ | signal and noise terms of the NW estimator | $\lVert W_{Q,K}\mu\rVert$ vs $\lVert W_{Q,K}\nu\rVert$, attention mass $1-\gamma_t$ |
# | key assumptions | $w$ isotropic; $N$ large ($N \gtrsim K^3$ style conditions); population GD | separation $\Delta$, imbalance $\delta$, $N$ large | $n$ large, $\sigma$ and $L$ in a window of validity | task-set balance, $\alpha$ and prompt length, orthogonal patterns |
#
# The introduction's *How the papers fit together* lists the links between the statements. The
# chapters measured them; this page collects what the measurements say.
#
# ## One family, checked in code
#
# All four models are the same read-out with a different parametrisation of the score matrix. A
# direct check: the Q-only model of the convergence and nonlinear papers with $Q = W^\top W$, the
# window paper's tied kernel model with weight $W$, and the Nadaraya–Watson formula written out by
# hand, $\hat y = \sum_i y_i e^{x_i^\top W^\top W x_q} / \sum_j e^{x_j^\top W^\top W x_q}$, give the same
# predictions on the same prompts, and each prediction is a convex combination of the context labels.

# %%
g = icl_lab.make_generator(0)
d = 6
V = standard_basis(4, d)  # 4 orthonormal features in R^6
batch = PromptSampler.from_features(V, LinearTask(d), N=12).sample(64, g)
W = torch.randn(1, d, d, generator=g, dtype=torch.float64) * 0.7
q_only = icl_lab.QOnlyAttention(d, runs=1).to(dtype=torch.float64)
kernel = icl_lab.KernelAttention(d, runs=1, tied=True).to(dtype=torch.float64)
with torch.no_grad():
    q_only.Q.copy_(W.transpose(-1, -2) @ W)  # Q = W^T W
    kernel.W.copy_(W)
    out_q, out_k = q_only(batch), kernel(batch)
by_hand = nadaraya_watson_by_hand(batch.x, batch.y, batch.x_query, W[0].T @ W[0])
print(f"largest difference to the formula: Q-only {float((out_q.pred[0, :, 0] - by_hand).abs().max()):.1e}, "
      f"kernel {float((out_k.pred[0, :, 0] - by_hand).abs().max()):.1e}")

# %% tags=["remove-input"]
assert all(c.ok for c in ledger.judge(checks.one_family(out_q.pred[0, :, 0], out_k.pred[0, :, 0], by_hand, batch.y),
                                      show=False))

# %% [markdown]
# ## Two papers' settings through the same code
#
# The convergence paper's tasks are linear, $y = \langle w, x\rangle$ with $w \sim \mathcal N(0, I)$;
# the nonlinear paper's are $L$-Lipschitz, $y = (L/c)\cos(c\,w^\top x + \varphi)$. Both train the same
# Q-only model from $Q = 0$ on tokens drawn from a feature dictionary. Which property of the task
# family sets how fast attention concentrates on the query's own feature?
#
# At $Q = 0$ the attention is uniform and $\hat y$ is the context average. Differentiating the loss
# once ({prf:ref}`lem-qonly-gradient` in Chapter 1) shows that the growth of the diagonal entry
# $S_{k,k}$ is driven by how far the labels of feature $k$ sit from those of the other features in
# the same prompt — not by the labels' overall spread, since a common offset shared by all tokens of
# a prompt cancels in $y_i - \hat y$. This suggests one scalar per task family, the **label contrast**
#
# $$
# C \;=\; \tfrac12\,\mathbb E_f\big[(f(v_k) - f(v_j))^2\big], \qquad k \ne j .
# $$
#
# For the linear task $C = 1$ exactly; for the cosine family $C \approx L^2/d$ for small $c$ (the
# projections $w^\top v_k$ of $w \sim U(S^{d-1})$ have variance $1/d$), while its label *variance*
# is about $2L^2$, dominated by the random offset $(L/c)\cos\varphi$ that every token of a prompt
# shares.
#
# ```{prf:conjecture} Contrast law (this book's, not either paper's)
# :label: conj-contrast
#
# With the learning rate fixed, the time for the mean own-feature attention to get halfway from
# uniform ($1/K$) to one scales as $1/C$, for linear and Lipschitz task families alike.
# ```
#
# The experiment trains one linear law and one cosine law per $L$, all seeds together, in **one**
# batched GD training (a `StackedSampler` gives every run its own data law); `full` reads a stored run
# of this exact configuration (e.g. by `icl-lab run synthesis.cross_paper --scale paper`), else computes it.

# %%
cfg = CrossPaperConfig.for_scale(SCALE)  # to change one: for_scale(SCALE, L_values=(1.0, 3.0), lr=1.0), rerun
res = full(run_cross_paper, cfg)  # every law and seed in one batched GD training
slope, intercept = contrast_law_fit(res)  # least squares of log t_half on log C over the cosine laws

# %% tags=["remove-cell"]
t_mean = res.t_half.nanmean(-1)
glue("syn-steps", cfg.steps)
glue("syn-lr", cfg.lr)
glue("syn-laws", len(res.laws))
glue("syn-seeds", cfg.seeds)
glue("syn-slope", slope)
lin, one = res.laws.index("linear"), res.laws.index("cosine L=1") if "cosine L=1" in res.laws else None
glue("syn-var-ratio", float(res.label_var[one] / res.label_var[lin]) if one is not None else float("nan"))
glue("syn-time-ratio", float(t_mean[one] / t_mean[lin]) if one is not None else float("nan"))
glue("syn-table", Markdown("\n".join(
    ["| task law | label contrast $C$ | label variance | $t_{1/2}$ (GD steps, mean over seeds) |", "|---|---|---|---|"]
    + [f"| {name} | {C:.4f} | {v:.3f} | {t:.0f} |"
       for name, C, v, t in zip(res.laws, res.contrast.tolist(), res.label_var.tolist(), t_mean.tolist())])))

# %% [markdown]
# {glue:text}`syn-steps` GD steps at learning rate {glue:text}`syn-lr`, {glue:text}`syn-laws` task
# laws × {glue:text}`syn-seeds` seeds trained together:
#
# ```{glue:md} syn-table
# :format: myst
# ```

# %% mystnb={"figure": {"caption": "Left: mean own-feature attention on held-out prompts during GD (mean ± std over seeds) for the linear tasks of the convergence paper (solid) and the cosine tasks of the nonlinear paper at several Lipschitz constants $L$ (dashed); the grey line is the halfway level. Right: the halfway time $t_{1/2}$ against the label contrast $C$, with the least-squares line through the cosine laws. Not a figure of either paper.", "name": "fig-synthesis-contrast"}, "image": {"alt": "Left, attention curves rising from uniform to one, faster for larger L; right, halfway times on a log-log line of slope near -1 with the linear task's square on it."}}
plotting.finish(SF.draw_contrast(res, slope, intercept))

# %% [markdown]
# On the left, the larger $L$, the sooner attention concentrates (the nonlinear paper's "the
# Lipschitz constant sets the speed"); the linear task sits among the cosine curves. On the right,
# the halfway times of the cosine laws fall on a line of slope {glue:text}`syn-slope:.2f` in $C$.
#
# Within the cosine family that slope is no surprise: the family is $f = L\,g$ with $g$ independent
# of $L$, so the prediction and the targets both scale with $L$, the gradient with $L^2$, and GD with
# step $\eta$ at Lipschitz constant $L$ is exactly GD with step $\eta L^2$ at $L = 1$ — the nonlinear
# chapter's finding R1. Since $C \propto L^2$ within the family, $t_{1/2} \propto 1/C$ follows in the
# small-step limit; claim X1 checks that our code agrees (a consistency check, not new evidence).
# The real test is X2: the linear task — a *different* function class, from the other paper, with no
# scaling relation to the cosine family — lands on the same line. What sets the speed of the first
# phase is the label contrast between features, whatever the family. The label *variance* would have
# ordered the families wrongly: the cosine law at $L = 1$ has {glue:text}`syn-var-ratio:.1f` times the
# linear task's label variance but takes {glue:text}`syn-time-ratio:.0f` times as long to concentrate,
# because most of its variance is an offset that every token of a prompt shares.

# %% tags=["remove-input"]
x1, x2 = ledger.judge(checks.contrast_law(res), show=False)
assert x1.ok and checks.ordered_by_contrast(res)  # the ordering by contrast is the robust part of the measurement

# %% [markdown]
# ### Explore without a kernel
#
# Move the slider to pick a Lipschitz constant: the curve of that cosine law is drawn in colour over
# the linear task's (black), on the same axes.

# %% mystnb={"figure": {"caption": "Own-feature attention during GD for one cosine law (colour; pick its Lipschitz constant with the slider) against the linear task (black), mean ± std over seeds.", "name": "fig-synthesis-slider"}, "image": {"alt": "Two attention curves; the cosine one rises faster as L grows past the linear task's contrast."}}
cos_laws = [i for i, name in enumerate(res.laws) if name != "linear"]
widgets.explore(functools.partial(SF.draw_law, res, cfg, level=SF.halfway_level(cfg)), cos_laws, name="cosine law",
                fmt=functools.partial(SF.law_name, res), alt="Own-feature attention of one cosine law against the linear task")

# %% [markdown]
# ## The complete claims ledger
#
# Every claim of every paper chapter, with its measured value and status, as exported when the
# chapters last ran at this scale (this chapter's own claims follow it): one folded table per paper (click a paper's bar to open it), with filters
# that open the papers whose claims match.

# %% tags=["remove-input"]
ledger.export()  # this chapter's own claims (X0-X2) are exported, and shown once, in its ledger below
complete = ClaimsTable.load()
ClaimsTable([c for c in complete.claims if c.paper != "synthesis"],
            [p for c, p in zip(complete.claims, complete.parts) if c.paper != "synthesis"])

# %% [markdown]
# ## Claims of this chapter

# %% tags=["remove-input"]
ledger.show()
