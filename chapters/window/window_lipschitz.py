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
# # Softmax attention adapts to Lipschitzness, IV: trained windows follow the Lipschitz constant
#
# Parts [I](window_smoother.ipynb)–[III](window_rates.ipynb) computed the optimal window from the population loss. From here on we
# pretrain attention units as {cite:t}`collins2024softmax` do and reproduce their figures. **This page**
# shows the learned window against the task's Lipschitz constant: softmax against linear attention on
# the circle (Figure 1, and why one reading of its task formula stalls training), then the window scale
# against $L$ (Figure 3). [Part V](window_noise_transfer.ipynb) varies $\sigma$ and $n$ and tests transfer
# (Figures 4 and 5), [Part VI](window_lowrank.ipynb) low-rank tasks (Figure 9, Theorem 4.4). The protocol below
# holds for all three pages.
#
# **Protocol (App. J).** The attention matrix is tied, $M=W^\top W$ with $W=0.001\,I$ at the start
# (the paper ties $M_K=M_Q$ "to speed up training"); Adam with PyTorch's default betas; **one task
# per iteration**, with $N=\lceil\sqrt n\,\rceil$ query points whose labels are predicted from the same
# $n$ demonstrations (each query attends only to the labelled tokens); loss against the noiseless
# labels. Figures 3 and 5 use an initial learning rate of 0.1 and Figure 4 0.01, decayed by 0.999 per
# iteration; Figure 1 uses $10^{-2}$ for 15000 iterations. The paper runs 10 trials (5 for Figure 9)
# and plots mean ± standard deviation; here all trials — and all values of $L$, $\sigma$ or the task
# class that share a prompt shape — are the runs $R$ of **one** batched training
# (`icl_lab.train.train`), trial $t$ using seed $t$ in every configuration. Iteration counts, the
# $L$/$\sigma$/$n$ grids and Figure 9's learning rates (tuned over $\{10^{-3},10^{-2},10^{-1}\}$) are
# not given in the paper; the choices are stated with each figure. Runs draw 500 iterations' worth of
# tasks at a time (`icl_lab.papers.window.PrefetchSampler`): still one task per iteration, at a third of the
# sampling cost. The book is built at the paper's settings (`paper` scale); the reduced `book` scale, for
# recomputing the page on a laptop, uses fewer trials and iterations, stated above the figures when it runs
# and in the reproduction page's table of deviations.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.95, "book": 0.89, "paper": 0.55})

# %%
import math

import numpy as np
import torch
from IPython.display import Markdown

import icl_lab
from icl_lab import plotting, widgets
from icl_lab.data import HillsTask
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.window import checks
from icl_lab.papers.window import figures as WF
from icl_lab.papers.window import trained as wtrained
from icl_lab.papers.window import training as wtraining
from icl_lab.render import md_table

SCALE, ledger = icl_lab.notebook.chapter("window", part="lipschitz")
F64 = torch.float64
gen = icl_lab.make_generator

# %% [markdown]
# ## Figure 1: phase-shifted cosines on the circle, softmax against linear attention
#
# $d=2$, inputs uniform on the circle, tasks "a randomly phase shifted cosine function" of Lipschitz
# constant $\nu\in\{0,1.5,6\}$, phase $b\sim\mathrm{Unif}[-\pi,\pi]$: the paper prints the class as
# $\mathcal F_{\nu,\rm hills}=\{\nu\cos(\theta-b)\}$ (App. J), a legible formula, and **the ledger decides
# under it**. On the circle it is the *linear* function $\nu(\cos b,\sin b)^\top x$, for which linear
# attention is consistent: its error falls with $n$ (measured below). The caption's "softmax is able to
# adapt to the Lipschitzness while linear is not" is said of the middle row, the attention weights:
# rescaling $M$ leaves linear attention's relative weights unchanged (Remark 2.2), whatever the task. The
# bottom row shows the error, and what the ledger decides there (claim E-F1a) is that softmax attention's
# error falls with $n$ and ends well below linear attention's. At $\nu=0$ it is $f\equiv0$. The figure's
# message does hold for another task, which the book constructs to show it: **one hill**
# $f=\cos\big(\min(\nu\,|\mathrm{wrap}(\theta-b)|,\pi)\big)$ of width $2\pi/\nu$ (constant, $f\equiv1$, at
# $\nu=0$), the kind of "rapidly changing function" for which Remark 2.1 says a distant token "might only
# corrupt the estimate". It is our construction, not the paper's formula: the cards report it in their
# caveats. (A third function, the **frequency reading** $\cos(\nu\,\mathrm{wrap}(\theta-b))$, has $\nu/2$
# periods; at $\nu=6$ its first Fourier harmonic is zero, the loss is flat near $M=0$, and gradient
# training from the paper's initialisation stalls, as measured at the end of this section.) Noise
# $\sigma=0.1$ and the $n$ grid are our choices (not given). At the paper's setting each unit is trained
# for 15000 iterations at learning rate $10^{-2}$ (one query per task); the reduced scales of this page
# train 1500 iterations. The paper's bottom row plots trained units only; our dashed lines add the
# **population optima**: the best $c$ on a grid for softmax, the exact least-squares $M$ for linear
# attention.

# %%
h_cfg = wtrained.HillsConfig.for_scale(SCALE)
# the formula as printed, nu cos(theta - b). Linear attention's trained error at the largest n scatters widely between
# trials under it (from 0.02 to 0.2 of its error at the smallest n), so at the paper's settings 20 trials, not 5, carry
# the verdicts on it: with 5 the interval of their mean sat on a threshold of ours, and a CPU's rounding moved the status
printed = full(wtrained.run_hills, h_cfg.replace(hills_mode="amp", **({"seeds": 20} if SCALE == "paper" else {})))
hill = full(wtrained.run_hills, h_cfg)  # the book's one-hill construction (the config's default)
nus = h_cfg.nus
icl_lab.notebook.reduced(h_cfg)

# %% tags=["remove-cell"]
glue("win-f1-steps", h_cfg.steps)
glue("win-f1-n", ", ".join(map(str, printed.n)))
glue("win-f1-seeds", printed.config.seeds)
glue("win-f1-hill-seeds", hill.config.seeds)

# %% mystnb={"figure": {"caption": "Fig. 1 with the task formula as printed, $\\nu\\cos(\\theta-b)$ for $\\nu=0,1.5,6$: target, noisy context and windows (top), attention weights (middle), ICL error against $n$ of trained units with the population optima dashed (bottom). Reproduces Fig. 1 of Collins et al.: {glue:text}`win-f1-steps` iterations, $n \\in \\{$ {glue:text}`win-f1-n` $\\}$, {glue:text}`win-f1-seeds` trials.", "name": "fig-win-fig1"}, "image": {"alt": "The tasks are linear on the circle: softmax windows narrow as nu grows, and both softmax and linear attention errors fall with n."}}
plotting.finish(WF.hills(printed))

# %% [markdown]
# The softmax window narrows as $\nu$ grows (top), and its error falls with $n$. But every task is linear
# in $x$, and linear attention's error falls with $n$ too for $\nu>0$ (its optimum like $1/n$): its
# weights keep one shape (middle), but its error adapts (finding E-F1a-lit; by how much scatters widely between trials). At
# $\nu=0$ the task is $f\equiv0$ and both units predict about 0 (linear attention exactly, with $M=0$).
# The book's one-hill construction, same layout and training:

# %% mystnb={"figure": {"caption": "The book's one-hill construction $\\cos(\\min(\\nu|\\mathrm{wrap}(\\theta-b)|,\\pi))$, not the paper's formula: same layout and training as the figure above, with {glue:text}`win-f1-hill-seeds` trials. Not a figure of the paper.", "name": "fig-win-fig1-hill"}, "image": {"alt": "Softmax windows narrow as nu grows and its error falls with n; linear attention's profile keeps one shape and its error barely moves."}}
plotting.finish(WF.hills(hill))

# %% [markdown]
# Here the figure's message holds: the softmax attention profile sharpens with $\nu$ (middle; the
# linear profile $x^\top Mx_q\propto\cos\theta$ has one shape whatever its scale) and its error falls with
# $n$ in all three settings, while linear attention's error improves much less. The reasons differ by
# panel: at $\nu=0$ the task is the constant $f\equiv1$, and linear attention cannot produce a constant
# (its best answer is 0: the intercept effect of Theorem 3.6, the exercise of [Part II](window_bounds.ipynb)), so its error stays
# near 1; at $\nu>0$ no $M$ localises a hill, though at $\nu=1.5$, where the hill is wide, linear
# attention's error does fall somewhat (the table). At $\nu=6$ the trained softmax window is still
# opening at the end of training (trained $c$ well below the optimum, i.e. a wider window): one task
# per iteration gives noisy gradients and the window grows slowly.

# %%
# ICL error at the largest n over the error at the smallest n, mean over trials: (softmax, linear), each nu -> ratio
drops = {name: wtraining.error_drops(res)[:2] for name, res in (("printed", printed), ("one hill", hill))}
drops["printed"][1][0.0] = float("nan")  # f = 0 at nu = 0: linear attention's errors are 0 at every n (a ratio 0/0)

# %% tags=["remove-cell"]
glue("win-f1-drops", Markdown(md_table(
    ["task", "attention", *[f"$\\nu = {nu:g}$" for nu in nus]],
    [[name, act, *[f"{v:.4g}" for v in r.values()]] for name, pair in drops.items() for act, r in zip(("softmax", "linear"), pair)])))
assert all(v < 0.7 for v in drops["one hill"][0].values()) and all(v > 0.35 for v in drops["one hill"][1].values())
assert all(np.diff(checks.window_scales(hill)[r"optimal $c$ over $\nu$"]) > 0)

# %% tags=["remove-input"]
ledger.judge(checks.hills(printed, hill));

# %% [markdown]
# ICL error at the largest $n$ divided by the error at the smallest $n$ (mean over trials):
#
# ```{glue:md} win-f1-drops
# :format: myst
# ```

# %% [markdown]
# **The frequency reading stalls.** With $f=\cos(\nu\,\mathrm{wrap}(\theta-b))$ at $\nu=6$ the loss is
# flat around $M=0$ (the pattern $\cos 6\delta$ has no first harmonic, so a slightly tilted window gains
# nothing), and the trained unit never leaves the plateau although the optimum is a narrow window:

# %%
freq_cfg = wtrained.HillsConfig.for_scale(SCALE, hills_mode="freq", nus=(6.0,), n_values=(64,), seeds=2,
                                          steps=h_cfg.steps, test_tasks=500, population_tasks=500, linear_prompts=500)
freq = full(wtrained.run_hills, freq_cfg)
assert float(freq.c_trained[6.0][0].max()) < 0.1 * float(freq.c_opt[6.0][0])  # the unit never leaves the plateau

# %% tags=["remove-cell"]
glue("win-freq-c", ", ".join(f"{v:.2f}" for v in freq.c_trained[6.0][0].tolist()))
glue("win-freq-err", ", ".join(f"{v:.3f}" for v in freq.trained[('softmax', 6.0)][0].tolist()))
glue("win-freq-copt", float(freq.c_opt[6.0][0]))
glue("win-freq-eopt", float(freq.optimum[('softmax', 6.0)][0]))

# %% [markdown]
# Frequency reading, $\nu = 6$, $n = 64$: the trained softmax scales $c$ are {glue:text}`win-freq-c`
# (errors {glue:text}`win-freq-err`), against the optimum $c$ = {glue:text}`win-freq-copt:.0f` (error
# {glue:text}`win-freq-eopt:.3f`).

# %% [markdown]
# ## Figure 3: the window scale grows with $L$
#
# $d=5$, $n=20$, $\sigma=0.01$, $N=5$, initial LR 0.1 with decay 0.999, 10 trials; tasks 2-ReLU or
# $\cos(L\,w^\top x)$, inputs isotropic ($\mathcal U^d$) or not ($\mathcal U^d_\psi$: $S_dz/\lVert S_dz\rVert$,
# $S_d=\mathrm{diag}(1,\dots,d)$). The paper does not list its $L$ values. [Part I](window_smoother.ipynb) showed that the
# optimum depends on $L/\sigma$ only and that at $\sigma=0.01$, $n=20$ the optimal 2-ReLU window is
# **flat for $L\gtrsim0.3$** — so an $L$ grid around the default $L=1$ cannot show the effect. We
# train both: the top row uses $L\in\{0.5,1,2,4\}$, the bottom row grids that reach the regime where
# the optimum moves ($L\in\{0.01,0.03,0.1,1\}$ for ReLU, $\{0.1,0.3,0.5,1\}$ for cosine). Dotted lines: the population optimum $c^\star(L)$ (isotropic panels). All
# $2\times4\times4$ settings × trials are one training.

# %%
f3_cfg = wtrained.NormVsLConfig.for_scale(SCALE)  # every panel, L and trial: one batched training
f3 = full(wtrained.run_norm_vs_L, f3_cfg)

# %% mystnb={"figure": {"caption": "Spectral norm of $M$ during pretraining for several $L$ (mean \u00b1 std over trials); dotted: population optimum $c^\\star(L)$. Top: $L$ near 1; bottom: small $L$. Reproduces Fig. 3 of Collins et al.", "name": "fig-win-fig3"}, "image": {"alt": "Curves order by L in the small-L grids and coincide around L = 1."}}
plotting.finish(WF.norm_vs_L(f3))

# %%
final_norm = {}  # (class, inputs, grid) -> final ||M||_2 for each L of the grid, mean over trials
for cls, inp in f3_cfg.panel_pairs():
    for grid in ("visible", "paper"):
        keys = [k for k in f3.keys if k[0] == grid and k[1] == cls and k[2] == inp]
        final_norm[(cls, inp, grid)] = dict(zip([k[3] for k in keys], wtraining.final_norms(f3, keys)))

# %% tags=["remove-cell"]
f3_rows = []
for cls, inp in f3_cfg.panel_pairs():
    fv, fp = final_norm[(cls, inp, "visible")], final_norm[(cls, inp, "paper")]
    f3_rows.append([WF.NAMES.get(cls, cls), "isotropic" if inp == "iso" else "non-isotropic",
                    ", ".join(f"{v:.2f} ($L = {L_:g}$)" for L_, v in fv.items()), ", ".join(f"{v:.2f} ($L = {L_:g}$)" for L_, v in fp.items()),
                    f"{(max(fp.values()) - min(fp.values())) / np.mean(list(fp.values())):.2f}"])
glue("win-f3-table", Markdown(md_table(["tasks", "inputs", "small-$L$ grid", "near $L = 1$", "relative spread near $L = 1$"], f3_rows)))
f3_checks = checks.norm_vs_L(f3)
assert all(np.all(np.diff(list(final_norm[(cls, inp, "visible")].values())) > 0) for cls, inp in f3_cfg.panel_pairs() if inp == "iso")

# %% tags=["remove-input"]
ledger.judge(f3_checks[0]);

# %% [markdown]
# Final $\|M\|_2$ (mean over trials):
#
# ```{glue:md} win-f3-table
# :format: myst
# ```
#
# Since the paper does not list its $L$ values, the ledger reads both grids: the ordering by $L$ must
# hold on the grid around $L = 1$ and on the small-$L$ grid alike. Where it holds on one and not on the
# other, our choice of grid, not the measurement, would decide, and the claim is inconclusive.

# %% [markdown]
# The paper also reads these curves, with those of the noise and context-length sweeps of the next
# page (ReLU and cosine tasks at $L = 1$, a smaller learning rate), as saying that two classes of the
# same Lipschitzness grow $\|M\|$ alike. Per trial, divide the cosine norm by the ReLU norm of the same
# trial, at the end and averaged over training, wherever both classes share $L$, the inputs, $\sigma$
# and $n$; "alike" is read as a ratio within a factor 1.5. Which $L$ values to compare is open: the
# paper does not list its own, so both grids above are read.

# %%
f4 = full(wtrained.run_norm_vs_sigma_n, wtrained.NormVsSigmaNConfig.for_scale(SCALE))  # the sweeps of the next page

# %% tags=["remove-input"]
ledger.judge(checks.norm_across_classes(f3, f4));

# %% [markdown]
# Around $L = 1$ the two classes end close together. Where the cosine class is still in its small-$L$
# regime ($L = 0.1$) it barely leaves the start while ReLU grows, and at the smaller learning rate of the
# sweeps the cosine norm trails the ReLU norm at most noise levels and context lengths: the growth is
# alike only where both classes sit in the same regime of their optimal window.

# %% [markdown]
# The bottom row shows the ordering by $L$ for the ReLU and cosine classes (no theorem covers the
# cosine class); the paper's setting adds non-isotropic inputs, which this page trains only at the
# paper's scale. In the top row the curves lie on top of each other for
# ReLU, as the population optimum (dotted) predicts: at $\sigma=0.01$, $n=20$, $L/\sigma\ge50$ is
# deep in the noise-free regime. (For cosine at large $L$ the optimum even *decreases*: $\cos(4w^\top x)$
# is not resolvable with 20 points in $d=5$, and a wide window that averages to the mean wins.)
#
# The spectral norm overshoots the population optimum: single-task gradients make $M$ fluctuate
# around $c^\star I$, and $\lVert M\rVert_2$ is its *largest* eigenvalue. The average eigenvalue
# $\mathrm{tr}(M)/d$ is the fair comparison with $c^\star$:

# %%
rows = []  # L, the final tr(M)/d and ||M||_2 (means over trials), and the population optimum c*
for k in f3.keys:
    if k[2] == "iso" and k[1] == "relu" and k[0] == "visible":
        rows.append((k[3], float(f3.mean_eig[k][-1].mean()), float(f3.norm[k][-1].mean()), f3.c_star[k]))

# %% tags=["remove-cell"]
glue("win-f3-eig", Markdown(md_table(["$L$", "$\\mathrm{tr}(M)/d$", "$\\lVert M\\rVert_2$", "$c^\\star$"],
                                     [[f"{L_:g}", f"{me:.2f}", f"{nm:.2f}", f"{cs:.2f}"] for L_, me, nm, cs in rows])))

# %% tags=["remove-input"]
ledger.judge(f3_checks[1]);

# %% [markdown]
# ```{glue:md} win-f3-eig
# :format: myst
# ```

# %% [markdown]
# ## Explore: how the trained window follows $L$
#
# The kernel-free slider below steps through the Figure 3 trainings (isotropic 2-ReLU, small-$L$
# grid): for each $L$ it shows the learned window on the circle through a query and its attention
# profile, next to the population optimum. ([Part III](window_rates.ipynb) has the live widget for $L$, $\sigma$, $n$ and $d$.)

# %% mystnb={"figure": {"caption": "The window trained on 2-ReLU tasks (isotropic, small-$L$ grid of Figure 3) for a chosen $L$: on the circle through a query and as an attention profile against the angle, next to the population optimum $c^\\star$. The trained window narrows with $L$ as the optimum does.", "name": "fig-winexp-L-slider"}}
draw_trained, L_values = WF.trained_window_frames(f3)  # draw_trained(L): the trained window at L against c*
widgets.static_slider(draw_trained, L_values, name="$L$", fmt="{:g}",
                      alt="the trained window on the circle around a query and its attention profile against the angle, "
                          "next to the population optimum, for this L")

# %% [markdown]
# ## Summary
#
# Trained softmax windows narrow as the tasks get sharper, as the population optimum predicts, and
# their error falls with $n$; linear attention's weights keep one shape whatever $M$'s scale. Under the
# task formula as printed the tasks are linear on the circle, so linear attention's error falls too;
# on the book's one-hill construction it barely moves. The frequency reading of the formula has no
# first harmonic and gradient training from $M\approx0$ never leaves the plateau. In the setting of
# Figure 3 the window grows with $L$ where the optimum moves (small $L$) and not where it is flat.

# %% [markdown]
# ## Exercise
#
# ````{exercise}
# :label: win-ex-plateau
#
# Explain why gradient descent from $M\approx0$ stalls on the frequency reading of the Figure 1 task,
# $f=\cos(6\,\mathrm{wrap}(\theta-b))$ on the circle, but not on a single hill. *Hint:* expand the
# softmax prediction to first order in $c$ for $M=cI$ and compute $\frac{d\mathcal L}{dc}$ at $c=0$.
# ````
#
#
# ```{solution-start} win-ex-plateau
# :class: dropdown
# ```
#
# For small $c$, $a_i\approx\frac1n\big(1+c(x_i^\top x-\overline{x_j^\top x})\big)$, so
# $\hat y\approx\bar y+\frac cn\sum_i(y_i-\bar y)\,x_i^\top x$ and
# $\frac{d\mathcal L}{dc}\big|_0=2\,\mathbb E\big[(\bar y-f(x))\,\frac1n\sum_i(y_i-\bar y)x_i^\top x\big]$,
# which for large $n$ is $\approx-2\,\mathbb E_{x}\big[f(x)\,\mathrm{Cov}_{x'}(f(x'),x'^\top x)\big]$.
# On the circle $x'^\top x=\cos(\theta'-\theta)$, so this covariance is the **first Fourier
# coefficient** of $f$. For $\cos(6\delta)$ it is zero (only the 6th harmonic is present), and so are
# all derivatives up to order 5: the loss is flat near $c=0$ and Adam's steps become a random walk.
# A single hill has a positive first harmonic and a negative slope at $c=0$. The cell computes the
# first harmonic of both.

# %%
delta = torch.linspace(-math.pi, math.pi, 20001, dtype=F64)[:-1]
xs = torch.stack([torch.cos(delta), torch.sin(delta)], -1)[None]  # the circle
fourier = {}  # the first Fourier coefficient of each shape at nu = 6
for shape in ("freq", "bump"):
    f = HillsTask(6.0, shape).evaluate({"b": torch.zeros(1, dtype=F64)}, xs)[0]
    fourier[shape] = float((f * torch.cos(delta)).mean() * 2)
assert abs(fourier["freq"]) < 1e-6 and fourier["bump"] > 0.05

# %% tags=["remove-cell"]
glue("win-fourier-freq", round(fourier["freq"], 4) + 0.0)
glue("win-fourier-bump", fourier["bump"])

# %% [markdown]
# First Fourier coefficient: {glue:text}`win-fourier-freq:+.4f` for the frequency reading,
# {glue:text}`win-fourier-bump:+.4f` for the one-hill construction.

# %% [markdown]
# ```{solution-end}
# ```

# %% [markdown]
# ## Claims ledger (part IV)
#
# The claims checked on this page. Parts [I](window_smoother.ipynb), [II](window_bounds.ipynb), [III](window_rates.ipynb), [V](window_noise_transfer.ipynb) and [VI](window_lowrank.ipynb) have their own ledgers; the synthesis chapter joins them.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
