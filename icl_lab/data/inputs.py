"""Input distributions. Every sampler takes a leading ``shape`` and returns ``(*shape, d)``
(float64), drawing all randomness from the given ``torch.Generator``."""
from __future__ import annotations

import torch

from .. import params as chk
from . import _random as rnd
from .features import random_orthonormal


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise chk.ConfigError(f"shape must have non-negative entries (got {shape})")
    return shape


def categorical(p, shape, generator: torch.Generator) -> torch.Tensor:
    """i.i.d. indices in [0, K) with probabilities ``p`` (long tensor of ``shape``)."""
    p = chk.probabilities("p", p)
    shape = _shape(shape)
    chk.generator("generator", generator)
    return _categorical(p, shape, generator)


def _categorical(p: torch.Tensor, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    """:func:`categorical` without validation (for samplers that validated p once)."""
    # inverse-CDF sampling: one uniform per draw, so the stream does not depend on K's layout
    u = rnd.rand(generator, shape)
    if u.numel() == 0:
        return torch.zeros(u.shape, dtype=torch.long)
    cdf = torch.cumsum(p, 0)
    cdf[-1] = 1.0 + 1e-12
    return torch.searchsorted(cdf, u.reshape(-1), right=True).clamp_max(p.numel() - 1).reshape(u.shape)


def gaussian(shape, d: int, generator: torch.Generator, std: float = 1.0, cov=None) -> torch.Tensor:
    """N(0, std^2 I) or N(0, cov) vectors."""
    d = chk.positive_int("d", d)
    shape = _shape(shape)
    z = rnd.randn(chk.generator("generator", generator), (*shape, d))
    if cov is not None:
        cov = torch.as_tensor(cov, dtype=torch.float64)
        chk.shape("cov", cov, (d, d))
        return z @ torch.linalg.cholesky(cov).T
    return chk.positive("std", std) * z


def sphere(shape, d: int, generator: torch.Generator) -> torch.Tensor:
    """Uniform on the unit sphere S^{d-1} (the window paper's U^d)."""
    z = gaussian(shape, d, generator)
    return z / z.norm(dim=-1, keepdim=True)


def transformed_sphere(shape, A, generator: torch.Generator) -> torch.Tensor:
    """x = A z / ||A z||, z ~ N(0, I): the window paper's non-isotropic inputs (A = diag(1..d), Fig. 3)
    and App. J.1's (A = (J^T J)^{1/2})."""
    A = torch.as_tensor(A, dtype=torch.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise chk.ConfigError(f"A must be a square matrix (got shape {tuple(A.shape)})")
    z = gaussian(shape, A.shape[0], generator) @ A.T
    return z / z.norm(dim=-1, keepdim=True)


def anisotropic_sphere(shape, d: int, generator: torch.Generator) -> torch.Tensor:
    """The window paper's U^d_psi: x = S_d z / ||S_d z||, S_d = diag(1, ..., d), z ~ N(0, I)."""
    d = chk.positive_int("d", d)
    return transformed_sphere(shape, torch.diag(torch.arange(1, d + 1, dtype=torch.float64)), generator)


def low_rank_covariates(shape, B, generator: torch.Generator, c_u: float = 1.0, c_v: float = 1.0) -> torch.Tensor:
    """Assumption 4.3 of the window paper: x = c_u B u + c_v B_perp v, u ~ U^k, v ~ U^{d-k}.

    ``B`` is (d, k) with orthonormal columns; B_perp completes it to an orthonormal basis.
    """
    B = torch.as_tensor(B, dtype=torch.float64)
    if B.ndim != 2 or B.shape[1] > B.shape[0]:
        raise chk.ConfigError(f"B must be a (d, k) matrix with k <= d (got shape {tuple(B.shape)})")
    d, k = B.shape
    if not torch.allclose(B.T @ B, torch.eye(k, dtype=torch.float64), atol=1e-8):
        raise chk.ConfigError("B must have orthonormal columns")
    if c_u == 0:
        raise chk.ConfigError("c_u must be non-zero")
    shape = _shape(shape)
    B_perp = orthogonal_complement(B)
    u = sphere(shape, k, generator)
    x = c_u * (u @ B.T)
    if d > k:
        v = sphere(shape, d - k, generator)
        x = x + c_v * (v @ B_perp.T)
    return x


def orthogonal_complement(B: torch.Tensor) -> torch.Tensor:
    """A (d, d-k) matrix whose orthonormal columns span col(B)^perp."""
    d, k = B.shape
    q, _ = torch.linalg.qr(torch.cat([B, torch.eye(d, dtype=B.dtype)], dim=1))
    return q[:, k:d]


def random_subspace(d: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """A (d, k) matrix with orthonormal columns, uniformly random (Haar)."""
    return random_orthonormal(k, d, generator).T.contiguous()
