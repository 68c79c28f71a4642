"""Figures of the convergence chapter (shared by the notebook, its live widgets and its static
sliders): the four-phase portrait (data-driven Figure 1), per-feature error curves (Figure 2) and
K x K attention heat maps (Figure 3)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ... import plotting
from . import ColumnTrajectory

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
                  dominant: ColumnTrajectory | None = None, figsize=(11, 7.2)):
    """Four panels for an under-represented column: weights, gradients, attention (+ strip), error."""
    col = tr.column
    K, logK = col.K, col.logK
    tau = tr.tau
    m = tau > 0
    fig = plt.figure(figsize=figsize)
    gs = fig.add_gridspec(3, 2, height_ratios=[0.35, 1, 1], hspace=0.55, wspace=0.28)
    strip = fig.add_subplot(gs[0, :])
    axes = [fig.add_subplot(gs[1, 0]), fig.add_subplot(gs[1, 1]), fig.add_subplot(gs[2, 0]), fig.add_subplot(gs[2, 1])]
    # strip: total attention on the dominant feature, the target, and all other features (Figure 1 top row)
    t1 = times.get("T1", math.nan)
    grid = np.geomspace(max(tau[1], 0.03 * t1 if np.isfinite(t1) else 1e-3), tau[-1], 300)
    rows = [np.interp(grid, tau, tr.series("Attn_1")), np.interp(grid, tau, tr.series("Attn_k")),
            np.interp(grid, tau, (K - 2) * tr.series("Attn_o"))]
    strip.imshow(np.array(rows), aspect="auto", cmap="Greys", vmin=0, vmax=1,
                 extent=(math.log10(grid[0]), math.log10(grid[-1]), 2.5, -0.5))
    strip.set_yticks([0, 1, 2], [r"Attn$_1$", r"Attn$_k$", r"$\sum_n$Attn$_n$"], fontsize=7)
    strip.set_xlabel(r"$\log_{10}\tau$", fontsize=8)
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
    plotting.label(ax, r"$\tau = \eta t$", "bilinear weight", "weights (dashed: finite N, GD)")
    ax.legend(fontsize=7, loc="upper left")
    ax = axes[1]
    ax.plot(tau[m], tr.series("alpha")[m], label=r"$\alpha_k$")
    ax.plot(tau[m], np.abs(tr.series("beta1")[m]), label=r"$|\beta_{k,1}|$")
    ax.plot(tau[m], np.abs(tr.series("betao")[m]), label=r"$|\beta_{k,n}|$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.label(ax, r"$\tau$", "gradient", "gradients (log scale)")
    ax.legend(fontsize=7)
    ax = axes[2]
    ax.plot(tau[m], tr.series("Attn_1")[m], label=r"Attn$_1$ (dominant)")
    ax.plot(tau[m], tr.series("Attn_k")[m], label=r"Attn$_k$ (target)")
    ax.plot(tau[m], tr.series("Attn_o")[m], label=r"Attn$_n$ (one other feature)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.label(ax, r"$\tau$", "attention", "attention scores")
    ax.legend(fontsize=7)
    ax = axes[3]
    ax.plot(tau[m], np.maximum(tr.gap[m], 1e-12), label=r"$\mathcal{L}_k-\mathcal{L}_k^{\rm low}$ (under-repr.)")
    if dominant is not None:
        md = dominant.tau > 0
        ax.plot(dominant.tau[md], np.maximum(dominant.gap[md], 1e-12), label=r"$\mathcal{L}_1-\mathcal{L}_1^{\rm low}$ (dominant)")
    ax.axhline(eps, color="grey", ls="--", lw=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.label(ax, r"$\tau$", "error above the floor", "prediction error")
    ax.legend(fontsize=7)
    t1 = times.get("T1", math.nan)
    lo = 0.03 * t1 if np.isfinite(t1) else tau[1]  # the action starts around T1 / 30
    for a in axes:
        a.set_xlim(max(tau[1], lo), tau[-1] * 1.1)
        _phase_lines(a, times, labels=a is axes[0])
    return fig


def draw_error_curves(ax, epochs, curves, labels=None, log=True, title=""):
    """Per-feature error curves (Figure 2): curves (T, R, K) -> mean +- std over R for each k."""
    K = curves.shape[-1]
    for k in range(K):
        plotting.band(ax, epochs, curves[:, :, k].T, label=(labels or [rf"$\mathcal{{L}}_{k + 1}$" for k in range(K)])[k],
                      log=log)
    plotting.label(ax, "epoch", r"$\mathcal{L}_k = \frac{1}{2}E[(\hat y - y)^2 \mid x_q = v_k]$", title)
    ax.legend(fontsize=7)


def draw_heatmaps(maps, epochs, title: str = "", figsize=None, unit: str = "epoch"):
    """A row of K x K attention maps (Figure 3): maps (T, K, K), row = query feature, column = key;
    ``unit`` names the time axis ('epoch' for Adam, 'step t' for GD)."""
    T = len(epochs)
    fig, axes = plt.subplots(1, T, figsize=figsize or (1.7 * T + 0.6, 2.3))
    axes = np.atleast_1d(axes)
    K = maps.shape[-1]
    for ax, M, e in zip(axes, maps, epochs):
        plotting.heatmap(ax, M, colorbar=False, fmt="{:.2f}",
                         row_labels=[f"$v_{k + 1}$" for k in range(K)] if ax is axes[0] else None,
                         col_labels=[f"$v_{k + 1}$" for k in range(K)])
        if ax is not axes[0]:
            ax.set_yticks([])
        ax.set_title(f"{unit} {e}", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
