"""Running one task: compute a configuration, check its summary, store its record.

Every computation goes through :func:`execute_task`, a sweep's tasks and the notebooks' :func:`load_or_run`
alike, after the same checks (:func:`check_tasks`). While a task is computed its lock is held, so a second
process waits for the record instead of computing it again, for at most ``$ICL_LAB_LOCK_STALE`` seconds:
then it computes it itself.
"""
from __future__ import annotations

import inspect
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from filelock import Timeout

from .config import configure_threads, default_device, ensure_threads, get_scale, threads_from_env
from .params import ConfigError
from .records import TaskError, config_key, make_record, now, seeds_of, summary_problem
from .registry import experiments, plugin_names, resolve_experiment
from .resources import check_memory, memory_limit
from .store import ResultsStore, default_root

LOCK_WAIT_SECONDS = 120
WORKER_WAIT_SECONDS = 600


class Busy(RuntimeError):
    """The task is being computed by another process (it holds the task's lock)."""


@dataclass(frozen=True)
class Task:
    """One unit of work: a grid point's config restricted to a chunk of its seeds."""

    config: Any
    point: tuple  # ((field, value), ...) of the grid point, in grid order
    overrides: tuple  # ((field, value), ...): --set values and the grid point
    key: str

    @property
    def seeds(self) -> list | None:
        return seeds_of(self.config)


def at_point(point: dict, e: ConfigError) -> ConfigError:
    """``e`` naming the grid point it happened at."""
    where = ", ".join(f"{k}={v!r}" for k, v in point.items())
    return ConfigError(f"{e} [grid point {where}]" if point else str(e))


def _seconds(name: str, default: float, minimum: float) -> float:
    text = os.environ.get(name, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        value = -1.0
    if not minimum <= value < 1e9:
        raise ConfigError(f"{name} must be a number of seconds >= {minimum:g} (got {text!r})")
    return value


def lock_wait() -> float:
    """``$ICL_LAB_LOCK_STALE``: how long a process waits for another's lock (seconds, >= 10)."""
    return _seconds("ICL_LAB_LOCK_STALE", LOCK_WAIT_SECONDS, 10)


def worker_wait() -> float:
    """``$ICL_LAB_WORKER_WAIT``: how long a sweep waits for the first worker of a Dask scheduler."""
    return _seconds("ICL_LAB_WORKER_WAIT", WORKER_WAIT_SECONDS, 1)


def usable_device(device=None) -> torch.device:
    """``device`` (default ``$ICL_LAB_DEVICE``, else CUDA when available, else the CPU) if torch can
    compute on it here; a ConfigError otherwise."""
    dev = default_device(device)
    name = "device" if device is not None else "ICL_LAB_DEVICE"
    if dev.type not in ("cpu", "cuda"):
        raise ConfigError(f"{name} must be cpu or cuda, a device torch computes on here (got {str(dev)!r})")
    if dev.type == "cuda" and (dev.index or 0) >= torch.cuda.device_count():
        raise ConfigError(f"{name} {str(dev)!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return dev


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform says, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_warned_threads: set = set()


def capped_threads(n: int, name: str = "ICL_LAB_THREADS") -> int:
    """``n`` torch threads, at most one per core: more only spin against each other (1024 threads on two
    cores made a 4 s run take 118 s). Above the cores: one warning line (once per value) and the cores."""
    cores = machine_cores()
    if n <= cores:
        return n
    if (name, n) not in _warned_threads:
        _warned_threads.add((name, n))
        warnings.warn(f"{name}={n} is more than this machine's {cores} core(s); using {cores} thread(s)",
                      stacklevel=2)
    return cores


def check_environment() -> None:
    """Every ICL_LAB_* variable, checked at once (one-line ConfigError) before anything runs; a thread
    count above the cores is said (one warning line) here, and capped where a task runs."""
    for name in ("ICL_LAB_THREADS", "ICL_LAB_WORKER_THREADS"):
        n = threads_from_env(name)
        if n is not None:
            capped_threads(n, name)
    get_scale()
    if os.environ.get("ICL_LAB_DEVICE"):
        usable_device()
    default_root()
    plugin_names()
    memory_limit()
    lock_wait()
    worker_wait()


def run_and_record(experiment: str, cfg, *, scale: str | None = None, overrides: dict | None = None,
                   device=None, threads: int | None = None, experiments: dict | None = None) -> dict:
    """Run one configuration in this process and return its record (not yet written)."""
    exp = resolve_experiment(experiment, experiments)
    env = threads_from_env()
    if threads is not None:  # a Dask worker's
        configure_threads(capped_threads(threads, "ICL_LAB_WORKER_THREADS"))
    elif env is not None and env > machine_cores():
        configure_threads(capped_threads(env))
    else:
        ensure_threads()
    if torch.get_num_threads() > machine_cores():  # $ICL_LAB_THREADS, or configure_threads() called with more
        torch.set_num_threads(capped_threads(torch.get_num_threads(), "ICL_LAB_THREADS"))
    dev = usable_device(device)
    started, t0, c0 = now(), time.perf_counter(), time.process_time()
    result = exp.run(cfg, device=dev) if "device" in inspect.signature(exp.run).parameters else exp.run(cfg)
    summary = exp.summary(result)
    if not isinstance(summary, dict):
        raise ConfigError(f"{experiment}'s summary must return a dict (got {type(summary).__name__})")
    rec = make_record(experiment, cfg, summary, scale=scale, overrides=overrides, started=started,
                      wall=time.perf_counter() - t0, cpu=time.process_time() - c0, device=str(dev),
                      threads=torch.get_num_threads(), fingerprint=exp.fingerprint)  # the summary as JSON values
    for problem, hint in ((summary_problem(rec["summary"]), "a smaller learning rate or fewer steps may help"),
                          (exp.summary_problem(rec["summary"]), "its summary function's returns() is out of date")):
        if problem:
            raise TaskError(f"{experiment}: {problem}; nothing stored ({hint})")
    return rec


def _locked(store: ResultsStore, experiment: str, key: str, wait: bool):
    """The task's lock, acquired; None when it cannot be taken (an unwritable folder, a lock path that is
    not a file) or was waited for ``lock_wait()`` seconds in vain; ``wait=False``: :class:`Busy` at once."""
    try:
        lock = store.lock(experiment, key)
        lock.acquire(timeout=lock_wait() if wait else 0)
        return lock
    except Timeout:
        if not wait:
            raise Busy(f"{experiment}/{key} is being computed by another process") from None
        warnings.warn(f"{experiment}/{key}: another process has held its lock for {lock_wait():g} s "
                      "(ICL_LAB_LOCK_STALE); computing it here", stacklevel=3)
    except OSError:
        pass
    return None


def check_tasks(store: ResultsStore, experiment: str, exp, todo) -> None:
    """Before any task computes: what each would draw (``exp.check``, e.g. prompts that query every feature;
    an error names its grid point), and that the store can take their records (a read-only or full folder
    fails now, not after the computation)."""
    for t in todo if exp.check is not None else ():
        try:
            exp.check(t.config)
        except ConfigError as e:
            raise at_point(dict(t.point), e) from None
    store.check_writable(experiment, [t.key for t in todo])


def execute_task(spec: dict, wait: bool = True) -> dict:
    """Run one task (here or on a Dask worker: the experiment travels in ``spec``) under its lock and store
    its record at ``spec['results']``; returns it (``reused=True``: stored by another process meanwhile)."""
    if spec.get("threads") is not None:
        os.environ["ICL_LAB_THREADS"] = str(spec["threads"])
    if spec.get("quiet"):
        os.environ["ICL_LAB_PROGRESS"] = "0"  # no trainer progress bars inside workers
    store, name = ResultsStore(spec["results"]), spec["experiment"]
    root = Path(store.root)
    created = [f for f in (root / name, root) if not f.exists()]  # made for this task's lock
    lock, stored = _locked(store, name, spec["key"], wait), False
    try:
        done = None if spec.get("recompute") else store.get(name, spec["config"], exp=spec["exp"], warn=False)
        if done is not None:
            return dict(done, reused=True)
        rec = run_and_record(name, spec["config"], scale=spec["scale"], overrides=spec.get("overrides"),
                             device=spec.get("device"), threads=spec.get("threads"), experiments={name: spec["exp"]})
        try:
            store.write(rec)
            stored = True
        except OSError:  # a worker that cannot reach the results folder: the client stores the record
            if not spec.get("quiet"):
                raise
        return rec
    finally:
        if lock is not None:
            lock.release()
        if not stored:  # failed (or stored nothing here): no folder this task made stays behind
            remove_if_only_locks(created, {f".{spec['key']}.lock"})


def remove_if_only_locks(folders, locks) -> None:
    """Remove each of ``folders`` (made by the caller, innermost first) that holds nothing but the lock
    files named in ``locks``: a failed task or sweep leaves no empty folder or lock of its own behind."""
    for folder in folders:
        try:
            if folder.is_dir() and all(p.name in locks for p in folder.iterdir()):
                for p in folder.iterdir():
                    p.unlink(missing_ok=True)
                folder.rmdir()
        except OSError:  # another process has just put something there: it stays
            pass


def load_or_run(experiment: str, cfg=None, results_dir: str | os.PathLike | None = None, *, scale: str | None = None,
                device=None, recompute: bool = False) -> dict:
    """The summary of ``experiment`` at ``cfg`` (default: its config at ``scale``): a current stored record
    (or seed chunks tiling its seeds), else computed here as a sweep's one task (same checks, its lock)."""
    check_environment()
    usable_device(device)
    exp = resolve_experiment(experiment, experiments())
    s = get_scale(scale)
    if cfg is None:
        cfg = exp.config.for_scale(s)
    elif not isinstance(cfg, exp.config):
        raise ConfigError(f"cfg must be a {exp.config.__name__} for {experiment} (got {type(cfg).__name__})")
    store = ResultsStore(results_dir)
    summary = None if recompute else store.summary(experiment, cfg, exp)  # results folder or shipped references
    if summary is not None:
        return summary
    task = Task(cfg, (), (), config_key(experiment, cfg))
    check_memory(cfg, memory_limit())
    check_tasks(store, experiment, exp, [task])
    return execute_task(dict(experiment=experiment, exp=exp, config=cfg, scale=s, key=task.key,
                             results=str(store.root), device=device, recompute=recompute))["summary"]
