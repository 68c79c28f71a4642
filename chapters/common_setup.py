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
# # Chapter 1 — The common setup
#
# All four papers in this book study the same object: a **one-layer attention read-out** that
# predicts the label of a query from a prompt of labelled demonstrations, with no weight update at
# test time. This chapter builds that object once — the prompt embedding, attention as a kernel
# smoother, softmax versus linear attention — derives the gradient every later chapter uses, checks
# it against automatic differentiation, and runs a first experiment: train the Q-only model of
# {cite:t}`huang2024convergence` on linear tasks and compare it with classical in-context
# predictors as the context grows.
#
# Everything below comes from the library `icl_lab`; the notebook holds the story. Each claim this
# chapter checks appears where it is checked, as a card with the measured value and its verdict
# (how verdicts are reached: {ref}`claims-rules`).

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.13, "book": 0.27, "paper": 0.31})

# %%
import functools
import math

import ipywidgets
import matplotlib.pyplot as plt
import torch
from IPython.display import Markdown

import icl_lab
from icl_lab import baselines, plotting, widgets
from icl_lab.data import (LinearTask, PromptBatch, PromptSampler, random_orthonormal, sphere,
                          standard_basis)
from icl_lab.notebook import glue
from icl_lab.papers.common import checks
from icl_lab.papers.common import figures as CF
from icl_lab.papers.common.experiments import ContextLengthConfig, run_context_length
from icl_lab.papers.common.theory import q_only_gradient_closed_form
from icl_lab.render import md_table
from icl_lab.train import mse_loss

SCALE, ledger = icl_lab.notebook.chapter("common")

# %% [markdown]
# ## Prompts and their embedding
#
# A task is a function $f$ drawn from a family $\mathcal F$. A prompt holds $N$ demonstrations
# $(x_i, y_i = f(x_i))$ and a query $x_q$ whose label the model must predict. Following all four
# papers, the prompt is embedded as a matrix whose columns are tokens — each input stacked over its
# label, with the query's label slot set to zero:
#
# $$
# E = \begin{pmatrix} x_1 & x_2 & \cdots & x_N & x_q \\ y_1 & y_2 & \cdots & y_N & 0 \end{pmatrix}
# \in \mathbb R^{(d+1)\times(N+1)} .
# $$
#
# In the convergence and nonlinear papers the inputs are drawn from a finite dictionary of features
# $v_1,\dots,v_K$ with probabilities $p_k$; the label is $y = \langle w, x\rangle$ for the linear
# tasks, with $w \sim \mathcal N(0, I_d)$ drawn afresh for every prompt. The library keeps each
# token's feature id, so we can later ask *where* the model attends.

# %%
K, d, N = 3, 4, 6
V = standard_basis(K, d)  # v_k = e_k: orthonormal features
sampler = PromptSampler.from_features(V, LinearTask(d), N=N, p=[0.5, 0.25, 0.25])
prompt = sampler.sample(1, icl_lab.make_generator(0))
E = prompt.embedding()[0].T  # (d + 1) x (N + 1): columns are tokens, the last one the query

# %% tags=["remove-cell"]
glue("prompt-ids", ", ".join(str(k + 1) for k in prompt.ids[0].tolist()))
glue("prompt-query", int(prompt.query_ids[0, 0]) + 1)
glue("prompt-counts", Markdown(", ".join(f"$|V_{k + 1}| = {c}$" for k, c in enumerate(prompt.counts[0].tolist()))))
E_tex = r" \\ ".join(" & ".join(f"{round(v, 2) + 0.0:g}" for v in row) for row in E.tolist())
glue("prompt-E", Markdown(f"$$\nE = \\begin{{pmatrix}} {E_tex} \\end{{pmatrix}}\n$$"))

# %% [markdown]
# The demonstrations use features {glue:text}`prompt-ids` (in prompt order) and the query uses
# feature {glue:text}`prompt-query`; the counts are {glue:md}`prompt-counts:myst`. The embedding, one
# column per token and the query last:
#
# ```{glue:md} prompt-E
# :format: myst
# ```
#
# Rows $1..d$ of $E$ hold the inputs, the last row the labels. The query's label slot is zero —
# the model must infer $\langle w, x_q\rangle$ from the demonstrations that share its feature.

# %% [markdown]
# ## One-layer attention as a kernel smoother
#
# The papers reparametrise the attention head so that the value map copies the label row and the
# key–query product acts on the inputs only:
# $W^V = \begin{pmatrix}0 & 0\\ 0 & 1\end{pmatrix}$,
# $W^{KQ} = (W^K)^\top W^Q = \begin{pmatrix} M & 0\\ 0 & 0\end{pmatrix}$.
# The prediction for the query is then
#
# $$
# \hat y(x_q) \;=\; \sum_{i=1}^N a_i\, y_i, \qquad
# a_i = \frac{\exp(x_i^\top M x_q)}{\sum_{j=1}^N \exp(x_j^\top M x_q)} \quad\text{(softmax)}, \qquad
# a_i = x_i^\top M x_q \quad\text{(linear)} .
# $$
#
# The query does not attend to itself (its value is zero: the query token carries no label). Softmax attention is a **kernel smoother**: a convex combination of
# the demonstrations' labels with weights set by a similarity kernel. On the unit sphere,
# $x_i^\top x_q = 1 - \tfrac12\|x_i - x_q\|^2$, so $M = cI$ gives weights
# $\propto e^{-(c/2)\|x_i - x_q\|^2}$: exactly the **Nadaraya–Watson** estimator
# {cite:p}`nadaraya1964,watson1964` with Gaussian kernel $e^{-\|x-x'\|^2/h}$ and bandwidth $h = 2/c$
# — the factor 2 that the window paper's equations (7) and (9) disagree on. Linear attention's
# weights are not normalised, so scaling $M$ scales the prediction instead of narrowing the window.
#
# The four papers differ only in how $M$ is parametrised and what reads the output:
#
# | paper | scores | trained | read-out |
# |---|---|---|---|
# | convergence, nonlinear | $x_i^\top Q x_q$ | $Q$ (from $0$) | identity |
# | window | $x_i^\top W^\top W x_q$ (tied) | $W$ (from $0.001 I$) | identity; linear attention as baseline |
# | selectors | $(W_K p_i)^\top W_Q p_q$ on full tokens | $W_Q, W_K, W_V, W_O$ | ReLU MLP $a^\top \mathrm{ReLU}(W_O\,\cdot)$ |
#
# In the library these are `QOnlyAttention`, `KernelAttention` (both `BilinearAttention`) and
# `AttentionMLP`, all built on the same `attend` read-out. Let us check the kernel-smoother identity
# numerically.

# %%
xs = sphere((64, 30), 5, icl_lab.make_generator(1))  # 64 prompts, 30 points on S^4
ys = torch.cos(3 * xs[..., 0])
nw_batch = PromptBatch(x=xs[:, :20], y=ys[:, :20], x_query=xs[:, 20:], y_query=ys[:, 20:])

h = 0.3
att = icl_lab.BilinearAttention(5, runs=1, init=2.0 / h)  # M = (2/h) I
with torch.no_grad():
    pred = att(nw_batch).pred[0]
nw_pred = baselines.nadaraya_watson(nw_batch.x, nw_batch.y, nw_batch.x_query, h)

# %% tags=["remove-input"]
assert all(c.ok for c in ledger.judge(checks.kernel_smoother(pred, nw_pred)))

# %% [markdown]
# The window that $M$ opens is easiest to see on the circle ($d = 2$): below, the weight a query at
# angle $0$ gives a demonstration at angle $\theta$, for $M = cI$ and demonstrations spread
# evenly around the circle. Softmax weights $\propto e^{c\cos\theta}$ narrow around the query as $c$
# grows — a nearest-neighbour window whose width is $\approx 1/\sqrt c$ — while linear-attention
# weights $c\cos\theta$ keep the same shape for every $c$ (and are negative on the far side).

# %% mystnb={"figure": {"caption": "The window that $M = cI$ opens on the circle: the weight a query at angle 0 gives to each of {glue:text}`window-n` demonstrations spread around the circle, normalised by the largest weight, for {glue:text}`window-nc` values of $c$. Left, softmax attention: the window narrows as $c$ grows. Right, linear attention: the same shape for every $c$.", "name": "fig-common-window"}, "image": {"alt": "Two panels of weight against angle; softmax curves narrow with c, linear curves coincide."}}
theta = torch.linspace(-math.pi, math.pi, 61)[:-1]  # 60 demonstrations around the circle
circle = torch.stack([torch.cos(theta), torch.sin(theta)], -1).to(torch.float64)
f64 = torch.float64
query = torch.tensor([[[1.0, 0.0]]], dtype=f64)  # at angle 0; labels play no part in the weights
window_batch = PromptBatch(x=circle[None], y=torch.zeros(1, len(theta), dtype=f64),
                           x_query=query, y_query=torch.zeros(1, 1, dtype=f64))
weights = {}  # (activation, c) -> the query's weights over the demonstrations
for act in ("softmax", "linear"):
    for c in (1.0, 4.0, 16.0, 64.0):
        m = icl_lab.BilinearAttention(2, runs=1, init=c, activation=act).to(dtype=torch.float64)
        with torch.no_grad():
            weights[act, c] = m(window_batch).attn[0, 0, 0]
plotting.finish(CF.draw_window(theta, weights))

# %% tags=["remove-cell"]
glue("window-n", len(theta))
glue("window-nc", len({c for _, c in weights}))

# %% [markdown]
# ## The gradient of the Q-only model
#
# ```{prf:lemma} Gradient of the Q-only model
# :label: lem-qonly-gradient
#
# For one prompt with loss $\ell = \tfrac12(\hat y - y_q)^2$, logits $s_i = x_i^\top Q x_q$ and
# softmax weights $a_i$,
#
# $$
# \nabla_Q \ell = (\hat y - y_q) \sum_{i=1}^N a_i\, y_i\, (x_i - \bar x)\, x_q^\top ,
# \qquad \bar x = \sum_j a_j x_j .
# $$
# ```
#
# ```{prf:proof}
# The softmax derivative gives $\partial a_i / \partial s_j = a_i(\delta_{ij} - a_j)$, and
# $\partial s_j / \partial Q = x_j x_q^\top$, so
# $\partial a_i / \partial Q = a_i\,(x_i - \bar x)\,x_q^\top$. The chain rule through
# $\hat y = \sum_i a_i y_i$ finishes the proof.
# ```
#
# Two consequences of {prf:ref}`lem-qonly-gradient` carry through the convergence and nonlinear chapters. First, every term is an
# outer product $x_i x_q^\top$ of two tokens: when all tokens are features $v_k$, the gradient lies
# in $\mathrm{span}\{v_n v_k^\top\}$, so gradient descent from $Q = 0$ never leaves it and only the
# $K\times K$ block $S = V^\top Q V$ matters. Second, the gradient vanishes when
# $\hat y = y_q$ on every prompt — for linear tasks this requires all attention on the query's own
# feature, which needs $x_q^\top Q x_q \to \infty$: the minimum is an infimum, approached slowly.
# We check the closed form against autograd in float64 at a random $Q$.

# %%
Kg, dg, Ng = 4, 8, 12
Vg = random_orthonormal(Kg, dg, icl_lab.make_generator(2))  # K x d, orthonormal rows
sampler_g = PromptSampler.from_features(Vg, LinearTask(dg), N=Ng)
batch_g = sampler_g.sample(256, icl_lab.make_generator(3))  # 256 prompts
model_g = icl_lab.QOnlyAttention(dg, runs=1, init="normal", init_std=0.5).to(dtype=torch.float64)

loss = mse_loss(model_g(batch_g), batch_g).sum()
(auto,) = torch.autograd.grad(loss, model_g.Q)  # autograd, one run: (1, d, d)
closed = q_only_gradient_closed_form(model_g.Q.detach()[0], batch_g)  # the lemma: (d, d)

# %% tags=["remove-input"]
assert all(c.ok for c in ledger.judge(checks.gradient(auto[0], closed, Vg)))

# %% [markdown]
# ## A first experiment: attention against classical predictors as $N$ grows
#
# We train `QOnlyAttention` ($Q^{(0)}=0$, gradient descent on fresh prompts each step, $R$ seeds
# trained together in one batched optimizer) on linear tasks with $K$ orthonormal features,
# balanced $p_k = 1/K$, for several context lengths $N$, and compare its held-out loss with:
#
# * **the uniform average** of the context labels (the model at $Q = 0$);
# * **1-nearest neighbour** and **Nadaraya–Watson** at the best bandwidth of a grid;
# * **least squares** (minimum norm) — for orthonormal features and noiseless labels it recovers
#   $\langle w, v_k\rangle$ exactly for every feature seen in the context and predicts $0$
#   otherwise, which is the **Bayes-optimal** predictor (posterior mean under $w\sim\mathcal N(0,I)$);
# * **the best linear attention**, computed in closed form (the prediction is linear in $M$);
# * the convergence paper's floor for softmax attention,
#   $L^{\rm low} = \tfrac12\big(1 + \tfrac1{K-1}\big)\sum_k p_k(1-p_k)^N$: when the query's
#   feature is absent, attention must spread its unit mass over the other features.

# %%
cfg = ContextLengthConfig.for_scale(SCALE)  # to change one: for_scale(SCALE, lr=10.0), rerun
res = run_context_length(cfg)

# %% tags=["remove-cell"]
for key in ("seeds", "steps", "lr", "batch", "K", "d", "test_prompts"):
    glue(f"cs-{key}", getattr(cfg, key))
glue("cs-N", ", ".join(map(str, cfg.N_values)))

# %% [markdown]
# The run trains {glue:text}`cs-seeds` seeds for each context length $N$ in {glue:text}`cs-N`
# ({glue:text}`cs-steps` gradient-descent steps at learning rate {glue:text}`cs-lr:g`,
# {glue:text}`cs-batch` fresh prompts per step, $K =$ {glue:text}`cs-K`, $d =$ {glue:text}`cs-d`)
# and evaluates on {glue:text}`cs-test_prompts` held-out prompts.

# %% mystnb={"figure": {"caption": "Held-out loss against the context length $N$ for trained softmax attention (mean \u00b1 std over seeds) and the classical predictors, on linear tasks with orthonormal features. Losses that are exactly zero lie below the axis.", "name": "fig-common-baselines"}, "image": {"alt": "Log-log plot of held-out loss against N for attention, linear attention, nearest neighbour, Nadaraya-Watson, Bayes and the attention floor."}}
fig, ax = plt.subplots(figsize=(7, 4.2))
Ns = res.N  # the trained model: mean +- std over seeds; the baselines: one curve each
plotting.band(ax, Ns, res.trained_loss.T, label="softmax attention, trained (mean ± std)", log=True,
              marker="o")
ax.plot(Ns, res.uniform_loss, "--", label="uniform average (Q = 0)")
ax.plot(Ns, res.linear_attention_loss, "-.", label="best linear attention (closed form)")
ax.plot(Ns, res.nw_loss, ":", label="Nadaraya-Watson, best h")
ax.plot(Ns, res.knn1_loss, ":", label="1-nearest neighbour")
ax.plot(Ns, res.bayes_risk, "k-", lw=1, label="least squares = Bayes optimal (exact risk)")
ax.plot(Ns, res.lower_bound, "k--", lw=1, label=r"$L^{\rm low}$ (attention floor)")
ax.set_xscale("log", base=2)
ax.set_ylim(bottom=0.3 * float(min(res.trained_loss.min(), res.lower_bound.min())), top=1.0)
plotting.label(ax, "context length N", r"held-out loss $\frac{1}{2}E(\hat{y} - y_q)^2$",
               f"Linear tasks, $K = {cfg.K}$ orthonormal features, $d = {cfg.d}$")
ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
plotting.finish(fig)

# %% tags=["remove-cell"]
glue("cs-N-last", res.N[-1])
glue("cs-trained-last", float(res.trained_loss[-1].mean()))
glue("cs-floor-last", float(res.lower_bound[-1]))
rows = [[N, *(f"{float(v):.2e}" for v in (res.trained_loss[i].mean(), res.uniform_loss[i], res.linear_attention_loss[i],
                                         res.knn1_loss[i], res.bayes_risk[i], res.lower_bound[i])),
         f"{float(res.own_attention[i].mean()):.3f}"] for i, N in enumerate(res.N)]
glue("cs-table", Markdown(md_table(["$N$", "trained", "uniform", "best linear", "1-NN", "Bayes", "$L^{\\rm low}$",
                                    "own attention"], rows)))

# %% [markdown]
# What the figure shows (the measured numbers are in the table below): as $N$ grows, trained
# softmax attention falls far below the uniform average, while the best *linear* attention improves
# only like $1/N$. The nearest-neighbour and Nadaraya–Watson smoothers do better still once $N$ is
# large: a demonstration with exactly the query's token then sits at distance zero, so 1-NN (and
# Nadaraya–Watson at a small bandwidth) copies its label and its loss reaches zero, whereas the
# trained attention stays above its own floor $L^{\rm low}$ ({glue:text}`cs-trained-last:.1e`
# against {glue:text}`cs-floor-last:.1e` at $N =$ {glue:text}`cs-N-last`): a finite $Q$ always leaks
# some weight to the other features. Linear attention's weights cannot normalise, so its prediction $c\,|\mathcal V_k|\,\langle w, v_k\rangle$ fluctuates with
# the count $|\mathcal V_k|$. At the shortest contexts the order can flip: when the query's feature
# is often absent, the unnormalised linear read-out can answer close to $0$ (the Bayes answer),
# whereas softmax attention must put its unit mass on some other feature's labels — the gap between
# $L^{\rm low}$ and the Bayes risk. With few demonstrations gradient descent is also slower (the
# signal that drives $A_k$ up is weaker), so short-context models are the least converged.
#
# ```{glue:md} cs-table
# :format: myst
# ```

# %% tags=["remove-input"]
assert all(c.ok for c in ledger.judge(checks.context_length(res)))

# %% [markdown]
# Reaching the floor needs $x_q^\top Q x_q \to\infty$, and gradient descent approaches it only
# logarithmically slowly — the subject of the convergence chapter's phase analysis. The training
# curves (left, below) fall from the first steps and then flatten: at this balanced setting there is
# no visible plateau; the plateaus that the convergence chapter dissects appear for
# under-represented features.

# %% mystnb={"figure": {"caption": "Left: training loss on fresh prompts for each context length $N$ (exponential moving average, mean \u00b1 std over seeds). Right: the learned $S = V^\\top Q V$ at the longest context (seed 0): large diagonal entries $A_k$, negative off-diagonal entries $B_{k,n}$.", "name": "fig-common-training"}, "image": {"alt": "Left, decreasing training curves for several N; right, a heatmap of S with a dominant diagonal."}}
plotting.finish(CF.draw_training(res, cfg))

# %% [markdown]
# The learned $S$ is (nearly) diagonal: a large $A_k = v_k^\top Q v_k$ on the diagonal and
# negative off-diagonal entries $B_{k,n}$ — the two bilinear weights whose dynamics the convergence
# paper tracks.
#
# ## Explore: set $Q$ by hand and watch the attention
#
# Take $Q = \alpha I$ on the feature span. The slider below changes $\alpha$; the bars show the
# attention weights $a_i$ of one query over a prompt, coloured by each demonstration's feature. At
# $\alpha = 0$ attention is uniform; as $\alpha$ grows it concentrates on the tokens that share the
# query's feature. In the built book the slider works without a kernel (the frames are
# pre-rendered); in a live notebook an `ipywidgets` version under it recomputes for any $\alpha$.

# %% mystnb={"figure": {"caption": "The attention weights $a_i$ of one query over a prompt of {glue:text}`demo-N` demonstrations ({glue:text}`demo-K` orthonormal features in $d =$ {glue:text}`demo-d`), coloured by each demonstration's feature, for $Q = \\alpha I$: at $\\alpha = 0$ they are uniform; as $\\alpha$ grows they concentrate on the demonstrations that share the query's feature.", "name": "fig-common-alpha-slider"}}
K_demo, d_demo, N_demo = 4, 8, 24
demo_sampler = PromptSampler.from_features(standard_basis(K_demo, d_demo), LinearTask(d_demo), N=N_demo)
demo = demo_sampler.sample(1, icl_lab.make_generator(5))
alphas = icl_lab.notebook.frames([0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0])  # pre-rendered values of alpha
widgets.static_slider(functools.partial(CF.draw_attention, demo), alphas, name="$\\alpha$",
                      fmt="{:.1f}", alt=f"the attention weights of one query over a prompt of {N_demo} "
                                        "demonstrations, coloured by feature, for Q = alpha I")

# %% tags=["remove-cell"]
glue("demo-N", N_demo)
glue("demo-K", K_demo)
glue("demo-d", d_demo)
widgets.live(CF.live_attention(demo), alpha=ipywidgets.FloatSlider(value=1.0, min=0.0, max=8.0, step=0.25))

# %% [markdown]
# ## Exercises
#
# ````{exercise}
# :label: ex-ls-bayes
#
# Show that for orthonormal features, noiseless linear labels and $w \sim \mathcal N(0, I)$, the
# minimum-norm least-squares prediction equals the posterior mean of $\langle w, x_q\rangle$, and
# compute its risk as a function of $N$ and $p$.
# ````
#
# ````{solution} ex-ls-bayes
# :class: dropdown
#
# With $x_i \in \{v_k\}$, the design matrix has orthonormal rows up to repetition, so the
# minimum-norm solution is $\hat w = \sum_{k \text{ seen}} \langle w, v_k\rangle v_k$: it recovers
# the coordinates of $w$ along every observed feature and is zero elsewhere. The posterior of
# $\langle w, v_k\rangle$ is a point mass at $y_i$ when $v_k$ is observed and $\mathcal N(0,1)$
# otherwise, so the posterior mean is the same predictor. Its risk is
# $\tfrac12\sum_k p_k(1-p_k)^N$ — smaller than attention's floor $L^{\rm low}$ by the factor
# $(K-1)/K$, because attention must put its unit mass somewhere. Claim S8 above checks the identity on
# every held-out prompt.
# ````
#
# ````{exercise}
# :label: ex-linear-rate
#
# Why can no *linear* attention reach zero loss in this setting, however large $N$? Compute the loss
# of the best $M = cI$.
# ````
#
# ````{solution} ex-linear-rate
# :class: dropdown
#
# With orthonormal features the prediction is $\sum_i y_i x_i^\top M x_q
# = \sum_n |\mathcal V_n|\langle w, v_n\rangle\, v_n^\top M v_k$. To predict $\langle w, v_k\rangle$
# for every $w$ it needs $|\mathcal V_k|\,v_k^\top M v_k = 1$ and the other terms zero — but
# $c_k = |\mathcal V_k|$ is random (Binomial$(N, p_k)$), and $M$ cannot depend on it. With $M = cI$
# the loss is $\tfrac12\mathbb E(c\,c_k - 1)^2$, minimised at $c = \mathbb E c_k / \mathbb E c_k^2$
# with value $\tfrac12\big(1 - (\mathbb E c_k)^2/\mathbb E c_k^2\big)
# = \tfrac12\,\frac{1-p_k}{Np_k + 1 - p_k}$: it decays like $1/N$, never reaching zero at finite
# $N$, while softmax attention normalises the count away.
# ````
#
# We check the second answer's rate against the closed-form linear-attention optimum measured above.

# %%
exact = checks.linear_optimum_loss(res.N, p=1.0 / cfg.K)  # Exercise 2's formula, for each N
excess = 1 + cfg.d**2 / cfg.linear_fit_prompts  # fitting d^2 coefficients on n_fit prompts
z = (res.linear_attention_loss - exact * excess) / res.linear_attention_se  # in standard errors

# %% tags=["remove-cell"]
glue("s7-table", Markdown(md_table(
    ["$N$", "best linear attention (measured)", "exact formula", "deviation (standard errors)"],
    [[N, f"{m:.3e}", f"{e:.3e}", f"{v:+.1f}"] for N, m, e, v in
     zip(res.N, res.linear_attention_loss.tolist(), exact.tolist(), z.tolist())])))

# %% [markdown]
# ```{glue:md} s7-table
# :format: myst
# ```

# %% tags=["remove-input"]
assert all(c.ok for c in ledger.judge(checks.linear_rate(res)))

# %% [markdown]
# ## Claims ledger of this chapter
#
# Every claim checked above, with its kind and verdict; {ref}`claims-rules` says how each verdict is
# reached.

# %% tags=["remove-input"]
ledger.show();
ledger.export();
