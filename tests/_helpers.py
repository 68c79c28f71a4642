"""Shared helpers for the unit tests (imported as ``from _helpers import ...``; not a conftest so
that the project's own ``tests/conftest.py`` stays free)."""
from __future__ import annotations

import math

import torch

from icl_lab import make_generator
from icl_lab.data import (LinearTask, PairClassificationSampler, PromptSampler, cyclic_pair_tasks,
                          orthonormal_patterns, sphere, standard_basis)

F64 = torch.float64

# float64 identities: rounding of a few hundred flops stays far below this
TIGHT = 1e-10


def gen(seed: int) -> torch.Generator:
    return make_generator(seed)


def gens(seeds) -> list[torch.Generator]:
    return [make_generator(int(s)) for s in seeds]


def assert_close(actual, expected, atol: float = TIGHT, rtol: float = 0.0, msg=None):
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, msg=msg)


def linear_feature_sampler(K: int = 3, d: int = 4, N: int = 8, p=None, **kw) -> PromptSampler:
    """Convergence-paper prompts: standard-basis features, linear tasks w ~ N(0, I)."""
    return PromptSampler.from_features(standard_basis(K, d), LinearTask(d), N, p=p, **kw)


def sphere_linear_sampler(d: int = 3, N: int = 8, **kw) -> PromptSampler:
    """Inputs uniform on the unit sphere, linear tasks."""
    return PromptSampler.from_inputs(lambda s, g: sphere(s, d, g), LinearTask(d), N, **kw)


def randomize_(module: torch.nn.Module, seed: int, std: float = 0.5) -> torch.nn.Module:
    """Overwrite every parameter with N(0, std^2) entries (so identities are tested away from the
    special initial points, where many terms vanish)."""
    g = gen(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(std * torch.randn(p.shape, generator=g, dtype=F64).to(p.dtype))
    return module


def mean_bound(std: float, n: int, k: float = 5.0) -> float:
    """k standard errors of a sample mean of n draws with standard deviation std."""
    return k * std / math.sqrt(n)


def frequency_bound(p, n: int, k: float = 5.0):
    """k standard errors of an empirical frequency of an event of probability p over n draws."""
    p = torch.as_tensor(p, dtype=F64)
    return k * torch.sqrt(p * (1 - p) / n)


def std_bound(std: float, n: int, k: float = 5.0) -> float:
    """k standard errors of a sample standard deviation (Gaussian data: SE ~ std / sqrt(2 n))."""
    return k * std / math.sqrt(2 * n)


def pair_sampler(alpha=0.6, l=20, tau=0.0, **kw):
    """Selectors-paper prompts: d_x = 6, M1 = 4 relevant patterns e_0..e_3, irrelevant e_4, e_5,
    label embedding q = (1, -0.5), the cyclic task set."""
    d_x, M1 = 6, 4
    mu = orthonormal_patterns(M1, d_x)  # e_0 .. e_3
    nu = torch.eye(d_x, dtype=F64)[4:6]  # e_4, e_5: orthogonal to every mu
    q = torch.tensor([1.0, -0.5], dtype=F64)
    return PairClassificationSampler(mu, nu, cyclic_pair_tasks(M1), l=l, alpha=alpha, q=q, tau=tau, **kw)
