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


def generators_of(source) -> list[torch.Generator]:
    """The generators of ``source`` (a Streams or one generator), one per run."""
    return source.generators if isinstance(source, Streams) else [source]


def draw_sequence(generators: Sequence[torch.Generator], plans: Sequence[Sequence[tuple]]) -> dict[str, torch.Tensor]:
    """Run r's draws ``plans[r]`` from ``generators[r]``, in order, into one flat tensor per draw.

    A plan entry is ``(name, kind, n, arg)``: ``kind`` ``'rand'`` (U[0, 1), ``arg`` the dtype),
    ``'randn'`` (N(0, 1), ``arg`` the dtype) or ``'randint'`` (``arg = (low, high)``), ``n`` values.
    Entries with the same name across runs must have the same ``kind`` and ``n`` (and dtype; a
    ``randint``'s bounds may differ from run to run); returned:
    ``{name: (R_name, n) tensor}``, the rows being the runs whose plan has that entry, in run order.
    Each generator is consumed exactly as by the same draws made one call at a time (the values go
    straight into their rows: no concatenation), so this is the one Python loop of a batched sampler.
    """
    if len(plans) != len(generators):
        raise ValueError(f"plans must have one entry per generator ({len(generators)}); got {len(plans)}")
    specs: dict[str, tuple] = {}
    counts: dict[str, int] = {}
    for plan in plans:
        for name, kind, n, arg in plan:
            counts[name] = counts.get(name, 0) + 1
            spec = (kind, n, torch.long if kind == "randint" else arg)
            if specs.setdefault(name, spec) != spec:
                raise ValueError(f"draw {name!r} differs between runs: {specs[name]} and {spec}")
    bufs = {name: torch.empty(counts[name], n, dtype=dt) for name, (kind, n, dt) in specs.items()}
    rows = dict.fromkeys(bufs, 0)
    rand, randn, randint = torch.rand, torch.randn, torch.randint
    for g, plan in zip(generators, plans):
        for name, kind, n, arg in plan:
            out = bufs[name][rows[name]]
            rows[name] += 1
            if kind == "rand":
                rand(n, generator=g, dtype=arg, out=out)
            elif kind == "randn":
                randn(n, generator=g, dtype=arg, out=out)
            else:
                randint(arg[0], arg[1], (n,), generator=g, out=out)
    return bufs
