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
# # In-context learning in one-layer transformers
#
# This book is an executable course on four theory papers about in-context learning in transformers
# with a single attention layer. Each paper gets a chapter that sets up its model in the paper's own
# notation, works through the key derivations, and then runs experiments that check its statements one
# by one. Every chapter ends with a ledger that records which claims the book reproduced and which it
# did not. This page explains what the papers have in common, gives a short map of each, fixes the
# notation used throughout, and says how to run the book.
#
# ```{admonition} Start here
# :class: tip
#
# 1. **Twenty minutes.** Read {ref}`what in-context learning is <intro-icl>`, the
#    {ref}`one model family <intro-family>` all four papers share, and the verdicts below.
# 2. **A first session (two to three hours).** [Chapter 1](common_setup.ipynb) builds the model in
#    code and runs a first experiment; then pick one paper chapter:
#    [convergence](convergence/convergence_setup.ipynb), [nonlinear regression](nonlinear/nonlinear_lemmas.ipynb),
#    [the Lipschitz window](window/window_smoother.ipynb) or [feature selectors](selectors/selectors_mechanism.ipynb).
# 3. **The conclusions.** The [synthesis](../synthesis/synthesis.ipynb) starts with the verdicts of all
#    four papers and the open problems the reproduction surfaced.
# 4. **Run it yourself.** {ref}`How to read and run the book <intro-run>` below; every
#    page with code is a notebook.
# ```
#
# ## Where the verdicts stand
#
# Every chapter checks its paper's statements one by one and ends with a *claims ledger*
# ({doc}`claims_rules` says how a status is decided). The papers' own claims, by status, in the
# ledgers shipped with the book:

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.05, "book": 0.07, "paper": 0.05})

# %% tags=["remove-cell"]
from IPython.display import Markdown

from icl_lab import get_scale, paths
from icl_lab.claims import STATUSES, ClaimsTable
from icl_lab.notebook import glue
from icl_lab.render import md_table

# the headline: the ledgers exported at the papers' own settings, shipped in results/reference/claims/paper/
verdicts = ClaimsTable.load(paths.REFERENCE / "claims" / "paper")
names = {"common": "Chapter 1 (previews of the papers)", "convergence": "convergence (Huang, Cheng, Liang)",
         "nonlinear": "nonlinear regression (Li, Duan, Liang)", "window": "Lipschitz window (Collins et al.)",
         "selectors": "feature selectors (Li, Wang et al.)"}
rows = []
for paper in [*(p for p in verdicts.papers if sum(verdicts.counts(p).values())), None]:
    c = verdicts.counts(paper)
    rows.append([names.get(paper, paper) if paper else "**all papers**", *(c[s] for s in STATUSES), sum(c.values())])
glue("intro-verdicts", Markdown(md_table(["paper", *STATUSES, "total"], rows)))
for kind in ("consistency", "finding"):
    glue(f"intro-{kind}", sum(verdicts.counts(None, kind).values()))
glue("intro-scale", get_scale())

# %% [markdown]
# ```{glue:md} intro-verdicts
# :format: myst
# ```
#
# Decided at the papers' own settings (the `paper` scale). Counted apart: {glue:text}`intro-consistency`
# consistency checks of the book's own code and {glue:text}`intro-finding` findings of the book's own.
# Each chapter's ledger and the synthesis show the verdicts of the build you are reading
# ({glue:text}`intro-scale` scale); the reproduction page lists the claims whose status differs
# between the scales, with the reason.

# %% [markdown]
# **Who it is for.** Graduate students and researchers who want to understand what the theory of
# in-context learning actually proves, and to see each statement happen (or not) on a laptop; and
# anyone who wants to reuse the library for their own in-context learning experiments.
#
# **What to know first.** Linear algebra (eigenvalues, projections), probability (expectations,
# concentration at the level of "the average of $N$ samples is within $1/\sqrt N$"), gradient descent,
# and enough Python to read short NumPy/PyTorch cells. The softmax attention layer is introduced from
# scratch in Chapter 1; none of the four papers needs to be read beforehand, although each chapter
# points to the sections it follows.
#
# **How long it takes.** Chapter 1 and one paper chapter make a self-contained session of two to three
# hours of reading; the whole book is a few days' course. Running a notebook yourself takes minutes at
# the default scale on a laptop CPU: its first cell prints its measured run time at each scale and lets
# you choose one (`ci` is the fastest).
#
# (intro-icl)=
# ## What in-context learning is
#
# Large language models can pick up a new task from a few examples written into the prompt, with no
# change to their weights. {cite:t}`brown2020language` called this *in-context learning* (ICL).
# {cite:t}`garg2022what` turned it into a controlled experiment. A *prompt* holds $N$ labelled
# demonstrations and one unlabelled query,
#
# $$
# P = (x_1, y_1, x_2, y_2, \dots, x_N, y_N, x_q), \qquad y_i = f(x_i) \ (+\ \text{noise}),
# $$
#
# where the task $f$ is drawn at random for each prompt. A model $F_\theta$ has learned in context if
# $F_\theta(P) \approx f(x_q)$ for tasks it has never seen, with the parameters $\theta$ held fixed. The
# parameters are learned once, in *pretraining*, by minimising the ICL loss over many random prompts:
#
# $$
# \mathcal L(\theta) = \mathbb E_{f,\,P}\big[\ell\big(F_\theta(P),\, f(x_q)\big)\big],
# $$
#
# with squared loss for regression and hinge loss for classification. The questions are then ordinary
# learning-theory questions. Which predictor does pretraining find? How fast does gradient descent find
# it? On which tasks does it work at test time?
#
# ## Why a single attention layer
#
# A single attention layer already does the core operation. It compares the query with every
# demonstration, turns the comparisons into weights, and returns a weighted combination of the
# demonstrations' labels. It is also small enough that its training dynamics can be followed exactly.
# In the simplest versions the only parameter is a $d \times d$ score matrix, and on feature-based data
# the dynamics reduce to a few scalars per feature. Many theoretical analyses use *linear*
# attention, which drops the softmax. Among them, {cite:t}`vonoswald2023transformers` relate linear
# self-attention to gradient descent, and {cite:t}`zhang2024trained` prove that gradient flow on a linear
# self-attention layer learns linear models in context. The four papers in this book keep the softmax
# (or, in the selectors paper, softmax attention followed by an MLP) and ask what the nonlinearity
# changes.
#
# (intro-family)=
# ## One model family
#
# All four papers build on the same attention read-out. For a query $x_q$ the model returns
#
# $$
# \hat y(x_q) \;=\; \rho\Big(\sum_{i=1}^{N} a_i(x_q)\, u_i\Big),
# \qquad
# s_i = x_i^\top M\, x_q,
# $$
#
# with attention weights
#
# $$
# a_i(x_q) =
# \begin{cases}
# \dfrac{e^{s_i}}{\sum_{j=1}^{N} e^{s_j}} & \text{(softmax attention)},\\[6pt]
# s_i & \text{(linear attention)}.
# \end{cases}
# $$
#
# Here $u_i$ is the value carried by demonstration $i$ and $\rho$ is the read-out. The attention
# logit of demonstration $i$ is the bilinear form $x_i^\top M x_q$, with the key on the left and the
# query on the right. The papers differ in three choices:
#
# - **How $M$ is parametrised.**
#   - *Q-only* (convergence and nonlinear papers): $M = Q$, initialised at $Q = 0$, is the only trained
#     parameter. The value weight just copies the label, so $u_i = y_i$.
#   - *Key–query product* (window paper): $M = M_K^\top M_Q$. In the paper's experiments the two factors
#     are tied, $M_K = M_Q = W$, so that $M = W^\top W$.
#   - *Full attention with an MLP* (selectors paper): $W_K$, $W_Q$, $W_V$ act on tokens $p_i$ that stack
#     the input and a label embedding, with score $p_i^\top W_K^\top W_Q\, p_q$. The query's label slot is
#     zero and the paper argues that the label part of the score stays negligible, so to that
#     approximation $M$ is the input block of $W_K^\top W_Q$.
# - **The activation.** All four papers use softmax. The window paper also analyses linear attention,
#   as a baseline that fails.
# - **The read-out $\rho$.** It is the identity in the first three papers, so $\hat y = \sum_i a_i y_i$.
#   In the selectors paper the values are $u_i = W_V p_i$, $\rho(h) = a^\top \mathrm{ReLU}(W_O h)$ with a
#   fixed vector $a$, and the predicted label is $\operatorname{sign}(\hat y)$.
#
# With softmax and the identity read-out, $\hat y$ is a weighted average of the context labels whose
# weights are set by similarity to the query. This is a Nadaraya–Watson kernel regression estimator
# {cite:p}`nadaraya1964,watson1964`, and $M$ sets the shape and width of the kernel.
# The figure below shows that kernel at work. [Chapter 1](common_setup.ipynb) builds this family once in code; the paper chapters reuse it.

# %% mystnb={"figure": {"caption": "Softmax attention as a kernel smoother. {glue:text}`intro-n` noisy demonstrations of a task on the unit circle (grey dots) and the prediction $\\hat y(x_q)$ of one softmax attention layer with score matrix $M = w I$ as the query moves around the circle, for {glue:text}`intro-nw` values of $w$: a small $w$ averages almost every label, a large one only the nearest. Choosing $M$ is choosing the kernel.", "name": "fig-intro-kernel"}, "image": {"alt": "Three prediction curves over the query angle: a flat one for the smallest w, one close to the dotted task curve for the middle w, and a jagged one that follows the nearest dots for the largest w."}}
import math

import torch

from icl_lab import plotting

g = torch.Generator().manual_seed(0)
n, ws = 40, (1, 8, 60)  # demonstrations; the scales w of M = w I
theta = torch.rand(n, generator=g, dtype=torch.float64) * 2 * math.pi
X = torch.stack([theta.cos(), theta.sin()], 1)  # inputs on the unit circle
y = torch.cos(3 * theta) + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)
tq = torch.linspace(0, 2 * math.pi, 400, dtype=torch.float64)
Xq = torch.stack([tq.cos(), tq.sin()], 1)  # queries all around the circle
fig, ax = plotting.figure(1, height=3.2)
ax.plot(theta, y, "o", color="0.55", ms=4, label=r"demonstrations $(x_i, y_i)$")
for w, color in zip(ws, plotting.COLORS):  # prediction: softmax weights times the labels
    ax.plot(tq, torch.softmax(w * Xq @ X.T, -1) @ y, color=color, label=rf"attention, $M = {w}\,I$")
ax.plot(tq, torch.cos(3 * tq), "k:", label=r"task $f$")
plotting.label(ax, r"query angle $\theta_q$ (radians)", r"prediction $\hat y(x_q)$")
plotting.legend_outside(ax, "right")
plotting.finish(fig)

# %% tags=["remove-cell"]
glue("intro-n", n)
glue("intro-nw", len(ws))

# %% [markdown]
# ## The four papers
#
# **In-Context Convergence of Transformers** {cite:p}`huang2024convergence`. The tokens are $K$
# orthonormal features $v_1, \dots, v_K$, and token $i$ equals $v_k$ with probability $p_k$. The tasks
# are linear, $y = \langle w, x\rangle$, with $w$ of zero mean and identity covariance. Only $Q$ is
# trained, by gradient descent on the population loss starting from $Q = 0$. For *balanced* features
# ($p_k = \Theta(1/K)$) the paper proves convergence to near-zero error in two phases. By the end, the
# attention of a query $v_k$ concentrates on the tokens equal to $v_k$. For *imbalanced* features (one
# dominant feature with $p_1 = \Theta(1)$), convergence is stage-wise. The dominant feature is learned
# in one phase, and each under-represented feature needs four phases. The proofs track two kinds of
# scalar: the weight $A_k = v_k^\top Q v_k$ on the query's own feature and the cross weights
# $B_{k,n} = v_n^\top Q v_k$. The text this book works from is the anonymous double-blind version of
# the paper; the public version may differ in details.
#
# **Provable In-Context Learning of Nonlinear Regression with Transformers**
# {cite:p}`li2025nonlinear`. The model, initialisation and algorithm are the same as in the convergence
# paper. The data model is broader: the features only need to be separated by $\Theta(\Delta)$ (they
# need not be orthonormal), and the tasks form a non-degenerate $L$-Lipschitz nonlinear function class.
# The paper states a phase transition set by the Lipschitz constant. In a *flat* regime
# $L \lesssim 1/(\Delta\delta)$, where $\delta$ measures prompt imbalance, training takes two phases. In
# a *sharp* regime it takes three, and the last phase is slow. In both regimes attention concentrates on
# same-feature tokens, and the trained model generalises to unseen functions in the class. The paper's
# experiments use a larger transformer block (attention, feed-forward network and LayerNorm) on random
# cosine tasks, not the Q-only theory model.
#
# **In-Context Learning with Transformers: Softmax Attention Adapts to Function Lipschitzness**
# {cite:p}`collins2024softmax`. The inputs are continuous (uniform on the unit sphere), the labels
# carry noise of standard deviation $\sigma$, and the tasks share a Lipschitz constant $L$ (affine,
# two-piece ReLU and cosine families). The paper studies the minimiser of the population loss over
# $M$. That minimiser is a scaled identity $M^\star = w_{KQ} I$, so attention is a nearest-neighbour
# window whose width is set by $L$, $\sigma$ and the context length: the window narrows as $L$ or the
# context length grows and widens as $\sigma$ grows. A model pretrained at one $L$ learns tasks with
# that Lipschitz constant in context, and it degrades on tasks whose Lipschitz constant differs. Linear
# attention cannot adapt its window: its loss is bounded below by a constant times $L^2$ for every
# $M$. For low-rank linear tasks, the optimal $M$ projects onto the task subspace.
#
# **Transformers as Multi-Task Feature Selectors: Generalization Analysis of In-Context Learning**
# {cite:p}`li2023selectors`. This workshop paper studies binary classification. Each input is a
# *training-relevant* pattern $\mu_j$ plus a *training-irrelevant* pattern $\nu_k$ plus bounded noise. A
# task labels two relevant patterns $+1$ and $-1$ and gives random labels to demonstrations that carry
# any other relevant pattern. The model is full softmax attention followed by a ReLU MLP, trained with
# SGD on the hinge loss. The paper proves zero in-domain generalisation error, with iteration and sample
# counts that depend on the fraction $\alpha$ of useful demonstrations, the relevant-pattern weight and
# the noise level. It describes an *attend, then decode* mechanism. $W_Q$ and $W_K$ grow along the
# relevant patterns and stay small along the irrelevant ones, so attention selects demonstrations that
# share the query's relevant pattern, and the MLP then reads mainly the label embedding. It also gives
# conditions for out-of-domain generalisation: new patterns that are non-negative combinations of the
# training patterns, the same label embeddings, and long enough test prompts. The paper gives no
# experimental parameters, so every value the chapter uses is the book's choice, and the chapter says
# so.
#
# ### How the papers fit together
#
# - **Attention concentrates on same-feature tokens.** In the convergence, nonlinear and selectors
#   papers, inputs are built from a finite set of features or patterns. In each, the stated mechanism is
#   that the query's attention mass on demonstrations sharing its feature tends to one. In feature
#   coordinates $S = V^\top M V$, this means the diagonal entries grow faster than the off-diagonal
#   ones. Each proof tracks exactly this competition: $A_k$ against $B_{k,n}$, $q_k$ against
#   $q_{k,k'}$, and $\lVert W_Q\mu_j\rVert$ against $\lVert W_Q\nu_k\rVert$.
# - **The nonlinear paper generalises the convergence paper.** The model is the same; the convergence
#   paper's orthonormal features and linear tasks become separated features and Lipschitz tasks.
# - **The Lipschitz constant plays two different roles.** In the nonlinear paper, inputs sit exactly on
#   finitely many features and labels are noiseless, so copying the labels of same-feature tokens is
#   exact for every $L$ (when the context contains the query's feature). There, $L$ can only change *how
#   fast* gradient descent approaches that solution.
#   In the window paper, inputs are continuous and labels noisy, so averaging over a wider window trades
#   bias against noise. There, $L$ (with $\sigma$ and the context length) sets *where* the optimum lies.
# - **Attention learns which directions matter.** The window paper's low-rank result (the optimal $M$
#   vanishes off the task subspace) and the selectors paper's feature selection ($W_Q$ and $W_K$ grow
#   only along relevant patterns) are two versions of the same effect.
# - **Softmax against linear.** Only the window paper compares the two activations directly. Only the
#   selectors paper puts a nonlinear read-out after the attention layer.
#
# These are links between the papers' statements; the book checks them only through the measurements
# reported in the chapters, and a synthesis chapter collects all four ledgers.
#
# ## Notation
#
# The book uses one set of symbols. The table maps each paper's symbols onto them. A dash (—) means
# that the paper has no such symbol.
#
# | book symbol | meaning | convergence (Huang et al.) | nonlinear (Li, Duan, Liang) | window (Collins et al.) | selectors (Li, Wang et al.) |
# |---|---|---|---|---|---|
# | $d$ | input dimension | $d$ | $d$ | $d$ | $d_{\mathcal X}$ (label embedding: $d_{\mathcal Y}$) |
# | $K$ | number of features / patterns | $K$ | $K$ | — | $M_1$ relevant (plus $M_2$ irrelevant) |
# | $v_k$ | feature vectors | $v_k$ (orthonormal) | $v_k$ (separation $\Theta(\Delta)$) | — | $\mu_j$ relevant, $\nu_k$ irrelevant |
# | $p_k$ | probability that a token carries feature $k$ | $p_k$ | $p_k$ | — | $\alpha/2$ for each of the task's two patterns |
# | $N$ | context length (labelled demonstrations) | $N$ | $N$ | $n$ | $l$ ($l_{tr}$, $l_{ts}$) |
# | $x_i, y_i$ | demonstrations | $x_i$, $y_i = \langle w, x_i\rangle$ | $x_i$, $y_i = f(x_i)$ | $x_i$, $f(x_i) + \epsilon_i$ | $x_i^n$, label embedding $y_i^n \in \{q, -q\}$ |
# | $x_q$ | query | $x_{\rm query}$ | $x_{\rm query}$ | $x_{n+1}$ | $x_{l+1}^n$ (label $y^n = \pm 1$) |
# | $M$ | bilinear score matrix, logit $x_i^\top M x_q$ | $Q$ | $Q$ | $M = M_K^\top M_Q$ (tied: $W^\top W$) | input block of $W_K^\top W_Q$ |
# | $a_i$ | attention weight of demonstration $i$ | $\mathrm{attn}_i$ | $\mathrm{attn}_i$ | softmax weight (unnamed) | $\mathrm{softmax}(\cdot)$ entry (unnamed) |
# | $\mathrm{Attn}_k$ | attention mass on feature $k$ | $\mathrm{Attn}_k$ | $\mathrm{Attn}_k$ | — | $1 - \gamma_t$: mass on $\mathcal N_*^n$ (query's pattern) |
# | $S = V^\top M V$ | feature-space weights, $S_{n,k} = v_n^\top M v_k$ | $A_k = S_{k,k}$, $B_{k,n} = S_{n,k}$ | $q_k = S_{k,k}$, $q_{k,k'} = S_{k',k}$ | — | — (tracks $\lVert W_Q \mu_j\rVert$, $\lVert W_K \mu_j\rVert$) |
# | $L$ | Lipschitz constant of the tasks | — | $L$ | $L$ | — |
# | $\sigma$ | label-noise standard deviation | — (noiseless) | — (noiseless) | $\sigma$ | — ($\tau$ bounds the input noise) |
# | $\eta$ | learning rate | $\eta$ | $\eta$ | — (Adam; value stated, no symbol) | $\eta$ |
# | $R$ | independent runs trained together | — | — | — ("trials") | — |
#
# Notes on clashes between the papers:
#
# - **$N$.** $N$ is the context length in the book and in the convergence and nonlinear papers. In the
#   window paper, $N$ is the number of extra unlabelled queries per training context, and the context
#   length is $n$. In the selectors paper, $N = BT$ is the number of training prompts, and the prompt
#   length is $l$.
# - **$M$.** $M$ is the score matrix in the book and in the window paper. In the selectors paper,
#   $M = M_1 + M_2$ is the total number of patterns. In the experiment sections of the convergence and
#   nonlinear papers, $M$ is the number of training prompts.
# - **$Q$ and $q$.** In the convergence and nonlinear papers, $Q$ is the whole trained score matrix (the
#   book's $M$). In the window and selectors papers, $M_Q$ and $W_Q$ are only the query-side factor. In
#   the selectors paper, $q$ is the label embedding of $+1$. In the nonlinear paper, $q_{k,k'}$ are
#   entries of $S$.
# - **Index order.** The book writes $S_{n,k}$ with the key feature first (row) and the query feature
#   second (column), matching $x_i^\top M x_q$. Both $B_{k,n}$ (convergence) and $q_{k,k'}$ (nonlinear)
#   put the *query* feature first, hence the transposed indices in the table.
# - **$L$.** The convergence paper writes its population loss as $L(\theta)$. In the book, $L$ is always
#   a Lipschitz constant.
# - **$\delta$ and $\Delta$.** In the nonlinear paper, $\Delta$ is the feature separation and
#   $\delta \ge \sqrt{20K/N}$ is the prompt-imbalance parameter. In the selectors paper, $\delta$ is the
#   initialisation scale.
# - **$a$, $k$, $\alpha$.** $a$ is the MLP's fixed output vector in the selectors paper and the task
#   coefficient vector (with rank $k$) of the window paper's low-rank tasks. $\alpha_k$ is a gradient
#   coordinate in the convergence paper; $\alpha$ is the fraction of useful demonstrations in the
#   selectors paper.
#
# (intro-run)=
# ## How to read and run the book
#
# Every page with code is a Jupyter notebook (`.ipynb`) paired with a `py:percent` script (`.py`)
# through Jupytext. The two files hold the same content: the `.py` file is the readable,
# reviewable source, and the `.ipynb` is what the book builds and the tests execute. Notebooks import
# the reusable pieces (samplers, models, trainers, metrics, theory formulas, plots) from the `icl_lab`
# library and do not define models or training loops of their own. From the repository root:
#
# ```bash
# make book                      # build the HTML book at paper scale (the papers' setting)
# make test                      # run the unit tests and the notebooks at ci scale
# .venv/bin/jupyter lab          # open the notebooks interactively
# ```
#
# Each notebook's first cell chooses the **scale** of its experiments and prints how long the
# notebook takes at each one:
#
# - `paper` uses exactly the paper's parameters. It is the setting the book is built at (`make book`):
#   what takes long to compute is read from the results shipped with the book, and recomputing it all
#   takes hours on a CPU.
# - `book` (the default when you open a notebook) reduces what does not fit a laptop's minutes; every
#   reduction is listed, with its reason, on the page about reproducing the results, and stated above
#   the figures it changes when a page runs at this scale.
# - `ci` is a smaller configuration, used by the tests, that still shows the effect each claim checks.
#
# Change it in that cell, `icl_lab.notebook.setup(scale="ci")`, or set `ICL_LAB_SCALE=ci|book|paper`
# before starting Jupyter. In Colab the same cell installs the library first. `ICL_LAB_DEVICE=cpu|cuda`
# overrides the device, which is otherwise chosen automatically. Every random draw goes through a
# generator seeded from the configuration, so runs are repeatable.
#
# Each chapter runs in the same order: motivation and setup in the paper's notation; derivations, with
# errata flagged; experiments, one figure per claim, labelled with the paper's figure number where one
# is reproduced; interactive controls (which also work in the static HTML book); exercises with
# solutions; and the claims ledger.
#
# ### The claims ledger
#
# Every checkable statement of a paper (a theorem, lemma, proposition or figure observation) becomes a
# *claim*. A claim records an id, where it appears in the paper (for example "Thm 3.1" or "Fig. 2a"),
# the statement, the conditions under which it is stated, how the book measures it, the measured
# value, and one of five statuses:
#
# | status | meaning |
# |---|---|
# | `reproduced` | measured, and consistent with the statement |
# | `reproduced with caveat` | consistent only under a stated reading of the claim, or in a stated range |
# | `not reproduced` | measured where the statement's conditions hold, and inconsistent with it; the evidence is shown |
# | `inconclusive` | the measurement cannot decide: a condition of the statement does not hold where it was measured, or the test is not valid; the reason is given |
# | `not checkable` | cannot be measured as stated, for example because it holds only up to hidden constants; the reason is given |
#
# Claims are of three kinds: statements of the paper (the headline counts count only these),
# *consistency* checks of the book's own code (a closed form against automatic differentiation, say),
# and the book's own *findings* beyond the paper. Each claim is shown as a card where it is checked,
# and each chapter ends with its ledger. {doc}`claims_rules` states once how a status is decided.
#
# Most of the theorems here are asymptotic, with unspecified constants. The book can therefore check
# trends, orders of magnitude, phase structure and mechanisms, but not absolute iteration counts, and
# the ledger says which kind of check each claim received. Where a paper's formulas are garbled,
# inconsistent or cannot be right as printed, the chapter says so plainly and states which reading it
# follows. The notebooks assert the measured behaviour, so a change that breaks a reproduced claim
# fails the tests.
