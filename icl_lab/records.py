"""The record format of the results store (:mod:`icl_lab.store`): configs as JSON, keys, checksums,
metadata, the schema every record is checked against, and the code fingerprint that makes a record current."""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy
import torch

from . import schemas
from .params import ConfigError, coerce_value

FORMAT = "icl-lab-result/1"  # the record schema's format (icl_lab/schemas/record.schema.json)
LOSS_WORDS = ("loss", "losses")
PACKAGE = Path(__file__).resolve().parent
#: modules that present, store or schedule results: not part of any experiment's fingerprint
#: (nor is a paper's figures*.py), so editing them never makes a record stale
NOT_COMPUTING = frozenset({"plotting", "widgets", "claims", "claims_html", "render", "cli", "reports", "notebook",
                           "paths", "store", "runner", "sweep", "registry", "records", "resources", "memo",
                           "schemas", "coverage"})


class StoreError(ConfigError):
    """A stored file that cannot be used (unreadable, corrupt, or for another configuration)."""


class TaskError(RuntimeError):
    """A task that ran but produced nothing storable (e.g. a diverged, non-finite loss)."""


def without_seeds(config: dict) -> dict:
    """A stored config without its seed split (a task may hold a chunk of the seeds)."""
    return {k: v for k, v in config.items() if k not in ("seed", "seeds")}


def leaves(value, path=""):
    """Every leaf of a JSON value (not a dict or list) as ``(path, leaf)``: ``a.b[0]``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _number(v, types=(int, float)) -> bool:
    return isinstance(v, types) and not isinstance(v, bool)


def summary_problem(summary) -> str | None:
    """Why a summary (a dict with string keys) must not be stored or served, or None. NaN/inf may mark
    an undefined quantity, but not a loss (an entry named with the word loss/losses, except a time
    ``T_*``/``t_*``, NaN when a level is never reached), nor every number at once: a diverged run."""
    if not isinstance(summary, dict) or not all(isinstance(k, str) for k in summary):
        return f"the summary must be a dict with string keys (got {type(summary).__name__})"
    nums = [(p, v) for p, v in leaves(summary) if _number(v)]
    for path, v in nums:
        names = [n for n in re.split(r"[.\[\]]", path) if n and not n.isdigit() and not n.startswith(("T_", "t_"))]
        words = [w.lower() for n in names for w in n.split("_")]
        if isinstance(v, float) and not math.isfinite(v) and any(w in LOSS_WORDS for w in words):
            return f"the summary has a non-finite loss ({path} = {v}): the run diverged"
    if nums and not any(isinstance(v, int) or math.isfinite(v) for _, v in nums):
        return f"every number of the summary is non-finite ({len(nums)} values): the run diverged"
    return None


def record_problem(rec) -> str | None:
    """Why a parsed record cannot be used, or None: where it breaks the record schema
    (``icl_lab/schemas/record.schema.json``: ``is invalid at meta.wall_seconds: must be a number >= 0
    (got -1.0)``), a time that is not finite, or a summary that must not be served (:func:`summary_problem`)."""
    found = schemas.problem("record", rec)
    if found:
        path, rule = found
        return f"is invalid at {schemas.field(path)}: {rule}" if path else f"is invalid: {rule}"
    for k in ("wall_seconds", "cpu_seconds"):  # JSON Schema has no NaN or infinity to refuse
        if k in rec["meta"] and not math.isfinite(rec["meta"][k]):
            return f"is invalid at meta.{k}: must be a finite number >= 0 (got {rec['meta'][k]!r})"
    problem = summary_problem(rec["summary"])
    return problem and f"is unusable: {problem}"


# ----------------------------------------------------------------------------- configs <-> JSON
def jsonable(value, where: str):
    """``value`` as JSON types (tuples -> lists, number keys -> strings); a ConfigError naming ``where`` otherwise."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return int(value) if isinstance(value, int) else float(value)
    if isinstance(value, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            k = str(k) if isinstance(k, (int, float)) and not isinstance(k, bool) else k  # as JSON would
            if not isinstance(k, str):
                raise ConfigError(f"{where} must have string or number keys to be stored (got {k!r})")
            out[k] = jsonable(v, f"{where}[{k!r}]")
        return out
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy / torch scalars
        return jsonable(value.item(), where)
    if hasattr(value, "tolist"):  # numpy arrays, tensors
        return jsonable(value.tolist(), where)
    raise ConfigError(f"{where} must be JSON-serialisable (numbers, strings, lists, dicts); got {type(value).__name__}")


def config_to_json(cfg) -> dict:
    """Every field of a config dataclass as JSON-compatible values."""
    if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
        raise ConfigError(f"cfg must be a config dataclass instance (got {type(cfg).__name__})")
    return {f.name: jsonable(getattr(cfg, f.name), f.name) for f in dataclasses.fields(cfg)}


def config_from_json(cls, data: dict):
    """Rebuild (and so validate) a config from :func:`config_to_json`'s output."""
    if not isinstance(data, dict):
        raise StoreError(f"config must be an object of field values (got {type(data).__name__})")
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise StoreError(f"config has fields {unknown} that {cls.__name__} does not know (known: {names})")
    return cls(**{k: coerce_value(cls, k, v) for k, v in data.items()})


def _sha256(obj) -> str:  # NaN/inf allowed: they may mark undefined values (summary_problem)
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()).hexdigest()


def config_key(experiment: str, cfg) -> str:
    """The file name (without ``.json``) of a configuration's record."""
    return _sha256({"experiment": experiment, "config": config_to_json(cfg)})[:24]


def checksum(record: dict) -> str:
    return "sha256:" + _sha256({k: v for k, v in record.items() if k != "checksum"})


def seeds_of(cfg) -> list | None:
    """The seeds a config trains (``seed .. seed + seeds - 1``), or None if it has no seed fields."""
    if {"seed", "seeds"} <= {f.name for f in dataclasses.fields(cfg)}:
        return list(range(int(cfg.seed), int(cfg.seed) + int(cfg.seeds)))
    return None


# ----------------------------------------------------------------------------- code fingerprint
def _source_of(module: str) -> Path | None:
    """The file of an importable module (a package's ``__init__.py``), without importing it."""
    if module == "icl_lab" or module.startswith("icl_lab."):
        base = PACKAGE.joinpath(*module.split(".")[1:])
        return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    spec = importlib.util.find_spec(module)  # a plug-in's module
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _computing(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return not (module.count(".") == 1 and last in NOT_COMPUTING) and not last.startswith("figures")


@functools.lru_cache(maxsize=256)  # parsing is most of a fingerprint's cost; the arguments are the text
def _imports_of(module: str, text: str) -> frozenset[str]:
    """The icl_lab modules ``module`` imports (anywhere in it); ``from pkg import name`` counts the
    submodule ``pkg.name`` where one exists, else the package."""
    out, pkg = set(), module if _source_of(module).name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            mod = (importlib.util.resolve_name("." * node.level + (node.module or ""), pkg) if node.level
                   else node.module)
            if mod.startswith("icl_lab"):
                subs = {f"{mod}.{a.name}" for a in node.names if _source_of(f"{mod}.{a.name}") is not None}
                out |= subs or {mod}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("icl_lab")}
    return frozenset(out)


#: a config class's reduced-scale overrides: they choose which configs run, and a config is part of its
#: record's key, so changing them cannot make a stored result of another config wrong
SCALE_OVERRIDES = frozenset({"CI", "BOOK", "BOOK_WHY"})


def _override(node) -> bool:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in SCALE_OVERRIDES)


@functools.lru_cache(maxsize=256)
def _code_of(source: bytes) -> bytes:
    """A module's syntax tree without docstrings and without the ``CI``/``BOOK``/``BOOK_WHY`` assignments
    of its classes: rewording a comment or a docstring, re-wrapping a line or changing a reduced scale
    leaves records current."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.ClassDef):
            body = node.body = [b for b in body if not _override(b)] or [ast.Pass()]
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False).encode()


def fingerprint(module: str, sources: dict | None = None) -> str:
    """What makes a stored result current: SHA-256 (16 hex digits) of the syntax trees of ``module``
    (an experiment's run function's) and every library module it imports, directly or not, except
    ``NOT_COMPUTING`` and a paper's ``figures*.py``. ``sources``: ``{Path: bytes}`` to use instead of
    the files (tests)."""
    sources = sources or {}
    seen, todo, h = {}, [module], hashlib.sha256()
    while todo:
        name = todo.pop()
        path = _source_of(name)
        if name in seen or path is None or (name != module and not _computing(name)):
            continue
        seen[name] = sources[path] if path in sources else path.read_bytes()
        todo.extend(_imports_of(name, seen[name].decode()))
    for name in sorted(seen):
        h.update(name.encode() + b"\0" + _code_of(seen[name]))
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- metadata
def _git(*args: str) -> str | None:
    """What git prints for ``args`` in the package's folder; None outside a checkout or without git."""
    try:
        done = subprocess.run(["git", "-C", str(PACKAGE), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def code_version() -> dict:
    """icl_lab's version and, in a git checkout, its commit and whether the tree had uncommitted changes."""
    try:
        version = importlib.metadata.version("icl_lab")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout without installing
        version = None
    commit = _git("rev-parse", "HEAD")
    dirty = _git("status", "--porcelain", "--", ".") if commit else None
    return {"icl_lab": version, "git_commit": commit, "git_dirty": None if dirty is None else bool(dirty)}


def library_versions() -> dict:
    out = {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__}
    out.update({m: getattr(sys.modules[m], "__version__", None) for m in ("dask", "distributed") if m in sys.modules})
    return out


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@functools.lru_cache(maxsize=1)
def cpu_kind() -> str:
    """What kind of CPU, numerically, this is: 12 hex digits of SHA-256 of the exact bits a fixed float
    workload gives on one torch thread (float32 and float64 matrix products of several shapes, softmax,
    exp, tanh, sqrt, sums). Two machines of one kind compute the same floats for the same code; kinds
    whose math libraries pick other vector kernels differ in the last bits, which a training amplifies
    (seen here between two machine kinds: a selectors training 10-20 % apart, a window-paper fit 3e-7)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        g, h = torch.Generator().manual_seed(20261127), hashlib.sha256()
        for n, k, m in ((257, 129, 263), (64, 72, 74), (8, 1000, 3), (1500, 56, 32)):
            a, b = torch.randn(n, k, generator=g), torch.randn(k, m, generator=g)
            x = a @ b
            for t in (x, torch.softmax(x / 7, -1), torch.exp(x / 50), torch.tanh(x).sum(-1), (x * x).sum(0).sqrt(),
                      torch.bmm(a[None].expand(3, n, k), b[None].expand(3, k, m)), a.double() @ b.double(),
                      torch.log_softmax(x.double(), 0)):
                h.update(t.contiguous().numpy().tobytes())
        return h.hexdigest()[:12]
    finally:
        torch.set_num_threads(threads)


def make_record(experiment: str, cfg, summary: dict, *, scale: str | None = None, overrides: dict | None = None,
                started: str, wall: float, cpu: float, device: str, threads: int | None = None,
                fingerprint: str | None = None) -> dict:
    """A record (without checksum) for a completed task; ``fingerprint``: its experiment's code."""
    meta = dict(code={**code_version(), "fingerprint": fingerprint}, versions=library_versions(), device=device,
                threads=threads, host=socket.gethostname(), pid=os.getpid(), started=started, finished=now(),
                wall_seconds=wall, cpu_seconds=cpu, cpu_kind=cpu_kind() if str(device).startswith("cpu") else None)
    return dict(format=FORMAT, experiment=experiment, key=config_key(experiment, cfg), config=config_to_json(cfg),
                seeds=seeds_of(cfg), scale=scale, overrides=jsonable(overrides or {}, "overrides"),
                summary=jsonable(summary, f"{experiment} summary"), meta=meta)
