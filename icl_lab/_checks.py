"""Parameter validation shared by every constructor and sampler.

Every public entry point validates its arguments *before* doing any computation and raises
:class:`ConfigError` (a ``ValueError``) whose message starts with the parameter's name, so a user
sees ``K must be <= d for orthonormal features (got K=5, d=3)`` rather than a shape error deep
inside a matrix product.
"""
from __future__ import annotations

import math
import numbers
from typing import Iterable, Sequence

import torch


class ConfigError(ValueError):
    """An invalid parameter value. The message names the parameter."""


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    # numbers.Integral: also numpy integers (e.g. from np.arange sweeps), not only Python ints
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) and not (
        isinstance(value, float) and value.is_integer()
    ):
        raise ConfigError(f"{name} must be an integer >= {minimum} (got {value!r})")
    value = int(value)
    if value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum} (got {value})")
    return value


def positive(name: str, value, *, allow_zero: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} number (got {value!r})") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ConfigError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} finite number (got {value!r})")
    return v


def positive_values(name: str, values) -> torch.Tensor:
    """A scalar or a 1-d sequence of positive numbers, returned as a float64 tensor."""
    t = torch.as_tensor(values, dtype=torch.float64)
    if t.ndim > 1 or t.numel() == 0:
        raise ConfigError(f"{name} must be a positive number or a 1-d sequence of them (got shape {tuple(t.shape)})")
    if not torch.isfinite(t).all() or (t <= 0).any():
        raise ConfigError(f"{name} must be positive and finite (got {t.tolist()})")
    return t


def one_of(name: str, value, options: Iterable[str]) -> str:
    options = tuple(options)
    if value not in options:
        raise ConfigError(f"{name} must be one of {options} (got {value!r})")
    return value


def probabilities(name: str, p, K: int | None = None, *, atol: float = 1e-6) -> torch.Tensor:
    """A probability vector: positive entries summing to one (length K when given)."""
    t = torch.as_tensor(p, dtype=torch.float64)
    if t.ndim != 1 or t.numel() == 0:
        raise ConfigError(f"{name} must be a 1-d sequence of probabilities (got shape {tuple(t.shape)})")
    if K is not None and t.numel() != K:
        raise ConfigError(f"{name} must have K={K} entries (got {t.numel()})")
    if not torch.isfinite(t).all() or (t < 0).any():
        raise ConfigError(f"{name} must have non-negative finite entries (got {t.tolist()})")
    if abs(float(t.sum()) - 1.0) > atol:
        raise ConfigError(f"{name} must sum to 1 (got sum {float(t.sum()):.6g})")
    return t


def probability(name: str, value, *, open_interval: bool = False) -> float:
    v = positive(name, value, allow_zero=not open_interval)
    if v > 1 or (open_interval and v >= 1):
        raise ConfigError(f"{name} must lie in {'(0, 1)' if open_interval else '[0, 1]'} (got {value!r})")
    return v


def generator(name: str, gen) -> torch.Generator:
    from .data._random import Streams

    if not isinstance(gen, (torch.Generator, Streams)):
        raise ConfigError(
            f"{name} must be a torch.Generator (got {type(gen).__name__}); use icl_lab.make_generator(seed)"
        )
    return gen


def shape(name: str, t: torch.Tensor, expected: Sequence[int | None]) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise ConfigError(f"{name} must be a torch.Tensor (got {type(t).__name__})")
    if t.ndim != len(expected) or any(e is not None and s != e for s, e in zip(t.shape, expected)):
        exp = tuple("*" if e is None else e for e in expected)
        raise ConfigError(f"{name} must have shape {exp} (got {tuple(t.shape)})")
    return t


def features_fit(K: int, d: int, what: str = "orthonormal features") -> None:
    """K orthonormal (or orthogonal) features exist in dimension d only if K <= d: the cross-field rule
    of every config that draws them, refused before anything is built."""
    if K > d:
        raise ConfigError(f"K must be <= d for {what} (got K={K}, d={d})")


def every_feature_queried(query_ids: torch.Tensor, K: int, name: str, value: int) -> None:
    """Per-feature losses and attention maps average over the prompts whose query has that feature:
    a feature that no prompt queries would leave them undefined (NaN). ``query_ids`` (..., B, m) holds
    the drawn prompts' query features, one set per leading index (run) when it has one."""
    flat = query_ids.reshape(-1, query_ids.shape[-2] * query_ids.shape[-1]) if query_ids.ndim > 2 else query_ids.reshape(1, -1)
    for row in flat:
        missing = sorted(set(range(K)) - set(row.tolist()))
        if missing:
            shown = ", ".join(str(k + 1) for k in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise ConfigError(f"{name}={value} leaves feature(s) {shown} with no query: per-feature losses "
                              f"would be undefined; use more prompts")
