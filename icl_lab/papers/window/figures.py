"""Figures and live widgets of the window chapter (both notebooks). Every function takes results of
:mod:`.experiments` (or computes a small population curve itself) and returns a Matplotlib figure."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import numpy as np
import torch

from ... import plotting
from ...config import make_generator
from ...data import HillsTask, TwoReLUTask, sphere
from .data import F64, log_grid, sphere_inputs
from .population import brackets
from .theory import optimal_window, window_curves

C = plotting.COLORS


def _half_angle(c: float) -> float:
    """Half-angle of the window c (1 - cos theta) <= 1 on the circle (pi when c <= 1/2)."""
    return math.acos(max(-1.0, 1 - 1 / c)) if c > 0.5 else math.pi


def bands(ax, steps, runs, **kw):
    """mean ± std over trials; runs: (records, trials)."""
    return plotting.band(ax, steps, runs.T, **kw)


# ---------------------------------------------------------------- Part I
def bias_variance(bv):
    """Fig. 2 from simulation: window, one noisy context, estimate mean ± std per c; bias² and
    variance against c."""
    cfg = bv.config
    k3 = len(cfg.c_values)
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 6.6), layout="constrained")
    axes = axes.ravel()
    th = torch.linspace(-math.pi, math.pi, 400, dtype=F64)
    xs_c = torch.stack([th.cos(), th.sin()], -1)
    fcurve = HillsTask(cfg.nu, "freq").evaluate({"b": torch.tensor([cfg.b], dtype=F64)}, xs_c[None])[0]
    for j, c in enumerate(cfg.c_values[:3]):
        ax = axes[j]
        half = _half_angle(c)
        ax.axvspan(cfg.theta_query - half, cfg.theta_query + half, color=C[0], alpha=0.15, label="window")
        ax.plot(th, fcurve, "k", lw=1.2, label="$f$")
        ax.scatter(bv.example["theta"], bv.example["y"], s=10, color="0.5", label="one noisy context")
        m, s = float(bv.mean[j]), float(bv.std[j])
        ax.errorbar([cfg.theta_query + 0.15], [m], yerr=[s], fmt="o", color="#7B3294", ecolor="#D9B38C", elinewidth=6,
                    label="estimate: mean ± std")
        ax.scatter([cfg.theta_query], [bv.target], s=60, facecolor="white", edgecolor="k", zorder=5, label="true label")
        plotting.label(ax, r"angle $\theta$", "label", f"c = {c:g}: bias² {float(bv.bias2[j]):.3f}, var {float(bv.var[j]):.3f}")
    g = bv.c_grid[k3:]
    ax = axes[3]
    ax.loglog(g, bv.bias2[k3:], label="bias²")
    ax.loglog(g, bv.var[k3:], label="variance")
    ax.loglog(g, bv.bias2[k3:] + bv.var[k3:], "k--", label="MSE")
    plotting.label(ax, r"window scale $c = \|M\|$", "at the query", "bias and variance against c")
    plotting.legend_outside(fig, "below", ncols=3, fontsize=9)  # one legend for all panels, off the data
    return fig


def power_laws(pl):
    """Signal terms (affine: radial and tangential parts; 2-ReLU) and the noise term against c."""
    cfg = pl.config
    c = pl.affine.c
    pos = c > 0
    lo, hi = cfg.fit_signal
    sel = (c >= lo) & (c <= hi)
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.4), layout="constrained")
    ax = axes[0]
    ax.loglog(c[pos], pl.affine.signal[pos], label="affine signal $S_n(c)$")
    ax.loglog(c[pos], pl.affine.radial[pos] / (3 * cfg.d), "--", label="affine, radial part / 3d")
    ax.loglog(c[pos], (pl.affine.spread - pl.affine.radial)[pos] / (3 * cfg.d), ":", label="affine, tangential part / 3d")
    ax.loglog(c[pos], pl.relu.signal[pos], label="2-ReLU signal")
    ax.loglog(c[pos], pl.affine.signal[pos] / 2, color="0.6", lw=0.8, label="affine / 2 (Lemma C.9)")
    cc = c[sel]
    ax.loglog(cc, 0.5 * pl.affine.radial[sel][0] / (3 * cfg.d) * (cc / cc[0]) ** -2, "k:", lw=1, label="slope −2")
    ax.axvspan(lo, hi, color="0.9", zorder=0)
    plotting.label(ax, "window scale c", "signal term at L = 1", f"signal, d = {cfg.d}, n = {cfg.n}")
    ax = axes[1]
    ax.loglog(c[pos], pl.affine.noise[pos], label=r"$N_n(c)=\mathbb{E}\sum_i a_i^2$")
    ax.axhline(1 / cfg.n, color="0.6", lw=0.8)
    ax.axhline(1.0, color="0.6", lw=0.8)
    r0, r1 = pl.noise_fit_range
    cc = c[(c >= r0) & (c <= r1)]
    n0 = float(pl.affine.noise[(c >= r0)][0])
    ax.loglog(cc, n0 * (cc / cc[0]) ** ((cfg.d - 1) / 2), "k--", lw=1, label=f"slope (d−1)/2 = {(cfg.d - 1) / 2:g}")
    ax.loglog(cc, n0 * (cc / cc[0]) ** (cfg.d / 2), "k:", lw=1, label=f"slope d/2 = {cfg.d / 2:g}")
    plotting.label(ax, "window scale c", "noise term / σ²", f"noise: fitted slope {pl.slope_noise:.2f}")
    plotting.legend_outside(fig, "below", ncols=3, fontsize=9)
    return fig


def scaling(sc):
    """c*(Lambda) for the affine and 2-ReLU classes, admissible points circled, bracket slopes."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.6), layout="constrained")
    for ax, cls in zip(axes, ("affine", "relu")):
        for (d_s, n_s, cl) in sc.curves:
            if cl != cls:
                continue
            rows = [r for r in sc.rows if r["d"] == d_s and r["n"] == n_s and r["cls"] == cls]
            lam = np.array([r["Lambda"] for r in rows])
            cs = np.array([r["c_star"] for r in rows])
            ok = np.array([r["admissible"] for r in rows])
            line, = ax.loglog(lam, cs, "o-", ms=3, lw=1, label=f"d = {d_s}, n = {n_s}: slope {sc.slopes[(d_s, n_s, cls)]:.2f}")
            ax.loglog(lam[ok], cs[ok], "o", ms=7, mfc="none", color=line.get_color())
            b = brackets(d_s)[cls]
            if ok.any():
                l0 = lam[ok].min()
                c0 = cs[ok][np.argmin(lam[ok])]
                lam_line = np.array([l0, lam[ok].max()])
                for e, sty in zip(b, (":", "--")):
                    ax.loglog(lam_line, c0 * (lam_line / l0) ** e, sty, color=line.get_color(), lw=0.8)
        plotting.label(ax, r"$\Lambda = nL^2/\sigma^2$", r"optimal window $c^\star = \|M^\star\|$",
                       "Case 1: affine" if cls == "affine" else "Case 2: 2-ReLU")
        plotting.legend_below(ax)
    return fig


def transfer(tr):
    cfg = tr.config
    fig, ax = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
    ax.loglog(tr.test_L, tr.pretrained_loss, "o-", ms=3, label=f"pretrained at L = {cfg.L:g} (c = {tr.c_pre:.1f})")
    ax.loglog(tr.test_L, tr.matched_loss, "s-", ms=3, label="matched: pretrained at L' (min over c)")
    ax.axvline(cfg.L, color="0.6", lw=0.8)
    plotting.label(ax, "test Lipschitz constant L'", "ICL loss", f"2-ReLU, d = {cfg.d}, n = {cfg.n}, σ = {cfg.sigma}")
    plotting.legend_below(ax, ncols=2)
    return fig


def linear_attention(la):
    cfg = la.config
    fig, ax = plt.subplots(figsize=(6.5, 4.4), layout="constrained")
    for j, cls in enumerate(("affine", "relu")):
        ax.loglog(la.n, [v[0] for v in la.linear[cls]], "o-", color=C[1 + j], label=f"linear attention optimum, {cls}")
        ax.loglog(la.n, la.softmax[cls], "s--", color=C[1 + j], label=f"softmax optimum, {cls}")
    ax.axhline(cfg.L**2 / 3, color="k", lw=1, label="$L^2/3$")
    plotting.label(ax, "context length n", "ICL loss", f"d = {cfg.d}, L = {cfg.L:g}, σ = {cfg.sigma}")
    plotting.legend_below(ax, ncols=2)
    return fig


def lowrank_landscape(lrl, titles):
    """log10 loss on the (c2, c1) plane per case, the grid minimum starred."""
    k = len(titles)
    # one row (at most three panels, plotting.MAX_PANELS_PER_ROW): a column of three stacked maps ran 1,200 px tall
    fig, axes = plt.subplots(1, k, figsize=(7.5, 3.4), squeeze=False, layout="constrained")
    for j, (ax, title, c1, loss, am) in enumerate(zip(axes[0], titles, lrl.c1, lrl.loss, lrl.argmin)):
        im = ax.contourf(lrl.c2.numpy(), c1.numpy(), np.log10(loss.numpy()), levels=20, cmap="viridis")
        ax.plot([am[1]], [am[0]], "r*", ms=12)
        ax.axvline(0, color="w", lw=0.8, ls="--")
        cb = fig.colorbar(im, ax=ax, location="bottom", shrink=0.9, pad=0.02)
        cb.set_label("log10 loss", fontsize=9)
        cb.ax.tick_params(labelsize=8)
        cb.ax.xaxis.set_major_locator(MaxNLocator(3))  # the default ticks of a narrow bar overprint
        plotting.label(ax, "$c_2$ (spurious)", "$c_1$ (col B)" if j == 0 else "",
                       f"{title}\nmin at ({am[0]:.2f}, {am[1]:.2f})")
        ax.title.set_fontsize(9)
    return fig


_curve_cache: dict = {}


def relu_curves(n_, d_, tasks=1000):
    key = (int(n_), int(d_), int(tasks))
    if key not in _curve_cache:
        grid = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.02, 3000.0, 60)])
        _curve_cache[key] = window_curves(TwoReLUTask(key[1], 1.0), sphere_inputs(key[1]), key[0], grid, tasks=tasks,
                                          generator=make_generator(21), chunk=max(1, 200_000 // key[0]))
    return _curve_cache[key]


def draw_window(L=1.0, sigma=0.1, n=100, d=2, tasks=1000):
    """The population loss with its two parts and c*, the window c* on the circle, and the
    attention profile of c* next to linear attention's."""
    cur = relu_curves(n, d, tasks)
    cst, lmin, _ = optimal_window(cur, L, sigma)
    fig, axes = plt.subplots(1, 3, figsize=(7.0, 3.9), layout="constrained")
    pos_ = cur.c > 0
    ax = axes[0]
    ax.loglog(cur.c[pos_], cur.loss(L, sigma)[pos_], "k", label="loss")
    ax.loglog(cur.c[pos_], L**2 * cur.signal[pos_], "--", label="signal $L^2S_n$")
    ax.loglog(cur.c[pos_], sigma**2 * cur.noise[pos_], ":", label=r"noise $\sigma^2N_n$")
    ax.plot([cst], [lmin], "r*", ms=12, label=f"c* = {cst:.1f}")
    ax.set_ylim(max(1e-7, lmin / 30), None)
    plotting.label(ax, "window scale c", "ICL loss", f"L = {L:g}, σ = {sigma:g}, n = {n}, d = {d}")
    plotting.legend_below(ax)
    ax = axes[1]
    t = np.linspace(-np.pi, np.pi, 400)
    half = _half_angle(cst)
    ax.plot(np.cos(t), np.sin(t), color="0.6")
    tt = np.linspace(-half, half, 100)
    ax.fill(np.r_[0, np.cos(tt), 0], np.r_[0, np.sin(tt), 0], color=C[0], alpha=0.25, label="window")
    ax.scatter([1], [0], s=60, facecolor="white", edgecolor="k", zorder=5, label="query")
    ax.set_aspect("equal")
    ax.set_xlim(-1.2, 1.2)
    ax.set_ylim(-1.2, 1.2)
    ax.set_title(f"window half-angle {math.degrees(half):.0f}°")
    plotting.legend_below(ax)
    ax = axes[2]
    wts = np.exp(cst * (np.cos(t) - 1))
    ax.plot(t, wts / wts.max(), label="softmax, M = c* I")
    ax.plot(t, np.cos(t), label="linear, M = m I (any m)")
    plotting.label(ax, r"angle $\theta$ from the query", "weight / max", "attention profile")
    plotting.legend_below(ax)
    return fig


def draw_window_n(n=100, L=1.0, sigma=0.1, d=2, tasks=1000):
    """:func:`draw_window` with the number of demonstrations first (a slider over ``n``)."""
    return draw_window(L, sigma, n, d, tasks=tasks)


def live_window(tasks: int = 1000):
    """The callback of Part I's live widget: ``callback(L, sigma, n, d)`` draws :func:`draw_window` with
    ``tasks`` Monte-Carlo tasks per curve and shows it."""

    def show(L=1.0, sigma=0.1, n=100, d=2) -> None:
        fig = draw_window(L, sigma, n, d, tasks=tasks)
        plt.show()
        plt.close(fig)

    return show


# ---------------------------------------------------------------- Part II
def hills(res, seed=123):
    """Fig. 1: target and windows (top), attention profiles (middle), ICL error against n (bottom;
    dashed: population optima)."""
    cfg = res.config
    nus, ns = cfg.nus, res.n
    n_show = ns[-1]
    fig, axes = plt.subplots(3, len(nus), figsize=(7.0, 8.2), layout="constrained")  # 8.2: the Lipschitz page stays within its length
    th = torch.linspace(-math.pi, math.pi, 500, dtype=F64)
    circ = torch.stack([th.cos(), th.sin()], -1)
    g = make_generator(seed)
    for j, nu in enumerate(nus):
        task = cfg.task(nu)
        b0 = torch.tensor([0.0], dtype=F64)
        f = task.evaluate({"b": b0}, circ[None])[0]
        c_tr = float(res.c_trained[nu][-1].mean())
        c_op = float(res.c_opt[nu][-1])
        ax = axes[0, j]
        for cc, col, lab in ((c_op, C[0], "optimal window"), (c_tr, C[2], "trained window")):
            half = _half_angle(cc)
            ax.axvspan(-half, half, color=col, alpha=0.15, label=lab)
        xc = sphere(min(n_show, 64), 2, g)
        yc = task.evaluate({"b": b0}, xc[None])[0] + cfg.sigma * torch.randn(xc.shape[0], generator=g, dtype=F64)
        ax.scatter(torch.atan2(xc[:, 1], xc[:, 0]), yc, s=8, color="0.55", label="noisy context")
        ax.plot(th, f, "k", lw=1.3)
        ax.scatter([0.0], [float(task.evaluate({"b": b0}, torch.tensor([[[1.0, 0.0]]], dtype=F64))[0, 0])], s=60,
                   facecolor="white", edgecolor="k", zorder=5, label="query")
        lo, hi = float(min(f.min(), yc.min())), float(max(f.max(), yc.max()))
        ax.set_ylim(lo - 0.1 * (hi - lo + 0.2), hi + 0.1 * (hi - lo + 0.2))
        plotting.label(ax, r"angle $\theta$", "$f$" if j == 0 else "", rf"$\nu$ = {nu:g}: $c^\star$ = {c_op:.1f}, trained {c_tr:.1f}")
        ax.title.set_fontsize(9)
        ax = axes[1, j]
        wt = torch.exp(c_tr * (th.cos() - 1))
        ax.plot(th, wt / wt.max(), color=C[0], label="softmax weights (trained)")
        Ml = res.M_linear[nu][-1].mean(0).to(F64)  # trained linear attention, averaged over trials
        lw = circ @ Ml @ torch.tensor([1.0, 0.0], dtype=Ml.dtype)
        ax.plot(th, lw / lw.abs().max(), color=C[1], label="linear weights (trained)")
        plotting.label(ax, "angle from the query (rad)", "weight / max" if j == 0 else "", f"n = {n_show}")
        ax = axes[2, j]
        for act, col in (("softmax", C[0]), ("linear", C[1])):
            bands(ax, ns, res.trained[(act, nu)], color=col, label=f"{act} error, trained", marker="o", log=True)
            ax.plot(ns, res.optimum[(act, nu)], "--", color=col, lw=1, label=f"{act} error, population optimum")
        ax.set_xscale("log", base=2)
        plotting.label(ax, "context length n", "ICL error" if j == 0 else "", None)
    plotting.legend_outside(fig, "below", ncols=3, fontsize=9)  # one legend for all panels, off the data
    return fig


def norm_vs_L(f3):
    cfg = f3.config
    titles = {("relu", "iso"): "ReLU, isotropic", ("relu", "aniso"): "ReLU, non-isotropic",
              ("cos", "iso"): "cosine, isotropic", ("cos", "aniso"): "cosine, non-isotropic"}
    panels = cfg.panel_pairs()
    fig, axes = plt.subplots(2, len(panels), figsize=(7.0, 5.8), squeeze=False, layout="constrained")
    for row, grid_name in enumerate(("paper", "visible")):
        for col, (cls, inp) in enumerate(panels):
            ax = axes[row, col]
            keys = [k for k in f3.keys if k[0] == grid_name and k[1] == cls and k[2] == inp]
            for i, k in enumerate(keys):
                line = bands(ax, f3.steps, f3.norm[k], label=f"L = {k[3]:g}", color=C[i])
                if not math.isnan(f3.c_star[k]):
                    ax.axhline(f3.c_star[k], color=line.get_color(), ls=":", lw=1)
            plotting.label(ax, "pretraining iteration", r"$\|M\|_2$" if col == 0 else "",
                           titles[(cls, inp)] + (" (L near 1)" if grid_name == "paper" else " (small L)"))
        plotting.legend_outside(axes[row, -1], "right", fontsize=9)  # the row's L grid, shared by its panels
    return fig


def norm_vs_sigma_n(f4):
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 5.8), layout="constrained")
    for ax, (kind, cls) in zip(axes.ravel(), (("sigma", "relu"), ("sigma", "cos"), ("n", "relu"), ("n", "cos"))):
        keys = [k for k in f4.keys if k[0] == kind and k[1] == cls]
        for i, k in enumerate(keys):
            line = bands(ax, f4.steps, f4.norm[k], label=f"{'σ' if kind == 'sigma' else 'n'} = {k[2]:g}", color=C[i])
            ax.axhline(f4.c_star[k], color=line.get_color(), ls=":", lw=1)
        plotting.label(ax, "pretraining iteration", r"$\|M\|_2$", f"{'ReLU' if cls == 'relu' else 'cosine'}: "
                       f"{'σ' if kind == 'sigma' else 'n'} varies")
    for row in range(2):  # each row varies one quantity over the same values: one legend beside the row
        plotting.legend_outside(axes[row, -1], "right", fontsize=9)
    return fig


def isotropy(iso):
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.0), layout="constrained")
    for i, (k, v) in enumerate(iso.anisotropy.items()):
        bands(axes[0], iso.steps, v, label=f"{k[0]} M, {'isotropic' if k[1] == 'iso' else 'non-isotropic'} inputs",
              color=C[i], ls="-" if k[1] == "iso" else "--")
        bands(axes[1], iso.steps, iso.norm[k], color=C[i], ls="-" if k[1] == "iso" else "--")
    axes[1].axhline(iso.c_star, color="k", ls=":", lw=1, label="population c*")
    plotting.label(axes[0], "pretraining iteration", r"$\|M - \frac{\mathrm{tr} M}{d} I\|_F / \|M\|_F$", "anisotropy of M")
    plotting.label(axes[1], "pretraining iteration", r"$\|M\|_2$", "scale")
    plotting.legend_outside(fig, "below", ncols=2, fontsize=9)
    return fig


NAMES = {"affine": "affine", "relu": "ReLU", "cos": "cosine"}


def transfer_training(f5):
    cfg = f5.config
    fig, axes = plt.subplots(2, 2, figsize=(7.0, 6.8), layout="constrained")
    axes = axes.ravel()
    same_L = [p for p in cfg.pretrain if p[1] == 1.0]
    for col, test in enumerate(cfg.test_classes[:3]):
        ax = axes[col]
        for i, (cls, L) in enumerate(same_L):
            bands(ax, f5.steps, f5.error[(cls, L, test)], label=f"pretrained on {NAMES[cls]}", color=C[i], log=True)
        plotting.label(ax, "pretraining iteration", "test ICL error", f"test: {NAMES[test]} (L = 1)")
    plotting.legend_below(axes[2])  # the three panels with L = 1 share this legend
    ax = axes[3]
    others = [p for p in cfg.pretrain if p[1] != 1.0]
    for cls, L in [("affine", 1.0), ("cos", 1.0)] + others:  # the L = 1 runs keep their colours of the other panels
        i = same_L.index((cls, L)) if (cls, L) in same_L else len(same_L) + others.index((cls, L))
        bands(ax, f5.steps, f5.error[(cls, L, "cos")], label=f"pretrained on {NAMES[cls]}, L = {L:g}", color=C[i], log=True)
    plotting.label(ax, "pretraining iteration", "test ICL error", "test: cosine (L = 1), mismatched L")
    plotting.legend_below(ax)
    return fig


LOWRANK_LABELS = {"affine": r"$a^\top B^\top x + 2$", "quadratic": r"$(a^\top B^\top x)^2$",
                  "cosine": r"$\cos(4a^\top B^\top x)$", "linear": r"$a^\top B^\top x$"}


def lowrank_training(f9):
    kinds = f9.config.kinds
    fig, axes = plt.subplots(2, len(kinds), figsize=(7.0, 5.8), squeeze=False, layout="constrained")
    for col, kind in enumerate(kinds):
        for act, colr in (("softmax", C[0]), ("linear", C[1])):
            bands(axes[0, col], f9.steps, f9.rho[(act, kind)], color=colr, label=act, log=True)
            bands(axes[1, col], f9.steps, f9.error[(act, kind)], color=colr, label=act, log=True)
        plotting.label(axes[0, col], "", r"$\rho(M, B)$" if col == 0 else "", LOWRANK_LABELS[kind])
        plotting.label(axes[1, col], "pretraining iteration", "test ICL error (MSE)" if col == 0 else "", None)
    plotting.legend_outside(fig, "below", ncols=2, fontsize=9)
    return fig


def t44_training(t44):
    fig, ax = plt.subplots(figsize=(6.5, 4.0), layout="constrained")
    bands(ax, t44.steps, t44.rho[("softmax", "linear")], label=r"$\rho(M,B)$", log=True)
    bands(ax, t44.steps, t44.cross[("softmax", "linear")], label=r"$\|B^\top M B_\perp\|_2 / \|M\|_2$", log=True)
    plotting.label(ax, "pretraining iteration", "", r"linear low-rank tasks, Assumption 4.3, $\sigma = 0$")
    plotting.legend_below(ax, ncols=2)
    return fig


def trained_window(c_tr: float, c_op: float, L: float):
    """The trained (tr(M)/d) and optimal windows on the circle and their attention profiles."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.9), layout="constrained")
    t = np.linspace(-np.pi, np.pi, 400)
    axes[0].plot(np.cos(t), np.sin(t), color="0.6")
    for cc, col, lab in ((c_op, C[0], "optimal"), (c_tr, C[2], "trained")):
        half = _half_angle(cc)
        tt = np.linspace(-half, half, 100)
        axes[0].fill(np.r_[0, np.cos(tt), 0], np.r_[0, np.sin(tt), 0], color=col, alpha=0.25, label=f"{lab}: c = {cc:.1f}")
        wts = np.exp(cc * (np.cos(t) - 1))
        axes[1].plot(t, wts / wts.max(), color=col)
    axes[0].scatter([1], [0], s=50, facecolor="white", edgecolor="k", zorder=5)
    axes[0].set_aspect("equal")
    axes[0].set_title(f"L = {L:g}: window (tr(M)/d)")
    plotting.label(axes[1], r"angle from the query $\theta$", "weight / max", "attention profile")
    plotting.legend_outside(fig, "below", ncols=2, fontsize=9)
    return fig


def bound_bracket(cur, L: float, sigma: float):
    """The paper's Fig. 7 from measured curves (2-ReLU class, w = c / 2): the signal (bias) term
    between rough bounds a_lo L^2/(w+1)^2 and a_up L^2 (1/w + 1/n), the constants a_lo, a_up the
    smallest and largest ratios measured over the grid (so the bounds hold there); the noise
    sigma^2 N_n(w); the overall bounds U = bias upper + noise and Lo = bias lower + noise; the
    bracket {w : Lo(w) <= min U} that must contain the optimum w*.  Returns a dict with the curves,
    the bracket and w*."""
    pos = cur.c > 0
    w = (cur.c[pos] / 2).numpy()
    S = cur.signal[pos].numpy()
    N = cur.noise[pos].numpy()
    up_shape, lo_shape = 1 / w + 1 / cur.n, 1 / (w + 1) ** 2
    a_up, a_lo = float(np.max(S / up_shape)), float(np.min(S / lo_shape))
    bias_up, bias_lo, noise = a_up * L**2 * up_shape, a_lo * L**2 * lo_shape, sigma**2 * N
    U, Lo, loss = bias_up + noise, bias_lo + noise, L**2 * S + noise
    u_min = float(U.min())
    inside = np.nonzero(Lo <= u_min)[0]
    bracket = (float(w[inside.min()]), float(w[inside.max()]))
    w_star = float(w[np.argmin(loss)])
    return dict(w=w, bias_up=bias_up, bias_lo=bias_lo, noise=noise, U=U, Lo=Lo, loss=loss, u_min=u_min,
                bracket=bracket, w_star=w_star, a_up=a_up, a_lo=a_lo)


def fig7(cur, L: float = 1.0, sigma: float = 0.3):
    """Fig. 7 of the paper, drawn from the measured curves (see :func:`bound_bracket`)."""
    b = bound_bracket(cur, L, sigma)
    w = b["w"]
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 4.6), layout="constrained")
    ax = axes[0]
    ax.fill_between(w, b["bias_lo"], b["bias_up"], color=C[0], alpha=0.2, label="bias bounds")
    ax.loglog(w, b["bias_up"], color=C[0], lw=1, label=r"bias upper $\propto L^2(1/w + 1/n)$")
    ax.loglog(w, b["bias_lo"], color=C[0], lw=1, ls="--", label=r"bias lower $\propto L^2/(w+1)^2$")
    ax.loglog(w, b["loss"] - b["noise"], "k", lw=1, label="measured bias (signal term)")
    ax.loglog(w, b["noise"], color="0.5", lw=2, label=r"noise $\sigma^2 N_n$")
    plotting.label(ax, r"$w_{KQ} = c/2$", "loss term", "bias and noise")
    ax = axes[1]
    ax.loglog(w, b["U"], color=C[1], label="overall upper bound")
    ax.loglog(w, b["Lo"], color=C[1], ls="--", label="overall lower bound")
    ax.loglog(w, b["loss"], "k", lw=1, label="measured loss")
    ax.axhline(b["u_min"], color="0.4", ls="--", lw=0.8)
    for x in b["bracket"]:
        ax.axvline(x, color="0.4", ls="--", lw=0.8)
    ax.plot([b["w_star"]], [b["loss"].min()], "r*", ms=12, label=f"optimum w* = {b['w_star']:.1f}")
    ax.set_ylim(b["loss"].min() / 5, None)
    plotting.label(ax, r"$w_{KQ} = c/2$", "ICL loss", f"bracket for w*: [{b['bracket'][0]:.1f}, {b['bracket'][1]:.1f}]")
    plotting.legend_outside(fig, "below", ncols=3, fontsize=9)
    return fig, b


LAW_NAMES = {"J": r"$\tilde J$ law on the sphere (paper)", "J-gaussian": r"$\tilde J z$, not projected",
             "sphere": "isotropic, on the sphere", "gaussian": "isotropic Gaussian", "assumption43": "Assumption 4.3"}


def covariate_laws(res):
    """rho(M, B) of softmax attention during training under each covariate law (a
    :class:`~.trained.CovariateLawsResult`), one panel per task class."""
    kinds = res.config.kinds
    names = LAW_NAMES
    fig, axes = plt.subplots(1, len(kinds), figsize=(7.0, 4.0), squeeze=False, layout="constrained")
    for ax, kind in zip(axes[0], kinds):
        for i, law in enumerate(res.laws):
            bands(ax, res.steps, res.rho[(law, kind)], color=C[i], label=names.get(law, law), log=True)
        plotting.label(ax, "pretraining iteration", r"$\rho(M, B)$", LOWRANK_LABELS[kind])
    plotting.legend_outside(fig, "below", ncols=3, fontsize=9)
    return fig


def trained_window_frames(f3):
    """The frames of Part II's slider over the Figure 3 run (isotropic 2-ReLU, small-L grid):
    ``(draw, Ls)`` with ``draw(L)`` the :func:`trained_window` of the trained ``tr(M)/d`` (trials' mean)
    against the population optimum ``c*`` at that L."""
    keys = [k for k in f3.keys if k[0] == "visible" and k[1] == "relu" and k[2] == "iso"]
    trained_c = {k[3]: (float(f3.mean_eig[k][-1].mean()), f3.c_star[k]) for k in keys}  # L -> (trained tr(M)/d, c*)

    def draw(L):
        return trained_window(*trained_c[L], L)

    return draw, [k[3] for k in keys]
