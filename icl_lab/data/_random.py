"""Random draws from one seeded generator or from several run streams at once.

A :class:`Streams` holds one ``torch.Generator`` per run.  Every draw takes a per-run shape whose
first entry counts prompts (or tasks); with streams the draws of the runs are concatenated along
that dimension.  Each generator is consumed exactly as it would be by the same sequence of draws on
its own, so a sampler written once against these functions produces, for run r of a batched draw,
the very prompts that run r would get alone -- while every non-random operation runs once for all
runs instead of once per run (a per-run Python loop of small tensor ops dominated the cost of
fresh-prompt training with many runs).
"""
from __future__ import annotations

from typing import Sequence

import torch

F64 = torch.float64


class Streams:
    """One independent random stream per run (see the module docstring)."""

    def __init__(self, generators: Sequence[torch.Generator]):
        self.generators = list(generators)
        if not self.generators or not all(isinstance(g, torch.Generator) for g in self.generators):
            raise ValueError("generators must be a non-empty sequence of torch.Generator")

    @property
    def runs(self) -> int:
        return len(self.generators)


def runs(source) -> int:
    """Number of runs drawn at once (1 for a plain generator)."""
    return source.runs if isinstance(source, Streams) else 1


def _draw(source, fn):
    if isinstance(source, Streams):
        return torch.cat([fn(g) for g in source.generators])
    return fn(source)


def rand(source, shape) -> torch.Tensor:
    """U[0, 1) float64 draws of per-run ``shape``."""
    return _draw(source, lambda g: torch.rand(tuple(shape), generator=g, dtype=F64))


def randn(source, shape) -> torch.Tensor:
    """N(0, 1) float64 draws of per-run ``shape``."""
    return _draw(source, lambda g: torch.randn(tuple(shape), generator=g, dtype=F64))


def randint(source, low: int, high: int, shape) -> torch.Tensor:
    """Integers in [low, high) of per-run ``shape``."""
    return _draw(source, lambda g: torch.randint(low, high, tuple(shape), generator=g))
