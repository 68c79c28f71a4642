"""Measurements on trained models and their attention.

Shapes follow the models: attention ``attn`` is (R, B, m, N) (runs, prompts, queries,
demonstrations); feature ids are (R?, B, N) for demonstrations and (R?, B, m) for queries.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from . import params as chk
from .data.inputs import orthogonal_complement


def _one_hot(ids: torch.Tensor, K: int, dtype) -> torch.Tensor:
    return torch.nn.functional.one_hot(ids, K).to(dtype)


def attention_by_feature(attn: torch.Tensor, ids: torch.Tensor, K: int) -> torch.Tensor:
    """Attention mass on each feature, Attn_k = sum_{i: x_i = v_k} a_i: (R, B, m, K)."""
    K = chk.positive_int("K", K)
    return attn @ _one_hot(ids, K, attn.dtype)


def feature_attention_map(attn: torch.Tensor, ids: torch.Tensor, query_ids: torch.Tensor, K: int) -> torch.Tensor:
    """(R, K, K) map: entry [k, j] is the mean attention mass that queries of feature k put on
    demonstrations of feature j (rows sum to one for softmax attention). NaN for a query feature
    absent from the batch."""
    mass = attention_by_feature(attn, ids, K)  # (R, B, m, K)
    qh = _one_hot(query_ids, K, attn.dtype)  # (R?, B, m, K)
    if qh.ndim == 3:
        qh = qh.unsqueeze(0)
    tot = torch.einsum("rbmk,rbmj->rkj", qh.expand(mass.shape[0], *qh.shape[1:]), mass)
    n = qh.sum(dim=(1, 2))  # (R?, K)
    return tot / n.unsqueeze(-1).expand(mass.shape[0], K, 1)


def own_feature_attention(attn: torch.Tensor, ids: torch.Tensor, query_ids: torch.Tensor, K: int) -> torch.Tensor:
    """(R, K): mean attention mass a query of feature k puts on demonstrations of its own feature."""
    return torch.diagonal(feature_attention_map(attn, ids, query_ids, K), dim1=-2, dim2=-1)


def per_feature_loss(pred: torch.Tensor, target: torch.Tensor, query_ids: torch.Tensor, K: int) -> torch.Tensor:
    """(R, K): 1/2 mean squared error over queries of feature k (the papers' L_k). NaN if absent."""
    if target.ndim == pred.ndim - 1:
        target = target.unsqueeze(0)
    err = 0.5 * (pred - target) ** 2  # (R, B, m)
    qh = _one_hot(query_ids, K, pred.dtype)
    if qh.ndim == 3:
        qh = qh.unsqueeze(0)
    s = torch.einsum("rbm,rbmk->rk", err, qh.expand(err.shape[0], *qh.shape[1:]))
    n = qh.sum(dim=(1, 2)).expand(err.shape[0], K)
    return s / n


def feature_space_weights(M: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    """S = V M V^T with the features as rows of V (K, d): S[n, k] = v_n^T M v_k, key feature n,
    query feature k (convergence paper: S_kk = A_k, S_nk = B_{k,n}).  M: (..., d, d) -> (..., K, K)."""
    V = features.to(device=M.device, dtype=M.dtype)
    return V @ M @ V.T


def spectral_norm(M: torch.Tensor) -> torch.Tensor:
    """Largest singular value ||M||_2 of each matrix in (..., d, d)."""
    return torch.linalg.matrix_norm(M, ord=2)


def subspace_alignment(M: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """rho(M, B) = ||B_perp^T M B_perp||_2 / sigma_min(B^T M B) (window spec, Fig. 9 [R]):
    the size of M on the irrelevant subspace relative to its weakest relevant direction; it tends
    to 0 iff M approaches a multiple of the projection onto col(B).  M: (..., d, d), B: (d, k)."""
    Bp = orthogonal_complement(B.to("cpu", torch.float64)).to(device=M.device, dtype=M.dtype)
    B = B.to(device=M.device, dtype=M.dtype)
    inner = B.T @ M @ B
    smin = torch.linalg.svdvals(inner)[..., -1]
    if Bp.shape[1] == 0:
        return torch.zeros_like(smin)
    outer = torch.linalg.matrix_norm(Bp.T @ M @ Bp, ord=2)
    return outer / smin


def projection_energy(M: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """||P_B M P_B||_F / ||M||_F in [0, 1], P_B = B B^T: the share of M inside col(B) (a bounded
    companion of :func:`subspace_alignment`)."""
    P = (B @ B.T).to(device=M.device, dtype=M.dtype)
    return torch.linalg.matrix_norm(P @ M @ P) / torch.linalg.matrix_norm(M)


def accuracy(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """(R,) fraction of queries with sign(pred) == target (targets in {-1, +1})."""
    if target.ndim == pred.ndim - 1:
        target = target.unsqueeze(0)
    return (torch.sign(pred) == target).to(pred.dtype).mean(dim=(-2, -1))


def mean_std(values: torch.Tensor, dim: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and (population) standard deviation across runs, for mean +- std bands."""
    return values.mean(dim), values.std(dim, unbiased=False)


def ema(values: torch.Tensor, rate: float = 0.01, dim: int = 0) -> torch.Tensor:
    """Exponential moving average s_t = (1 - rate) s_{t-1} + rate v_t along ``dim``, s_0 = v_0
    (the window paper smooths its test-error curves with rate 0.01)."""
    if not 0 < rate <= 1:
        raise chk.ConfigError(f"rate must lie in (0, 1] (got {rate})")
    v = values.movedim(dim, 0)
    out = torch.empty_like(v)
    acc = v[0]
    out[0] = acc
    for t in range(1, v.shape[0]):
        acc = (1 - rate) * acc + rate * v[t]
        out[t] = acc
    return out.movedim(0, dim)


# ----------------------------------------------------------------------------- events in a series
def first_crossing(series, level, *, below: bool = False, times=None, interpolate: bool = False,
                   after: float | None = None, never: float = math.nan) -> torch.Tensor:
    """When a recorded series first reaches ``level``: from below (``series >= level``), or from above
    with ``below=True`` (``series <= level``).

    ``series`` is (T, ...): T records of any number of runs (a tensor, an array or a list); ``times`` (T,)
    the time of each record (default: its index). Returns a float64 tensor of shape ``series.shape[1:]``
    (0-dimensional for one run): the time of the first record at the level. With ``interpolate``, the time
    at which the straight line from the last record short of the level to that record meets the level (the
    record's own time when it is the first record considered). With ``after``, only records at times greater
    than ``after`` count. A run that never reaches the level gets ``never``: NaN (undefined) by default;
    ``math.inf`` where the caller reads a censored time (later than the run lasted). The comparison is made
    in the series' own precision (a float32 series against a float32 level), the interpolation in float64.
    """
    if isinstance(series, torch.Tensor):
        hit = series <= level if below else series >= level
        values = series
    else:
        values = np.asarray(series)
        hit = torch.as_tensor(values <= level if below else values >= level)
        values = torch.as_tensor(values)
    if hit.ndim == 0:
        raise ValueError("series must have a leading axis of records")
    t = (torch.arange(hit.shape[0], dtype=torch.float64) if times is None
         else torch.as_tensor(np.asarray(times, dtype=float) if not isinstance(times, torch.Tensor) else times,
                              dtype=torch.float64))
    if t.shape != hit.shape[:1]:
        raise ValueError(f"times must have one entry per record ({hit.shape[0]}), got shape {tuple(t.shape)}")
    per_record = (-1,) + (1,) * (hit.ndim - 1)
    if after is not None:
        hit = hit & (t > after).reshape(per_record)
    idx = hit.to(torch.int64).argmax(0)
    out = t[idx]
    if interpolate:
        i0 = (idx - 1).clamp(min=0)
        f = values.to(torch.float64)
        f0, f1 = f.gather(0, i0[None]).squeeze(0), f.gather(0, idx[None]).squeeze(0)
        t0 = t[i0]
        line = (idx > 0) if after is None else (idx > 0) & (t0 > after)
        out = torch.where(line, t0 + (out - t0) * (level - f0) / (f1 - f0), out)
    return torch.where(hit.any(0), out, torch.full_like(out, never))


# ----------------------------------------------------------------------------- fits and intervals
def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x over the finite, positive pairs (NaN if fewer
    than two)."""
    x = torch.as_tensor(x, dtype=torch.float64).reshape(-1)
    y = torch.as_tensor(y, dtype=torch.float64).reshape(-1)
    ok = torch.isfinite(x) & torch.isfinite(y) & (x > 0) & (y > 0)
    if int(ok.sum()) < 2:
        return float("nan")
    lx, ly = x[ok].log(), y[ok].log()
    lx = lx - lx.mean()
    return float((lx * (ly - ly.mean())).sum() / (lx * lx).sum())


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error over seeds (SE is NaN for a single value)."""
    v = torch.as_tensor(values, dtype=torch.float64).reshape(-1)
    se = float(v.std() / v.numel() ** 0.5) if v.numel() > 1 else float("nan")
    return float(v.mean()), se


def median_interval(values, level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Median over seeds with a percentile-bootstrap interval ``(median, lo, hi)``; the resampling
    uses its own seeded generator, so the interval is the same on every run."""
    v = torch.as_tensor(values, dtype=torch.float64).reshape(-1)
    if v.numel() == 0:
        raise ValueError("values must not be empty")
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, v.numel(), (n_boot, v.numel()), generator=g)
    meds = v[idx].median(dim=1).values
    a = (1 - level) / 2
    return float(v.median()), float(meds.quantile(a)), float(meds.quantile(1 - a))


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """A binomial proportion with its Wilson score interval ``(p, lo, hi)``, e.g. the fraction of
    seeds on which an event happened."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0 (got {successes}, {n})")
    z = {0.9: 1.6448536, 0.95: 1.9599640, 0.99: 2.5758293}.get(level)
    if z is None:
        raise ValueError("level must be 0.9, 0.95 or 0.99")
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return p, max(0.0, centre - half), min(1.0, centre + half)
