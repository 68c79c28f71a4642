# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext,mystnb
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Nonlinear regression II — the phases of the theory model
#
# {doc}`Part I <nonlinear_lemmas>` reduced the theory model of {cite:t}`li2025nonlinear` to the
# $K\times K$ attention weights $q_{k,m}$ and their exact gradient update. **This page** trains that model on the
# paper's Sec. 6 setting and follows it through the phases the paper describes. It first proves that the model's
# dynamics depend on $L$ and the step $\eta$ only through $\eta L^2$ (observation R1), then derives Phase I
# (Prop. 2), reproduces Figures 1–3 for the theory model and checks Lemma 1 along training. It ends with the
# data collapse that R1 predicts: the theory model has no threshold between a flat and a sharp regime. The
# notation is part I's.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 2.13, "book": 3.7, "paper": None})

# %%

import torch

import icl_lab
from icl_lab.data import PromptBatch
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.nonlinear import checks
from icl_lab.papers.nonlinear import experiments as nl
from icl_lab.papers.nonlinear import figures as nlfig
from icl_lab.papers.nonlinear import theory as th

SCALE, ledger = icl_lab.notebook.chapter("nonlinear", part="phases")
F64 = torch.float64

# %% [markdown]
# ## Derivations: the $L$–$\eta$ rescaling and Phase I
#
# ### D6. The $L$–$\eta$ rescaling (observation R1)
#
# ```{prf:proposition} Exact time rescaling of the theory model
# :label: prop-nl-rescaling
#
# Let every task be $f = L\,g$ with the law of $g$ independent of $L$ (true for the cosine family with
# fixed $c$ and for the polynomial family with $A, b\propto L$). Then GD from $Q^{(0)}=0$ with step
# $\eta$ on the class with constant $L$ visits exactly the same matrices as GD with step $\eta L^2$
# on the class with constant 1:
# $Q^{(t)}(\eta, L) = Q^{(t)}(\eta L^2, 1)$, hence $\mathrm{Attn}^{(t)}(\eta,L) = \mathrm{Attn}^{(t)}(\eta L^2,1)$ and
# $\mathcal L^{(t)}(\eta, L) = L^2\,\mathcal L^{(t)}(\eta L^2, 1)$.
# ```
#
# ```{prf:proof}
# The attention weights do not depend on the labels, and the prediction is linear in them, so
# $\hat y_L = L\,\hat y_1$ and $\mathcal L_L(Q) = L^2\mathcal L_1(Q)$ for every $Q$. Then
# $\nabla\mathcal L_L = L^2\nabla\mathcal L_1$ and the GD step $Q - \eta\nabla\mathcal L_L(Q) = Q - (\eta L^2)\nabla\mathcal L_1(Q)$.
# Induction over $t$ from the common start $Q^{(0)} = 0$.
# ```
#
# Consequences: every time scale of the theory model is exactly proportional to $1/(\eta L^2)$ (up
# to the discreteness of the steps); $\mathcal L/L^2$ plotted against $\eta L^2 t$ collapses onto one
# curve; and the paper's flat/sharp distinction at a fixed $\eta$ can only be a **step-size** effect — a
# larger $L$ is a larger step on the same landscape. A cell verifies the identity exactly; the
# last section shows the collapse on the $L\times\eta$ grid of
# {doc}`part III <nonlinear_durations>`.

# %%
V4 = nl.make_features("orth", 4, 15, 3.0)
fp_r1 = th.FeaturePrompts.from_batch(nl.cosine_sampler(V4, 100, 0.5).sample(200, icl_lab.make_generator(3)))
Ls = torch.tensor([0.1, 0.4, 1.0, 2.0], dtype=F64)  # four runs at once: per-run label scales L ...
traj_L = th.feature_gd(fp_r1, V4 @ V4.T, steps=200, lr=1.0, scale=Ls, record_every=1, with_maps=False)
# ... against per-run steps eta L^2 on the tasks with L = 1
traj_1 = th.feature_gd(fp_r1, V4 @ V4.T, steps=200, lr=1.0 * Ls**2, scale=1.0, record_every=1, with_maps=False)

# %% tags=["remove-cell"]
r1_q, r1_loss = checks.rescaling_gaps(traj_L, traj_1, Ls)
glue("nl-r1-q", r1_q)
glue("nl-r1-loss", r1_loss)
assert r1_q < 1e-10 and r1_loss < 1e-10

# %% tags=["remove-input"]
ledger.judge(checks.rescaling(r1_q, r1_loss));

# %% [markdown]
# $q(\eta, L)$ and $q(\eta L^2, 1)$ agree to {glue:text}`nl-r1-q:.0e`; $\mathcal L/L^2$ and the loss at
# $L = 1$ agree to a relative {glue:text}`nl-r1-loss:.0e`.
# %% [markdown]
# ### D7. Phase I (Prop. 2; Lemmas 3–5)
#
# At $Q = 0$, $\mathrm{Attn}_k = |\mathcal V_k|/N \approx 1/K$ and the residual $f(v_k) - \hat y$ is
# $\Theta(L\Delta)$. The paper argues $g_k = \Theta(L^2\Delta^2/K)$ and $|g_{k,k'}| = \mathcal O(L^2\Delta^2/K^2)$
# (Lemma 4), so $q_k$ grows by $\Theta(\eta L^2\Delta^2/K)$ per step while the $q_{k,k'}$ stay
# $\mathcal O(\log K/K)$; Phase I ends when $q_k = \Theta(\log K)$, i.e. after
# $T_f^1 = \Theta\big(\frac{K\log K}{\eta L^2\Delta^2}\big)$ steps, with
# $\mathrm{Attn}_k = \Omega(1/(1+\delta))$. With balanced counts,
# $q_k - q_{k,m} = \log K$ means $\mathrm{Attn}_k = K/(2K-1)$; we use that level to *measure* $T^1$.
#
# ```{admonition} Inconsistencies in Phase I
# :class: warning
# (5) Lemma 3 gives $\mathrm{Attn}_k = \Omega(1/K)$ in Phase I, but Lemma 4 uses $\mathrm{Attn}_k = \Theta(1)$
# to get $g_k = \Theta(L^2\Delta^2/K)$. At $t = 0$ the exact value is
# $g_k \approx p_k\cdot\frac1K\,\mathbb E(f(v_k)-\bar f)^2 \propto 1/K^2$. (6) Lemma 3's denominator
# contains a leftover $E_j^x$ from the notation of {cite:t}`huang2024convergence`. (7) Lemma 5 writes
# $N/|\mathcal V_k| = \Theta(1/\delta)$ and $1/u_k - 1/K = \Theta(\delta)$; with $u_k = K(p_k - \delta)$ and
# $p_k \approx 1/K$ the second is $\approx 1 - 1/K$, not $\Theta(\delta)$ ({doc}`part IV <nonlinear_rates>` measures the consequence:
# the time to reach $1-\mathrm{Attn}_k \le \delta/(1+\delta)$ grows with $N$, claim C16). Moreover the concentration
# parameter satisfies $\delta\ge\sqrt{20K/N} = 0.89 > p_k = 0.25$ at the paper's $K = 4$, $N = 100$, so
# "$\delta = o(1)$" (used in Lemmas 5–6) fails at the paper's own sizes; $\delta < 1/K$ needs $N > 20K^3 = 1280$.
# ```
#

# %% [markdown]
# ## The theory model, trained exactly
#
# We now train the theory model on the paper's Sec. 6 setting — six values of $L$ and several seeds,
# full-batch GD with $\eta = 10$ on $M$ fixed prompts — using the exact feature-space dynamics. Each
# seed's prompts are drawn once with $L = 1$ and every $L$ scales the labels (common random numbers),
# so the runs of a seed differ only in $L$.

# %%
tcfg = nl.TheoryConfig.for_scale(SCALE)
theory = full(nl.run_theory, tcfg)
# the sharp set at a 100x smaller step resolves its phases (by R1: the curves of L/10 at eta = 10)
theory_sharp = full(nl.run_theory, tcfg.replace(lr=tcfg.lr / 100, L_values=nl.SHARP))

# %% [markdown]
# ### Figure 1 for the theory model
#
# Top: training loss (solid) and held-out loss on fresh prompts and tasks (dashed), mean ± std
# over seeds, for the flat and the sharp set. Bottom: the attention of queries $v_1$ on their own
# feature, $\mathrm{Attn}_1$, and on the other features, $\mathrm{Attn}_{k,1}$, for $L = 0.1$ and $L = 1$.
#
# One step size cannot resolve both sets: by {prf:ref}`prop-nl-rescaling` the clock runs at
# $\eta L^2$, and $L$ spans a factor 20, so $\eta L^2$ spans 400. At $\eta = 10$ the flat set's phases
# span tens of steps, while the sharp set is compressed into one or two steps ($\mathrm{Attn}_1$
# jumps from 0.25 to 0.74 in one step at $L = 1$). The first figure therefore draws the sharp set at
# $\eta = 0.1$, where its phases are resolved (these are exactly the curves of $L/10$ at $\eta = 10$);
# the explorer of {doc}`part IV <nonlinear_rates>` shows all six $L$ at $\eta = 10$.

# %% mystnb={"figure": {"caption": "The theory model on the Sec. 6 setting (mean \u00b1 std over seeds): (a) training (solid) and held-out (dashed) loss for the flat set at $\\eta = 10$, (b) the sharp set at $\\eta = 0.1$, (c, d) the attention of queries $v_1$ on each feature. Reproduces Fig. 1 of Li, Duan and Liang for the theory model.", "name": "fig-nl-theory-fig1"}, "image": {"alt": "Loss curves falling over hundreds of steps and attention curves in which the own-feature attention rises from 0.25 towards 1."}}
steps_t = torch.arange(tcfg.steps + 1)
nlfig.show(nlfig.fig1(steps_t, theory.loss, theory.test_loss, theory.maps, tcfg.L_values, "GD step t",
                      f"η = {tcfg.lr:g}",
                      sharp=dict(train=theory_sharp.loss, test=theory_sharp.test_loss, maps=theory_sharp.maps,
                                 L_values=nl.SHARP, title=f"η = {tcfg.lr / 100:g}")))

# %% [markdown]
# The theory model reproduces the qualitative picture: a fast initial drop while $\mathrm{Attn}_1$ rises,
# then a slower decline, and larger $L$ converges earlier. Held-out loss equals training loss: the
# model has nothing to memorise, it only learns *where* to attend. By {prf:ref}`prop-nl-rescaling`
# each curve is the $L = 1$ curve run at step $\eta L^2$; the sharp runs ($\eta L^2\ge10$, with
# $\eta s^4 L^2\ge 200$) take one huge first step that saturates much of the softmax at once.

# %% [markdown]
# ### Figures 2 and 3 for the theory model: $4\times4$ attention maps
#
# Entry $(i, j)$ is $\mathrm{Attn}_{i,j}$, the attention a query $v_j$ puts on the tokens of feature $v_i$
# (key $i$, query $j$, the paper's App. A convention; columns sum to one).

# %%
SNAP_T = [t for t in (0, 1, 5, 25, 100, 400) if t <= tcfg.steps]  # the steps shown
iL = {Lv: list(tcfg.L_values).index(Lv) for Lv in (0.1, 1.0)}  # the runs of L = 0.1 and L = 1

# %% mystnb={"figure": {"caption": "Attention maps of the theory model at $L = 0.1$ ($\\eta = 10$, seed 0): entry $(i, j)$ is the attention a query $v_j$ puts on feature $v_i$; columns sum to one. Reproduces Fig. 2 of Li, Duan and Liang for the theory model.", "name": "fig-nl-theory-maps-flat"}, "image": {"alt": "Six 4 by 4 heat maps at steps 0 to 400: the diagonal rises from 0.25 towards 1 while the off-diagonal entries fade."}}
nlfig.show(nlfig.attention_maps_figure([theory.maps[0, t, iL[0.1]] for t in SNAP_T], [f"t = {t}" for t in SNAP_T]))

# %% mystnb={"figure": {"caption": "As the previous figure at $L = 1$: the maps concentrate within the first steps. Reproduces Fig. 3 of Li, Duan and Liang for the theory model.", "name": "fig-nl-theory-maps-sharp"}, "image": {"alt": "Six 4 by 4 heat maps: the diagonal is above 0.7 after one step and near 1 at the end."}}
nlfig.show(nlfig.attention_maps_figure([theory.maps[0, t, iL[1.0]] for t in SNAP_T], [f"t = {t}" for t in SNAP_T]))

# %% [markdown]
# ### Lemma 1 along training, and the monotonicity of $q_k$
#
# For every prompt and every recorded step, the squared error lies below the exact envelope of D3,
# which in turn lies below the Lipschitz envelope $(1-\mathrm{Attn}_k)^2L^2\max_n\|v_n-v_k\|^2$. With
# orthogonal features $g_k\ge0$, so each $q_k$ can only grow (the paper's reading of Eq. 12), while
# the cross weights $q_{k,k'}$ may move either way. One more exact fact (not in the paper): since
# $\sum_m\mathrm{Attn}_m(f(v_m)-\hat y) = 0$, the rows of $\Gamma$ sum to zero, so for $G\propto I$
# every row of $q$ sums to zero at all times — the cross weights share exactly $-q_k$.

# %%
snap = list(range(0, tcfg.steps + 1, max(1, tcfg.steps // 40)))  # about 40 recorded steps
# per prompt: (y_hat - f(v_k))^2, 1 - Attn_k and the exact envelope, at every L (th.lemma1_terms)
lem_ratio, lip_ratio, theta = checks.lemma1_ratios(theory, snap, tcfg.L_values, tcfg.delta)

# %% tags=["remove-cell"]
glue("nl-lem-ratio", lem_ratio)
glue("nl-lip-ratio", lip_ratio)
glue("nl-theta-lo", float(theta.min()))
glue("nl-theta-hi", float(theta.max()))
assert lem_ratio <= 1 + 1e-9 and lip_ratio <= 1 + 1e-9

# %% tags=["remove-input"]
ledger.judge(checks.lemma1(lem_ratio, lip_ratio, theta));

# %% [markdown]
# The error stays within its envelopes: at most {glue:text}`nl-lem-ratio:.3f` of the exact one and
# {glue:text}`nl-lip-ratio:.3f` of the Lipschitz one. Along training
# $\mathcal L / (L^2\Delta^2\,\mathbb E(1-\mathrm{Attn})^2)$ stays in
# [{glue:text}`nl-theta-lo:.3f`, {glue:text}`nl-theta-hi:.3f`].

# %% mystnb={"figure": {"caption": "Per-prompt squared error against the squared attention gap along training (theory model, six $L$, seed 0), below the Lipschitz envelope of Lemma 1 (dashed). Not a figure of the paper.", "name": "fig-nl-lemma1"}, "image": {"alt": "Clouds of points for each L lying below a dashed diagonal line."}}
nlfig.show(nlfig.lemma1_figure(theory, snap))

# %%
qd = torch.diagonal(theory.q, dim1=-2, dim2=-1)  # the own weights q_k: (seeds, T, nL, K)
dq_min = float((qd[:, 1:] - qd[:, :-1]).min())  # the smallest step increment of any q_k
stats = checks.weight_stats(theory)  # and the cross weights: their final mean, sign flips, row sums of q

# %% tags=["remove-cell"]
for key, value in stats.items():
    glue(f"nl-{key}", value)
assert dq_min >= -1e-12 and stats["row_sums"] < 1e-10

# %% tags=["remove-input"]
ledger.judge(checks.own_weights_grow(theory));

# %% [markdown]
# The smallest step increment of $q_k$ is {glue:text}`nl-dq_min:.1e`; the mean final cross weight $q_{k,k'}$
# is {glue:text}`nl-off_final:.3f`, and {glue:text}`nl-flips:.1%` of the cross-weight increments flip sign.
# $\max_k |\sum_m q_{k,m}| =$ {glue:text}`nl-row_sums:.0e`: the cross weights carry exactly $-q_k$ between them.

# %% [markdown]
# ## The threshold $L^*$ and the data collapse
#
# The paper's phase transition sits at $L^* = \Theta(1/(\Delta\delta))$ — $0.37$ for $\Delta = 3$,
# $\delta = \sqrt{20K/N}$. {prf:ref}`prop-nl-rescaling` says the theory model cannot know about it:
# plotted against $\eta L^2 t$, the normalised loss $\mathcal L/L^2$ of *every* $(L,\eta)$ run lies on one
# curve. The runs deviate only where $\eta L^2 s^4$ is so large that the first discrete step
# overshoots the continuous-time curve — a step-size effect, visible at the right of the grid
# whatever $L^*$ is.

# %%
scfg = nl.SweepConfig.for_scale(SCALE)  # part III's L x eta grid
sweep = full(nl.run_sweep, scfg)  # its runs: read where stored, computed where missing
info = th.threshold_scale(scfg.K, scfg.N, scfg.delta)  # the paper's numbers: delta_min, L* = 1/(Delta delta_min), ...
# the collapse: loss / L^2 interpolated at common times eta L^2 t, over the runs whose first step is small
spread, n_runs = checks.collapse_spread(sweep, scfg)

# %% tags=["remove-cell"]
glue("nl-L-star", info["L_star"])
glue("nl-collapse-n", n_runs)
glue("nl-collapse-all", len(sweep.collapse))
glue("nl-collapse-spread", spread)
assert spread < 0.25

# %% tags=["remove-input"]
ledger.judge(checks.collapse(sweep, scfg, r1_q));

# %% [markdown]
# $L^* = 1/(\Delta\,\delta_{\min}) =$ {glue:text}`nl-L-star:.2f`. Over the {glue:text}`nl-collapse-n` runs
# with $\eta L^2 s^4 \le 20$ the rescaled curves stay within {glue:text}`nl-collapse-spread:.1%` of each other
# (largest relative range).

# %% mystnb={"figure": {"caption": "Loss curves of the {glue:text}`nl-collapse-all` $(L, \\eta)$ runs: raw (left) and as $\\mathcal L/L^2$ against $\\eta L^2 t$ (right), where the {glue:text}`nl-collapse-n` runs with $\\eta L^2 s^4 \\le 20$ fall onto one curve; the runs with a larger first step overshoot it. Not a figure of the paper.", "name": "fig-nl-collapse"}, "image": {"alt": "Left: separate loss curves; right: the same curves lying on top of each other."}}
nlfig.show(nlfig.collapse_figure(sweep))

# %% [markdown]
# **So the theory model has no threshold**: its entire $L$-dependence is a change of clock (the
# ledger files this collapse as a consistency check of R1: it cannot fail for this model). What the paper calls the sharp regime is GD with a large effective step $\eta L^2\|v\|^4$,
# where the first steps saturate the softmax at once, and its extra phase is the same slow tail that
# every run reaches (D10). The paper's own derivation (D8) locates $L^*$ in the bookkeeping of the final
# loss bound, not in the dynamics.

# %% [markdown]
# ## Summary
#
# * GD on tasks with Lipschitz constant $L$ at step $\eta$ is GD at step $\eta L^2$ on $L = 1$
#   ({prf:ref}`prop-nl-rescaling`): every time scale of the theory model is proportional to $1/(\eta L^2)$.
# * The theory model reproduces the paper's qualitative Figures 1–3: the own-feature attention rises from
#   $1/K$ towards 1, the own weights $q_k$ only grow, and Lemma 1's envelope holds at every step.
# * Plotted against $\eta L^2 t$ all runs collapse onto one curve: the flat/sharp distinction is a step-size effect.
#
# The {doc}`next page <nonlinear_durations>` measures how long Phase I lasts against $L$, $\eta$, $K$ and $\Delta$.

# %% [markdown]
# ## Exercise
#
# ````{exercise}
# :label: ex-nl-rescaling
#
# Prove {prf:ref}`prop-nl-rescaling` for the *full* $d\times d$ model (not only the feature-space
# reduction), and check it numerically: train `QOnlyAttention` with `icl_lab.train.train` once with
# $(\eta, L)$ and once with $(\eta L^2, 1)$ and compare the matrices $Q$.
# ````
#
# ```{solution-start} ex-nl-rescaling
# :class: dropdown
# ```
#
# The softmax weights $\mathrm{attn}_i(Q)$ do not involve the labels, and $\hat y = \sum_i\mathrm{attn}_i y_i$
# is linear in them; with $y_i = L g(x_i)$ the per-prompt loss is
# $\tfrac12(\hat y - y_{\rm query})^2 = L^2\cdot\tfrac12(\hat y_g - g(x_{\rm query}))^2$, so
# $\mathcal L_L = L^2\mathcal L_1$ as functions of $Q$ and $\nabla\mathcal L_L = L^2\nabla\mathcal L_1$.
# One GD step is $Q - \eta L^2\nabla\mathcal L_1(Q)$: the step of the $L = 1$ problem with step
# $\eta L^2$. Both start at $Q = 0$, so by induction they agree at every $t$. The code below checks it.

# %%
Lx, etax = 0.3, 4.0
bx = nl.cosine_sampler(V4, 100, 0.5).sample(100, icl_lab.make_generator(11))
bL = PromptBatch(x=bx.x, y=Lx * bx.y, x_query=bx.x_query, y_query=Lx * bx.y_query,
                 ids=bx.ids, query_ids=bx.query_ids, K=4)  # the same prompts, labels times L
mA, mB = icl_lab.QOnlyAttention(15, runs=1), icl_lab.QOnlyAttention(15, runs=1)
icl_lab.train(mA, bL, steps=30, optimizer="gd", lr=etax, dtype=F64)
icl_lab.train(mB, bx, steps=30, optimizer="gd", lr=etax * Lx**2, dtype=F64)
ex1_gap = float((mA.Q - mB.Q).detach().abs().max())  # the largest |Q_A - Q_B|

# %% tags=["remove-cell"]
glue("nl-ex1-gap", ex1_gap)
glue("nl-ex1-Qmax", float(mA.Q.detach().abs().max()))
assert ex1_gap < 1e-10

# %% [markdown]
# After 30 steps of the full model the two runs' $Q$ differ by at most {glue:text}`nl-ex1-gap:.0e` (entries of
# $Q$ up to {glue:text}`nl-ex1-Qmax:.2f`): the same matrix, to rounding.
#
# ```{solution-end}
# ```

# %% [markdown]
# ## Claims ledger (part II)
#
# The claims checked on this page, with their measurements at the scale this page was built with. The other
# five pages have their own ledgers; the synthesis chapter joins them.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
