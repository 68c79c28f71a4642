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
# # Nonlinear regression in context: the Lipschitz constant sets the clock
#
# {cite:t}`li2025nonlinear` ask two questions about a one-layer softmax-attention model trained by
# gradient descent on *nonlinear* in-context regression: which property of the task functions governs
# how fast attention learns, and why does the trained model predict functions it never saw? Their
# answer: the Lipschitz constant $L$ of the task class. The paper splits training into a **flat**
# regime $L \lesssim 1/(\Delta\delta)$ (two phases) and a **sharp** regime (three phases, the last one
# slow), with different time bounds in each, and proves that attention ends up on the prompt tokens
# that share the query's feature — so any Lipschitz function is predicted in context.
#
# This chapter rebuilds the paper end to end: the model and the derivations (with the typos and gaps
# flagged), the theory model trained exactly, the paper's Figures 1–4 with the practical transformer
# block *and* with the theory model, and a ledger of every checkable statement. Three findings of
# this reproduction go beyond the paper: the theory model's dynamics depend on $L$ and $\eta$ **only
# through $\eta L^2$** (so the flat/sharp split is a step-size effect), the late phase is
# **polynomial** in time rather than logarithmic, and the feature norm enters the step as
# $\|v\|^4$.
#
# Everything runs from the library (`icl_lab.papers.nonlinear.theory` for the exact dynamics,
# `icl_lab.papers.nonlinear.experiments` for the experiments); the scale is chosen by `ICL_LAB_SCALE`.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.42, "book": 1.47, "paper": 0.44})

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

import icl_lab
from icl_lab.memo import full
from icl_lab import criteria, metrics, plotting, reports, widgets
from icl_lab.render import md_table
from icl_lab.data import PromptBatch
from icl_lab.papers.nonlinear import experiments as nl
from icl_lab.papers.nonlinear import figures as nlfig
from icl_lab.papers.nonlinear import theory as th
from icl_lab.train import mse_loss

SCALE, ledger = icl_lab.notebook.chapter("nonlinear", part="phases")
F64 = torch.float64

# %% [markdown]
# ## Setup in the paper's notation
#
# **Prompts.** A task is a function $f$ drawn from a class $\mathcal F$; a prompt holds $N$ pairs
# $(x_i, y_i = f(x_i))$ and a query $x_{\rm query}$, embedded as (Eq. 1)
#
# $$
# P=\begin{pmatrix}x_1&\cdots&x_N&x_{\rm query}\\ y_1&\cdots&y_N&0\end{pmatrix}\in\mathbb R^{(d+1)\times(N+1)} .
# $$
#
# **Features.** Every input is one of $K$ features $v_1,\dots,v_K\in\mathbb R^d$ with
# $\|v_k - v_{k'}\| = \Theta(\Delta)$, drawn with probabilities $p_k = \Theta(1/K)$; $\mathcal V_k$ is
# the set of prompt positions carrying $v_k$. The paper stresses that the features need *not* be
# orthonormal.
#
# **Tasks.** The class is *non-degenerate $L$-Lipschitz* (Eq. 4): $|f(x)-f(x')| \le L\|x-x'\|$, and
# for every $v_k$ some $v_{k'}$ has $|f(v_k)-f(v_{k'})| = \Theta(L)\|v_k - v_{k'}\|$. The experiments
# use $f(x) = \frac{L}{c}\cos(c\cdot x)$ with $c = 0.5$; the paper does not say how a cosine maps
# $\mathbb R^{15}\to\mathbb R$ nor what is random across tasks, so we choose
# $f_{w,\phi}(x) = \frac{L}{c}\cos(c\,w^\top x + \phi)$, $w$ uniform on the sphere, $\phi$ uniform —
# exactly $L$-Lipschitz. Features are $v_k = \frac{\Delta}{\sqrt 2}e_k$ (our choice: all distances
# exactly $\Delta$), with random and non-orthogonal variants where the claim is about geometry.
#
# ```{admonition} Inconsistencies in the setup
# :class: warning
# (14) Eq. (4) calls its first line "the standard global $L$-Lipschitz condition" but imposes it only
# for $\|x-x'\| = \Theta(\delta_0)$; the quadratic tasks of App. A are not globally Lipschitz at all
# (the library's `QuadraticTask` has no `lipschitz`). (15) Sec. 6 calls $c$ "a random constant" and
# sets $c = 0.5$. (17) The notation block defines $\Theta$, $\Omega$ with constants $C_1, C_2$ and
# $\mathcal O$ with a third, $c_1$.
# ```
#
# **Model.** One softmax-attention layer with $W^V$ copying the label row and $W^{KQ}$ acting on the
# inputs only, so the single trained matrix is $Q\in\mathbb R^{d\times d}$ (Eq. 6):
#
# $$
# \hat y_{\rm query} = \sum_{i\le N}\mathrm{attn}_i\,y_i,\qquad
# \mathrm{attn}_i = \frac{\exp(x_i^\top Q x_{\rm query})}{\sum_{j\le N}\exp(x_j^\top Q x_{\rm query})},
# $$
#
# trained from $Q^{(0)} = 0$ by gradient descent (Eq. 8) on
# $\mathcal L(Q) = \tfrac12\mathbb E[(\hat y_{\rm query} - f(x_{\rm query}))^2]$ (Eq. 7). In the book's
# library this is `QOnlyAttention`. The paper's **experiments**, however, train a different model: a
# transformer block with attention, a feed-forward network, LayerNorm and a linear read-out (the
# library's `OneBlockTransformer`; the paper leaves its optimizer open). We run both.
#
# **The paper's settings** (Sec. 6): $d = 15$, $K = 4$, $N = 100$, $c = 0.5$, $\Delta = 3$, $M = 300$
# prompts, $400$ epochs, $L\in\{0.1, 0.2, 0.4\}$ (flat) and $\{1.0, 1.5, 2.0\}$ (sharp). Not given and
# chosen here: the optimizer of the block (plain SGD with learning rate 0.03 as the primary reading,
# closest to the paper's gradient-descent analysis, and Adam $10^{-3}$ as the alternative; batch 30),
# the learning rate of the theory model ($\eta = 10$, full batch), seeds (5 for the theory model and,
# as the reference setting, for the block; the book trains the block with fewer, see its section).

# %% [markdown]
# ## Derivations
#
# ### D1. From Eq. (5) to Eq. (6)
#
# With $W^{KQ} = (W^K)^\top W^Q = \mathrm{diag}(Q, 0)$, the score matrix is
# $(W^KP)^\top W^Q P = P^\top W^{KQ}P = \bar X^\top Q\bar X$: the label row contributes nothing. And
# $W^V P = \begin{pmatrix}0\\ (\mathbf y\ \ 0)\end{pmatrix}$, so the last row of
# $F = W^VP\,\mathrm{softmax}(\cdot)$ is $(\mathbf y\ \ 0)\,\mathrm{softmax}(\bar X^\top Q\bar X)$ and
# its last entry is $\sum_{i\le N} y_i\,\mathrm{softmax}_i(\bar X^\top Q x_{\rm query})$ — a softmax over
# $N + 1$ keys, *including the query itself* (with value 0). Eq. (6) and every later formula
# (Lemma 3's denominator $\sum_{j\in[N]}$) drop the query key; we follow Eq. (6). The
# difference matters: with the query as a key, the query shares the score $q_k$ of its own feature,
# so a mass $\approx 1/(|\mathcal V_k| + 1)$ stays on a zero value forever and the loss cannot reach 0.
#
# ```{admonition} Erratum
# :class: warning
# After Eq. (6) the paper writes $\mathbf y\in\mathbb R^{d\times N}$; it is $1\times N$.
# ```
#
# ### D2. Grouping tokens by feature (Eq. 10)
#
# If $x_{\rm query} = v_k$ and $x_i = v_m$, the score is $x_i^\top Q x_{\rm query} = v_m^\top Q v_k =: q_{k,m}$,
# the paper's attention weight between query feature $k$ and key feature $m$ ($q_k := q_{k,k}$). All
# tokens of one feature get the same weight, so
#
# $$
# \mathrm{Attn}_m := \sum_{i\in\mathcal V_m}\mathrm{attn}_i
# = \frac{|\mathcal V_m|\,e^{q_{k,m}}}{\sum_n |\mathcal V_n|\,e^{q_{k,n}}},\qquad
# \hat y_{\rm query} = \sum_m \mathrm{Attn}_m f(v_m). \tag{10}
# $$
#
# At $Q = 0$ every token gets $1/N$ and $\mathrm{Attn}_k = |\mathcal V_k|/N$. A cell checks both
# identities on the full model in float64.

# %% tags=["hide-input"]
V15 = nl.make_features("orth", 4, 15, 3.0)
chk_batch = nl.cosine_sampler(V15, 100, 0.5).sample(200, icl_lab.make_generator(1))
chk_fp = th.FeaturePrompts.from_batch(chk_batch)
qonly = icl_lab.QOnlyAttention(15, runs=1, init="normal", init_std=0.2).to(dtype=F64)
with torch.no_grad():
    out_full = qonly(chk_batch)
    A_red, _, yhat_red, _ = th.forward(th.q_from_Q(qonly.Q, V15), chk_fp, torch.ones(1, dtype=F64))
    out_zero = icl_lab.QOnlyAttention(15, runs=1).to(dtype=F64)(chk_batch)
eq10_gap = float((out_full.pred[0, :, 0] - yhat_red[0]).abs().max())
A_full = metrics.attention_by_feature(out_full.attn, chk_batch.ids, 4)[0, :, 0]
eq10_gap = max(eq10_gap, float((A_full - A_red[0]).abs().max()))
init_gap = float((metrics.attention_by_feature(out_zero.attn, chk_batch.ids, 4)[0, :, 0] - chk_fp.counts / 100).abs().max())
display(Markdown(f"At a random $Q$ the full model and eq. (10) agree to {eq10_gap:.0e}; at $Q = 0$, "
                 f"$\\mathrm{{Attn}}_k$ equals $|V_k|/N$ to {init_gap:.0e}."))
ledger["C2"].measure({"largest difference": max(eq10_gap, init_gap)})

# %% tags=["remove-cell"]
assert eq10_gap < 1e-12 and init_gap < 1e-12

# %% [markdown]
# ### D3. Lemma 1: the loss is controlled by $1 - \mathrm{Attn}_k$
#
# ```{prf:lemma} Loss decomposition (paper's Lemma 1)
# :label: lem-nl-loss
#
# $\mathcal L = \tfrac12\sum_k \mathbb E\big[\mathbb 1\{x_{\rm query}=v_k\}(1-\mathrm{Attn}_k)^2\big]\cdot\mathcal O(L^2\Delta^2)$.
# ```
#
# ```{prf:proof}
# Since $\sum_n\mathrm{Attn}_n = 1$, the residual is
# $\hat y - f(v_k) = \sum_{n\ne k}\mathrm{Attn}_n\,(f(v_n) - f(v_k))$, a weighted sum with total weight
# $1-\mathrm{Attn}_k$. Hence
# $|\hat y - f(v_k)| \le (1-\mathrm{Attn}_k)\max_{n\ne k}|f(v_n)-f(v_k)| \le (1-\mathrm{Attn}_k)\,L\max_n\|v_n-v_k\|$.
# Square and average.
# ```
#
# The paper later uses the bound as an equality $\Theta(L^2\Delta^2)$ (App. D.3, E.2). The lower bound
# needs the non-degeneracy of Eq. (4) and can fail by cancellation: the $f(v_n) - f(v_k)$ of
# different signs can cancel in the weighted sum. Note also that for the cosine family in $d$
# dimensions $|f(v_n) - f(v_k)| \approx L|w^\top(v_n - v_k)| \sim L\Delta/\sqrt d$: the hidden
# constant depends on $d$. We check the *exact* per-prompt envelope
# $(\hat y - f(v_k))^2 \le (1-\mathrm{Attn}_k)^2\max_{n\ne k}(f(v_n)-f(v_k))^2$ along training below.
#
# ### D4. The gradient (App. C)
#
# With $s_j = x_j^\top Q x_{\rm query}$: $\partial\mathrm{attn}_i/\partial s_j = \mathrm{attn}_i(\delta_{ij}-\mathrm{attn}_j)$
# and $\partial s_j/\partial Q = x_j x_{\rm query}^\top$, so
# $\partial\hat y/\partial Q = \sum_i\mathrm{attn}_i(y_i-\hat y)\,x_i x_{\rm query}^\top$ and, per prompt,
#
# $$
# \nabla_Q\,\tfrac12(\hat y - y_{\rm query})^2 = (\hat y - y_{\rm query})\sum_i \mathrm{attn}_i\,(y_i - \hat y)\,x_i x_{\rm query}^\top .
# $$
#
# This equals App. C's $\sum_{i,j}\mathrm{attn}_i\mathrm{attn}_j(\bar X_i - \bar X_j)x_{\rm query}^\top y_i$ (expand and use $\sum_j\mathrm{attn}_j = 1$).
#
# ```{admonition} Erratum
# :class: warning
# App. C's first display of $\partial\mathrm{attn}_i/\partial Q$ has the outer product as
# "$\bar X_i^\top x_{\rm query}^\top$"; it is $\bar X_i x_{\rm query}^\top$ (the final line is right).
# ```
#
# ### D5. Lemma 2, general features: the Gram-matrix formula
#
# Every gradient term is an outer product $v_m v_k^\top$ of two features, so from $Q^{(0)} = 0$ the
# matrix $Q$ stays in $\mathrm{span}\{v_m v_k^\top\}$ and only the $K\times K$ weights $q_{k,m}$ matter.
# Grouping the tokens, $\nabla_Q\mathcal L = \sum_{k,m}\Gamma_{k,m}\,v_m v_k^\top$ with
#
# $$
# \Gamma_{k,m} = \mathbb E\big[\mathbb 1\{x_{\rm query}=v_k\}\,(\hat y - f(v_k))\,\mathrm{Attn}_m\,(f(v_m)-\hat y)\big],
# $$
#
# and with the Gram matrix $G_{mn} = \langle v_m, v_n\rangle$ the exact update of the weights is
#
# $$
# q^{(t+1)} = q^{(t)} - \eta\, G\,\Gamma^{(t)} G,\qquad g_{k,k'} := \frac{q^{(t+1)}_{k,k'} - q^{(t)}_{k,k'}}{\eta} = -(G\Gamma G)_{k,k'} .
# $$
#
# For orthonormal features ($G = I$) this is the paper's Lemma 2 in its App. C form,
# $g_{k,k'} = \mathbb E[\mathbb 1\{x_{\rm query}=v_k\}\mathrm{Attn}_{k'}(f(v_k)-\hat y)(f(v_{k'})-\hat y)]$ and
# $g_k = \mathbb E[\mathbb 1\{x_{\rm query}=v_k\}\mathrm{Attn}_k(f(v_k)-\hat y)^2] \ge 0$. For orthogonal
# features of norm $s$ it carries an extra factor $s^4$ (observation R3; $s^4 = \Delta^4/4 = 20.25$
# at $\Delta = 3$). For non-orthogonal features the App. C derivation does not hold exactly: it
# silently uses $v_{k'}^\top(v_m - v_n) = \mathbb 1\{m=k'\} - \mathbb 1\{n=k'\}$, true only for
# orthonormal features, and drops the other query features' contributions — a gap in the proof.
# Lemma 2 itself, however, is used as a $\Theta$-statement (signs and orders of $g_k$, $g_{k,k'}$), and
# that is what we test at non-orthogonal features: $g_k > 0$, the ratio of the true $g_k$ to App. C's
# bounded, and the signs of the cross terms. Random Gaussian directions in $d = 15$ are nearly
# orthogonal, so we also test correlated features $v_k = u + s\,e_k$: every pairwise distance is exactly
# $\Delta$ (inside Eq. 4's hypotheses) while $\cos(v_k, v_m) = \|u\|^2/(\|u\|^2 + s^2)$ is as large as we like.
# With $G = s^2 I + \|u\|^2\mathbf 1\mathbf 1^\top$ and the rows of $\Gamma$ summing to zero, the true increment is
# $g_k = -s^4\Gamma_{k,k} - s^2\|u\|^2\sum_j\Gamma_{j,k}$: the first term is App. C's (non-negative), the second a
# column sum of $\Gamma$, which is zero in expectation when the features are exchangeable. Lemma 2 is about
# the expected loss (Eq. 7), and there $g_k > 0$ holds even at $\cos = 0.8$ (we estimate it on $10^5$
# prompts). On a training set of 300 prompts the column sum's sampling noise, amplified by
# $\|u\|^2/s^2 = 4$ at $\cos = 0.8$, can make $g_k$ negative: a finite-sample effect, not a failure of the lemma.
#
# ```{admonition} Inconsistencies
# :class: warning
# (3) Lemma 2's proof assumes orthonormal features, contradicting the claim that the results hold
# "without the restrictive orthonormality assumptions". (4) The main-text Eq. (13) has no factor
# $p_k$ and a stray superscript $x^{(t)}_{\rm query}$; the App. C version has the $p_k$.
# ```
#
# `th.feature_gd` runs the Gram update exactly, for many runs at once; the unit tests check it
# against full-batch GD of the $d\times d$ model. Here we compare the three formulas with autograd
# at a random $Q$ for unit, orthogonal (norm $\Delta/\sqrt2$) and non-orthogonal (Gaussian
# directions) features.

# %% tags=["hide-input"]
L2_SET = dict(K=4, d=15, delta=3.0)  # the features of lemma2_errors
lemma2 = {kind: full(th.lemma2_errors, kind, **L2_SET) for kind in ("unit", "orth", "gaussian")}


def orthogonal(V):  # v_k^T v_m = 0 for k != m (to round-off)
    G = V @ V.T
    return bool((G - torch.diag(torch.diagonal(G))).abs().max() <= 1e-12 * float(torch.diagonal(G).max()))


def separated(V, Delta):  # Sec. 3.1's ||v_k - v_k'|| = Theta(Delta), read as every distance within [Delta/2, 2 Delta]
    dist = torch.pdist(V)
    return bool(((dist >= Delta / 2) & (dist <= 2 * Delta)).all())


display(Markdown("Largest relative error of each gradient formula against automatic differentiation:\n\n" + md_table(
    ["features", "Gram formula", "App. C", "$s^4 \\times$ App. C", "$s^4$"],
    [[{"unit": "unit norm", "orth": "orthogonal, norm $s$", "gaussian": "Gaussian"}.get(kind, kind), f"{gram:.1e}", f"{paper:.1e}",
      f"{paper_s4:.1e}", f"{s4:.2f}"] for kind, (gram, paper, paper_s4, s4) in lemma2.items()])))
gram_max = max(v[0] for v in lemma2.values())
ORTH = "orthogonal features (App. C uses v_k^T v_m = 1{k = m}; a norm s adds the factor s^4, R3)"
SEP = "feature distances Theta(Delta) (Sec. 3.1), read as all within [Delta/2, 2 Delta]"
ledger["C4a"].measure({"App. C error, unit features": lemma2["unit"][1],
                        "s^4 x App. C error, norm-s orthogonal features": lemma2["orth"][2]},
                       hypotheses={ORTH: all(orthogonal(nl.make_features(k, **L2_SET)) for k in ("unit", "orth"))})
ledger["C4c"].measure({"s^4 x App. C error, Gaussian features": lemma2["gaussian"][2],
                       "App. C error, unit features": lemma2["unit"][1]},
                      hypotheses={SEP: separated(nl.make_features("gaussian", **L2_SET), L2_SET["delta"])})

# Lemma 2 as a Theta-statement at non-orthogonal features: along a GD run and at random Q
Vg = nl.make_features("gaussian", 4, 15, 3.0)
Gg = Vg @ Vg.T
gram_off = float((Gg - torch.diag(torch.diagonal(Gg))).abs().max() / torch.diagonal(Gg).mean())
fp_g = th.FeaturePrompts.from_batch(nl.cosine_sampler(Vg, 100, 0.5).sample(300, icl_lab.make_generator(2)))
q_path = th.feature_gd(fp_g, Gg, steps=200, lr=1.0, record_every=10, with_maps=False).q[:, 0]
q_rand = torch.stack([th.q_from_Q(icl_lab.QOnlyAttention(15, runs=1, init="normal", init_std=0.1, seeds=[s]).Q.detach().to(F64), Vg)[0]
                      for s in range(10)])
theta2 = th.lemma2_theta(torch.cat([q_path, q_rand]), fp_g, Gg)
display(Markdown(f"Gaussian features (off-diagonal Gram entries up to ${gram_off:.2f}\\,s^2$), "
                 f"{len(q_path) + len(q_rand)} weight matrices: the smallest true $g_k$ is {theta2['min_gk']:.1e}, the ratio "
                 f"of the true $g_k$ to App. C's lies in $[{theta2['ratio_lo']:.2f}, {theta2['ratio_hi']:.2f}]$, and "
                 f"{theta2['sign_agree']:.0%} of the off-diagonal signs agree."))


# correlated features v_k = u + s e_k (pairwise distance exactly Delta, inside Eq. 4): cos(v_k, v_m) = |u|^2 / (|u|^2 + s^2)
def correlated_features(K, d, Delta, cos):
    s_ = Delta / math.sqrt(2)
    V = torch.zeros(K, d, dtype=F64)
    V[:, :K] = s_ * torch.eye(K, dtype=F64)
    V[:, K] = math.sqrt(cos * s_**2 / (1 - cos))
    return V


# Lemma 2's g_k is the gradient of the expected loss (Eq. 7): the choice of claims.toml runs it on the
# population loss (10^5 prompts) and on a training set of 300 prompts
M_POP = 100_000 if SCALE != "ci" else 30_000


def corr_gd(cos, M, seed):
    """g_k = (q_k(t+1) - q_k(t)) / eta along 300 GD steps (eta = 1) from Q = 0: (smallest, smallest at t = 0, steps where some q_k falls)"""
    Vc = correlated_features(4, 15, 3.0, cos)
    fp_c = (th.FeaturePrompts.from_batch(nl.cosine_sampler(Vc, 100, 0.5).sample(M, icl_lab.make_generator(seed))) if M <= 1000
            else nl.cosine_feature_prompts(Vc, 100, M, 0.5, icl_lab.make_generator(seed)))  # the same law, drawn as counts
    qk = torch.diagonal(th.feature_gd(fp_c, Vc @ Vc.T, steps=300, lr=1.0, record_every=1, with_maps=False).q[:, 0], dim1=-2, dim2=-1)
    dq = qk[1:] - qk[:-1]
    return float(dq.min()), float(dq[0].min()), int((dq < -1e-12).any(-1).sum())


corr = {(cos, M): [corr_gd(cos, M, 10 + sd) for sd in range(3)] for cos, M in ((0.8, 300), (0.5, 300), (0.8, M_POP))}
display(Markdown("Correlated features $v_k = u + s e_k$ (pairwise distance exactly $\\Delta = 3$), 300 GD steps from $Q = 0$, "
                 "three prompt sets each:\n\n" + md_table(
    ["$\\cos(v_k, v_m)$", "prompts", "smallest true $g_k$", "smallest $g_k(0)$", "steps where some $q_k$ falls"],
    [[f"{cos:g}", f"{M}", ", ".join(f"{v[0]:.4f}" for v in ps), ", ".join(f"{v[1]:.3f}" for v in ps),
      ", ".join(f"{v[2]}" for v in ps)] for (cos, M), ps in corr.items()])))
CORR_Q = "smallest g_k along GD, correlated features (cos 0.8, distance Delta), median over prompt sets"
ledger["C4b"].measure(
    {"smallest g_k": theta2["min_gk"], "g_k_ratio_low": theta2["ratio_lo"], "g_k_ratio_high": theta2["ratio_hi"],
     "share of off-diagonal signs that agree": theta2["sign_agree"],
     "smallest g_k along GD at cos 0.5, 300 prompts, per prompt set": [round(v[0], 4) for v in corr[(0.5, 300)]]},
    under={opt: {CORR_Q: criteria.median_of([v[0] for v in corr[(0.8, M)]]), "per prompt set": [round(v[0], 4) for v in corr[(0.8, M)]]}
           for opt, M in (("population loss (Eq. 7, estimated on 3 x 10^4 to 10^5 prompts)", M_POP), ("training set of 300 prompts", 300))},
    how=f"Gaussian features (off-diagonal Gram up to {gram_off:.2f} s^2), {len(q_path)} weights along GD + {len(q_rand)} random Q, "
        f"300 prompts; correlated features v_k = u + (Delta/sqrt2) e_k (cos 0.8, distance Delta): g_k = dq_k / eta along 300 GD steps "
        f"(eta = 1) from Q = 0 on {M_POP} prompts (the population loss, Eq. 7) and on 300 prompts, 3 prompt sets each, median with "
        "bootstrap interval; g_k_ratio: true g_k / App. C's",
    hypotheses={SEP: separated(Vg, 3.0) and all(separated(correlated_features(4, 15, 3.0, c), 3.0) for c in (0.8, 0.5))})

# %% tags=["remove-cell"]
assert gram_max < 1e-10 and lemma2["unit"][1] < 1e-10 and lemma2["gaussian"][2] > 1e-3

# %% [markdown]
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
# sweeps below show the collapse.

# %% tags=["hide-input"]
V4 = nl.make_features("orth", 4, 15, 3.0)
fp_r1 = th.FeaturePrompts.from_batch(nl.cosine_sampler(V4, 100, 0.5).sample(200, icl_lab.make_generator(3)))
Ls = torch.tensor([0.1, 0.4, 1.0, 2.0], dtype=F64)
traj_L = th.feature_gd(fp_r1, V4 @ V4.T, steps=200, lr=1.0, scale=Ls, record_every=1, with_maps=False)
traj_1 = th.feature_gd(fp_r1, V4 @ V4.T, steps=200, lr=1.0 * Ls**2, scale=1.0, record_every=1, with_maps=False)
r1_q = float((traj_L.q - traj_1.q).abs().max())
r1_loss = float(((traj_L.loss / Ls**2 - traj_1.loss).abs() / traj_1.loss).max())
display(Markdown(f"$q(\\eta, L)$ and $q(\\eta L^2, 1)$ agree to {r1_q:.0e}; $\\mathcal L/L^2$ and the loss at "
                 f"$L = 1$ agree to a relative {r1_loss:.0e}."))
ledger["R1"].measure({"largest |q(eta, L) - q(eta L^2, 1)|": r1_q, "largest relative gap of loss / L^2": r1_loss})

# %% tags=["remove-cell"]
assert r1_q < 1e-10 and r1_loss < 1e-10

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
# $p_k \approx 1/K$ the second is $\approx 1 - 1/K$, not $\Theta(\delta)$ (the next page measures the consequence:
# the time to reach $1-\mathrm{Attn}_k \le \delta/(1+\delta)$ grows with $N$, claim C16). Moreover the concentration
# parameter satisfies $\delta\ge\sqrt{20K/N} = 0.89 > p_k = 0.25$ at the paper's $K = 4$, $N = 100$, so
# "$\delta = o(1)$" (used in Lemmas 5–6) fails at the paper's own sizes; $\delta < 1/K$ needs $N > 20K^3 = 1280$.
# ```
#
# ### D8. Phase II, flat regime (Prop. 3; Lemmas 6–8; Thm 1)
#
# After Phase I, $1-\mathrm{Attn}_k = \mathcal O(\delta)$, so $g_k = \Theta(\delta^2L^2\Delta^2/K)$. The paper
# accumulates this constant rate until $q_k = \Theta(\log(K/\epsilon))$, giving
# $T_f^* = \Theta\big(\frac{K\log(K\epsilon^{-1})}{\eta\delta^2L^2\Delta^2}\big)$ and
# $1-\mathrm{Attn}_k = \mathcal O(\epsilon\delta)$, so $\mathcal L = \mathcal O(\epsilon^2\delta^2L^2\Delta^2)$,
# which is $\mathcal O(\epsilon^2)$ exactly when $L\Delta\lesssim 1/\delta$: **this is where the threshold
# $L^* = \Theta(1/(\Delta\delta))$ comes from** — a condition for the bookkeeping of the final loss, not a
# change in the dynamics.
#
# ```{admonition} Errata
# :class: warning
# Lemma 8 states $q_k = \Theta(\log K/\epsilon)$ but its proof gets $\Theta(\log(K\epsilon^{-1}))$ and then
# writes "$\Theta(\log(K\epsilon^{-1})) = \Theta(\log K/\epsilon)$", which is false. The proof cites
# "Eq. (7)" for the concentration property; it is Eq. (9).
# ```
#
# The step "the rate stays $\Theta(\delta^2L^2\Delta^2/K)$ until $q_k = \log(K/\epsilon)$" is the weak
# point: $g_k \propto \mathrm{Attn}_k(1-\mathrm{Attn}_k)^2$ shrinks as attention concentrates, so the rate
# is not constant (D10).
#
# ### D9. Sharp regime (Sec. 5.3, Prop. 4; Lemmas 9–10; Thm 2)
#
# For $L\Delta\gtrsim 1/\delta$ the same bookkeeping leaves a loss $\mathcal O(\epsilon^2\delta^2L^2\Delta^2)$
# too large after $T_f^*$; the paper adds a Phase III with rate $\Theta(\eta\delta^2L^2\Delta^2\epsilon/K)$,
# ending at $T_s^* = \Theta\big(\frac{K\log(KL\Delta\epsilon^{-1})}{\eta\epsilon\delta^2L^2\Delta^2}\big)$.
#
# ```{admonition} Errata in the sharp regime
# :class: warning
# (9) Lemma 9's proof yields $\epsilon^2$, its statement $\epsilon$. (10) Lemma 10 states
# $q_k = \Theta(\log(KL\Delta)/\epsilon)$, its proof $\Theta(\log(KL\Delta\epsilon^{-1}))$; its "$T_s^*-T_f^*$"
# lacks $\eta$; Lemma 10 and Prop. 4 call the last phase "Phase II", Sec. 5.3 "Phase III". (11) Thm 2's
# proof drops the factor $\Theta(L^2\Delta^2) = \Omega(1/\delta^2)$ and so only shows
# $\mathcal O(\epsilon^2\delta^2L^2\Delta^2)$, which is *not* $\mathcal O(\epsilon^2)$ in this regime. (12) Sec. 5.3
# says $q_k$ grows at rate $\Theta(\eta/K)$ for $t\le T_f^*$, Prop. 2 says $\Theta(\eta L^2\Delta^2/K)$. (13)
# Prop. 2's $T_f^1$ has no $\delta$, yet the sharp Phase I is set equal to $T_f^*$ (with $\delta^{-2}$
# and $\log(K/\epsilon)$).
# ```
#
# ### D10. The late phase in continuous time (observation R2)
#
# Let $a = 1-\mathrm{Attn}_k$ be small for query feature $k$ (orthogonal features of norm $s$). The
# cross weights are *not* frozen: the rows of $\Gamma$ sum to zero (Sec. 3), so every row of $q$
# sums to zero and, by symmetry of the late phase, each cross weight falls at
# $\dot q_{k,m} = -\dot q_k/(K-1)$. The logit gap $u = q_k - q_{k,m}$ therefore grows at
# $\dot u = \frac{K}{K-1}\dot q_k$, and $a_b = r_b\,e^{-u}$ for prompt-dependent constants $r_b$. The
# residual is $\hat y - f(v_k)\approx a\,\bar\Delta f$, and D5 gives
# $\dot q_k = \eta s^4 p_k\,\mathbb E[r_b^2 (\bar\Delta f)^2]\,e^{-2u} = 2\eta s^4 p_k\mathcal L_k$, with
# $\mathcal L_k = \tfrac12\mathbb E[r_b^2(\bar\Delta f)^2]e^{-2u}$ the loss on queries of feature $k$. So
#
# $$
# \dot{\mathcal L}_k = -2\mathcal L_k\,\dot u = -\frac{4K}{K-1}\,\eta s^4 p_k\,\mathcal L_k^2
# \quad\Longrightarrow\quad \mathcal L_k(t)\approx\frac{K-1}{4K\eta s^4 p_k t},\qquad
# \mathcal L(t) = \sum_k p_k\mathcal L_k \approx \frac{K-1}{4\eta s^4 t} .
# $$
#
# The late loss decays like $1/t$ — independently of $L$, of the task law and of the counts — and
# $1-\mathrm{Attn}_k\propto t^{-1/2}$. Reaching $1-\mathrm{Attn}_k\le\epsilon$ therefore takes
# $\Theta(\epsilon^{-2}/(\eta L^2))$ steps, not the $\log(1/\epsilon)$ of Thm 1 nor the $\epsilon^{-1}\log(1/\epsilon)$ of
# Thm 2. (The paper's rates treat $\eta$ as possibly $\epsilon$-dependent — Lemma 8 "applies the scaling of
# $T_f^*$ and the learning rate" — which may reconcile them; at a fixed $\eta$ they do not hold.)
#
# ### D11. Proposition 1: in-context prediction of unseen functions
#
# The trained predictor is $\hat y = \sum_m\mathrm{Attn}_m f(v_m)$ whatever $f$ is: attention does not look
# at the labels. By D3, for *any* $f$ (seen in training or not),
# $(\hat y - f(v_k))^2\le(1-\mathrm{Attn}_k)^2\max_{n\ne k}(f(v_n)-f(v_k))^2\le(1-\mathrm{Attn}_k)^2L^2\max_n\|v_n-v_k\|^2$,
# so once $1-\mathrm{Attn}_k = \mathcal O(\epsilon)$ every $L$-Lipschitz function is predicted with error
# $\mathcal O(\epsilon^2 L^2\Delta^2)$.
#
# ### D12. Concentration of the feature counts (Eq. 9)
#
# The paper states without proof that $\mathbb P(P_{1:N}\in\mathcal E^*)\ge 1-3e^{-\delta^2N/25}$ for
# $\delta\ge\sqrt{20K/N}$. A proof of a bound of this type: each count is $\mathrm{Bin}(N, p_k)$, so
# Hoeffding gives $\mathbb P(||\mathcal V_k|/N - p_k| > \delta)\le 2e^{-2N\delta^2}$ and a union bound over
# $k$ gives $\mathbb P(\mathcal E^*)\ge 1-2Ke^{-2N\delta^2}$ — stronger in the exponent ($2$ vs $1/25$),
# weaker by the factor $2K$ vs $3$. At $\delta = \sqrt{20K/N}$ the paper's bound is $1-3e^{-0.8K}$
# ($0.878$ at $K = 4$) for every $N$.
#
# ```{admonition} Erratum
# :class: warning
# The concentration claim carries a stray "for any $t\in[T]$" (the prompt distribution does not depend
# on $t$) and has no proof in the paper.
# ```

# %% tags=["hide-input"]
conc = full(nl.run_concentration, nl.ConcentrationConfig.for_scale(SCALE))
margins = []
for emp, pap in zip(conc.empirical, conc.paper):
    se = (emp * (1 - emp) / conc.config.n_mc).sqrt()
    margins.append(float((emp + 3 * se - pap).min()))
emp_at_min = [float(th.concentration_probability(torch.full((4,), 0.25), N, [dm], conc.config.n_mc, icl_lab.make_generator(9))[0])
              for N, dm in zip(conc.config.N_values, conc.delta_min)]
display(Markdown("$P(\\mathcal E^*)$ at $\\delta_{\\min}$: "
                 + ", ".join(f"{e:.3f} ($N = {N}$)" for e, N in zip(emp_at_min, conc.config.N_values))
                 + f"; the paper's bound there is {1 - 3 * math.exp(-0.8 * 4):.3f}."))
ledger["C1"].measure(
    {"smallest margin, Monte Carlo + 3 s.e. - bound": min(margins), "P(E*) at delta_min, smallest over N": min(emp_at_min),
     "the bound there": 1 - 3 * math.exp(-0.8 * 4)},
    how=f"Monte Carlo multinomial counts, K = 4, N in {list(conc.config.N_values)}, {conc.config.n_mc} prompts each")

# %% tags=["remove-cell"]
assert min(margins) >= 0

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Probability of the balanced-prompt event $\\mathcal E^*$ against the imbalance $\\delta$ for three context lengths $N$ ($K = 4$, Monte Carlo), with the paper's bound after Eq. (9) and Hoeffding's; grey: $\\delta_{\\min} = \\sqrt{20K/N}$. Not a figure of the paper.", "name": "fig-nl-concentration"}, "image": {"alt": "Three panels: the Monte-Carlo probability rises to 1 well before the paper's bound, which lies below it everywhere."}}
nlfig.show(nlfig.concentration_figure(conc))

# %% [markdown]
# ## The theory model, trained exactly
#
# We now train the theory model on the paper's Sec. 6 setting — six values of $L$ and several seeds,
# full-batch GD with $\eta = 10$ on $M$ fixed prompts — using the exact feature-space dynamics. Each
# seed's prompts are drawn once with $L = 1$ and every $L$ scales the labels (common random numbers),
# so the runs of a seed differ only in $L$.

# %% tags=["hide-input"]
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
# the explorer at the end of the chapter shows all six $L$ at $\eta = 10$.

# %% tags=["hide-input"]
steps_t = torch.arange(tcfg.steps + 1)

# %% tags=["remove-input"] mystnb={"figure": {"caption": "The theory model on the Sec. 6 setting (mean \u00b1 std over seeds): (a) training (solid) and held-out (dashed) loss for the flat set at $\\eta = 10$, (b) the sharp set at $\\eta = 0.1$, (c, d) the attention of queries $v_1$ on each feature. Reproduces Fig. 1 of Li, Duan and Liang for the theory model.", "name": "fig-nl-theory-fig1"}, "image": {"alt": "Loss curves falling over hundreds of steps and attention curves in which the own-feature attention rises from 0.25 towards 1."}}
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

# %% tags=["remove-cell"]
SNAP_T = [t for t in (0, 1, 5, 25, 100, 400) if t <= tcfg.steps]
iL = {Lv: list(tcfg.L_values).index(Lv) for Lv in (0.1, 1.0)}

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Attention maps of the theory model at $L = 0.1$ ($\\eta = 10$, seed 0): entry $(i, j)$ is the attention a query $v_j$ puts on feature $v_i$; columns sum to one. Reproduces Fig. 2 of Li, Duan and Liang for the theory model.", "name": "fig-nl-theory-maps-flat"}, "image": {"alt": "Six 4 by 4 heat maps at steps 0 to 400: the diagonal rises from 0.25 towards 1 while the off-diagonal entries fade."}}
nlfig.show(nlfig.attention_maps_figure([theory.maps[0, t, iL[0.1]] for t in SNAP_T], [f"t = {t}" for t in SNAP_T]))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "As the previous figure at $L = 1$: the maps concentrate within the first steps. Reproduces Fig. 3 of Li, Duan and Liang for the theory model.", "name": "fig-nl-theory-maps-sharp"}, "image": {"alt": "Six 4 by 4 heat maps: the diagonal is above 0.7 after one step and near 1 at the end."}}
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

# %% tags=["hide-input"]
snap = list(range(0, tcfg.steps + 1, max(1, tcfg.steps // 40)))
lem_ratio, lip_ratio, theta = 0.0, 0.0, []
for i, Lv in enumerate(tcfg.L_values):
    q_s = theory.q[0, snap, i]  # (n_snap, K, K) as runs
    err, gap, env = th.lemma1_terms(q_s, theory.prompts[0], Lv)
    lip = gap**2 * Lv**2 * float(torch.cdist(theory.V, theory.V).max()) ** 2
    lem_ratio = max(lem_ratio, float((err / env.clamp_min(1e-300)).max()))
    lip_ratio = max(lip_ratio, float((err / lip.clamp_min(1e-300)).max()))
    theta.append((err.mean(-1) / (Lv**2 * tcfg.delta**2 * (gap**2).mean(-1)))[1:])
theta = torch.cat(theta)
display(Markdown(f"The error stays within its envelopes: at most {lem_ratio:.3f} of the exact one and {lip_ratio:.3f} of "
                 f"the Lipschitz one. Along training $\\mathcal L / (L^2\\Delta^2\\,\\mathbb E(1-\\mathrm{{Attn}})^2)$ "
                 f"stays in $[{float(theta.min()):.3f}, {float(theta.max()):.3f}]$."))
ledger["C3"].measure({"largest error / exact envelope": lem_ratio, "largest error / Lipschitz envelope": lip_ratio,
                       "loss / (L^2 Delta^2 E(1-Attn)^2), range": [float(theta.min()), float(theta.max())]},
                      # by construction: run_theory's tasks are (L/c) cos(c w.x + phi), L-Lipschitz for every w, phi
                      hypotheses={"f L-Lipschitz (Eq. 4)": True})

# %% tags=["remove-cell"]
assert lem_ratio <= 1 + 1e-9 and lip_ratio <= 1 + 1e-9

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Per-prompt squared error against the squared attention gap along training (theory model, six $L$, seed 0), below the Lipschitz envelope of Lemma 1 (dashed). Not a figure of the paper.", "name": "fig-nl-lemma1"}, "image": {"alt": "Clouds of points for each L lying below a dashed diagonal line."}}
nlfig.show(nlfig.lemma1_figure(theory, snap))

# %% tags=["hide-input"]
qd = torch.diagonal(theory.q, dim1=-2, dim2=-1)  # (seeds, T, nL, K)
dq_min = float((qd[:, 1:] - qd[:, :-1]).min())
off = theory.q - torch.diag_embed(qd)
off_final = float(off[:, -1].sum((-2, -1)).mean() / (tcfg.K * (tcfg.K - 1)))
incr = off[:, 1:] - off[:, :-1]
flips = float(((incr[:, 1:] * incr[:, :-1]) < 0).float().mean())
row_sums = float((theory.q.sum(-1)).abs().max())
display(Markdown(f"The smallest step increment of $q_k$ is {dq_min:.1e}; the mean final cross weight $q_{{k,k'}}$ is "
                 f"{off_final:.3f}, and {flips:.1%} of the cross-weight increments flip sign. "
                 f"$\\max_k |\\sum_m q_{{k,m}}| = {row_sums:.0e}$: the cross weights carry exactly $-q_k$ between them."))
ledger["C5a"].measure({"smallest step increment of q_k": dq_min},
                      hypotheses={"orthogonal features (g_k is a mean of squares only then, C4b)": orthogonal(theory.V)})

# %% tags=["remove-cell"]
assert dq_min >= -1e-12 and row_sums < 1e-10

# %% [markdown]
# ## Rates and durations against $L$, $\eta$, $K$ and $\Delta$
#
# The sweeps measure the Phase-I duration $T^1$ (first step with mean own-feature attention
# $\ge K/(2K-1)$, D7) on grids of $L$ and $\eta$ trained together (per-run step sizes and label
# scales), on $K$ from 2 to 32 (16 at `ci` scale; with $N = \max(100, 2K^3)$, the paper's
# $N\ge\Theta(K^3)$, prompts drawn directly as feature counts, all $K$ in the same dimension
# $d = \max(15, K_{\max})$ because the task values vary like $1/\sqrt d$), and on $\Delta$.
# For the $\Delta$ sweep the step is divided by $\|v\|^4\propto\Delta^4$ (R3), and the durations at the paper's
# own step, Eq. (8)'s $\eta$ on $Q$, follow by R1's rescaling. Sec. 5.1's update $q_k \leftarrow q_k + \eta g_k$
# holds with Eq. (8)'s $\eta$ for features of any norm (App. C defines $g_k = -v_k^\top\nabla_Q\mathcal L\,v_k$),
# but App. C evaluates $g_k$ with unit-norm features and so drops the factor $\|v\|^4$ that features of norm
# $\Delta/\sqrt2$ carry (C4a): the divided step is the one that corrects the derivation. The ledger decides
# at the paper's step (C13, and C8b on the next page) and reports the corrected step beside it.

# %% tags=["hide-input"]
scfg = nl.SweepConfig.for_scale(SCALE)
sweep = full(nl.run_sweep, scfg)
Lg, Eg = torch.tensor(scfg.L_grid), torch.tensor(scfg.eta_grid)
# slopes over the points with T^1 > 5 steps (a duration of 1-2 steps cannot resolve a power law)
slopes_L = [metrics.loglog_slope(Lg[sweep.T1_L_eta[j] > 5], sweep.T1_L_eta[j][sweep.T1_L_eta[j] > 5]) for j in range(len(Eg))]
# eta slope at the L values where every eta takes > 5 steps (discreteness)
okL = (sweep.T1_L_eta.min(0).values > 5)
slope_eta = float(np.mean([metrics.loglog_slope(Eg, sweep.T1_L_eta[:, j]) for j in range(len(Lg)) if okL[j]]))
slope_rate = metrics.loglog_slope(Lg, sweep.rate_L_eta[0])
Kg = torch.tensor(scfg.K_grid, dtype=F64)
slope_K = metrics.loglog_slope(Kg, sweep.T1_K)
slope_KlogK = metrics.loglog_slope(Kg, Kg * Kg.log())
ref_K = (Kg - 1) * Kg.log()  # the paper's rate integrated to our end-of-phase level q_k - q_(k,m) = log K
slope_ref = metrics.loglog_slope(Kg, ref_K)
slope_rate_K = metrics.loglog_slope(Kg, sweep.phase1_rate_K)
# local slopes on the top octave (K_max / 2 -> K_max), where the references discriminate
top = [len(Kg) - 2, len(Kg) - 1]
top_T1, top_ref = metrics.loglog_slope(Kg[top], sweep.T1_K[top]), metrics.loglog_slope(Kg[top], ref_K[top])
top_rate = metrics.loglog_slope(Kg[top], sweep.phase1_rate_K[top])
Dg = torch.tensor(scfg.delta_grid, dtype=F64)
slope_D = metrics.loglog_slope(Dg, sweep.T1_delta)
slope_D_raw = metrics.loglog_slope(Dg, sweep.T1_delta * sweep.eta_delta / scfg.eta_ref)
display(Markdown(md_table(["$\\eta$ \\ $L$", *[f"{v:g}" for v in scfg.L_grid]],
                          [[f"{e:g}", *[f"{t:.0f}" for t in row]] for e, row in zip(scfg.eta_grid, sweep.T1_L_eta.tolist())])
                 + "\n\nPhase-I duration $T^1$ in GD steps (rows: $\\eta$, columns: $L$)."))
display(Markdown(
    "Log-log slopes of $T^1$ against $L$: " + ", ".join(f"{v:.2f}" for v in slopes_L)
    + f" (one per $\\eta$); against $\\eta$: {slope_eta:.2f}; first-step rate $g_k(0)$ against $L$: {slope_rate:.2f}.\n\n"
    + "$T^1$ against $K$ = " + ", ".join(f"{k:g}" for k in scfg.K_grid) + ": " + ", ".join(f"{t:.0f}" for t in sweep.T1_K.tolist())
    + f" steps (slope {slope_K:.2f}; $(K-1)\\log K$: {slope_ref:.2f}; $K\\log K$: {slope_KlogK:.2f}); on the top octave "
    f"$T^1 \\sim K^{{{top_T1:.2f}}}$ against $(K-1)\\log K \\sim K^{{{top_ref:.2f}}}$. The mean Phase-I rate falls with "
    f"$K$ at slope {slope_rate_K:.2f} (top octave {top_rate:.2f}; paper: $-1$).\n\n"
    "Cross/own ratio $|q_{k,k'}|/q_k$ at the end of Phase I: " + ", ".join(f"{v:.2f}" for v in sweep.cross_ratio.tolist())
    + f" ($1/K$ = {1 / scfg.K:.2f})."))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Phase-I duration $T^1$ of the theory model (a) against $L$ for three $\\eta$, (b) against $K$ with the references $(K-1)\\log K$ and $K\\log K$, (c) against $\\Delta$ with the step divided by $\\|v\\|^4$ (at the paper's step of Eq. (8) the durations fall like $\\Delta^{-6}$). Not a figure of the paper.", "name": "fig-nl-sweeps"}, "image": {"alt": "Log-log plots: T1 falls like L^-2 and, at the step divided by the fourth power of the feature norm, like Delta^-2; against K it grows faster than both references."}}
nlfig.show(nlfig.sweep_figure(sweep, dict(L=slopes_L, K=slope_K, KlogK=slope_KlogK, Kref=slope_ref, D=slope_D, D_raw=slope_D_raw)))

# %% tags=["hide-input"]
Kmax = int(Kg[-1])
# N >= K^3 where each sweep ran: the L, eta and Delta grids at N, the K sweep at N = max(N, 2 K^3)
n_ok = scfg.N >= scfg.K**3
n_ok_K = all(max(scfg.N, 2 * k**3) >= k**3 for k in scfg.K_grid)
# rule 4: the K-dependence over three seeds (seeds 1 and 2 redraw every prompt of the sweep)
sweeps_K = [sweep] + [full(nl.run_sweep, scfg.replace(seed=sd)) for sd in (1, 2)]
top_T1_seeds = [metrics.loglog_slope(Kg[top], sw.T1_K[top]) for sw in sweeps_K]
top_g0_seeds = [metrics.loglog_slope(Kg[top], sw.rate_K[top]) for sw in sweeps_K]
ledger["C6"].measure(
    {"first-step rate g_k(0) against L, log-log slope": slope_rate,
     "|q_(k,kp)| / q_k at the end of Phase I (1/(K-1) by the row-sum identity, not counted)": sweep.cross_ratio.tolist(),
     "first-step rate g_k(0) against K, top-octave log-log slope": criteria.median_of(top_g0_seeds),
     "per seed": top_g0_seeds,
     "Phase-I mean rate q_k(T^1)/(eta T^1) against K, top-octave slope (seed 0; the T^1 of C7b, not counted)": top_rate},
    how=f"exact first-step g_k(0) over the L grid; g_k(0) over K in {list(scfg.K_grid)}, top octave K = {Kmax // 2}..{Kmax}, "
        f"{len(sweeps_K)} seeds (the same runs as C7b, another quantity: the rate at t = 1 of Phase I, not its duration)",
    hypotheses={"N >= K^3": n_ok and n_ok_K})
ledger["C7a"].measure(
    {"slope of T^1 in L, per eta": slopes_L, "slope of T^1 in eta": slope_eta},
    how=f"exact GD, L grid {list(scfg.L_grid)} x eta grid {list(scfg.eta_grid)} in one batched run", hypotheses={"N >= K^3": n_ok})
# the same top octave with M_big prompts: with M = 150 prompts and K = 32 each feature is the query of
# about 5 prompts, and T^1 waits for the features whose sampled query share is smallest; M_big prompts
# bring the sample loss close to the population loss the theorem is about
M_big = icl_lab.by_scale(ci=500, paper=3000)
T1_big = [[float(full(nl._phase1, scfg.replace(M=M_big, seed=sd), Kk, max(scfg.N, 2 * Kk**3), scfg.delta, scfg.L_ref,
                      scfg.eta_ref, M_big, direct=True, _keep=("T1",))["T1"][0]) for Kk in Kg[top].int().tolist()]
          for sd in range(3)]
top_T1_big = [metrics.loglog_slope(Kg[top], torch.tensor(T)) for T in T1_big]
display(Markdown(f"With {M_big} prompts instead of {scfg.M}, $T^1$ at $K = {Kmax // 2}, {Kmax}$ is "
                 + "; ".join(f"{T[0]:.0f}, {T[1]:.0f}" for T in T1_big) + f" steps (three prompt sets; {scfg.M} prompts, seed 0: "
                 f"{sweep.T1_K[top[0]]:.0f}, {sweep.T1_K[top[1]]:.0f}): the top-octave slope minus that of $(K-1)\\log K$ is "
                 + ", ".join(f"{v - top_ref:.2f}" for v in top_T1_big) + f" (with {scfg.M} prompts: "
                 + ", ".join(f"{v - top_ref:.2f}" for v in top_T1_seeds) + ")."))
# the population limit (the expected loss of Eq. 7, N -> infinity: balanced counts): only second moments of the task
# values enter the gradient, so K prompts with query v_1 and values sqrt(K) e_j represent it exactly (the other query
# features follow by symmetry; lr / K restores p_k = 1/K); T^1 in units of eta x steps, the step set to make it ~300 steps
LEVELS = {"Attn = K/(2K-1) (Lemma 5: q_k - q_(k,m) = log K)": nl.phase1_level, "Attn = 0.9 (a fixed level)": lambda K: 0.9}


def T1_population(K):
    """T^1 at each level of LEVELS (eta x steps)."""
    V, eye = nl.make_features("orth", K, K, scfg.delta), torch.eye(K, dtype=F64)
    fp = th.FeaturePrompts(torch.ones(K, K, dtype=F64), math.sqrt(K) * eye, torch.zeros(K, dtype=torch.long), math.sqrt(K) * eye[:, 0])
    lr = 2e-4 * K**2  # ~ T^1 / 300 (T^1 grows like K^2 here)
    own = th.feature_gd(fp, V @ V.T, steps=1500, lr=lr / K, record_every=1500, with_maps=False).own
    return [float(metrics.first_crossing(own, lv(K))[0]) * lr for lv in LEVELS.values()]


def T1_population_reduced(K, steps=1500):
    """The same dynamics by symmetry: query v_1's own weight q_0 and one cross weight q_c (the K - 1 are equal),
    Gamma_(1,m) = A_m (A_m - 1{m = 1} - |A|^2 + A_1): the cost of K = 512 is that of K = 2."""
    s4, lr, q0, qc, own = (scfg.delta**2 / 2) ** 2, 2e-4 * K**2, 0.0, 0.0, []
    for _ in range(steps + 1):
        a0, ac = 1 / (1 + (K - 1) * math.exp(qc - q0)), 1 / (math.exp(q0 - qc) + K - 1)
        own.append(a0)
        sq = a0**2 + (K - 1) * ac**2
        q0, qc = q0 - lr / K * s4 * a0 * (2 * a0 - 1 - sq), qc - lr / K * s4 * ac * (ac - sq + a0)
    own = torch.tensor(own, dtype=F64)[:, None]
    return [float(metrics.first_crossing(own, lv(K))[0]) * lr for lv in LEVELS.values()]


K_pop = [8, 16, 32, 64, 128, 256, 512]
T1_pop = torch.tensor([T1_population(k) for k in K_pop[:-1]] + [T1_population_reduced(K_pop[-1])], dtype=F64)  # (n_K, level)
reduced_gap = float((torch.tensor(T1_population_reduced(256), dtype=F64) - T1_pop[K_pop.index(256)]).abs().max())
Kp = torch.tensor(K_pop, dtype=F64)
excess_pop = {lv: [metrics.loglog_slope(Kp[i:i + 2], T1_pop[i:i + 2, j]) - metrics.loglog_slope(Kp[i:i + 2], ((Kp - 1) * Kp.log())[i:i + 2])
                   for i in range(len(K_pop) - 1)] for j, lv in enumerate(LEVELS)}
LV0 = next(iter(LEVELS))
display(Markdown("In the population limit the excess slope of $T^1$ over $(K-1)\\log K$ on the octaves " + ", ".join(
    f"{a}→{b}: {e:.2f}" for a, b, e in zip(K_pop, K_pop[1:], excess_pop[LV0])) + " (at the level 0.9: " + ", ".join(
    f"{e:.2f}" for e in excess_pop["Attn = 0.9 (a fixed level)"][1:]) + f" from 16→32; with {M_big} prompts, {Kmax // 2}→{Kmax}: "
    + ", ".join(f"{v - top_ref:.2f}" for v in top_T1_big) + f"). $K = 512$ runs the two-weight symmetric reduction of the same "
    f"dynamics, which equals the library's GD at $K = 256$ to {reduced_gap:.0e}."))
ledger["C7b"].measure(
    {"T^1 against K (seed 0)": [int(v) for v in sweep.T1_K.tolist()],
     f"top-octave slope of T^1 minus that of (K-1) log K, {scfg.M} prompts, per seed (noisy, not counted)":
         [round(v - top_ref, 3) for v in top_T1_seeds],
     f"the same with {M_big} prompts at K = {Kmax // 2}..{Kmax}, per seed (not counted)": [round(v - top_ref, 3) for v in top_T1_big],
     "K_top": K_pop[-1],
     "finite_check": f"K = {Kmax // 2}..{Kmax}: population {excess_pop[LV0][K_pop.index(Kmax // 2)]:.2f}, "
                     f"{M_big} prompts {float(np.median([v - top_ref for v in top_T1_big])):.2f}",
     "excess_by_octave_09": ", ".join(f"{a}->{b}: {e:.2f}" for a, b, e in zip(K_pop, K_pop[1:], excess_pop["Attn = 0.9 (a fixed level)"])
                                      if math.isfinite(e))},
    under={lv: {"top-octave slope of T^1 minus that of (K-1) log K": ex[-1],
                "excess_by_octave": ", ".join(f"{a}->{b}: {e:.2f}" for a, b, e in zip(K_pop, K_pop[1:], ex) if math.isfinite(e))}
           for lv, ex in excess_pop.items()},
    how=f"population dynamics (expected loss, balanced counts), K in {K_pop}, end of Phase I at Attn_k = K/(2K-1) and at 0.9; decided on "
        f"the top octave K = {K_pop[-2]}..{K_pop[-1]}; shown: exact GD on training sets, K in {list(scfg.K_grid)}, N = max(100, 2K^3), "
        f"{scfg.M} and {M_big} prompts; reference (K-1) log K (the paper's rate integrated to that level)",
    # True by construction: the decided population limit has N -> infinity (the shown sweeps have N = max(100, 2 K^3))
    hypotheses={"N >= K^3": True})
ETA_Q, ETA_8 = "the step scaled by ||v||^4 (eta of Sec. 5.1's update of q)", "the step of Eq. (8) as written (eta on Q)"
ledger["C13"].measure(
    {"slope_at_the_step_of_Eq_8": slope_D_raw},
    under={ETA_Q: {"T^1 against Delta": sweep.T1_delta.tolist(), "slope of T^1 in Delta": slope_D},
           ETA_8: {"T^1 against Delta": (sweep.T1_delta * sweep.eta_delta / scfg.eta_ref).tolist(), "slope of T^1 in Delta": slope_D_raw}},
    how=f"exact GD, Delta in {list(scfg.delta_grid)}, v_k = Delta/sqrt2 e_k; at fixed eta the steps are converted by T ~ 1/eta (R1)",
    hypotheses={"N >= K^3": n_ok})

# %% tags=["remove-cell"]
assert reduced_gap < 1e-9
assert all(abs(s + 2) < 0.25 for s in slopes_L) and bool((sweep.T1_delta[1:] <= sweep.T1_delta[:-1]).all())

# %% [markdown]
# The $K$-dependence is sensitive to the number $M$ of training prompts. With $M = 150$ and $K = 32$
# each feature is the query of about five prompts, and $T^1$ (the mean own attention reaching its level)
# waits for the features whose sampled share of queries is smallest: the top-octave slope changes a lot
# from one prompt set to the next. With $M = 3000$ the training loss is close to the population loss
# that Prop. 2 is about, and the three prompt sets agree; but at $K\le 32$ the excess slope over
# $(K-1)\log K$ sits at the edge of our tolerance. The population dynamics (the expected loss, balanced
# counts: only second moments of the task values enter the gradient, so a handful of prompts represents
# them exactly) extend $K$ to 256 in seconds, and to 512 by their two-weight symmetric reduction, and agree with the 3000-prompt runs where both exist: the
# excess slope keeps growing, because $T^1\sim K(K-1)(1 + \mathcal O(\log K/K))$ — the first-step rate falls
# like $K^{-2}$ (C6), not $K^{-1}$ — and the ledger decides Prop. 2's $K\log K$ on its top octave.

# %% [markdown]
# ### The threshold $L^*$ and the data collapse
#
# The paper's phase transition sits at $L^* = \Theta(1/(\Delta\delta))$ — $0.37$ for $\Delta = 3$,
# $\delta = \sqrt{20K/N}$. {prf:ref}`prop-nl-rescaling` says the theory model cannot know about it:
# plotted against $\eta L^2 t$, the normalised loss $\mathcal L/L^2$ of *every* $(L,\eta)$ run lies on one
# curve. The runs deviate only where $\eta L^2 s^4$ is so large that the first discrete step
# overshoots the continuous-time curve — a step-size effect, visible at the right of the grid
# whatever $L^*$ is.

# %% tags=["hide-input"]
info = th.threshold_scale(scfg.K, scfg.N, scfg.delta)
# quantify the collapse: interpolate each curve at common rescaled times, among runs whose first
# step is small (eta L^2 s^4 <= 20)
s4 = (scfg.delta**2 / 2) ** 2
grid_x = torch.logspace(0, 2, 30, dtype=F64)
curves = []
for (Lv, e), (x, y) in sweep.collapse.items():
    if e * Lv**2 * s4 <= 20 and float(x[-1]) >= 100:
        curves.append(torch.from_numpy(np.interp(grid_x.numpy(), x.numpy(), y.numpy())))
curves = torch.stack(curves)
spread = float(((curves.max(0).values - curves.min(0).values) / curves.mean(0)).max())
display(Markdown(f"$L^* = 1/(\\Delta\\,\\delta_{{\\min}}) = {info['L_star']:.2f}$. Over the {len(curves)} runs with "
                 f"$\\eta L^2 s^4 \\le 20$ the rescaled curves stay within {spread:.1%} of each other (largest relative range)."))
ledger["C10"].measure(
    {"spread of the rescaled curves": spread, "runs compared": len(curves), "largest |Q(eta, L) - Q(eta L^2, 1)|": r1_q},
    how="exact GD over an L x eta grid spanning L* = %.2f; loss/L^2 against eta L^2 t, runs with eta L^2 s^4 <= 20. An "
        "analytic consequence of R1 (checks the code, cannot fail for the model): the paper's L* is a bound's bookkeeping"
        % info["L_star"])

# %% tags=["remove-cell"]
assert spread < 0.25

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Loss curves of every $(L, \\eta)$ run: raw (left) and as $\\mathcal L/L^2$ against $\\eta L^2 t$ (right), where they fall onto one curve. Not a figure of the paper.", "name": "fig-nl-collapse"}, "image": {"alt": "Left: separate loss curves; right: the same curves lying on top of each other."}}
nlfig.show(nlfig.collapse_figure(sweep))

# %% [markdown]
# **So the theory model has no threshold**: its entire $L$-dependence is a change of clock (the
# ledger files this collapse as a consistency check of R1: it cannot fail for this model). What the paper calls the sharp regime is GD with a large effective step $\eta L^2\|v\|^4$,
# where the first steps saturate the softmax at once, and its extra phase is the same slow tail that
# every run reaches (D10). The paper's own derivation (D8) locates $L^*$ in the bookkeeping of the final
# loss bound, not in the dynamics.

# %% [markdown]
# ## Claims ledger of this page
#
# Every checkable statement of the setup, derivations and the theory model's phases above, with its
# measurement at the current scale. The chapter continues with the late phase, Proposition 1 and
# the paper's figures on {doc}`the next page <nonlinear_experiments>`.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
_ = ledger.export()
