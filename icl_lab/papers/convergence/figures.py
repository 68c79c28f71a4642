"""Figures of the convergence chapter (shared by the notebook, its live widgets and its static
sliders): the four-phase portrait (data-driven Figure 1), per-feature error curves (Figure 2) and
K x K attention heat maps (Figure 3)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ... import plotting
from . import ColumnTrajectory, SymmetricColumn, phase_times
from . import theory as th
import icl_lab
from ...render import md_table

PHASE_COLORS = ("#fde0c5", "#f9c4d2", "#d0e4f5", "#d5efd5")


def _phase_lines(ax, times: dict, keys=("T1", "T2", "T3", "T4"), labels=True):
    lo = ax.get_xlim()[0]
    prev = max(lo, 1e-12)
    for i, key in enumerate(keys):
        t = times.get(key, math.nan)
        if not np.isfinite(t):
            continue
        ax.axvspan(prev, t, color=PHASE_COLORS[i % 4], alpha=0.45, lw=0)
        ax.axvline(t, color="k", lw=0.7, ls=":")
        if labels:
            ax.text(t, 1.0 - 0.07 * (i % 2), f" {key}", transform=ax.get_xaxis_transform(), fontsize=7, va="top", ha="left")
        prev = t


def draw_portrait(tr: ColumnTrajectory, times: dict, eps: float, title: str = "", finite: ColumnTrajectory | None = None,
                  dominant: ColumnTrajectory | None = None, figsize=None):
    """Four panels for an under-represented column: weights, gradients, attention (+ strip), error;
    sized for the page column, legends beside each panel."""
    col = tr.column
    K, logK = col.K, col.logK
    tau = tr.tau
    m = tau > 0
    fig = plt.figure(figsize=figsize or (plotting.COLUMN_WIDTH, 7.4), dpi=plotting.DPI, layout="constrained")
    gs = fig.add_gridspec(3, 2, height_ratios=[0.35, 1, 1])
    strip = fig.add_subplot(gs[0, :])
    axes = [fig.add_subplot(gs[1, 0]), fig.add_subplot(gs[1, 1]), fig.add_subplot(gs[2, 0]), fig.add_subplot(gs[2, 1])]
    # strip: total attention on the dominant feature, the target, and all other features (Figure 1 top row)
    t1 = times.get("T1", math.nan)
    grid = np.geomspace(max(tau[1], 0.03 * t1 if np.isfinite(t1) else 1e-3), tau[-1], 300)
    rows = [np.interp(grid, tau, tr.series("Attn_1")), np.interp(grid, tau, tr.series("Attn_k")),
            np.interp(grid, tau, (K - 2) * tr.series("Attn_o"))]
    strip.imshow(np.array(rows), aspect="auto", cmap="Greys", vmin=0, vmax=1,
                 extent=(math.log10(grid[0]), math.log10(grid[-1]), 2.5, -0.5))
    strip.set_yticks([0, 1, 2], [r"Attn$_1$", r"Attn$_k$", r"$\sum_n$Attn$_n$"], fontsize=9)
    strip.set_xlabel(r"$\log_{10}\tau$", fontsize=10)
    strip.grid(False)
    for key in ("T1", "T2", "T3", "T4"):
        t = times.get(key, math.nan)
        if np.isfinite(t) and t > grid[0]:
            strip.axvline(math.log10(t), color="C1", lw=1)
    strip.set_title(title or f"Under-represented feature: four phases (K = {K})", fontsize=10)
    ax = axes[0]
    ax.plot(tau[m], tr.series("A")[m], label=r"$A_k$")
    ax.plot(tau[m], tr.series("B1")[m], label=r"$B_{k,1}$")
    ax.plot(tau[m], tr.series("Bo")[m], label=r"$B_{k,n}$ ($n\neq 1,k$)")
    for c, lab in ((-0.49, r"$-0.49\log K$"), (1.0, r"$\log K$")):
        ax.axhline(c * logK, color="grey", lw=0.7, ls="--")
    if finite is not None:
        mf = finite.tau > 0
        for name, c in (("A", "C0"), ("B1", "C1"), ("Bo", "C2")):
            ax.plot(finite.tau[mf], finite.series(name)[mf], color=c, ls="--", lw=1)
    ax.set_xscale("log")
    plotting.label(ax, r"$\tau = \eta t$", "bilinear weight")
    ax = axes[1]
    ax.plot(tau[m], tr.series("alpha")[m], label=r"$\alpha_k$")
    ax.plot(tau[m], np.abs(tr.series("beta1")[m]), label=r"$|\beta_{k,1}|$")
    ax.plot(tau[m], np.abs(tr.series("betao")[m]), label=r"$|\beta_{k,n}|$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.label(ax, r"$\tau$", "gradient")
    ax = axes[2]
    ax.plot(tau[m], tr.series("Attn_1")[m], label=r"Attn$_1$ (dominant)")
    ax.plot(tau[m], tr.series("Attn_k")[m], label=r"Attn$_k$ (target)")
    ax.plot(tau[m], tr.series("Attn_o")[m], label=r"Attn$_n$ (one other feature)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.label(ax, r"$\tau$", "attention")
    t1 = times.get("T1", math.nan)
    lo = 0.03 * t1 if np.isfinite(t1) else tau[1]  # the action starts around T1 / 30
    lo_tau = max(tau[1], lo)
    ax = axes[3]
    ax.plot(tau[m], np.maximum(tr.gap[m], 1e-12), label=r"$\mathcal{L}_k-\mathcal{L}_k^{\rm low}$ (under-repr.)")
    if dominant is not None:
        md = dominant.tau > 0
        ax.plot(dominant.tau[md], np.maximum(dominant.gap[md], 1e-12), label=r"$\mathcal{L}_1-\mathcal{L}_1^{\rm low}$ (dominant)")
    ax.axhline(eps, color="grey", ls="--", lw=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.label(ax, r"$\tau$", "error above the floor")
    shown = [g[(t >= lo_tau) & (g > 1e-12)] for t, g in ((tau, tr.gap),) + (((dominant.tau, dominant.gap),) if dominant is not None else ())]
    shown = np.concatenate(shown) if shown else np.array([])
    ax.set_ylim(bottom=max(1e-12, 0.5 * float(shown.min())) if shown.size else eps / 10)  # no span down to the 1e-12 floor
    for a in axes:
        a.set_xlim(max(tau[1], lo), tau[-1] * 1.1)
        _phase_lines(a, times, labels=a is axes[0])
        a.legend(fontsize=9, loc="lower left", bbox_to_anchor=(0.0, 1.02), ncols=2, borderaxespad=0.0,
                 handlelength=1.5, columnspacing=0.8)
    return fig


def draw_heatmaps(maps, epochs, title: str = "", figsize=None, unit: str = "epoch"):
    """K x K attention maps (Figure 3), three a row: maps (T, K, K), row = query feature, column =
    key; ``unit`` names the time axis ('epoch' for Adam, 'step' for GD)."""
    T = len(epochs)
    ncols = min(T, 3)
    nrows = math.ceil(T / ncols)
    fig, axes = plotting.figure(ncols, nrows, height=2.4)
    if figsize is not None:
        fig.set_size_inches(*figsize)
    axes = np.atleast_1d(axes).ravel()
    K = maps.shape[-1]
    labels = [f"$v_{k + 1}$" for k in range(K)]
    for i, (ax, M, e) in enumerate(zip(axes, maps, epochs)):
        plotting.heatmap(ax, M, colorbar=False, fmt="{:.2f}", row_labels=labels, col_labels=labels)
        if i % ncols:
            ax.set_yticks([])
        ax.set_title(f"{unit} {e}", fontsize=10)
    for ax in axes[T:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def draw_full_vs_reduced(hres, K):
    """Entries of S under the full d x d model and the reduced K x K GD."""
    fig, ax = plotting.figure(1, 1, height=3.4)
    for (n, k), c in zip([(0, 0), (1, 0), (K - 1, K - 1), (0, K - 1)], plotting.COLORS):
        ax.plot(hres.steps, hres.S_reduced[:, n, k], color=c, lw=2.5, alpha=0.5, label=rf"reduced $S_{{{n + 1},{k + 1}}}$")
        ax.plot(hres.steps, hres.S_full[:, 0, n, k], "k:", lw=1)
        ax.plot(hres.steps, hres.S_full[:, 1, n, k], color=c, ls="--", lw=1)
    ax.plot([], [], "k:", lw=1, label="full, marginalised")
    ax.plot([], [], "k--", lw=1, label="full, sampled $w$")
    plotting.label(ax, "GD step t", r"entry of $S = V^\top Q V$")
    plotting.legend_outside(ax)
    return fig


def draw_balanced(bt, T1, K):
    """The balanced column: weights, gradients, attention and error against tau."""
    pos = bt.tau > 0
    tau = bt.tau[pos]
    fig, axes = plotting.figure(3, 1, height=3.0)
    axes[0].plot(tau, bt.series("A")[pos], label=r"$A_k$")
    axes[0].plot(tau, bt.series("Bo")[pos], label=r"$B_{k,n}$")
    axes[0].axhline(math.log(K), color="grey", ls="--", lw=0.7)
    axes[1].plot(tau, bt.series("alpha")[pos], label=r"$\alpha_k$")
    axes[1].plot(tau, np.abs(bt.series("betao")[pos]), label=r"$|\beta_{k,n}|$")
    axes[1].set_yscale("log")
    axes[2].plot(tau, bt.series("Attn_k")[pos], label=r"Attn$_k$")
    axes[2].plot(tau, (K - 1) * bt.series("Attn_o")[pos], label=r"$\sum_{n\neq k}$Attn$_n$")
    gap = bt.gap[pos]
    axes[2].plot(tau, np.maximum(gap, 1e-12), label=r"$\mathcal{L}_k - \mathcal{L}_k^{\rm low}$")
    axes[2].set_yscale("log")
    axes[2].set_ylim(bottom=max(1e-12, 0.3 * float(gap[gap > 0].min())) if np.any(gap > 0) else None)
    for ax, t in zip(axes, ["weights", "gradients", "attention, error"]):
        ax.set_xscale("log")
        ax.axvline(T1, color="k", ls=":", lw=0.8)
        plotting.label(ax, r"$\tau=\eta t$", "", t)
    plotting.legend_outside(fig, "below", ncols=4)
    return fig


def draw_balanced_scaling(Ks, T1b, eps_list, ph2_eps, Kb, ph2_K, eps):
    """Phase I length against K, normalised phase II length against 1/eps and against K."""
    fig, axes = plotting.figure(3, 1, height=3.0)
    axes[0].loglog(Ks, T1b, "o-", label=r"$T_1$ (first $A_k>\log K$)")
    axes[0].loglog(Ks, np.array(Ks) ** 2 * np.log(Ks), "k--", lw=0.8, label=r"$K^2\log K$")
    plotting.label(axes[0], "K", r"$\tau$", "phase I length")
    axes[1].semilogx(1 / np.array(eps_list), ph2_eps, "o-", label=rf"$(\tau_\epsilon - T_1)\epsilon/K$ against $1/\epsilon$, K = {Kb}")
    axes[1].axhline(0.25, color="grey", ls="--", lw=0.8, label="late-time law: 1/4")
    plotting.label(axes[1], r"$1/\epsilon$", "normalised phase II", "against 1/eps")
    axes[2].semilogx(Ks, ph2_K, "s-", color=plotting.COLORS[2], label=rf"the same against K, $\epsilon$ = {eps:g}")
    plotting.label(axes[2], "K", "normalised phase II", "against K")
    plotting.legend_outside(fig, "below", ncols=2)
    return fig


def draw_phase_durations(fitK, durs, slopes, bounds, p1, eps):
    """Phase durations of an under-represented column against K (log-log) with fitted slopes."""
    fig, ax = plotting.figure(1, 1, height=3.4)
    for ph, v in durs.items():
        ax.loglog(fitK, v, "o-", label=f"phase {ph}: slope {slopes[ph][0]:.2f} (bound {bounds[ph]})")
    plotting.label(ax, "K", r"phase duration ($\tau$)", f"p1 = {p1}, eps = {eps:g}")
    plotting.legend_outside(ax)
    return fig


def draw_late_law(late, p1):
    """4 p_k tau L_k against tau for each K (late-time law: tends to 1)."""
    fig, ax = plotting.figure(1, 1, height=3.2)
    for K, v in late.items():
        m = v["tau"] > 10
        ax.semilogx(v["tau"][m], v["ratio"][m], label=f"K = {K}")
    ax.axhline(1, color="k", lw=0.8, ls="--")
    ax.set_ylim(0, 2)
    plotting.label(ax, r"$\tau$", r"$4 p_k \tau\, \mathcal{L}_k$", f"under-represented column, p1 = {p1}")
    plotting.legend_outside(ax)
    return fig


def draw_switch(Ks, sw_pos, p1_vals):
    """B_k1 / log K at the switch time against K for several p1."""
    fig, ax = plotting.figure(1, 1, height=3.2)
    for p1 in p1_vals:
        ax.semilogx(Ks, [sw_pos[(p1, K)] for K in Ks], "o-", label=f"p1 = {p1}")
    ax.axhline(-0.5, color="k", ls="--", lw=0.8, label="-1/2")
    ax.axhline(-0.49, color="grey", ls=":", lw=0.8, label="-0.49")
    plotting.label(ax, "K", r"$B_{k,1}/\log K$ at $\tau_{\rm sw}$")
    plotting.legend_outside(ax)
    return fig


def draw_replica_losses(runs, select):
    """Figure 2 replica: held-out (solid) and training (dotted) L_k, imbalanced and balanced."""
    ep = np.array(runs.epochs)
    fig, axes = plotting.figure(2, 1, height=3.2, sharey=True)
    for ax, setting, tag in zip(axes, ("imbalanced", "balanced"), ("(a) p = (0.8, 0.1, 0.1)", "(b) p = 1/3")):
        idx = select(runs, setting=setting)
        for k in range(3):
            plotting.band(ax, ep[1:], runs.test_loss[1:, idx, k].T, label=rf"$\mathcal{{L}}_{k + 1}$", log=True, color=plotting.COLORS[k])
            plotting.band(ax, ep[1:], runs.train_loss[1:, idx, k].T, log=True, color=plotting.COLORS[k], ls=":", lw=1)
        plotting.label(ax, "epoch", r"$\mathcal{L}_k$" if ax is axes[0] else "", tag)
    plotting.legend_outside(fig, "below", ncols=3)
    return fig


def draw_theory_losses(tm):
    """Population GD of the theory model: L_k (imbalanced, balanced) and the weights of query v_2."""
    fig, axes = plotting.figure(3, 1, height=3.0)
    for ax, setting in zip(axes[:2], ("imbalanced", "balanced")):
        pr = tm.population[setting]
        m = pr.tau > 0
        for k in range(3):
            ax.loglog(pr.tau[m], pr.losses[m, k], color=plotting.COLORS[k], ls="-" if k < 2 else "--",
                      label=rf"$\mathcal{{L}}_{k + 1}$")
            if pr.floor[k] > 1e-8:
                ax.axhline(pr.floor[k], color=plotting.COLORS[k], ls=":", lw=0.8)
        plotting.label(ax, r"GD step $t$", r"$\mathcal{L}_k$" if ax is axes[0] else "", setting)
    pr = tm.population["imbalanced"]
    m = pr.tau > 0
    for (n, k, lab), c in zip([(1, 1, r"$A_2$"), (0, 1, r"$B_{2,1}$"), (2, 1, r"$B_{2,3}$")], plotting.COLORS[3:]):
        axes[2].semilogx(pr.tau[m], pr.S[m, n, k], color=c, label=lab)
    plotting.label(axes[2], r"GD step $t$", "bilinear weight", "imbalanced, query $v_2$")
    plotting.legend_outside(fig, "below", ncols=6)
    return fig


def draw_adam_losses(ad, lrs, select):
    """Held-out L_k of the Q-only model under Adam at two learning rates (dashed: the smaller)."""
    ep = np.array(ad.epochs)
    fig, axes = plotting.figure(2, 1, height=3.2, sharey=True)
    for ax, setting in zip(axes, ("imbalanced", "balanced")):
        for lr, ls in zip(lrs, ("--", "-")):
            idx = select(ad, setting=setting, lr=lr)
            for k in range(3):
                plotting.band(ax, ep[1:], ad.test_loss[1:, idx, k].T, log=True, color=plotting.COLORS[k], ls=ls,
                              label=rf"$\mathcal{{L}}_{k + 1}$, lr {lr}")
        plotting.label(ax, "epoch", r"held-out $\mathcal{L}_k$" if ax is axes[0] else "", setting)
    plotting.legend_outside(fig, "below", ncols=3)
    return fig


def draw_unseen(uw):
    """Median relative prediction error on task laws unseen in training, against training time."""
    fig, ax = plotting.figure(1, 1, height=3.2)
    lo = float(np.min(uw.median_one_minus_attn)) / 10
    for fam, vals in uw.median_rel_err.items():
        exact = float(np.max(vals)) < 1e-10
        ax.loglog(uw.steps, np.maximum(vals, lo), "v-" if exact else "o-",
                  label=fam + (": 0, drawn at the floor" if exact else ""))
    ax.loglog(uw.steps, uw.median_one_minus_attn, "k--", label=r"median $1 - \mathrm{Attn}_k$")
    ax.set_ylim(bottom=lo)
    plotting.label(ax, "GD step t of training", r"median $|\hat y - y| / |y|$")
    plotting.legend_outside(ax)
    return fig


def ratio_label(key: str) -> str:
    """A row label of :func:`~icl_lab.papers.convergence.theory.gradient_ratios` as math for the page:
    ``"I: |beta_k1| K^1.98 (min)"`` -> ``"I: $\\lvert\\beta_{k,1}\\rvert K^{1.98}$ (min)"``."""
    import re

    phase, rest = key.split(": ", 1)
    m = re.match(r"^(.*?)( \((?:min|max)\))?$", rest)
    expr, tail = m.group(1), m.group(2) or ""
    for a, b in (("|beta_k1|", r"\lvert\beta_{k,1}\rvert "), ("|beta_kn|", r"\lvert\beta_{k,n}\rvert "),
                 ("max beta", r"\max\ \beta"), ("alpha", r"\alpha_k "), ("eps", r"\epsilon")):
        expr = expr.replace(a, b)
    expr = re.sub(r"\^([0-9.]+)", r"^{\1}", expr)
    expr = re.sub(r"\s+", " ", expr.replace(" /", "/").replace("/ ", "/")).strip()
    return f"{phase}: ${expr}${tail}"


def say(text: str) -> None:
    """Show a short measured statement as rendered text."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def table(header, rows) -> None:
    """Show a small table of measured values as a rendered Markdown table ("nan" reads "not reached")."""
    from IPython.display import Markdown, display

    display(Markdown(md_table(header, [["not reached" if str(c) == "nan" else c for c in r] for r in rows])))


def replica_maps(runs, setting: str, select, which: str = "test"):
    """Seed-mean attention maps (epochs, K, K) of the trained replica in one setting, on held-out
    (``which="test"``) or training prompts; ``select`` picks the runs of that setting."""
    idx = select(runs, setting=setting)
    return (runs.test_map if which == "test" else runs.train_map)[:, idx].mean(1)


def population_maps(tm, setting: str, steps):
    """Population attention maps of the analysed model under GD at the recorded times nearest to
    ``steps``, with those times (for :func:`draw_heatmaps`)."""
    prs = tm.population[setting]
    ii = [int(np.argmin(np.abs(prs.tau - s))) for s in steps]
    return prs.attn[ii], [int(prs.tau[i]) for i in ii]


def adam_maps(ad, setting: str, lr: float, epochs, select):
    """Seed-mean held-out attention maps of the Q-only model trained with Adam at learning rate ``lr``,
    at the given recorded ``epochs``."""
    idx = select(ad, setting=setting, lr=lr)
    return ad.test_map[:, idx].mean(1).numpy()[[ad.epochs.index(e) for e in epochs]]


def draw_p1_portrait(K: int, p1: float):
    """The four phases of an under-represented column for one p1 (mean-field flow to eps = 1e-2),
    with the dominant column on top: a frame of the kernel-free p1 slider."""
    col = SymmetricColumn.under_represented(K, p1)
    tr = col.flow(1e11, stop_gap=0.999e-2)
    dom = SymmetricColumn.dominant(K, p1).flow(tr.tau[-1])
    return draw_portrait(tr, phase_times(tr, 1e-2), 1e-2, dominant=dom,
                         title=f"$K$ = {K}, $p_1$ = {p1}: mean-field flow of an under-represented column")


def draw_population_heat(pr, p1: float, steps=(1, 10, 30, 100, 300, 1000)):
    """Population attention maps of one :func:`~.theory.population_columns` run (recorded every step)
    after ``steps`` GD steps: a frame of the kernel-free heat-map slider."""
    steps = list(steps)
    return draw_heatmaps(pr.attn[steps], steps, unit="step", title=f"$p_1$ = {p1}")


def population_heat_frames(pops: dict):
    """The frame-drawing function of the heat-map slider over ``p1``: ``pops`` maps each ``p1`` to its
    :func:`~.theory.population_columns` run."""
    return lambda p1: draw_population_heat(pops[p1], p1)


def explore(K=20, p1=0.5, eta=5.0, N=0):
    """The live explorer: GD on the reduced under-represented column (N = 0: mean field, else a
    Monte-Carlo count law) with its phases, then the K = 3 population attention maps, shown in turn."""
    kw = {} if N == 0 else dict(N=int(N), M=500, generator=icl_lab.make_generator(0))
    col = SymmetricColumn.under_represented(int(K), p1, **kw)
    tr = col.gd(eta, 1e12, stop_gap=0.999e-2)
    dom = SymmetricColumn.dominant(int(K), p1, **kw).gd(eta, tr.tau[-1])
    fig = draw_portrait(tr, phase_times(tr, 1e-2), 1e-2, dominant=dom,
                        title=f"K = {K}, p1 = {p1}, eta = {eta}, N = {'inf' if N == 0 else N}: GD on the reduced column")
    plt.show()
    plt.close(fig)
    pr = th.population_columns(th.p_for("imbalanced", 3, p1), 60 if N == 0 else min(int(N), 200), eta, int(1000 / eta) + 1)
    steps_h = [i for i in (1, 3, 10, 30, 100, 300, 1000) if i < pr.tau.size]
    fig = draw_heatmaps(pr.attn[steps_h], [int(pr.tau[i]) for i in steps_h], unit="tau", title="K = 3 theory model: population attention map")
    plt.show()
    plt.close(fig)
