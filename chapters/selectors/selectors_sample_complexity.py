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
# # Feature selectors II — iterations, prompt length and tasks
#
# [Part I](selectors_mechanism.ipynb) showed *how* the trained model of {cite:t}`li2023selectors`
# classifies in context: attention selects the demonstrations that share the query's relevant pattern,
# the MLP decodes their label embedding. This part checks *how much training* that takes, as the paper's
# Theorem 1 predicts, and what the training data must look like: how long the prompts (eq. 5) and how
# many, and which, training tasks (Lemma 1).
#
# ```{prf:theorem} In-domain generalisation (Theorem 1 of the paper)
# :label: thm-sel-indomain
#
# If $m\ge\epsilon_m^{-2}M_1^2\log N$ for some $\epsilon_m\in(0,1/2)$, the batch size
# $B>\Omega(M_1\log M_1)$ and the training prompts have length
#
# $$ l_{tr}\ \ge\ \Omega(2\log M/\alpha), \tag{5} $$
#
# then after
#
# $$ T = \Theta\Big(\sqrt M\,\lambda_*^{-1}\,\eta^{-1}\,(1-\epsilon_m-\tau M_1)^{-1/2}\,(C-\alpha^{-1})^{-1}\Big) \tag{6} $$
#
# iterations, for some $\tau\le O(1/M_1)$ and $C>\Omega(1)$, with $N = BT$ samples, the model has zero
# generalisation error on all training tasks, with high probability.
# ```
#
# The paper's summary P1 states the same dependence for the sample complexity with a factor
# $(1-\alpha^{-1})^{-1}$, which is negative for $\alpha<1$: a typo for Theorem 1's
# $(C-\alpha^{-1})^{-1}$ (and (53)'s $C/(C-\alpha^{-1})$); we read P1 as "decreasing in $\alpha$". Since
# every constant is hidden, only **trends and exponents** can be checked: $T$ falls with $\alpha$, grows
# with the noise $\tau$ (and fails beyond a threshold), scales like $\lambda_*^{-1}$, $\eta^{-1}$ and
# $\sqrt M$. We measure $T_\text{hit}$, the first logged iteration at which held-out accuracy reaches
# $0.95$, for several seeds of every swept value, all trained together in one batched
# training per experiment.

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

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.78, "book": 2.6, "paper": 0.13})

# %% tags=["hide-input"]
import math

import matplotlib.pyplot as plt
import numpy as np
import torch

import functools

import icl_lab
from IPython.display import Markdown

from icl_lab import metrics, plotting, widgets
from icl_lab.data import cyclic_pair_tasks
from icl_lab.memo import full
from icl_lab.notebook import glue
from icl_lab.papers import selectors as sel
from icl_lab.papers.selectors import checks
from icl_lab.papers.selectors import conditions as sconds
from icl_lab.papers.selectors import tails
from icl_lab.papers.selectors import experiments as X
from icl_lab.papers.selectors import figures as SF
from icl_lab.papers.selectors import figures_sample_complexity as SC
from icl_lab.render import md_table

SCALE, ledger = icl_lab.notebook.chapter("selectors", part="sample_complexity")

# %% [markdown]
# ## Derivations
#
# ### How long must a training prompt be? (eqs. 37–38, 5)
#
# Let $m_i$ be the relevant pattern of demonstration $i$. The count of $\mu_a$-demonstrations is
# $\mathrm{Bin}(l, \alpha/2)$, and the multiplicative Chernoff bound (Lemma 2, eq. 14) with mean
# $p = \alpha/2$ gives
#
# $$
# \Pr\Big(\tfrac1l\textstyle\sum_i\mathbb 1[m_i=\mu_a]\le(1-c)\tfrac\alpha2\Big)\ \le\ e^{-l\,p\,c^2/2} = e^{-l c^2\alpha/4}.
# $$
#
# The paper's (37) prints $e^{-lc^2\alpha/2}$ — a factor 2 in the exponent that (14) does not give —
# sets it equal to $M_1^{-C}$ and concludes (38) $l\ge 2\log M_1/\alpha$, while Theorem 1 states (5)
# with $\log M$ instead of $\log M_1$. Both are "$\Theta$" statements, so the constants do not matter for
# the theorem; for the book we check numerically which bound actually holds against the exact binomial
# tail, for prompts up to $l = 600$ (exact arithmetic, a few seconds).

# %% tags=["remove-output"]
worst = {"printed (37)": 0.0, "from (14)": 0.0}
where = {}  # (alpha, l, c) of the largest ratio to (37)
first_fail = None  # the shortest l at which the exact tail exceeds (37)
cs = np.linspace(0.05, 0.95, 19)
for alpha in (0.2, 0.4, 0.6, 0.8, 1.0):
    for l in range(1, 600):
        for c, exact in zip(cs, tails.lower_tails(alpha, l, cs)):  # sel.binomial_lower_tail at each c, in one pass
            r37 = exact / sel.chernoff_tail(alpha, l, c)
            if r37 > worst["printed (37)"]:
                worst["printed (37)"], where = r37, {"alpha": alpha, "l": l, "c": round(float(c), 2)}
            if r37 > 1 and (first_fail is None or l < first_fail[1]):
                first_fail = (alpha, l, round(float(c), 2))
            worst["from (14)"] = max(worst["from (14)"], exact / math.exp(-l * c * c * alpha / 4))

# %% [markdown]
# The words after (37) say "for some $c$": for each $\alpha$ we find the smallest $c$ from which the
# Chernoff–Hoeffding inequality proves (37) at every $l$, and the exact tail there up to $l = 10^5$.

# %% tags=["remove-output"]
# 'for some c' (the words after (37)): for each alpha, the smallest c from which the Chernoff-Hoeffding inequality
# P(Bin(l, p) <= l a) <= exp(-l KL(a || p)) proves (37) for every l, and the exact tail at that c up to l = 10^5
L_LONG = sorted({int(round(10 ** (k / 20))) for k in range(101)})  # 1 .. 10^5, 20 lengths a decade
some_c = {}
for alpha in (0.2, 0.4, 0.6, 0.8, 1.0):
    c_star = tails.smallest_certified_c(alpha)
    ratio = max(math.exp(tails.log_lower_tail(alpha, l, c_star) + l * c_star**2 * alpha / 2) for l in L_LONG)
    some_c[alpha] = (ratio, c_star)
# below those c (every c reading) the tail decays slower than the bound: its ratio to (37) at l = 20000, 0.1 below c*
below = {a: math.exp(tails.log_lower_tail(a, 20_000, c - 0.1) + 20_000 * (c - 0.1) ** 2 * a / 2)
         for a, (_, c) in some_c.items() if c > 0.15}

# %% tags=["remove-cell"]
glue("sel-tail-worst", Markdown("; ".join(f"{k} {v:.3g}" for k, v in worst.items())))
glue("sel-tail-fail", Markdown(f"; the printed (37) fails first at $l = {first_fail[1]}$ ($\\alpha = {first_fail[0]}$, "
                               f"$c = {first_fail[2]}$)" if first_fail else ""))
glue("sel-tail-cstar", ", ".join(f"{c:.3f}" for _, c in some_c.values()))
glue("sel-tail-alphas", ", ".join(f"{a:g}" for a in some_c))

# %% [markdown]
# Largest ratio of the exact binomial tail to each bound over $\alpha$, $l < 600$, $c \in [0.05, 0.95]$:
# {glue:md}`sel-tail-worst:myst` (a valid bound keeps it at most 1){glue:md}`sel-tail-fail:myst`. For some
# $c$: (37) holds at every $l$ from $c$ = {glue:text}`sel-tail-cstar` at $\alpha$ = {glue:text}`sel-tail-alphas`.

# %% tags=["remove-input"]
ledger.judge(checks.chernoff(worst, where, first_fail, some_c, below))
assert worst["from (14)"] <= 1.0 and first_fail is not None  # (37) fails on this grid (the caveat says where)

# %% [markdown]
# The bound that (14) gives holds on the whole grid; the printed (37), which (14) does not imply, holds
# for short prompts only (binomial tails are lighter than the Chernoff bound there) and fails from
# $l = 80$ on, by a factor that grows exponentially with $l$, for the values of $c$ in the middle of
# $(0, 1)$. The paper, however, claims (37) "for some $c\in(0,1)$", and its proof needs only one: a $c$
# close enough to 1 (from 0.98 at $\alpha = 0.2$; every $c$ at $\alpha = 1$) makes the printed bound hold for
# every $l$, which the Chernoff–Hoeffding inequality $\Pr(\mathrm{Bin}(l,p)\le la)\le e^{-l\,\mathrm{KL}(a\|p)}$
# proves, so the ledger decides on that reading and reports the other. Theorem 1 is unaffected: (38) and (5) are
# $\Theta$ statements, and the correct exponent only doubles the constant of $l \ge 2\log M_1/\alpha$. The *exact* statement the experiments need is simpler: the query's
# pattern is absent from the prompt with probability $(1-\alpha/2)^l$, so the best possible accuracy is
# $1-\frac12(1-\alpha/2)^l$ (Part I, {ref}`the oracle exercise <ex-sel-oracle>`). At $l = 2\ln M/\alpha$ this is
# $1-\frac12 e^{(2\ln M/\alpha)\ln(1-\alpha/2)}\approx 1-\frac1{2M}$: eq. (5) is exactly the length at
# which an ideal selector errs on a $1/(2M)$ fraction of prompts.
#
# ### Batch size (eq. 39)
#
# "By the solution to the Coupon collector's problem", $B\ge M_1\log M_1$: a batch should contain
# queries of every relevant pattern. With $M_1 = 8$, $M_1\ln M_1 \approx 17$; we use $B = 64$, where the
# chance that some pattern is missing from a batch's queries is $\le M_1(1-1/M_1)^{B}$:

# %%
M1 = 8
missing = {B: M1 * (1 - 1 / M1) ** B for B in (16, 17, 32, 64)}  # union bound: P(some query pattern missing)

# %% tags=["remove-cell"]
glue("sel-coupon-m1", M1)
glue("sel-coupon", Markdown(md_table(["$B$", "$P(\\text{some query pattern missing}) \\le$"],
                                     [[B, f"{v:.3f}"] for B, v in missing.items()])))

# %% [markdown]
# With $M_1 =$ {glue:text}`sel-coupon-m1` query patterns, the union bound on the probability that some
# pattern is missing from $B$ queries:
#
# ```{glue:md} sel-coupon
# :format: myst
# ```

# %% [markdown]
# ### The iteration count (eqs. 48–53)
#
# The proof collects the lucky neurons' outputs (48), shows that the negative-$a_i$ lucky neurons are
# switched off by the ReLU (49)–(50) and that the others are small (51), and arrives at the margin
#
# $$
# F(p_{l+1})\ \gtrsim\ \frac ma\,(1-\epsilon_m-\tau M_1)\Big(1-\frac1M\Big)\,\frac{\eta^2T^2}{a}\Big(1-\frac{\alpha^{-1}}C\Big)^2\lambda_*^2\ \ge\ 1 . \tag{52}
# $$
#
# Solving for $T$ gives every factor of (6) except one:
# $T\propto\lambda_*^{-1}\eta^{-1}(1-\epsilon_m-\tau M_1)^{-1/2}\,C/(C-\alpha^{-1})$. The
# $\sqrt M$ does **not** come out of (52) (its only $M$ is $1-1/M$): it enters through the assumption
# "$T=\Theta(M^\omega)$" made in (44) and the statement "Hence, $\omega = 1/2$" after (54). The
# sample-complexity line (55) is garbled in the extraction
# ($BT\gtrsim(M_1\cdot\frac1M/(\eta^{-1}M_1\sqrt{\log M}))^2$ is smaller than 1) and is not used below.
# Note also the *quadratic* growth of the margin in $\eta T\lambda_*$: the margin needs
# $\eta T\lambda_*$ above a threshold, so **$T\lambda_*$ and $T\eta$ should be constant** — that is what
# we test.
#
# ## Iterations against $\alpha$
#
# Fixed training prompt length $l_{tr} = 14$; $\alpha$ is the fraction of demonstrations that carry
# one of the task's two patterns.

# %% tags=["remove-output"]
acfg = X.AlphaSweepConfig.for_scale(SCALE)
a_sweep = sel.HitSweep.of(full(X.run_alpha_sweep, acfg))
print(a_sweep.report("alpha"))
A, Cfit, err = sel.fit_alpha_law(a_sweep.values, a_sweep.median)
print(f"fit T = A / (C - 1/alpha): A = {A:.0f}, C = {Cfit:.2f}, rms log error {err:.2f}")

# %% tags=["remove-input"]
icl_lab.notebook.reduced(acfg)
glue("sel-alpha-steps", acfg.steps)
glue("sel-alpha-seeds", acfg.seeds)

# %% mystnb={"figure": {"caption": "Left: held-out accuracy during training for each $\\alpha$ (mean \u00b1 std over the {glue:text}`sel-alpha-seeds` seeds). Right: iterations to 95 % accuracy against $1/\\alpha$ per seed, their median, and the fit $A/(C-1/\\alpha)$ of eq. (6). {glue:text}`sel-alpha-steps` steps.", "name": "fig-sel-alpha"}, "image": {"alt": "Learning curves rise sooner for larger alpha; the iterations grow with 1/alpha."}}
plotting.finish(SC.draw_alpha_sweep(a_sweep, acfg, A, Cfit))

# %% tags=["remove-output"]
T_seed = np.nan_to_num(np.asarray(a_sweep.res.hits(), dtype=float), nan=np.inf)  # (alpha, seed); never reached: +inf
tau_seed = checks.kendall_per_seed(T_seed)  # Kendall's tau-a of -T_hit against alpha, per seed
print(f"Kendall's tau of -T_hit against alpha, per seed: {tau_seed.round(2).tolist()}")
H_alpha = sconds.holds_all([acfg.replace(alpha=a).theorem1() for a in acfg.alphas])  # Theorem 1 at every alpha

# %% tags=["remove-input"]
ledger.judge(checks.alpha_sweep(a_sweep, acfg, Cfit, err, H_alpha))
assert a_sweep.fastest[-1] < a_sweep.fastest[0]

# %% [markdown]
# ## Iterations against the noise $\tau$
#
# Isotropic noise in $\mathbb R^{d_\mathcal X}$ barely changes the inner products that drive the
# attention, so here the noise lies **inside $\mathrm{span}\{\mu\}$** with norm exactly $\tau$:
# it mimics a second relevant pattern in every token.

# %% tags=["remove-output"]
ncfg = X.NoiseSweepConfig.for_scale(SCALE)
n_sweep = sel.HitSweep.of(full(X.run_noise_sweep, ncfg))
n_acc = n_sweep.res.final("acc").median(1).values.numpy()
print(n_sweep.report("tau"))

# %% tags=["remove-input"]
glue("sel-noise-acc", ", ".join(f"{v:.2f}" for v in n_acc.tolist()))
glue("sel-noise-steps", ncfg.steps)
icl_lab.notebook.reduced(ncfg)

# %% [markdown]
# Final held-out accuracy (median over seeds) at each noise level: {glue:text}`sel-noise-acc`.

# %% mystnb={"figure": {"caption": "Iterations to 95 % accuracy (left axis) and final accuracy (right axis) against the norm of noise inside span$\\{\\mu\\}$, with the $\\tau = \\beta/M_1$ mark; shaded: Theorem 1's condition $\\tau M_1 < 1-\\epsilon_m$, which holds for the three smallest nonzero noise levels. {glue:text}`sel-noise-steps` steps.", "name": "fig-sel-noise"}, "image": {"alt": "Iterations stay flat, then grow, and accuracy drops at the largest noise."}}
plotting.finish(SC.draw_noise_sweep(n_sweep, ncfg, n_acc))

# %%
tau_max = (1 - sel.theory.EPS_M) / ncfg.M1  # Theorem 1's noise condition tau M1 < 1 - eps_m
inside = [i for i, t in enumerate(ncfg.taus) if 0 < t < tau_max]
H_tau = sconds.holds_all([ncfg.theorem1(tau=ncfg.taus[i]) for i in [0] + inside])  # Theorem 1 at those tau

# %% tags=["remove-input"]
ledger.judge(checks.noise(n_sweep, ncfg, n_acc, sel.theory.EPS_M, H_tau))
assert n_acc[0] > 0.95 and n_acc[-1] < n_acc[0] - 0.1 and len(inside) >= 1

# %% [markdown]
# Theorem 1 covers only $\tau M_1 < 1-\epsilon_m$, here $\tau < 0.064$, and there eq. (6) allows the
# iterations to grow by the factor $\big((1-\epsilon_m)/(1-\epsilon_m-\tau M_1)\big)^{1/2}$, up to about 4 at
# $\tau = 0.06$. The three noise levels inside that condition train exactly as fast as $\tau = 0$: the bound
# holds and is not tight in $\tau$. Outside the condition the sweep shows a flat stretch, a slowdown, then failure,
# but far above $\tau = 1/M_1$ (in absolute units; $\tau/\beta = 0.025$ here): training copes with
# span-noise up to about half the pattern norm. The condition is sufficient, not necessary; the theorem's
# $(1-\epsilon_m-\tau M_1)$ comes from bounding the lucky-neuron fraction (Lemma 7), a worst case.
#
# ## Iterations against $\lambda_*$
#
# Every token's relevant coefficient is fixed to $\lambda = \lambda_*$ (and $\tau = 0$), so
# $\lambda_*$ is the only scale that changes.

# %% tags=["remove-output"]
lcfg = X.LambdaSweepConfig.for_scale(SCALE)
l_sweep = sel.HitSweep.of(full(X.run_lambda_sweep, lcfg))
slope_l, slope_l_min = l_sweep.slope(inverse=True), l_sweep.slope(inverse=True, fastest=True)
print(l_sweep.report("lambda_*"))
print(f"log-log slope of T_hit vs 1/lambda_*: median over seeds {slope_l:.2f}, fastest seed {slope_l_min:.2f} (Theorem 1: 1)")

# %% [markdown]
# ## Iterations against the step size $\eta$
#
# Every $\eta$ sees the same prompts (common random numbers: the data streams depend only on the seed).

# %% tags=["remove-output"]
ecfg = X.EtaSweepConfig.for_scale(SCALE)
e_sweep = sel.HitSweep.of(full(X.run_eta_sweep, ecfg))
slope_e = e_sweep.slope(inverse=True)
print(e_sweep.report("eta"))

# %% tags=["remove-cell"]
glue("sel-eta-T", ", ".join(f"{v:.0f}" for v in (e_sweep.values * e_sweep.median).tolist()))
glue("sel-eta-slope", f"{slope_e:.2f}")

# %% [markdown]
# $\eta\, T_\text{hit}$ (median over seeds): {glue:text}`sel-eta-T`; log-log slope of $T_\text{hit}$ against
# $1/\eta$: {glue:text}`sel-eta-slope` (Theorem 1: 1).

# %% [markdown]
# ## Iterations against the number of patterns $M$
#
# Theorem 1's $\sqrt M$. We vary the number $M_2$ of irrelevant patterns at fixed width $d_\mathcal X$
# (the unused directions carry no pattern), so all values train in one model.

# %% tags=["remove-output"]
mcfg = X.PatternCountConfig.for_scale(SCALE)
m_sweep = sel.HitSweep.of(full(X.run_pattern_count, mcfg))
slope_m = m_sweep.slope()
print(m_sweep.report("M"))
print(f"log-log slope of T_hit vs M: {slope_m:.2f} (Theorem 1: 0.5)")

# %% tags=["remove-input"]
icl_lab.notebook.reduced(("the $\\lambda_*$ sweep", lcfg), ("the $\\eta$ sweep", ecfg), ("the $M$ sweep", mcfg))
glue("sel-rates-l", f"m = {lcfg.m}, B = {lcfg.batch}, δ = {lcfg.delta:g}, {lcfg.steps} steps, λ* from {min(lcfg.lambdas):g}")
glue("sel-rates-e", ecfg.steps)
glue("sel-rates-m", f"M ∈ {{{', '.join(str(mcfg.M1 + v) for v in mcfg.M2s)}}}, {mcfg.seeds} seeds, {mcfg.steps} steps")

# %% mystnb={"figure": {"caption": "Iterations to 95 % accuracy per seed and their median against $1/\\lambda_*$, $1/\\eta$ and $M$, with the slopes of eq. (6) (dashed) and twice them (dotted). The $\\lambda_*$ sweep at this scale ({glue:text}`sel-rates-l`); the $\\eta$ sweep {glue:text}`sel-rates-e` steps; {glue:text}`sel-rates-m`.", "name": "fig-sel-rates"}, "image": {"alt": "Iterations grow faster than 1/lambda, like 1/eta, and stay flat in M."}}
plotting.finish(SC.draw_rates(l_sweep, e_sweep, m_sweep))

# %% [markdown]
# Eq. (6) is an upper bound with hidden constants: a log-log slope above the predicted rate by more than
# 0.4 contradicts it, a much smaller one says "bound not tight". One more step size beyond the sweep tells
# whether the $1/\eta$ law goes on (seconds):

# %% tags=["remove-output"]
e2 = full(X.run_eta_sweep, ecfg.replace(etas=(2.0,), steps=800))
print(f"eta = 2: final accuracy {float(e2.final('acc').median()):.3f}, mass on N_* {float(e2.final('mass_present').median()):.3f}")
H_lam = sconds.holds_all([lcfg.theorem1(lambda_star=v) for v in lcfg.lambdas])  # Theorem 1 at every value
H_eta = sconds.holds(ecfg.theorem1())
H_M = sconds.holds_all([mcfg.replace(M2=v, M2s=(v,), l_tr=mcfg.l).theorem1() for v in mcfg.M2s])

# %% tags=["remove-input"]
ledger.judge(checks.rates(l_sweep, lcfg, e_sweep, ecfg, e2, m_sweep, mcfg, H_lam, H_eta, H_M))
assert l_sweep.fastest[0] > l_sweep.fastest[-1] and e_sweep.fastest[0] > e_sweep.fastest[-1]

# %% [markdown]
# What the three panels show (the numbers are in the ledger below):
#
# * **$\eta$**: $T_\text{hit}\propto 1/\eta$ holds well — $\eta T_\text{hit}$ is nearly constant, as the
#   margin (52) predicts (it depends on $\eta T$ only) — up to $\eta = 1$: at $\eta = 2$ the same seeds
#   stall (the card gives their attention mass and accuracy after 800 steps).
# * **$\lambda_*$**: the iterations grow **faster than $1/\lambda_*$** — closer to $\lambda_*^{-2}$. (52)
#   depends on $\eta T\lambda_*$, but the attention's score gap also scales with $\lambda_*^2$
#   ($\delta^2\beta^2\lambda_s\lambda_{l+1}$ at initialisation, eq. 83), which delays the collapse that
#   Theorem 1's proof takes as given: the score gradient carries two factors $\lambda_s\lambda_{l+1}$
#   where Lemma 4 keeps one. A growth faster than $1/\lambda_*$ exceeds the upper bound (6) at small
#   $\lambda_*$, whatever its hidden constant. The narrow setting drawn here violates the theorem's width
#   condition (and, at $\lambda_* = 0.3$, its batch condition $B\ge\lambda_*^{-4} = 123$), so it cannot
#   contradict the bound. At the papers' scale the sweep therefore runs inside Theorem 1's regime ($m = 3700$,
#   $B = 128$, $\delta = 0.09$, 6000 steps, $\lambda_*$ from 0.4 to 0.9: every condition of the theorem's
#   statement holds at every $\lambda_*$), and the ledger decides there. The slope stays near 2 ($T_\text{hit}$ =
#   3575, 2225, 1075 and 625 steps at $\lambda_*$ = 0.4, 0.5, 0.7 and 0.9, median of three seeds; slope 2.15,
#   bootstrap interval over seeds [2.09, 2.22]). One condition of the *proof* does not hold there: Lemma 4's (88),
#   $\log M_1\le\delta^2\beta^2$, which together with (155), $\log M_1\ge\delta^2\beta^2$, holds only at
#   $\delta^2\beta^2 = \log M_1$ ($\beta\approx 16$ at $\delta = 0.09$, $M_1 = 8$); ours is $\delta^2\beta^2 = 0.20$ ($\beta = 5$).
#   The ledger therefore files eq. (6)'s $1/\lambda_*$ as inconclusive, not as not reproduced: the slope is firm,
#   but the run is not yet one where every step of the proof applies.
# * **$M$**: from $M = M_1^2 = 64$ (the paper's condition $M\ge M_1^2$) up to $256$ the irrelevant
#   patterns change nothing measurable — the same seed needs the same number of iterations for every
#   $M_2$. Eq. (6) is an upper bound on the iterations, so this is a bound that is **not tight in $M$**,
#   not a contradiction; in the proof the $\sqrt M$ is set by the choice $\omega = 1/2$, not derived
#   (§1.3).
#
# ### The output layer (Lemma 3)
#
# Lemma 3: for lucky neurons the accumulated $W_O$ update has norm $\Theta(\delta\beta^2/a)$ on the label
# coordinates and $\Theta(\delta\beta^2\lambda_*/a)$ on the feature coordinates — their ratio tracks
# $\lambda_*$. We read it off the $\lambda_*$ sweep at the end of training (the initial $W_O$ is rebuilt
# from the seeds), in two ways. The statement, (15)–(16), takes the norms of the update on the
# coordinates $1..d_\mathcal X$ and $d_\mathcal X+1..d_\mathcal X+d_\mathcal Y$. Its proof evaluates
# the update only along the token parts it cares about, $(\mu_l, 0)$ and $(0, q)$ in (76)–(77): the
# projection onto the relevant patterns and the component along the label embedding. The two differ
# because the feature block also collects the directions of the irrelevant patterns, which every token
# carries with weight $1-\lambda_*$ and whose signs are independent of the label. The ledger decides
# on the statement's coordinate blocks and reports the proof's projections beside them.
#
# In the narrow setting drawn here neither reading can contradict the lemma, whose conditions are
# Theorem 1's and are violated (width, and at small $\lambda_*$ the batch $B\ge\lambda_*^{-4}$). The
# paper-scale sweep runs inside the theorem's regime, and the ledger decides there: the lemma holds at
# every $t\ge\Omega(1/\eta)$, so the end of training, one such $t$, can contradict it. There both
# ratios are flat in $\lambda_*$ (0.76 on the coordinate blocks and 0.35 along $(\mu_l, 0)$ and
# $(0, q)$, at every $\lambda_*$ from 0.4 to 0.9), so Lemma 3 is not reproduced under either reading.

# %% tags=["remove-output"]
READINGS = {"coordinates": "coordinates 1..d_x against d_x+1..d_x+d_y (eqs. (15)-(16))",
            "projections": "the update applied to (mu_l, 0) and (0, q) (the proof's eqs. (76)-(77))"}
ratios, slopes_ratio = {}, {}
for reading in READINGS:
    split = sel.output_layer_split(lcfg, l_sweep.res, reading)  # (G, S, 2): feature, label
    ratios[reading] = (split[..., 0] / split[..., 1]).nanmedian(1).values.numpy()
    slopes_ratio[reading] = metrics.loglog_slope(l_sweep.values, ratios[reading])

# %% tags=["remove-cell"]
glue("sel-s10-table", Markdown(md_table(["$\\lambda_*$", "feature / label: coordinate blocks (15)–(16)",
                           "feature / label: along $(\\mu_l, 0)$ and $(0, q)$ (76)–(77)"],
                          [[f"{lam:g}", f"{a:.2f}", f"{b:.2f}"] for lam, a, b in
                           zip(lcfg.lambdas, ratios["coordinates"].tolist(), ratios["projections"].tolist())]
                          + [["log-log slope", f"{slopes_ratio['coordinates']:.2f}", f"{slopes_ratio['projections']:.2f}"]])))

# %% [markdown]
# ```{glue:md} sel-s10-table
# :format: myst
# ```

# %% tags=["remove-input"]
ledger.judge(checks.output_layer(ratios, slopes_ratio, READINGS, lcfg, H_lam))

# %% [markdown]
# ## Prompt length against $\alpha$ (eq. 5)
#
# One batched training per training prompt length, with every $\alpha$ and seed inside it; the test
# prompts have the training length. The dashed curves are the exact oracle $1-\frac12(1-\alpha/2)^{l}$,
# the dotted lines eq. (5)'s $2\ln M/\alpha$.

# %% tags=["remove-output"]
pcfg = X.PromptLengthConfig.for_scale(SCALE)
# at the paper's setting this reads the shipped record (the one CI recomputes) rather than training again: per-seed
# accuracies near 0.9 move with float rounding, and so would the shortest l_tr read from them
pres = full(X.run_prompt_length, pcfg)
print(f"{len(pcfg.lengths)} trainings in {pres.seconds:.1f} s")
Ls = np.asarray(pcfg.lengths)

# %% tags=["remove-input"]
icl_lab.notebook.reduced(pcfg)
glue("sel-length-steps", pcfg.steps)

# %% mystnb={"figure": {"caption": "Final accuracy against the training prompt length for several $\\alpha$ (mean \u00b1 std over seeds), the exact oracle (dashed) and eq. (5)'s $2\\ln M/\\alpha$ (dotted). {glue:text}`sel-length-steps` steps.", "name": "fig-sel-length"}, "image": {"alt": "Accuracy rises with the prompt length and follows the oracle; smaller alpha needs longer prompts."}}
plotting.finish(SC.draw_prompt_length(pres, pcfg))

# %%
acc_med = pres.acc.median(-1).values.numpy()  # (L, A): median over seeds
excess = float((acc_med - pres.oracle).max())  # no model should beat the oracle
needed = checks.shortest_length(acc_med, pcfg.lengths)  # per alpha, the shortest l_tr reaching 0.9 (None: none)
print(f"largest excess of the median over the oracle: {excess:+.3f}")

# %% tags=["remove-cell"]
glue("sel-length-table", Markdown(md_table(["$\\alpha$", "shortest $l_{tr}$ with median accuracy $\\ge 0.9$", "$2\\ln M/\\alpha$"],
                                           [[f"{a:g}", "none tried" if n_ is None else str(n_), f"{2 * math.log(pcfg.M) / a:.0f}"]
                                            for a, n_ in zip(pcfg.alphas, needed)])))

# %% [markdown]
# ```{glue:md} sel-length-table
# :format: myst
# ```

# %% tags=["remove-input"]
H_len = {k: v for k, v in sconds.holds_all([pcfg.replace(alpha=a, l_tr=l).theorem1() for a in pcfg.alphas
                                            for l in pcfg.lengths]).items() if k != sel.theory.LENGTH}
ledger.judge(checks.prompt_length(pres, pcfg, H_len))
assert excess < 0.05

# %% [markdown]
# No model beats the oracle, and with enough $\alpha$ the trained model sits on it: the only errors left
# are the prompts whose query pattern is absent. Small $\alpha$ needs longer prompts, about as
# $1/\alpha$ — and long prompts with small $\alpha$ also learn more slowly (more distractors per prompt),
# the reason some grid points fall short of the oracle after a fixed number of steps. The test prompts
# have the training length, so the oracle alone already needs longer prompts at small $\alpha$: where the
# trained model reaches 0.9 exactly where the oracle does, this experiment sees the information in a test
# prompt, not a training requirement like eq. (5), and the ledger calls the claim inconclusive.
#
# ## How many training tasks? (Lemma 1)
#
# ```{prf:lemma} Number of training tasks (Lemma 1 of the paper)
# :label: lem-sel-tasks
#
# If the training tasks cover every relevant pattern evenly — each $\mu_i$ is the $+1$ pattern and the
# $-1$ pattern equally often, and at least once — then $|\mathcal T|\ge M_1$.
# ```
#
# ```{prf:proof}
# Each task $(a,b)$ has one $+1$ slot. Every one of the $M_1$ patterns must fill at least one $+1$ slot,
# so there are at least $M_1$ tasks; the cyclic set $\{(i,i+1 \bmod M_1)\}$ attains the bound.
# ```
#
# The point of the rule is to remove the **shortcut**: if a pattern is labelled $+1$ more often than
# $-1$ across training tasks, the model can predict from the query's pattern alone, in its weights, and
# ignore the context. We train on the first $n$ cyclic tasks, on an unbalanced set of $M_1$ tasks
# ($\mu_1$ is $+1$ in all but one), and test on the training tasks and on **every ordered pair**.

# %% tags=["remove-output"]
tcfg = X.TaskCountConfig.for_scale(SCALE)
tres = full(X.run_task_count, tcfg)
print(f"{len(tres.train.seeds)} runs in {tres.train.seconds:.1f} s wall ({tres.train.cpu_seconds:.1f} s CPU)")
print(f"{'task set':>14} {'balanced':>9} {'shortcut acc':>13} {'train-task acc':>15} {'all-pairs acc':>14} {'all-pairs mass':>15}")
for i, name in enumerate(tres.train.labels):
    print(f"{name:>14} {str(tres.balanced[i]):>9} {float(tres.shortcut_acc[i]):>13.3f} {float(tres.train_acc[i].median()):>15.3f} "
          f"{float(tres.all_pairs_acc[i].median()):>14.3f} {float(tres.all_pairs_mass[i].median()):>15.3f}")

# %% tags=["remove-input"]
icl_lab.notebook.reduced(tcfg)
glue("sel-tasks-steps", tcfg.steps)
glue("sel-tasks-seeds", tcfg.seeds)

# %% mystnb={"figure": {"caption": "Median accuracy on the training tasks and on all ordered pairs for task sets of increasing size and an unbalanced set (Lemma 1). {glue:text}`sel-tasks-steps` steps, {glue:text}`sel-tasks-seeds` seeds.", "name": "fig-sel-tasks"}, "image": {"alt": "Accuracy on all pairs stays below that of the M1 cyclic tasks for smaller task sets; the unbalanced set does well only on its own tasks."}}
plotting.finish(SC.draw_task_sets(tres))

# %%
idx = {n: i for i, n in enumerate(tres.train.labels)}
full_name = f"cyclic[:{tcfg.M1}]"
few = [n for n in tres.train.labels if n.startswith("cyclic[:") and n != full_name]
allp_few = max(float(tres.all_pairs_acc[idx[n]].median()) for n in few)  # the best smaller set, on all pairs
unb_all = float(tres.all_pairs_acc[idx["unbalanced"]].median())

# %% tags=["remove-input"]
ledger.judge(checks.task_count(tres, tcfg))
assert float(tres.all_pairs_acc[idx[full_name]].max()) > allp_few + 0.1 and unb_all < 0.75

# %% [markdown]
# Lemma 1 itself is a count (S8, true by construction: the proof above). What happens *without* even
# coverage is not a statement of the paper — Sec. 3.3 assumes it "for simplicity" — but the book's
# finding (S8b, with S9 for the unbalanced set).
# With fewer than $M_1$ tasks, or $M_1$ unbalanced ones, the model does well on its training tasks —
# partly through the shortcut (black marks: the accuracy that the rule "pattern $\to$ label" alone
# reaches on them) — and worse on all pairs (S8b's card gives how much): it has not fully learned to read the context.
# The balanced cyclic set forces in-context learning, although (Part I, §3.5) some of its seeds stall in
# a partial solution; all ordered pairs are the most robust choice.
#
# ## Explore
#
# The kernel-free slider moves through the values of $\alpha$ of §2 and shows the held-out accuracy and
# the attention mass on $\mathcal N_*$ of every seed during training: larger $\alpha$, earlier collapse.

# %% mystnb={"figure": {"caption": "Held-out accuracy (solid) and attention mass on $\\mathcal N_*$ (dashed) of every seed during training at a chosen $\\alpha$ of the sweep of \u00a72, with the oracle accuracy (dotted): the larger $\\alpha$, the earlier the attention collapses onto $\\mathcal N_*$ and the accuracy rises.", "name": "fig-sel-alpha-slider"}}
widgets.static_slider(functools.partial(SC.draw_alpha_seeds, a_sweep, acfg), list(acfg.alphas), name="$\\alpha$", fmt="{:g}",
                      alt="accuracy and attention mass of every seed against the SGD iteration at this alpha, rising from chance to near the oracle line")

# %% [markdown]
# In a live notebook, the widget below retrains one model for the $\alpha$, noise $\tau$ (isotropic),
# $\lambda_*$, prompt length and task set you choose, and redraws Figure 1 with the accuracy and the
# attention mass when you press "Train and draw". It is hidden in the static book.

# %% tags=["remove-cell"]
SF.live_mechanism()

# %% [markdown]
# ## Exercises
#
# ````{exercise}
# :label: ex-sel-shortcut
#
# Train on fewer than $M_1$ tasks. Show that some relevant pattern is then labelled only $+1$, only
# $-1$, or never used, and construct a predictor that ignores the context yet beats chance on the
# training tasks. What does it score on all ordered pairs?
# ````
#
# ````{solution} ex-sel-shortcut
# :class: dropdown
#
# With $n<M_1$ tasks there are $n<M_1$ "$+1$" slots, so some pattern $\mu_i$ is never $+1$: it is
# either $-1$ in some task (then the rule "$\mu_i\mapsto -1$" is always right on training queries with
# that pattern) or unused. The predictor "$\mathrm{sign}(\#\{+1\text{ slots of }\mu\} -
# \#\{-1\text{ slots of }\mu\})$, a coin flip on ties" reads only the query's pattern and is right more
# often than chance on the training tasks. On *all* ordered pairs every pattern is $+1$ and $-1$ equally
# often, so every rule of the form "pattern $\mapsto$ label" scores exactly $1/2$: only in-context
# reading can do better. The cell computes the shortcut's accuracy for the task sets of §8.
# ````

# %%
shortcut_rows = []
for name, tasks in (("first 2 cyclic pairs", cyclic_pair_tasks(8)[:2]), ("first 4 cyclic pairs", cyclic_pair_tasks(8)[:4]),
                    ("all 8 cyclic pairs", cyclic_pair_tasks(8)), ("unbalanced", sel.unbalanced_tasks(8))):
    on_train = sel.shortcut_accuracy(tasks, 8)
    on_all = sel.shortcut_accuracy(tasks, 8, sel.all_pair_tasks(8))
    shortcut_rows.append([name, "yes" if sel.is_balanced(tasks, 8) else "no", f"{on_train:.3f}", f"{on_all:.3f}"])
    assert abs(on_all - 0.5) < 1e-12
assert sel.shortcut_accuracy(cyclic_pair_tasks(8), 8) == 0.5

# %% tags=["remove-cell"]
glue("sel-shortcut-table", Markdown(md_table(["training tasks", "balanced", "shortcut accuracy on the training tasks",
                                              "shortcut accuracy on all pairs"], shortcut_rows)))

# %% [markdown]
# ```{glue:md} sel-shortcut-table
# :format: myst
# ```

# %% [markdown]
# ````{exercise}
# :label: ex-sel-iterations
#
# From the margin (52), $F\gtrsim K\,\eta^2T^2\lambda_*^2(1-\alpha^{-1}/C)^2\ge 1$ with $K$ collecting the
# other factors, derive the iteration count and list which factors of (6) it produces. Then use the
# measured $\eta T_\text{hit}$ of §5 to estimate $K$ for our setting.
# ````
#
# ```{solution-start} ex-sel-iterations
# :class: dropdown
# ```
#
# $T \ge \big(\sqrt K\,\eta\lambda_*(1-\alpha^{-1}/C)\big)^{-1} = \frac{C}{\sqrt K\,\eta\lambda_*(C-\alpha^{-1})}$:
# the factors $\eta^{-1}$, $\lambda_*^{-1}$, $C/(C-\alpha^{-1})$ and, through
# $K\propto 1-\epsilon_m-\tau M_1$, the $(1-\epsilon_m-\tau M_1)^{-1/2}$. No $\sqrt M$: that factor is
# imposed by the choice $T = \Theta(M^{1/2})$. With $\lambda_*\approx 0.6$ (our lower end of $\lambda$)
# and $C\to\infty$, $\sqrt K \approx 1/(\eta T_\text{hit}\lambda_*)$; the cell evaluates it.

# %%
eta_T = float(np.median(e_sweep.values * e_sweep.median))
K_est = 1 / (eta_T * ecfg.lambda_min) ** 2

# %% tags=["remove-cell"]
K_mant, K_exp = f"{K_est:.0e}".split("e")
glue("sel-K", Markdown(f"The median of $\\eta T_\\text{{hit}}$ over the step sizes of §5 is {eta_T:.0f}, so "
                       f"$K \\approx 1/(\\eta T_\\text{{hit}}\\lambda_*)^2 \\approx {K_mant} \\times 10^{{{int(K_exp)}}}$ "
                       f"at $\\lambda_* = {ecfg.lambda_min:g}$."))

# %% [markdown]
# ```{glue:md} sel-K
# :format: myst
# ```

# %% [markdown]
# ```{solution-end}
# ```

# %% tags=["remove-cell"]
assert np.isfinite(K_est) and K_est > 0

# %% [markdown]
# ### The batch and the sample count
#
# The proof of Theorem 1 asks for $B \ge M_1\log M_1$ "by the solution to the coupon collector's
# problem" (eq. 39): a batch should show every relevant pattern as a query. With queries uniform over
# the $M_1$ patterns the probability that $B$ queries cover them all is exact,
# $\sum_{k=0}^{M_1}(-1)^k\binom{M_1}{k}(1-k/M_1)^B$. At $B = M_1\ln M_1$, the constant that (39) prints,
# it tends to $e^{-1}$ as $M_1$ grows: $M_1\ln M_1$ is the coupon collector's *mean* waiting time, not a
# size that succeeds with high probability. Theorem 1's $B > \Omega(M_1\log M_1)$ leaves the constant
# free (the proof itself ends with $B \gtrsim \Theta(M_1\log M_1)$), and any constant $c > 1$ does succeed
# ($P \ge 1 - M_1^{1-c}$). The card decides under $c = 2$, the smallest integer constant, and reports (39)'s
# printed constant beside it; our training batch is larger than both. And the theorem's sample
# complexity $N = BT$ counts fresh prompts: our SGD draws a new batch at every step.

# %% tags=["remove-output"]
coverage = sel.theory.query_coverage  # P(all M1 patterns among B uniform queries), eq. (39)
M1c, Bc = acfg.M1, acfg.batch
B_const1 = math.ceil(M1c * math.log(M1c))
c95 = next(c for c in np.arange(1, 10, 0.05) if coverage(M1c, math.ceil(c * M1c * math.log(M1c))) >= 0.95)
print(f"P(all {M1c} patterns among the queries): B = M1 log M1 = {B_const1}: {coverage(M1c, B_const1):.3f}; "
      f"our B = {Bc}: {coverage(M1c, Bc):.4f}; 0.95 needs B >= {c95:.2f} M1 log M1")
smp = acfg.sampler()
gen = icl_lab.make_generator(123)
b1, b2 = smp.sample(Bc, gen), smp.sample(Bc, gen)
fresh = not bool((b1.x.reshape(Bc, -1)[:, None] == b2.x.reshape(Bc, -1)[None]).all(-1).any())
N_hit = Bc * float(np.nanmedian(np.where(np.isfinite(a_sweep.median), a_sweep.median, np.nan)))

# %% tags=["remove-input"]
slots = np.bincount([p for t in smp.tasks for p in (t.a, t.b)], minlength=M1c)  # the query is mu_a or mu_b, 1/2 each
ledger.judge(checks.batch(coverage, M1c, Bc, c95, slots, fresh, N_hit), show=False)

# %% [markdown]
# ## Claims ledger (Part II)
#
# The claims checked on this page. The [first part](selectors_mechanism.ipynb) has its own ledger for
# the mechanism and out-of-domain claims; the synthesis chapter joins both.

# %% tags=["remove-input"]
ledger.show();

# %% tags=["remove-cell"]
ledger.export();
