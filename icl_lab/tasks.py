"""Running one task: compute a configuration, check its summary, store its record.

Every computation goes through here: a sweep's tasks (:func:`execute_task`) and the notebooks'
:func:`load_or_run`. While a task is computed its lock is held, so a second process waits for the record
instead of computing it again, for at most ``$ICL_LAB_LOCK_STALE`` seconds: then it computes it itself.
"""
from __future__ import annotations

import inspect
import os
import time
import warnings

import torch
from filelock import Timeout

from .config import configure_threads, default_device, ensure_threads, get_scale, threads_from_env
from .params import ConfigError
from .records import TaskError, jsonable, make_record, now, summary_problem
from .registry import experiments, plugin_names, resolve_experiment
from .resources import check_memory, memory_limit
from .store import ResultsStore, default_root

LOCK_WAIT_SECONDS = 120
WORKER_WAIT_SECONDS = 600


class Busy(RuntimeError):
    """The task is being computed by another process (it holds the task's lock)."""


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


def check_environment() -> None:
    """Every ICL_LAB_* variable, checked at once (one-line ConfigError) before anything runs."""
    threads_from_env("ICL_LAB_THREADS")
    threads_from_env("ICL_LAB_WORKER_THREADS")
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
    if threads is not None:
        configure_threads(threads)
    else:
        ensure_threads()
    dev = usable_device(device)
    started, t0, c0 = now(), time.perf_counter(), time.process_time()
    result = exp.run(cfg, device=dev) if "device" in inspect.signature(exp.run).parameters else exp.run(cfg)
    summary = exp.summary(result)
    if not isinstance(summary, dict):
        raise ConfigError(f"{experiment}'s summary must return a dict (got {type(summary).__name__})")
    summary = jsonable(summary, f"{experiment} summary")
    for problem, hint in ((summary_problem(summary), "a smaller learning rate or fewer steps may help"),
                          (exp.summary_problem(summary), "its summary function's returns() is out of date")):
        if problem:
            raise TaskError(f"{experiment}: {problem}; nothing stored ({hint})")
    return make_record(experiment, cfg, summary, scale=scale, overrides=overrides, started=started,
                       wall=time.perf_counter() - t0, cpu=time.process_time() - c0, device=str(dev),
                       threads=torch.get_num_threads(), fingerprint=exp.fingerprint)


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


def _compute_locked(store, experiment: str, key: str, stored, compute, wait: bool = True):
    """Under the task's lock: ``stored()`` if another process stored the task meanwhile, else ``compute()``."""
    lock = _locked(store, experiment, key, wait)
    try:
        done = stored()
        return done if done is not None else compute()
    finally:
        if lock is not None:
            lock.release()


def execute_task(spec: dict, wait: bool = True) -> dict:
    """Run one task of a sweep (here or on a Dask worker: the experiment travels in ``spec``) and store its
    record at ``spec['results']``; returns it (``reused=True``: stored by another process meanwhile)."""
    if spec.get("threads") is not None:
        os.environ["ICL_LAB_THREADS"] = str(spec["threads"])
    if spec.get("quiet"):
        os.environ["ICL_LAB_PROGRESS"] = "0"  # no trainer progress bars inside workers
    store, name = ResultsStore(spec["results"]), spec["experiment"]

    def stored():
        done = None if spec.get("recompute") else store.get(name, spec["config"], exp=spec["exp"], warn=False)
        return None if done is None else dict(done, reused=True)

    def compute():
        rec = run_and_record(name, spec["config"], scale=spec["scale"], overrides=spec["overrides"],
                             device=spec.get("device"), threads=spec.get("threads"), experiments={name: spec["exp"]})
        try:
            store.write(rec)
        except OSError:  # a worker that cannot reach the results folder: the client stores the record
            if not spec.get("quiet"):
                raise
        return rec
    return _compute_locked(store, name, spec["key"], stored, compute, wait)


def load_or_run(experiment: str, cfg=None, results_dir: str | os.PathLike | None = None, *, scale: str | None = None,
                device=None, recompute: bool = False) -> dict:
    """The summary of ``experiment`` at ``cfg`` (default: its config at ``scale``): a current stored record
    (or seed chunks tiling its seeds), else computed here under the task's lock and stored."""
    check_environment()
    usable_device(device)
    exp = resolve_experiment(experiment, experiments())
    s = get_scale(scale)
    if cfg is None:
        cfg = exp.config.for_scale(s)
    elif not isinstance(cfg, exp.config):
        raise ConfigError(f"cfg must be a {exp.config.__name__} for {experiment} (got {type(cfg).__name__})")
    store = ResultsStore(results_dir)

    def stored():  # a record of the results folder or of the shipped references, whole or in seed chunks
        return None if recompute else store.summary(experiment, cfg, exp)

    def compute():
        rec = run_and_record(experiment, cfg, scale=s, device=device, experiments={experiment: exp})
        store.write(rec)
        return rec["summary"]

    summary = stored()
    if summary is not None:
        return summary
    check_memory(exp, cfg, memory_limit())
    if exp.check is not None:
        exp.check(cfg)  # what the run would draw (e.g. prompts that query every feature)
    key = store.path_for(experiment, cfg).stem
    store.check_writable(experiment, [key])  # a read-only or full folder fails now, not after the computation
    return _compute_locked(store, experiment, key, stored, compute)
