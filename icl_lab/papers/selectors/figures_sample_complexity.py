"""Figures of Part II of the selectors chapter (sample complexity, Theorem 1): iterations against
alpha, the noise, lambda_*, eta and M; accuracy against the prompt length; the task sets of Lemma 1;
and the frames of the kernel-free alpha slider."""
from __future__ import annotations

import math

import numpy as np

from ... import plotting
from .theory import EPS_M, oracle_accuracy


def draw_alpha_sweep(a_sweep, acfg, A: float, Cfit: float):
    """Left: held-out accuracy during training per alpha (mean +- std over seeds); right: iterations
    to ``acfg.hit_acc`` against 1/alpha per seed, their median and the fit A/(C - 1/alpha) of eq. (6)."""
    fig, axes = plotting.figure(2, height=4.4)
    steps = np.asarray(a_sweep.res.steps)
    for i, a in enumerate(acfg.alphas):
        plotting.band(axes[0], steps, a_sweep.res.grid(a_sweep.res.curves["acc"].T)[i], label=f"$\\alpha$ = {a}", color=plotting.COLORS[i])
    axes[0].axhline(acfg.hit_acc, color="k", lw=0.8, ls=":")
    plotting.label(axes[0], "SGD iteration t", "held-out accuracy", "learning curves")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2, fontsize=9)
    h = a_sweep.res.hits().numpy()
    for i in range(len(a_sweep.values)):
        axes[1].scatter(np.full(h.shape[1], 1 / a_sweep.values[i]), h[i], color=plotting.COLORS[i], alpha=0.7)
    axes[1].plot(1 / a_sweep.values, a_sweep.median, "ko-", label="median over seeds")
    if np.isfinite(Cfit):
        xs = np.linspace((1 / a_sweep.values).min(), (1 / a_sweep.values).max(), 50)
        axes[1].plot(xs, A / (Cfit - xs), "k--", lw=1, label=f"fit $A/(C - 1/\\alpha)$, $C$ = {Cfit:.2f}")
    plotting.label(axes[1], r"$1/\alpha$", r"$T_\mathrm{hit}$ (iterations to 95%)", r"Thm 1: iterations vs $\alpha$")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=9)
    return fig


def draw_noise_sweep(n_sweep, ncfg, n_acc):
    """Median iterations to the hit level (left axis) and final accuracy ``n_acc`` (right axis)
    against the norm of the noise inside span{mu}, with the tau = beta / M1 mark and Theorem 1's noise condition
    tau M1 < 1 - eps_m shaded."""
    fig, ax = plotting.figure(1, height=4.0)
    ax2 = ax.twinx()
    ax.plot(n_sweep.values / ncfg.beta, np.where(np.isfinite(n_sweep.median), n_sweep.median, np.nan), "o-", color=plotting.COLORS[0], label=r"median $T_\mathrm{hit}$")
    ax2.plot(n_sweep.values / ncfg.beta, n_acc, "s--", color=plotting.COLORS[1], label="final accuracy")
    ax.axvline(1 / ncfg.M1, color="k", lw=0.8, ls=":", label=r"$\tau/\beta = 1/M_1$")
    ax.axvspan(0, (1 - EPS_M) / ncfg.M1 / ncfg.beta, color="0.85", label=r"Theorem 1: $\tau M_1 < 1-\epsilon_m$")
    plotting.label(ax, r"noise norm $\tau/\beta$ (inside span$\{\mu\}$)", r"$T_\mathrm{hit}$", "Iterations and accuracy against noise")
    ax2.set_ylabel("final held-out accuracy")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, fontsize=9)
    return fig


def draw_rates(l_sweep, e_sweep, m_sweep):
    """Iterations to the hit level per seed and their median against 1/lambda_*, 1/eta and M, with the
    slopes of eq. (6) (dashed) and twice them (dotted)."""
    fig, axes = plotting.figure(3, height=3.0)
    for ax, x, res, med, name, ref in ((axes[0], 1 / l_sweep.values, l_sweep.res, l_sweep.median, r"$1/\lambda_*$", 1.0),
                                       (axes[1], 1 / e_sweep.values, e_sweep.res, e_sweep.median, r"$1/\eta$", 1.0),
                                       (axes[2], m_sweep.values, m_sweep.res, m_sweep.median, r"$M = M_1 + M_2$", 0.5)):
        hh = res.hits().numpy()
        for i in range(len(x)):
            ax.scatter(np.full(hh.shape[1], x[i]), hh[i], color=plotting.COLORS[0], alpha=0.6)
        ax.plot(x, np.where(np.isfinite(med), med, np.nan), "ko-", label="median over seeds")
        fin_ = np.isfinite(med)
        if fin_.any():
            x0, y0 = x[fin_][0], med[fin_][0]
            xs = np.linspace(x.min(), x.max(), 20)
            ax.plot(xs, y0 * (xs / x0) ** ref, "k--", lw=1, label="the slope of eq. (6) (1, 1 and 0.5)")
            ax.plot(xs, y0 * (xs / x0) ** (2 * ref), ":", color="gray", lw=1, label="twice that slope")
        plotting.log_ticks(ax, x, "x")
        plotting.log_ticks(ax, None, "y")
        plotting.label(ax, name, r"$T_\mathrm{hit}$", f"against {name}")
    plotting.legend_outside(fig, "below", ncols=3, fontsize=9)
    return fig


def draw_prompt_length(pres, pcfg):
    """Final accuracy against the training prompt length per alpha (mean +- std over seeds), the exact
    oracle (dashed) and eq. (5)'s 2 ln M / alpha (dotted)."""
    Ls = np.asarray(pcfg.lengths)
    fig, ax = plotting.figure(1, height=3.8)
    for i, a in enumerate(pcfg.alphas):
        plotting.band(ax, Ls, pres.acc[:, i, :].T, label=f"trained, $\\alpha$ = {a}", color=plotting.COLORS[i], marker="o")
        ax.plot(Ls, pres.oracle[:, i], "--", color=plotting.COLORS[i], lw=1)
        ax.axvline(2 * math.log(pcfg.M) / a, color=plotting.COLORS[i], ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    plotting.label(ax, r"training prompt length $l_{tr}$", "final held-out accuracy", r"Eq. (5): the prompt length needed shrinks with $\alpha$")
    plotting.legend_outside(ax, fontsize=9)
    return fig


def draw_task_sets(tres):
    """Median accuracy on the training tasks and on all ordered pairs per task set, with the accuracy
    of the shortcut 'query pattern -> label' on the training tasks (Lemma 1)."""
    fig, ax = plotting.figure(1, height=4.2)
    xs = np.arange(len(tres.train.labels))
    ax.bar(xs - 0.2, tres.train_acc.median(1).values, width=0.4, label="accuracy on the training tasks")
    ax.bar(xs + 0.2, tres.all_pairs_acc.median(1).values, width=0.4, label="accuracy on all ordered pairs")
    ax.scatter(xs - 0.2, tres.shortcut_acc, color="k", marker="_", s=300, label="shortcut 'pattern -> label' on training tasks", zorder=3)
    ax.set_xticks(xs, [f"{n}\n({'balanced' if b else 'not balanced'})" for n, b in zip(tres.train.labels, tres.balanced)], fontsize=9)
    ax.set_ylim(0.4, 1.02)
    plotting.label(ax, "training task set", "median held-out accuracy", "Lemma 1: tasks must cover every pattern evenly")
    plotting.legend_outside(ax, "below", ncols=2, fontsize=9)
    return fig


def draw_alpha_seeds(a_sweep, acfg, alpha: float):
    """Held-out accuracy and attention mass on N_* of every seed during training at one alpha of the
    sweep, with the oracle accuracy: a frame of the kernel-free alpha slider."""
    i = list(acfg.alphas).index(alpha)
    steps = np.asarray(a_sweep.res.steps)
    fig, ax = plotting.figure(1, height=3.4)
    acc_i = a_sweep.res.grid(a_sweep.res.curves["acc"].T)[i]
    mass_i = a_sweep.res.grid(a_sweep.res.curves["mass"].T)[i]
    for s in range(acc_i.shape[0]):
        ax.plot(steps, acc_i[s], color=plotting.COLORS[0], lw=1.2, label="accuracy" if s == 0 else None)
        ax.plot(steps, mass_i[s], color=plotting.COLORS[1], lw=1.2, ls="--", label=r"mass on $\mathcal{N}_*$" if s == 0 else None)
    ax.axhline(float(oracle_accuracy(acfg.alphas[i], acfg.l)), color="k", lw=0.8, ls=":", label="oracle accuracy")
    ax.set_ylim(0, 1.02)
    plotting.label(ax, "SGD iteration t", "held-out value", f"$\\alpha$ = {alpha:g}, training prompt length {acfg.l} (every seed)")
    plotting.legend_outside(ax, fontsize=9)
    return fig
