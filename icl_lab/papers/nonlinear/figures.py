"""Figures and widgets of the nonlinear chapter (Li, Duan, Liang): the paper's Figs. 1-4 for the
theory model and the practical block, the sweeps, the late phase, Prop. 1, and the explorers.

Every function takes results of :mod:`icl_lab.papers.nonlinear.experiments` (or of
:mod:`~icl_lab.papers.nonlinear.experiments_block`) and returns a matplotlib figure; the notebook
shows it with :func:`icl_lab.plotting.finish`.
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter
import numpy as np
import torch

from ... import plotting, widgets
from ...config import make_generator
from . import theory as th
from .checks import larger_first, poly_orderings
from .experiments_block import half_zero_times
from .tasks import FLAT, SHARP, cosine_sampler, make_features
from ...widgets import _png
from ...render import markdown_inline

F64 = torch.float64


def show(fig) -> None:
    """Show a figure of this module (constrained layout, sized for the page column) and close it."""
    plt.show()
    plt.close(fig)


def _feature_labels(K: int) -> list[str]:
    return [f"$v_{a + 1}$" for a in range(K)]


# ============================================================================ D12: concentration (C1)
def concentration_figure(conc):
    """Monte-Carlo P(E*) against the paper's bound and Hoeffding's, one panel per N."""
    n = len(conc.deltas)
    fig, axes = plt.subplots(1, n, figsize=(7.5, 3.1), sharey=True, layout="constrained")
    axes = np.atleast_1d(axes)
    for ax, N, dl, emp, pap, hoe, dmin in zip(axes, conc.config.N_values, conc.deltas, conc.empirical, conc.paper,
                                              conc.hoeffding, conc.delta_min):
        ax.plot(dl, emp, "k-", label="Monte Carlo")
        ax.plot(dl, pap.clamp_min(-0.05), "--", label=r"paper $1-3e^{-\delta^2N/25}$")
        ax.plot(dl, hoe.clamp_min(-0.05), ":", label=r"Hoeffding $1-2Ke^{-2N\delta^2}$")
        ax.axvline(dmin, color="grey", lw=1)
        ax.set_ylim(-0.05, 1.02)
        plotting.label(ax, r"imbalance $\delta$", r"$P(P_{1:N}\in\mathcal{E}^*)$" if N == conc.config.N_values[0] else "",
                       f"N = {N} (grey: $\\sqrt{{20K/N}}$)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3)
    return fig


# ============================================================================ Fig. 1
def fig1(steps, train_loss, test_loss, maps, L_values, xlabel, title_prefix, Ls_attn=(0.1, 1.0), sharp=None):
    """Loss curves of the flat and the sharp set (top) and the attention of queries v_1 (bottom).
    train/test loss (runs, T, nL); maps (runs, T, nL, K, K) [query, key].  ``sharp``: optionally a
    dict(steps=, train=, test=, maps=, L_values=, title=) drawn in the sharp panels (b, d) instead, e.g.
    the theory model at a smaller step."""
    fig, axes = plt.subplots(2, 2, figsize=(7.5, 6.0), layout="constrained")
    base = dict(steps=steps, train=train_loss, test=test_loss, maps=maps, L_values=L_values, title=title_prefix)
    panels = (base, dict(base, **(sharp or {})))
    for ax, group, name, src in ((axes[0, 0], FLAT, "flat", panels[0]), (axes[0, 1], SHARP, "sharp", panels[1])):
        for i, Lv in enumerate(src["L_values"]):
            if Lv in group:
                line = plotting.band(ax, src["steps"], src["train"][:, :, i], label=f"L = {Lv:g}", log=True)
                if src["test"] is not None:
                    plotting.band(ax, src["steps"], src["test"][:, :, i], log=True, color=line.get_color(), ls="--")
        plotting.label(ax, xlabel, r"loss $\frac{1}{2} E(\hat{y}-y)^2$", f"({'a' if name == 'flat' else 'b'}) {name}, {src['title']}")
        ax.legend(fontsize=9)
    for ax, Lv, panel, src in ((axes[1, 0], Ls_attn[0], "c", panels[0]), (axes[1, 1], Ls_attn[1], "d", panels[1])):
        i = list(src["L_values"]).index(Lv)
        m = src["maps"]
        plotting.band(ax, src["steps"], m[:, :, i, 0, 0], label=r"$\mathrm{Attn}_1$ (own feature)", color="k")
        for k in range(1, m.shape[-1]):
            plotting.band(ax, src["steps"], m[:, :, i, 0, k], label=rf"$\mathrm{{Attn}}_{{{k + 1},1}}$")
        ax.set_ylim(0, 1.02)
        plotting.label(ax, xlabel, "attention of queries $v_1$", f"({panel}) L = {Lv:g}")
    fig.legend(*axes[1, 0].get_legend_handles_labels(), loc="outside lower center", ncols=4)
    return fig


# ============================================================================ Figs. 2-3
def attention_maps_figure(maps_t, labels, ncols: int = 3):
    """Heat maps of K x K attention maps (given [query, key], drawn as key i = row, query j = column,
    the paper's App. A convention), ``ncols`` to a row so the cell values stay legible."""
    n = len(maps_t)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7.5, 2.5 * nrows), squeeze=False, layout="constrained")
    K = maps_t[0].shape[0]
    for ax, m, lab in zip(axes.flat, maps_t, labels):
        plotting.heatmap(ax, m.T, fmt="{:.2f}", colorbar=False, row_labels=_feature_labels(K), col_labels=_feature_labels(K))
        for t in ax.texts:
            t.set_fontsize(10)
        ax.set_title(lab, fontsize=10)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig


def block_maps_slider(block, L_pair=(0.1, 1.0), n_frames: int = 6):
    """Kernel-free slider over the block's attention maps of two L values (seed 0)."""
    ep_list = [float(e) for e in block.epochs]
    Ls = list(block.config.L_values)
    K = block.maps.shape[-1]

    frame_idx = sorted(set(int(torch.argmin((block.epochs - e).abs()))
                           for e in np.linspace(0, block.config.epochs, n_frames)))
    index_of = {ep_list[j]: j for j in frame_idx}

    def draw(epoch):
        j = index_of[epoch]
        fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.1), layout="constrained")
        for ax, Lv in zip(axes, L_pair):
            i = Ls.index(Lv)
            plotting.heatmap(ax, block.maps[j, i, 0].T, colorbar=False, row_labels=_feature_labels(K),
                             col_labels=_feature_labels(K))
            ax.set_title(f"L = {Lv:g}, epoch {epoch:.0f}")
        return fig

    return widgets.static_slider(draw, [ep_list[j] for j in frame_idx], name="epoch", fmt="{:.0f}", dpi=110,
                                 alt=f"two {K} by {K} heat maps of the block's attention (key feature against query "
                                     f"feature) at L = {L_pair[0]:g} and L = {L_pair[1]:g}; the diagonal brightens "
                                     "as training goes on, faster at the larger L")


# ============================================================================ Lemma 1 (C3)
def lemma1_figure(theory, snap):
    """Per-prompt squared error against the attention gap along training, every L (seed 0)."""
    fig, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    vmax = float(torch.cdist(theory.V, theory.V).max())
    for i, Lv in enumerate(theory.config.L_values):
        err, gap, _ = th.lemma1_terms(theory.q[0, snap, i], theory.prompts[0], Lv)
        ax.loglog((gap**2).flatten()[::7], (err / Lv**2).flatten()[::7], ".", ms=2, alpha=0.4, label=f"L = {Lv:g}")
    xx = torch.logspace(-8, 0, 20)
    ax.loglog(xx, xx * vmax**2, "k--", lw=1, label=r"$\max\|v_n-v_k\|^2(1-\mathrm{Attn}_k)^2$")
    plotting.label(ax, r"$(1-\mathrm{Attn}_k)^2$ (per prompt, along training)", r"$(\hat{y} - f(v_k))^2 / L^2$",
                   "Lemma 1: squared error against the attention gap")
    ax.legend(fontsize=9, markerscale=4, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return fig


# ============================================================================ sweeps (C6, C7, C13)
def sweep_figure(sweep, s):
    """T^1 against L and eta, against K, against Delta. ``s``: the slopes computed by the chapter."""
    cfg = sweep.config
    Lg = torch.tensor(cfg.L_grid)
    Kg = torch.tensor(cfg.K_grid, dtype=F64)
    Dg = torch.tensor(cfg.delta_grid, dtype=F64)
    fig, axs = plt.subplots(2, 2, figsize=(7.5, 7.4), layout="constrained")
    axes = [axs[0, 0], axs[0, 1], axs[1, 0]]
    axs[1, 1].axis("off")  # holds (c)'s legend
    for j, e in enumerate(cfg.eta_grid):
        axes[0].loglog(Lg, sweep.T1_L_eta[j], "o-", label=rf"$\eta$ = {e:g} (slope {s['L'][j]:.2f})")
    axes[0].loglog(Lg, sweep.T1_L_eta[0, 0] * (Lg / Lg[0]) ** -2, "k:", lw=1, label=r"$\propto L^{-2}$")
    plotting.label(axes[0], "Lipschitz constant L", "Phase-I duration $T^1$ (steps)", "(a) against L and η")
    plotting.legend_below(axes[0])
    axes[1].loglog(Kg, sweep.T1_K, "o-", label=f"measured (slope {s['K']:.2f})")
    ref = (Kg - 1) * Kg.log()
    axes[1].loglog(Kg, sweep.T1_K[0] * ref / ref[0], "k--", lw=1, label=f"(K-1) log K (slope {s['Kref']:.2f})")
    axes[1].loglog(Kg, sweep.T1_K[0] * (Kg * Kg.log()) / (Kg[0] * Kg[0].log()), "k:",
                   label=f"paper K log K (slope {s['KlogK']:.2f})")
    axes[1].set_xticks(cfg.K_grid, [str(k) for k in cfg.K_grid], minor=False)
    plotting.label(axes[1], "number of features K", "$T^1$ (steps)", f"(b) against K\n(L = {cfg.L_ref:g}, η = {cfg.eta_ref:g})")
    plotting.legend_below(axes[1])
    axes[2].loglog(Dg, sweep.T1_delta, "o-", label=rf"step $\eta\propto\|v\|^{{-4}}$ (slope {s['D']:.2f})")
    axes[2].loglog(Dg, sweep.T1_delta * sweep.eta_delta / cfg.eta_ref, "s--",
                   label=f"fixed η: η T¹/η_ref (slope {s['D_raw']:.2f})")
    axes[2].loglog(Dg, sweep.T1_delta[0] * (Dg / Dg[0]) ** -2, "k:", lw=1, label=r"paper $\propto\Delta^{-2}$")
    plotting.label(axes[2], r"feature separation $\Delta$", "$T^1$", "(c) against Δ")
    axs[1, 1].legend(*axes[2].get_legend_handles_labels(), fontsize=9, loc="center left", title="(c)",
                     title_fontsize=9)
    axes[2].set_xticks(cfg.delta_grid, [f"{d:g}" for d in cfg.delta_grid])
    for ax in axes[1:]:  # the grid's values as ticks: log-scale minor labels collide on short axes
        ax.xaxis.set_minor_formatter(NullFormatter())
    return fig


def collapse_figure(sweep):
    """Raw loss curves at the smallest eta, and loss / L^2 against eta L^2 t for every (L, eta) run."""
    cfg = sweep.config
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.1), layout="constrained")
    for (Lv, e), (x, y) in sweep.collapse.items():
        if e == cfg.eta_grid[0]:
            axes[0].loglog(torch.arange(len(y)) + 1, y * Lv**2, label=f"L = {Lv:g}")
        axes[1].loglog(x.clamp_min(1e-3), y, lw=1, alpha=0.8, color=plotting.COLORS[list(cfg.L_grid).index(Lv) % 8])
    plotting.label(axes[0], "GD step t + 1", r"loss $\mathcal{L}$", rf"raw curves ($\eta$ = {cfg.eta_grid[0]:g})")
    axes[0].legend(fontsize=9)
    axes[1].set_xlim(1e-2, None)
    plotting.label(axes[1], r"rescaled time $\eta L^2 t$", r"$\mathcal{L}/L^2$",
                   f"all {len(sweep.collapse)} (L, η) runs")
    return fig


# ============================================================================ late phase (R2, C8, C9)
def late_figure(late):
    cfg = late.config
    eps = torch.tensor(cfg.eps_grid, dtype=F64)
    t_axis = torch.arange(cfg.steps + 1, dtype=F64)
    fig, axs = plt.subplots(2, 2, figsize=(7.5, 7.0), layout="constrained")
    axes = [axs[0, 0], axs[0, 1], axs[1, 0]]
    axs[1, 1].axis("off")  # holds (c)'s legend
    for i, Lv in enumerate(cfg.L_values):
        axes[0].loglog(t_axis[1:], late.loss[1:, i], label=f"L = {Lv:g}")
        axes[1].loglog(t_axis[1:], 1 - late.own[1:, i], label=f"L = {Lv:g}")
    axes[0].loglog(t_axis[10:], th.late_phase_loss(t_axis[10:], cfg.lr, late.s4, cfg.K), "k--", lw=1,
                   label=r"$(K-1)/(4\eta s^4 t)$")
    plotting.label(axes[0], "GD step t", r"loss $\mathcal{L}$", "(a) loss")
    plotting.legend_below(axes[0], ncols=2)
    plotting.label(axes[1], "GD step t", r"$1-\mathrm{Attn}_k$", "(b) attention gap")
    plotting.legend_below(axes[1], ncols=3)
    for i, Lv in enumerate(cfg.L_values):
        axes[2].loglog(1 / eps, late.T_eps_attn[:, i], "o-", label=f"L = {Lv:g}")
    Tref = late.T_eps_attn[:, 1]
    e0 = int(torch.isfinite(Tref).nonzero()[0])
    axes[2].loglog(1 / eps, Tref[e0] * (eps[e0] / eps) ** 2, "k:", label=r"$\propto\epsilon^{-2}$ (D10)")
    axes[2].loglog(1 / eps, Tref[e0] * torch.log(cfg.K / eps) / math.log(cfg.K / eps[e0]), "k--", lw=1,
                   label=r"$\propto\log(K/\epsilon)$ (Thm 1)")
    axes[2].loglog(1 / eps, Tref[e0] * (eps[e0] / eps) * torch.log(cfg.K / eps) / math.log(cfg.K / eps[e0]), "k-.", lw=1,
                   label=r"$\propto\epsilon^{-1}\log(K/\epsilon)$ (Thm 2)")
    plotting.label(axes[2], r"$1/\epsilon$", r"first t with $1-\mathrm{Attn}\leq\epsilon$", "(c) time to accuracy ε")
    axs[1, 1].legend(*axes[2].get_legend_handles_labels(), fontsize=9, loc="center left", title="(c)",
                     title_fontsize=9)
    axes[2].set_xticks((1 / eps).tolist(), [f"{float(v):.3g}" for v in 1 / eps])
    axes[2].xaxis.set_minor_formatter(NullFormatter())
    return fig


def delta_figure(dres):
    """T^1, T* and the Phase-II rate against the context length N (delta = sqrt(20K/N))."""
    cfg = dres.config
    N = torch.tensor(cfg.N_grid, dtype=F64)
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.1), layout="constrained")
    for j, Lv in enumerate(cfg.L_values):
        line, = axes[0].loglog(N, dres.T_star[:, j], "o-", label=f"$T^*$, L = {Lv:g}")
        axes[0].loglog(N, dres.T1[:, j], "s--", color=line.get_color(), label=f"$T^1$, L = {Lv:g}")
        axes[0].loglog(N, dres.T_star[0, j] * N / N[0], ":", color=line.get_color(), lw=1)
        axes[1].loglog(N, dres.rate2[:, j], "o-", color=line.get_color(), label=f"L = {Lv:g}")
        axes[1].loglog(N, dres.rate2[0, j] * N[0] / N, ":", color=line.get_color(), lw=1)
    plotting.label(axes[0], "context length N", "GD steps", "durations (dotted: the paper's ∝ N)")
    plotting.label(axes[1], "context length N", r"Phase-II growth of $q_k$ per $\eta$", "rate (dotted: the paper's ∝ 1/N)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4, fontsize=9)
    return fig


def nonuniform_figure(nu):
    """Own-feature attention per query feature under non-uniform frequencies."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.1), layout="constrained")
    p = torch.tensor(nu.config.p, dtype=F64)
    for k in range(nu.own_k.shape[1]):
        axes[0].plot(nu.steps, nu.own_k[:, k], label=f"$v_{k + 1}$, $p_{k + 1}$ = {float(p[k]):g}")
    axes[0].axhline(nu.config.level, color="grey", lw=0.8, ls=":")
    plotting.label(axes[0], "GD step t", r"own attention $\mathrm{Attn}_k$", None)
    axes[0].legend(fontsize=9)
    axes[1].loglog(p, nu.T_level, "o-", label="measured")
    axes[1].loglog(p, nu.T_level[0] * p[0] / p, "k:", label=r"$\propto 1/p_k$")
    plotting.label(axes[1], "feature frequency $p_k$", rf"first t with $\mathrm{{Attn}}_k\geq{nu.config.level:g}$", None)
    axes[1].legend(fontsize=9)
    return fig


# ============================================================================ Prop. 1 (C11)
def generalization_figure(gen, V):
    fig, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
    for fam in gen.families:
        ax.loglog(gen.own_gap[fam], gen.err[fam], "o-", ms=3, label=fam)
    xx = torch.logspace(-7, 0, 20)
    ax.loglog(xx, xx * (gen.config.L * float(torch.cdist(V, V).max())) ** 2, "k--", lw=1,
              label=r"$L^2\max\|v_n-v_k\|^2(1-\mathrm{Attn}_k)^2$")
    plotting.label(ax, r"mean $(1-\mathrm{Attn}_k)^2$ (moments of training)", r"mean $(\hat{y} - f(v_k))^2$",
                   None)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return fig


# ============================================================================ Fig. 4
def fig4(panels):
    """Fig. 4: one row per model. ``panels``: list of (result, model name, x label, baseline name,
    baseline attribute) with a :class:`~icl_lab.papers.nonlinear.experiments_block.BlockResult`."""
    fig, axes = plt.subplots(len(panels), 2, figsize=(7.5, 3.3 * len(panels)), squeeze=False, layout="constrained")
    for row, (res, model, xlabel, base_name, base_attr) in zip(axes, panels):
        for ax, group, name in ((row[0], FLAT, "(a) flat L-set"), (row[1], SHARP, "(b) sharp L-set")):
            for i, Lv in enumerate(res.config.L_values):
                if Lv in group:
                    line = plotting.band(ax, res.epochs, res.train_loss[:, i].T, label=f"L = {Lv:g}", log=True)
                    plotting.band(ax, res.epochs, res.test_loss[:, i].T, log=True, color=line.get_color(), ls="--")
                    ax.axhline(float(getattr(res, base_attr)[i].mean()), color=line.get_color(), lw=0.8, ls=":")
            plotting.label(ax, xlabel, r"loss $\frac{1}{2} E(\hat{y}-y)^2$", f"{name[:3]} {model}")
            ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, borderaxespad=0)
    return fig


def captioned(fig, caption: str, alt: str):
    """A figure with a caption computed at run time (e.g. a reference record's provenance), as an
    HTML ``<figure>``; the figure is closed."""
    import html

    from IPython.display import HTML


    png = _png(fig)
    plt.close(fig)
    return HTML(f'<figure style="margin:0"><img src="data:image/png;base64,{png}" alt="{html.escape(alt)}" '
                f'style="max-width:100%"><figcaption class="mathjax_process">{markdown_inline(caption)}</figcaption></figure>')


# ============================================================================ explorers
def theory_slider(theory, t_map: int = 25):
    """Kernel-free slider over the six L of the theory model: loss, attention map at t_map, collapse."""
    cfg = theory.config
    t_map = min(t_map, cfg.steps)

    def draw(Lv):
        i = list(cfg.L_values).index(Lv)
        fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.9), layout="constrained")
        x = torch.arange(cfg.steps + 1)
        for j, L2 in enumerate(cfg.L_values):
            axes[0].semilogy(x, theory.loss[0, :, j], color="C0" if j == i else "0.8", lw=2 if j == i else 1)
            axes[2].loglog(x[1:] * cfg.lr * L2**2, theory.loss[0, 1:, j] / L2**2, color="C1" if j == i else "0.8",
                           lw=2 if j == i else 1)
        plotting.label(axes[0], "GD step t", "loss", f"L = {Lv:g}")
        plotting.heatmap(axes[1], theory.maps[0, t_map, i].T, colorbar=False, row_labels=_feature_labels(cfg.K),
                         col_labels=_feature_labels(cfg.K))
        axes[1].set_title(f"map at t = {t_map}")
        plotting.label(axes[2], r"$\eta L^2 t$", r"$\mathcal{L}/L^2$", "collapse")
        return fig

    return widgets.static_slider(draw, list(cfg.L_values), name="$L$", fmt="{:g}", dpi=110,
                                 alt="three panels: the loss curve of this L highlighted among the grey curves of the "
                                     f"others, its {cfg.K} by {cfg.K} attention map at step {t_map}, and its rescaled loss "
                                     "among the others': the runs with a small first step (eta L^2) share one curve, a run "
                                     "whose first step is large (the largest L) leaves it")


def explore(L=0.4, Delta=3.0, eta=10.0, K=4, geometry="orth", steps=200):
    """Live explorer: exact GD of the theory model for any (L, Delta, eta, K, geometry)."""
    V = make_features(geometry, int(K), 15, Delta)
    fp = th.FeaturePrompts.from_batch(cosine_sampler(V, 100, 0.5).sample(150, make_generator(0)))
    tr = th.feature_gd(fp, V @ V.T, steps=int(steps), lr=eta, scale=torch.tensor([L, 1.0], dtype=F64),
                       record_every=int(steps))
    ref = th.feature_gd(fp, V @ V.T, steps=int(steps), lr=eta * L**2, scale=1.0, record_every=int(steps), with_maps=False)
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.9), layout="constrained")
    t = torch.arange(int(steps) + 1)
    axes[0].semilogy(t, tr.loss[:, 0], label=f"L = {L:g}")
    axes[0].semilogy(t, tr.loss[:, 1], color="0.7", label="L = 1")
    plotting.label(axes[0], "GD step t", "loss", f"{geometry} features, Δ = {Delta:g}, K = {int(K)}")
    axes[0].legend(fontsize=9)
    plotting.heatmap(axes[1], tr.maps[-1, 0].T, colorbar=False)
    axes[1].set_title(f"attention map at t = {int(steps)} (key row, query column)")
    axes[2].loglog(t[1:] * eta * L**2, tr.loss[1:, 0] / L**2, label=f"(η, L) = ({eta:g}, {L:g})")
    axes[2].loglog(t[1:] * eta * L**2, ref.loss[1:], "k--", lw=1, label=f"(ηL², 1) = ({eta * L**2:.3g}, 1)")
    plotting.label(axes[2], r"$\eta L^2 t$", r"$\mathcal{L}/L^2$", "collapse: the two curves coincide")
    axes[2].legend(fontsize=9)
    plt.show()
    plt.close(fig)


def live_explorer():
    """The ipywidgets panel around :func:`explore` (a live kernel only)."""
    import ipywidgets

    widgets.live(explore,
                 L=ipywidgets.FloatLogSlider(value=0.4, base=10, min=-1.5, max=0.5, step=0.05),
                 Delta=ipywidgets.FloatSlider(value=3.0, min=1.0, max=4.0, step=0.5),
                 eta=ipywidgets.FloatLogSlider(value=10.0, base=10, min=-1, max=1.5, step=0.1),
                 K=ipywidgets.IntSlider(value=4, min=2, max=8),
                 geometry=ipywidgets.Dropdown(options=["orth", "random", "gaussian", "unit"], value="orth"),
                 steps=ipywidgets.IntSlider(value=200, min=50, max=1000, step=50))


def _to_runs(t: torch.Tensor) -> torch.Tensor:
    """(n_rec, nL, S, ...) -> (S, n_rec, nL, ...): a block result's records as :func:`fig1` reads them."""
    return t.permute(2, 0, 1, *range(3, t.ndim))


def block_fig1(res, title_prefix: str):
    """Fig. 1 for a run of the practical block (a :class:`~icl_lab.papers.nonlinear.experiments_block.BlockResult`)."""
    return fig1(res.epochs, _to_runs(res.train_loss), _to_runs(res.test_loss), _to_runs(res.maps), res.config.L_values,
                "epoch", title_prefix)


def block_maps_figure(res, Lv: float, epochs=(0, 25, 50, 100, 200, 400)):
    """The block's attention maps at L = ``Lv`` (seed 0) at the recorded epochs nearest to ``epochs`` (Figs. 2-3)."""
    ep_list = [float(e) for e in res.epochs]
    snap_idx = [int(torch.argmin((res.epochs - e).abs())) for e in epochs if e <= res.config.epochs]
    i = list(res.config.L_values).index(Lv)
    return attention_maps_figure([res.maps[j, i, 0] for j in snap_idx], [f"epoch {ep_list[j]:.0f}" for j in snap_idx])


def fig4_reference_text(poly_ref, poly_ref_a, poly, pcfg, ref4_cfg, scale: str) -> str:
    """What the paper-scale records of Fig. 4 say, in words, beside this scale's SGD run ``poly`` at ``pcfg`` (empty
    where no record is stored)."""
    if poly_ref is None:
        return ""
    T_ref = half_zero_times(poly_ref)
    v4_ref = poly_orderings(T_ref, pcfg)
    pairs = ", ".join(f"{pcfg.L_values[a]:g}<{pcfg.L_values[b]:g}" for idx in (
        [list(pcfg.L_values).index(L) for L in FLAT], [list(pcfg.L_values).index(L) for L in SHARP]) for a, b in zip(idx, idx[1:]))
    text = (f"The reference runs: {ref4_cfg.seeds} of the paper's {ref4_cfg.seeds} runs per $L$, {ref4_cfg.epochs} epochs, "
            f"$N = {ref4_cfg.N}$, $M = {ref4_cfg.M}$ (their record, with where and when it was computed, is listed on "
            "the reproduction page). Epochs to a training loss of half the predict-0 loss: "
            + ", ".join(f"{float(t):.0f} at $L = {Lv:g}$" for Lv, t in zip(pcfg.L_values, T_ref)) + ".\n\n")
    if scale == "paper":
        here = ""
    else:
        v4 = poly_orderings(half_zero_times(poly), pcfg)
        agree = v4_ref == v4
        clash = any({a, b} == {"yes", "no"} for a, b in zip(v4_ref, v4))  # one scale decides the opposite
        here = (f" (this page's run: {v4[0]} and {v4[1]}): " + ("the two scales agree" if agree else
                "the two scales **disagree**" if clash else
                f"the full-size run decides what this page's {pcfg.epochs} epochs leave undecided"))
    text += (f"At full size the ordering of the convergence times is **{v4_ref[0]}** within the flat set and "
             f"**{v4_ref[1]}** within the sharp set" + here + ". The larger $L$ reaches the level first in " + "; ".join(
                 f"{round(e.value * e.n)} of {e.n} runs for $L$ = {pr}" for pr, e in zip(pairs.split(", "), larger_first(poly_ref, pcfg)))
             + " (runs paired by seed).")
    if poly_ref_a is not None:
        text += ("\n\nUnder Adam the epochs to the same level are " + ", ".join(
            f"{float(t):.0f} at $L = {Lv:g}$" for Lv, t in zip(pcfg.L_values, half_zero_times(poly_ref_a)))
            + ", and the larger $L$ reaches it first in "
            + "; ".join(f"{round(e.value * e.n)} of {e.n} runs for $L$ = {pr}"
                        for pr, e in zip(pairs.split(", "), larger_first(poly_ref_a, pcfg)))
            + ". The ledger decides on both records: where the optimizers disagree, the paper's silence about which it used "
              "leaves the figure undecided.")
    return text
