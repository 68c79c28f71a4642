"""Figures of the common-setup chapter: the training curves and the learned S of the context-length
experiment, the window that M = cI opens on the circle, and the attention of one query under Q = alpha I
(the frames of the chapter's slider, and its live twin)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import torch

from ... import metrics, plotting
from ...data import standard_basis
from ...models import QOnlyAttention


def draw_training(res, cfg):
    """Left: training loss on fresh prompts per context length N (exponential moving average, mean +- std
    over seeds); right: the learned S = V^T Q V at the longest context (seed 0)."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for N, curve in zip(res.N, res.train_curves):
        plotting.band(axes[0], torch.arange(curve.shape[0]), metrics.ema(curve, rate=0.1).T, label=f"N = {N}", log=True)
    plotting.label(axes[0], "GD step t", "training loss (fresh prompts)", "Training curves")
    axes[0].legend(fontsize=9)
    S = metrics.feature_space_weights(res.models[-1].Q.detach()[0], standard_basis(cfg.K, cfg.d))
    plotting.heatmap(axes[1], S, vmin=float(S.min()), vmax=float(S.max()), fmt="{:.1f}",
                     row_labels=[f"key $v_{n+1}$" for n in range(cfg.K)], col_labels=[f"query $v_{k+1}$" for k in range(cfg.K)])
    axes[1].set_title(rf"$S = V^\top Q V$ after training ($N = {res.N[-1]}$)")
    return fig


def draw_attention(demo, alpha: float):
    """The attention weights of the query of the one-prompt batch ``demo`` over its demonstrations,
    coloured by feature, for the Q-only model with Q = alpha I (d x d, d the prompt's dimension), with
    the mass on the query's feature, the prediction and the target."""
    model = QOnlyAttention(demo.x.shape[-1], runs=1, init=float(alpha)).to(dtype=torch.float64)
    with torch.no_grad():
        out = model(demo)
    a = out.attn[0, 0, 0].numpy()
    ids = demo.ids[0].tolist()
    qk = int(demo.query_ids[0, 0])
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    ax.bar(range(len(a)), a, color=[plotting.COLORS[i] for i in ids])
    ax.set_ylim(0, 1)
    mass = a[[i for i, k in enumerate(ids) if k == qk]].sum()
    plotting.label(ax, "demonstration i (colour = feature)", "attention $a_i$",
                   rf"$Q = {alpha:.1f}\,I$: query feature $v_{qk + 1}$, mass on it $= {mass:.2f}$, "
                   rf"$\hat y = {float(out.pred[0, 0, 0]):.2f}$, target $= {float(demo.y_query[0, 0]):.2f}$")
    fig.tight_layout()
    return fig


def draw_window(theta: torch.Tensor, weights: dict):
    """The weight a query gives each demonstration at angle ``theta`` to it, normalised by the largest,
    one curve per ``c``: ``weights[activation, c]`` (activation ``"softmax"`` or ``"linear"``), one panel
    per activation."""
    acts = list(dict.fromkeys(a for a, _ in weights))
    fig, axes = plt.subplots(1, len(acts), figsize=(8, 3.2), sharey=True, squeeze=False)
    for ax, act in zip(axes[0], acts):
        for (a, c), w in weights.items():
            if a == act:
                ax.plot(theta, w / w.abs().max(), label=f"c = {c:g}")
        plotting.label(ax, r"angle $\theta$ to the query (rad)", "weight / max weight" if ax is axes[0, 0] else "",
                       f"{act} attention, $M = cI$")
    axes[0, 0].legend(fontsize=9)
    return fig


def live_attention(demo):
    """The callback of the chapter's live slider over ``demo``: ``callback(alpha)`` draws
    :func:`draw_attention` for ``Q = alpha I`` and shows it (``ipywidgets.interact`` reads its one
    argument, ``alpha``)."""

    def show(alpha: float = 1.0) -> None:
        fig = draw_attention(demo, alpha)
        plt.show()
        plt.close(fig)

    return show
