"""Task families f ~ D(F): the functions a prompt's labels come from.

A family draws the parameters of ``n`` tasks at once with :meth:`TaskFamily.sample` and evaluates
them with :meth:`TaskFamily.evaluate`: ``params`` has leading dimension ``n`` and ``x`` has shape
``(n, ..., d)``; the result has shape ``(n, ...)``.  ``lipschitz`` is the family's Lipschitz
constant L (the largest over its members) where one is defined.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import params as chk
from . import _random as rnd
from .inputs import sphere


def _scalar(p: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Reshape a per-task scalar (n,) to broadcast against z (n, ...)."""
    return p.reshape(p.shape[0], *([1] * (z.ndim - 1)))


def _bcast(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Reshape a per-task tensor (n, *rest) so it broadcasts against x's middle dimensions."""
    n = p.shape[0]
    middle = x.ndim - 2  # x: (n, *middle, d)
    return p.reshape(n, *([1] * middle), *p.shape[1:])


class TaskFamily:
    """Base class. Subclasses set ``d`` and implement ``sample`` and ``evaluate``."""

    d: int
    lipschitz: float | None = None
    name: str = "task"
    #: True where evaluate reads each input on its own (its value at x depends on x and the task
    #: only, computed the same way for any layout of the inputs): samplers drawing inputs from K
    #: features then evaluate the K features once per task and look the labels up
    tokenwise: bool = False

    def sample(self, n: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def evaluate(self, params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _check_x(self, x):
        if x.shape[-1] != self.d:
            raise chk.ConfigError(f"x must have last dimension d={self.d} (got {tuple(x.shape)})")

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class LinearTask(TaskFamily):
    """f(x) = <w, x>, w ~ N(0, I_d) (convergence paper; zero mean, identity covariance)."""

    name = "linear"
    tokenwise = True
    def __init__(self, d: int):
        self.d = chk.positive_int("d", d)

    def sample(self, n, generator):
        return {"w": rnd.randn(generator, (chk.positive_int("n", n), self.d))}

    def evaluate(self, params, x):
        self._check_x(x)
        return (x * _bcast(params["w"], x)).sum(-1)


class CosineFeatureTask(TaskFamily):
    """Nonlinear paper, Sec. 6: f(x) = (L/c) cos(c w^T x + phi), w ~ U(S^{d-1}),
    phi ~ U[0, 2 pi) per task; exactly L-Lipschitz since grad f = -L sin(.) w.

    ``random_phase=False`` drops phi (then f(0) = L/c for every task)."""

    name = "cosine_feature"
    tokenwise = True
    def __init__(self, d: int, L: float, c: float = 0.5, random_phase: bool = True):
        self.d = chk.positive_int("d", d)
        self.L = chk.positive("L", L)
        self.c = chk.positive("c", c)
        self.random_phase = bool(random_phase)
        self.lipschitz = self.L

    def sample(self, n, generator):
        n = chk.positive_int("n", n)
        w = sphere(n, self.d, generator)
        phi = 2 * math.pi * rnd.rand(generator, (n,))
        if not self.random_phase:
            phi = torch.zeros_like(phi)
        return {"w": w, "phi": phi}

    def evaluate(self, params, x):
        self._check_x(x)
        z = (x * _bcast(params["w"], x)).sum(-1)
        return (self.L / self.c) * torch.cos(self.c * z + _scalar(params["phi"], z))


class QuadraticTask(TaskFamily):
    """Nonlinear paper, App. A: f(x) = x^T A x + b^T x with A_ij, b_i ~ N(0, (L/d)^2).

    ``lipschitz`` is None: the family is only L-Lipschitz on bounded inputs."""

    name = "quadratic"

    def __init__(self, d: int, L: float):
        self.d = chk.positive_int("d", d)
        self.L = chk.positive("L", L)

    def sample(self, n, generator):
        n = chk.positive_int("n", n)
        s = self.L / self.d
        A = s * rnd.randn(generator, (n, self.d, self.d))
        b = s * rnd.randn(generator, (n, self.d))
        return {"A": A, "b": b}

    def evaluate(self, params, x):
        self._check_x(x)
        n = x.shape[0]
        flat = x.reshape(n, -1, self.d)
        quad = torch.einsum("npi,nij,npj->np", flat, params["A"], flat)
        lin = flat @ params["b"].unsqueeze(-1)
        return (quad + lin[..., 0]).reshape(x.shape[:-1])


class _RandomDirectionTask(TaskFamily):
    """f(x) = g(w^T x; c) with w ~ U^d and coefficients c_j ~ U[-L, L] (the window paper's
    Definition 3.2 classes).  Subclasses name the coefficients and define ``profile(z, c)``."""

    tokenwise = True
    COEFFICIENTS: tuple[str, ...] = ()

    def __init__(self, d: int, L: float):
        self.d = chk.positive_int("d", d)
        self.L = chk.positive("L", L)
        self.lipschitz = self.L

    def sample(self, n, generator):
        n = chk.positive_int("n", n)
        w = sphere(n, self.d, generator)
        c = self.L * (2 * rnd.rand(generator, (n, len(self.COEFFICIENTS))) - 1)
        return {"w": w, **{k: c[:, j] for j, k in enumerate(self.COEFFICIENTS)}}

    def evaluate(self, params, x):
        self._check_x(x)
        z = (x * _bcast(params["w"], x)).sum(-1)
        return self.profile(z, {k: _scalar(params[k], z) for k in self.COEFFICIENTS})

    def profile(self, z: torch.Tensor, c: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError


class AffineTask(_RandomDirectionTask):
    """Window paper, Def. 3.2: f(x) = l w^T x + b, w ~ U^d, l, b ~ U[-L, L]."""

    name = "affine"
    COEFFICIENTS = ("l", "b")

    def profile(self, z, c):
        return c["l"] * z + c["b"]


class TwoReLUTask(_RandomDirectionTask):
    """Window paper, Def. 3.2: f(x) = l1 (w^T x)_+ + l2 (-w^T x)_+ + b, w ~ U^d, l1, l2, b ~ U[-L, L]."""

    name = "two_relu"
    COEFFICIENTS = ("l1", "l2", "b")

    def profile(self, z, c):
        return c["l1"] * z.clamp_min(0) + c["l2"] * (-z).clamp_min(0) + c["b"]


class CosineTask(TaskFamily):
    """Window paper, Sec. 3.2 experiments: f(x) = cos(L w^T x), w ~ U^d (L-Lipschitz)."""

    name = "cosine"
    tokenwise = True
    def __init__(self, d: int, L: float):
        self.d = chk.positive_int("d", d)
        self.L = chk.positive("L", L)
        self.lipschitz = self.L

    def sample(self, n, generator):
        return {"w": sphere(chk.positive_int("n", n), self.d, generator)}

    def evaluate(self, params, x):
        self._check_x(x)
        return torch.cos(self.L * (x * _bcast(params["w"], x)).sum(-1))


class HillsTask(TaskFamily):
    """Window paper, Fig. 1 (d = 2): "phase-shifted cosine hills" on the circle,
    x = (cos theta, sin theta), b ~ U[-pi, pi], delta = wrap(theta - b) in [-pi, pi).

    The paper's text gives the class as nu cos(theta - b); three readings are offered:

    * ``shape='amp'`` (default, the paper's literal formula): f = nu cos(theta - b), a *linear*
      function nu (cos b, sin b)^T x of x on the circle (identically 0 at nu = 0);
    * ``shape='freq'``: f = cos(nu * delta) -- nu / 2 full periods around the circle;
    * ``shape='bump'``: f = cos(min(nu |delta|, pi)) -- one hill of width 2 pi / nu centred at b,
      flat (-1) elsewhere.

    'freq' and 'bump' are constant (1) at nu = 0. All three have Lipschitz constant nu along the
    circle."""

    name = "hills"
    SHAPES = ("amp", "freq", "bump")

    def __init__(self, nu: float, shape: str = "amp"):
        self.d = 2
        self.nu = chk.positive("nu", nu, allow_zero=True)
        self.shape = chk.one_of("shape", shape, self.SHAPES)
        self.lipschitz = self.nu

    def sample(self, n, generator):
        n = chk.positive_int("n", n)
        return {"b": math.pi * (2 * rnd.rand(generator, (n,)) - 1)}

    def evaluate(self, params, x):
        self._check_x(x)
        theta = torch.atan2(x[..., 1], x[..., 0])
        b = _scalar(params["b"], theta)
        if self.shape == "amp":
            return self.nu * torch.cos(theta - b)
        delta = torch.remainder(theta - b + math.pi, 2 * math.pi) - math.pi
        if self.shape == "freq":
            return torch.cos(self.nu * delta)
        return torch.cos((self.nu * delta.abs()).clamp_max(math.pi))


class LowRankTask(TaskFamily):
    """Window paper, Def. 4.2 / App. J.1: functions of a^T B^T x with B (d, k) orthonormal columns.

    kind: ``linear`` a^T B^T x (a ~ U^k); ``affine`` a^T B^T x + 2; ``quadratic`` (a^T B^T x)^2;
    ``cosine`` cos(4 a^T B^T x).  ``scale`` multiplies a (the paper's L for the linear class)."""

    name = "low_rank"
    KINDS = ("linear", "affine", "quadratic", "cosine")

    def __init__(self, B, kind: str = "linear", scale: float = 1.0):
        B = torch.as_tensor(B, dtype=torch.float64)
        if B.ndim != 2 or B.shape[1] > B.shape[0]:
            raise chk.ConfigError(f"B must be a (d, k) matrix with k <= d (got shape {tuple(B.shape)})")
        self.B = B
        self.d, self.k = B.shape
        self.kind = chk.one_of("kind", kind, self.KINDS)
        self.scale = chk.positive("scale", scale)
        self.lipschitz = self.scale if kind in ("linear", "affine") else None

    def sample(self, n, generator):
        return {"a": self.scale * sphere(chk.positive_int("n", n), self.k, generator)}

    def evaluate(self, params, x):
        self._check_x(x)
        xb = x @ self.B.to(x.dtype)
        z = (xb * _bcast(params["a"], xb)).sum(-1)
        if self.kind == "linear":
            return z
        if self.kind == "affine":
            return z + 2.0
        if self.kind == "quadratic":
            return z**2
        return torch.cos(4.0 * z)


@dataclass(frozen=True)
class PairTask:
    """Selectors paper: binary classification deciding +1 for relevant pattern ``a``, -1 for ``b``."""

    a: int
    b: int


def cyclic_pair_tasks(M1: int) -> list[PairTask]:
    """The minimal task set covering every pattern once as +1 and once as -1: (i, i+1 mod M1)."""
    M1 = chk.positive_int("M1", M1, minimum=2)
    return [PairTask(i, (i + 1) % M1) for i in range(M1)]


def estimate_lipschitz(family: TaskFamily, inputs: torch.Tensor, generator: torch.Generator, n_tasks: int = 64) -> torch.Tensor:
    """Empirical Lipschitz constant max |f(x)-f(x')| / ||x-x'|| over all pairs of ``inputs`` (m, d),
    for ``n_tasks`` sampled tasks; returns one value per task (a lower bound on each task's L)."""
    params = family.sample(n_tasks, generator)
    x = inputs.unsqueeze(0).expand(n_tasks, *inputs.shape)
    y = family.evaluate(params, x)  # (n, m)
    dy = (y[:, :, None] - y[:, None, :]).abs()
    dx = torch.cdist(inputs, inputs)
    mask = dx > 1e-9
    return (dy[:, mask] / dx[mask]).max(dim=1).values
