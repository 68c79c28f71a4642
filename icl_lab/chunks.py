"""Seed chunks: a configuration's seeds trained as several tasks, merged back into one summary.

How each entry merges is declared with the summary function (:func:`icl_lab.registry.returns`):
``per_seed`` entries are concatenated along their seed axis, ``timings`` are summed, and every other
entry must be the same in every chunk. Nothing is guessed from shapes or names.
"""
from __future__ import annotations

import warnings

from .records import StoreError, config_to_json, seeds_of, without_seeds
from .store import is_current


def strip_timings(summary: dict, timings=("seconds",)) -> dict:
    """A summary without its timing entries (they differ between identical runs)."""
    return {k: v for k, v in summary.items() if k not in timings}


def _concat(values: list, depth: int, counts: list[int], key: str):
    """Concatenate equal-shaped values along the list axis at nesting ``depth``."""
    if depth == 0:
        if not all(isinstance(v, list) and len(v) == n for v, n in zip(values, counts)):
            raise StoreError(f"cannot merge {key!r} across seed chunks: its seed axis is not as long as the "
                             "chunks' seeds")
        return [x for v in values for x in v]
    if not all(isinstance(v, list) and len(v) == len(values[0]) for v in values):
        raise StoreError(f"cannot merge {key!r} across seed chunks: the chunks' values have different shapes")
    return [_concat([v[i] for v in values], depth - 1, counts, key) for i in range(len(values[0]))]


def _merge_value(values: list, depth: int, counts: list[int], key: str):
    if isinstance(values[0], dict):  # a table of per-seed values: the axis is in every entry
        if any(not isinstance(v, dict) or list(v) != list(values[0]) for v in values):
            raise StoreError(f"cannot merge {key!r} across seed chunks: the chunks' entries differ")
        return {k: _merge_value([v[k] for v in values], depth, counts, f"{key}.{k}") for k in values[0]}
    return _concat(values, depth, counts, key)


def merge_chunks(summaries: list[dict], seed_counts: list[int], per_seed: dict | None = None,
                 timings=("seconds",)) -> dict:
    """Merge the summaries of seed chunks of one configuration, in seed order. ``per_seed``:
    ``{key: depth of its seed axis}``; ``timings``: keys that are summed; every other key must be
    equal in all chunks. Raises :class:`StoreError` when the chunks do not fit the declaration."""
    if len(summaries) != len(seed_counts) or not summaries:
        raise StoreError("summaries and seed_counts must be non-empty and of equal length")
    if len(summaries) == 1:
        return summaries[0]
    keys = list(summaries[0])
    if any(list(s) != keys for s in summaries):
        raise StoreError("chunk summaries have different keys")
    out = {}
    for k in keys:
        vals = [s[k] for s in summaries]
        if k in timings and all(isinstance(v, (int, float)) for v in vals):
            out[k] = float(sum(vals))
        elif k in (per_seed or {}):
            out[k] = _merge_value(vals, per_seed[k], list(seed_counts), k)
        elif all(v == vals[0] for v in vals[1:]):
            out[k] = vals[0]
        else:
            raise StoreError(f"cannot merge {k!r} across seed chunks: it differs between chunks and is not "
                             "declared per seed")
    return out


def merge_records(exp, records: list[dict]) -> dict:
    """The merged summary of an experiment's seed-chunk records (in seed order)."""
    keys = exp.summary_keys
    return merge_chunks([r["summary"] for r in records], [len(r.get("seeds") or [0]) for r in records],
                        keys.per_seed if keys else None, keys.timings if keys else ("seconds",))


def from_chunks(store, experiment: str, exp, cfg) -> dict | None:
    """The merged summary of stored seed chunks that tile ``cfg``'s seeds exactly, or None."""
    seeds = seeds_of(cfg)
    if seeds is None:
        return None
    want = without_seeds(config_to_json(cfg))
    found = {int(rec["config"]["seed"]): rec for _, rec, _ in store.records(experiment, {experiment: exp})
             if rec is not None and is_current(rec, exp) and exp.summary_problem(rec["summary"]) is None
             and without_seeds(rec["config"]) == want}
    order, s = [], seeds[0]
    while s in found and s <= seeds[-1] and int(found[s]["config"]["seeds"]) >= 1:
        order.append(found[s])
        s += int(found[s]["config"]["seeds"])
    if not order or s != seeds[-1] + 1:
        return None
    try:
        return merge_records(exp, order)
    except StoreError as e:
        warnings.warn(f"{experiment}: stored seed chunks cannot be merged ({e}); computing the whole config",
                      stacklevel=3)
        return None
