"""The formulas of the common setup: the Q-only model's gradient in closed form (checked against autograd
in the first chapter and by the convergence paper's identities)."""
from __future__ import annotations

import torch

from ... import params as chk
from ...data import PromptBatch


def q_only_gradient_closed_form(Q: torch.Tensor, batch: PromptBatch) -> torch.Tensor:
    """Closed-form gradient of 1/2 mean (y_hat - y_q)^2 for the Q-only model (one query):

        grad_Q = mean_b (y_hat - y_q) sum_i a_i y_i (x_i - xbar) x_q^T,   xbar = sum_j a_j x_j,

    from d a_i / d Q = a_i (x_i - xbar) x_q^T (softmax derivative of the logits x_i^T Q x_q)."""
    if batch.has_runs or batch.num_queries != 1:
        raise chk.ConfigError("batch must have no run dimension and one query per prompt")
    x, y, xq, yq = batch.x, batch.y, batch.x_query[:, 0], batch.y_query[:, 0]
    a = torch.softmax(torch.einsum("bnd,de,be->bn", x, Q, xq), dim=-1)
    yhat = (a * y).sum(-1)
    xbar = torch.einsum("bn,bnd->bd", a, x)
    inner = torch.einsum("bn,bnd->bd", a * y, x) - yhat[:, None] * xbar  # sum_i a_i y_i (x_i - xbar)
    return torch.einsum("b,bd,be->de", yhat - yq, inner, xq) / x.shape[0]
