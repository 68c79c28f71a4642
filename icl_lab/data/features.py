"""Feature dictionaries: the K vectors v_1..v_K that tokens are drawn from.

All return a ``(K, d)`` tensor whose rows are the features (float64; cast where used).
"""
from __future__ import annotations

import math

import torch

from .. import params as chk


def _check_K_d(K, d, orthogonal: bool):
    K = chk.positive_int("K", K)
    d = chk.positive_int("d", d)
    if orthogonal:
        chk.features_fit(K, d)
    return K, d


def standard_basis(K: int, d: int, scale: float = 1.0) -> torch.Tensor:
    """v_k = scale * e_k: the convergence paper's default features (orthonormal for scale 1)."""
    K, d = _check_K_d(K, d, True)
    scale = chk.positive("scale", scale)
    return scale * torch.eye(d, dtype=torch.float64)[:K]


def random_orthonormal(K: int, d: int, generator: torch.Generator, scale: float = 1.0) -> torch.Tensor:
    """K random orthonormal directions in R^d (QR of a Gaussian matrix, sign-fixed), times scale."""
    K, d = _check_K_d(K, d, True)
    scale = chk.positive("scale", scale)
    chk.generator("generator", generator)
    g = torch.randn(d, K, generator=generator, dtype=torch.float64)
    q, r = torch.linalg.qr(g)
    q = q * torch.sign(torch.diagonal(r)).unsqueeze(0)  # unique (Haar) choice of signs
    return scale * q.T.contiguous()


def separated(K: int, d: int, delta: float, kind: str = "orth", generator: torch.Generator | None = None) -> torch.Tensor:
    """Features at pairwise distance ``delta`` (nonlinear paper, Delta).

    ``kind='orth'``: v_k = delta/sqrt(2) e_k (all distances exactly delta);
    ``kind='random'``: random orthonormal directions of norm delta/sqrt(2) (same distances, random
    orientation); ``kind='gaussian'``: i.i.d. Gaussian directions rescaled to norm delta/sqrt(2)
    (distances only approximately delta: tests the "beyond orthonormal" claim).
    """
    chk.one_of("kind", kind, ("orth", "random", "gaussian"))
    K, d = _check_K_d(K, d, kind != "gaussian")
    delta = chk.positive("delta", delta)
    r = delta / math.sqrt(2.0)
    if kind == "orth":
        return standard_basis(K, d, r)
    if generator is None:
        raise chk.ConfigError(f"generator is required for kind={kind!r}")
    if kind == "random":
        return random_orthonormal(K, d, generator, r)
    g = torch.randn(K, d, generator=chk.generator("generator", generator), dtype=torch.float64)
    return r * g / g.norm(dim=1, keepdim=True)


def from_gram(G, d: int | None = None) -> torch.Tensor:
    """Features whose Gram matrix V V^T equals ``G`` (K x K, symmetric PSD), embedded in R^d."""
    G = torch.as_tensor(G, dtype=torch.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise chk.ConfigError(f"G must be a square matrix (got shape {tuple(G.shape)})")
    if not torch.allclose(G, G.T, atol=1e-10):
        raise chk.ConfigError("G must be symmetric")
    K = G.shape[0]
    d = K if d is None else chk.positive_int("d", d)
    if d < K:
        raise chk.ConfigError(f"d must be >= K={K} to embed a K x K Gram matrix (got d={d})")
    evals, evecs = torch.linalg.eigh(G)
    if evals.min() < -1e-10 * max(1.0, float(evals.abs().max())):
        raise chk.ConfigError(f"G must be positive semi-definite (smallest eigenvalue {float(evals.min()):.3g})")
    V = evecs * evals.clamp_min(0).sqrt()  # (K, K): V V^T = G
    out = torch.zeros(K, d, dtype=torch.float64)
    out[:, :K] = V
    return out


def gram(V: torch.Tensor) -> torch.Tensor:
    """The Gram matrix V V^T of a (K, d) feature dictionary."""
    return V @ V.T


def orthonormal_patterns(count: int, d: int, norm: float = 1.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """``count`` mutually orthogonal patterns of norm ``norm`` (selectors paper's mu, nu).

    Standard-basis directions when no generator is given, random orthonormal ones otherwise.
    """
    if generator is None:
        return standard_basis(count, d, norm)
    return random_orthonormal(count, d, generator, norm)


def relevant_irrelevant_patterns(M1: int, M2: int, d_x: int, beta: float = 1.0,
                                 generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The selectors paper's patterns: M1 relevant (mu) and M2 irrelevant (nu), all mutually
    orthogonal with norm beta, in R^{d_x} (needs d_x >= M1 + M2).  Returns (mu (M1, d_x), nu (M2, d_x))."""
    M1 = chk.positive_int("M1", M1, minimum=2)
    M2 = chk.positive_int("M2", M2)
    d_x = chk.positive_int("d_x", d_x)
    if M1 + M2 > d_x:
        raise chk.ConfigError(f"d_x must be >= M1 + M2 = {M1 + M2} for orthogonal patterns (got d_x={d_x})")
    basis = orthonormal_patterns(M1 + M2, d_x, chk.positive("beta", beta), generator)
    return basis[:M1], basis[M1:]
