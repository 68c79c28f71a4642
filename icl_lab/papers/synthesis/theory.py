"""The one formula of the synthesis chapter written out by hand: the Nadaraya–Watson prediction with
score matrix ``M``, term by term in plain Python, against which the page checks the library's attention
models (claim X0)."""
from __future__ import annotations

import math

import torch

from ... import params as chk


def nadaraya_watson_by_hand(x: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """``sum_i y_i exp(x_i^T M x_q) / sum_j exp(x_j^T M x_q)`` for each prompt, evaluated term by term in
    plain Python (no matrix product, no softmax). ``x``: ``(B, N, d)`` context inputs, ``y``: ``(B, N)``
    labels, ``x_query``: ``(B, 1, d)`` (the first query is used), ``M``: ``(d, d)``. Returns ``(B,)``
    float64."""
    if x.dim() != 3 or y.shape != x.shape[:2] or x_query.dim() != 3 or x_query.shape[0] != x.shape[0] \
            or x_query.shape[-1] != x.shape[-1] or M.shape != (x.shape[-1], x.shape[-1]):
        raise chk.ConfigError(f"x {tuple(x.shape)}, y {tuple(y.shape)}, x_query {tuple(x_query.shape)} and M "
                              f"{tuple(M.shape)} must be (B, N, d), (B, N), (B, 1, d) and (d, d)")
    d = x.shape[-1]
    Ml = M.tolist()
    preds = []
    for b in range(x.shape[0]):
        xq = x_query[b, 0].tolist()
        logits = [sum(xi[r] * Ml[r][c] * xq[c] for r in range(d) for c in range(d)) for xi in x[b].tolist()]
        w = [math.exp(s) for s in logits]
        preds.append(sum(wi * yi for wi, yi in zip(w, y[b].tolist())) / sum(w))
    return torch.tensor(preds, dtype=torch.float64)
