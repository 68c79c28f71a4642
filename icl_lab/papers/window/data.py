"""Data pieces specific to the window paper.

* :class:`WrappedCosineHills` -- Fig. 1's "phase-shifted cosine hills" read as
  f(theta) = cos(nu * wrap(theta - b)) (spec A6): constant at nu = 0, Lipschitz nu on the circle.
  The library's :class:`~icl_lab.data.HillsTask` is the literal OCR reading nu cos(theta - b), a
  *linear* function of x on the circle (linear attention is consistent for it); both are offered.
* :class:`GroupedSampler` -- now the library's :class:`~icl_lab.data.StackedSampler` (run r draws its
  prompts from ``samplers[r]`` with generator r, exactly as alone; runs that share a sampler are
  drawn together through its ``sample_runs``: with 160 runs over 16 distinct samplers one draw costs
  ~3 ms instead of ~45 ms, the per-run Python loop having dominated Fig. 3's training time).
"""
from __future__ import annotations

import math
from typing import Sequence

import torch

from ... import _checks as chk
from ...data import _random as rnd
from ...data.prompts import PromptBatch, StackedSampler
from ...data.tasks import TaskFamily, _scalar


class WrappedCosineHills(TaskFamily):
    """Phase-shifted cosine hills on the circle, x = (cos theta, sin theta), b ~ U[-pi, pi],
    delta = wrap(theta - b) in [-pi, pi):

    * ``shape='freq'``: f = cos(nu * delta) (spec A6) -- nu / 2 full periods around the circle;
    * ``shape='bump'``: f = cos(min(nu |delta|, pi)) -- one hill of width 2 pi / nu centred at b,
      flat (-1) elsewhere.

    Both are constant (1) at nu = 0 and have Lipschitz constant nu along the circle."""

    name = "hills"
    SHAPES = ("freq", "bump")

    def __init__(self, nu: float, shape: str = "freq"):
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
        delta = torch.remainder(theta - _scalar(params["b"], theta) + math.pi, 2 * math.pi) - math.pi
        if self.shape == "freq":
            return torch.cos(self.nu * delta)
        return torch.cos((self.nu * delta.abs()).clamp_max(math.pi))


# One sampler per run, runs that share a sampler object drawn in one ``sample_runs``: the library's
# StackedSampler does exactly this (it was written here first and moved into icl_lab.data).
GroupedSampler = StackedSampler


class PrefetchSampler:
    """Draw ``steps_per_draw`` steps' worth of prompts at once and serve them one step at a time.

    With one task per iteration the per-step cost of drawing a handful of tiny tensors per run
    dominates training; drawing ``batch * steps_per_draw`` prompts in one ``sample_runs`` call and
    slicing it removes that overhead.  Run r's prompts still come only from generator r (in a
    different order of draws than step-by-step sampling, so the stream differs from the unbuffered
    sampler's, but the same seeds give the same prompts)."""

    def __init__(self, sampler, steps_per_draw: int = 500):
        if not hasattr(sampler, "sample_runs"):
            raise chk.ConfigError("sampler must have sample_runs(batch, generators)")
        self.sampler = sampler
        self.steps_per_draw = chk.positive_int("steps_per_draw", steps_per_draw)
        self._buf = None
        self._key = None
        self._pos = 0

    def __len__(self) -> int:
        return len(self.sampler)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype=torch.float64) -> PromptBatch:
        batch = chk.positive_int("batch", batch)
        key = (batch, tuple(id(g) for g in generators), dtype)
        if self._buf is None or key != self._key or self._pos >= self.steps_per_draw:
            self._buf = self.sampler.sample_runs(batch * self.steps_per_draw, generators, dtype)
            self._key, self._pos = key, 0
        lo = self._pos * batch
        self._pos += 1
        return self._buf._map(lambda t: t[:, lo:lo + batch])
