"""Full results of the pages' computations, stored so that the book is built at the papers' setting.

A chapter draws what only a run function's whole result holds: training curves, attention maps, a
trained model's weights. A record (:mod:`icl_lab.store`) keeps an experiment's summary only, so a page
that computes ``fn(cfg)`` itself would train at the papers' setting on every build. :func:`full` keeps
that whole result instead:

``full(fn, *args, **kwargs)`` returns ``fn(*args, **kwargs)``, read from a stored result when one is
**current**: the same function, the same arguments, and the same fingerprint of the code that computes
it (:func:`icl_lab.records.fingerprint` of ``fn``'s module: that module and every computing module it
imports; plotting, widgets, the ledger and the CLI do not count). It looks in the user's results folder
(``results/full/``), then in the shipped layer (``results/reference/full/``), read-only, and otherwise
computes. A result is written only where ``$ICL_LAB_FULL_WRITE`` names a folder: the reference tool
(``tools/reference_pages.sh``) sets it to the shipped one while it executes every page at paper scale.

Each stored result is two files named by a hash of the call: ``<key>.pt`` (``torch.save`` of the result,
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
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

from . import paths
from .records import code_version, cpu_kind, fingerprint, now
from .store import default_root

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
    for suffix, save in ((".pt", lambda f: torch.save(result, f)),
                         (".json", lambda f: f.write(json.dumps(meta, indent=1, sort_keys=True).encode() + b"\n"))):
        tmp = dest / f".{key}.{uuid.uuid4().hex[:12]}.tmp"
        try:
            with open(tmp, "wb") as f:
                save(f)
            os.replace(tmp, dest / f"{key}{suffix}")
        finally:
            tmp.unlink(missing_ok=True)


def _kept(result, keep):
    return result if keep is None else {k: result[k] if isinstance(result, dict) else getattr(result, k) for k in keep}


def full(fn: Callable, *args, _keep: tuple | None = None, **kwargs):
    """``fn(*args, **kwargs)``, read from a current stored result when there is one (see the module).
    ``_keep=("a", "b")`` stores and returns only those entries (keys or attributes) of the result, as a dict:
    for a call whose page uses a few numbers of a large result."""
    keep = None if _keep is None else tuple(_keep)
    try:
        call = call_of(fn, args, kwargs)
    except NotStorable:
        return _kept(fn(*args, **kwargs), keep)
    if keep is not None:
        call["keep"] = list(keep)
    name, key, code = call["function"], key_of(call), code_of(fn.__module__)
    for folder in layers():
        got = _read(folder, name, key, call, code)
        if got is not None:
            return got
    started, t0, c0 = now(), time.perf_counter(), time.process_time()
    result = _kept(fn(*args, **kwargs), keep)
    target = os.environ.get(WRITE_ENV)
    if target:
        meta = dict(format=FORMAT, call=call, fingerprint=code, code=code_version(), started=started,
                    finished=now(), wall_seconds=round(time.perf_counter() - t0, 3),
                    cpu_seconds=round(time.process_time() - c0, 3), threads=torch.get_num_threads(),
                    cpu_kind=cpu_kind(), scale=os.environ.get("ICL_LAB_SCALE"))
        try:
            _write(Path(target), name, key, result, meta)
        except Exception as e:  # noqa: BLE001 - an unpicklable result is still returned, only not stored
            warnings.warn(f"{name}: result not stored ({type(e).__name__}: {e})", stacklevel=2)
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
