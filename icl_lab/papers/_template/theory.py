"""Closed forms of the template paper: the loss of the model that has learned nothing.

With ``Q = 0`` every demonstration gets the weight ``1/N``, so the prediction is the average of the
context labels. For linear tasks ``y = <w, x>``, ``w ~ N(0, I_d)``, on ``K`` orthonormal features drawn
with probabilities ``p_k`` (the counts ``c_k`` of the context multinomial), the expected loss is

    1/2 E[(sum_k c_k/N w_k - w_q)^2] = 1/2 (1 - sum_k p_k^2) (1 + 1/N),

using ``E[c_k^2] / N^2 = p_k (1 - p_k) / N + p_k^2`` and ``E[c_q] / N = sum_k p_k^2``.
"""
from __future__ import annotations

import torch


def average_loss(p: torch.Tensor, N: int) -> float:
    """The expected held-out loss ``1/2 (1 - sum_k p_k^2)(1 + 1/N)`` of the context average (``Q = 0``)."""
    collision = float((p.to(torch.float64) ** 2).sum())
    return 0.5 * (1.0 - collision) * (1.0 + 1.0 / N)
