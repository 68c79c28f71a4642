"""The results store: one JSON record per completed task (format: :mod:`icl_lab.records`) at
``<root>/<experiment>/<key>.json``, ``key`` hashing the experiment and its whole config.

Writes are atomic (temporary file, fsync, :func:`os.replace`). An unusable file (not a regular file, over
64 MB, unparsable, off the schema, failing its checksum, key and config disagreeing) or a record computed
by other code counts as missing: the task is recomputed. A task's lock, ``.<key>.lock`` beside its record,
is an OS file lock, released by the kernel however its holder ends.

The results folder's one rule, applied alike by :meth:`ResultsStore.read`, :meth:`~ResultsStore.write` and
the pre-flight :meth:`~ResultsStore.check_writable`: the results folder itself may be a symlink and lie
anywhere; what lies inside it (an experiment's folder, a record) may be a symlink only to a place inside the
results folder. An experiment folder or a record that leads out of it is refused: it is never served, and
nothing is computed for a folder that leads out (the pre-flight says so in one line).

A configuration's seeds may be stored as several tasks (seed chunks), merged back into one summary as
its summary function declares (:func:`icl_lab.registry.returns`): ``per_seed`` entries are concatenated
along their seed axis, ``timings`` are summed, every other entry must be the same in every chunk.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import time
import uuid
import warnings
from pathlib import Path

from filelock import FileLock

from . import paths, registry
from .params import ConfigError
from .records import (StoreError, checksum, config_from_json, config_key, config_to_json, record_problem, seeds_of,
                      without_seeds)

MAX_RECORD_BYTES = 64 * 1024 * 1024  # a stray multi-GB file is refused, not loaded
RESULTS_ENV = "ICL_LAB_RESULTS"
MIN_FREE_BYTES = 16 * 1024 * 1024  # free space needed before a sweep or load_or_run computes anything


def _why(e: Exception) -> str:
    return getattr(e, "strerror", None) or str(e)


def check_root(root, name: str = "results") -> Path:
    """A results folder path, checked without creating anything: not empty, names of at most 255 bytes,
    at most 4096 in all, no symlink loop, not an existing non-folder."""
    text = os.fspath(root) if isinstance(root, (str, os.PathLike)) else None
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{name} must name a folder (got {root!r})")
    path = Path(text)
    if len(os.fsencode(text)) > 4096 or any(len(os.fsencode(part)) > 255 for part in path.parts):
        raise ConfigError(f"{name} must be a path whose names are at most 255 bytes (got {text[:60]!r}...)")
    try:
        path.resolve(strict=False)
        is_file = path.exists() and not path.is_dir()
    except (OSError, RuntimeError) as e:  # ELOOP; RuntimeError: symlink loop on older Pythons
        raise ConfigError(f"{name}: {text!r} cannot be used ({_why(e)})") from None
    if is_file:
        raise ConfigError(f"{name} must be a folder (got the file {text!r})")
    return path


def default_root() -> Path:
    """``$ICL_LAB_RESULTS`` if set, else ``results/`` at the book's root, else ``./results``."""
    env = os.environ.get(RESULTS_ENV)
    return check_root(env, RESULTS_ENV) if env else paths.results_dir()


def is_current(rec: dict, exp=None) -> bool:
    """True when the record was computed by its experiment's (default: the registered one's) current code."""
    exp = exp or registry.all_experiments().get(rec.get("experiment"))
    code = rec.get("meta", {}).get("code")
    return exp is not None and isinstance(code, dict) and code.get("fingerprint") == exp.fingerprint


class ResultsStore:
    """Records under ``root``, read-write, above the shipped reference records (``results/reference``),
    read-only: :meth:`get` and :meth:`summary` serve a current record of either, the results folder first."""

    def __init__(self, root: str | os.PathLike | None = None, reference: bool = True):
        self.root = default_root() if root is None else check_root(root)
        shipped = paths.REFERENCE
        self.reference = (ResultsStore(shipped, reference=False) if reference and shipped.is_dir()
                          and shipped.resolve() != Path(self.root).resolve() else None)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r})"

    def outside(self, path) -> bool:
        """True when ``path`` (an experiment's folder or a record, resolved through every symlink) does not
        lie inside the results folder: the one rule of what may be a symlink (module docstring)."""
        try:
            return Path(self.root).resolve() not in Path(path).resolve(strict=False).parents
        except (OSError, RuntimeError):  # a symlink loop: it leads nowhere inside
            return True

    def path(self, experiment: str, key: str) -> Path:
        return self.root / experiment / f"{key}.json"

    def path_for(self, experiment: str, cfg) -> Path:
        return self.path(experiment, config_key(experiment, cfg))

    def lock(self, experiment: str, key: str) -> FileLock:
        """The lock of a task (not yet acquired); creates the experiment's folder."""
        folder = self.root / experiment
        folder.mkdir(parents=True, exist_ok=True)
        return FileLock(folder / f".{key}.lock", thread_local=False)

    def write(self, record: dict) -> Path:
        """Write a record atomically (the shipped reference folder: only ``tools/reference_runs.sh``)."""
        root = Path(self.root).resolve()
        if root == paths.REFERENCE.resolve() and not os.environ.get("ICL_LAB_REFERENCE_TOOL"):
            raise StoreError(f"results: {str(self.root)!r} holds the shipped reference records, which only "
                             "tools/reference_runs.sh writes; store your results in another folder")
        record = {**record, "checksum": checksum(record)}
        problem = record_problem(record)
        if problem:  # also: an experiment name or key that would lead outside the results folder
            raise StoreError(f"record {record.get('experiment')!r}/{record.get('key')!r} {problem}; not written")
        path = self.path(record["experiment"], record["key"])
        if self.outside(path.parent):  # checked before and after creating it: nothing is made outside
            raise StoreError(f"record path {str(path)!r} leads outside the results folder; not written")
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.outside(path.parent):
            raise StoreError(f"record path {str(path)!r} leads outside the results folder; not written")
        text = json.dumps(record, indent=1, sort_keys=True, allow_nan=True) + "\n"
        paths.atomic_write(path, lambda f: f.write(text.encode()))
        return path

    def read(self, path: str | os.PathLike, experiments: dict | None = None) -> dict:
        """A record, checked (a regular file of at most MAX_RECORD_BYTES, not a link leading out of the
        results folder; JSON, schema, checksum, file name = key, and the config valid for its experiment
        when that is in ``experiments``); a :class:`StoreError` otherwise."""
        path = Path(path)
        try:
            if self.outside(path.resolve(strict=True)):  # the record or its folder is a link leading out
                raise StoreError(f"result file {str(path)!r} links out of the results folder")
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise StoreError(f"result file {str(path)!r} is not a regular file")
                with os.fdopen(fd, "rb", closefd=False) as f:
                    raw = f.read(MAX_RECORD_BYTES + 1)
            finally:
                os.close(fd)
        except (OSError, RuntimeError) as e:  # RuntimeError: symlink loop on older Pythons
            raise StoreError(f"result file {str(path)!r} cannot be read ({_why(e)})") from None
        if len(raw) > MAX_RECORD_BYTES:
            raise StoreError(f"result file {str(path)!r} is larger than {MAX_RECORD_BYTES} bytes")
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:  # bad JSON, huge ints, deep nesting
            raise StoreError(f"result file {str(path)!r} is not readable JSON ({type(e).__name__})") from None
        problem = record_problem(rec)
        if problem:
            raise StoreError(f"result file {str(path)!r} {problem}")
        if rec["checksum"] != checksum(rec):
            raise StoreError(f"result file {str(path)!r} fails its checksum (damaged: the checksum detects "
                             "accidental corruption, not deliberate edits)")
        if path.stem != rec["key"] or path.parent.name != rec["experiment"]:
            raise StoreError(f"result file {str(path)!r} holds {rec['experiment']}/{rec['key']} (moved or renamed)")
        exp = (experiments or {}).get(rec["experiment"])
        if exp is not None:
            try:
                cfg = config_from_json(exp.config, rec["config"])
            except (ConfigError, TypeError) as e:
                raise StoreError(f"result file {str(path)!r} holds an invalid config ({e})") from None
            if config_key(rec["experiment"], cfg) != rec["key"]:
                raise StoreError(f"result file {str(path)!r}: key does not match its config")
        return rec

    def _layers(self) -> list:
        return [layer for layer in (self, self.reference) if layer is not None]

    def get(self, experiment: str, cfg, *, exp=None, warn: bool = True, stale: bool = False) -> dict | None:
        """The valid record of ``cfg`` in the results folder, else among the shipped references; None when
        missing, unusable (with a warning) or stale (other code; ``stale=True`` serves it). ``exp``: the
        registered experiment, whose declared summary the record must match."""
        for layer in self._layers():
            path = layer.path_for(experiment, cfg)
            if not os.path.lexists(path) or not os.path.isfile(path) or layer.outside(path.parent):
                continue  # nothing; not a file (a folder, a FIFO, a dangling link); a folder leading out:
                # no warning, check_writable refuses those in one line before anything computes
            try:
                rec = layer.read(path, {experiment: exp} if exp is not None else None)
                problem = exp.summary_problem(rec["summary"]) if exp is not None else None
                if problem:  # e.g. an edited record whose checksum was recomputed
                    raise StoreError(f"result file {str(path)!r} is unusable: {problem}")
            except StoreError as e:
                if warn:
                    warnings.warn(f"{e}; it will be recomputed", stacklevel=2)
                continue
            if rec["config"] == config_to_json(cfg) and (stale or is_current(rec, exp)):  # else a hash collision
                return rec
        return None

    def summary(self, experiment: str, cfg, exp) -> dict | None:
        """The summary of ``cfg``: a current record's (:meth:`get`), else the merged summary of current seed
        chunks that tile its seeds exactly, in the results folder or among the shipped references; or None."""
        rec, seeds = self.get(experiment, cfg, exp=exp), seeds_of(cfg)
        if rec is not None or seeds is None:
            return None if rec is None else rec["summary"]
        want = without_seeds(config_to_json(cfg))
        for layer in self._layers():
            found = {int(rec["config"]["seed"]): rec for _, rec, _ in layer.records(experiment, {experiment: exp})
                     if rec is not None and is_current(rec, exp) and exp.summary_problem(rec["summary"]) is None
                     and without_seeds(rec["config"]) == want}
            order, s = [], seeds[0]
            while s in found and s <= seeds[-1] and int(found[s]["config"]["seeds"]) >= 1:
                order.append(found[s])
                s += int(found[s]["config"]["seeds"])
            if order and s == seeds[-1] + 1:
                try:
                    return merge_records(exp, order)
                except StoreError as e:
                    warnings.warn(f"{experiment}: stored seed chunks cannot be merged ({e}); computing the whole "
                                  "config", stacklevel=2)
        return None

    def check_writable(self, experiment: str | None = None, keys=(), min_free: int = MIN_FREE_BYTES) -> None:
        """Fail (one-line ConfigError naming the folder) before anything is computed if the records could not
        be stored: the folder cannot be created, leads out of the results folder (the module's one rule),
        cannot take what a task writes (its lock and its temporary file at once: two inodes), has under
        ``min_free`` bytes free, or a record's path is taken by something not a file. Folders it created
        are removed again (empty), whatever the outcome."""
        root = Path(self.root)
        folder = root / experiment if experiment else root
        created = [p for p in dict.fromkeys((root, folder)) if not p.exists()]
        problem = None
        try:
            nowhere = [p for p in dict.fromkeys((root, folder)) if p.is_symlink() and not p.exists()]
            if nowhere:
                problem = (f"{str(nowhere[0])!r} is a link to nowhere (dangling, or a loop); remove it or point it "
                           "at a folder")
            elif experiment and self.outside(folder):
                problem = (f"{str(folder)!r} leads out of the results folder {str(root)!r} (a link); "
                           "remove the link so the records are stored inside")
            else:
                folder.mkdir(parents=True, exist_ok=True)
                self._probe(folder)
                free = shutil.disk_usage(folder).free
                taken = [p for p in (self.path(experiment, k) for k in keys) if os.path.lexists(p) and not p.is_file()]
                if free < min_free:
                    problem = (f"only {free // 1024} KB free in {str(folder)!r} (at least {min_free // 1024} KB "
                               "needed); free some space first")
                elif taken:
                    problem = f"{str(taken[0])!r} is not a file; remove it so the record can be stored"
        except OSError as e:
            problem = f"cannot write to {str(folder)!r} ({e.strerror or e})"
        for p in reversed(created):  # leave nothing behind: a task makes its folder with its lock
            with contextlib.suppress(OSError):
                p.rmdir()
        if problem:
            raise ConfigError(f"results: {problem}")

    @staticmethod
    def _probe(folder: Path) -> None:
        """Create what a task creates in ``folder``, both at once (its lock, its temporary record), and
        remove them: a folder without two free inodes, or read-only, fails here (OSError)."""
        tag, made = uuid.uuid4().hex[:12], []
        try:
            for suffix in (".lock", ".tmp"):
                p = folder / f".write-test-{tag}{suffix}"
                os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
                made.append(p)
        finally:
            for p in made:
                with contextlib.suppress(OSError):
                    p.unlink()

    def records(self, experiment: str | None = None, experiments: dict | None = None):
        """Every stored file as ``(path, record or None, error or None)``, sorted by path."""
        base = self.root / experiment if experiment else self.root
        out = []
        for p in sorted(base.glob("*.json" if experiment else "*/*.json")) if base.is_dir() else []:
            try:
                out.append((p, self.read(p, experiments), None))
            except (StoreError, ConfigError) as e:
                out.append((p, None, str(e)))
        return out

    def clean_tmp(self, older_than: float = 0.0) -> int:
        """Remove temporary files of writers killed mid-write, last modified over ``older_than`` s ago."""
        n, now = 0, time.time()
        for p in self.root.glob("*/.*.tmp") if self.root.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                if now - p.stat().st_mtime >= older_than:
                    p.unlink()
                    n += 1
        return n


# ----------------------------------------------------------------------------- seed chunks
def strip_timings(summary: dict, timings=("seconds",)) -> dict:
    """A summary without its timing entries (they differ between identical runs)."""
    return {k: v for k, v in summary.items() if k not in timings}


def _concat(values: list, depth: int, counts: list[int], key: str):
    """Concatenate equal-shaped values along the list axis at nesting ``depth`` (a dict: in every entry)."""
    if isinstance(values[0], dict):  # a table of per-seed values: the axis is in every entry
        if any(not isinstance(v, dict) or list(v) != list(values[0]) for v in values):
            raise StoreError(f"cannot merge {key!r} across seed chunks: the chunks' entries differ")
        return {k: _concat([v[k] for v in values], depth, counts, f"{key}.{k}") for k in values[0]}
    if depth == 0:
        if not all(isinstance(v, list) and len(v) == n for v, n in zip(values, counts)):
            raise StoreError(f"cannot merge {key!r} across seed chunks: its seed axis is not as long as the "
                             "chunks' seeds")
        return [x for v in values for x in v]
    if not all(isinstance(v, list) and len(v) == len(values[0]) for v in values):
        raise StoreError(f"cannot merge {key!r} across seed chunks: the chunks' values have different shapes")
    return [_concat([v[i] for v in values], depth - 1, counts, key) for i in range(len(values[0]))]


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
            out[k] = _concat(vals, per_seed[k], list(seed_counts), k)
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
