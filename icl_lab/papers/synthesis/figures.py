"""Figures of the synthesis chapter: the contrast law (attention curves and halfway times against the
label contrast), one cosine law's own-feature attention against the linear task's (the frames of the
kernel-free slider), and what the page says of the ledgers (counts by status, a claim's status and the
numbers of its measured text)."""
from __future__ import annotations

import math
import re

from ... import params as chk
from ... import plotting


def halfway_level(cfg) -> float:
    """The own-feature attention halfway (``cfg.target``) from uniform, ``1/K``, to one."""
    return 1 / cfg.K + cfg.target * (1 - 1 / cfg.K)


def draw_contrast(res, slope: float, intercept: float):
    """Left: mean own-feature attention during GD (mean +- std over seeds) for every law, the linear one
    solid, with the halfway level (grey). Right: the halfway time against the label contrast C, log-log,
    with the fit ``log t = intercept + slope log C`` through the cosine laws (dotted)."""
    import torch

    fig, axes = plotting.figure(2, height=3.4)
    steps = torch.as_tensor(res.steps)
    for i, name in enumerate(res.laws):
        plotting.band(axes[0], steps, res.own_attention[:, i, :].T, label=name, color=plotting.COLORS[i % 8],
                      linestyle="-" if name == "linear" else "--")
    axes[0].axhline(halfway_level(res.config), color="gray", lw=0.8)
    plotting.label(axes[0], "GD step t", "own-feature attention")
    t_mean = res.t_half.nanmean(-1)
    lin = res.laws.index("linear")
    ok = torch.isfinite(t_mean)
    cos = [i for i, n in enumerate(res.laws) if n != "linear" and bool(ok[i])]
    axes[1].loglog(res.contrast[cos], t_mean[cos], "o", color=plotting.COLORS[1], label="cosine tasks (nonlinear paper)")
    axes[1].loglog(res.contrast[lin], t_mean[lin], "s", ms=9, color=plotting.COLORS[0],
                   label="linear tasks (convergence paper)")
    cs = torch.logspace(math.log10(float(res.contrast[cos].min()) / 1.5), math.log10(float(res.contrast.max()) * 1.5), 50)
    axes[1].loglog(cs, torch.exp(intercept + slope * cs.log()), "k:", label=rf"fit: $t \propto C^{{{slope:.2f}}}$")
    plotting.label(axes[1], "label contrast C", r"$t_{1/2}$ (GD steps)")
    plotting.legend_outside(fig, "below", ncols=4, fontsize=9)
    return fig


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


def law_name(res, i: int) -> str:
    """The name of law ``i`` (the slider's label)."""
    return res.laws[i]


def _claim(table, paper: str, claim: str):
    found = [c for c in table.claims if c.paper == paper and c.id == claim]
    if not found:
        raise chk.ConfigError(f"claim {claim} of {paper} is not in the claims table")
    return found[0]


def claim_status(table, paper: str, claim: str) -> str:
    """The status of ``claim`` of ``paper`` in a claims table."""
    return _claim(table, paper, claim).status


def measured_numbers(table, paper: str, claim: str, pattern: str) -> list[float]:
    """The numbers that the groups of ``pattern`` (a regular expression) capture at its first match in
    the measured text of ``claim`` of ``paper``: what the page says of another chapter's measurement,
    read from that chapter's ledger."""
    text = _claim(table, paper, claim).measured
    # numbers the ledger writes as math (render.number: $5.6\times10^{21}$, $10^{100}$) read as floats' reprs
    text = re.sub(r"\$(?:(-?[0-9.]+)\\times)?10\^\{(-?[0-9]+)\}\$",
                  lambda m: f"{m.group(1) or '1'}e{m.group(2)}", text)
    m = re.search(pattern, text)
    if m is None:
        raise chk.ConfigError(f"pattern {pattern!r} not found in the measured text of {paper} {claim}: {text!r}")
    return [float(g) for g in m.groups()]


def violated_hypotheses(table, paper: str, claim: str) -> list[str]:
    """The declared conditions of ``claim`` of ``paper`` that did not hold where it was measured."""
    return [h for h, held in _claim(table, paper, claim).hypotheses.items() if not held]
