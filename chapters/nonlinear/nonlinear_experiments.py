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
# # Nonlinear regression in context: the late phase, generalisation and the paper's figures
#
# The {doc}`previous page <nonlinear_regression>` set up the model, derived the paper's lemmas and trained
# the theory model exactly, finding that its dynamics depend on $L$ and $\eta$ only through $\eta L^2$.
# This page measures how long training takes to reach accuracy $\epsilon$, tests Proposition 1 on
# functions never seen in training, and reproduces the paper's Figures 1–4 with the practical
# transformer block. The notation is the previous page's.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.66, "book": 1.23, "paper": 0.36})

# %%
import math

import torch
from IPython.display import Markdown

import icl_lab
from icl_lab import metrics, plotting
from icl_lab.data import PromptBatch
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.nonlinear import checks
from icl_lab.papers.nonlinear import experiments as nl
from icl_lab.papers.nonlinear import figures as nlfig
from icl_lab.papers.nonlinear import theory as th
from icl_lab.papers.nonlinear import theory_phases as tp
from icl_lab.render import md_table

SCALE, ledger = icl_lab.notebook.chapter("nonlinear", part="experiments")
F64 = torch.float64

# %%
# the previous page's theory-model runs (the same seeded computation) and its features:
# K = 4 orthonormal directions of norm Delta / sqrt(2)
tcfg = nl.TheoryConfig.for_scale(SCALE)
theory = full(nl.run_theory, tcfg)
V4 = nl.make_features("orth", 4, 15, 3.0)

# %% tags=["remove-cell"]
glue("nl-theory-nL", len(tcfg.L_values))
glue("nl-theory-lr", tcfg.lr)

# %% [markdown]
# ## How long to accuracy $\epsilon$? The late phase
#
# Thm 1 promises $\mathcal L\le\mathcal O(\epsilon^2)$ after $\Theta(\log(K/\epsilon)/(\eta\delta^2L^2\Delta^2))$ steps in
# the flat regime, Thm 2 after $\Theta(\log(KL\Delta/\epsilon)/(\eta\epsilon\delta^2L^2\Delta^2))$ in the sharp
# one. We run long GD at a small step ($\eta = 0.1$) for three values of $L$ and record the first
# time $1-\mathrm{Attn}\le\epsilon$ and the first time $\mathcal L/\mathcal L^{(0)}\le\epsilon^2$.

# %%
lcfg = nl.LateConfig.for_scale(SCALE)  # K = 4, N = 100, three L, a small step eta = 0.1
# exact GD: loss and own attention at every step, the first times to accuracy eps
late = full(nl.run_late, lcfg)
# local exponents, late constants C, eps exponents of the times, time ratios between the L
late_s = checks.late_stats(late, lcfg)

# %% tags=["remove-cell"]
glue("nl-late-text", Markdown(
    f"At $L = 1$, between $t = {late_s['t1']}$ and ${late_s['t2']}$, the loss falls like $t^{{{late_s['exp_loss']:.2f}}}$ and "
    f"$1 - \\mathrm{{Attn}}$ like $t^{{{late_s['exp_gap']:.2f}}}$. The time to $1 - \\mathrm{{Attn}} \\le \\varepsilon$ grows like "
    f"$\\varepsilon^{{-{late_s['exp_eps']:.2f}}}$, the time to $\\mathcal L/\\mathcal L_0 \\le \\varepsilon^2$ like "
    f"$\\varepsilon^{{-{late_s['exp_eps_loss']:.2f}}}$; the times at $L = {lcfg.L_values[0]:g}$ are "
    f"{', '.join(f'{v:.2f}' for v in late_s['ratio_L'].tolist())} times those at $L = {lcfg.L_values[2]:g}$ (one ratio per "
    f"$\\varepsilon$; R1 predicts {late_s['prediction']:.0f}). The final loss is {late_s['ratio_R2']:.2f} times "
    f"$(K-1)/(4\\eta s^4 t)$. Late constants $C$ against $K - 1 = {lcfg.K - 1}$:\n\n"
    + md_table(["$L$", *[f"{Lv:g}" for Lv in lcfg.L_values]],
               [["$C$", *[f"{v:.2f}" for v in late_s["C_each"].tolist()]],
                ["final loss", *[f"{v:.1e}" for v in late.loss[-1].tolist()]]])))

# %% [markdown]
# ```{glue:md} nl-late-text
# :format: myst
# ```

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Long GD of the theory model ($\\eta = 0.1$): (a) the loss approaches $(K-1)/(4\\eta s^4 t)$ for every $L$, (b) the attention gap falls like $t^{-1/2}$, (c) the time to accuracy $\\epsilon$ against the paper's rates. Not a figure of the paper.", "name": "fig-nl-late"}, "image": {"alt": "Three log-log panels showing power-law tails, and times to accuracy growing like eps^-2 rather than logarithmically."}}
nlfig.show(nlfig.late_figure(late))

# %%
# inside the theorems' hypotheses: K = 16 >= 1/eps down to eps = 1/16, N = 2 K^3
kcfg = nl.LateConfig.for_scale(SCALE, **nl.LATE_IN_REGIME)
late_k = full(nl.run_late, kcfg)
late_ks = checks.late_regime_stats(late_k, kcfg)  # eps exponents, log(K/eps), Thm 2
# Thm 1 inside delta = o(1) too: N = 10^5 > 20 K^3 (prompts drawn as counts),
# 8 prompt sets, 4000 steps
dcfg_k = nl.LateConfig.for_scale(SCALE, **{**nl.LATE_IN_REGIME, "N": 100_000, "steps": 4000,
                                           "L_values": (kcfg.L_values[0],)})
late_ds = [full(nl.run_late, dcfg_k.replace(seed=sd)) for sd in range(8)]
# Thm 2 on the same prompt sets at L = 8 > L* (sharp), eta = 1/64 (eta L^2 = 1)
scfg_k = dcfg_k.replace(L_values=(8.0,), lr=1 / 64)
late_ss = [full(nl.run_late, scfg_k.replace(seed=sd)) for sd in range(8)]

# %% tags=["remove-cell"]
_ = ledger.judge([*checks.late_phase(late, lcfg),
                  *checks.late_theorems(late_ds, dcfg_k, late_ss, scfg_k, late=late, lcfg=lcfg, late_k=late_k, kcfg=kcfg)], show=False)
glue("nl-late-k-text", Markdown(
    f"With $K = {kcfg.K}$, $N = {kcfg.N}$ ($L^* = {late_ks['L_star']:.2f}$): the time to $1 - \\mathrm{{Attn}} \\le \\varepsilon$ "
    f"grows like $\\varepsilon^{{-{late_ks['exp_eps']:.2f}}}$ at $L = {kcfg.L_values[0]:g}$ (a $\\log(K/\\varepsilon)$ law "
    f"would give {late_ks['exp_log']:.2f}), and the time to $\\mathcal L/\\mathcal L_0 \\le \\varepsilon^2$ like "
    f"$\\varepsilon^{{-{late_ks['exp_loss']:.2f}}}$ at $L = {kcfg.L_values[1]:g}$ (Theorem 2: {late_ks['exp_thm2']:.2f})."))
glue("nl-dmin-k", th.threshold_scale(kcfg.K, kcfg.N, kcfg.delta)["delta_min"])
glue("nl-dmin-d", th.threshold_scale(dcfg_k.K, dcfg_k.N, dcfg_k.delta)["delta_min"])
glue("nl-Lstar-s", th.threshold_scale(scfg_k.K, scfg_k.N, scfg_k.delta)["L_star"])
glue("nl-n-sets", len(late_ds))
assert abs(late_s["exp_loss"] + 1) < 0.3 and late_s["exp_eps"] > 1.0

# %% [markdown]
# ```{glue:md} nl-late-k-text
# :format: myst
# ```

# %% [markdown]
# The theorems assume $K\ge\Theta(1/\epsilon)$ and $N\ge\Theta(K^3)$, and their proofs use
# $\delta = o(1)$ (Lemmas 5–6), which with $\delta\ge\sqrt{20K/N}$ needs $N > 20K^3$ (D7); the sweep above
# holds $K = 4$, $N = 100$ and pushes $\epsilon$ far below $1/K$, so it cannot decide them alone. The
# second run ($K = 16$, $N = 2K^3$, $\epsilon\ge 1/16$) has one flat and one sharp $L$ but
# $\delta_{\min} =$ {glue:text}`nl-dmin-k:.2f` $> 1/K$; the flat regime is therefore run once more at $N = 10^5 > 20K^3$
# ($\delta_{\min} =$ {glue:text}`nl-dmin-d:.3f` $< 1/K$), inside every condition, on {glue:text}`nl-n-sets` prompt sets, and the
# ledger decides Thm 1 there. Thm 2 is decided on the same prompt sets at $L = 8$, above
# $L^* = 1/(\Delta\delta_{\min}) \approx$ {glue:text}`nl-Lstar-s:.1f`, with the step
# $\eta = 1/64$ so that $\eta L^2$ stays 1. By R1 the two runs follow one trajectory: in the theory model the flat and
# sharp regimes at equal $\eta L^2$ differ only in the step, so one law in $\epsilon$ is compared with both theorems.
#
# At a fixed step size the time to accuracy grows like a power of $1/\epsilon$, not like
# $\log(K/\epsilon)$: $\epsilon^{-2}$ for $1-\mathrm{Attn}$ deep in the late phase (D10), and the loss ratio
# $\epsilon^2$ is reached after $\propto\epsilon^{-2}$ steps, in *both* regimes — the "slow third phase" of the
# sharp regime is the universal $1/t$ tail, and the flat regime has it too. Thm 1 is an upper bound ("with
# at most $T_f^*$ iterations") with an unstated constant, which we set to 1; its $\eta$ is Eq. (8)'s step on $Q$,
# as for C13, and at that step the measured times stay below the printed bound. With the step divided by
# $s^4 = 20.25$, the reading that corrects App. C's missing factor $\|v\|^4$, the bound is $s^4$ times smaller
# and the times exceed it several times over within $K\ge 1/\epsilon$. In either reading the bound does not have the
# measured shape: the time grows like $\epsilon^{-1}$, the bound like $\epsilon^{-0.2}$ over this range. The
# $1/L^2$ scaling holds exactly, by construction (R1), whatever the regime: the ledger files it as a
# consistency check.
#
# ### The role of $\delta$: context length $N$
#
# The concentration parameter $\delta\ge\sqrt{20K/N}$ enters the paper's Phase-II rate (Prop. 3:
# $q_k$ grows at $\Theta(\eta\delta^2L^2\Delta^2/K)$) and both final times ($T_f^*, T_s^*\propto\delta^{-2}$),
# but not $T_f^1$. At $\delta = \sqrt{20K/N}$ these say: the Phase-II rate falls like $1/N$, the times grow
# like $N$. We run the theory model at $N$ from 1600 to $10^5$ (all with $N > 20K^3$, so
# $\delta < 1/K$: the paper's "$\delta = o(1)$"), for one flat and one sharp $L$, and measure $T^1$,
# the first time $T^*$ with $1-\mathrm{Attn}\le 0.1$, and the mean growth of $q_k$ per step between them.
# With $K = 4$ an accuracy $0.1 < 1/K$ leaves the condition $K\ge 1/\epsilon$, so Prop. 3's rate is decided
# on a second sweep at $\epsilon = 1/K = 0.25$, $N$ up to 102400, with $L = 0.5$ and $2$. Prop. 3 is the flat
# regime, and $L = 2$ exceeds $L^* = 1/(\Delta\delta_{\min}) =$ {glue:text}`nl-Lstar-in:.2f` at $N = 1600$: the ledger decides on $L = 0.5$ and
# shows $L = 2$.

# %%
# N from 1600 to 10^5, eps = 0.1: T^1, T* and the Phase-II rate per N and L
dcfg = nl.DeltaConfig.for_scale(SCALE)
dres = full(nl.run_delta, dcfg)
# Prop. 3 inside its hypotheses: eps = 1/K = 0.25 (K >= 1/eps), N > 20 K^3
N_in = icl_lab.by_scale(ci=(1600, 6400, 25_600), paper=(1600, 6400, 25_600, 102_400))
dcfg_in = dcfg.replace(eps=1 / dcfg.K, L_values=(0.5, 2.0), N_grid=N_in)
dres_in = full(nl.run_delta, dcfg_in)
# between the ends Props. 2-3 state, 1 - Attn <= C delta/(1 + C delta): the constant C
# is open, C = 1 decides and C = 1/2, 2 run beside it
ends_N = [full(tp.stated_ends, dcfg_in, n) for n in dcfg_in.N_grid]
# per C: T^1, T*, the rates per N, and their log-log slopes in N
st_C, sl_C = checks.stated_end_slopes(ends_N, dcfg_in)
# the slopes in N between fixed levels, per L
sl, sl_in = checks.delta_slopes(dres, dcfg), checks.delta_slopes(dres_in, dcfg_in)

# %% tags=["remove-cell"]
_ = ledger.judge(checks.context_length(dres, dcfg, dres_in, dcfg_in, ends_N), show=False)
glue("nl-Lstar-in", checks.flat_runs(dcfg_in)[0])
st, sl_st = st_C[1.0], sl_C[1.0]
glue("nl-delta-text", Markdown(
    f"Steps to $T^1$ and $T^*$ at $N = {', '.join(f'{v:g}' for v in dcfg.N_grid)}$, and the log-log slopes "
    "in $N$ (the paper: 0 for $T^1$, 1 for $T^*$, $-1$ for the Phase-II rate):\n\n" + md_table(
        ["$L$", "$T^1$", "$T^*$", "slope of $T^1$", "slope of $T^*$", "slope of the Phase-II rate"],
        [[f"{Lv:g}", ", ".join(f"{t:.0f}" for t in dres.T1[:, j].tolist()), ", ".join(f"{t:.0f}" for t in dres.T_star[:, j].tolist()),
          f"{sl['T1'][j]:.2f}", f"{sl['T_star'][j]:.2f}", f"{sl['rate'][j]:.2f}"] for j, Lv in enumerate(dcfg.L_values)])
    + f"\n\nInside the hypotheses ($\\epsilon = 1/K = {dcfg_in.eps:g}$, $N$ = {', '.join(f'{v:g}' for v in dcfg_in.N_grid)}): "
    "the Phase-II rate is " + "; ".join(
        f"{', '.join(f'{v:.3f}' for v in dres_in.rate2[:, j].tolist())} at $L = {Lv:g}$ (slope in $N$ {sl_in['rate'][j]:.2f})"
        for j, Lv in enumerate(dcfg_in.L_values)) + "; Prop. 3 says $-1$."
    + f"\n\nBetween the ends Props. 2–3 state ($1-\\mathrm{{Attn}}\\le\\delta/(1+\\delta)$, then "
    f"$\\le\\epsilon\\delta/(1+\\epsilon\\delta)$; $L = 0.5$, $\\eta = 4$): $T^1$ = {', '.join(f'{v:.0f}' for v in st[:, 0].tolist())}, "
    f"$T^*$ = {', '.join(f'{v:.0f}' for v in st[:, 1].tolist())} steps, so $T^1\\sim N^{{{sl_st['T1']:.2f}}}$, "
    f"$T^*\\sim N^{{{sl_st['T_star']:.2f}}}$, and the mean Phase-II rate $\\sim N^{{{sl_st['rate']:.2f}}}$. "
    "The $\\Omega$ leaves the constant $C$ of these ends open ($C\\delta/(1+C\\delta)$); with $C = 1/2$ and $2$ the "
    "exponents are " + "; ".join(f"$T^1\\sim N^{{{sl_C[C]['T1']:.2f}}}$, $T^*\\sim N^{{{sl_C[C]['T_star']:.2f}}}$, "
                                 f"rate $\\sim N^{{{sl_C[C]['rate']:.2f}}}$ ($C = {C:g}$)" for C in (0.5, 2.0)) + "."))

# %% [markdown]
# ```{glue:md} nl-delta-text
# :format: myst
# ```

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Durations $T^1$, $T^*$ (left) and the Phase-II rate (right) against the context length $N$ between fixed attention levels, with the paper's $\\propto N$ and $\\propto 1/N$ (dotted). The ledger decides between the ends Props. 2\u20133 state instead, where the rate does fall like $1/N$ (the cards above give the slopes). Not a figure of the paper.", "name": "fig-nl-delta"}, "image": {"alt": "Between fixed levels the measured durations and rates are nearly flat in N, while the dotted paper scalings rise or fall steeply."}}
nlfig.show(nlfig.delta_figure(dres))

# %% [markdown]
# Where the phases end decides what is measured. Between fixed levels the dynamics hardly notice $N$: with
# $|\mathcal V_k|/N\approx p_k$ the softmax sees the same proportions at every $N$, and the rate is set by
# $\mathrm{Attn}_k(1-\mathrm{Attn}_k)^2$. Props. 2–3 state their ends as attention levels that move with $\delta$
# ($\mathrm{Attn} = \Omega(1/(1+\delta))$, then $\Omega(1/(1+\epsilon\delta))$), and Prop. 3's $\delta^2$ comes from
# $1-\mathrm{Attn}_k = \mathcal O(\delta)$ (Lemma 6), which holds only between them: there the rate does fall like
# $1/N$ and $T^*$ grows like $N$, but reaching Prop. 2's end then takes longer as $N$ grows, so $T^1$ is not free of
# $\delta$. The ledger decides the rate and $T^*$ under the stated ends and reports the fixed levels; it
# measures $T^1$ at Lemma 5's level, the end its formula $\Theta(K\log K/(\eta L^2\Delta^2))$ is derived
# from, where it is free of $\delta$. That the stated end is not reached within a $\delta$-free time is the
# previous page's erratum (7) seen in the measurements: the ledger records it as its own claim (C16), which fails.
#
# ## Proposition 1: predicting functions never seen in training
#
# We train on cosine tasks ($L = 1$) and then, at several moments of training, ask the model to
# predict — in context, with no update — fresh cosine tasks, random 2-ReLU profiles and random
# ReLU networks, all 1-Lipschitz, on the same features.

# %%
# trained on cosine tasks at L = 1, tested on unseen 1-Lipschitz families
gcfg = nl.GeneralizationConfig.for_scale(SCALE)
# the error at moments of training, and its largest ratio to Prop. 1's envelope
gen = full(nl.run_generalization, gcfg)

# %% tags=["remove-cell"]
_ = ledger.judge(checks.generalization(gen, gcfg), show=False)
glue("nl-gen-table", Markdown(md_table(
    ["test family", "error at $Q = 0$", "error trained", "largest per-prompt error / envelope"],
    [[fam, f"{float(gen.err[fam][0]):.2e}", f"{float(gen.err[fam][-1]):.2e}", f"{gen.max_ratio[fam]:.3f}"] for fam in gen.families])))
assert max(gen.max_ratio.values()) <= 1 + 1e-9 and max(float(gen.err[f][-1] / gen.err[f][0]) for f in gen.families) < 0.05

# %% [markdown]
# ```{glue:md} nl-gen-table
# :format: myst
# ```

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Mean squared error of in-context predictions of functions never trained on (fresh cosine tasks, random 2-ReLU profiles, random ReLU networks) against the mean squared attention gap, at moments of training; dashed: Prop. 1's envelope. Not a figure of the paper.", "name": "fig-nl-prop1"}, "image": {"alt": "Three curves falling together with the attention gap, below the dashed envelope."}}
nlfig.show(nlfig.generalization_figure(gen, theory.V))

# %% [markdown]
# ### The attention limits
#
# Across all runs the maps are distributions (rows over keys sum to one), the diagonal rises and the
# off-diagonal falls; in the long run of Sec. 5 the own-feature attention approaches 1.

# %%
# row sums of the maps, final diagonal and off-diagonal entries, the long run's gap
lim = checks.attention_limit_stats(theory, late)

# %% tags=["remove-cell"]
_ = ledger.judge(checks.attention_limits(theory, tcfg, late, lcfg), show=False)
glue("nl-row-sum-err", lim["row_sum_err"])
glue("nl-theory-steps", tcfg.steps)
glue("nl-diag-min", float(lim["diag_final"].min()))
glue("nl-off-max", lim["off_final_max"])
glue("nl-late-gap", lim["late_gap"])
assert lim["row_sum_err"] < 1e-12 and lim["late_gap"] < 0.1

# %% [markdown]
# The rows of the attention maps sum to 1 within {glue:text}`nl-row-sum-err:.0e`. After {glue:text}`nl-theory-steps`
# steps of the theory model the diagonal is at least {glue:text}`nl-diag-min:.3f` and the off-diagonal at most
# {glue:text}`nl-off-max:.3f`; in the long run $1 - \mathrm{Attn} =$ {glue:text}`nl-late-gap:.4f`.

# %% [markdown]
# ### Non-uniform feature frequencies
#
# Sec. 6 announces that "Appendix A presents additional experiments, including ... robustness check
# with non-uniform feature frequencies". App. A contains Figs. 2–4 and their text only: the check is
# not in the paper. We run it on the theory model: the Sec. 6 setting with
# $p = (0.4, 0.3, 0.2, 0.1)$, $L = 1$, $\eta = 1$. Lemma 2's $g_k$ carries the factor $p_k$ (App. C),
# so a rare feature's weight grows more slowly; nothing in the mechanism needs equal frequencies.

# %%
# Sec. 6's setting with p = (0.4, 0.3, 0.2, 0.1), L = 1, eta = 1
ucfg = nl.NonUniformConfig.for_scale(SCALE)
# own attention per feature, and the first step at which each reaches the level
nu = full(nl.run_nonuniform, ucfg)
slope_p = metrics.loglog_slope(torch.tensor(ucfg.p, dtype=F64), nu.T_level)

# %% tags=["remove-cell"]
_ = ledger.judge(checks.nonuniform(nu, ucfg), show=False)
glue("nl-nu-table", Markdown(md_table(
    ["$p_k$", f"first step with $\\mathrm{{Attn}}_k \\ge {ucfg.level:g}$", "final $\\mathrm{Attn}_k$"],
    [[f"{p_:g}", f"{t:.0f}", f"{a:.3f}"] for p_, t, a in zip(ucfg.p, nu.T_level.tolist(), nu.own_k[-1].tolist())])))
glue("nl-nu-slope", slope_p)

# %% [markdown]
# ```{glue:md} nl-nu-table
# :format: myst
# ```
#
# Log-log slope of the time against $p_k$: {glue:text}`nl-nu-slope:.2f`.

# %% tags=["remove-input"] mystnb={"figure": {"caption": "The theory model with feature frequencies $p = (0.4, 0.3, 0.2, 0.1)$: own attention per feature (left) and the time to reach 0.9 against $p_k$ (right). The check Sec. 6 announces for App. A, which the paper does not contain.", "name": "fig-nl-nonuniform"}, "image": {"alt": "Four rising attention curves, rarer features later; the times grow faster than 1/p as p falls."}}
nlfig.show(nlfig.nonuniform_figure(nu))

# %% [markdown]
# ## The practical block: Figures 1–3
#
# The paper's figures come from a small transformer block, not from the theory model. We train the
# library's `OneBlockTransformer` (token $(x; y)\in\mathbb R^{16}$ → linear embedding of width 32 →
# pre-LN single-head attention with the query's self-score masked, + residual → pre-LN ReLU FFN
# $32\to64\to32$, + residual → LayerNorm → linear read-out at the query) on a fixed set of $M$
# prompts, batch 30. All six $L$ values and the seeds are runs of **one** batched training; runs of a
# seed share prompts and initialisation and differ only in $L$. The attention maps are the query's
# attention over the $N$ demonstrations, summed per feature, on held-out prompts.
#
# **Which optimizer?** The paper names none, and the verdicts on "larger $L$ converges faster" depend
# on it. Its explanation — "stronger gradient updates" for larger $L$ — is a property of plain
# gradient descent (R1), so the primary reading here is plain SGD (learning rate 0.03); Adam
# ($10^{-3}$), whose steps do not grow with the gradient, is the alternative. Both are trained and
# reported; where they disagree the figure is undecided. Figures 2 and 3 are also trained with SGD at
# a second step, 0.1, for their two values of $L$.
#
# ```{note}
# Scale. The paper gives no seeds; at `paper` scale we train 5 seeds per $L$ (30 runs × 4000
# steps per optimizer, and 10 more at SGD 0.1); the `ci` and `book` scales use $N = 50$, $M = 200$,
# 100 epochs, 1 seed.
# ```

# %%
# OneBlockTransformer: all six L and the seeds are runs of one batched training
bcfg = nl.BlockConfig.for_scale(SCALE)
block = full(nl.run_block, bcfg)  # plain SGD, learning rate 0.03 (the primary reading)
block_adam = full(nl.run_block, bcfg.replace(optimizer="adam", lr=1e-3))  # the alternative
# plain SGD at a second step size, for Figs. 2-3 (L = 0.1 and 1 only): the paper gives no
# step size, and whether "approaches 1 before epoch 200" holds at a given epoch depends on
# it (0.3 diverges; at 0.1 some runs at L = 0.1 do)
block_sgd01 = full(nl.run_block, bcfg.replace(lr=0.1, L_values=(0.1, 1.0)))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "The practical block trained with plain SGD (learning rate 0.03, the primary reading): (a, b) training (solid) and held-out (dashed) loss of the flat and sharp sets, (c, d) the attention of queries $v_1$. Reproduces Fig. 1 of Li, Duan and Liang (the runs, epochs and sizes of this scale are in the page's first cell).", "name": "fig-nl-block-fig1-sgd"}, "image": {"alt": "Loss and attention curves of the block under SGD: the sharp set converges within the run, larger L first; the flat set learns slowly."}}
nlfig.show(nlfig.block_fig1(block, f"SGD {bcfg.lr:g}"))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "As the previous figure with Adam (learning rate $10^{-3}$), the alternative reading. Reproduces Fig. 1 of Li, Duan and Liang (the runs, epochs and sizes of this scale are in the page's first cell).", "name": "fig-nl-block-fig1-adam"}, "image": {"alt": "Loss and attention curves of the block under Adam: every L converges; in the sharp set the larger L is not the faster."}}
nlfig.show(nlfig.block_fig1(block_adam, "Adam 1e-3"))

# %% [markdown]
# Solid: loss on the training prompts; dashed: held-out prompts with fresh tasks — they agree, so the
# block learns in context rather than memorising. We measure the convergence time of each run as the
# first epoch at which the own-feature attention (held-out prompts, mean over the four query
# features) reaches 0.9, and the first epoch at which the held-out loss is 5 % of the
# uniform-attention loss $\tfrac12\mathbb E(\bar y - y_{\rm query})^2$. A run that never gets there
# counts as later than the run lasted; an ordering between two such runs is undecided.

# %%
# per optimizer and L: the epochs to own attention 0.9 and to 5% of the uniform loss
bt = checks.block_table(block, block_adam)
# the paper-scale record of the block (SGD 0.03, 400 epochs): read where it is stored,
# never trained here (None where it is not shipped)
refb_cfg = nl.BlockConfig.for_scale("paper")
refb = full(nl.run_block, refb_cfg, _summary=True, _if_stored=True)

# %% tags=["remove-cell"]
assert bcfg.lr == 0.03  # the option "SGD 0.03" of claims.toml
_ = ledger.judge(checks.figure1(block, block_adam, bcfg, refb, refb_cfg), show=False)
glue("nl-block-table", Markdown("Epochs to own attention 0.9 and to 5% of the initial loss (inf: not reached):\n\n" + md_table(
    ["optimizer", "$L$", "own attention 0.9 at epoch", "5% loss at epoch", "final own attention", "final loss / uniform"],
    [[opt, f"{Lv:g}", f"{t:.0f}", f"{tl:.0f}", f"{ow:.3f}", f"{nfl:.3f}"]
     for opt, m in bt.items()
     for Lv, t, tl, ow, nfl in zip(bcfg.L_values, m["own"].tolist(), m["loss"].tolist(), m["final_own"].tolist(),
                                   m["final_norm_loss"].tolist())])))
iS = [list(bcfg.L_values).index(L) for L in nl.SHARP]
assert float(bt["Adam"]["final_own"].mean()) > 0.8 and float(bt["Adam"]["final_norm_loss"].max()) < 0.3
assert float(bt["SGD"]["final_own"][iS].mean()) > 0.7

# %% [markdown]
# ```{glue:md} nl-block-table
# :format: myst
# ```

# %% [markdown]
# Under SGD the paper's ordering within the sharp set appears in the mean over seeds, as the paper's
# explanation predicts, but not seed by seed: in the paper-scale record (five seeds) the final own
# attention at $L = 2$ is below that at $L = 1.5$ in two of them. Under Adam it need not appear: Adam's
# steps do not grow with the gradient, and the block must grow the scale of its read-out in proportion
# to $L$. With SGD the flat set converges slowly — its gradients are $L^2$ times smaller — and even in
# 400 epochs it stays below 0.9 (at $L = 0.1$ the own attention stalls near 0.3), so its ordering is
# undecided by the times to 0.9; its final own attention is ordered as the paper says in every seed of
# the paper-scale record.
#
# The loss *values* of the paper's text cannot all come from the stated task family. At $L = 0.1$,
# $|f|\le L/c = 0.2$, so a predictor with values in the label range has a loss of at most 0.08: "around 1.0
# by epoch 40" (Sec. 6) needs a normalisation the paper does not state. At $L = 1$ the predict-0 loss is
# $(L/c)^2/4 = 1.00$, so "≈0.6 at epoch 30" is possible there. The shapes and orderings are what can be compared.
#
# ### Figures 2 and 3: attention maps of the block over training
#
# Move the slider (it works in the static page, without a kernel) to see the maps of both $L$ values
# at successive epochs.

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Attention maps of the practical block at $L = 0.1$, seed 0, held-out prompts; key $i$ = row, query $j$ = column. Fig. 2 of Li, Duan and Liang under plain SGD at learning rate 0.03, one of the three optimizer settings the ledger runs (the table above compares them; the runs, epochs and sizes of this scale are in the page's first cell).", "name": "fig-nl-block-maps-flat"}, "image": {"alt": "Heat maps of the block's attention at several epochs for L = 0.1."}}
nlfig.show(nlfig.block_maps_figure(block, 0.1))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "As the previous figure at $L = 1$: Fig. 3 of Li, Duan and Liang under plain SGD at learning rate 0.03 (the table above compares the three settings).", "name": "fig-nl-block-maps-sharp"}, "image": {"alt": "Heat maps of the block's attention at several epochs for L = 1: the diagonal grows faster than at L = 0.1."}}
nlfig.show(nlfig.block_maps_figure(block, 1.0))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "The block's attention maps for $L = 0.1$ and $L = 1$ at a chosen epoch (SGD, seed 0); the slider works without a kernel.", "name": "fig-nl-block-maps-slider"}}
nlfig.block_maps_slider(block)

# %%
# Figs. 2-3 under three settings of the optimizer and its step
RUNS23 = {"SGD 0.03": block, "SGD 0.1": block_sgd01, "Adam 1e-3": block_adam}
# per setting: the first epoch with every diagonal entry >= 0.9, and the highest level
# that every diagonal entry reaches, per seed
maps23 = {name: checks.maps_table(RUNS23, Lv) for name, Lv in (("F2", 0.1), ("F3", 1.0))}

# %% tags=["remove-cell"]
_ = ledger.judge(checks.figures2_3(RUNS23, bcfg, refb, refb_cfg, SCALE), show=False)
refb_own = checks.reference_own(refb)
glue("nl-maps-text", Markdown(
    ("In the paper-scale record (SGD 0.03, 400 epochs, $N = 100$, $M = 300$, "
     f"{refb_cfg.seeds} seeds) the final own attention is " + "; ".join(
         f"{min(v):.2f} to {max(v):.2f} at $L = {Lv:g}$" for Lv, v in refb_own.items()) + ".\n\n" if refb_own else "")
    + "Figures 2 and 3 under each setting (first epoch at which every diagonal entry is at least 0.9, "
    f"censored mean over {bcfg.seeds} seed(s); the highest level every diagonal entry reaches, median over seeds):\n\n"
    + md_table(["figure", *RUNS23], [[f"Fig. {name[1]} ($L = {Lv:g}$)", *[
        (f"epoch {maps23[name][0][o]:.0f}" if math.isfinite(maps23[name][0][o]) else "not reached")
        + f"; {float(torch.tensor(maps23[name][1][o]).median()):.3f}" for o in RUNS23]]
        for name, Lv in (("F2", 0.1), ("F3", 1.0))])))

# %% [markdown]
# ```{glue:md} nl-maps-text
# :format: myst
# ```

# %% [markdown]
# Figures 2 and 3 come with epochs (before 300 at $L = 0.1$, before 200 at $L = 1$) for an optimizer
# and a step size the paper does not name, and an epoch count scales with the step size. The ledger
# therefore reads the level (every diagonal entry at least 0.9 within the run) as the statements'
# content and the epoch as a remark, and it trains three settings: plain SGD at two steps, 0.03 and
# 0.1 (at 0.3 every run diverges; at 0.1 some runs at $L = 0.1$ do), and Adam ($10^{-3}$). Which one the paper used cannot be
# told: gradient descent at a free step is its analysis's, an adaptive optimizer the common practice,
# and its epochs are bounds ("before"), which none of them contradicts. "Approaches 1" fixes no level
# either: we read it as every diagonal entry reaching 0.9 (the median over seeds, with its bootstrap
# interval), and try 0.8 and 0.95. Where the settings disagree at any of these levels, our choice, not
# the measurement, would decide, and the ledger files the figure as inconclusive (so also Fig. 1's
# sharp ordering, which Adam reverses). The table above gives each setting's first epoch and level. At
# the paper's size (400 epochs, five seeds) only Adam gets there at $L = 0.1$, and at $L = 1$ the faster
# SGD step and Adam get close to 1 while the slower SGD step tops out near 0.95, after the paper's epoch
# 200: both figures are undecided.
# A run shorter than the paper's epoch that has not reached the level decides nothing.
#
# **Do the cross attentions oscillate?** The paper says $q_{k,k'}$ "oscillates ... with an overall
# decreasing trend" (Props. 2–3), the abstract that attention to irrelevant features "can
# oscillate". Its proof (Lemma 4) only bounds $|g_{k,k'}|$, and Sec. 5.2 says $g_{k,k'}$ "may fluctuate
# in sign": a sign change is permitted, not asserted. The ledger therefore reads the statement as a
# rate bound with a trend — every cross weight ends below where it started, and moves less per step
# than its row's own weight — and reports the sign-change reading (more than 1 % of the increments
# change sign) beside it. In the theory model with orthogonal features the trend holds for every pair
# (the rows of $q$ sum to zero, so the cross weights fall on average, though not each one by force),
# and no increment changes sign. The paper states its results for general features that keep the
# separation of Sec. 3.1, not only orthonormal ones, so the ledger also runs three draws of Gaussian
# feature directions that keep it: there some cross weights *rise* steadily through training, which
# the statement's decreasing trend excludes (App. C evaluates the gradients for orthonormal features
# only, C4c). The propositions' proofs use $\delta = o(1)$, which needs $N > 20K^3$, so the ledger decides
# on prompts of $N = 10^5$ demonstrations, inside it: the rising cross weights remain there, and there
# are more of them. The block is a third picture: some cross attentions $\mathrm{Attn}_{k,1}$ of queries
# $v_1$ first rise before decaying (Fig. 1(d) of the block above); it is another model and is shown,
# not counted.

# %%
# the theory run's cross weights q_(k,k') on the flat L (L <= L*): final values, sign changes
cw = checks.cross_weight_stats(theory, tcfg)
# the block's cross attention Attn_(k,1) that rises most above its start, per optimizer
bump = {"SGD": checks.block_bump(block), "Adam": checks.block_bump(block_adam)}

# %% tags=["remove-cell"]
# decided inside delta = o(1): prompts of N = 10^5, orthogonal and three draws of Gaussian features (checks.cross_weights)
_ = ledger.judge(checks.cross_weights_decrease(theory, tcfg, block, block_adam), show=False)
glue("nl-bump-text", Markdown("At $L = 1$: " + "; ".join(
    f"under {opt}, $\\mathrm{{Attn}}_{{{b[0]},1}}$ goes from {b[1]:.2f} up to {b[2]:.2f} and ends at {b[3]:.2f}"
    for opt, b in bump.items()) + "."))

# %% [markdown]
# ```{glue:md} nl-bump-text
# :format: myst
# ```

# %% [markdown]
# ## Figure 4: polynomial tasks on Gaussian inputs
#
# App. A trains on $f(x) = x^\top Ax + b^\top x$ with $A_{ij}, b_i\sim\mathcal N(0,(L/d)^2)$ and inputs from
# "a continuous Gaussian distribution" (we take $x\sim\mathcal N(0,I_d)$, $A$ not symmetrised), $d = 30$,
# $N = 150$, $M = 500$, and reports the loss averaged over 30 runs. Epochs and optimizer are not given:
# we use the block of Sec. 7 with batch 50 and 400 epochs, plain SGD as the primary reading and Adam as
# the alternative. Convergence is measured on a scale-aware level — the first epoch at which the
# training loss is half the loss of predicting 0 — because the untrained block's loss is up to ~47
# times the predict-0 loss at small $L$, so "10 % of the initial loss" would measure how fast it
# shrinks its own output.
#
# ```{note}
# Scale. The paper's setting (30 runs × 6 values of $L$ × 400 epochs = 180 runs × 4000 steps in one
# batched training) takes more than an hour per optimizer on one core, so the book reads these runs
# from the reference results shipped with it (`icl-lab run nonlinear.polynomial --scale paper` and
# `nonlinear.polynomial_adam` recompute them). The theory model is trained by the page, with one run per
# $L$, $N = 75$, $M = 150$ and 200 GD steps. At the reduced `book` scale the page also trains the block
# itself, with that smaller size and 40 epochs.
# ```
#
# There is no finite feature set here, so no attention maps; we report the training loss, the
# held-out loss on fresh tasks, and the loss of predicting 0 (the best constant, since $\mathbb Ef = \mathbb E\,\mathrm{tr}A = 0$).

# %%
# d = 30, N = 150, M = 500, 400 epochs, batch 50 (smaller below the paper scale)
pcfg = nl.PolynomialConfig.for_scale(SCALE)
# the paper-scale runs (30 x 400 epochs per optimizer, over an hour of one core each)
# are read where stored, never trained here
ref4_cfg = nl.PolynomialConfig.for_scale("paper")
ref4a_cfg = nl.PolynomialAdamConfig.for_scale("paper")
poly_ref = full(nl.run_polynomial, ref4_cfg, _if_stored=True)
poly_ref_a = full(nl.run_polynomial_adam, ref4a_cfg, _if_stored=True)
small = nl.PolynomialConfig.for_scale("book") if SCALE == "paper" else pcfg
poly = (poly_ref if SCALE == "paper" and poly_ref is not None else
        full(nl.run_polynomial, pcfg))
poly_adam = (poly_ref_a if SCALE == "paper" and poly_ref_a is not None else
             full(nl.run_polynomial, small.replace(optimizer="adam", lr=1e-3)))
poly_t = full(nl.run_polynomial_theory, small)  # the theory model, trained at every scale
icl_lab.notebook.reduced(("the block", pcfg))

# %% tags=["remove-cell"]
for key, cfg in (("f4", pcfg), ("f4r", ref4_cfg)):
    for field in ("seeds", "epochs", "N", "M"):
        glue(f"nl-{key}-{'runs' if field == 'seeds' else field}", getattr(cfg, field))
for field, name in (("seeds", "runs"), ("N", "N"), ("M", "M"), ("theory_steps", "steps")):
    glue(f"nl-f4t-{name}", getattr(small, field))

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Fig. 4 tasks (random quadratics over Gaussian inputs): training (solid) and held-out (dashed) loss of the block under SGD and Adam, and of the theory model; dotted: predicting 0 (block) or uniform attention (theory model). Reproduces Fig. 4 of Li, Duan and Liang: the two block rows are runs of the scale this page was built with (the paper's full size at the book's: {glue:text}`nl-f4-runs` runs per $L$, {glue:text}`nl-f4-epochs` epochs, $N =$ {glue:text}`nl-f4-N`, $M =$ {glue:text}`nl-f4-M`); the theory row is a smaller run ({glue:text}`nl-f4t-runs` run(s) per $L$, $N =$ {glue:text}`nl-f4t-N`, $M =$ {glue:text}`nl-f4t-M`, {glue:text}`nl-f4t-steps` GD steps).", "name": "fig-nl-fig4"}, "image": {"alt": "Three rows of loss curves: training losses fall, held-out losses stay at or above the dotted baselines."}}
nlfig.show(nlfig.fig4([(poly, f"block, SGD {pcfg.lr:g}", "epoch", "predict 0", "zero_baseline"),
                            (poly_adam, "block, Adam 1e-3", "epoch", "predict 0", "zero_baseline"),
                            (poly_t, "theory model", "GD step", "uniform attention (Q = 0)", "baseline")]))

# %%
# the epochs to a training loss of 1/2 the predict-0 loss, per L
T_half = {"SGD": nl.half_zero_times(poly), "Adam": nl.half_zero_times(poly_adam)}
# initial and final training loss, and final held-out loss, over the predict-0 loss
r4 = checks.poly_ratios(poly)

# %% tags=["remove-cell"]
_ = ledger.judge([checks.figure4(poly, poly_adam, pcfg, poly_ref, poly_ref_a, ref4_cfg), checks.memorisation(poly, poly_adam, pcfg)],
                 show=False)
glue("nl-poly-table", Markdown("Losses relative to the predict-0 loss (inf: not reached within the run):\n\n" + md_table(
    ["$L$", "initial training loss", "training loss $\\le 1/2$ from epoch (SGD)", "from epoch (Adam)",
     "final training loss (SGD)", "final held-out loss (SGD)"],
    [[f"{Lv:g}", f"{float(r4['init'][j]):.2f}", f"{float(T_half['SGD'][j]):.0f}", f"{float(T_half['Adam'][j]):.0f}",
      f"{float(r4['train'][j]):.3f}", f"{float(r4['test'][j]):.2f}"] for j, Lv in enumerate(pcfg.L_values)])))
assert float(checks.poly_ratios(poly_adam)["train"].max()) < 0.5

# %% [markdown]
# ```{glue:md} nl-poly-table
# :format: myst
# ```

# %% [markdown]
# ### Figure 4 at the paper's full size
#
# The full run — 30 runs per $L$, $N = 150$, $M = 500$, 400 epochs, once under SGD and once under Adam
# from the same prompts and initialisations — is a pair of reference results made once with
# `icl-lab run nonlinear.polynomial --scale paper` and `icl-lab run nonlinear.polynomial_adam --scale paper`,
# shipped in `results/reference/` (see {ref}`reproduce`). At the papers' setting, at which the book is built,
# they are the block rows of the figure above; a reader who recomputes the page at a reduced scale sees them
# drawn alone below, beside that scale's own smaller runs. The ledger decides Fig. 4's orderings on their
# runs, paired by seed (one reduced run per $L$ cannot decide an ordering), under both optimizers.

# %% tags=["remove-cell"]
glue("nl-fig4-note", Markdown(
    "```{note}\nThe paper-scale reference records of Fig. 4 are not all shipped with this copy of the book: "
    "`tools/reference_runs.sh nonlinear.polynomial nonlinear.polynomial_adam` computes them (over an hour of "
    "one core each).\n```" if poly_ref is None or poly_ref_a is None else ""))
glue("nl-fig4-ref-text", Markdown(nlfig.fig4_reference_text(poly_ref, poly_ref_a, poly, pcfg, ref4_cfg, SCALE)))

# %% [markdown]
# ```{glue:md} nl-fig4-note
# :format: myst
# ```

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Fig. 4 at the paper's size: training (solid) and held-out (dashed) loss of the block under SGD (top) and Adam (bottom) on the flat and sharp $L$-sets, mean and spread over {glue:text}`nl-f4r-runs` runs per $L$, {glue:text}`nl-f4r-epochs` epochs, $N =$ {glue:text}`nl-f4r-N`, $M =$ {glue:text}`nl-f4r-M`; dotted: predicting 0. The training losses fall below the predict-0 line while the held-out losses stay at or above it, as in the page's smaller runs above. Reproduces Fig. 4 of Li, Duan and Liang at full size.", "name": "fig-nl-fig4-paper"}, "image": {"alt": "Two rows of loss curves at the paper's full size, flat and sharp L-sets: training losses fall, held-out losses stay near or above the dotted predict-0 line."}}
if poly_ref is not None and SCALE != "paper":  # at paper scale: the block rows of the figure above
    plotting.finish(nlfig.fig4([(poly_ref, f"block, SGD {ref4_cfg.lr:g}", "epoch", "predict 0", "zero_baseline")]
                               + ([(poly_ref_a, f"block, Adam {ref4a_cfg.lr:g}", "epoch", "predict 0", "zero_baseline")]
                                  if poly_ref_a is not None else [])))

# %% [markdown]
# ```{glue:md} nl-fig4-ref-text
# :format: myst
# ```

# %% [markdown]
# Fig. 4 is reproducible as **training** dynamics only: the block drives the loss on its $M = 500$
# training prompts towards zero while its loss on fresh prompts stays at or above that of predicting
# 0. With $N = 150$ Gaussian points in $d = 30$ and a quadratic with $\approx d^2/2 + d$ free
# coefficients, a context does not determine its task, and nothing in the block can do the
# regression — it memorises the training set instead (the theory model below does the same). This does not test the paper's mechanism
# (attention to same-feature tokens), which needs repeated features.

# %% [markdown]
# ### Figure 4 for the theory model
#
# The same prompt sets, now with the Q-only model (from $Q = 0$, full-batch GD with step 0.1 —
# not given by the paper — for `theory_steps` steps). By {prf:ref}`prop-nl-rescaling` its $L$-ordering
# is exact: a larger $L$ is a larger step.

# %%
# per L: final / initial training loss, and held-out loss / that of uniform attention
final_rel_t, test_over_unif_t = checks.theory_poly_ratios(poly_t)

# %% tags=["remove-cell"]
_ = ledger.judge(checks.figure4_theory(poly_t, pcfg, small), show=False)
glue("nl-poly-t-table", Markdown(md_table(["$L$", "final / initial train loss", "final held-out loss / uniform attention"],
                                          [[f"{Lv:g}", f"{a:.3f}", f"{b:.3f}"] for Lv, a, b in
                                           zip(pcfg.L_values, final_rel_t.tolist(), test_over_unif_t.tolist())])))
assert float(test_over_unif_t.min()) > 0.9

# %% [markdown]
# ```{glue:md} nl-poly-t-table
# :format: myst
# ```

# %% [markdown]
# The Q-only model, with only $d^2 = 900$ parameters and no read-out to fit, also drives its training
# loss down while its held-out loss stays at the level of uniform attention: with continuous Gaussian
# inputs in $d = 30$, a $Q$ can pick out idiosyncratic directions of the $M$ training prompts, and
# there is no feature structure that would make attention generalise.
#
# ## The feature-norm factor (observation R3)
#
# Lemma 2 as printed has no dependence on the feature norm, but D5 says orthogonal features of norm
# $s$ multiply every step by $s^4$. A cell makes the point on the full model: unit features with step
# $\eta s^4$ and norm-$s$ features with step $\eta$ give the same attention at every step.

# %%
s_norm = 3.0 / math.sqrt(2)  # the norm of the book's features (Delta / sqrt 2) e_k
Vu = nl.make_features("unit", 4, 15, 3.0)
Vs = s_norm * Vu
batch = nl.cosine_sampler(Vu, 100, 0.5).sample(200, icl_lab.make_generator(4))
fp_u = th.FeaturePrompts.from_batch(batch)
run = dict(steps=100, record_every=1, with_maps=False)
ta = th.feature_gd(fp_u, Vs @ Vs.T, lr=0.2, **run)  # norm s, step eta
tb = th.feature_gd(fp_u, Vu @ Vu.T, lr=0.2 * s_norm**4, **run)  # unit norm, step eta s^4
r3_gap = float((ta.own - tb.own).abs().max())

# %% tags=["remove-cell"]
_ = ledger.judge(checks.feature_norm(r3_gap, s_norm), show=False)
glue("nl-s4", s_norm**4)
glue("nl-r3-gap", r3_gap)
assert r3_gap < 1e-10

# %% [markdown]
# With $s^4 =$ {glue:text}`nl-s4:.2f`, the attention of features of norm $s$ at step size $\eta$ and that of
# unit features at $\eta s^4$ agree to {glue:text}`nl-r3-gap:.0e` over 100 steps.

# %% [markdown]
# ## Explore
#
# The slider below (kernel-free, pre-rendered from the runs above) steps through the {glue:text}`nl-theory-nL` values of
# $L$ of the theory model: its loss curve among the others, its attention map at step 25, and its
# place in the data collapse. In a live notebook, the `ipywidgets` panel under it re-runs the exact
# dynamics for any $L$, $\Delta$, $\eta$, $K$ and feature geometry (orthonormal, random orthonormal,
# or non-orthogonal Gaussian directions) in well under a second.

# %% tags=["remove-input"] mystnb={"figure": {"caption": "The {glue:text}`nl-theory-nL` values of $L$ of the theory model at $\\eta =$ {glue:text}`nl-theory-lr:g` (seed 0): loss among the others (grey), the attention map at step 25, and the place of the run in the data collapse. Kernel-free slider; not a figure of the paper.", "name": "fig-nl-theory-slider"}}
nlfig.theory_slider(theory)

# %% tags=["remove-cell"]
nlfig.live_explorer()

# %% [markdown]
# ## Exercises
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
# ````{exercise}
# :label: ex-nl-predict-T1
#
# From the measured Phase-I duration $T^1$ at $L = 0.1$ and $\eta = 10$ (Sec. 3's run), predict $T^1$
# for $L = 0.3$ at the same step size, then check against a run.
# ````
#
# ```{solution-start} ex-nl-predict-T1
# :class: dropdown
# ```
#
# By {prf:ref}`prop-nl-rescaling`, $T^1(\eta, L) = T^1(\eta L^2, 1)$, and in the continuous-time regime
# $T^1\propto 1/(\eta L^2)$, so $T^1(0.3)\approx T^1(0.1)\cdot(0.1/0.3)^2 = T^1(0.1)/9$, up to one step of
# rounding (the prediction is good while $T^1$ is many steps). The cell measures both.

# %%
i01t = list(tcfg.L_values).index(0.1)
lvl = nl.phase1_level(tcfg.K)
own_theory = torch.diagonal(theory.maps[0], dim1=-2, dim2=-1).mean(-1)  # (T, nL)
T1_01 = float(metrics.first_crossing(own_theory[:, i01t : i01t + 1], lvl)[0])
tr03 = th.feature_gd(theory.prompts[0], theory.V @ theory.V.T, steps=tcfg.steps, lr=tcfg.lr,
                     scale=0.3)  # the same prompts at L = 0.3
own03 = torch.diagonal(tr03.maps, dim1=-2, dim2=-1).mean(-1)
T1_03 = float(metrics.first_crossing(own03, lvl)[0])

# %% tags=["remove-cell"]
glue("nl-ex2-T1", T1_01)
glue("nl-ex2-pred", T1_01 / 9)
glue("nl-ex2-T1-03", T1_03)
assert abs(T1_03 - T1_01 / 9) <= 0.15 * T1_01 / 9 + 1

# %% [markdown]
# Measured $T^1 =$ {glue:text}`nl-ex2-T1:.0f` steps at $L = 0.1$, so the prediction for $L = 0.3$ is
# {glue:text}`nl-ex2-T1:.0f`$/9 \approx$ {glue:text}`nl-ex2-pred:.0f` steps; the run at $L = 0.3$ takes
# {glue:text}`nl-ex2-T1-03:.0f`.
#
# ```{solution-end}
# ```

# %% [markdown]
# ````{exercise}
# :label: ex-nl-late
#
# Using D10, predict the loss of the theory model after $t$ steps of GD with step $\eta$, deep in
# the late phase, for $K$ balanced orthogonal features of norm $s$. Why does $L$ not appear? What does
# this imply for the paper's time bounds?
# ````
#
# ```{solution-start} ex-nl-late
# :class: dropdown
# ```
#
# $\mathcal L(t)\approx (K-1)/(4\eta s^4 t)$. The loss on queries of feature $k$ obeys
# $\dot{\mathcal L}_k = -\frac{4K}{K-1}\eta s^4 p_k\mathcal L_k^2$ whatever its prefactor (the factor
# $K/(K-1)$ because the $K-1$ cross weights share the growth of $q_k$: the rows of $q$ sum to zero), so
# the prefactor — the only place $L$ (and the task law, and the counts) enters — is forgotten:
# $\mathcal L_k\approx (K-1)/(4K\eta s^4p_kt)$, and $\sum_k p_k\mathcal L_k = (K-1)/(4\eta s^4 t)$ whatever the $p_k$.
# With $\mathcal L\propto L^2 e^{-2q}$ early and $\propto 1/t$ late, the time to reach a loss $\epsilon^2$
# is $\Theta(1/(\eta\epsilon^2))$ once $\epsilon^2\ll L^2$: polynomial in $1/\epsilon$, in both regimes,
# unlike the $\log(1/\epsilon)$ of Thm 1. The long run of Sec. 5 measured the ratio below.

# %%
# L -> the late constant C over the second half of the long run
C_late = dict(zip(lcfg.L_values, late_s["C_each"].tolist()))

# %% tags=["remove-cell"]
glue("nl-ex3-table", Markdown(md_table(["$L$", "late constant $C = 4\\eta s^4\\,dt/d(1/\\mathcal L)$"],
                                       [[f"{Lv:g}", f"{v:.2f}"] for Lv, v in C_late.items()])))
glue("nl-ex3-K1", lcfg.K - 1)

# %% [markdown]
# ```{glue:md} nl-ex3-table
# :format: myst
# ```
#
# over the second half of the long run; the prediction is $K - 1 =$ {glue:text}`nl-ex3-K1` for every $L$.
#
# ```{solution-end}
# ```

# %% [markdown]
# ## Claims ledger
#
# Statuses follow from the measurements above (at the scale this page was built with), under the
# book's rules for judging claims (kinds, hypotheses, decision rules). In short: the mechanism —
# attention concentrating on same-feature tokens, Lemma 1, Prop. 1, the $1/L^2$ and $1/\eta$ scalings —
# reproduces, exactly in the theory model; Lemma 2's exact identities need orthonormal features, while
# its $g_k > 0$ holds for correlated features too on the expected loss (a training set of 300 prompts can
# break it by sampling noise); between the phase ends Props. 2–3 state, the Phase-II rate falls like $1/N$ as
# Prop. 3 says, but reaching Prop. 2's end then takes longer as $N$ grows, so $T_f^1$ is not free of $\delta$
# (between fixed levels it is the other way round), and Phase I lasts $\sim K^2$ rather than $K\log K$
# steps in the population dynamics; the theory model has no transition at $L^*$ (R1), and its time to accuracy
# grows faster than $\log(K/\epsilon)$ in the flat regime and stays below Thm 1's bound with constant 1 at the
# paper's step (with the step corrected for App. C's missing $\|v\|^4$, as for $\Delta$, it exceeds it within $K\ge1/\epsilon$),
# while Thm 2's $\epsilon^{-1}\log(1/\epsilon)$ bounds the time at $N = 10^5$, inside $\delta = o(1)$ (by R1 the same
# trajectory as the flat run). For the practical block the verdicts depend on the optimizer and step size the paper
# does not name: where plain SGD and Adam disagree (Figs. 1–4), or SGD's two steps do (Fig. 3), the figure is undecided.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
