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
# # Softmax attention adapts to Lipschitzness, I: the window in theory
#
# {cite:t}`collins2024softmax` ask what a softmax attention unit *learns* when it is pretrained on
# in-context regression tasks. Their answer is a single number: the **scale of the attention
# window**. Pretraining turns softmax attention into a nearest-neighbour smoother whose window
# shrinks when the tasks change quickly (large Lipschitz constant $L$) or when there are many
# demonstrations (large $n$), and widens when the labels are noisy (large $\sigma$). Linear attention
# cannot do this: rescaling its matrix does not change the relative weights, and it pays an error of
# order $L^2$ whatever $n$ is. On low-rank tasks the window also learns a *direction*: it ignores the
# input directions along which the tasks do not change.
#
# This chapter has two parts. This first part works at the level of the **population loss**: it
# derives the kernel-smoother form, the bias–variance split and the hard-window heuristic, and checks
# Lemma B.5 and Theorems 3.4–3.6 and 4.4 numerically, using Monte-Carlo estimates of the two curves
# that determine everything, the signal and the noise term. The
# [second part](experiments.ipynb) trains attention units with Adam, as the paper does, and
# reproduces its figures. Chapter 1 ({doc}`../common_setup`) already showed the window on the circle
# for a hand-set $M=cI$; here $c$ is chosen by the loss.
#
# **A note on the source.** Several formulas of the paper are illegible in the text we have: most
# exponents in Lemmas C.4–C.6, D.1 and G.1 and in Theorems 3.4 and 3.5, and the numerator of the
# subspace metric of Figure 9. Where a formula below is *reconstructed* from the paper's own
# derivations it is marked **[R]**; a step that is ours and not the paper's is marked **[ours]**;
# everything else can be read in the paper.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.31, "book": 0.3, "paper": 0.37})

# %% tags=["hide-input"]
import functools
import math

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown

import icl_lab
from icl_lab import plotting, widgets
from icl_lab.data import PromptSampler, TwoReLUTask
from icl_lab.memo import full
from icl_lab.metrics import loglog_slope
from icl_lab.models import KernelAttention
from icl_lab.notebook import glue
from icl_lab.papers.window import checks, population
from icl_lab.papers.window import data as wdata
from icl_lab.papers.window import figures as WF
from icl_lab.papers.window import theory as WT
from icl_lab.papers.window import hard_window_loss, linear_attention_loss, optimal_window, window_curves
from icl_lab.render import md_table

SCALE, ledger = icl_lab.notebook.chapter("window", part="theory")
F64 = torch.float64
gen = icl_lab.make_generator

# %% [markdown]
# ## Setup in the paper's notation
#
# A task is a function $f:\mathbb R^d\to\mathbb R$ drawn from a distribution $D(\mathcal F)$. A
# context holds $n$ noisy demonstrations and a query,
# $x_1,\dots,x_{n+1}\overset{iid}\sim D_x$, $y_i=f(x_i)+\epsilon_i$ with
# $\epsilon_i\sim\mathcal N(0,\sigma^2)$, embedded as the token matrix (eq. 1)
#
# $$
# Z=\begin{bmatrix} x_1 & \cdots & x_n & x_{n+1}\\ f(x_1)+\epsilon_1 & \cdots & f(x_n)+\epsilon_n & 0\end{bmatrix}
# \in\mathbb R^{(d+1)\times(n+1)} .
# $$
#
# The inputs lie on the unit sphere, $D_x=\mathcal U^d$ (uniform on $S^{d-1}$). The task classes
# (Definition 3.2) share a Lipschitz constant $L$: **affine**
# $f(x)=l\,w^\top x+b$ and **2-ReLU** $f(x)=l_1(w^\top x)_++l_2(-w^\top x)_++b$, with
# $w\sim\mathcal U^d$ and $b,l,l_1,l_2\sim\mathrm{Unif}[-L,L]$. The experiments add
# $f(x)=\cos(L\,w^\top x)$. The model is one softmax attention head (ATTN)
#
# $$
# h_{SA}(z_i)=\frac{\sum_j (W_V z_j)\,e^{(W_K z_j)^\top W_Q z_i}}{\sum_j e^{(W_K z_j)^\top W_Q z_i}},
# $$
#
# whose prediction for the query is the last entry of $h_{SA}(z_{n+1})$, and the pretraining loss is
# $\mathcal L=\mathbb E\big(h_{SA}(z_{n+1})_{d+1}-f(x_{n+1})\big)^2$ (eq. 3): squared error against the
# **noiseless** label, with no factor $\tfrac12$. All losses in this chapter use that convention.

# %% [markdown]
# ## Derivations
#
# ### Derivation 1: from a transformer head to a kernel smoother
#
# The paper reparametrises the head (eq. 4): $W_V$ is zero except its $(d{+}1,d{+}1)$ entry, which is 1;
# $W_K$ and $W_Q$ carry $d\times d$ blocks $M_K,M_Q$ and zeros in their last row and column. Then
# $(W_Kz_j)^\top W_Qz_i=x_j^\top M_K^\top M_Q x_i$ and, with $M:=M_K^\top M_Q$ and the sum running
# over the $n$ labelled tokens (the query token carries no label and is not attended to),
#
# $$
# \mathcal L(M)=\mathbb E\Bigg(\frac{\sum_{i=1}^n (f(x_i)+\epsilon_i)\,e^{x_i^\top Mx_{n+1}}}{\sum_{j=1}^n e^{x_j^\top Mx_{n+1}}}-f(x_{n+1})\Bigg)^2 . \tag{ICL}
# $$
#
# ```{prf:lemma} Lemma B.1 (no value leak)
# :label: win-lemma-b1
#
# If $f$ and $-f$ are equally likely, every minimiser of the loss has $W_V$'s last column equal to
# $(0,\dots,0,c)^\top$: the value map does not leak the inputs into the prediction.
# ```
#
# ```{prf:proof}
# With last column $(v,c)$ the prediction is $\sum_i a_i\big(c(f(x_i)+\epsilon_i)+v^\top x_i\big)$.
# Couple $(f,\epsilon)$ with $(-f,-\epsilon)$: with $A=\sum_ic\,a_if(x_i)-f(x_{n+1})$,
# $B=\sum_ia_iv^\top x_i$ and $C=\sum_ic\,a_i\epsilon_i$ the loss is
# $\tfrac12\mathbb E[(A+B+C)^2+(-A+B-C)^2]=\mathbb E(A+C)^2+\mathbb EB^2\ge\mathbb E(A+C)^2$, the loss at $v=0$.
# ```
#
# The next cell builds the full $(d{+}1)\times(d{+}1)$ matrices of eq. (4), evaluates (ATTN) on token
# matrices, and compares it with the library's `KernelAttention` (which reads $x$ and $y$ directly);
# it then measures the loss with a value leak $v\ne0$.

# %%
d, n = 3, 12
sampler = PromptSampler.from_inputs(wdata.sphere_inputs(d), TwoReLUTask(d, 1.0), N=n, num_queries=1, sigma=0.1)
batch = sampler.sample(4000, gen(0))  # 4000 contexts
Mk = torch.randn(d, d, generator=gen(1), dtype=F64)
Mq = torch.randn(d, d, generator=gen(2), dtype=F64)
Z = batch.embedding().transpose(-1, -2)  # (B, d+1, n+1): tokens are columns
WK = torch.zeros(d + 1, d + 1, dtype=F64)
WQ = torch.zeros(d + 1, d + 1, dtype=F64)
WV = torch.zeros(d + 1, d + 1, dtype=F64)
WK[:d, :d], WQ[:d, :d], WV[d, d] = Mk, Mq, 1.0  # eq. (4)
head = WT.attention_head(Z, WK, WQ, WV)[:, d]  # (ATTN) on the token matrices

model = KernelAttention(d, runs=1, tied=False).to(dtype=F64)  # the library's head, on x and y
with torch.no_grad():
    model.M_K.copy_(Mk[None])
    model.M_Q.copy_(Mq[None])
    lib = model(batch).pred[0, :, 0]
# the loss with a value leak v of size |v| (Lemma B.1)
leak = {s: WT.value_leak_loss(Z, WK, WQ, WV, s * torch.ones(d) / math.sqrt(d), batch.y_query[:, 0]) for s in (0.0, 0.3, 0.6)}

# %% tags=["remove-input"]
head_gap = float((head - lib).abs().max())
glue("win-head-gap", head_gap)
glue("win-head-n", Z.shape[0])
glue("win-leak", Markdown(", ".join(f"{v:.3f} at $|v| = {s:g}$" for s, v in leak.items())))
checked = ledger.judge(checks.head_and_leak(head, lib, leak))
assert head_gap < 1e-12 and leak[0.0] < leak[0.3] < leak[0.6]

# %% [markdown]
# The head with the weights of eq. (4) and the library's `KernelAttention` agree to
# {glue:text}`win-head-gap:.0e` (largest difference over {glue:text}`win-head-n` contexts). A value leak $v$ only raises
# the loss: {glue:md}`win-leak:myst`.

# %% [markdown]
# ### Derivation 2: softmax attention is a Nadaraya–Watson smoother on the sphere
#
# On the unit sphere $x_i^\top x=1-\tfrac12\lVert x_i-x\rVert^2$, so $M=cI$ gives weights
# $\propto e^{-(c/2)\lVert x_i-x\rVert^2}$: the Nadaraya–Watson estimator with the Gaussian kernel
# $e^{-\lVert x-x'\rVert^2/h}$ and bandwidth $h=2/c$ (checked in Chapter 1, claim S1). The paper
# writes both $M=w_{KQ}I$ and eq. (9) with $e^{-w_{KQ}\lVert\cdot\rVert^2}$, which differ by this
# factor 2. **This chapter reports $c=\lVert M\rVert$; the paper's $w_{KQ}$ is $c/2$.** Exponents do
# not care; the thresholds $w\ge(d+\sqrt d)/2$ of the lemmas become $c\ge d+\sqrt d$.
#
# The *attention window* is the set of demonstrations with non-negligible weight,
# $\lVert x_i-x\rVert\lesssim 1/\sqrt{w_{KQ}}$. The two extremes of Remark 2.1: constant tasks want
# $M=0$ (a uniform average of all labels, the widest window); rapidly changing tasks want
# $M\to\infty$ (the nearest neighbour only). Linear attention, $h_{LA}(x)=\sum_i y_i\,x_i^\top Mx$
# (Remark 2.2), has no normalisation: scaling $M$ scales the prediction and leaves the *relative*
# weights unchanged, so it has no window to adapt.
#
# ### Derivation 3: the bias–variance split and the two curves that determine everything
#
# The noise is independent of everything else, so the cross term vanishes (App. B.1):
#
# $$
# \mathcal L(c)=\underbrace{\mathbb E\Big(\sum_i a_i\,f(x_i)-f(x_{n+1})\Big)^2}_{\mathcal L_{\rm signal}(c)}
# +\underbrace{\sigma^2\,\mathbb E\sum_i a_i^2}_{\mathcal L_{\rm noise}(c)},\qquad
# a_i=\frac{e^{c\,x_i^\top x_{n+1}}}{\sum_je^{c\,x_j^\top x_{n+1}}} .
# $$
#
# $\mathbb E\sum_ia_i^2 = \mathbb E\,g_0(2w)/g_0(w)^2$ with $g_p(r)=\sum_i\lVert x_i-x\rVert^pe^{-r\lVert x_i-x\rVert^2}$
# is an effective inverse sample size: $1/n$ for the uniform window, $1$ for a single neighbour.
# For the affine and 2-ReLU classes, $f$ at Lipschitz constant $L$ is distributed as $L$ times $f$ at
# $L=1$, so with $S_n(c)$ the signal term at $L=1$ and $N_n(c)=\mathbb E\sum_ia_i^2$
# (**[ours]**):
#
# $$
# \mathcal L(c;L,\sigma)=L^2S_n(c)+\sigma^2N_n(c) ,
# $$
#
# and the optimal window depends on $(L,\sigma)$ only through $L/\sigma$. `window_curves` estimates
# $S_n$ and $N_n$ once on a grid of $c$, every grid point seeing the same tasks, inputs and queries
# (common random numbers), which makes the curves smooth enough to locate their minimum. The cell
# checks the split against a direct simulation with noise drawn, and the homogeneity exactly.

# %%
c_chk = torch.tensor([0.0, 2.0, 8.0, 30.0], dtype=F64)
sig = 0.3
cur1 = window_curves(TwoReLUTask(d, 1.0), wdata.sphere_inputs(d), n, c_chk, tasks=3000, generator=gen(5))
cur2 = window_curves(TwoReLUTask(d, 2.0), wdata.sphere_inputs(d), n, c_chk, tasks=3000, generator=gen(5))
split = cur1.loss(1.0, sig)  # S_n(c) + sigma^2 N_n(c)
# direct simulation: the same sampler with noise, loss of M = cI
noisy = PromptSampler.from_inputs(wdata.sphere_inputs(d), TwoReLUTask(d, 1.0), N=n, num_queries=4, sigma=sig).sample(20_000, gen(6))
direct = torch.stack([((torch.softmax(c * noisy.x_query @ noisy.x.transpose(-1, -2), -1) @ noisy.y.unsqueeze(-1))[..., 0]
                       - noisy.y_query).pow(2).mean() for c in c_chk])

# %% tags=["remove-input"]
dec = checks.decomposition(cur1, cur2, direct, sig, n)
z_split = checks.split_deviation(cur1, direct, sig, 20_000)
homog_gap = dec[1].quantities["max |S(L=2) - 4 S(L=1)| / S(L=2)"]
glue("win-dec-table", Markdown(md_table(["$c$", "direct simulation with noise", "$S_n(c) + \\sigma^2 N_n(c)$"],
                                        [[f"{c:g}", f"{a:.4f}", f"{b:.4f}"] for c, a, b in zip(c_chk.tolist(), direct.tolist(), split.tolist())])))
glue("win-dec-z", float(z_split.max()))
glue("win-dec-hom", "exactly" if homog_gap == 0 else f"to {homog_gap:.0e} (relative)")
glue("win-dec-n0", float(cur1.noise[0]))
glue("win-dec-1n", 1 / n)
checked = ledger.judge(dec)
assert z_split.max() < 4 and homog_gap < 1e-10

# %% [markdown]
# ```{glue:md} win-dec-table
# :format: myst
# ```
#
# The two columns differ by at most {glue:text}`win-dec-z:.1f` standard errors; $S(L{=}2) = 4\,S(L{=}1)$
# holds {glue:text}`win-dec-hom`; $N_n(0) =$ {glue:text}`win-dec-n0:.4f` and $1/n =$ {glue:text}`win-dec-1n:.4f`.

# %% [markdown]
# ### Figure 2: the bias–variance picture, drawn from simulation
#
# The paper's Figure 2 is a schematic. Here it is measured: one fixed task on the circle (the cosine
# $f(\theta)=\cos(\nu\,\mathrm{wrap}(\theta-b))$ with $\nu=3$, Part II's "frequency reading" of the
# Figure 1 formula), one fixed query, and thousands of independent
# noisy contexts. For each window scale $c$ the softmax estimate has a mean (its bias is the distance
# to the true label) and a spread (its variance). Shrinking the window (larger $c$) removes bias and
# adds variance.

# %%
bv_cfg = population.BiasVarianceConfig.for_scale(SCALE)  # one task, one query, many noisy contexts
bv = full(population.run_bias_variance, bv_cfg)

# %% mystnb={"figure": {"caption": "The bias\u2013variance trade-off measured: one fixed cosine task $\\cos(3\\,\\mathrm{wrap}(\\theta-b))$ and query on the circle, the window of {glue:text}`win-bv-nc` scales $c$ (shaded), one noisy context, and the estimate's mean \u00b1 std over many contexts; bottom right: squared bias and variance against $c$. Reproduces the schematic Fig. 2 of Collins et al. from simulation.", "name": "fig-win-bias-variance"}, "image": {"alt": "Three panels with shrinking windows around the query: the estimate moves onto the true label while its spread grows; the last panel shows bias falling and variance rising with c."}}
plotting.finish(WF.bias_variance(bv))

# %% tags=["remove-input"]
glue("win-bv-nc", len(bv_cfg.c_values))
checked = ledger.judge(checks.bias_variance(bv))
b2, vv = bv.bias2[:len(bv_cfg.c_values)], bv.var[:len(bv_cfg.c_values)]
assert (b2[1:] < b2[:-1]).all() and (vv[1:] > vv[:-1]).all()

# %% [markdown]
# ### Derivation 4: the hard-window heuristic (Sec. 3.1)
#
# Replace the exponential weights by a **hard window**: the uniform average of the labels with
# $\lVert x_i-x\rVert\le w^{-1/2}$. Three estimates give the optimal scale:
#
# * *bias.* The demonstrations inside the cap concentrate near its rim (for large $d$); the centre
#   of mass of a ring of radius $w^{-1/2}$ on the sphere lies $O(1/w)$ inside it, so for an affine
#   task the squared bias is $O(L^2/w^2)$; for a general $L$-Lipschitz task only the bound
#   $O(L^2\cdot\text{radius}^2)=O(L^2/w)$ is available.
# * *count.* The cap holds $\approx n\,w^{-d/2}$ demonstrations (the paper's convention; the cap's
#   measure on $S^{d-1}$ is really $\propto w^{-(d-1)/2}$, see Derivation 6). This needs the cap to
#   hold at least one point, $w\lesssim n^{2/d}$.
# * *variance.* Averaging $k$ noisy labels leaves $\sigma^2/k\approx\sigma^2w^{d/2}/n$.
#
# Minimising $\frac{L^2}{w}+\frac{\sigma^2w^{d/2}}n$ gives
# $w^\star\propto(nL^2/\sigma^2)^{2/(d+2)}=\Lambda^{2/(d+2)}$, $\Lambda:=nL^2/\sigma^2$ (the exponent
# of the paper's display is garbled; balancing its stated terms gives $2/(d+2)$ **[R]**). With the
# affine bias $L^2/w^2$ the same balance gives $\Lambda^{2/(d+4)}$. With the intrinsic dimension
# $m=d-1$ of the sphere in the count, $d$ becomes $d-1$: $2/(d+1)$ and $2/(d+3)$. The cell computes the
# hard-window loss by Monte Carlo for the affine and 2-ReLU classes in $d=3$ and fits the optimal
# $w$ against $\Lambda$.

# %%
hw_n = 2000 if SCALE == "paper" else 800
hw_grid = wdata.log_grid(1.0, 400.0, 36)
hw_tasks = 600 if SCALE == "paper" else 250
hard = {cls: hard_window_loss(wdata.make_task(cls, 3, 1.0), wdata.sphere_inputs(3), hw_n, hw_grid, tasks=hw_tasks, generator=gen(7),
                              chunk=100)
        for cls in ("affine", "relu")}

# %%
hw_sig = torch.logspace(-1.3, -0.2, 8).tolist()
hw_fit = {}  # class -> fitted exponent of w* in Lambda = n L^2 / sigma^2
for cls, cur in hard.items():
    lam, ws = [], []
    for s in hw_sig:
        wst, _, interior = optimal_window(cur, 1.0, s)
        if interior:
            lam.append(hw_n / s**2)
            ws.append(wst)
    hw_fit[cls] = loglog_slope(lam, ws)

# %% tags=["remove-cell"]
glue("win-hw-n", hw_n)
glue("win-hw-table", Markdown(md_table(
    ["tasks", "fitted exponent", "heuristic with $d$", "heuristic with $d - 1$"],
    [["affine", f"{hw_fit['affine']:.2f}", f"$2/(d+4) = {2 / 7:.2f}$", f"$2/(d+3) = {2 / 6:.2f}$"],
     ["2-ReLU", f"{hw_fit['relu']:.2f}", f"$2/(d+2) = {2 / 5:.2f}$", f"$2/(d+1) = {2 / 4:.2f}$"]])))

# %% [markdown]
# Hard window, $d = 3$, $n =$ {glue:text}`win-hw-n`: fitted exponent of $w^\star$ in $\Lambda$.
#
# ```{glue:md} win-hw-table
# :format: myst
# ```

# %% [markdown]
# The fitted exponents are positive and of the heuristic's size: the hard window shrinks as a power of
# $\Lambda$. The heuristic is only a guide (its constants and the rim approximation are crude), so we
# record it as an illustration rather than a claim; the theorem below is about the true softmax loss.
#
# ### Derivations 5–9: isotropy, caps, and the signal and noise bounds
#
# **Derivation 5 (Lemma B.5, why $M^\star$ is isotropic).** Whiten so that $x\sim\mathcal U^d$. Write
# $2x_i^\top Mx=\lVert x_i\rVert^2+\lVert Mx\rVert^2-\lVert x_i-Mx\rVert^2$ (eq. 7): the weights
# are a Gaussian kernel centred at $y'=Mx$ rather than at the query $y=x$. Replace $M$ by a radial map
# $w(y)=\lVert My\rVert\,y$ that keeps each query's scale but centres its kernel on the query itself
# (Figure 6). The loss has three terms: $\mathbb Ef(y)^2$ is unchanged; the squared prediction is
# unchanged by rotating the demonstrations (rotational symmetry of $\{x_i\}$ and of the class,
# Assumption B.4(3)); the cross term $\mathbb E f(y)\sum_i a_if(y_i)$ can only grow, by the
# rearrangement inequality (Lemma I.2), because the correlation $\rho(x^\top y)=\mathbb E f(x)f(y)$ is
# increasing (Assumption B.4(2); for the affine class $\rho(t)=\frac{L^2}{3d}t+\frac{L^2}3$ **[R]**).
# So a kernel centred on the query is better, and the best such $M$ is a multiple of $I$.
#
# The cell checks the consequence at the population level: perturbing $M=c^\star I$ in a random
# traceless symmetric direction, $M=c^\star(I+\varepsilon D)$, raises the loss for either sign of
# $\varepsilon$ (the training check, from an anisotropic start, is in Part II).

# %%
iso_d, iso_n, iso_sig = 5, 20, 0.1
c_iso = wdata.log_grid(0.5, 60.0, 40)
base = window_curves(TwoReLUTask(iso_d, 1.0), wdata.sphere_inputs(iso_d), iso_n, c_iso, tasks=3000, generator=gen(8))
c_star_iso = optimal_window(base, 1.0, iso_sig)[0]
Dm = torch.randn(iso_d, iso_d, generator=gen(9), dtype=F64)  # a random traceless symmetric D, ||D|| = 1
Dm = Dm + Dm.T
Dm = Dm - torch.trace(Dm) / iso_d * torch.eye(iso_d, dtype=F64)
Dm = Dm / torch.linalg.matrix_norm(Dm, ord=2)

# %%
eps_grid = [-0.4, -0.2, 0.0, 0.2, 0.4]
pert = []  # the loss of M = c*(I + eps D), same tasks and inputs at every eps
for e in eps_grid:
    cur = window_curves(TwoReLUTask(iso_d, 1.0), wdata.sphere_inputs(iso_d), iso_n, [c_star_iso], tasks=3000, generator=gen(8),
                        metric=torch.eye(iso_d, dtype=F64) + e * Dm)
    pert.append(float(cur.loss(1.0, iso_sig)[0]))

# %% tags=["remove-input"]
glue("win-iso-c", float(c_star_iso))
glue("win-iso-table", Markdown(md_table(["$\\varepsilon$", *[f"{e:g}" for e in eps_grid]], [["loss", *[f"{v:.5f}" for v in pert]]])))
checked = ledger.judge(checks.isotropy(pert, eps_grid, iso_d, iso_n, iso_sig))
i0 = eps_grid.index(0.0)
assert all(pert[i] > pert[i0] for i in range(len(eps_grid)) if i != i0)

# %% [markdown]
# At $c^\star =$ {glue:text}`win-iso-c:.2f`, the loss of $M = c^\star(I + \varepsilon D)$:
#
# ```{glue:md} win-iso-table
# :format: myst
# ```

# %% [markdown]
# **Derivation 6 (caps and $g_p$, App. G).** The normalised measure of the cap
# $\{x':x'^\top x>1-\epsilon\}$ on $S^{d-1}$ is between $(2\epsilon-\epsilon^2)^{(d-1)/2}/\sqrt{2d\pi}$
# and $(2\epsilon)^{(d-1)/2}$ (Lemma G.1; exponents **[R]**, garbled). Counting points in shells with
# Chernoff bounds (Lemma G.4) gives, with probability $1-1/n$,
# $g_p(r)=\Theta\big(n\,r^{-(d+p)/2}\big)$ for $r\ge(d+\sqrt d)/2$ (Corollary G.5) in the paper's
# convention. Because the sphere has intrinsic dimension $d-1$, the measured power is
# $r^{-(d-1+p)/2}$: the paper's lemmas use "$d$" for the sphere's dimension loosely (Lemma G.1 calls
# $S_{d-1}$ "the $d$-dimensional hypersphere"). The slope fits below settle which exponent the data
# follow.
#
# **Derivation 7 (affine signal, Lemmas C.4–C.5).** With $\hat x=\sum_ia_ix_i$ and weights summing to
# one, $\sum_ia_if(x_i)-f(x)=l\,w^\top(\hat x-x)$: the intercept cancels. Since
# $\mathbb El^2=L^2/3$ and $\mathbb Eww^\top=I/d$,
#
# $$
# \mathcal L_{\rm signal}=\frac{L^2}{3d}\,\mathbb E\lVert x-\hat x\rVert^2
# =\frac{L^2}{3d}\Big(\underbrace{\mathbb E(1-x^\top\hat x)^2}_{\text{radial}}+\underbrace{\mathbb E\lVert\hat x-(x^\top\hat x)x\rVert^2}_{\text{tangential}}\Big) \quad\text{(eq. 10)}.
# $$
#
# The radial part is $\big(g_2/(2g_0)\big)^2=O(1/w^2)$ (eq. 11): the bias. The tangential part is
# $\le g_2(2w)/g_0(w)^2$ by Popoviciu's inequality (eq. 12): a variance caused by the random
# positions of the demonstrations. In the paper's convention ($g_p(r)\propto r^{-(d+p)/2}$) this is
# $O(w^{d/2-1}/n)$; with the sphere's intrinsic dimension (Derivation 6, confirmed by the noise fit
# below) it is $O(w^{(d-3)/2}/n)$. Together (Corollary C.6, **[R]**, corrected convention):
# $L^2\,\Omega\big(\tfrac1{(w+1)^2}\big)\le\mathcal L_{\rm signal}\le L^2\,O\big(\tfrac1{w^2}+\tfrac{w^{(d-3)/2}}n+\tfrac1n\big)$
# (the paper's display has $w^{d/2-1}$ in place of $w^{(d-3)/2}$).
#
# **Derivation 8 (2-ReLU signal, Lemmas C.8–C.9).** Any $L$-Lipschitz task has
# $|\sum_ia_i(f(x_i)-f(x))|\le L\,g_1/g_0=O(L/\sqrt w)$, so $\mathcal L_{\rm signal}=O(L^2(1/w+1/n))$;
# always $\le4L^2$ (Lemma C.2: $|f(x_i)-f(x)|\le2L$ on the sphere). For the lower bound, couple each
# 2-ReLU task with the affine piece active on the query's half-space and use $(S-a)^2+a^2\ge S^2/2$:
# the 2-ReLU signal is at least half the affine one (C.9). A kink at the hinge adds squared bias
# $O(L^2h^2)$ on an $O(h)$ fraction of queries, $h=c^{-1/2}$, so we expect a slope near $-3/2$
# **[ours]**, between the bounds' $-1$ and $-2$.
#
# **Derivation 9 (noise, Lemmas D.1–D.2).**
# $\mathcal L_{\rm noise}=\sigma^2\,\mathbb E\,g_0(2w)/g_0(w)^2$, and Corollary G.5 at $r=w,2w$ gives
# $\sigma^2\,\Theta(w^{d/2}/n)$ for $d+\sqrt d\le w\le(n/(45\sqrt d\log n))^{2/d}$ **[R]** as printed;
# with the intrinsic dimension of the sphere the same computation gives
# $\sigma^2\,\Theta(w^{(d-1)/2}/n)$ (the claim T-D1 below measures which one holds); always
# $0\le\mathcal L_{\rm noise}\le\sigma^2$. Lemma D.2: the noise term increases with $w$ (rearrangement,
# Lemma I.3).
#
# The cell estimates the curves at large $n$ in $d=3$, where the two conventions differ most
# visibly ($(d-1)/2=1$ against $d/2=1.5$).

# %%
pl_cfg = population.PowerLawConfig.for_scale(SCALE)
pl = full(population.run_power_laws, pl_cfg)  # the signal and noise curves of both classes

# %% mystnb={"figure": {"caption": "Left: the signal term at $L=1$ against the window scale $c$ (affine, its radial and tangential parts, 2-ReLU, half the affine one). Right: the noise term $N_n(c)$ with slopes $(d-1)/2$ and $d/2$. Checks Lemmas C.4\u2013C.9, D.1, D.2; not a figure of the paper.", "name": "fig-win-power-laws"}, "image": {"alt": "Log-log curves: the radial affine part falls with slope -2, the tangential part is flat near 1/n; the noise rises from 1/n to 1 along the slope (d-1)/2."}}
plotting.finish(WF.power_laws(pl))

# %% tags=["remove-cell"]
glue("win-pl-lo", float(pl_cfg.fit_signal[0]))
glue("win-pl-hi", float(pl_cfg.fit_signal[1]))
glue("win-pl-aff", float(pl.slope_affine))
glue("win-pl-rad", float(checks.radial_slope(pl)))
glue("win-pl-relu", float(pl.slope_relu))
glue("win-pl-noise", float(pl.slope_noise))
glue("win-pl-r0", float(pl.noise_fit_range[0]))
glue("win-pl-r1", float(pl.noise_fit_range[1]))

# %% [markdown]
# Fitted log-log slopes on $c \in [$ {glue:text}`win-pl-lo:g`, {glue:text}`win-pl-hi:g` $]$: affine signal
# {glue:text}`win-pl-aff:.2f` (its radial part {glue:text}`win-pl-rad:.2f`), 2-ReLU signal
# {glue:text}`win-pl-relu:.2f`; noise {glue:text}`win-pl-noise:.2f` on $c \in [$ {glue:text}`win-pl-r0:.0f`,
# {glue:text}`win-pl-r1:.0f` $]$.

# %% [markdown]
# What the curves show. The **affine signal** is a sum of two parts, exactly as eq. (10) says: the
# radial part (the bias) falls like $c^{-2}$, and the tangential part (the scatter of the
# demonstrations' positions) is nearly flat at $\approx 1/n$ and takes over at large $c$ — so a fit of
# the whole signal term gives a shallower slope, while the radial part alone follows $-2$.
# The **2-ReLU signal** sits above half the affine one (Lemma C.9) and below the Lipschitz bound.
# The **noise** rises from $1/n$ (uniform window) to 1 (a single neighbour), monotonically
# (Lemma D.2), and in between it follows $c^{(d-1)/2}$, not the paper's $c^{d/2}$: the exponent of
# Lemma D.1 as printed counts one dimension too many. Since $c^{(d-1)/2}\le c^{d/2}$ for $c\ge1$ the
# paper's *upper* bound survives; its lower bound $\Omega(\sigma^2w^{d/2}/n)$ cannot hold uniformly
# as $n\to\infty$ (the ratio $w^{1/2}$ grows up to $n^{1/d}$). The exponents of Theorem 3.4, built
# from these bounds, inherit the question; we report both conventions there.

# %% tags=["remove-input"]
pl_checks = checks.power_laws(pl)
q = {m.claim: m.quantities for m in pl_checks}
checked = ledger.judge(pl_checks)
assert q["T-D2"]["monotone"] and q["T-C8"]["above half the affine signal at every c"]
assert all(v <= 4 for v in q["T-C2"]["max signal at L = 1 (affine, 2-ReLU)"]) and abs(q["T-C4"]["radial slope"] + 2) < 0.4
assert abs(pl.slope_noise - (pl_cfg.d - 1) / 2) < 0.2  # the measured exponent is the intrinsic one

# %% [markdown]
# The fit above is taken at $n=10^4$ (at the reduced `book` scale, $n=3000$). With its constants kept,
# Lemma D.1's middle regime $d+\sqrt d\le w\le\big(n/(45\sqrt d\log n)\big)^{2/d}$ ($w=c/2$) is there only
# a sliver, $c\in[9.5,11.6]$, too short to fit an exponent (at $n=3000$ it is empty: its upper end lies below
# its lower end). The regime opens only for large $n$; at $n=10^6$ in $d=3$ it is $c\in[9.5,190]$. The
# noise term needs no tasks, $N_n(c)=\mathbb E\sum_ia_i^2$, so the cell computes it there directly (one
# draw of $10^6$ points on the sphere, 64 queries) and fits the exponent inside the regime, where the
# lemma's hypothesis holds.

# %% tags=["hide-input"]
d_, n_big = pl_cfg.d, 10**6
c_lo = 2 * (d_ + math.sqrt(d_))  # Lemma D.1's middle regime, constants kept, in c = 2w
c_hi = 2 * (n_big / (45 * math.sqrt(d_) * math.log(n_big))) ** (2 / d_)
c_reg = torch.logspace(math.log10(c_lo), math.log10(c_hi), 10, dtype=F64)
pts = torch.randn(n_big, d_, generator=gen(40), dtype=F64)
pts = pts / pts.norm(dim=-1, keepdim=True)  # 10^6 points on the sphere
qs = torch.randn(64, d_, generator=gen(41), dtype=F64)
qs = qs / qs.norm(dim=-1, keepdim=True)  # 64 queries
noise_big = torch.zeros(len(c_reg), dtype=F64)
for q in qs:
    dots = pts @ q - 1.0  # <= 0: exp(c (x^T q - 1)) is the unnormalised weight, without overflow
    for j, cv in enumerate(c_reg.tolist()):
        w = torch.exp(cv * dots)
        noise_big[j] += float((w * w).sum() / w.sum() ** 2) / len(qs)
slope_big = loglog_slope(c_reg, noise_big)
scan = checks.regime_scan(pts, qs, d_, c_lo)  # n N / w^e at both ends of the regime, n = 1e4, 1e5, 1e6

# %% tags=["remove-input"]
glue("win-d1-clo", c_lo)
glue("win-d1-chi", c_hi)
glue("win-d1-from", float(noise_big[0]))
glue("win-d1-to", float(noise_big[-1]))
glue("win-d1-slope", float(slope_big))
glue("win-d1-d", d_)
glue("win-d1-paper", d_ / 2)
glue("win-d1-intr", (d_ - 1) / 2)
checked = ledger.judge(checks.noise_exponent(slope_big, d_, c_lo, c_hi, scan, pl))
assert abs(slope_big - (d_ - 1) / 2) < 0.1

# %% [markdown]
# At $n = 10^6$, $d =$ {glue:text}`win-d1-d`, inside Lemma D.1's regime $c \in [$ {glue:text}`win-d1-clo:.1f`,
# {glue:text}`win-d1-chi:.0f` $]$: $N_n(c)$ rises from {glue:text}`win-d1-from:.2e` to
# {glue:text}`win-d1-to:.2e`, fitted exponent {glue:text}`win-d1-slope:.3f` (paper $d/2 =$
# {glue:text}`win-d1-paper:g`, intrinsic $(d-1)/2 =$ {glue:text}`win-d1-intr:g`).

# %% [markdown]
# ### Derivation 10: putting the bounds together (Theorem 3.4)
#
# ```{prf:theorem} Theorem 3.4 (exponents [R])
# :label: win-thm-34
#
# Let $x\sim\mathcal U^d$ and tasks from $D(\mathcal F^{\rm aff}_L)$ (Case 1) or $D(\mathcal F^+_L)$
# (Case 2). For $n=\Omega(1)$ and $\Omega(n^{-2/d})\le\sigma^2/L^2\le O(n)$, every minimiser of (ICL)
# is $M^\star=w_{KQ}I$ with, for $\Lambda=nL^2/\sigma^2$, $\alpha=\frac1{d+4}$, $\beta=\frac1{d+2}$,
#
# $$
# \text{(Case 1)}\ \ \Omega(\Lambda^{\alpha})\le w_{KQ}\le O\big(\Lambda^{\frac{2(d+2)}{d}\alpha}\big),\qquad
# \text{(Case 2)}\ \ \Omega(\Lambda^{\beta})\le w_{KQ}\le O(\Lambda^{2\beta}).
# $$
# ```
#
# The proof (App. E) splits $w$ into three regions. For $w<d+\sqrt d$ the signal lower bound is
# $\Omega(L^2)$; for $w>(n/\log n)^{2/d}$ the noise is $\Omega(\sigma^2/\log n)$ by monotonicity; in
# between, for 2-ReLU,
# $c\big(\frac{L^2}{(w+1)^2}+\frac{\sigma^2w^{d/2}}n\big)\le\mathcal L(w)\le c'\big(\frac{L^2}w+\frac{\sigma^2w^{d/2}}n+\frac{\sigma^2+L^2}n\big)$.
# Minimising the upper bound at $w\propto\Lambda^{2/(d+2)}$ gives $\min\mathcal L\lesssim L^2\Lambda^{-2/(d+2)}$;
# any minimiser must satisfy both lower-bound terms below this value, which inverts to
# $w\gtrsim\Lambda^{1/(d+2)}$ and $w\lesssim\Lambda^{2/(d+2)}$. The affine case uses
# $\frac{L^2}{w^2}+\frac{L^2w^{d/2-1}}n$ instead and gives the Case-1 bracket. Only the upper affine
# exponent $\frac{2(d+2)}{d(d+4)}$ is legible; the rest is reconstructed from these inversions
# **[R]**. These inversions use the paper's exponents $w^{d/2}$ (noise) and $w^{d/2-1}$ (tangential
# signal); with the corrected ones of Derivations 7 and 9, $w^{(d-1)/2}$ and $w^{(d-3)/2}$, every $d$
# in the brackets becomes $d-1$ (the "$d-1$" brackets of the table below). The condition
# $\sigma^2/L^2\ge\Omega(n^{-2/d})$ keeps the bracket below the scale
# $n^{2/d}$ where the window runs out of demonstrations; the theorem says nothing outside it.
#
# Since the window scale is $c=2w_{KQ}$, $c^\star$ and $w_{KQ}$ have the same exponents. We compute
# $c^\star(\Lambda)$ from the population curves, fit the exponent **only inside the reconstructed
# regime** — $n^{-2/d}\le\sigma^2/L^2\le n$ and $d+\sqrt d\le c^\star\le2n^{2/d}$ (the lemmas'
# $w\ge(d+\sqrt d)/2$ and the count condition, with the constants $45\sqrt d\log n$ dropped because
# they make the regime empty for any $n$ we can simulate) — and look at the saturation outside it.
#
# **A mismatch in the paper's conditions.** Lemma C.4's signal bounds need $w\ge(d+\sqrt d)/2$, i.e.
# $c\ge d+\sqrt d$, while Lemma D.1's noise bound is stated for $w\ge d+\sqrt d$, i.e.
# $c\ge2(d+\sqrt d)$; the proof of Theorem 3.4 (App. E, Case 1: "$w_{KQ}<d+\sqrt d$") uses the second.
# We fit with the looser floor, repeat the fit with the stricter one, and report both.

# %%
sc_cfg = population.ScalingConfig.for_scale(SCALE)
sc = full(population.run_scaling, sc_cfg)  # c* against Lambda for each (d, n, class)

# %% mystnb={"figure": {"caption": "Optimal window scale $c^\\star$ against $\\Lambda=nL^2/\\sigma^2$ for the affine (left) and 2-ReLU (right) classes; circles mark the admissible regime of Theorem 3.4, dotted and dashed lines the bracket's lower and upper exponents. Not a figure of the paper.", "name": "fig-win-scaling"}, "image": {"alt": "c* grows as a power of Lambda inside the admissible regime and flattens for very small noise."}}
plotting.finish(WF.scaling(sc))

# %% [markdown]
# Dotted and dashed lines start at the first admissible point with the bracket's lower and upper
# exponents. The admissible points follow a power law inside the bracket; below the regime
# (tiny $\sigma$, right end) $c^\star$ bends over towards the noise-free optimum, which is finite at
# finite $n$ because of the tangential "position noise" of Derivation 7. The bend is gradual, and
# slower for larger $n$ (the noise-free optimum grows with $n$): at $\sigma=10^{-3}$ the local slope
# for $d=2$, $n=1000$ is still about half the admissible one. That saturation is our own prediction,
# not the theorem's (which says nothing below its regime); the check below therefore extends the
# $\sigma$ grid to $10^{-6}$, lists the local slope between consecutive $\sigma$, and asks for a
# local slope under a quarter of the admissible one at the two smallest $\sigma$. The table lists the fitted exponents with both dimension
# conventions; the ReLU exponents sit at the upper edge of the Case-2 bracket, and the affine ones
# match the heuristic $2/(d+3)$ of the intrinsic dimension. Each exponent is fitted to the few
# admissible points of its curve (three at the reduced `book` scale), so the ledger judges it with its 95%
# interval (Student $t$ with $k-2$ degrees of freedom): an interval that reaches past the bracket's
# edge cannot decide.

# %% tags=["remove-cell"]
slope_rows = []
for (d_s, n_s, cls), s in sc.slopes.items():
    b, bm = population.brackets(d_s)[cls], population.brackets(d_s, d_s - 1)[cls]
    npts = sum(r["admissible"] for r in sc.rows if r["d"] == d_s and r["n"] == n_s and r["cls"] == cls)
    slope_rows.append([d_s, n_s, WF.NAMES.get(cls, cls), f"{s:.3f}", f"[{b[0]:.3f}, {b[1]:.3f}]", f"[{bm[0]:.3f}, {bm[1]:.3f}]", npts])
glue("win-sc-slopes", Markdown(md_table(["$d$", "$n$", "tasks", "fitted slope", "bracket (paper, $d$)", "bracket ($d - 1$)",
                                         "admissible points"], slope_rows)))
local_rows = []
for key in sc.slopes:
    smallest, local = checks.local_slopes(sc, key)
    local_rows.append([WF.NAMES.get(key[2], key[2]), key[0], key[1], f"{smallest:.0e}", ", ".join(f"{v:.2f}" for v in local),
                       f"{sc.slopes_strict[key]:.3f}"])
glue("win-sc-local", Markdown(md_table(["tasks", "$d$", "$n$", "smallest $\\sigma$", "local slopes", "slope with the strict floor"],
                                       local_rows)))
glue("win-sc-edge", sum(not r["interior"] for r in sc.rows))
glue("win-sc-rows", len(sc.rows))

# %% [markdown]
# ```{glue:md} win-sc-slopes
# :format: myst
# ```
#
# {glue:text}`win-sc-edge` of {glue:text}`win-sc-rows` optima lie at the end of the $c$ grid and are
# excluded. Local slopes between consecutive $\sigma$, from the smallest $\sigma$ up, and the slope
# fitted with the strict floor $c^\star \ge 2(d + \sqrt d)$ of Lemma D.1 (nan: fewer than 3 points):
#
# ```{glue:md} win-sc-local
# :format: myst
# ```

# %% tags=["remove-input"]
sc_checks = checks.scaling(sc)
checked = ledger.judge(sc_checks)
assert sc_checks[2].quantities["c* strictly decreasing in sigma in the regime, every curve"]
assert all(0 < s < 1 for s in sc.slopes.values())

# %% [markdown]
# **Figure 7 of the paper: the bracket for $w^\star$.** The proof of Theorem 3.4 in one picture.
# Left: the bias (signal) term between rough bounds of the two shapes used in App. E,
# $\propto L^2/(w+1)^2$ below and $\propto L^2(1/w+1/n)$ above (constants: the smallest and largest
# ratio to the measured 2-ReLU curve, so both bounds hold on the grid), and the noise
# $\sigma^2N_n$. Right: the overall bounds (bias bound plus noise). No $w$ can beat the minimum of the
# upper bound (horizontal line), so the optimum must lie where the *lower* bound is below it: the
# bracket between the vertical lines. This is the inversion that gives the exponents above.
# The paper's Figure 7 is a schematic ("rough upper and lower bounds"); ours draws the same picture
# with measured curves. Because the bounds' constants are fitted so that both bounds hold on the
# grid, the bracket contains the measured optimum **by construction**: the figure illustrates the
# proof's inversion, it does not test it (the line below is a check of the drawing, and no claim of
# the ledger rests on it).

# %% mystnb={"figure": {"caption": "Draws the paper's schematic Figure 7 with measured curves: the bias and noise bound curves of the 2-ReLU class against the window width $w$ (left) and the overall bounds with the bracket that must contain the optimal $w^\\star$ (right).", "name": "fig-window-fig7"}, "image": {"alt": "Two panels of bound curves against the window width, with vertical lines marking the bracket for the optimal width."}}
key7 = next(k for k in sc.curves if k[2] == "relu")  # the first 2-ReLU curve
fig7, b7 = WF.fig7(sc.curves[key7], L=1.0, sigma=0.3)

# %% tags=["remove-input"] mystnb={"figure": {"caption": "The bracket for $w^\\star$: bias bounds and noise (left), overall upper and lower bounds with the measured loss (right), 2-ReLU class. The paper's schematic Fig. 7 (Collins et al.) drawn with measured curves; the bracket contains the optimum by construction.", "name": "fig-win-fig7"}, "image": {"alt": "The lower bound stays above the minimum of the upper bound except in an interval that contains the optimum w*."}}
plotting.finish(fig7)

# %% tags=["remove-cell"]
glue("win-f7-d", key7[0])
glue("win-f7-n", key7[1])
glue("win-f7-w", float(b7["w_star"]))
glue("win-f7-lo", float(b7["bracket"][0]))
glue("win-f7-hi", float(b7["bracket"][1]))
assert b7["bracket"][0] <= b7["w_star"] <= b7["bracket"][1]  # a check of the drawing: true by construction

# %% [markdown]
# At $d =$ {glue:text}`win-f7-d`, $n =$ {glue:text}`win-f7-n`, $L = 1$, $\sigma = 0.3$ the optimum
# $w^\star =$ {glue:text}`win-f7-w:.1f` lies in the bracket $[$ {glue:text}`win-f7-lo:.1f`,
# {glue:text}`win-f7-hi:.1f` $]$ (by construction, see above).

# %% [markdown]
# ### Derivation 11: transfer across Lipschitzness (Theorem 3.5)
#
# Pretrain on $D(\mathcal F^+_L)$: the window is fixed at $w\in[\Lambda^\beta,\Lambda^{2\beta}]$. On *any*
# $L$-Lipschitz task the loss is at most the convex upper bound
# $O(\frac{L^2}w+\frac{\sigma^2w^{d/2}}n)$ evaluated at the ends of that interval:
# $\mathcal L\le O\big(L^2\Lambda^{-\beta}\big)$ **[R]** (sufficiency). On tasks with another constant
# $L'$, the signal part scales like $L'^2$ while the noise floor $\sigma^2N_n(c)$ does not depend on
# $L'$. If $L'\gg L$ the error grows like $L'^2$ — a matched model grows more slowly (like
# $L'^{2d/(d+2)}$ by the heuristic while $\sigma^2/L'^2$ stays in the admissible regime, steepening
# towards 2 once it saturates; here the regime ends at $L'\le\sigma n^{1/d}\approx2.2$, below $L'\gg L$, so how
# much more slowly depends on where the $L'$ grid ends, and the ledger reports it without testing it) — and if $L'\ll L$ the error stays at the noise floor of a window that is too
# small, while a matched model keeps improving (necessity). With the two curves this is a one-liner:
# $\mathcal L(c_{\rm pre};L')=L'^2S_n(c_{\rm pre})+\sigma^2N_n(c_{\rm pre})$.

# %%
tr_cfg = population.TransferConfig.for_scale(SCALE)
tr = full(population.run_transfer, tr_cfg)  # the window pretrained at L, tested at each L'
Lp = tr.test_L

# %% mystnb={"figure": {"caption": "Population loss of the window pretrained at $L=1$ (2-ReLU) tested at other $L'$, against the window matched to each $L'$. Illustrates Theorem 3.5; not a figure of the paper.", "name": "fig-win-transfer"}, "image": {"alt": "The pretrained loss grows like L' squared for large L' and stays at a noise floor for small L', while the matched loss keeps falling."}}
plotting.finish(WF.transfer(tr))

# %%
top = slice(-4, None)  # the four largest L'
# the pretrained window on fresh 2-ReLU tasks at each L', noise drawn (not through the two curves)
slope_direct = loglog_slope(Lp[top], [checks.direct_transfer_loss(tr, float(L_), 70 + i) for i, L_ in enumerate(Lp[top])])

# %% tags=["remove-input"]
t35 = checks.transfer(tr, slope_direct)
floor_ratio = t35[1].quantities["floor ratio"]
slope_pre = t35[1].shown["pretrained slope (L'^2 S + sigma^2 N)"]
glue("win-tr-pre", float(slope_pre))
glue("win-tr-direct", float(slope_direct))
glue("win-tr-match", float(t35[1].shown["matched slope"]))
glue("win-tr-heur", 2 * tr_cfg.d / (tr_cfg.d + 2))
glue("win-tr-Lmin", float(Lp[0]))
glue("win-tr-floor", floor_ratio)
glue("win-tr-L", tr_cfg.L)
glue("win-tr-table", Markdown(md_table(["tasks", "loss, ReLU-pretrained window", "own optimal $c$", "loss at own optimum", "ratio"],
                                       [[WF.NAMES.get(cls, cls), f"{at_pre:.2e}", f"{cbest:.1f}", f"{best:.2e}", f"{at_pre / best:.2f}"]
                                        for cls, (at_pre, best, cbest) in tr.other_classes.items()])))
checked = ledger.judge(t35)
assert slope_pre > 1.7 and floor_ratio > 2 and abs(slope_direct - 2) < 0.3

# %% [markdown]
# Log-log slope for $L' \gg L$: pretrained {glue:text}`win-tr-pre:.2f` (direct simulation
# {glue:text}`win-tr-direct:.2f`), matched {glue:text}`win-tr-match:.2f` ($2d/(d+2) =$
# {glue:text}`win-tr-heur:.2f`); at $L' =$ {glue:text}`win-tr-Lmin:g` the pretrained window's loss is
# {glue:text}`win-tr-floor:.1f` times the matched one. On other task classes ($L =$ {glue:text}`win-tr-L:g`):
#
# ```{glue:md} win-tr-table
# :format: myst
# ```

# %% [markdown]
# ### Derivation 12: linear attention cannot adapt (Theorem 3.6)
#
# Linear attention predicts $h_{LA}(x)=\sum_i(f(x_i)+\epsilon_i)\,x_i^\top Mx$. Split $f$ into its
# mean over inputs, $\mathbb E_xf=b$, and the centred part $\bar f$. The term $b\sum_ix_i^\top Mx$
# has mean zero (the inputs are centred on the sphere), so it cannot reproduce the offset $b$: with
# $Z=\sum_ix_i^\top Mx$, the intercept alone costs $\mathbb Eb^2\,\mathbb E(Z-1)^2\ge\mathbb Eb^2=L^2/3$.
# The paper's proof (App. F) flips the centred task, $f'=\mathbb E_xf-f$, and uses
# $\tfrac12\mathbb E(A+B)^2+\tfrac12\mathbb E(-A+B)^2=\mathbb EA^2+\mathbb EB^2$ to the same effect:
#
# $$
# \mathcal L_{LA}(M)\ \ge\ \mathbb E_f\big(\mathbb E_xf\big)^2=\frac{L^2}3\qquad\text{for every }M\in\mathbb R^{d\times d}.
# $$
#
# (Its displayed decomposition drops the term $\sum_i\mathbb E_xf\,x_i^\top Mx$, whose cross term with
# $b$ vanishes, so the bound stands.) $\mathcal L_{LA}$ is quadratic in $M$, so its minimum is an exact
# least-squares problem in the $d^2$ entries (`baselines.linear_attention_optimum`); we compare it
# with $L^2/3$ and with the softmax optimum.

# %%
la_cfg = population.LinearAttentionConfig.for_scale(SCALE)
la = full(population.run_linear_attention, la_cfg)  # the exact least-squares M for each n and class

# %% tags=["remove-cell"]
la_rows = []
for cls in ("affine", "relu"):
    for i, nn_ in enumerate(la.n):
        ins, held, se_ = la.linear[cls][i]
        la_rows.append([nn_, WF.NAMES.get(cls, cls), f"{ins:.4f}", f"{held:.4f} ± {se_:.4f}", f"{la.softmax[cls][i]:.4f}",
                        f"{la.diag_scaled[cls][i]:.2f}"])
glue("win-la-table", Markdown(md_table(["$n$", "tasks", "linear attention (in-sample)", "linear attention (held-out)",
                                        "softmax optimum", "$\\mathrm{diag}(M^\\star)\\, n/d$"], la_rows)))

# %% [markdown]
# ```{glue:md} win-la-table
# :format: myst
# ```

# %% mystnb={"figure": {"caption": "Exact optimum of linear attention against $n$ (affine and 2-ReLU tasks), the bound $L^2/3$, and the softmax optimum. Illustrates Theorem 3.6; not a figure of the paper.", "name": "fig-win-linear"}, "image": {"alt": "Linear attention stays above L^2/3 for every n while softmax attention's optimum falls."}}
plotting.finish(WF.linear_attention(la))

# %% tags=["remove-input"]
t36 = checks.linear_attention(la)
checked = ledger.judge(t36)
assert t36.quantities["held-out minus L^2/3 in SE (smallest)"] > -3
assert t36.quantities["softmax / linear optimum at the largest n"] < 0.2

# %% [markdown]
# The exact optimum sits above $L^2/3$ for every $n$ and approaches it for the affine class (the
# diagonal of $M^\star_{LA}$ tends to $\frac dnI$ **[ours]**, which makes $\sum_iy_ix_i^\top M x$ the
# empirical estimate of $\mathbb E[y\,x]^\top x\cdot d$ — exact for the linear part, blind to the
# intercept). The softmax optimum keeps falling with $n$.
#
# ### Derivation 13: direction-wise Lipschitzness and low rank (Theorem 4.4)
#
# When the tasks depend on $x$ only through $B^\top x$, $B\in\mathbb O^{d\times k}$ (Definition 4.2:
# $f(x)=a^\top B^\top x$, $a\sim\mathcal U^k$), the Lipschitzness is $L$ along $\mathrm{col}(B)$ and
# $0$ along $\mathrm{col}(B_\perp)$ (Definition 4.1). With covariates $x=c_uBu+c_vB_\perp v$
# (Assumption 4.3; $c_v$ may be arbitrarily large), write $M=BF+B_\perp G$. The kernel factors as
# $e^{x_i^\top Mx}=e^{c_uu_i^\top Fx}\,\alpha_i$ with $\alpha_i=e^{c_vv_i^\top Gx}$ (eq. 28): the
# spurious directions only multiply the weights by random factors $\alpha_i$ that are independent of
# the labels. Rotational invariance gives $F=c_1B^\top$, $G=c_2B_\perp^\top$ (Lemma H.2), and
# $c_1>0$ because $\frac{dJ}{dc_1}\big|_0\propto-\big(1-\frac{\sum\alpha_i^2}{(\sum\alpha_i)^2}\big)<0$
# (Lemma H.1, eq. 26). The key step (Lemmas H.3, H.4) shows that the loss *decreases* when the
# $\alpha_i$ are equalised — random reweighting only adds variance — so $c_2=0$:
#
# ```{prf:theorem} Theorem 4.4
# :label: win-thm-44
#
# If $\sigma=0$ (Case 1) or $n=2$ (Case 2), the minimiser of (ICL) over symmetric $M$ with
# $\lVert B^\top MB\rVert\le C_n/c_u^2$ ($C_n=2$ in Case 1, $1$ in Case 2) is $M^\star=c\,BB^\top$,
# $c\in(0,C_n/c_u^2]$: attention projects onto $\mathrm{col}(B)$.
# ```
#
# The cell maps the loss on the plane $M=c_1BB^\top+c_2B_\perp B_\perp^\top$ ($d=10$, $k=2$),
# including negative $c_2$, in both cases (with $c_1$ up to the constraint $C_n$) and in a general
# case the theorem does not cover ($n=20$, $\sigma=0.1$), where we drop the constraint and search
# $c_1$ up to 40, far enough to contain the unconstrained optimum.

# %%
lr_cfg = population.LowRankLandscapeConfig.for_scale(SCALE)
lrl = full(population.run_lowrank_landscape, lr_cfg)  # the loss on the (c1, c2) plane, three cases
titles = population.case_titles(lr_cfg)

# %% mystnb={"figure": {"caption": "Loss on the plane $M=c_1BB^\\top+c_2B_\\perp B_\\perp^\\top$ ($d=10$, $k=2$): Case 1, Case 2 and a general case outside Theorem 4.4 (star: grid minimum). Not a figure of the paper.", "name": "fig-win-landscape"}, "image": {"alt": "In every case the loss is smallest on the line c2 = 0 at positive c1."}}
plotting.finish(WF.lowrank_landscape(lrl, titles))

# %% tags=["remove-cell"]
glue("win-lr-table", Markdown(md_table(["case", "argmin $(c_1, c_2)$", "$\\partial J/\\partial c_1$ at $c_1 = 0$"],
                                       [[case, f"({am[0]:.2f}, {am[1]:.2f})", f"{s0:.3f}"]
                                        for case, am, s0 in zip(titles, lrl.argmin, lrl.slope_at_zero)])))

# %% [markdown]
# ```{glue:md} win-lr-table
# :format: myst
# ```

# %% tags=["remove-input"]
checked = ledger.judge(checks.lowrank(lrl))
step = float(lrl.c2[1] - lrl.c2[0])
assert all(abs(am[1]) < step / 2 and am[0] > 0 for am in lrl.argmin[:2]) and all(s < 0 for s in lrl.slope_at_zero)

# %% [markdown]
# ## Explore: the optimal window for your $L$, $\sigma$, $n$ and $d$
#
# The figure shows, for the 2-ReLU class, the population loss $L^2S_n(c)+\sigma^2N_n(c)$ with its two
# parts and its minimum $c^\star$; the window $c^\star$ opens around a query on a great circle of the
# sphere (shaded: $c^\star(1-\cos\theta)\le1$); and the attention profile $e^{c^\star\cos\theta}/Z$ it
# puts on demonstrations at angle $\theta$ from the query, next to linear attention's $\cos\theta$,
# which no $M=mI$ can reshape. The slider (kernel-free, pre-computed) moves $L$ at
# $\sigma=0.1$, $n=100$, $d=2$; in a live notebook the widget below it recomputes for any
# $(L,\sigma,n,d)$.

# %% mystnb={"figure": {"caption": "The optimal window of softmax attention for a chosen Lipschitz constant $L$ ($\\sigma = 0.1$, $n = 100$, $d = 2$): the window on the circle around the query and the attention profile against the angle from the query, beside linear attention's, which does not change with $L$. Larger $L$, narrower window.", "name": "fig-win-L-slider"}}
TASKS = 1000 if SCALE == "paper" else 400  # Monte-Carlo tasks per curve
draw_L = functools.partial(WF.draw_window, sigma=0.1, n=100, d=2, tasks=TASKS)  # draw_L(L) -> figure
widgets.static_slider(draw_L, icl_lab.notebook.frames([0.03, 0.1, 0.3, 1.0, 3.0, 10.0]), name="$L$ ($\\sigma = 0.1$, $n = 100$, $d = 2$)",
                      fmt="{:g}", alt="the optimal attention window on the sphere and its attention profile against the angle from the "
                                      "query, next to linear attention's, for this L")

# %% tags=["remove-cell"]
widgets.live(WF.live_window(TASKS), L=ipywidgets.FloatLogSlider(value=1.0, base=10, min=-2, max=1.5, step=0.25),
             sigma=ipywidgets.FloatLogSlider(value=0.1, base=10, min=-3, max=0, step=0.25),
             n=ipywidgets.IntSlider(value=100, min=10, max=1000, step=10), d=ipywidgets.IntSlider(value=2, min=2, max=6))

# %% [markdown]
# A second kernel-free slider moves $n$ at fixed $L=1$, $\sigma=0.1$: more demonstrations, a
# narrower window.

# %% mystnb={"figure": {"caption": "The optimal window for a chosen number of demonstrations $n$ ($L = 1$, $\\sigma = 0.1$, $d = 2$), drawn as in the previous figure: more demonstrations, a narrower window.", "name": "fig-win-n-slider"}}
draw_n = functools.partial(WF.draw_window_n, L=1.0, sigma=0.1, d=2, tasks=TASKS)  # draw_n(n) -> figure
widgets.static_slider(draw_n, icl_lab.notebook.frames([10, 30, 100, 300, 1000]), name="$n$ ($L = 1$, $\\sigma = 0.1$, $d = 2$)",
                      alt="the optimal attention window on the sphere and its attention profile against the angle from the query, "
                          "next to linear attention's, for this n")

# %% [markdown]
# ## Exercises
#
# ````{exercise}
# :label: win-ex-hard
#
# For the hard window with bias $L^2/w$ and variance $\sigma^2w^{m/2}/n$ ($m$ the dimension that
# counts the points in a cap), find the optimal $w$ and the optimal loss. How do they change when the
# bias is $L^2/w^2$ (affine tasks)?
# ````
#
# ````{solution} win-ex-hard
# :class: dropdown
#
# Setting the derivative of $\frac{L^2}w+\frac{\sigma^2w^{m/2}}n$ to zero gives
# $\frac{L^2}{w^2}=\frac m2\frac{\sigma^2w^{m/2-1}}n$, so
# $w^\star=\big(\frac{2}{m}\frac{nL^2}{\sigma^2}\big)^{2/(m+2)}\propto\Lambda^{2/(m+2)}$, and the loss is
# $\propto L^2\Lambda^{-2/(m+2)}$. With bias $L^2/w^2$:
# $w^\star\propto\Lambda^{2/(m+4)}$, loss $\propto L^2\Lambda^{-4/(m+4)}$. With $m=d$ these are the
# paper's heuristic exponents; with the sphere's intrinsic $m=d-1$ they become $2/(d+1)$ and
# $2/(d+3)$. The cell evaluates the closed form against a numerical minimisation.
# ````

# %% tags=["hide-input"]
ws_ = np.logspace(-2, 6, 200001)
hw_rows = []
for (L_, s_, n_, m_) in [(1.0, 0.1, 100, 2), (2.0, 0.3, 1000, 3)]:
    num = ws_[np.argmin(L_**2 / ws_ + s_**2 * ws_ ** (m_ / 2) / n_)]  # numerical minimisation on a fine grid
    closed = WT.hard_window_optimum(L_, s_, n_, m_)  # the closed form
    hw_rows.append([f"{L_:g}", f"{s_:g}", n_, m_, f"{num:.3f}", f"{closed:.3f}"])
    assert abs(num / closed - 1) < 1e-3

# %% tags=["remove-cell"]
glue("win-ex-hw", Markdown(md_table(["$L$", "$\\sigma$", "$n$", "$m$", "$w^\\star$ (numerical)", "$w^\\star$ (closed form)"], hw_rows)))

# %% [markdown]
# ```{glue:md} win-ex-hw
# :format: myst
# ```

# %% [markdown]
# ````{exercise}
# :label: win-ex-intercept
#
# Show that linear attention cannot fit the intercept: for $f(x)=b$ (a constant task,
# $b\sim\mathrm{Unif}[-L,L]$) and $x_i\sim\mathcal U^d$, compute $\min_M\mathcal L_{LA}(M)$ without noise.
# ````
#
# ````{solution} win-ex-intercept
# :class: dropdown
#
# The prediction is $b\,Z$ with $Z=\sum_ix_i^\top Mx_{n+1}$, so
# $\mathcal L_{LA}=\mathbb Eb^2\,\mathbb E(Z-1)^2=\frac{L^2}3\big(\mathrm{Var}Z+(\mathbb EZ-1)^2\big)$.
# Independence and $\mathbb Ex=0$ give $\mathbb EZ=0$, so the loss is at least $L^2/3$, attained by
# $M=0$: linear attention's best answer to a constant task is $0$. Softmax attention with $M=0$
# returns the average label, $b$, exactly. The cell checks this with the exact least-squares optimum.
# ````

# %%
const = PromptSampler.from_inputs(wdata.sphere_inputs(3), wdata.ConstantTask(3, 1.0), N=10, num_queries=4)
M_c, ins_c, held_c, se_c = linear_attention_loss(const, 4000, gen(30), gen(31))  # the exact optimum
norm_c = float(torch.linalg.matrix_norm(M_c, ord=2))
assert ins_c > 1 / 3 - 0.01 and norm_c < 0.05

# %% tags=["remove-cell"]
glue("win-ex-ins", float(ins_c))
glue("win-ex-held", float(held_c))
glue("win-ex-se", float(se_c))
glue("win-ex-norm", norm_c)

# %% [markdown]
# Constant tasks: the linear-attention optimum has loss {glue:text}`win-ex-ins:.3f` (held-out
# {glue:text}`win-ex-held:.3f` ± {glue:text}`win-ex-se:.3f`), against $L^2/3 = 0.333$, with
# $\|M^\star\| =$ {glue:text}`win-ex-norm:.3f`.

# %% [markdown]
# ````{exercise}
# :label: win-ex-transfer
#
# Using $\mathcal L(c;L')=L'^2S_n(c)+\sigma^2N_n(c)$, find the limits of the pretrained loss
# $\mathcal L(c_L;L')$ and of the matched loss $\min_c\mathcal L(c;L')$ as $L'\to0$, and show that
# their ratio tends to $n\,N_n(c_L)\ge1$: the number of demonstrations divided by the *effective*
# number the pretrained window averages over.
# ````
#
# ````{solution} win-ex-transfer
# :class: dropdown
#
# As $L'\to0$ the signal term vanishes for every fixed $c$, so $\mathcal L(c_L;L')\to\sigma^2N_n(c_L)$.
# The matched loss is at most $\mathcal L(0;L')=L'^2S_n(0)+\sigma^2/n\to\sigma^2/n$ and at least
# $\sigma^2\min_cN_n(c)=\sigma^2N_n(0)=\sigma^2/n$ (Lemma D.2: $N_n$ is increasing), so it tends to
# $\sigma^2/n$. The ratio tends to $n\,N_n(c_L)$, and $1/N_n(c)=1/\mathbb E\sum_ia_i^2$ is the
# effective sample size of the window. The cell compares the limit with the smallest $L'$ of the
# figure above.
# ````

# %%
limit = tr_cfg.n * tr.noise_at_pre  # n N_n(c_pre), the limit of the ratio as L' -> 0
assert abs(floor_ratio / limit - 1) < 0.25

# %% tags=["remove-cell"]
glue("win-ex-limit", float(limit))

# %% [markdown]
# $n N_n(c_\text{pre}) =$ {glue:text}`win-ex-limit:.2f`; the measured ratio pretrained / matched at
# $L' =$ {glue:text}`win-tr-Lmin:g` is {glue:text}`win-tr-floor:.2f`.

# %% [markdown]
# ## Claims ledger (Part I)
#
# The claims checked on this page (Part I, population level). The [second part](experiments.ipynb)
# has its own ledger for the training experiments; the synthesis chapter joins both.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
