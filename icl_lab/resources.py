"""What a task may ask of the machine, checked before it runs.

A task whose estimated peak memory exceeds the limit is refused (one-line ConfigError, nothing computed).
The limit: ``--max-memory``, else ``$ICL_LAB_MAX_MEMORY`` (bytes or K/M/G/T; ``none``: no check), else the
machine's memory. The estimate: the largest prompt tensor the task builds (:func:`estimate`). It refuses
what cannot fit; it is a guard, not a measurement.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re

from .params import ConfigError

MEMORY_ENV = "ICL_LAB_MAX_MEMORY"
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
PROMPT_FIELDS = ("batch", "batch_size", "prompts", "test_prompts", "linear_fit_prompts", "M", "n_prompts", "samples")
CONTEXT_FIELDS = ("N", "N_values", "N_max", "N_train", "N_test", "context", "n_ctx")
DIM_FIELDS = ("d", "D", "dim", "width", "hidden")
RUN_FIELDS = ("seeds", "runs")
BYTES_PER_ENTRY = 8 * 2  # float64, the prompt tensor plus one working copy


def parse_bytes(text, name: str = MEMORY_ENV) -> int | None:
    """``'8G'`` -> 8589934592; ``'none'``/``'off'`` -> None (no limit); a ConfigError otherwise."""
    t = str(text).strip().lower()
    if t in ("none", "off", "inf"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", t)
    if not m or float(m.group(1)) <= 0 or len(t) > 30:
        raise ConfigError(f"{name} must be a memory size such as 8G, 512M or 1000000 bytes, or none (got {text!r})")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def memory_limit(max_memory=None) -> int | None:
    """The limit in bytes (None: unchecked): ``max_memory``, else ``$ICL_LAB_MAX_MEMORY``, else RAM."""
    if max_memory is not None:
        return parse_bytes(max_memory, "max_memory")
    env = os.environ.get(MEMORY_ENV, "").strip()
    if env:
        return parse_bytes(env)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def _largest(cfg, names) -> int | None:
    vals = [max(v, default=None) if isinstance(v, (tuple, list)) else v
            for v in (getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.name in names)]
    vals = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return int(max(vals)) if vals else None


def estimate(cfg) -> int:
    """The largest prompt tensor a task builds: prompts x (context + 1) x dimension x runs x
    BYTES_PER_ENTRY; 0 (not checked) when the config has no prompt or context field."""
    prompts, context = _largest(cfg, PROMPT_FIELDS), _largest(cfg, CONTEXT_FIELDS)
    if prompts is None or context is None:
        return 0
    runs = math.prod(_largest(cfg, (name,)) or 1 for name in RUN_FIELDS)
    return prompts * (context + 1) * (_largest(cfg, DIM_FIELDS) or 1) * runs * BYTES_PER_ENTRY


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**28 else f"{n / 2**20:.0f} MB"


def check_memory(cfg, limit: int | None) -> int:
    """Refuse (ConfigError) a task whose estimated memory exceeds ``limit`` (:func:`memory_limit`; None: no
    limit); returns the estimate."""
    need = estimate(cfg)
    if limit is not None and need > limit:
        raise ConfigError(f"memory: this task would need about {_gb(need)} (estimated from its sizes), more than "
                          f"the limit of {_gb(limit)}; reduce the sizes, or raise the limit with --max-memory / "
                          f"{MEMORY_ENV}")
    return need
