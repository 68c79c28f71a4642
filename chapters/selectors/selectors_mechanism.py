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
# # Feature selectors I — attend, then decode
#
# {cite:t}`li2023selectors` (H. Li, M. Wang, et al., a NeurIPS 2023 workshop paper) analyse the
# first architecture in this book with a **non-linear read-out**: one softmax attention head followed by
# a two-layer ReLU perceptron. It is trained with online SGD on a hinge loss, on many binary
# classification tasks at once, and then predicts the label of a query from labelled demonstrations.
# The paper's story is *attend, then decode*:
#
# 1. the attention layer becomes a **feature selector**: $W_Q$ and $W_K$ grow along the patterns that
#    decide labels (the *relevant* patterns $\mu_j$) and not along the *irrelevant* ones ($\nu_k$), so
#    the query attends to the demonstrations that share its relevant pattern;
# 2. the MLP then **decodes the label embedding** ($\pm q$) of those demonstrations;
# 3. the same mechanism carries over to *unseen* tasks whose patterns are non-negative combinations
#    of the training patterns, as long as the label embeddings are the same and the prompt is long
#    enough.
#
# The paper has one figure and **gives no experimental parameters** (no $d$, $m$, $\eta$, $B$, $T$,
# $\alpha$, ...). Every number below is the book's reference setting, chosen so that every sweep
# trains all its seeds at once on a laptop CPU while the margin of Thm 1 stays visible; the text
# says where Theorem 1's own conditions do not hold.
#
# **This page** sets up the paper's notation and derives what the proofs use: why the model must read
# its context, the exact gradients, the initial attention, the feature-selection dynamics of $W_Q, W_K$
# and what the MLP reads. The chapter's other pages train the model over many seeds to reproduce
# Figure 1 ([part II](selectors_selection.ipynb)), follow the training through the attention collapse
# and the choice of training tasks ([part III](selectors_training.ipynb)), test unseen tasks
# ([part IV](selectors_out_of_domain.ipynb)), measure how the iteration count depends on $\alpha$, the
# noise $\tau$, $\lambda_*$, $\eta$ and $M$ ([part V](selectors_sample_complexity.ipynb)), and how long the
# prompts, how large the batches and how many the training tasks must be ([part VI](selectors_prompt_length.ipynb)).

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.77, "book": 0.9, "paper": 0.18})

# %% tags=["hide-input"]
import torch

import icl_lab
from IPython.display import Markdown

from icl_lab.data import cyclic_pair_tasks
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers import selectors as sel
from icl_lab.papers.selectors import checks
from icl_lab.papers.selectors import experiments as X
from icl_lab.render import md_table
from icl_lab.train import hinge_loss

SCALE, ledger = icl_lab.notebook.chapter("selectors", part="mechanism")

# %% [markdown]
# ## The setting in the paper's notation
#
# **Prompts**, eq. (1). A prompt holds $l$ demonstrations and a query; each token stacks an input
# $x_i\in\mathbb R^{d_\mathcal X}$ over its label embedding $y_i\in\{q,-q\}\subset\mathbb R^{d_\mathcal Y}$,
# and the query's label slot is zero:
#
# $$
# P = \begin{pmatrix} x_1 & \cdots & x_l & x_{l+1}\\ y_1 & \cdots & y_l & 0\end{pmatrix}
#   = (p_1,\dots,p_{l+1}) .
# $$
#
# **Inputs**, eq. (3). $M_1$ relevant patterns $\mu_j$ and $M_2$ irrelevant patterns $\nu_k$, all
# mutually orthogonal with norm $\beta$, $M = M_1 + M_2 \ge M_1^2$; every input is
# $x = \lambda\mu_j + \kappa\nu_k + n$ with $\lambda \ge \lambda_* > 0$ (eq. 4), $|\kappa|\le 1$ and
# $\|n\|\le\tau$.
#
# **Tasks.** Task $(a,b)$ labels inputs carrying $\mu_a$ as $+1$ and $\mu_b$ as $-1$; a demonstration
# carries $\mu_a$ or $\mu_b$ with probability $\alpha/2$ each and any other relevant pattern otherwise
# (then its label is a coin flip). $\mathcal N_*$ is the set of demonstrations that share the query's
# relevant pattern.
#
# **Model**, eq. (2), and its training:
#
# $$
# F(\Psi;P) = a^\top\mathrm{ReLU}\big(W_O\,\mathrm{sa}(\Psi,P)\big),\qquad
# \mathrm{sa}(\Psi,P) = \sum_{i=1}^{l} W_V p_i\,\mathrm{softmax}_i\big((W_K p_i)^\top W_Q p_{l+1}\big),
# $$
#
# with $W_Q, W_K, W_V$ initialised as non-square diagonal matrices ($\delta$ on the first $d_\mathcal X$
# diagonal entries of $W_Q, W_K$, on all of $W_V$), $W_O$ with $\mathcal N(0,\xi^2)$ entries and a
# fixed $a\in\{\pm 1/m\}^m$; the hinge loss $\max\{0, 1 - yF\}$ and mini-batch SGD with step $\eta$,
# fresh prompts every step ($N = BT$ samples). The library's `AttentionMLP` is exactly this model
# (it computes it with the products reordered by associativity, $p_s^\top W_K^\top(W_Q p_{l+1})$ and
# $W_V\sum_s\sigma_s p_s$: about 2.7 times faster than projecting every token; `reference_forward`
# is eq. (2) as written, and a unit test checks they agree);
# `X.SelectorsConfig` holds the choices the paper leaves open:
#
# | choice (our reading) | value here | why |
# |---|---|---|
# | patterns | $\mu_j = \beta e_j$, $\nu_k = \beta e_{M_1+k}$, 8 spare directions | $W_Q^{(0)} = \delta I$, so the basis does not matter |
# | $M_1, M_2$ | $8, 56$ ($M = 64 = M_1^2$) | smallest size meeting $M \ge M_1^2$ |
# | $\beta, \delta, \xi$ | $5, 0.1, 0.01$ | $\beta\approx\log\log M_1$ barely learns; $\delta$: the edge of $(0, 0.1)$ |
# | $m$, $m_a$, $m_b$ | $200$, $d_\mathcal X + d_\mathcal Y$, $d_\mathcal X + d_\mathcal Y + 8$ | extra rows of $W_Q, W_K$ are provably inert (§2) |
# | $\eta$, $B$ | $1$, $64$ | $a_i = \pm 1/m$ averages the neurons: $\eta$ of order 1 |
# | $\alpha$, $l_{tr}$ | $0.6$, $\lceil 2\ln M/\alpha\rceil = 14$ | eq. (5) with constant 1 |
# | $\lambda$, $\kappa$, noise | $U[0.6,1]$, $U[-0.5,0.5]$, radius $\tau U[0,1]$, $\tau = 0.25$ | the paper gives only bounds |
# | query | $\mu_a$ or $\mu_b$ with probability $1/2$ | zero error is impossible otherwise |
# | task set | all $M_1(M_1-1)$ ordered pairs, or the cyclic $(i, i+1)$ | both cover each $\mu_i$ evenly (Lemma 1) |

# %%
cfg0 = X.SelectorsConfig.for_scale(SCALE)
demo_sampler = cfg0.sampler(tasks=cyclic_pair_tasks(cfg0.M1))
demo = demo_sampler.sample(1, icl_lab.make_generator(0))
task = demo_sampler.tasks[int(demo.task_ids[0])]

# %% tags=["remove-cell"]
glue("sel-demo", Markdown(
    f"Dimensions: $d_\\mathcal X = {cfg0.d_x}$, $d_\\mathcal Y = {cfg0.d_y}$, $M = {cfg0.M}$ patterns, $l_\\text{{tr}} = {cfg0.l}$ "
    f"demonstrations, $m = {cfg0.m}$ neurons. One prompt of task $(a, b) = ({task.a}, {task.b})$: the query carries "
    f"$\\mu_{{{int(demo.query_ids[0, 0])}}}$ and its label is ${int(demo.y_query[0, 0]):+d}$.\n\n"
    + md_table(["demonstration", *[str(s + 1) for s in range(demo.ids.shape[-1])]],
               [["pattern", *[f"$\\mu_{{{int(k)}}}$" for k in demo.ids[0].tolist()]],
                ["label", *[f"${int(v):+d}$" for v in demo.y[0].tolist()]]])))

# %% [markdown]
# ```{glue:md} sel-demo
# :format: myst
# ```

# %% [markdown]
# Demonstrations whose pattern is neither $a$ nor $b$ carry coin-flip labels: a fraction $1-\alpha$ of
# every prompt is label noise that the model must learn to ignore.
#
# ## Derivations
#
# We follow the order of the paper's argument: why the task forces in-context learning, the gradients,
# the initial attention, the feature-selection dynamics of $W_Q, W_K$ and the attention collapse, and what
# the MLP reads. The $W_V$ and lucky-neuron lemmas are checked with the trainings of
# [part III](selectors_training.ipynb); [part V](selectors_sample_complexity.ipynb) derives the $W_O$ dynamics
# (Lemma 3) and the iteration count (48)–(53), [part VI](selectors_prompt_length.ipynb) the prompt length
# (eqs. 37–38) and the batch size (39).
#
# ### Why the model must learn *in context*
#
# The query enters $F$ **only through the attention weights**: the sum in (2) runs over the
# demonstrations, and $p_{l+1}$ appears only inside the softmax. With uniform attention, the label part
# of $\mathrm{sa}$ for a query carrying $\mu_a$ is
# $\delta\,\frac1l\sum_i y_i \to \delta q\big(\tfrac\alpha2 - \tfrac\alpha2\big) + 0 = 0$ in expectation: the
# $\mu_b$ demonstrations cancel the $\mu_a$ ones and the rest have random labels. So nothing the MLP
# reads is correlated with the query's label until the attention becomes query-dependent. At
# initialisation the attention is *almost* uniform — the scores are $\delta^2 x_s^\top x_{l+1}$, a small
# bias towards same-pattern demonstrations — and that small bias is the seed of everything that
# follows. We measure the correlation $\mathbb E[y\,\langle \bar y, q\rangle]/\beta^2$ of the query
# label with the attention-weighted label part $\bar y = \sum_s\sigma_s y_s$, at initialisation and
# with the attention restricted to $\mathcal N_*$ (its value after training).

# %%
chk_cfg = X.SeedSweepConfig.for_scale(SCALE)
chk_sampler = chk_cfg.sampler()
chk_batch = chk_sampler.sample(4000, icl_lab.make_generator(11))
model0 = chk_cfg.model([0]).double()
with torch.no_grad():
    out0 = model0(chk_batch)
att0 = out0.attn[0, :, 0, :]
same = (chk_batch.ids == chk_batch.query_ids).double()
lab = chk_batch.y  # the label part of token s is y_s q
corr_init = float((chk_batch.y_query[:, 0] * (att0 * lab).sum(-1)).mean())
corr_uniform = float((chk_batch.y_query[:, 0] * lab.mean(-1)).mean())
sel_att = same / same.sum(-1, keepdim=True).clamp_min(1)
corr_sel = float((chk_batch.y_query[:, 0] * (sel_att * lab).sum(-1)).mean())
mass0 = float((att0 * same).sum(-1).mean())

# %% tags=["remove-cell"]
glue("sel-corr-uniform", f"{corr_uniform:+.3f}")
glue("sel-corr-init", f"{corr_init:+.3f}")
glue("sel-corr-sel", f"{corr_sel:+.3f}")
glue("sel-mass0", mass0)
glue("sel-half-alpha", chk_cfg.alpha / 2)
assert abs(corr_uniform) < 0.03 and corr_init > corr_uniform and corr_sel > 0.9

# %% [markdown]
# $\mathbb E[y\,\langle \bar y, q\rangle]/\beta^2$ is {glue:text}`sel-corr-uniform` under uniform attention,
# {glue:text}`sel-corr-init` at initialisation and {glue:text}`sel-corr-sel` with the attention on
# $\mathcal N_*$. At initialisation the attention puts a mass {glue:text}`sel-mass0:.3f` on $\mathcal N_*$
# (uniform attention: $\alpha/2 =$ {glue:text}`sel-half-alpha:.2f`).

# %% [markdown]
# Uniform attention carries no label signal (up to sampling noise), the initial attention a little,
# and attention on $\mathcal N_*$ recovers the query's label on every prompt whose $\mathcal N_*$ is
# non-empty. [Part VI](selectors_prompt_length.ipynb) turns the same argument into Lemma 1: averaged over the training tasks, a
# pattern must not predict a label by itself, or the model can skip the context.
#
# ### The gradients
#
# ```{prf:lemma} Gradients of the attention–MLP model (eqs. 72, 82, 121, 131)
# :label: lem-sel-gradients
#
# Let $\sigma_s$ be the softmax weights, $\bar p = \sum_s \sigma_s p_s$, $\mathrm{sa} = W_V\bar p$,
# $h = W_O\,\mathrm{sa}$, $g_i = a_i\mathbb 1[h_i\ge 0]$ and $w_s = g^\top W_O W_V p_s$. Then
#
# $$
# \frac{\partial F}{\partial W_O} = g\,\mathrm{sa}^\top,\quad
# \frac{\partial F}{\partial W_V} = W_O^\top g\,\bar p^\top,\quad
# \frac{\partial F}{\partial W_Q} = \sum_s \sigma_s w_s\,W_K(p_s - \bar p)\,p_{l+1}^\top,\quad
# \frac{\partial F}{\partial W_K} = \sum_s \sigma_s w_s\,W_Q p_{l+1}(p_s - \bar p)^\top,
# $$
#
# and the hinge loss multiplies each by $-y\,\mathbb 1[yF<1]$.
# ```
#
# ```{prf:proof}
# $F = \sum_i a_i\,\mathrm{ReLU}(h_i)$ gives $\partial F/\partial h = g$. The first two follow from
# $h = W_O W_V \bar p$. For the scores $e_s = p_s^\top W_K^\top W_Q p_{l+1}$ the softmax Jacobian is
# $\partial\sigma_s/\partial e_r = \sigma_s(\delta_{sr} - \sigma_r)$, so
# $\partial F/\partial e_r = \sigma_r(w_r - \sum_s\sigma_s w_s)$; with
# $\partial e_r/\partial W_Q = W_K p_r p_{l+1}^\top$ and $\sum_r\sigma_r(w_r - \bar w)W_K p_r =
# \sum_r \sigma_r w_r W_K(p_r - \bar p)$ the third follows, and the fourth likewise.
# ```
#
# The paper's (72), (82), (121) and (131) write the loss factor as $(-y^n)$ only: they assume the hinge
# is active. Three consequences that the proofs use, all exact:
#
# * the **label columns of $W_Q$ get zero gradient** (eqs. 108, 113): $p_{l+1}$ has a zero label part;
# * **rows of $W_Q, W_K$ beyond $d_\mathcal X$ stay zero**: row $i$ of $\partial F/\partial W_Q$ is
#   proportional to $(W_K p_s)_i = 0$ and vice versa, so the width $m_a$ is inert (we use
#   $m_a = d_\mathcal X + d_\mathcal Y$);
# * the label-column gradient of $W_K$ "averages out" by the $\pm q$ symmetry (109)–(110), so that
#   "along further iterations, only feature space embeddings matter" for the attention (text after
#   eq. 121). This one is an approximation: we measure the gradient ratio at initialisation below and
#   measure the label part's share of the trained attention scores in [part II](selectors_selection.ipynb).
#
# We check the lemma against autograd in float64 on a perturbed model, and the three consequences.

# %% tags=["remove-output"]
gmodel = chk_cfg.model([0]).double()
with torch.no_grad():
    gen = icl_lab.make_generator(5)
    for p in (gmodel.W_Q, gmodel.W_K, gmodel.W_V):
        p[..., : chk_cfg.d_x, :].add_(0.05 * torch.randn(p[..., : chk_cfg.d_x, :].shape, generator=gen, dtype=torch.float64))
    gmodel.W_O.mul_(100.0)  # entries of size ~1: both ReLU branches and the hinge's kink are hit
gbatch = chk_sampler.sample(256, icl_lab.make_generator(6))
gloss = hinge_loss(gmodel(gbatch), gbatch).sum()
grads = dict(zip(("W_Q", "W_K", "W_V", "W_O"), torch.autograd.grad(gloss, [gmodel.W_Q, gmodel.W_K, gmodel.W_V, gmodel.W_O])))
closed = sel.gradients_closed_form(gmodel, gbatch)
dx = chk_cfg.d_x
init_grads = torch.autograd.grad(hinge_loss(model0(chk_batch), chk_batch).sum(), [model0.W_K])[0][0]
wk_label_ratio = float(init_grads[:, dx:].norm() / init_grads[:, :dx].norm())
print(f"at initialisation ||grad W_K[:, label]|| / ||grad W_K[:, input]|| = {wk_label_ratio:.3f} (4000 prompts)")

# %% tags=["remove-input"]
m12 = checks.gradients(grads, closed, dx)
ledger.judge(m12)
assert m12[0].quantities["relative error"] < 1e-9 and m12[1].quantities[r"largest $\lvert\nabla\rvert$ on the label columns of $W_Q$"] == 0.0

# %% [markdown]
# ### The initial attention (eq. 83)
#
# At $t=0$, $(W_K^{(0)}p_s)^\top W_Q^{(0)} p_{l+1} = \delta^2 p_s^\top p_{l+1} = \delta^2 x_s^\top x_{l+1}$,
# which for orthogonal patterns is
# $\delta^2\beta^2\big(\lambda_s\lambda_{l+1}\mathbb 1[\text{same }\mu] + \kappa_s\kappa_{l+1}\mathbb 1[\text{same }\nu]\big)$
# plus noise terms: a bias of size $\delta^2\beta^2\lambda^2\approx 0.16$ towards $\mathcal N_*$ and a
# distractor bias towards demonstrations sharing the query's irrelevant pattern (the sets
# $\mathcal N_{n_u}$ of (84)–(88)). Starting from these scores, the proofs track
# $\gamma_t$, the attention mass **outside** $\mathcal N_*$ (eqs. 43, 91). The bounds (84)–(88) use
# "$\log M_2\ge\delta^2\beta^2$" and "$\log M_1\le\delta^2\beta^2$", and (155) "$\log M_1\ge\delta^2\beta^2$":
# the last two hold together only at $\delta^2\beta^2 = \log M_1$; ours ($\approx 0.2 < \log 8$) meet (155), violate
# (88), and every card records both. We treat $\beta$ as a free scale: with $\beta\approx 1$ the initial bias
# $\delta^2\beta^2\lambda^2\approx 0.004$ is too weak to start learning in any reasonable time.

# %%
with torch.no_grad():
    tokens = chk_batch.embedding()
    x_dem, x_q = tokens[:, :-1, :dx], tokens[:, -1, :dx]
    scores_formula = chk_cfg.delta**2 * torch.einsum("bsd,bd->bs", x_dem, x_q)
    att_formula = torch.softmax(scores_formula, -1)

# %% tags=["remove-input"]
m3 = checks.initial_attention(att_formula, att0)
ledger.judge(m3)
assert m3.quantities[r"largest gap between the initial attention and $\mathrm{softmax}(\delta^2 x_s^\top x_q)$"] < 1e-12

# %% [markdown]
# ### Feature selection and the attention collapse (Lemma 4, proof of Theorem 1)
#
# Projecting the $W_Q$ gradient of {prf:ref}`lem-sel-gradients` on $\mu_j$ (Lemma 4, (94)–(103)) gives a
# positive drift proportional to $(1-\gamma_t)\gamma_t\lambda_*\beta^4$ on $\mu_j^\top W_Q\mu_j$ — the
# demonstrations in $\mathcal N_*$ have $p_s - \bar p$ pointing along the query's pattern — while the
# cross terms $\mu_l^\top(\cdot)\mu_j$ are smaller by $1/M_1$ (95), (104), and the terms on $\nu$ are tiny
# because any one $\nu_k$ is rare in a batch (105)–(107). So $W_K^\top W_Q$ grows on
# $\mathrm{span}\{\mu\}$ and stays near $\delta^2 I$ on $\mathrm{span}\{\nu\}$: a **feature selector**.
# Note the factor $(1-\gamma)\gamma$: no growth while attention is useless *or* once it has collapsed.
#
# The proof then bounds the score gap by
# $\frac{\eta^2}{M_1^2}\big(\sum_{b<T}\frac{\eta^2 b^2}{a}\gamma_b\big)^2$ (44) and obtains the
# recursion
#
# $$
# \gamma_T \le \frac{1-\alpha}{\alpha}\exp\Big(-\frac{\eta^2}{M_1^2}\Big(\sum_{b=0}^{T-1}\frac{\eta^2b^2}{a}\gamma_b\Big)^2\Big) \tag{46}
# $$
#
# "when $\sum_{b<t_0}\eta^2b^2\gamma_b/a \ge \frac{1-\alpha}\alpha\eta^{-1}M_1\sqrt{\log M}$, $\gamma_{t_0}$
# reaches $\Theta(1/M)$". The prefactor exceeds 1 for $\alpha < 1/2$ (we clip at $\gamma\le 1$), and the proof
# keeps only some terms of (44), so the constants are free. While $\gamma\approx\gamma_0$, the sum grows like $t^3$ and the
# exponent like $t^6$: a **plateau, then a sudden collapse**, whose *relative* width
# $(t_{10\%} - t_{90\%})/t_{50\%}$ does not depend on the free constants at all (they only rescale
# time). We compare that scale-free number with the measured collapse in [part III](selectors_training.ipynb).
#
# ### What the MLP reads (Proposition 2)
#
# Eq. (10) compares, for a neuron $i$, $W_{O\,i,\text{label}}\,\mathrm{sa}_\text{label}$ with
# $W_{O\,i,\text{input}}\,\mathrm{sa}_\text{input}$: a split of $h_i$ by the **coordinates** of
# $\mathrm{sa}$. Figure 1(b)'s caption instead speaks of the "output contribution from the feature
# embeddings" and "from the label embeddings" — a split by the **part of the tokens** that is read:
# $h = W_O W_V[:,\text{input}]\,\bar x + W_O W_V[:,\text{label}]\,\bar y$ with
# $\bar p = (\bar x, \bar y) = \sum_s\sigma_s p_s$. The two agree at initialisation ($W_V = \delta I$)
# and differ once $W_V$ has learned to write label information into the first $d_\mathcal X$
# coordinates of the values. We measure both; **the figure uses the token-part split**, which the caption
# describes and whose two terms add up to $h$ exactly ([part II](selectors_selection.ipynb)).

# %% [markdown]
# ## Summary
#
# * The query enters the model only through the attention weights, so the model must learn to read its
#   context; the exact gradients ({prf:ref}`lem-sel-gradients`) show why the label columns of $W_Q$ and the
#   extra rows of $W_Q, W_K$ never move.
# * At initialisation the attention scores are $\delta^2 x_s^\top x_{l+1}$: a small bias towards the
#   demonstrations that share the query's pattern, the seed of everything that follows.
# * Projected on the patterns, the gradient of $W_Q, W_K$ grows $W_K^\top W_Q$ on $\mathrm{span}\{\mu\}$ and not on
#   $\mathrm{span}\{\nu\}$ (a feature selector), at a rate $(1-\gamma_t)\gamma_t$ that predicts a plateau, then a
#   sudden collapse of the attention onto $\mathcal N_*$.
# * Proposition 2's split of the MLP input into label and feature parts can be read two ways; we measure both.
#
# [Part II](selectors_selection.ipynb) trains the model over many seeds and reproduces Figure 1.

# %% [markdown]
# ## Exercise
#
# ````{exercise}
# :label: ex-sel-rows
#
# Show that if a row of $W_Q$ and the same row of $W_K$ are zero at initialisation, both stay zero
# under gradient descent — so the paper's "$m_a > d_\mathcal X + d_\mathcal Y$" adds nothing. Is the same
# true of the extra rows of $W_V$?
# ````
#
# ```{solution-start} ex-sel-rows
# :class: dropdown
# ```
#
# By {prf:ref}`lem-sel-gradients`, row $i$ of $\partial F/\partial W_Q$ is
# $\sum_s\sigma_s w_s (W_K(p_s-\bar p))_i\,p_{l+1}^\top$, and $(W_K p)_i = 0$ for every $p$ when row $i$
# of $W_K$ is zero; symmetrically for $W_K$. Both rows receive zero gradient and stay zero: the score
# $p_s^\top W_K^\top W_Q p_{l+1} = \sum_i (W_Kp_s)_i(W_Qp_{l+1})_i$ never uses them. Rows of $W_V$ are
# different: row $j$ of $\partial F/\partial W_V$ is $(W_O^\top g)_j\,\bar p^\top$, non-zero because the
# random $W_O$ has a non-zero column $j$. The extra value coordinates do learn (slowly, since they start
# at zero), which is why we keep $m_b > d_\mathcal X + d_\mathcal Y$. The cell below checks both on the
# trained models.

# %%
cfg = X.SeedSweepConfig.for_scale(SCALE)
sweep = full(X.run_seed_sweep, cfg)  # the trainings of part II
dxy = cfg.d_x + cfg.d_y
WQ_T, WK_T, WV_T = (w.detach() for w in (sweep.model.W_Q, sweep.model.W_K, sweep.model.W_V))
qk_extra = max(float(WQ_T[:, dx:].abs().max()), float(WK_T[:, dx:].abs().max()))
wv_extra = float(WV_T[:, dxy:].abs().max())

# %% tags=["remove-cell"]
glue("sel-ex-qk", "exactly zero" if qk_extra == 0 else f"at most {qk_extra:.1e}")
glue("sel-ex-wv", f"{wv_extra:.2g}")

# %% [markdown]
# After training (the seed sweep of [part II](selectors_selection.ipynb)), the rows of $W_Q$ and $W_K$ beyond $d_\mathcal X$ are {glue:text}`sel-ex-qk`; the extra
# rows of $W_V$ reach {glue:text}`sel-ex-wv` in absolute value: they learn.

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["remove-cell"]
assert float(WQ_T[:, dx:].abs().max()) == 0.0 and float(WK_T[:, dx:].abs().max()) == 0.0
assert float(WV_T[:, dxy:].abs().max()) > 0

# %% [markdown]
# ## Claims ledger (part I)
#
# The claims checked on this page. Parts [II](selectors_selection.ipynb), [III](selectors_training.ipynb),
# [IV](selectors_out_of_domain.ipynb), [V](selectors_sample_complexity.ipynb) and [VI](selectors_prompt_length.ipynb)
# have their own ledgers; the synthesis chapter joins them.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
