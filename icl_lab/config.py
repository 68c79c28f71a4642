"""Scales, devices, threads and seeded generators.

* **Scales** — every experiment has three configurations, chosen by the environment variable
  ``ICL_LAB_SCALE`` (or ``scale=`` in code): ``paper`` (exactly the paper's parameters; where the
  paper gives none, the documented reference setting), ``book`` (the default for notebooks and the
  book: ``paper`` wherever it fits the book's budget, each reduction declared with its reason) and
  ``ci`` (smaller, for the test suite, but still showing the effect the claims check).
* **Device** — ``ICL_LAB_DEVICE`` (``cpu``, ``cuda``, ``cuda:1`` ...) overrides the automatic
  choice (CUDA when available).
* **Threads** — on small machines PyTorch's default of one thread per core oversubscribes when
  several processes (pytest, a Jupyter kernel, the book build) run at once, and oversubscribed threads
  slow these many-small-matrix workloads down several-fold.  :func:`configure_threads` sets a deliberate number (``ICL_LAB_THREADS`` overrides).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from typing import TypeVar

import torch

from .params import ConfigError, check_fields, constraints_of, one_of

SCALES = ("ci", "book", "paper")
DEFAULT_SCALE = "book"
_T = TypeVar("_T")


def get_scale(scale: str | None = None) -> str:
    """The active scale: ``scale`` if given, else ``$ICL_LAB_SCALE``, else ``'book'``."""
    if scale is None:
        scale = os.environ.get("ICL_LAB_SCALE", DEFAULT_SCALE).strip() or DEFAULT_SCALE
        return one_of("ICL_LAB_SCALE", scale, SCALES)
    return one_of("scale", scale, SCALES)


def by_scale(scale: str | None = None, **variants: _T) -> _T:
    """Pick a value per scale: ``by_scale(ci=200, paper=2000)`` (``book`` defaults to ``paper``)."""
    s = get_scale(scale)
    if "book" not in variants and "paper" in variants:
        variants = dict(variants, book=variants["paper"])
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

    Subclasses define their fields with the ``paper`` values as defaults, declare each field's
    allowed values once in ``PARAMS`` (see :mod:`icl_lab.params`), and give the overrides of the
    smaller scales: ``CI`` for the test suite, ``BOOK`` for the book, with the reason for every
    ``BOOK`` reduction in ``BOOK_WHY`` (the reproduction page lists them as the book's deviations
    from the paper)::

        @dataclass(frozen=True)
        class Fig4(ScaledConfig):
            runs: int = 30
            epochs: int = 400
            PARAMS = dict(runs=Int(1, 1000), epochs=Int(1, 10**5))
            CI = dict(runs=2, epochs=20)
            BOOK = dict(runs=3)
            BOOK_WHY = dict(runs="30 runs per L take 25 min on 2 cores; 3 show the same ordering")

        cfg = Fig4.for_scale()            # follows ICL_LAB_SCALE
        cfg = Fig4.for_scale("ci", epochs=5)  # explicit scale plus overrides

    Every construction checks each field against its declaration, then runs :meth:`validate`
    (override it for rules that span fields, e.g. ``K <= d``), so bad values fail before any
    computation with an error that names the field.
    """

    CI = {}  # type: dict[str, object]
    BOOK = {}  # type: dict[str, object]
    BOOK_WHY = {}  # type: dict[str, str]
    PARAMS = {}  # type: dict[str, object]

    @classmethod
    def scale_overrides(cls, scale: str | None = None) -> dict:
        s = get_scale(scale)
        return dict(cls.CI) if s == "ci" else dict(cls.BOOK) if s == "book" else {}

    @classmethod
    def for_scale(cls, scale: str | None = None, /, **overrides):  # '/': a field may be called 'scale'
        names = {f.name for f in fields(cls)}
        values = cls.scale_overrides(scale)
        for key in list(overrides):
            if key not in names:
                raise ConfigError(f"{key} is not a parameter of {cls.__name__} (known: {sorted(names)})")
        values.update(overrides)
        return cls(**values)

    @classmethod
    def deviations(cls) -> list[dict]:
        """The book's reductions of the paper's setting: ``[{field, paper, book, why}]``."""
        paper = cls()
        return [dict(field=k, paper=getattr(paper, k), book=v, why=cls.BOOK_WHY.get(k, ""))
                for k, v in cls.BOOK.items() if getattr(paper, k) != v]

    def __post_init__(self):
        if constraints_of(type(self)):  # every field declared: check and normalise each one
            for name, value in check_fields(self).items():
                object.__setattr__(self, name, value)
        self._check_seed_range()
        self.validate()

    def _check_seed_range(self) -> None:
        """Run r uses seed ``seed + r``: the last run's seed must stay inside ``seed``'s declared range
        (so the seeds a sweep splits across tasks are seeds the config accepts)."""
        cons = constraints_of(type(self)).get("seed")
        seed, seeds = getattr(self, "seed", None), getattr(self, "seeds", None)
        if isinstance(seed, int) and isinstance(seeds, int) and getattr(cons, "hi", None) is not None:
            if seed + seeds - 1 > cons.hi:
                raise ConfigError(f"seed + seeds - 1 must be <= {cons.hi}: run r uses seed + r "
                                  f"(got seed={seed}, seeds={seeds})")

    def validate(self) -> None:
        """Rules that span several fields (each field's own range is declared in ``PARAMS``)."""

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


def progress_enabled(progress: bool | None = None) -> bool:
    """The one progress switch: ``progress`` if given, else on in a terminal or a Jupyter notebook
    (a notebook bar), and never when ``$CI`` is set or ``ICL_LAB_PROGRESS=0`` (Dask workers, the
    book build and the tests)."""
    if progress is not None:
        return bool(progress)
    if os.environ.get("CI") or os.environ.get("ICL_LAB_PROGRESS") == "0":
        return False
    return sys.stderr.isatty() or "ipykernel" in sys.modules


MAX_THREADS = 1024
_threads_configured = False


def threads_from_env(name: str = "ICL_LAB_THREADS") -> int | None:
    """``$ICL_LAB_THREADS`` (or ``name``) as an integer in [1, MAX_THREADS], None when unset."""
    env = os.environ.get(name, "").strip()
    if not env:
        return None
    try:
        n = int(env)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_THREADS:
        raise ConfigError(f"{name} must be an integer in [1, {MAX_THREADS}] (got {env!r})")
    return n
_allocator_tuned = False


def tune_allocator() -> bool:
    """Keep freed memory in the process for reuse instead of returning it to the OS (glibc only).

    Batched training over many runs allocates and frees tensors of tens to hundreds of MB every
    step; glibc serves those with mmap/munmap, so every step page-faults fresh memory. Raising the
    mmap and trim thresholds with ``mallopt`` removes that cost (the measurements, from
    ``benchmarks/workloads.py``, are in ``benchmarks/README.md``). The price is that the process keeps
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
        n = threads_from_env() or min(4, os.cpu_count() or 1)
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
