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
# # In-context convergence III — the four phases of a rare feature
#
# [Part II](convergence_balanced.ipynb) showed the dominant feature converging in one phase. **This page**
# follows an under-represented feature $v_k$ ($k\ge2$, $p_k = \Theta(1/K)$) through the four phases of
# Theorem 3.2: attention first leaves the dominant feature, then the target takes over the lead, grows, and
# converges. We draw the paper's Figure 1 from data, time the phases for $K$ up to 2000 and several $p_1$
# (and, with a three-number reduction of the column, up to $K = 10^{100}$), derive a late-time law the paper
# does not state, and ask where the switch of the leading influence actually happens. The notation is
# [part I](convergence_setup.ipynb)'s.
#
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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.64, "book": 1.13, "paper": None})

# %%
import math

import numpy as np

import icl_lab
from icl_lab import plotting
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers.convergence import SymmetricColumn, checks, phase_times, value_at
from icl_lab.papers.convergence import experiments as cv
from icl_lab.papers.convergence import figures as cplot
from icl_lab.papers.convergence import theory as th
from icl_lab.papers.convergence.figures import table

SCALE, ledger = icl_lab.notebook.chapter("convergence", part="phases")

# %% [markdown]
# The sweep of part II holds the under-represented columns too (read from the results store, or run when it
# has not run); the check of the portrait also reads part I's comparison of the full and the reduced model.

# %%
sw_cfg = cv.SweepConfig.for_scale(SCALE)
sw = full(cv.run_sweep, sw_cfg)  # every balanced, dominant and under-represented column of the sweep
Ks = checks.sweep_K(sw, sw_cfg)
p1m = sw_cfg.p1_main  # the main sweep's p_1
hres = full(cv.run_full_vs_reduced, cv.FullVsReducedConfig.for_scale(SCALE))

# %% [markdown]
# ## Under-represented features: four phases (Theorem 3.2, part 2)
#
# For a rare query feature $v_k$ ($k\ge2$) the column has three unknowns $(A_k, B_{k,1}, B_{k,o})$:
# the target, the dominant key, and the $K-2$ other keys. The paper splits training into four phases
# by thresholds on these weights (App. E):
#
# - **Phase I, decrease of the dominant feature.** Ends at $T_{1,k} = \max\{t: B_{k,1}\ge -0.49\log K\}$.
#   Mechanism: $\vert\beta_{k,1}\vert\approx p_k\mathrm{Attn}_1^2\gg\alpha_k$, so attention leaves $v_1$.
#   Duration bound $O(K^{1.98}\log K/\eta)$.
# - **Phase II, switching of the leading influence.** Ends at
#   $T_{2,k} = \max\{t>T_{1,k}: A_k - B_{k,1}\le 1.01\log K\}$. Mechanism: once
#   $\mathrm{Attn}_1\approx K^{-1/2}$, $\vert\beta_{k,1}\vert\approx\alpha_k\approx K^{-2}$ and $A_k$ takes over.
#   Duration bound $+O(K^2\log K/\eta)$.
# - **Phase III, growth of the target feature.** Ends at $T_{3,k} = \max\{t>T_{2,k}: A_k\le\log K\}$.
#   Mechanism: $\mathrm{Attn}_k\ge\Omega(K^{-1/2})$, so $\alpha_k\ge\Omega(K^{-1.5})$. Duration bound
#   $+O(K^{1.5}\log K/\eta)$.
# - **Phase IV, convergence.** Ends when $\mathcal L_k - \mathcal L_k^{\rm low}\le\epsilon$ (we replace the
#   paper's threshold, whose constants are unspecified). Mechanism: as balanced phase II, the
#   $\mathrm{Attn}_1$ term controlled by $K^{0.49}$. Duration bound $+O(K\log(K\epsilon^{-1/2})/(\epsilon\eta))$.
#
# The heuristic for the switch (§4.1.2): $|\beta_{k,1}|\approx p_k\mathrm{Attn}_1^2$ and
# $\alpha_k\approx p_k\mathrm{Attn}_k\approx K^{-2}$ balance when $\mathrm{Attn}_1\approx K^{-1/2}$,
# i.e. $B_{k,1}\approx-\frac12\log K$. Because the thresholds $0.49$, $0.51$, $1.01$ are asymptotic,
# we also report constant-free **mechanistic markers**: $\tau_{\rm sw}$ (first
# $\alpha_k\ge|\beta_{k,1}|$), $\tau_{AB}$ (first $A_k\ge -B_{k,1}$), $\tau_{\log K}$ (first
# $A_k\ge\log K$) and $\tau_\epsilon$. `icl_lab.papers.convergence.phase_times` computes both sets.
#
# ### Figure 1, from data
#
# The paper's Figure 1 is a schematic. Here is the same picture measured: the mean-field flow of
# one under-represented column ($K =$ {glue:text}`po-K`, $p_1 =$ {glue:text}`po-p1`, $\epsilon =$
# {glue:text}`po-eps:g` at this scale; paper scale $K = 50$, $\epsilon = 10^{-3}$), with GD on a finite context (Monte Carlo over counts, dashed) on
# top. The strip at the top is the paper's top row: the attention on the dominant feature, on the
# target, and on all other features together (darker = more).

# %%
po_cfg = cv.PortraitConfig.for_scale(SCALE)
po = full(cv.run_portrait, po_cfg)

# %% tags=["remove-cell"]
glue("po-K", po_cfg.K)
glue("po-p1", po_cfg.p1)
glue("po-eps", po_cfg.eps)

# %% mystnb={"figure": {"caption": "The four phases of an under-represented feature $v_k$ ($k\\ge2$) under the mean-field gradient flow, with GD at finite $N$ dashed in the weights panel: top, the attention on the dominant feature, the target and all others (dark = 1); below, the bilinear weights (grey: $-0.49\\log K$ and $\\log K$), their gradients, the attention scores, and the error above the floor for the target and the dominant feature (grey: $\\epsilon$). Shaded: phases I\u2013IV between the paper's thresholds $T_1, \\dots, T_4$. A data-driven version of Figure 1 of Huang, Cheng and Liang (their figure is a sketch).", "name": "fig-cv-portrait"}, "image": {"alt": "A grey strip and four log-time panels with four shaded phases: the attention on the dominant feature falls, the target attention rises towards 1 in phases III and IV, and the error falls to epsilon."}}
plotting.finish(cplot.draw_portrait(po.flow, po.times, po_cfg.eps, dominant=po.dominant, finite=po.finite,
                                   title=f"K = {po_cfg.K}, p1 = {po_cfg.p1}"))

# %% tags=["hide-input"]
pt = po.times
table(["", "$T_1$", "$T_2$", "$T_3$", "$T_4$"],
      [("paper thresholds, mean field", *(f"{pt[k]:.6g}" for k in ("T1", "T2", "T3", "T4"))),
       ("paper thresholds, GD at finite $N$", *(f"{po.finite_times[k]:.6g}" for k in ("T1", "T2", "T3", "T4"))),
       ("mechanistic markers: " + r"$\tau_{\rm sw}, \tau_{AB}, \tau_{\log K}, \tau_\epsilon$",
        *(f"{pt[k]:.6g}" for k in ("tau_sw", "tau_AB", "tau_logK", "tau_eps")))])

# %% tags=["remove-input"]
ms = checks.portrait(po, po_cfg, hres, sw)
ledger.judge(ms);

# %% tags=["remove-cell"]
tr = po.flow
early = (tr.tau > 0) & (tr.tau < pt["tau_sw"])
assert bool(np.all(np.abs(tr.series("beta1")[early]) > tr.series("alpha")[early]))  # the definition of tau_sw
u1 = ms[0].quantities
assert u1["$\\beta_{k1}$ leads at the start ($\\tau_{\\rm sw} > 0$)"] and u1["all $\\beta \\le 0$ in phase IV"] and u1["order $T_1 < T_2 < T_3 < T_4$"]
assert ms[1].quantities["smallest $\\alpha$ over all runs"] >= 0

# %% [markdown]
# ### Phase order, markers and durations across K
#
# For $p_1 = 0.3$ the lowest $B_{k,1}/\log K$ of the sweep stays above the paper's $-0.49$ once $K\ge 50$.
# Whether it gets there at all is a question about astronomically large $K$, which the library's columns
# (one weight per feature) cannot reach; but the $K-2$ other keys move together, so the column is three
# numbers whatever $K$: `icl_lab.papers.convergence.asymptotics` integrates that three-class mean-field
# flow for a real-valued $K$, first checked against the sweep's own columns, then run up to $K = 10^{100}$.
# The phase ends $T_1,\dots,T_4$ and the markers of every column of the sweep, for each $p_1$ and $K$, are
# in two tables under the next cell (folded: open them with the button).

# %% tags=["hide-input", "hide-output"]
p1_vals = sw_cfg.p1_values
sw_pos = checks.switch_positions(sw, sw_cfg)  # B_k1/log K at tau_sw, per (p1, K)
phase_rows = [(p1, K, *(f"{sw.under[(p1, K)]['times'][k]:.4g}" for k in ("T1", "T2", "T3", "T4", "tau_sw", "tau_AB",
                                                                         "tau_logK", "tau_eps")), f"{sw_pos[(p1, K)]:+.3f}")
              for p1 in p1_vals for K in Ks]
table(["$p_1$", "$K$", "$T_1$", "$T_2$", "$T_3$", "$T_4$"], [r[:6] for r in phase_rows])  # phase ends
table(["$p_1$", "$K$", r"$\tau_{\rm sw}$", r"$\tau_{AB}$", r"$\tau_{\log K}$", r"$\tau_\epsilon$",
       r"$B_{k,1}/\log K$ at $\tau_{\rm sw}$"], [r[:2] + r[6:] for r in phase_rows])  # the markers
# beyond the sweep, p1 = 0.3: the same mean-field column with the K - 2 other keys as one class
beyond = checks.beyond_sweep(sw, sw_cfg) if 0.3 in p1_vals else None
if beyond:
    table(["$K$", r"lowest $B_{k,1}/\log K$", r"first $B_{k,1}\le-0.49\log K$ at $\tau$", r"$A_k/\log K$ there",
           r"first $A_k\ge\log K$ at $\tau$"],
          [(f"1e{round(math.log10(K))}", f"{r.lowest_ratio:+.4f}", f"{r.tau_cross:.3g}" if np.isfinite(r.tau_cross) else "never",
            f"{r.A_at_cross:.4f}" if np.isfinite(r.tau_cross) else "-", f"{r.tau_A_logK:.3g}") for K, r in beyond["far"].items()])

# %% tags=["remove-cell"]
glue("cv-far-check", ", ".join(map(str, beyond["far_check"])) if beyond else "-")
glue("cv-far-dev", beyond["far_dev"] if beyond else math.nan)
glue("cv-K-reach", beyond["K_reach"] if beyond else math.nan)

# %% [markdown]
# The three-class reduction reproduces the sweep's lowest $B_{k,1}/\log K$ at $K$ =
# {glue:text}`cv-far-check` to {glue:text}`cv-far-dev:.1e`; beyond the sweep the threshold
# $-0.49\log K$ is first reached at $K\approx$ {glue:text}`cv-K-reach:.1e`.

# %% tags=["remove-input"]
ms = checks.phase_order(sw, sw_cfg, beyond)
ledger.judge(ms);

# %% tags=["remove-cell"]
assert ms[0].quantities["ordered at $p_1 = 0.5$ for $K \\ge 20$"] and ms[-1].quantities["markers ordered for every $p_1$ and $K \\ge 50$"]

# %% [markdown]
# Where phase I ends, at $T_1$, Section 4.1.1 describes the attention itself: $\mathrm{Attn}_1$ has fallen
# throughout the phase, to $(\mathrm{Attn}_1)^2 = O(K^{-0.98})$, while every other rare feature kept an
# attention of order $1/K$, and $|\beta_{k,1}|$ has come down to the order of $\alpha_k$. The sweep's columns
# record the first two along the flow. An order in $K$ needs a wide range of $K$: over the sweep's $K$ the two
# ratios are still approaching their limits, so the three-class reduction reads them at $T_1$ from
# $K = 10^2$ to $10^{100}$, and the card tests how fast they grow with $K$.

# %% tags=["remove-input"]
ledger.judge(checks.phase_one_end(sw, sw_cfg));

# %% [markdown]
# Lemma 4.3 says where phase II ends: $A_k$ has grown to $0.5\log K$ while $B_{k,1}$ stayed within 1% of
# $-0.5\log K$, so $A_k - B_{k,1}$ has reached about $\log K$ (the book's $T_2$ is the time it passes
# $1.01\log K$, the sum of the two bounds). Its constants are stated, not hidden, but its proofs take $K$
# "sufficiently large" without saying how large. The three-class reduction reads the state where $A_k$ first
# reaches $0.5\log K$, from $K = 10^3$ to $10^{100}$:

# %% tags=["remove-input"]
ledger.judge(checks.phase_two_end(sw, sw_cfg));

# %% tags=["hide-input"]
fitK = checks.fit_K(sw, sw_cfg)  # the larger K of the sweep
durs = checks.durations(sw, sw_cfg)  # per phase, its length for each K of fitK
slopes = checks.duration_slopes(sw, sw_cfg)  # per phase, the log-log slope (and after dividing by log K)
bounds = checks.DURATION_BOUNDS  # the exponents of the paper's bounds
ratios = {K: th.gradient_ratios(sw.under[(p1m, K)], sw_cfg.eps) for K in fitK}
keys = [k for k in ratios[fitK[0]] if not k.startswith("IV: max beta")]
table(["normalised ratio"] + [f"$K = {K}$" for K in fitK],
      [(cplot.ratio_label(k), *(f"{ratios[K][k]:.3f}" for K in fitK)) for k in keys])

# %% tags=["remove-input"]
ms = checks.phase_durations(sw, sw_cfg)
ledger.judge(ms);

# %% mystnb={"figure": {"caption": "Durations of the four phases of an under-represented column against $K$ (mean-field flow), with the fitted log-log slope of each and the exponent of the paper's bound (Thm 3.2, Lemmas 4.1\u20134.4). Not a figure of the paper.", "name": "fig-cv-durations"}, "image": {"alt": "Four straight lines on log-log axes, the phase durations growing with K at slopes near or below the bounds' exponents."}}
plotting.finish(cplot.draw_phase_durations(fitK, durs, slopes, bounds, p1m, sw_cfg.eps))

# %% tags=["remove-cell"]
assert ms[1].quantities["largest $\\beta$ in phase IV"] <= 0

# %% [markdown]
# ## Stage-wise convergence and the late-time law
#
# Assembling the phases gives Theorem 3.2: the dominant feature converges in $T_1$ independent of
# $K$, every rare feature in $T_k = O(K^2\log K/\eta + K\log(K\epsilon^{-1/2})/(\epsilon\eta))\gg T_1$.
#
# **A sharper statement (derived in this chapter, not in the paper).** In the mean-field limit, late in
# phase IV, $1-\mathrm{Attn}_k\approx Ce^{-A_k}$ with $C$ set by the (slowly moving) $B$'s, and
# $\alpha_k\approx p_k(1-\mathrm{Attn}_k)^2$, so $\dot A_k\approx p_kC^2e^{-2A_k}$. Integrating,
# $e^{2A_k}\approx 2p_kC^2\tau$ and
#
# $$
# (1-\mathrm{Attn}_k)^2 \approx \frac{1}{2p_k\tau}, \qquad \mathcal L_k \approx \frac{1}{4p_k\tau},
# $$
#
# independent of $C$. One factor is dropped on the way: $\alpha_k = p_k\,\mathbb E[a_k\lVert e_k - a\rVert^2]$
# and $\lVert e_k - a\rVert^2 = (1-a_k)^2(1 + r)$ with $r = \sum_{m\ne k}a_m^2/(1-a_k)^2 = O(1/K)$ (the
# off-target attention spread over $K-1$ features), so $\dot A_k \approx p_k(1+r)C^2e^{-2A_k}$ and
# $(1-\mathrm{Attn}_k)^2 \approx 1/(2p_k(1+r)\tau)$. The loss carries the same factor,
# $\mathcal L_k = \tfrac12(1-a_k)^2(1+r)$, so it cancels: $\mathcal L_k \approx 1/(4p_k\tau)$ up to a relative
# $O(1/K)$, which is the $1 + O(1/K)$ of the law below. It explains the $K/\epsilon$ term of the bounds ($p_k\approx 1/K$) and why the
# dominant feature ($p_1 = \Theta(1)$) needs no factor $K$: the time to $\epsilon$ is about
# $1/(4p_k\epsilon)$. The next figure checks $4p_k\tau\mathcal L_k\to 1$.

# %% tags=["remove-input"]
ledger.judge(checks.late_law(sw, sw_cfg));

# %% mystnb={"figure": {"caption": "The late-time law of an under-represented column: $4p_k\\tau\\,\\mathcal L_k$ against $\\tau$ for several $K$ tends to 1 (dashed) in phase IV. Not a figure of the paper.", "name": "fig-cv-late-law"}, "image": {"alt": "For each K the curve leaves the plotted range during the early phases and comes back down onto the dashed line at 1 in phase IV."}}
plotting.finish(cplot.draw_late_law(sw.late, p1m))

# %% tags=["remove-cell"]
assert checks.late_law_holds(sw, sw_cfg)

# %% [markdown]
# The same law predicts the $\epsilon$-scaling of the last phase: phase IV of a rare
# feature should last about $1/(4p_k\epsilon)$, i.e. its length should scale like $1/\epsilon$ (the
# bound's $K\log(K\epsilon^{-1/2})/\epsilon$ up to the logarithm).

# %%
eps_u, ph4 = checks.phase_iv_lengths(sw, sw_cfg)  # phase IV, tau_eps - T3, at K = K_eps for each eps
pk_u = (1 - p1m) / (sw_cfg.K_eps - 1)
table([r"$\epsilon$", r"phase IV length $\tau_\epsilon - T_3$", r"late-time law $1/(4p_k\epsilon)$"],
      [(f"{e:g}", *(f"{x:.1f}" if x < 1e4 else f"{x:.0f}" for x in (v, 1 / (4 * pk_u * e)))) for e, v in zip(eps_u, ph4)])

# %% tags=["remove-input"]
ms = checks.eps_scaling(sw, sw_cfg)
ledger.judge(ms);

# %% tags=["remove-cell"]
assert 0.5 < ms.quantities["slope of $\\log(\\tau_\\epsilon - T_3)$ in $\\log(1/\\epsilon)$"] < 1.5

# %% [markdown]
# ### Sensitivity to $p_1$
#
# The thresholds $0.49$, $0.51$ and $1.01$ are asymptotic in $K$. Where does the switch actually
# happen? The heuristic predicts $B_{k,1}\approx-\tfrac12\log K$ at $\tau_{\rm sw}$ for large $K$,
# for any fixed $p_1$.

# %% mystnb={"figure": {"caption": "Where the leading influence on an under-represented feature switches: $B_{k,1}/\\log K$ at the switch time $\\tau_{\\rm sw}$ against $K$ for several $p_1$ (mean-field flow); dashed: the heuristic's $-1/2$, dotted: the paper's threshold $-0.49$. Not a figure of the paper.", "name": "fig-cv-switch"}, "image": {"alt": "One curve per p1 approaching the dashed -1/2 line as K grows, slowly for p1 = 0.3 and 0.8."}}
plotting.finish(cplot.draw_switch(Ks, sw_pos, p1_vals))

# %%
big50 = [K for K in Ks if K >= 50]
trend = {p1: (abs(sw_pos[(p1, big50[0])] + 0.5), abs(sw_pos[(p1, Ks[-1])] + 0.5)) for p1 in p1_vals}

# %% tags=["remove-cell"]
glue("cv-trend-K", f"{big50[0]} and K = {Ks[-1]}")
glue("cv-trend", "; ".join(f"p1 = {p}: {a:.3f} → {b:.3f}" for p, (a, b) in trend.items()))

# %% [markdown]
# Distance $|B_{k,1}/\log K + 1/2|$ at $K$ = {glue:text}`cv-trend-K`: {glue:text}`cv-trend`.

# %% tags=["remove-input"]
ledger.judge(checks.switch(sw, sw_cfg));

# %% tags=["remove-cell"]
assert all(sw_pos[(p1, Ks[-1])] < 0 for p1 in p1_vals)


# %% [markdown]
# ## Summary
#
# * A rare feature's column goes through the paper's four phases: attention leaves the dominant feature, the
#   target takes over the lead, grows, and converges; the data-driven Figure 1 shows them in that order.
# * The literal thresholds $-0.49\log K$, $1.01\log K$ and $\log K$ are asymptotic: at moderate $K$ the phase order can
#   be degenerate, and for $p_1 = 0.3$ the first threshold is reached only for astronomically large $K$. Constant-free
#   markers keep the order from $K = 50$ on.
# * Late in phase IV, $\mathcal L_k\approx 1/(4p_k\tau)$ (derived here, not in the paper): it explains the
#   $K/\epsilon$ term of the bounds and the $1/\epsilon$ scaling of the last phase.
# * The switch of the leading influence approaches $B_{k,1}\approx-\tfrac12\log K$ as $K$ grows, slowly for
#   $p_1$ far from $\tfrac12$.

# %% [markdown]
# ## Exercise
#
# ````{exercise}
# :label: ex-cv-order
#
# Take $K = 100$ features with $p_1 = 0.65$ and $p_k = 0.35/99$. Before computing anything, predict:
# (a) the order of $T_{1,k}, T_{2,k}, T_{3,k}$ and $\tau_\epsilon$ for a rare feature; (b) whether the
# switch $\tau_{\rm sw}$ happens above or below $B_{k,1} = -0.5\log K$; (c) roughly how long the
# dominant feature needs to reach $\epsilon = 10^{-3}$. Then check your prediction.
# ````
#
# ```{solution-start} ex-cv-order
# :class: dropdown
# ```
#
# (a) $p_1 = 0.65$ lies between the $0.5$ and $0.8$ of the sweep, where the order holds from $K = 20$
# on, so $T_1 < T_2 < T_3 < \tau_\epsilon$. (b) The sweep shows the switch below $-0.5\log K$ for
# $p_1 = 0.8$ and near it for $p_1 = 0.5$: expect slightly below. (c) The late-time law gives
# $\tau_\epsilon\approx 1/(4p_1\epsilon) = 385$ for the dominant feature (plus a short transient),
# independent of $K$. The cell below computes all three.

# %%
col_ex = SymmetricColumn.under_represented(100, 0.65)
tr_ex = col_ex.flow(1e11, stop_gap=0.999e-3)
t_ex = phase_times(tr_ex, 1e-3)
table(["$T_1$", "$T_2$", "$T_3$", "$T_4$", r"$\tau_{\rm sw}$", r"$B_{k,1}/\log K$ at $\tau_{\rm sw}$"],
      [(*(f"{t_ex[k]:.6g}" for k in ("T1", "T2", "T3", "T4", "tau_sw")),
        f"{value_at(tr_ex.tau, tr_ex.series('B1'), t_ex['tau_sw']) / math.log(100):+.3f}")])
dom_ex = SymmetricColumn.dominant(100, 0.65).flow(1e11, stop_gap=0.999e-3)
tau_dom = phase_times(dom_ex, 1e-3, "dominant")["tau_eps"]

# %% tags=["remove-cell"]
assert t_ex["T1"] < t_ex["T2"] < t_ex["T3"] < t_ex["T4"]
glue("ex-tau-dom", tau_dom)
glue("ex-tau-law", 1 / (4 * 0.65 * 1e-3))

# %% [markdown]
# Dominant feature: $\tau_\epsilon$ = {glue:text}`ex-tau-dom:.1f` (late-time law: {glue:text}`ex-tau-law:.1f`).

# %% [markdown]
# ```{solution-end}
# ```


# %% [markdown]
# ## Claims ledger (part III)
#
# The claims checked on this page, at the current scale; phase times use the mean-field gradient
# flow unless stated. Parts [I](convergence_setup.ipynb), [II](convergence_balanced.ipynb), [III](convergence_phases.ipynb), [IV](convergence_experiments.ipynb), [V](convergence_analysed.ipynb) and [VI](convergence_beyond.ipynb) have their own ledgers; the synthesis chapter joins them.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
_ = ledger.export()
