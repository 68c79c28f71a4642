"""Baseline in-context predictors to compare attention against.

All take context inputs ``x`` (B, N, d), labels ``y`` (B, N) and queries ``x_query`` (B, m, d)
(an extra leading run dimension is allowed everywhere) and return predictions (B, m).
"""
from __future__ import annotations

import torch

from . import params as chk
from .data.prompts import PromptBatch


def context_average(x, y, x_query) -> torch.Tensor:
    """The mean of the context labels (attention with M = 0; the window paper's 'constant' extreme)."""
    return y.mean(-1, keepdim=True).expand(*x_query.shape[:-1])


def nadaraya_watson(x, y, x_query, bandwidth: float) -> torch.Tensor:
    """Gaussian-kernel regression: sum_i K(x_q, x_i) y_i / sum_j K(x_q, x_j),
    K(x, x') = exp(-||x - x'||^2 / h).  On the unit sphere this is softmax attention with
    M = (2/h) I (the factor 2 on which the window paper's eqs. (7) and (9) disagree)."""
    h = chk.positive("bandwidth", bandwidth)
    d2 = torch.cdist(x_query, x) ** 2  # (B, m, N)
    w = torch.softmax(-d2 / h, dim=-1)
    return (w * y.unsqueeze(-2)).sum(-1)


def knn(x, y, x_query, k: int) -> torch.Tensor:
    """Average label of the k nearest demonstrations (Euclidean distance)."""
    k = chk.positive_int("k", k)
    if k > x.shape[-2]:
        raise chk.ConfigError(f"k must be <= N={x.shape[-2]} (got {k})")
    d2 = torch.cdist(x_query, x)
    idx = d2.topk(k, dim=-1, largest=False).indices  # (B, m, k)
    yy = y.unsqueeze(-2).expand(*idx.shape[:-1], y.shape[-1])
    return torch.gather(yy, -1, idx).mean(-1)


def ridge(x, y, x_query, lam: float = 0.0, fit_intercept: bool = False) -> torch.Tensor:
    """Per-prompt (ridge) least squares: w = argmin ||X w - y||^2 + lam ||w||^2, prediction w^T x_q.
    ``lam=0`` is least squares (minimum-norm solution when underdetermined)."""
    lam = chk.positive("lam", lam, allow_zero=True)
    if fit_intercept:
        ones = torch.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)
        x = torch.cat([x, ones], -1)
        x_query = torch.cat([x_query, torch.ones(*x_query.shape[:-1], 1, dtype=x.dtype, device=x.device)], -1)
    if lam == 0:
        w = torch.linalg.pinv(x) @ y.unsqueeze(-1)  # (B, d, 1)
    else:
        d = x.shape[-1]
        A = x.transpose(-1, -2) @ x + lam * torch.eye(d, dtype=x.dtype, device=x.device)
        w = torch.linalg.solve(A, x.transpose(-1, -2) @ y.unsqueeze(-1))
    return (x_query @ w).squeeze(-1)


def least_squares(x, y, x_query) -> torch.Tensor:
    return ridge(x, y, x_query, 0.0)


def linear_attention_optimum(batch: PromptBatch, ridge_lam: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """The best linear-attention matrix for a batch of prompts, in closed form.

    Linear attention predicts h(x_q) = sum_i y_i x_i^T M x_q = <M, Phi>, Phi = sum_i y_i x_i x_q^T,
    which is linear in M, so the minimiser of the empirical squared loss is the least-squares
    solution M* = argmin_M mean (<M, Phi> - y_q)^2 over the batch's (prompt, query) pairs (the
    population optimum when the batch is large).  Returns (M* (d, d), its mean 1/2 squared loss).
    """
    if batch.has_runs:
        raise chk.ConfigError("linear_attention_optimum takes a batch without a run dimension")
    # on the CPU in float64: the SVD least-squares driver (gelsd) exists only there
    x, y, xq, yq = (t.to("cpu", torch.float64) for t in (batch.x, batch.y, batch.x_query, batch.y_query))
    d = x.shape[-1]
    s = (y.unsqueeze(-1) * x).sum(-2)  # (B, d): sum_i y_i x_i
    Phi = (s.unsqueeze(-2).unsqueeze(-1) * xq.unsqueeze(-2)).reshape(-1, d * d)  # (B*m, d*d)
    target = yq.reshape(-1)
    if ridge_lam:
        A = Phi.T @ Phi + ridge_lam * torch.eye(d * d, dtype=Phi.dtype)
        vecM = torch.linalg.solve(A, Phi.T @ target)
    else:
        # SVD-based least squares: rank-deficient Phi (inputs spanning a subspace) gets the
        # minimum-norm solution instead of a failed normal-equations solve
        vecM = torch.linalg.lstsq(Phi, target.unsqueeze(-1), driver="gelsd").solution[:, 0]
    loss = 0.5 * ((Phi @ vecM - target) ** 2).mean()
    return vecM.reshape(d, d), loss


def bayes_linear_feature_predictor(batch: PromptBatch) -> torch.Tensor:
    """For linear tasks on orthonormal features with w ~ N(0, I): the posterior mean of <w, x_q>
    is y of any demonstration with the query's feature (noiseless labels), else 0.
    Returns predictions (B, m); the lowest loss any predictor can reach on such prompts."""
    if batch.ids is None or batch.query_ids is None:
        raise chk.ConfigError("batch needs feature ids (build it with PromptSampler.from_features)")
    same = (batch.ids.unsqueeze(-2) == batch.query_ids.unsqueeze(-1)).to(batch.y.dtype)  # (B, m, N)
    cnt = same.sum(-1)
    total = (same * batch.y.unsqueeze(-2)).sum(-1)
    return torch.where(cnt > 0, total / cnt.clamp_min(1), torch.zeros_like(total))
