"""Scales, devices, threads and seeded generators.

* **Scales** — every experiment has a ``ci`` and a ``paper`` configuration, chosen by the
  environment variable ``ICL_LAB_SCALE`` (default ``paper``: what a reader running a notebook or
  building the book gets). ``ci`` is smaller but must still show the effect the claims check.
* **Device** — ``ICL_LAB_DEVICE`` (``cpu``, ``cuda``, ``cuda:1`` ...) overrides the automatic
  choice (CUDA when available).
* **Threads** — on small machines PyTorch's default of one thread per core oversubscribes when
  several processes (pytest, a Jupyter kernel, the book build) run at once; the specs measured 4-20x
  slow-downs.  :func:`configure_threads` sets a deliberate number (``ICL_LAB_THREADS`` overrides).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

import torch

from ._checks import ConfigError, one_of

SCALES = ("ci", "paper")
_T = TypeVar("_T")


def get_scale(scale: str | None = None) -> str:
    """The active scale: ``scale`` if given, else ``$ICL_LAB_SCALE``, else ``'paper'``."""
    if scale is None:
        scale = os.environ.get("ICL_LAB_SCALE", "paper").strip() or "paper"
        return one_of("ICL_LAB_SCALE", scale, SCALES)
    return one_of("scale", scale, SCALES)


def by_scale(scale: str | None = None, **variants: _T) -> _T:
    """Pick a value per scale: ``by_scale(ci=200, paper=2000)``."""
    s = get_scale(scale)
    missing = [k for k in SCALES if k not in variants]
    if missing:
        raise ConfigError(f"by_scale needs a value for every scale; missing {missing}")
    unknown = [k for k in variants if k not in SCALES]
    if unknown:
        raise ConfigError(f"scale must be one of {SCALES} (got {unknown})")
    return variants[s]


@dataclass(frozen=True)
class ScaledConfig:
    """Base class for experiment configurations with per-scale variants.

    Subclasses define their fields with the ``paper`` defaults and a class attribute ``CI`` holding
    the overrides for the ``ci`` scale, e.g.::

        @dataclass(frozen=True)
        class Fig1(ScaledConfig):
            N: int = 100
            epochs: int = 400
            CI = dict(epochs=100)

        cfg = Fig1.for_scale()          # follows ICL_LAB_SCALE
        cfg = Fig1.for_scale("ci", N=50)  # explicit scale plus overrides

    ``validate`` (override it) runs on every construction, so bad values fail early.
    """

    CI = {}  # type: dict[str, Any]

    @classmethod
    def for_scale(cls, scale: str | None = None, /, **overrides):  # '/': a field may be called 'scale'
        s = get_scale(scale)
        names = {f.name for f in fields(cls)}
        values = dict(cls.CI) if s == "ci" else {}
        for key in list(overrides):
            if key not in names:
                raise ConfigError(f"{key} is not a parameter of {cls.__name__} (known: {sorted(names)})")
        values.update(overrides)
        return cls(**values)

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:  # pragma: no cover - default does nothing
        pass

    def replace(self, **changes):
        return replace(self, **changes)


def default_device(device: str | torch.device | None = None) -> torch.device:
    """``device`` if given, else ``$ICL_LAB_DEVICE``, else CUDA when available, else CPU."""
    if device is None:
        device = os.environ.get("ICL_LAB_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ConfigError(f"device must name a torch device such as 'cpu' or 'cuda' (got {device!r})") from e
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} requested but CUDA is not available")
    return dev


_threads_configured = False
_allocator_tuned = False


def tune_allocator() -> bool:
    """Keep freed memory in the process for reuse instead of returning it to the OS (glibc only).

    Batched training over many runs allocates and frees tensors of tens to hundreds of MB every
    step; glibc serves those with mmap/munmap, so every step page-faults fresh memory. Raising the
    mmap and trim thresholds with ``mallopt`` removed that cost: 180 runs of the practical block
    went from 24 s (14 s of it in the kernel) to 14 s for 10 steps, the selectors model at its large
    size from 12 s to 8 s (benchmarks/workloads.py, 1 thread). The price is that the process keeps
    its peak memory until it exits. ``ICL_LAB_MALLOC=0`` turns it off. Returns True if applied."""
    global _allocator_tuned
    if _allocator_tuned:
        return True
    if os.environ.get("ICL_LAB_MALLOC", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        ok = libc.mallopt(M_MMAP_THRESHOLD, 1 << 30) or libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
        ok = ok and libc.mallopt(M_TRIM_THRESHOLD, 1 << 31)
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
        return False
    _allocator_tuned = bool(ok)
    return _allocator_tuned


def configure_threads(n: int | None = None) -> int:
    """Set the number of intra-op threads deliberately and return it.

    Default: ``$ICL_LAB_THREADS`` if set, else ``min(4, cpu count)``.  The experiments here are
    many small matrix products; past a few threads synchronisation costs more than it saves, and on
    a 2-core machine several busy processes each using every core slow each other down.
    """
    global _threads_configured
    if n is None:
        env = os.environ.get("ICL_LAB_THREADS")
        n = int(env) if env else min(4, os.cpu_count() or 1)
    n = max(1, int(n))
    torch.set_num_threads(n)
    tune_allocator()
    _threads_configured = True
    return n


def make_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A seeded ``torch.Generator``: all randomness in icl_lab goes through one of these."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"seed must be an int (got {seed!r})")
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    return g


def make_generators(seeds, device: str | torch.device = "cpu") -> list[torch.Generator]:
    """One generator per run, e.g. ``make_generators(range(10))``."""
    return [make_generator(int(s), device) for s in seeds]


def ensure_threads() -> None:
    """Configure threads once per process unless the user already called :func:`configure_threads`."""
    if not _threads_configured:
        configure_threads()
