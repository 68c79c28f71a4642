"""Figures and live widgets of Part I of the selectors chapter (the mechanism): Fig. 1 (a)-(b) of the
seed sweep (:func:`draw_figure1`) and of one training (:func:`plot_mechanism`), the attention collapse,
the learned feature selector, the out-of-domain tests, the kernel-free condition slider and the live
retraining widget. Part II's figures are in :mod:`.figures_sample_complexity`."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from ... import plotting
from .data import task_set
from .setting import SelectorsConfig
from .theory import collapse_times, oracle_accuracy
from .training import Group, TrainResult, train_groups
from ... import widgets

# the test conditions' names (see .ood) as a reader should see them: in mathtext for the figures, in
# Unicode for the slider's value label (plain text)
_MATH = [("mu_2j-1", r"\mu_{2j-1}"), ("mu_2j", r"\mu_{2j}"), ("nu_2j-1", r"\nu_{2j-1}"), ("nu_2j", r"\nu_{2j}"),
         ("mu_1", r"\mu_1"), ("mu_2", r"\mu_2"), ("mu'", r"\mu'"), ("nu'", r"\nu'"), ("q'", "q'"),
         ("|kappa| <= 1", r"|\kappa|\leq 1"), ("/sqrt2", r"/\sqrt{2}"), ("span{mu, nu}", r"\mathrm{span}\{\mu,\nu\}"),
         ("span{mu}", r"\mathrm{span}\{\mu\}"), ("{mu}", r"\{\mu\}"), ("+-q", r"\pm q"), ("-q", "-q")]
_UNICODE = [("mu_2j-1", "μ₂ⱼ₋₁"), ("mu_2j", "μ₂ⱼ"), ("nu_2j-1", "ν₂ⱼ₋₁"), ("nu_2j", "ν₂ⱼ"), ("mu_1", "μ₁"), ("mu_2", "μ₂"),
            ("mu'", "μ′"), ("nu'", "ν′"), ("q'", "q′"), ("|kappa| <= 1", "|κ| ≤ 1"), ("/sqrt2", "/√2"),
            ("span{mu, nu}", "span{μ, ν}"), ("span{mu}", "span{μ}"), ("{mu}", "{μ}"), ("+-q", "±q"), ("nu", "ν"), ("mu", "μ")]


def condition_label(name: str, math: bool = True) -> str:
    """A test condition's name with its symbols typeset: mathtext (``math=True``, for figures) or
    Unicode (for plain-text labels such as the slider's value)."""
    if not math:
        for a, b in _UNICODE:
            name = name.replace(a, b)
        return name
    import re

    keys = sorted((a for a, _ in _MATH), key=len, reverse=True) + ["nu", "mu"]
    table = dict(_MATH) | {"nu": r"\nu", "mu": r"\mu"}
    pattern = re.compile("|".join(re.escape(k) for k in keys))
    return pattern.sub(lambda m: "$" + table[m.group(0)] + "$", name).replace("$$", "")


def quick_train(alpha: float = 0.6, tau: float = 0.25, lambda_star: float = 0.6, l_tr: int = 14,
                task_set_name: str = "all_pairs", steps: int = 300, seed: int = 0, **kw) -> TrainResult:
    """One small run (the ci-scale setting) with the mechanism logged, for the live widgets."""
    cfg = SelectorsConfig.for_scale("ci", alpha=alpha, tau=tau, lambda_min=lambda_star, l_tr=l_tr,
                                    task_set=task_set_name, steps=steps, seeds=1, seed=seed, test_prompts=300,
                                    eval_every=10, **kw)
    tasks = task_set(cfg.task_set, cfg.M1)
    return train_groups(cfg, [Group("live", alpha, cfg.sampler(tasks=tasks), cfg.eta, tasks)], mechanism=True)


def plot_mechanism(res: TrainResult, group: int = 0, title: str = ""):
    """Figure 1 (a), (b) and the accuracy / attention mass of one group of a training (mean +- std
    over its seeds); returns the figure."""

    st = np.asarray(res.steps)

    def c(name):
        return res.grid(res.curves[name].T)[group]

    fig, axes = plotting.figure(3, height=3.6)
    for key, lab, col in (("WQ_mu", r"$\|W_Q\mu\|$", 0), ("WK_mu", r"$\|W_K\mu\|$", 1),
                          ("WQ_nu", r"$\|W_Q\nu\|$", 2), ("WK_nu", r"$\|W_K\nu\|$", 3)):
        plotting.band(axes[0], st, c(key), label=lab, color=plotting.COLORS[col])
    plotting.label(axes[0], "iteration t", "mean norm", "(a) relevant vs irrelevant")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=2, fontsize=9)
    plotting.band(axes[1], st, c("feat_in"), label="feature embeddings", color=plotting.COLORS[0])
    plotting.band(axes[1], st, c("lab_in"), label="label embeddings", color=plotting.COLORS[1])
    plotting.label(axes[1], "iteration t", "mean |contribution| to h", "(b) MLP input before ReLU")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=9)
    plotting.band(axes[2], st, c("acc"), label="test accuracy", color=plotting.COLORS[2])
    plotting.band(axes[2], st, c("mass"), label=r"attention on $\mathcal{N}_*$", color=plotting.COLORS[4])
    axes[2].set_ylim(0, 1.02)
    plotting.label(axes[2], "iteration t", "held-out value", title or "accuracy and attention")
    axes[2].legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), fontsize=9)
    return fig


def live_mechanism() -> None:
    """Live controls (ipywidgets) for alpha, tau, lambda*, l_tr, the task set and the number of steps:
    each change retrains with :func:`quick_train` and redraws :func:`plot_mechanism` (both notebooks
    of the chapter show it; the static book hides it and uses kernel-free sliders instead)."""
    import ipywidgets


    def _live(alpha=0.6, tau=0.25, lambda_star=0.6, l_tr=14, task_set="all_pairs", steps=300):
        res = quick_train(alpha=alpha, tau=tau, lambda_star=lambda_star, l_tr=l_tr, task_set_name=task_set, steps=steps)
        fig = plot_mechanism(res, title=f"alpha={alpha}, tau={tau}, lambda*={lambda_star}, l={l_tr}, {task_set}")
        plt.show()
        plt.close(fig)

    widgets.live(_live, manual="Train and draw", alpha=ipywidgets.FloatSlider(value=0.6, min=0.2, max=1.0, step=0.05),
                 tau=ipywidgets.FloatSlider(value=0.25, min=0.0, max=4.0, step=0.25),
                 lambda_star=ipywidgets.FloatSlider(value=0.6, min=0.2, max=1.0, step=0.1),
                 l_tr=ipywidgets.IntSlider(value=14, min=2, max=32), task_set=["all_pairs", "cyclic"],
                 steps=ipywidgets.IntSlider(value=300, min=100, max=1000, step=100))


def draw_figure1(sweep: TrainResult, cfg, group: str = "all_pairs"):
    """Fig. 1 of the paper from the seed sweep (mean +- std over the seeds of ``group``): (a) the norms of
    W_Q, W_K along the relevant mu and the irrelevant nu, (b) the feature and label parts of the MLP input."""
    steps = np.asarray(sweep.steps)

    def curves(name):
        return sweep.group_curves(name, group)

    fig, axes = plotting.figure(2, height=4.6)
    for key, lab, col in (("WQ_mu", r"$\|W_Q\mu_j\|$", 0), ("WK_mu", r"$\|W_K\mu_j\|$", 1),
                          ("WQ_nu", r"$\|W_Q\nu_l\|$", 2), ("WK_nu", r"$\|W_K\nu_l\|$", 3)):
        plotting.band(axes[0], steps, curves(key), label=lab, color=plotting.COLORS[col])
    axes[0].axhline(cfg.delta * cfg.beta, color="k", lw=0.8, ls=":", label=r"$\delta\beta$ (initial)")
    plotting.label(axes[0], "SGD iteration t", "mean norm along a pattern",
                   "(a) relevant vs irrelevant patterns")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2, fontsize=9)
    plotting.band(axes[1], steps, curves("feat_in"), label=r"features $|W_OW_V[:,x]\bar x|$", color=plotting.COLORS[0])
    plotting.band(axes[1], steps, curves("lab_in"), label=r"labels $|W_OW_V[:,y]\bar y|$", color=plotting.COLORS[1])
    plotting.band(axes[1], steps, curves("feat_lit"), label="sa, coordinates $1{:}d_\\mathcal{X}$ (eq. 10)", color=plotting.COLORS[0], ls="--")
    plotting.band(axes[1], steps, curves("lab_lit"), label="sa, label coordinates (eq. 10)", color=plotting.COLORS[1], ls="--")
    plotting.label(axes[1], "SGD iteration t", "mean |contribution| to $h$ (pre-ReLU)",
                   "(b) what the MLP reads")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=1, fontsize=9)
    return fig


def draw_attention_mass(sweep: TrainResult, cfg):
    """Left: attention mass on N_* and test accuracy during training per task set, with the oracle
    ceiling; right: gamma_t = 1 - mass on a log scale (clipped at 1e-7, the float32 floor of the
    measurement), against 1/T and 1/M (Prop. 1, eq. (9))."""
    steps = np.asarray(sweep.steps)
    fig, axes = plotting.figure(2, height=4.4)
    for gname, col in (("all_pairs", 1), ("cyclic", 0)):
        gl = gname.replace("_", " ")
        plotting.band(axes[0], steps, sweep.group_curves("mass_present", gname), label=f"{gl}: mass on $\\mathcal{{N}}_*$", color=plotting.COLORS[col])
        plotting.band(axes[0], steps, sweep.group_curves("acc", gname), label=f"{gl}: test accuracy", color=plotting.COLORS[col], ls="--")
        plotting.band(axes[1], steps[1:], (1 - sweep.group_curves("mass_present", gname)[:, 1:]).clamp_min(1e-7), label=gl,
                      color=plotting.COLORS[col], log=True)
    axes[0].axhline(float(oracle_accuracy(cfg.alpha, cfg.l)), color="k", lw=0.8, ls=":", label="oracle accuracy")
    plotting.label(axes[0], "SGD iteration t", "held-out value", "attention on same-pattern demos")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=9)
    tt = steps[1:].astype(float)
    axes[1].plot(tt, 1 / tt, "k:", lw=1, label=r"$1/T$")
    axes[1].axhline(1 / cfg.M, color="gray", lw=0.8, ls="--", label="$1/M$")
    axes[1].set_xscale("log")
    axes[1].set_ylim(1e-7, 2)
    plotting.label(axes[1], "SGD iteration t", r"$\gamma_t = 1 -$ mass on $\mathcal{N}_*$", r"$\gamma_t$: plateau, collapse, tail")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=2, fontsize=9)
    return fig


def draw_selector(Sm, M1: int, n_nu: int = 6):
    """Heat map of the learned scores v_n^T W_K^T W_Q v_k between M1 relevant and ``n_nu`` irrelevant
    patterns (Lemma 4's feature selector)."""
    fig, ax = plotting.figure(1, width=6.0, height=5.0)
    names = [f"$\\mu_{j + 1}$" for j in range(M1)] + [f"$\\nu_{k + 1}$" for k in range(n_nu)]
    plotting.heatmap(ax, Sm, names, names, vmin=float(Sm.min()), vmax=float(Sm.max()), annotate=False)
    ax.set_title(r"score $v_n^\top W_K^\top W_Q v_k$ between patterns (seed 0, all pairs)")
    return fig


def draw_collapse(gam, steps, times, rec):
    """The measured gamma_t / gamma_0 per seed against time rescaled by its half-life (``times``: per
    seed t90, t50, t10), beside the recursion (46) ``rec`` rescaled the same way."""
    fig, ax = plotting.figure(1, height=3.6)
    t50_rec = collapse_times(rec)[1]
    for s, g in enumerate(gam):
        ax.plot(steps / times[s, 1], g / g[0], color=plotting.COLORS[1], alpha=0.6, lw=1, label="measured (per seed)" if s == 0 else None)
    ax.plot(np.arange(len(rec)) / t50_rec, rec / rec[0], "k-", lw=2, label="recursion (46), time rescaled")
    ax.set_xlim(0, 3)
    plotting.label(ax, r"$t / t_{50\%}$", r"$\gamma_t / \gamma_0$", "Plateau, then collapse: shape comparison")
    plotting.legend_outside(ax, fontsize=9)
    return fig


def draw_ood(ood, ocfg, seeds=None):
    """Out-of-domain accuracy (median over seeds, bars min-max) and attention mass on N_* per test
    condition, coloured by whether Theorem 2 covers it. ``seeds``: a boolean mask of the seeds drawn
    (those with the full in-domain solution, the model Theorem 2 speaks of); all when None."""
    fig, ax = plotting.figure(1, height=6.0)
    yy = np.arange(len(ood.conditions))[::-1]
    keep = torch.ones(ood.acc.shape[1], dtype=torch.bool) if seeds is None else torch.as_tensor(np.asarray(seeds, dtype=bool))
    acc, mass = ood.acc[:, keep], ood.mass[:, keep]
    acc_m = acc.median(1).values.numpy()
    mass_m = mass.median(1).values.numpy()
    cols = [plotting.COLORS[2] if c.covered else plotting.COLORS[1] for c in ood.conditions]
    ax.barh(yy + 0.2, acc_m, height=0.4, color=cols, label="accuracy (green: Thm 2 covers it; orange: it does not)")
    ax.barh(yy - 0.2, mass_m, height=0.4, color="gray", alpha=0.6, label=r"attention mass on $\mathcal{N}_*$")
    ax.errorbar(acc_m, yy + 0.2, xerr=[acc_m - acc.min(1).values.numpy(), acc.max(1).values.numpy() - acc_m],
                fmt="none", ecolor="k", lw=0.8)
    ax.set_yticks(yy, [condition_label(c.name) for c in ood.conditions], fontsize=9)
    ax.axvline(0.5, color="k", ls=":", lw=0.8)
    ax.set_xlim(0, 1.02)
    plotting.label(ax, "median over seeds (bars: min-max of accuracy)", "", f"Theorem 2 and its controls ($l_{{ts}}$ = {ocfg.l_ts}, $\\alpha'$ = {ocfg.alpha_test})")
    plotting.legend_outside(ax, "below", ncols=1, fontsize=9)
    return fig


def draw_test_length(ood, ocfg):
    """Accuracy on cone patterns against the test prompt length per alpha' (mean +- std over seeds),
    the exact oracle 1 - (1 - alpha'/2)^l / 2 (dashed) and l_ts = 2 / alpha' (dotted)."""
    fig, ax = plotting.figure(1, height=4.6)
    L = np.asarray(ood.l_grid)
    for i, ap in enumerate(ocfg.alpha_primes):
        plotting.band(ax, L, ood.grid_acc[i].T, label=f"trained model, $\\alpha'$ = {ap}", color=plotting.COLORS[i], marker="o")
        ax.plot(L, ood.oracle[i], ls="--", color=plotting.COLORS[i], label=f"oracle, $\\alpha'$ = {ap}")
        ax.axvline(2 / ap, color=plotting.COLORS[i], lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    plotting.label(ax, r"test prompt length $l_{ts}$ (dotted: $2/\alpha'$)", "accuracy on cone patterns", "Theorem 2's prompt length")
    plotting.legend_outside(ax, "below", ncols=2, fontsize=9)
    return fig


def draw_condition(example):
    """The attention of one test prompt over its demonstrations (green: in N_*), with the label, the
    prediction and the mass on N_*; ``example`` is one ``(condition, batch, output)`` of
    :func:`~.ood.condition_examples`."""
    c, b, o = example
    a = o.attn[0, 0, 0].numpy()
    in_n = (b.ids[0] == b.query_ids[0, 0]).numpy()
    fig, ax = plotting.figure(1, height=3.4)
    ax.bar(range(len(a)), a, color=[plotting.COLORS[2] if f else plotting.COLORS[7] for f in in_n])
    ax.set_ylim(0, 1)
    pred = int(np.sign(float(o.pred[0, 0, 0])))
    plotting.label(ax, "demonstration s (green: in $\\mathcal{N}_*$)", r"attention $\sigma_s$",
                   f"{condition_label(c.name)}\nlabel {int(b.y_query[0, 0]):+d}, prediction {pred:+d}, "
                   f"attention mass on $\\mathcal{{N}}_*$ {float((a * in_n).sum()):.2f}")
    ax.title.set_fontsize(10)
    return fig


def condition_drawer(examples):
    """The slider's callback over :func:`~.experiments.condition_examples`' ``examples``: the name of a test
    condition -> :func:`draw_condition` of its example prompt."""
    names = [c.name for c, _, _ in examples]

    def draw(name):
        if name not in names:
            raise ValueError(f"name must be one of the test conditions {names} (got {name!r})")
        return draw_condition(examples[names.index(name)])
    return draw


def condition_text(name) -> str:
    """A test condition's label in plain text (the slider's readout)."""
    return condition_label(name, math=False)
