"""What a task may ask of the machine, checked before it runs.

**Memory.** Before a task runs, its peak memory is estimated and the task is refused (one-line
:class:`~icl_lab.ConfigError`, nothing computed) when the estimate exceeds the limit: ``--max-memory``
of ``icl-lab run``, else ``$ICL_LAB_MAX_MEMORY`` (bytes, or with a K/M/G/T suffix; ``none`` turns the
check off), else the machine's physical memory. The estimate is the experiment's own
``Experiment.estimate_bytes(cfg)`` when the registry entry gives one, else the conservative
:func:`fallback_estimate` from the config's size fields (prompts x context x dimension x runs: the largest prompt tensor it builds, float64, twice).
It refuses what cannot fit (a batch of 10^5 prompts of 10^5 tokens asks for terabytes); it is not a
measurement, a task under the limit may still need more, and an experiment whose memory is not driven by those fields gets no
fallback estimate (0: not checked).
"""
from __future__ import annotations

import dataclasses
import os
import re

from .params import ConfigError

MEMORY_ENV = "ICL_LAB_MAX_MEMORY"
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
PROMPT_FIELDS = ("batch", "batch_size", "prompts", "test_prompts", "linear_fit_prompts", "M", "n_prompts", "samples")
CONTEXT_FIELDS = ("N", "N_values", "N_max", "N_train", "N_test", "context", "n_ctx")
DIM_FIELDS = ("d", "D", "dim", "width", "hidden")
RUN_FIELDS = ("seeds", "runs")
#: bytes per prompt entry: float64, the prompt tensor plus one working copy. The fallback is the
#: size of the largest prompt tensor a task builds, so a task above the limit cannot fit; one below
#: it may still need more (activations, gradients): a guard, not a measurement.
BYTES_PER_ENTRY = 8 * 2


def parse_bytes(text, name: str = MEMORY_ENV) -> int | None:
    """``'8G'`` -> 8589934592; ``'none'``/``'off'`` -> None (no limit); a ConfigError otherwise."""
    t = str(text).strip().lower()
    if t in ("none", "off", "inf"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", t)
    if not m or float(m.group(1)) <= 0 or len(t) > 30:
        raise ConfigError(f"{name} must be a memory size such as 8G, 512M or 1000000 bytes, or none (got {text!r})")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def memory_limit(max_memory=None) -> int | None:
    """The limit in bytes (None: unchecked): ``max_memory``, else ``$ICL_LAB_MAX_MEMORY``, else RAM."""
    if max_memory is not None:
        return parse_bytes(max_memory, "max_memory")
    env = os.environ.get(MEMORY_ENV, "").strip()
    return parse_bytes(env) if env else physical_memory()


def _largest(cfg, names) -> int | None:
    vals = []
    for f in dataclasses.fields(cfg):
        if f.name in names:
            v = getattr(cfg, f.name)
            v = max(v, default=None) if isinstance(v, (tuple, list)) else v
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                vals.append(v)
    return int(max(vals)) if vals else None


def fallback_estimate(cfg) -> int:
    """Conservative peak bytes from the size fields: prompts x (context + 1) x dimension x runs x
    BYTES_PER_ENTRY; 0 when the config has no prompt or context field (not estimated)."""
    prompts, context = _largest(cfg, PROMPT_FIELDS), _largest(cfg, CONTEXT_FIELDS)
    if prompts is None or context is None:
        return 0
    dim = _largest(cfg, DIM_FIELDS) or 1
    runs = 1
    for name in RUN_FIELDS:
        runs *= _largest(cfg, (name,)) or 1
    return prompts * (context + 1) * dim * runs * BYTES_PER_ENTRY


def estimate_bytes(exp, cfg) -> int:
    fn = getattr(exp, "estimate_bytes", None)
    return int(fn(cfg)) if fn is not None else fallback_estimate(cfg)


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**28 else f"{n / 2**20:.0f} MB"


def check_memory(exp, cfg, max_memory=None) -> int:
    """Refuse (ConfigError) a task whose estimated memory exceeds the limit; returns the estimate."""
    need = estimate_bytes(exp, cfg)
    limit = memory_limit(max_memory)
    if limit is not None and need > limit:
        raise ConfigError(f"memory: this task would need about {_gb(need)} (estimated from its sizes), more than the "
                          f"limit of {_gb(limit)}; reduce the sizes, or raise the limit with --max-memory / {MEMORY_ENV}")
    return need
