"""The one way a page, the synthesis and the tools get a result: :func:`full`.

``full(fn, *args, **kwargs)`` returns ``fn(*args, **kwargs)``, read from the results store when a stored
result is **current** (computed by the same function, with the same arguments, by code with the same
fingerprint: :func:`icl_lab.records.fingerprint` of ``fn``'s module, that module and every computing module it
imports; plotting, widgets, the ledger and the command line do not count), and computed otherwise. It looks,
in order:

1. for a registered experiment's run function called as ``fn(cfg)`` whose experiment declares
   ``from_summary``: a current record of ``cfg`` (whole, or seed chunks that tile its seeds) in the user's
   results folder, then among the shipped reference records, rebuilt into a result by ``from_summary``. These
   are the paper-scale runs of hours that ``tools/reference_runs.sh`` stores and CI recomputes chunk by chunk;
2. a stored whole result: ``$ICL_LAB_FULL_WRITE`` if set, the user's ``results/full/``, then the shipped
   ``results/reference/full/`` (read-only), written by ``tools/reference_pages.sh`` for what a page draws
   (training curves, attention maps, trained weights) and a record's summary does not keep;
3. otherwise it computes, after the experiment's own check of what the run would draw (a registered
   experiment's ``check``), and writes the whole result only where ``$ICL_LAB_FULL_WRITE`` names a folder.

``full(fn, cfg, _summary=True)`` returns a registered experiment's summary instead (a record's, else the
summary of the result found or computed as above); ``_if_stored=True`` returns None instead of computing
(a page that compares with a paper-scale run only when one is stored); ``_keep=("a", "b")`` stores and
returns only those entries of a large result.

Records are written by ``icl-lab run`` (:mod:`icl_lab.sweep`) and :func:`icl_lab.runner.load_or_run`, never by
a page: a page reads what is stored and computes the rest, so two runs of a page show the same numbers.

Each stored whole result is two files named by a hash of the call: ``<key>.pt`` (``torch.save`` of the result,
read to the CPU) and ``<key>.json`` (the call, the fingerprint, and where, when and how long it ran, which
the reproduction page lists). Arguments must be plain values (numbers, strings, tuples, lists, dicts,
config dataclasses); a call with anything else is computed, never stored.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

from . import paths
from .records import code_version, cpu_kind, fingerprint, jsonable, now
from .registry import experiments
from .store import ResultsStore, default_root

FOLDER = "full"
WRITE_ENV = "ICL_LAB_FULL_WRITE"
FORMAT = 1


class NotStorable(TypeError):
    """An argument :func:`full` cannot key a stored result on."""


def _canon(x: Any):
    """A JSON value that names ``x`` exactly (floats by their shortest repr, types by name)."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return {"int": str(x)}
    if isinstance(x, float):
        return {"float": repr(x)}
    if isinstance(x, (tuple, list)):
        return {type(x).__name__: [_canon(v) for v in x]}
    if isinstance(x, dict):
        return {"dict": [[_canon(k), _canon(v)] for k, v in sorted(x.items(), key=lambda kv: repr(kv[0]))]}
    if isinstance(x, torch.dtype):
        return {"dtype": str(x)}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        cls = type(x)
        return {"dataclass": f"{cls.__module__}.{cls.__qualname__}",
                "fields": {f.name: _canon(getattr(x, f.name)) for f in dataclasses.fields(x)}}
    raise NotStorable(f"an argument of type {type(x).__name__} cannot key a stored result")


def name_of(fn: Callable) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def call_of(fn: Callable, args: tuple, kwargs: dict) -> dict:
    """The JSON description of a call (raises :class:`NotStorable`)."""
    if not fn.__module__.startswith("icl_lab.") or "<" in fn.__qualname__:
        raise NotStorable(f"{name_of(fn)} is not a library function")
    return {"function": name_of(fn), "args": _canon(tuple(args)), "kwargs": _canon(dict(kwargs))}


def key_of(call: dict) -> str:
    return hashlib.sha256(json.dumps(call, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


@functools.lru_cache(maxsize=None)
def code_of(module: str) -> str:
    return fingerprint(module)


def layers() -> list[Path]:
    """Where stored results are read, in order: ``$ICL_LAB_FULL_WRITE`` if set, the user's results folder,
    then the shipped one."""
    target = os.environ.get(WRITE_ENV)
    out = [*([Path(target)] if target else []), Path(default_root()) / FOLDER, paths.REFERENCE / FOLDER]
    return [p for i, p in enumerate(out) if p.resolve() not in {q.resolve() for q in out[:i]}]


def _read(folder: Path, name: str, key: str, call: dict, code: str):
    meta_path = folder / name / f"{key}.json"
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return None
    if meta.get("call") != call or meta.get("format") != FORMAT:
        return None
    if meta.get("fingerprint") != code:  # computed by other code: say so, a paper-scale call can take long
        warnings.warn(f"{name}: the result stored in {meta_path.parent} was computed by other code; computing it "
                      "again (tools/reference_pages.sh regenerates the shipped ones)", stacklevel=3)
        return None
    try:
        return torch.load(folder / name / f"{key}.pt", map_location="cpu", weights_only=False)
    except Exception:  # noqa: BLE001 - a damaged or unreadable file: compute instead
        return None


def _write(folder: Path, name: str, key: str, result, meta: dict) -> None:
    dest = folder / name
    dest.mkdir(parents=True, exist_ok=True)
    paths.atomic_write(dest / f"{key}.pt", lambda f: torch.save(result, f))
    paths.atomic_write(dest / f"{key}.json", lambda f: f.write(json.dumps(meta, indent=1, sort_keys=True).encode() + b"\n"))


def _kept(result, keep):
    return result if keep is None else {k: result[k] if isinstance(result, dict) else getattr(result, k) for k in keep}


def _experiment(fn: Callable, args: tuple, kwargs: dict):
    """``(name, Experiment)`` when ``fn`` is a registered experiment's run function called as ``fn(cfg)``
    with a config of that experiment; else ``(None, None)``."""
    if len(args) != 1 or set(kwargs) - {"device"}:
        return None, None
    for name, exp in experiments().items():
        if exp.run is fn and isinstance(args[0], exp.config):
            return name, exp
    return None, None


def _summary_of(exp, result) -> dict:
    return jsonable(exp.summary(result), "summary")


def full(fn: Callable, *args, _keep: tuple | None = None, _summary: bool = False, _if_stored: bool = False, **kwargs):
    """``fn(*args, **kwargs)``, read from the results store when a current result is stored, else computed
    (see the module: records of experiments with ``from_summary``, then stored whole results, then computing).
    ``_summary=True``: the registered experiment's summary instead; ``_if_stored=True``: None instead of
    computing; ``_keep=("a", "b")``: store and return only those entries (keys or attributes), as a dict."""
    keep = None if _keep is None else tuple(_keep)
    name, exp = _experiment(fn, args, kwargs)
    if _summary and exp is None:
        raise TypeError(f"full(..., _summary=True) needs a registered experiment's run function called with its "
                        f"config (got {name_of(fn)})")
    if exp is not None and (_summary or exp.from_summary is not None):
        summary = ResultsStore().summary(name, args[0], exp)  # the results folder, then the shipped references
        if summary is not None:
            return summary if _summary else exp.from_summary(args[0], summary)
    result = _stored_or_computed(fn, args, kwargs, keep, exp, _if_stored)
    return _summary_of(exp, result) if _summary and result is not None else result


def _stored_or_computed(fn: Callable, args: tuple, kwargs: dict, keep, exp, if_stored: bool):
    try:
        call = call_of(fn, args, kwargs)
    except NotStorable:
        call = None
    if call is not None:
        if keep is not None:
            call["keep"] = list(keep)
        name, key, code = call["function"], key_of(call), code_of(fn.__module__)
        for folder in layers():
            got = _read(folder, name, key, call, code)
            if got is not None:
                return got
    if if_stored:
        return None
    if exp is not None and exp.check is not None:
        exp.check(args[0])  # e.g. prompts that leave a feature unqueried: refused before any computation
    started, t0, c0 = now(), time.perf_counter(), time.process_time()
    result = _kept(fn(*args, **kwargs), keep)
    target = os.environ.get(WRITE_ENV)
    if target and call is not None:
        meta = dict(format=FORMAT, call=call, fingerprint=code, code=code_version(), started=started,
                    finished=now(), wall_seconds=round(time.perf_counter() - t0, 3),
                    cpu_seconds=round(time.process_time() - c0, 3), threads=torch.get_num_threads(),
                    cpu_kind=cpu_kind(), scale=os.environ.get("ICL_LAB_SCALE"))
        try:
            _write(Path(target), name, key, result, meta)
        except Exception as e:  # noqa: BLE001 - an unpicklable result is still returned, only not stored
            warnings.warn(f"{name}: result not stored ({type(e).__name__}: {e})", stacklevel=3)
    return result


def stored(folder: Path | None = None) -> list[dict]:
    """The metadata of every stored result under ``folder`` (default: the shipped layer), each with
    ``current`` (its fingerprint is the current code's) and ``bytes`` (its result file's size)."""
    folder = Path(folder or paths.REFERENCE / FOLDER)
    out = []
    for meta_path in sorted(folder.glob("*/*.json")):
        meta = json.loads(meta_path.read_text())
        module = meta["call"]["function"]
        mod = module.rsplit(".", 1)[0]
        while mod and not _is_module(mod):
            mod = mod.rsplit(".", 1)[0]
        pt = meta_path.with_suffix(".pt")
        out.append({**meta, "path": str(meta_path), "bytes": pt.stat().st_size if pt.exists() else None,
                    "current": bool(mod) and meta.get("fingerprint") == code_of(mod)})
    return out


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


#: fields that time a computation: they differ between two runs of the same code, so they are not compared
TIMINGS = frozenset({"seconds", "cpu_seconds", "wall_seconds", "elapsed"})


def differences(a, b, where: str = "result", out: list | None = None) -> list[str]:
    """Where two results differ, bit for bit (NaN equals NaN), at most a few places; fields and keys named
    in ``TIMINGS`` are not compared."""
    import math

    import numpy as np

    out = [] if out is None else out
    if len(out) >= 3:
        return out
    if type(a) is not type(b):
        out.append(f"{where}: {type(a).__name__} against {type(b).__name__}")
    elif isinstance(a, torch.nn.Module):
        differences(a.state_dict(), b.state_dict(), f"{where}.state_dict()", out)
    elif isinstance(a, torch.Tensor):
        same = a.shape == b.shape and a.dtype == b.dtype and bool(
            torch.equal(a, b) or (a.is_floating_point() and ((a == b) | (a.isnan() & b.isnan())).all()))
        if not same:
            gap = ((a.double() - b.double()).abs().max().item() if a.shape == b.shape and a.numel() else None)
            out.append(f"{where}: tensors differ" + (f" (largest difference {gap:.3g})" if gap is not None else ""))
    elif isinstance(a, np.ndarray):
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            out.append(f"{where}: arrays differ")
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            if f.name in TIMINGS:
                continue
            differences(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}", out)
    elif isinstance(a, dict):
        if a.keys() != b.keys():
            out.append(f"{where}: keys differ")
        else:
            for k in a:
                if k not in TIMINGS:
                    differences(a[k], b[k], f"{where}[{k!r}]", out)
    elif isinstance(a, (list, tuple)):
        if len(a) != len(b):
            out.append(f"{where}: lengths {len(a)} and {len(b)}")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                differences(x, y, f"{where}[{i}]", out)
    elif isinstance(a, float):
        if not (a == b or (math.isnan(a) and math.isnan(b))):
            out.append(f"{where}: {a!r} against {b!r}")
    elif hasattr(a, "__dict__") and not callable(a):
        differences(vars(a), vars(b), where, out)
    else:
        try:
            equal = bool(a == b)
        except Exception:  # noqa: BLE001 - objects without a usable equality: compare their repr
            equal = repr(a) == repr(b)
        if not equal:
            out.append(f"{where}: {a!r} against {b!r}"[:200])
    return out


def recompute(meta: dict):
    """Call the function a stored result's metadata names, with its arguments, again (no store)."""
    import importlib

    module, _, qual = meta["call"]["function"].rpartition(".")
    while module:
        try:
            obj = importlib.import_module(module)
            break
        except ImportError:
            module, _, head = module.rpartition(".")
            qual = f"{head}.{qual}"
    for part in qual.split("."):
        obj = getattr(obj, part)
    keep = meta["call"].get("keep")
    return _kept(obj(*_uncanon(meta["call"]["args"]), **_uncanon(meta["call"]["kwargs"])), keep and tuple(keep))


def _uncanon(x):
    """The inverse of :func:`_canon`."""
    import importlib

    if x is None or isinstance(x, (bool, str)):
        return x
    (kind, v), *_ = x.items()
    if kind == "int":
        return int(v)
    if kind == "float":
        return float(v)
    if kind in ("tuple", "list"):
        return (tuple if kind == "tuple" else list)(_uncanon(e) for e in v)
    if kind == "dict":
        return {_uncanon(k): _uncanon(e) for k, e in v}
    if kind == "dtype":
        return getattr(torch, v.removeprefix("torch."))
    if kind == "dataclass":
        module, _, name = v.rpartition(".")
        cls = importlib.import_module(module)
        for part in name.split("."):
            cls = getattr(cls, part)
        return cls(**{k: _uncanon(e) for k, e in x["fields"].items()})
    raise NotStorable(f"cannot rebuild an argument of kind {kind!r}")
