"""Figures and live widgets of the selectors chapter: Fig. 1 (a)-(b) with the accuracy and the
attention mass of one training (:func:`plot_mechanism`), and the live retraining widget."""
from __future__ import annotations

import numpy as np

from .data import task_set
from .setting import SelectorsConfig
from .training import Group, TrainResult, train_groups


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
    import matplotlib.pyplot as plt

    from ... import plotting

    st = np.asarray(res.steps)

    def c(name):
        return res.grid(res.curves[name].T)[group]

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
    for key, lab, col in (("WQ_mu", r"$\|W_Q\mu\|$", 0), ("WK_mu", r"$\|W_K\mu\|$", 1),
                          ("WQ_nu", r"$\|W_Q\nu\|$", 2), ("WK_nu", r"$\|W_K\nu\|$", 3)):
        plotting.band(axes[0], st, c(key), label=lab, color=plotting.COLORS[col])
    plotting.label(axes[0], "iteration t", "mean norm", "(a) relevant vs irrelevant")
    axes[0].legend(fontsize=7)
    plotting.band(axes[1], st, c("feat_in"), label="feature embeddings", color=plotting.COLORS[0])
    plotting.band(axes[1], st, c("lab_in"), label="label embeddings", color=plotting.COLORS[1])
    plotting.label(axes[1], "iteration t", "mean |contribution| to h", "(b) MLP input before ReLU")
    axes[1].legend(fontsize=7)
    plotting.band(axes[2], st, c("acc"), label="test accuracy", color=plotting.COLORS[2])
    plotting.band(axes[2], st, c("mass"), label=r"attention on $\mathcal{N}_*$", color=plotting.COLORS[4])
    axes[2].set_ylim(0, 1.02)
    plotting.label(axes[2], "iteration t", "held-out value", title or "accuracy and attention")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return fig



def live_mechanism() -> None:
    """Live controls (ipywidgets) for alpha, tau, lambda*, l_tr, the task set and the number of steps:
    each change retrains with :func:`quick_train` and redraws :func:`plot_mechanism` (both notebooks
    of the chapter show it; the static book hides it and uses kernel-free sliders instead)."""
    import ipywidgets
    import matplotlib.pyplot as plt

    from ... import widgets

    def _live(alpha=0.6, tau=0.25, lambda_star=0.6, l_tr=14, task_set="all_pairs", steps=300):
        res = quick_train(alpha=alpha, tau=tau, lambda_star=lambda_star, l_tr=l_tr, task_set_name=task_set, steps=steps)
        fig = plot_mechanism(res, title=f"alpha={alpha}, tau={tau}, lambda*={lambda_star}, l={l_tr}, {task_set}")
        plt.show()
        plt.close(fig)

    widgets.live(_live, alpha=ipywidgets.FloatSlider(value=0.6, min=0.2, max=1.0, step=0.05),
                 tau=ipywidgets.FloatSlider(value=0.25, min=0.0, max=4.0, step=0.25),
                 lambda_star=ipywidgets.FloatSlider(value=0.6, min=0.2, max=1.0, step=0.1),
                 l_tr=ipywidgets.IntSlider(value=14, min=2, max=32), task_set=["all_pairs", "cyclic"],
                 steps=ipywidgets.IntSlider(value=300, min=100, max=1000, step=100))
