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
# ---


# %% [markdown]
# # In-context convergence I — setup and the reduced dynamics
#
# {cite:t}`huang2024convergence` prove that gradient descent (GD) trains a one-layer **softmax**
# attention model to learn linear functions in context, and they describe *how*: when every
# feature is equally frequent, training passes through **two phases**; when one feature dominates,
# the model first learns the dominant feature in **one phase** and the rare ("under-represented")
# features much later, in **four phases** whose boundaries are set by a competition between two
# kinds of attention weights. This chapter rebuilds the argument step by step over six pages, turns every
# checkable statement into a measurement, and reproduces the paper's experiments (Figures 1–3).
#
# **This page** sets up the model and derives the tool that makes everything else cheap: with
# orthonormal features, GD on the $d\times d$ matrix $Q$ is GD on the $K\times K$ matrix $S = V^\top Q V$,
# the task vector $w$ averages out in closed form, and the remaining expectation is over the **counts** of
# each feature in the prompt. We prove the reduction, check it against the full model, read off the signs
# and the initial values of the gradients, and compute the best loss any attention can reach. The next pages
# use the reduced dynamics: [balanced features and the dominant feature](convergence_balanced.ipynb), the
# [four phases of a rare feature](convergence_phases.ipynb), the paper's experiments
# ([the trained transformer](convergence_experiments.ipynb), [the analysed model](convergence_analysed.ipynb))
# and [what lies beyond the theorems' assumptions](convergence_beyond.ipynb).
#
# The text we reproduce is the anonymous double-blind version of the paper; the public version
# (ICML 2024) is by Yu Huang, Yuan Cheng and Yingbin Liang. Equation and lemma numbers below are
# those of the text we read. Time is always reported as $\tau = \eta t$ (every bound of the paper
# is proportional to $1/\eta$). The scale is set by `ICL_LAB_SCALE` (`book` by default, `ci` in
# the tests, `paper` for the built book); the text says where they differ.

# the tests, `paper` for the built book); the text says where they differ.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.64, "book": 0.78, "paper": None})

# %% tags=["hide-input"]
import math

import torch

import icl_lab
from icl_lab import plotting
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.convergence import (CountLaw, checks, feature_attention, gradient,
                                        initial_gradient_mean_field)
from icl_lab.papers.convergence import experiments as cv
from icl_lab.papers.convergence import figures as cplot
from icl_lab.papers.convergence import theory as th
from icl_lab.papers.convergence.figures import table

SCALE, ledger = icl_lab.notebook.chapter("convergence", part="setup")

# %% [markdown]
# ## Setting: prompts, embedding and the Q-only model
#
# **Data.** Features $v_1,\dots,v_K\in\mathbb R^d$ are orthonormal. A prompt draws a task
# $w$ with $\mathbb E w = 0$, $\mathbb E ww^\top = I_d$ (the experiments use $\mathcal N(0, I_d)$),
# inputs $x_1,\dots,x_N$ and a query $x_{\rm query}$ i.i.d. with $x = v_k$ with probability $p_k$,
# and labels $y_i = \langle w, x_i\rangle$. **Balanced** features have $p_k = \Theta(1/K)$;
# **imbalanced** ones have a dominant $v_1$ with $p_1 = \Theta(1)$ and $p_k = \Theta(1/K)$ otherwise.
#
# **Model.** The embedding stacks inputs over labels, with the query's label slot $0$:
# $E = \begin{pmatrix} x_1 & \cdots & x_N & x_{\rm query}\\ y_1 & \cdots & y_N & 0\end{pmatrix}$.
# Masking $M(\cdot)$ removes the query column from keys and values (the query does not attend to
# itself), and the reparametrisation (eq. 2)
# $W^V = \begin{pmatrix}0 & 0\\ 0 & \nu\end{pmatrix}$, $W^{KQ} = \begin{pmatrix}Q & 0\\0 & 0\end{pmatrix}$
# with $\nu = 1$ fixed turns eq. (1) into eq. (3):
#
# $$
# F_{\rm SA}(E;\theta) = M(E^y)\,\mathrm{softmax}\big(M(E^x)^\top Q E^x\big), \qquad
# \hat y_{\rm query} = \sum_{i=1}^N \mathrm{attn}_i\, y_i, \quad
# \mathrm{attn}_i = \frac{e^{x_i^\top Q x_{\rm query}}}{\sum_j e^{x_j^\top Q x_{\rm query}}} .
# $$
#
# $W^V$ reads only the label row, so the output is a convex combination of the context labels; the
# query's own label slot is $0$ so the answer cannot be copied. Only $Q$ is trained, from
# $Q^{(0)} = 0$, by GD on the population loss $L(\theta) = \tfrac12\mathbb E(\hat y_{\rm query} - \langle w, x_{\rm query}\rangle)^2$
# (eq. 4). In the library this is `icl_lab.QOnlyAttention` on prompts from `icl_lab.PromptSampler`.
#
# ## From tokens to features
#
# Every token is a feature, so the logit of a token equal to $v_m$ for the query $v_k$ is
# $v_m^\top Q v_k = S_{m,k}$ with $S := V^\top Q V$ ($V = [v_1\cdots v_K]$; row = key feature,
# column = query feature). Grouping the $c_m = |\mathcal V_m|$ tokens of feature $m$:
#
# $$
# \mathrm{Attn}_m = \sum_{i\in\mathcal V_m}\mathrm{attn}_i = \frac{c_m e^{S_{m,k}}}{\sum_j c_j e^{S_{j,k}}},
# \qquad \hat y_{\rm query} = \sum_m \mathrm{Attn}_m \langle w, v_m\rangle \quad\text{(eq. 5)} .
# $$
#
# The paper's bilinear attention weights (Def. 4.1) are the entries of $S$: $A_k = S_{k,k}$ (target)
# and $B_{k,n} = S_{n,k}$ (off-target; first index = query feature). We check the grouping on
# explicit prompts: the attention the full $d\times d$ model puts on each feature equals the
# count formula.

# %%
K0, d0, N0 = 4, 8, 12
g0 = icl_lab.make_generator(0)
V0 = icl_lab.data.random_orthonormal(K0, d0, g0)
sampler0 = icl_lab.PromptSampler.from_features(V0, icl_lab.data.LinearTask(d0), N=N0, p=[0.4, 0.3, 0.2, 0.1])
batch0 = sampler0.sample(500, g0)
model0 = icl_lab.QOnlyAttention(d0, runs=1, init="normal", init_std=0.5).to(dtype=torch.float64)
with torch.no_grad():
    out0 = model0(batch0)
mass_full = icl_lab.metrics.attention_by_feature(out0.attn, batch0.ids, K0)[0, :, 0]  # (B, K)
S0 = V0 @ model0.Q.detach()[0] @ V0.T
a_counts = feature_attention(S0, CountLaw.empirical(batch0.counts, batch0.query_ids[:, 0], K0))  # (B, k, m)
mass_formula = a_counts[torch.arange(500), batch0.query_ids[:, 0]]
grouping_err = float((mass_full - mass_formula).abs().max())

# %% tags=["remove-cell"]
assert grouping_err < 1e-12
glue("cv-grouping-err", grouping_err)

# %% [markdown]
# The full model's attention on each feature equals $c_m e^{S}/\sum_j c_j e^{S}$ up to
# {glue:text}`cv-grouping-err:.1e`.

# %% [markdown]
# ## Averaging over the task
#
# With $\mathbb E ww^\top = I$ and orthonormal features,
# $\mathbb E_w(\hat y - \langle w, v_k\rangle)^2 = \|v_k - \sum_m \mathrm{Attn}_m v_m\|^2
# = (1-\mathrm{Attn}_k)^2 + \sum_{m\neq k}\mathrm{Attn}_m^2$. This is Lemma C.6:
#
# $$
# \mathcal L_k = \tfrac12\,\mathbb E_c\big[(1-\mathrm{Attn}_k)^2 + \textstyle\sum_{m\ne k}\mathrm{Attn}_m^2\big],
# \qquad L = \sum_k p_k \mathcal L_k ,
# $$
#
# where $\mathcal L_k$ is the prediction error of eq. (6) (conditional on $x_{\rm query} = v_k$).
# **Only the counts remain random**, and $(c_1,\dots,c_K)\sim\mathrm{Multinomial}(N, p)$
# independently of the query. `CountLaw` holds that law: `exact` (all
# $\binom{N+K-1}{K-1}$ count vectors — 1891 for $K = 3$, $N = 60$), `monte_carlo` (a fixed sample
# of $M$ count vectors, cost independent of $N$), `mean_field` ($N\to\infty$: $c/N\to p$) and
# `empirical` (the counts and queries of a fixed set of prompts).
#
# ## The gradient, projected onto the features
#
# ```{prf:lemma} Gradient in feature coordinates (Lemmas C.1, C.2 = Lemma 4.1)
# :label: lem-cv-gradient
#
# The softmax Jacobian $\partial\,\mathrm{attn}_i/\partial Q = \mathrm{attn}_i\sum_j\mathrm{attn}_j(x_i - x_j)x_{\rm query}^\top$
# gives $\nabla_Q L = \mathbb E\big[(\hat y - \langle w,x_{\rm query}\rangle)\sum_{i,j}\mathrm{attn}_i\mathrm{attn}_j(x_i-x_j)x_{\rm query}^\top y_i\big]$
# (Lemma C.1). Projected onto the features, with $\alpha_k := -v_k^\top\nabla_Q L\,v_k$ and
# $\beta_{k,n} := -v_n^\top\nabla_Q L\,v_k$, GD reads $A_k \leftarrow A_k + \eta\alpha_k$,
# $B_{k,n}\leftarrow B_{k,n} + \eta\beta_{k,n}$ with
#
# $$
# \alpha_k = \mathbb E\Big[\mathbf 1\{x_{\rm query}=v_k\}\mathrm{Attn}_k\Big(\sum_{m\ne k}\mathrm{Attn}_m^2 + (1-\mathrm{Attn}_k)^2\Big)\Big],
# $$
# $$
# \beta_{k,n} = \mathbb E\Big[\mathbf 1\{x_{\rm query}=v_k\}\mathrm{Attn}_n\Big(\sum_{m\ne k}\mathrm{Attn}_m^2 - \mathrm{Attn}_n - \mathrm{Attn}_k(1-\mathrm{Attn}_k)\Big)\Big].
# $$
# ```
#
# ```{prf:proof}
# Average over $w$ first: with $a = \mathrm{Attn}$ and $e_k$ the query's feature,
# $\mathbb E_w[(\hat y - y)\,y_i] = (a - e_k)^\top e_{m(i)}$. Grouping the double sum by features
# gives $-v_n^\top\nabla_Q L\,v_k = \mathbb E[\mathbf 1\{x_{\rm query}=v_k\}\,a_n\,(e_k - a)^\top(e_n - a)]$.
# For $n = k$, $(e_k-a)^\top(e_k-a) = \|e_k - a\|^2$; for $n\ne k$,
# $(e_k-a)^\top(e_n-a) = \|a\|^2 - a_k - a_n$, which is the bracket above.
# ```
#
# Three consequences, derived in this chapter and tested below:
# 1. **Span invariance.** $\nabla_Q L\in\mathrm{span}\{v_nv_k^\top\}$, so from $Q^{(0)}=0$, GD on $Q$ *is*
#    GD on $S$ with the same $\eta$, and $Q$ never leaves the feature span.
# 2. **Column decoupling.** $\alpha_k,\beta_{k,\cdot}$ depend only on column $k$ of $S$: the
#    dynamics split into $K$ independent $K$-dimensional systems.
# 3. **$p_k$ is a per-column learning rate.** Since the query is independent of the counts,
#    $\alpha_k = p_k\,\mathbb E_c[a_k\|e_k - a\|^2]$ and $\beta_{k,n} = p_k\,\mathbb E_c[a_n(e_k-a)^\top(e_n-a)]$:
#    a rare query feature learns slowly simply because its column is updated rarely.
#
# The first experiment checks these identities in float64 at a random $Q$ with random orthonormal features.

# %%
id_cfg = cv.IdentitiesConfig.for_scale(SCALE)
ids = full(cv.run_identities, id_cfg)

# %% tags=["remove-input"]
ledger.judge(checks.identities(ids, id_cfg));

# %% tags=["remove-cell"]
e = ids.errors
assert e["I1"] < 1e-10 and e["I2"] < 1e-10 and e["I3_formula"] < 1e-12 and abs(e["I3_z"]) < 5
assert e["I6_span"] < 1e-12 and e["I6_columns"] < 1e-14 < e["I6_column0_changed"]

# %% [markdown]
# **The full model equals the reduced model.** We train the full $d\times d$ model with the
# library's trainer (`icl_lab.train`, full-batch GD, float64) on fixed prompts and run the reduced
# GD on $S$ with the *same* counts and queries (`CountLaw.empirical`). Run 0 uses the
# $w$-marginalised loss, for which the two must agree to rounding; runs 1–2 use the ordinary
# squared loss with two independent draws of $w$ on the same inputs — they agree only up to the
# Monte-Carlo error of the $w$-sample, whose size the spread between the two draws shows.

# %%
h_cfg = cv.FullVsReducedConfig.for_scale(SCALE)
hres = full(cv.run_full_vs_reduced, h_cfg)
icl_lab.notebook.reduced(h_cfg)

# %% tags=["remove-cell"]
glue("cv-min-alpha", hres.min_alpha)

# %% [markdown]
# The smallest $\alpha_k$ along the run is {glue:text}`cv-min-alpha:.2e`.

# %% tags=["remove-cell"]
glue("fvr-steps", h_cfg.steps)

# %% tags=["remove-input"]
ledger.judge(checks.full_vs_reduced(hres, h_cfg, ids));

# %% mystnb={"figure": {"caption": "Four entries of $S = V^\\top QV$ along GD: the reduced $K\\times K$ model (thick), the full $d\\times d$ model with the $w$-marginalised loss (dotted, on top of it) and with sampled $w$ (dashed). Not a figure of the paper; {glue:text}`fvr-steps` GD steps.", "name": "fig-cv-full-vs-reduced"}, "image": {"alt": "Four thick curves of S entries over the GD steps; the dotted full-model curves lie exactly on them, the dashed sampled-w curves close by."}}
plotting.finish(cplot.draw_full_vs_reduced(hres, h_cfg.K))

# %% tags=["remove-cell"]
assert hres.max_diff_marginalized < 1e-10 and hres.off_span < 1e-12

# %% [markdown]
# ## Reading the signs
#
# * $\alpha_k = p_k\,\mathbb E_c[\mathrm{Attn}_k\|e_k - \mathrm{Attn}\|^2] \ge 0$: **$A_k$ never
#   decreases** (stated after Lemma 4.1). $B_{k,n}$ can move either way.
# * Since $\sum_{m\ne k}\mathrm{Attn}_m^2 \le (1-\mathrm{Attn}_k)\max_{m\ne k}\mathrm{Attn}_m$, the
#   bracket of $\beta_{k,n}$ is at most $-(1-\mathrm{Attn}_k)(\mathrm{Attn}_k - \max_{m\ne k}\mathrm{Attn}_m)$
#   (eqs. 19, 27, 28): **once the target dominates, every $B_{k,n}$ decreases.**
# * Early on, for a rare query feature, the dominant feature holds most attention; then
#   $\beta_{k,1}<0$ is large while for the other rare features $n$ the bracket
#   $\sum_{m\ne k}\mathrm{Attn}_m^2 - \mathrm{Attn}_n - \mathrm{Attn}_k(1-\mathrm{Attn}_k)$ can be
#   **positive**: $B_{k,n}$ first *rises*.
#
# A quick numerical check of the bracket inequality on random attention vectors:

# %%
gs = icl_lab.make_generator(7)
a_rand = torch.distributions.Dirichlet(torch.full((6,), 0.5, dtype=torch.float64)).sample((20000,))
k_q, n_o = 0, 1
bracket = (a_rand**2).sum(1) - a_rand[:, k_q] ** 2 - a_rand[:, n_o] - a_rand[:, k_q] * (1 - a_rand[:, k_q])
bound = -(1 - a_rand[:, k_q]) * (a_rand[:, k_q] - a_rand[:, 1:].max(1).values)

# %% tags=["remove-cell"]
glue("cv-bracket-n", a_rand.shape[0])
glue("cv-bracket-max", float((bracket - bound).max()))

# %% [markdown]
# Over {glue:text}`cv-bracket-n` random attention vectors the largest value of the bracket minus its
# bound is {glue:text}`cv-bracket-max:.2e` (it must be $\le 0$).

# %% tags=["remove-cell"]
assert float((bracket - bound).max()) <= 1e-15

# %% [markdown]
# ## Initial gradients
#
# At $Q = 0$ attention is uniform, $\mathrm{Attn}^{(0)}_m = c_m/N$. In the mean-field limit
# ($a = p$) the formulas of {prf:ref}`lem-cv-gradient` give closed forms (derived here):
#
# $$
# \alpha_k^{(0)} = p_k^2\Big[(1-p_k)^2 + \sum_{m\ne k}p_m^2\Big], \qquad
# \beta_{k,n}^{(0)} = p_kp_n\Big[\sum_{m\ne k}p_m^2 - p_k(1-p_k) - p_n\Big].
# $$
#
# Balanced ($p = 1/K$): $\alpha^{(0)} = (K-1)/K^3 \approx K^{-2}$ and $\beta^{(0)} = -1/K^3$ —
# the target grows $K$ times faster than anything else moves (§4.2). Imbalanced, rare query $k$:
# $\beta_{k,1}^{(0)} \approx p_kp_1(p_1^2 - p_1) = -p_kp_1^2(1-p_1) = -\Theta(1/K)$, far larger than
# $\alpha_k^{(0)} = \Theta(1/K^2)$ (§4.1.1): the first thing a rare feature learns is to **stop
# attending to the dominant feature**. For the paper's $p = (0.8, 0.1, 0.1)$ and $k = 2$:
# $\alpha_2 =$ {glue:text}`cv-a2:.4f`, $\beta_{2,1} =$ {glue:text}`cv-b21:.4f`, $\beta_{2,3} =$
# {glue:text}`cv-b23:+.4f`. The table compares the
# library's gradient (mean field, and a finite-$N$ Monte Carlo) with the closed forms.

# %% tags=["hide-input"]
rows = []
for K in (10, 100):
    for setting in ("balanced", "imbalanced"):
        p = th.p_for(setting, K, 0.5)
        G_mf = gradient(torch.zeros(K, K), CountLaw.mean_field(p))
        G_cf = initial_gradient_mean_field(p)["G"]
        law_N = CountLaw.monte_carlo(20 * K**2, p, 2000, icl_lab.make_generator(K))
        G_N = gradient(torch.zeros(K, K), law_N)
        k = 1
        rows.append((K, setting, float(G_mf[k, k]), float(G_cf[k, k]), float(G_N[k, k]), float(G_mf[0, k]),
                     float(G_cf[0, k]), float(G_mf[2, k]), float(G_cf[2, k]), float((G_mf - G_cf).abs().max())))
table(["$K$", "setting", r"$\alpha_k$ mean field", "closed form", r"$N = 20K^2$", r"$\beta_{k,1}$ mean field", "closed form",
       r"$\beta_{k,n}$ mean field", "closed form"], [(r[0], r[1], *(f"{v:.3e}" for v in r[2:9])) for r in rows])
cf_err = max(r[-1] for r in rows)
G_paper = gradient(torch.zeros(3, 3), CountLaw.mean_field(torch.tensor(th.IMBALANCED_P, dtype=torch.float64)))
a2, b21, b23 = float(G_paper[1, 1]), float(G_paper[0, 1]), float(G_paper[2, 1])

# %% tags=["remove-cell"]
glue("cv-a2", a2)
glue("cv-b21", b21)
glue("cv-b23", b23)

# %% tags=["remove-input"]
ledger.judge(checks.initial_gradients(cf_err));

# %% tags=["remove-cell"]
assert cf_err < 1e-14 and b23 > 0

# %% [markdown]
# ## Concentration of counts and the best achievable loss
#
# The proofs work on the high-probability event that every count is near its mean. Lemma C.3
# (Devroye {cite:p}`devroye1983`): for $X\sim\mathrm{Multinomial}(N,p)$ and $K/N\le\varepsilon^2/20$,
# $P(\sum_i|X_i - \mathbb EX_i| > N\varepsilon)\le 3e^{-N\varepsilon^2/25}$. Requiring the
# deviation per feature to be $O(N/K)$ (so that every $c_k = \Theta(N p_k)$) needs
# $\varepsilon \approx c/K$ and hence $N \gtrsim K^3$ (Lemmas C.4–C.5) — the origin of the premise
# $N\ge\mathrm{poly}(K)$. We check the inequality by Monte Carlo at its edge $K/N = \varepsilon^2/20$.
#
# **What is the best achievable loss?** If the query's feature is absent ($c_k = 0$), attention
# must spread its unit mass over other features; by Cauchy–Schwarz
# $\sum_{m\ne k}\mathrm{Attn}_m^2\ge 1/(K-1)$, so that prompt costs at least
# $\tfrac12(1 + \tfrac1{K-1})$. Hence (eq. 12)
#
# $$
# \mathcal L_k \;\ge\; \mathcal L_k^{\rm low} = \tfrac12\tfrac{K}{K-1}(1-p_k)^N ,
# $$
#
# and the paper shows $\mathcal L_k^* = \min\mathcal L_k$ is within $e^{-\mathrm{poly}(K)}$ of it
# (upper bound via $Q = \sigma I$, $\sigma = \mathrm{poly}(N)$). The minimum is an infimum: it needs
# $A_k\to\infty$. Since $\mathcal L_k^*$ itself is not computable, convergence times below use
# $\mathcal L_k - \mathcal L_k^{\rm low}\le\epsilon$, an upper bound on $\mathcal L_k - \mathcal L_k^*$
# (Lemma C.10). For the paper's experiment: $\mathcal L_{2,3}^{\rm low} = 0.75\cdot 0.9^{60} =$
# {glue:text}`cv-floor-rare:.2e` (imbalanced), {glue:text}`cv-floor-dom:.1e` for $v_1$, and
# {glue:text}`cv-floor-bal:.1e` (balanced).

# %%
Kd, Nd = 5, 2000  # Lemma C.3 at its edge K/N = eps^2/20
eps_d = math.sqrt(20 * Kd / Nd)
pd = torch.tensor([0.4, 0.3, 0.15, 0.1, 0.05], dtype=torch.float64)
Xd = CountLaw.monte_carlo(Nd, pd, 200_000, icl_lab.make_generator(11)).counts
dev_prob = float(((Xd - Nd * pd).abs().sum(1) > Nd * eps_d).to(torch.float64).mean())
dev_bound = 3 * math.exp(-Nd * eps_d**2 / 25)

# %% tags=["remove-cell"]
glue("cv-floor-rare", float(ids.floors["imbalanced"]["closed"][1]))
glue("cv-floor-dom", float(ids.floors["imbalanced"]["closed"][0]))
glue("cv-floor-bal", float(ids.floors["balanced"]["closed"][0]))

# %% tags=["remove-input"]
ledger.judge([checks.floors(ids), checks.deviation(Xd, Nd, pd, eps_d)]);

# %% tags=["remove-cell"]
assert dev_prob <= dev_bound

# %% [markdown]
# ## Summary
#
# * With orthonormal features the attention a prompt puts on each feature depends only on the entries of
#   $S = V^\top QV$ and on the counts $c_m$ (eq. 5); averaging over the task leaves an expectation over the counts
#   alone (Lemma C.6).
# * The gradient projected onto the features (Lemma 4.1) keeps $Q$ in the feature span, decouples the columns of
#   $S$ and scales column $k$ by $p_k$: GD on the full model *is* GD on $S$, which the full $d\times d$ model confirms
#   to rounding.
# * $\alpha_k\ge0$: the target weight $A_k$ never decreases; once the target dominates every off-target weight falls.
#   At $Q = 0$ a rare feature's first move is away from the dominant feature ($\beta_{k,1}^{(0)} = -\Theta(1/K)$
#   against $\alpha_k^{(0)} = \Theta(1/K^2)$).
# * No attention can do better than the floor $\mathcal L_k^{\rm low} = \tfrac12\tfrac{K}{K-1}(1-p_k)^N$: the prompts
#   without the query's feature cost at least that much.

# %% [markdown]
# ## Exercise
#
# ````{exercise}
# :label: ex-cv-alpha0
#
# Balanced features, mean-field limit ($p_k = 1/K$, $\mathrm{Attn}^{(0)} = p$). Derive
# $\alpha_k^{(0)}$ and $\beta_{k,n}^{(0)}$ from {prf:ref}`lem-cv-gradient` and show that
# $K|\beta_{k,n}^{(0)}|/\alpha_k^{(0)}\to 1$.
# ````
#
# ```{solution-start} ex-cv-alpha0
# :class: dropdown
# ```
#
# With $a_m = 1/K$: $\sum_{m\ne k}a_m^2 = (K-1)/K^2$ and $(1-a_k)^2 = (K-1)^2/K^2$, so
# $\alpha_k^{(0)} = p_k\cdot\frac1K\cdot\frac{(K-1)+(K-1)^2}{K^2} = \frac{K-1}{K^3}$. For $n\ne k$ the
# bracket is $\frac{K-1}{K^2} - \frac1K - \frac1K\cdot\frac{K-1}{K} = -\frac1K$, so
# $\beta_{k,n}^{(0)} = \frac1K\cdot\frac1K\cdot(-\frac1K) = -\frac1{K^3}$, and
# $K|\beta^{(0)}|/\alpha^{(0)} = K/(K-1)\to1$: the target weight grows about $K$ times faster than any
# off-target weight moves (Lemma D.4). The cell below checks it with the library.

# %%
ex_rows = []
for K in (5, 50, 500):
    G = gradient(torch.zeros(K, K), CountLaw.mean_field(torch.full((K,), 1.0 / K, dtype=torch.float64)))
    ex_rows.append((K, f"{float(G[0, 0]):.3e}", f"{(K - 1) / K**3:.3e}", f"{float(G[1, 0]):.3e}", f"{-1 / K**3:.3e}",
                    f"{K * abs(float(G[1, 0])) / float(G[0, 0]):.4f}"))
table(["$K$", r"$\alpha$", "formula $(K-1)/K^3$", r"$\beta$", "formula $-1/K^3$", r"$K\lvert\beta\rvert/\alpha$"], ex_rows)

# %% [markdown]
# ```{solution-end}
# ```


# %% [markdown]
# ## Claims ledger (part I)
#
# The claims checked on this page, with their measurement at the current scale. Parts [I](convergence_setup.ipynb), [II](convergence_balanced.ipynb), [III](convergence_phases.ipynb), [IV](convergence_experiments.ipynb), [V](convergence_analysed.ipynb) and [VI](convergence_beyond.ipynb)
# have their own ledgers; the synthesis chapter joins them.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
_ = ledger.export()
