"""The window chapter's data: its task classes and input laws, grids, and a prefetching sampler.

The Fig. 1 hills task is the library's :class:`~icl_lab.data.HillsTask` (``shape`` picks the
reading of the paper's formula); everything else comes from :mod:`icl_lab.data`."""
from __future__ import annotations

import math
from typing import Sequence

import torch

from ... import params as chk
from ...data import AffineTask, CosineTask, TwoReLUTask, anisotropic_sphere, sphere
from ...data.prompts import PromptBatch

F64 = torch.float64
CLASSES = ("affine", "relu", "cos")


class ConstantTask(AffineTask):
    """f(x) = b: the affine class with l = 0 (the intercept that linear attention cannot fit)."""

    def profile(self, z, c):
        return c["b"] + 0 * z


def make_task(kind: str, d: int, L: float):
    """The paper's task classes: 'affine' (Def. 3.2), 'relu' (2-ReLU, Def. 3.2), 'cos' (cos(L w^T x),
    App. J)."""
    chk.one_of("task class", kind, CLASSES)
    return {"affine": AffineTask, "relu": TwoReLUTask, "cos": CosineTask}[kind](d, L)


def sphere_inputs(d: int):
    """x ~ U^d, uniform on the unit sphere S^{d-1}."""
    return lambda s, g: sphere(s, d, g)


def input_law(name: str, d: int):
    """'iso' = U^d (uniform on the sphere), 'aniso' = U^d_psi (S_d = diag(1..d), Sec. 3.2)."""
    chk.one_of("inputs", name, ("iso", "aniso"))
    return sphere_inputs(d) if name == "iso" else (lambda s, g: anisotropic_sphere(s, d, g))


def queries_for(n: int) -> int:
    """N = ceil(sqrt(n)) query points per task (App. J)."""
    return math.ceil(math.sqrt(n))


def log_grid(lo: float, hi: float, points: int) -> torch.Tensor:
    return torch.logspace(math.log10(lo), math.log10(hi), points, dtype=F64)


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
