"""The template chapter's figure: training curves against the loss of the model they start from."""
from __future__ import annotations

import torch

from ... import plotting


def draw_training(summary: dict, cfg):
    """Training loss on fresh prompts per GD step (mean +- std over seeds, log scale) and the expected
    loss of the context average, ``Q = 0`` (:func:`..theory.average_loss`); from the experiment's summary."""
    curves = torch.tensor(summary["curves"])  # (seeds, steps)
    fig, ax = plotting.figure(height=3.2)
    plotting.band(ax, torch.arange(curves.shape[1]), curves, label="trained attention (mean ± std)", log=True)
    ax.axhline(summary["average_theory"], color="k", ls="--", lw=1, label=r"context average, $Q = 0$ (theory)")
    plotting.label(ax, "GD step t", r"loss $\frac12 E(\hat y - y_q)^2$", f"$N = {cfg.N}$, $K = {cfg.K}$")
    plotting.legend_outside(ax)
    return fig
