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
# # Nonlinear regression III — how long Phase I lasts
#
# Prop. 2 of {cite:t}`li2025nonlinear` gives the duration of Phase I, the first stretch of training in which the
# own-feature attention rises from $1/K$ to a constant: $T_f^1 = \Theta\big(\frac{K\log K}{\eta L^2\Delta^2}\big)$ steps
# (derivation D7 of {doc}`part II <nonlinear_phases>`). **This page** measures that duration on the theory model
# over grids of the four quantities in the formula — $L$ and $\eta$ together, the number of features $K$ (on
# training sets, with more prompts, and in the population limit), and the feature distance $\Delta$ — and
# compares each slope with the paper's. The notation is {doc}`part I <nonlinear_lemmas>`'s.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 6.65, "book": 2.35, "paper": None})

# %%

import torch
from IPython.display import Markdown

import icl_lab
from icl_lab import metrics
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.nonlinear import checks
from icl_lab.papers.nonlinear import experiments as nl
from icl_lab.papers.nonlinear import figures as nlfig
from icl_lab.papers.nonlinear import theory as th
from icl_lab.papers.nonlinear import theory_phases as tp
from icl_lab.render import md_table

SCALE, ledger = icl_lab.notebook.chapter("nonlinear", part="durations")
F64 = torch.float64

# %%
# part II's theory-model runs (the same seeded computation, read where stored), for the exercise
tcfg = nl.TheoryConfig.for_scale(SCALE)
theory = full(nl.run_theory, tcfg)

# %% [markdown]
# ## Phase I's duration against $L$, $\eta$, $K$ and $\Delta$
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
# at the paper's step (C13, and C8b on {doc}`part IV <nonlinear_rates>`) and reports the corrected step beside it.

# %%
scfg = nl.SweepConfig.for_scale(SCALE)  # the L x eta grid, the K grid and the Delta grid
sweep = full(nl.run_sweep, scfg)
slopes = checks.sweep_slopes(sweep, scfg)  # log-log slopes of T^1 (over durations > 5 steps)

# %% tags=["remove-cell"]
glue("nl-T1-table", Markdown(md_table(["$\\eta$ \\ $L$", *[f"{v:g}" for v in scfg.L_grid]],
                                      [[f"{e:g}", *[f"{t:.0f}" for t in row]] for e, row in zip(scfg.eta_grid, sweep.T1_L_eta.tolist())])))
glue("nl-slopes-L", ", ".join(f"{v:.2f}" for v in slopes["L"]))
for key in ("eta", "rate_L", "K", "Kref", "KlogK", "top_T1", "top_ref", "rate_K", "top_rate"):
    glue(f"nl-slope-{key}", slopes[key])
glue("nl-K-grid", ", ".join(f"{k:g}" for k in scfg.K_grid))
glue("nl-T1-K", ", ".join(f"{t:.0f}" for t in sweep.T1_K.tolist()))
glue("nl-cross-ratio", ", ".join(f"{v:.2f}" for v in sweep.cross_ratio.tolist()))
glue("nl-one-over-K", 1 / scfg.K)

# %% [markdown]
# ```{glue:md} nl-T1-table
# :format: myst
# ```
#
# Phase-I duration $T^1$ in GD steps (rows: $\eta$, columns: $L$).
#
# Log-log slopes of $T^1$ against $L$: {glue:text}`nl-slopes-L` (one per $\eta$); against $\eta$:
# {glue:text}`nl-slope-eta:.2f`; first-step rate $g_k(0)$ against $L$: {glue:text}`nl-slope-rate_L:.2f`.
# $T^1$ against $K$ = {glue:text}`nl-K-grid`: {glue:text}`nl-T1-K` steps (slope {glue:text}`nl-slope-K:.2f`;
# $(K-1)\log K$: {glue:text}`nl-slope-Kref:.2f`; $K\log K$: {glue:text}`nl-slope-KlogK:.2f`); on the top octave
# $T^1 \sim K^{a}$ with $a =$ {glue:text}`nl-slope-top_T1:.2f` against $(K-1)\log K \sim K^{b}$ with
# $b =$ {glue:text}`nl-slope-top_ref:.2f`. The mean Phase-I rate falls with $K$ at slope
# {glue:text}`nl-slope-rate_K:.2f` (top octave {glue:text}`nl-slope-top_rate:.2f`; paper: $-1$). Cross/own
# ratio $|q_{k,k'}|/q_k$ at the end of Phase I: {glue:text}`nl-cross-ratio` ($1/K$ = {glue:text}`nl-one-over-K:.2f`).

# %% mystnb={"figure": {"caption": "Phase-I duration $T^1$ of the theory model (a) against $L$ for three $\\eta$, (b) against $K$ with the references $(K-1)\\log K$ and $K\\log K$, (c) against $\\Delta$ with the step divided by $\\|v\\|^4$ (at the paper's step of Eq. (8) the durations fall like $\\Delta^{-6}$). Not a figure of the paper.", "name": "fig-nl-sweeps"}, "image": {"alt": "Log-log plots: T1 falls like L^-2 and, at the step divided by the fourth power of the feature norm, like Delta^-2; against K it grows faster than both references."}}
nlfig.show(nlfig.sweep_figure(sweep, slopes))

# %% [markdown]
# Prop. 2's $K$-dependence, three ways: the sweep at two more seeds (each redraws every prompt), the top
# octave of $K$ with more prompts, and the population limit of the same dynamics (the expected loss of
# Eq. 7 with balanced counts, `tp.population_phase1`), where $K$ can go much further.

# %%
sweeps_K = [sweep] + [full(nl.run_sweep, scfg.replace(seed=sd)) for sd in (1, 2)]  # seeds 1, 2
M_big = icl_lab.by_scale(ci=500, paper=3000)  # prompts at the top octave of K
K_top = [int(k) for k in scfg.K_grid[-2:]]
T1_big = [[float(full(nl._phase1, scfg.replace(M=M_big, seed=sd), Kk, max(scfg.N, 2 * Kk**3), scfg.delta, scfg.L_ref,
                      scfg.eta_ref, M_big, direct=True, _keep=("T1",))["T1"][0]) for Kk in K_top] for sd in range(3)]
K_pop = [8, 16, 32, 64, 128, 256, 512]  # T^1 in units of eta x steps, at each of tp.POPULATION_LEVELS
T1_pop = torch.tensor([full(tp.population_phase1, k, scfg.delta) for k in K_pop[:-1]]
                      + [tp.population_phase1_reduced(K_pop[-1], scfg.delta)], dtype=F64)  # K = 512: by symmetry
reduced_gap = float((torch.tensor(tp.population_phase1_reduced(256, scfg.delta), dtype=F64)
                     - T1_pop[K_pop.index(256)]).abs().max())  # the reduction against the library's GD
g0_pop = [tp.population_first_step_rate(k, scfg.delta) for k in K_pop]  # Prop. 2's rate at t = 0, same limit

# %% tags=["remove-cell"]
top_T1_seeds, _ = checks.top_octave_slopes(sweeps_K, scfg)
top_ref, top = slopes["top_ref"], slopes["top"]
top_T1_big = [metrics.loglog_slope(torch.tensor(K_top, dtype=F64), torch.tensor(T)) for T in T1_big]
excess_pop = checks.excess_slopes(K_pop, T1_pop)
LV0, LV9 = tp.POPULATION_LEVELS
glue("nl-M-big", M_big)
glue("nl-M", scfg.M)
glue("nl-K-top", f"{K_top[0]}, {K_top[1]}")
glue("nl-T1-big", "; ".join(f"{T[0]:.0f}, {T[1]:.0f}" for T in T1_big))
glue("nl-T1-top", f"{sweep.T1_K[top[0]]:.0f}, {sweep.T1_K[top[1]]:.0f}")
glue("nl-excess-big", ", ".join(f"{v - top_ref:.2f}" for v in top_T1_big))
glue("nl-excess-seeds", ", ".join(f"{v - top_ref:.2f}" for v in top_T1_seeds))
glue("nl-excess-pop", ", ".join(f"{a}→{b}: {e:.2f}" for a, b, e in zip(K_pop, K_pop[1:], excess_pop[LV0])))
glue("nl-excess-pop-09", ", ".join(f"{e:.2f}" for e in excess_pop[LV9][1:]))
glue("nl-reduced-gap", reduced_gap)
assert reduced_gap < 1e-9
assert all(abs(s + 2) < 0.25 for s in slopes["L"]) and bool((sweep.T1_delta[1:] <= sweep.T1_delta[:-1]).all())

# %% tags=["remove-input"]
ledger.judge([*checks.phase1_rates(sweeps_K, scfg, K_pop, g0_pop), checks.phase1_K(sweeps_K, scfg, T1_big, M_big, K_pop, T1_pop),
              checks.phase1_delta(sweep, scfg)]);

# %% [markdown]
# With {glue:text}`nl-M-big` prompts instead of {glue:text}`nl-M`, $T^1$ at $K =$ {glue:text}`nl-K-top` is
# {glue:text}`nl-T1-big` steps (three prompt sets; {glue:text}`nl-M` prompts, seed 0: {glue:text}`nl-T1-top`):
# the top-octave slope minus that of $(K-1)\log K$ is {glue:text}`nl-excess-big` (with {glue:text}`nl-M`
# prompts: {glue:text}`nl-excess-seeds`). In the population limit the excess slope of $T^1$ over
# $(K-1)\log K$ on the octaves {glue:text}`nl-excess-pop` (at the level 0.9: {glue:text}`nl-excess-pop-09`
# from 16→32). $K = 512$ runs the two-weight symmetric reduction of the same dynamics, which equals the
# library's GD at $K = 256$ to {glue:text}`nl-reduced-gap:.0e`.

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
# ## Summary
#
# * Phase I lasts $\propto 1/(\eta L^2)$ steps, exactly as Prop. 2 says (and as R1 forces).
# * Against $K$ it grows faster than $K\log K$: in the population limit the excess slope keeps growing,
#   because the first-step rate falls like $K^{-2}$, not $K^{-1}$.
# * At the paper's own step the duration falls like $\Delta^{-6}$, not $\Delta^{-2}$: App. C drops the factor
#   $\|v\|^4$ of the feature norm; with the step divided by it, the $\Delta^{-2}$ returns.
#
# The {doc}`next page <nonlinear_rates>` follows the theory model past Phase I to the time to accuracy $\epsilon$.

# %% [markdown]
# ## Exercise
#

# ````{exercise}
# :label: ex-nl-predict-T1
#
# From the measured Phase-I duration $T^1$ at $L = 0.1$ and $\eta = 10$ (the runs of {doc}`part II <nonlinear_phases>`'s Figure 1), predict $T^1$
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
# ## Claims ledger (part III)
#
# The claims checked on this page, with their measurements at the scale this page was built with. The other
# five pages have their own ledgers; the synthesis chapter joins them.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
