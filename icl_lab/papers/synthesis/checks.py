"""What decides the claims of the synthesis chapter (``claims.toml``: X0-X2): one function per claim or
claim group. Each takes what the page computed with the library and returns
:class:`~icl_lab.claims.Measurement` objects, the quantities under the names the claims' tests read. The
page judges in one line, ``ledger.judge(checks.contrast_law(res))``; the tests in ``claims.toml`` decide.

The quantities are written as literal dicts: ``tests/test_checks.py`` reads them from this file and
compares them with the names ``claims.toml``'s tests read.
"""
from __future__ import annotations

import math

import torch

from ... import params as chk
from ...claims import Measurement
from .experiments import CrossPaperResult, contrast_law_fit


def one_family(q_only_pred: torch.Tensor, kernel_pred: torch.Tensor, by_hand: torch.Tensor,
               y: torch.Tensor) -> Measurement:
    """X0: the Q-only model's and the tied kernel model's predictions (``(B,)`` each) against the
    Nadaraya–Watson formula evaluated by hand, and whether each Q-only prediction lies between the
    smallest and the largest of its prompt's labels ``y`` (``(B, N)``; float64 round-off allowed)."""
    if not q_only_pred.shape == kernel_pred.shape == by_hand.shape == y.shape[:1]:
        raise chk.ConfigError(f"q_only_pred {tuple(q_only_pred.shape)}, kernel_pred {tuple(kernel_pred.shape)}, "
                              f"by_hand {tuple(by_hand.shape)} must be (B,) and y {tuple(y.shape)} (B, N)")
    gap = max(float((q_only_pred - by_hand).abs().max()), float((kernel_pred - by_hand).abs().max()))
    inside = bool(((q_only_pred >= y.min(-1).values - 1e-12) & (q_only_pred <= y.max(-1).values + 1e-12)).all())
    return Measurement("X0", {"largest difference": gap, "every prediction inside [min y, max y]": inside})


def fitted_laws(res: CrossPaperResult) -> list[int]:
    """The indices of the cosine laws whose seed-mean halfway time is finite (those the fit uses)."""
    t_mean = res.t_half.nanmean(-1)
    return [i for i, n in enumerate(res.laws) if n != "linear" and math.isfinite(float(t_mean[i]))]


def linear_prediction(res: CrossPaperResult) -> tuple[float, float]:
    """(measured, predicted): the linear task's seed-mean halfway time, and the one the cosine laws'
    fit of :func:`~icl_lab.papers.synthesis.experiments.contrast_law_fit` predicts at its contrast."""
    slope, intercept = contrast_law_fit(res)
    lin = res.laws.index("linear")
    predicted = math.exp(intercept + slope * math.log(float(res.contrast[lin])))
    return float(res.t_half.nanmean(-1)[lin]), predicted


def ordered_by_contrast(res: CrossPaperResult) -> bool:
    """Whether the fitted cosine laws concentrate in the order of their contrast (the larger C, the
    sooner): the robust part of the measurement, whatever the slope."""
    cos = fitted_laws(res)
    t_mean = res.t_half.nanmean(-1)
    return torch.argsort(t_mean[cos]).tolist() == torch.argsort(-res.contrast[cos]).tolist()


def contrast_law(res: CrossPaperResult) -> list[Measurement]:
    """X1 and X2 on the cross-paper run: the slope of log t_half against log C over the cosine laws, and
    how far the linear task's halfway time lies from that fit's prediction at its contrast."""
    slope, _ = contrast_law_fit(res)
    t_half, predicted = linear_prediction(res)
    lin = res.laws.index("linear")
    return [
        Measurement("X1", {"slope": slope, "values of L fitted": len(fitted_laws(res))}),
        Measurement("X2", {"relative error": abs(t_half - predicted) / predicted},
                    shown={"t_half": t_half, "predicted": predicted},
                    how=f"fit over the cosine laws, evaluated at the linear task's C = {float(res.contrast[lin]):.3f}; "
                        f"crossing times interpolated between records {res.config.record_every} steps apart"),
    ]
