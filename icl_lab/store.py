"""A results store that loses nothing: one JSON file per completed task, written atomically.

A *task* is one experiment configuration (a grid point with a chunk of its seeds).  Its record is
stored at ``<root>/<experiment>/<key>.json`` where ``key`` is a hash of the experiment's name and
the complete configuration, so the same configuration always lands in the same file, however it
was reached (``--scale ci`` plus overrides or ``--scale paper``).  A record holds::

    format      "icl-lab-result/1"
    experiment  "common.context_length"
    key         the file's name (hash of experiment + config)
    config      every field of the config (JSON: tuples as lists)
    seeds       the seeds this task trained (``seed .. seed + seeds - 1``), or null
    scale       the scale the config started from; overrides: the fields set on top of it
    summary     the experiment's ``summary(result)``: JSON numbers, strings, lists, dicts
    meta        code version (icl_lab version, git commit, dirty flag), device, Python and library
                versions, host, process id, start/end time, wall and CPU seconds
    checksum    "sha256:<hex>" of the canonical JSON of everything above

Writes go to a temporary file in the same folder, are flushed and fsync'ed, then renamed over the
final name with :func:`os.replace` (atomic on POSIX), and the folder is fsync'ed: a reader sees
either no file or a complete one, and a process killed at any point leaves at most a stray
``.*.tmp`` file (ignored, and removed by :meth:`ResultsStore.clean_tmp`).  A file that is not a
regular file inside the store, is over 64 MB, whose JSON does not parse, whose fields have the wrong
types (:func:`record_problem`), whose summary is not finite where it must be, whose checksum does
not match, or whose key/config disagree is *unusable*: readers treat it as missing, so the task is
recomputed and the file replaced.  The checksum detects accidental damage (truncation, flipped
bytes); it does not authenticate: anyone who can write the folder can edit a record and recompute
its checksum.  A record computed by other library code (another :func:`source_hash`) is stale and
recomputed too, by ``icl-lab run`` and :func:`load_or_run` alike.

While a task runs, its writer holds a claim file ``.<key>.lock`` next to the record, so a second
identical sweep waits for that task instead of computing it again.  The holder touches its claim
every few seconds; a claim is ignored (taken over) once its process is gone, a zombie or another
process under the same pid (same host), or once it has not been touched for ``ICL_LAB_LOCK_STALE``
seconds (default 120: a holder on another host that was killed).  So a wait for a claim ends.

Notebooks call :func:`load_or_run`: the stored summary of a configuration when present and valid,
else the experiment is run, stored and its summary returned.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
import warnings
from pathlib import Path

from ._checks import ConfigError
from .records import (FORMAT, KEY, StoreError, TaskError, _canonical, _jsonable, _now, checksum,  # noqa: F401
                      code_version, config_from_json, config_key, config_to_json, library_versions,
                      make_record, record_problem, seeds_of, source_hash, summary_problem)

#: Largest record file the reader opens (a stray multi-GB file is refused, not loaded).
MAX_RECORD_BYTES = 64 * 1024 * 1024
RESULTS_ENV = "ICL_LAB_RESULTS"
#: free space the results folder must have before a sweep or load_or_run computes anything
MIN_FREE_BYTES = 16 * 1024 * 1024


class Busy(RuntimeError):
    """The task is being computed by another live process (it holds the claim file)."""


# ----------------------------------------------------------------------------- the store
def check_root(root, name: str = "results") -> Path:
    """A results folder path, checked without creating anything: not empty, every name at most
    255 bytes, the path at most 4096, no symlink loop, and not an existing non-folder."""
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
        raise ConfigError(f"{name}: {text!r} cannot be used ({getattr(e, 'strerror', None) or e})") from None
    if is_file:
        raise ConfigError(f"{name} must be a folder (got the file {text!r})")
    return path


def default_root() -> Path:
    """``$ICL_LAB_RESULTS`` if set, else ``results/`` in the book's root (the nearest folder above
    the working directory holding ``_config.yml``), else ``./results``."""
    env = os.environ.get(RESULTS_ENV)
    if env:
        return check_root(env, RESULTS_ENV)
    here = Path.cwd().resolve()
    root = next((p for p in [here, *here.parents] if (p / "_config.yml").exists()), here)
    return root / "results"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


class ResultsStore:
    """Records under ``root`` (see the module docstring for the layout and record format)."""

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r})"

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = default_root() if root is None else check_root(root)

    # -- paths
    def path(self, experiment: str, key: str) -> Path:
        return self.root / experiment / f"{key}.json"

    def path_for(self, experiment: str, cfg) -> Path:
        return self.path(experiment, config_key(experiment, cfg))

    # -- writing
    def write(self, record: dict) -> Path:
        """Write a record atomically (tmp file + fsync + os.replace + fsync of the folder)."""
        record = dict(record)
        record["checksum"] = checksum(record)
        problem = record_problem(record)
        if problem:  # also: an experiment name or key that would lead outside the results folder
            raise StoreError(f"record {record.get('experiment')!r}/{record.get('key')!r} {problem}; not written")
        data = json.dumps(record, indent=1, sort_keys=True, allow_nan=True) + "\n"
        path = self.path(record["experiment"], record["key"])
        path.parent.mkdir(parents=True, exist_ok=True)
        if Path(self.root).resolve() not in path.parent.resolve().parents:
            raise StoreError(f"record path {str(path)!r} leads outside the results folder; not written")
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{record['key']}.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it: collaborators can read it
            with os.fdopen(fd, "w") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(path.parent)
        return path

    # -- reading
    def _read_bounded(self, path: Path) -> bytes:
        """The bytes of a record file: a regular file only (no FIFO, device or directory), at most
        MAX_RECORD_BYTES, and not a link leading out of the results folder."""
        try:
            real = path.resolve(strict=True)
            root = Path(self.root).resolve()
            if path.is_symlink() and root not in real.parents:
                raise StoreError(f"result file {str(path)!r} links out of the results folder")
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise StoreError(f"result file {str(path)!r} is not a regular file")
                if st.st_size > MAX_RECORD_BYTES:
                    raise StoreError(f"result file {str(path)!r} is larger than {MAX_RECORD_BYTES} bytes")
                with os.fdopen(fd, "rb", closefd=False) as f:
                    raw = f.read(MAX_RECORD_BYTES + 1)
            finally:
                os.close(fd)
        except (OSError, RuntimeError) as e:  # RuntimeError: symlink loop on older Pythons
            raise StoreError(f"result file {str(path)!r} cannot be read ({getattr(e, 'strerror', None) or e})") from None
        if len(raw) > MAX_RECORD_BYTES:
            raise StoreError(f"result file {str(path)!r} is larger than {MAX_RECORD_BYTES} bytes")
        return raw

    def read(self, path: str | os.PathLike, experiments: dict | None = None) -> dict:
        """A record, checked: JSON parses, format and checksum match, the file name is the key of
        the stored experiment + config, and the config is valid for the experiment's config class
        (when the experiment is registered).  Raises :class:`StoreError` otherwise."""
        path = Path(path)
        raw = self._read_bounded(path)
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:  # bad JSON, huge ints, deep nesting
            raise StoreError(f"result file {str(path)!r} is not readable JSON ({type(e).__name__})") from None
        problem = record_problem(rec)
        if problem:
            raise StoreError(f"result file {str(path)!r} {problem}")
        if rec["checksum"] != checksum(rec):
            raise StoreError(f"result file {str(path)!r} fails its checksum (damaged: the checksum detects accidental corruption, not deliberate edits)")
        if path.stem != rec["key"] or path.parent.name != rec["experiment"]:
            raise StoreError(f"result file {str(path)!r} holds {rec['experiment']}/{rec['key']} (moved or renamed)")
        if experiments is not None and rec["experiment"] in experiments:
            try:
                cfg = config_from_json(experiments[rec["experiment"]].config, rec["config"])
            except (ConfigError, TypeError) as e:
                raise StoreError(f"result file {str(path)!r} holds an invalid config ({e})") from None
            if config_key(rec["experiment"], cfg) != rec["key"]:
                raise StoreError(f"result file {str(path)!r}: key does not match its config")
        return rec

    def get(self, experiment: str, cfg, *, warn: bool = True, stale: bool = False) -> dict | None:
        """The valid record of ``cfg``, or None when missing, unusable (reported with a warning;
        overwritten when the task is recomputed) or stale: computed by other library code
        (:func:`source_hash`) -- the one policy of ``icl-lab run`` and :func:`load_or_run`;
        ``stale=True`` serves such records too."""
        path = self.path_for(experiment, cfg)
        if not os.path.lexists(path):
            return None
        try:
            rec = self.read(path)
        except StoreError as e:
            if warn:
                warnings.warn(f"{e}; it will be recomputed", stacklevel=2)
            return None
        if rec["config"] != config_to_json(cfg):  # pragma: no cover - a hash collision
            return None
        problem = _shape_problem(experiment, rec["summary"])
        if problem:  # e.g. an edited record whose checksum was recomputed
            if warn:
                warnings.warn(f"result file {str(path)!r} is unusable: {problem}; it will be recomputed", stacklevel=2)
            return None
        if not stale and not is_current(rec):
            return None
        return rec

    # -- before computing
    def check_writable(self, min_free: int = MIN_FREE_BYTES) -> None:
        """Fail (ConfigError) before anything is computed if results could not be stored: the
        folder cannot be created or written, or has less than ``min_free`` bytes free."""
        root = Path(self.root)
        try:
            root.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=root, prefix=".write-test-"):
                pass
            free = shutil.disk_usage(root).free
        except OSError as e:
            raise ConfigError(f"results: cannot write to {str(root)!r} ({e.strerror or e})") from None
        if free < min_free:
            raise ConfigError(f"results: only {free // 1024} KB free in {str(root)!r} "
                              f"(at least {min_free // 1024} KB needed); free some space first")

    # -- claims: one process computes a task, others wait for its record
    def _lock(self, experiment: str, key: str) -> Path:
        return self.root / experiment / f".{key}.lock"

    def claim(self, experiment: str, key: str) -> Path:
        """Take the claim file of a task, or raise :class:`Busy` if a live process holds it.  The
        claim is kept fresh (its time touched every few seconds) until :meth:`release`."""
        lock = self._lock(experiment, key)
        lock.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                if not _stale_lock(lock):
                    raise Busy(f"{experiment}/{key} is being computed by another process ({lock})") from None
                lock.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as f:
                json.dump({"host": socket.gethostname(), "pid": os.getpid(), "start": _process_start(os.getpid()),
                           "time": time.time()}, f)
            _HEARTBEAT.hold(lock)
            return lock
        raise Busy(f"{experiment}/{key}: its claim file {lock} keeps reappearing")

    def release(self, lock: Path) -> None:
        _HEARTBEAT.drop(Path(lock))
        Path(lock).unlink(missing_ok=True)

    def records(self, experiment: str | None = None, experiments: dict | None = None):
        """Every stored file as ``(path, record or None, error or None)``, sorted by path."""
        base = self.root / experiment if experiment else self.root
        if not base.exists():
            return []
        pattern = "*.json" if experiment else "*/*.json"
        out = []
        for p in sorted(base.glob(pattern)):
            try:
                out.append((p, self.read(p, experiments), None))
            except (StoreError, ConfigError) as e:
                out.append((p, None, str(e)))
        return out

    def clean_tmp(self, older_than: float = 0.0) -> int:
        """Remove temporary files left by processes killed mid-write (those last modified more
        than ``older_than`` seconds ago, so a write in progress elsewhere is left alone)."""
        n = 0
        if self.root.exists():
            now = time.time()
            for p in self.root.glob("*/.*.tmp"):
                try:
                    if now - p.stat().st_mtime >= older_than:
                        p.unlink()
                        n += 1
                except FileNotFoundError:
                    pass
        return n


def is_current(rec: dict) -> bool:
    """True when the record was computed by the current library source (:func:`source_hash`)."""
    code = rec.get("meta", {}).get("code")
    return isinstance(code, dict) and code.get("source") == source_hash()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: a claim not touched for this long (seconds; ``$ICL_LAB_LOCK_STALE``) is ignored, whoever holds it
LOCK_STALE_SECONDS = 120
#: how often a holder touches its claims (seconds)
HEARTBEAT_SECONDS = 5.0


class _Heartbeat:
    """One daemon thread per process that touches every claim this process holds, so that a claim
    whose holder stopped (killed, on another host) goes stale after ``LOCK_STALE_SECONDS``."""

    def __init__(self):
        self._held: set = set()
        self._lock = threading.Lock()
        self._thread = None
        self._pid = None

    def hold(self, path: Path) -> None:
        with self._lock:
            self._held.add(path)
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._pid = os.getpid()  # a forked child starts its own thread
                self._thread = threading.Thread(target=self._beat, name="icl-lab-claims", daemon=True)
                self._thread.start()

    def drop(self, path: Path) -> None:
        with self._lock:
            self._held.discard(path)

    def _beat(self) -> None:
        while True:
            time.sleep(HEARTBEAT_SECONDS)
            with self._lock:
                held = list(self._held)
            for p in held:
                try:
                    os.utime(p)
                except OSError:  # released meanwhile, or the folder went away
                    pass


_HEARTBEAT = _Heartbeat()


def _process_start(pid: int):
    """The start time of process ``pid`` in clock ticks since boot (Linux), or None: with the pid
    it names one process, so a claim of a dead process whose pid was reused is recognised."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _process_alive(pid: int, start) -> bool:
    """Whether the process that took a claim still runs on this host: not gone, not a zombie
    (killed but not yet reaped) and not another process that reuses its pid."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return True  # no /proc (not Linux): os.kill's word
    if fields[:1] in ([b"Z"], [b"X"]):
        return False
    return start is None or not isinstance(start, int) or int(fields[19]) == start


def _stale_lock(lock: Path) -> bool:
    """A claim whose process is gone (same host), or not touched for ICL_LAB_LOCK_STALE seconds."""
    try:
        age = time.time() - lock.stat().st_mtime
        info = json.loads(lock.read_text()[:1000])
        host, pid = info["host"], int(info["pid"])
    except FileNotFoundError:
        return True
    except (OSError, ValueError, KeyError, TypeError):  # unreadable: stale once it is not fresh
        return time.time() - lock.stat().st_mtime > 60 if lock.exists() else True
    limit = float(os.environ.get("ICL_LAB_LOCK_STALE") or LOCK_STALE_SECONDS)
    if age > limit:
        return True
    if host == socket.gethostname():
        return not _process_alive(pid, info.get("start"))
    return False


def run_and_record(experiment: str, cfg, *, scale: str | None = None, overrides: dict | None = None,
                   device=None, threads: int | None = None, experiments: dict | None = None) -> dict:
    """Run one configuration in this process and return its record (not yet written)."""
    import torch

    from .config import configure_threads, default_device, ensure_threads
    from .registry import resolve_experiment

    exp = resolve_experiment(experiment, experiments)
    if threads is not None:
        configure_threads(threads)
    else:
        ensure_threads()
    dev = default_device(device)
    started, t0, c0 = _now(), time.perf_counter(), time.process_time()
    result = exp.run(cfg, device=dev) if _accepts_device(exp.run) else exp.run(cfg)
    summary = exp.summary(result)
    if not isinstance(summary, dict):
        raise ConfigError(f"{experiment}'s summary must return a dict (got {type(summary).__name__})")
    summary = _jsonable(summary, f"{experiment} summary")
    problem = summary_problem(summary)
    if problem:
        raise TaskError(f"{experiment}: {problem}; nothing stored (a smaller learning rate or fewer steps may help)")
    problem = exp.summary_shape_problem(summary)
    if problem:
        raise TaskError(f"{experiment}: {problem}; nothing stored (its summary function's returns() is out of date)")
    return make_record(experiment, cfg, summary, scale=scale, overrides=overrides, started=started,
                       wall=time.perf_counter() - t0, cpu=time.process_time() - c0, device=str(dev),
                       threads=torch.get_num_threads())


def _shape_problem(experiment: str, summary) -> str | None:
    """The registered experiment's shape check of a stored summary (None for an experiment this
    process does not know, e.g. a plug-in that is not loaded)."""
    from .registry import all_experiments

    try:
        exp = all_experiments().get(experiment)
    except Exception:  # noqa: BLE001 - a broken plug-in must not make every record unreadable
        return None
    return exp.summary_shape_problem(summary) if exp is not None else None


def _accepts_device(fn) -> bool:
    import inspect

    try:
        return "device" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


# ----------------------------------------------------------------------------- merging seed chunks
TIMING_WORDS = ("seconds", "time", "timing", "timings", "wall", "elapsed")


def is_timing_key(key: str) -> bool:
    """Summary keys that hold timings (differ between identical runs): ``seconds``, ``fit_time``..."""
    parts = str(key).lower().replace("-", "_").split("_")
    return any(p in TIMING_WORDS for p in parts)


def strip_timings(summary):
    """A summary without its timing entries (for comparing runs bit for bit)."""
    if isinstance(summary, dict):
        return {k: strip_timings(v) for k, v in summary.items() if not is_timing_key(k)}
    if isinstance(summary, list):
        return [strip_timings(v) for v in summary]
    return summary


def _lengths(value, depth: int):
    """Length of the lists found at nesting depth ``depth`` (None if not a list there / ragged)."""
    level = [value]
    for _ in range(depth):
        nxt = []
        for v in level:
            if not isinstance(v, list):
                return None
            nxt.extend(v)
        level = nxt
    lens = {len(v) for v in level if isinstance(v, list)}
    if len(lens) != 1 or not all(isinstance(v, list) for v in level):
        return None
    return lens.pop()


def _shape(value) -> tuple:
    out = []
    while isinstance(value, list):
        out.append(len(value))
        value = value[0] if value else None
    return tuple(out)


def _concat(values: list, depth: int):
    if depth == 0:
        return [x for v in values for x in v]
    return [_concat([v[i] for v in values], depth - 1) for i in range(len(values[0]))]


def merge_chunks(summaries: list[dict], seed_counts: list[int]) -> dict:
    """Merge the summaries of seed chunks of one configuration into one summary, in seed order.

    Per key: equal values in every chunk are kept; timing entries are summed; a value with a
    *seed axis* — the unique nesting depth whose list length equals every chunk's seed count — is
    concatenated along it.  Raises :class:`StoreError` when a key fits none of these (e.g. a
    seed-averaged statistic) or the seed axis is ambiguous (every chunk has the same number of
    seeds and another axis has that length too).
    """
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
        if is_timing_key(k) and all(isinstance(v, (int, float)) for v in vals):
            out[k] = float(sum(vals))
        elif all(v == vals[0] for v in vals[1:]):
            out[k] = vals[0]  # the same in every chunk: a config-derived value (e.g. the N grid)
        elif isinstance(vals[0], dict):
            out[k] = merge_chunks(vals, seed_counts)
        else:
            depths = [dep for dep in range(len(_shape(vals[0])))
                      if all(_lengths(v, dep) == n for v, n in zip(vals, seed_counts))
                      and len({_shape(v)[:dep] + _shape(v)[dep + 1:] for v in vals}) == 1]
            if len(depths) != 1:
                raise StoreError(f"cannot merge {k!r} across seed chunks: "
                                 + ("no axis of length seeds" if not depths else f"ambiguous seed axis {depths}"))
            out[k] = _concat(vals, depths[0])
    return out


# ----------------------------------------------------------------------------- notebooks' entry point
def load_or_run(experiment: str, cfg=None, results_dir: str | os.PathLike | None = None, *, scale: str | None = None,
                device=None, recompute: bool = False) -> dict:
    """The summary of ``experiment`` at config ``cfg``: read from the results store when a valid
    record exists, else computed in this process, stored atomically and returned.

    ``cfg`` defaults to the experiment's config at ``scale`` (``$ICL_LAB_SCALE`` when None).  A
    sweep that split this config's seeds into chunks (``icl-lab run --seeds-per-task``) is found
    too: chunks that tile the config's seeds exactly are merged with :func:`merge_chunks`.
    ``results_dir`` defaults to ``$ICL_LAB_RESULTS`` or ``results/`` at the book's root. A record is
    used only if the library source that computed it is the current one (:func:`source_hash`).

    Example (in a chapter)::

        from icl_lab import store
        cfg = ContextLengthConfig.for_scale()
        summary = store.load_or_run("common.context_length", cfg)
    """
    from .config import get_scale
    from .registry import for_scale, resolve_experiment

    exp = resolve_experiment(experiment)
    s = get_scale(scale)
    if cfg is None:
        cfg = for_scale(exp.config, s, {})
    elif not isinstance(cfg, exp.config):
        raise ConfigError(f"cfg must be a {exp.config.__name__} for {experiment} (got {type(cfg).__name__})")
    st = ResultsStore(results_dir)
    if not recompute:
        rec = st.get(experiment, cfg)  # None if stale: computed by other library code
        if rec is not None:
            return rec["summary"]
        merged = _from_chunks(st, experiment, exp, cfg)
        if merged is not None:
            return merged
    from .resources import check_memory

    check_memory(exp, cfg)
    st.check_writable()  # a read-only or full folder fails now, not after the computation
    rec = run_and_record(experiment, cfg, scale=s, device=device)
    st.write(rec)
    return rec["summary"]


def _from_chunks(st: ResultsStore, experiment: str, exp, cfg) -> dict | None:
    seeds = seeds_of(cfg)
    if seeds is None:
        return None
    want = {k: v for k, v in config_to_json(cfg).items() if k not in ("seed", "seeds")}
    chunks = {}
    for _, rec, err in st.records(experiment):
        if rec is None or not is_current(rec):
            continue
        c = rec["config"]
        if {k: v for k, v in c.items() if k not in ("seed", "seeds")} == want:
            chunks[int(c["seed"])] = rec
    order, s = [], seeds[0]
    while s in chunks and s < seeds[-1] + 1:
        order.append(chunks[s])
        s += int(chunks[s]["config"]["seeds"])
    if not order or s != seeds[-1] + 1:
        return None
    try:
        return merge_chunks([r["summary"] for r in order], [int(r["config"]["seeds"]) for r in order])
    except StoreError as e:
        warnings.warn(f"{experiment}: stored seed chunks cannot be merged ({e}); computing the whole config", stacklevel=3)
        return None


__all__ = ["Busy", "FORMAT", "ResultsStore", "StoreError", "TaskError", "check_root", "is_current",
           "record_problem", "summary_problem", "checksum", "code_version", "config_from_json", "config_key",
           "config_to_json", "default_root", "is_timing_key", "load_or_run", "make_record", "merge_chunks",
           "run_and_record", "seeds_of", "source_hash", "strip_timings"]
