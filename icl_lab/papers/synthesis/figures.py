"""Figures of the synthesis chapter: one cosine law's own-feature attention against the linear task's
(the frames of the kernel-free slider), and the count of the ledger's claims of one kind."""
from __future__ import annotations

from ... import plotting


def draw_law(res, cfg, i: int, level: float):
    """Own-feature attention during GD for the law ``res.laws[i]`` (colour) against the linear task
    (black), mean +- std over seeds, with the target ``level`` (grey)."""
    import torch

    steps = torch.as_tensor(res.steps)
    lin = res.laws.index("linear")
    fig, ax = plotting.figure(1, height=3.0, width=6.0)
    plotting.band(ax, steps, res.own_attention[:, lin, :].T, label="linear task", color="black")
    plotting.band(ax, steps, res.own_attention[:, i, :].T, label=res.laws[i], color=plotting.COLORS[1])
    ax.axhline(level, color="gray", lw=0.8)
    ax.set_ylim(1 / cfg.K - 0.05, 1.0)
    plotting.label(ax, "GD step t", "own-feature attention",
                   f"C = {float(res.contrast[i]):.3g} (linear task: {float(res.contrast[lin]):.2f})")
    ax.legend(fontsize=9, loc="lower right")
    return fig


def status_total(table, kind: str) -> str:
    """"n (a passed, b failed, ...)": the number of claims of ``kind`` in a claims table, by status."""
    c = table.counts(None, kind)
    return f"{sum(c.values())} ({', '.join(f'{n} {s}' for s, n in c.items() if n)})"
