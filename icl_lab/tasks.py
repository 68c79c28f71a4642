"""Running one task: compute a configuration, check its summary, store its record.

Every computation goes through here: a sweep's tasks (:func:`execute_task`, in this process or on
a Dask worker) and the notebooks' :func:`load_or_run`, which returns the stored summary of a
configuration (or of seed chunks that tile it) and otherwise computes and stores it. While a task
is computed its lock is held, so a second process asking for it waits for the record instead of
computing it again, for at most ``$ICL_LAB_LOCK_STALE`` seconds (default 120): then it computes the
task itself, so no wait outlasts its cause.
"""
from __future__ import annotations

import inspect
import os
import time
import warnings

import torch
from filelock import Timeout

from .chunks import from_chunks
from .config import configure_threads, default_device, ensure_threads, get_scale, threads_from_env
from .params import ConfigError
from .records import TaskError, jsonable, make_record, now, summary_problem
from .registry import experiments, plugin_names, resolve_experiment
from .resources import check_memory, memory_limit
from .store import ResultsStore, default_root

LOCK_WAIT_SECONDS = 120


class Busy(RuntimeError):
    """The task is being computed by another process (it holds the task's lock)."""


WORKER_WAIT_SECONDS = 600


def _seconds(name: str, default: float, minimum: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not minimum <= value < 1e9:
        raise ConfigError(f"{name} must be a number of seconds >= {minimum:g} (got {text!r})")
    return value


def lock_wait() -> float:
    """``$ICL_LAB_LOCK_STALE``: how long a process waits for another's lock (seconds, >= 10)."""
    return _seconds("ICL_LAB_LOCK_STALE", LOCK_WAIT_SECONDS, 10)


def worker_wait() -> float:
    """``$ICL_LAB_WORKER_WAIT``: how long a sweep waits for the first worker of a Dask scheduler that
    has none yet (a cluster that scales up later), in seconds (default 600)."""
    return _seconds("ICL_LAB_WORKER_WAIT", WORKER_WAIT_SECONDS, 1)


def usable_device(device=None) -> torch.device:
    """``device`` (default ``$ICL_LAB_DEVICE``, else CUDA when available, else the CPU) if torch can
    compute on it here: the CPU or an available CUDA device; a ConfigError otherwise."""
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
    problem = summary_problem(summary)
    if problem:
        raise TaskError(f"{experiment}: {problem}; nothing stored (a smaller learning rate or fewer steps may help)")
    problem = exp.summary_problem(summary)
    if problem:
        raise TaskError(f"{experiment}: {problem}; nothing stored (its summary function's returns() is out of date)")
    return make_record(experiment, cfg, summary, scale=scale, overrides=overrides, started=started,
                       wall=time.perf_counter() - t0, cpu=time.process_time() - c0, device=str(dev),
                       threads=torch.get_num_threads(), fingerprint=exp.fingerprint)


def _locked(store: ResultsStore, experiment: str, key: str, wait: bool):
    """The task's lock, acquired; None when it cannot be taken (a folder the process cannot write,
    a lock path that is not a file) or was waited for ``lock_wait()`` seconds in vain."""
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


def execute_task(spec: dict, wait: bool = True) -> dict:
    """Run one task of a sweep and write its record to the store at ``spec['results']``; returns
    the record (``reused=True`` when another process stored it while this one waited for its lock).

    Runs in the calling process (local executor) or on a Dask worker; the experiment object travels
    with the task description, so plug-in experiments work on workers too. ``wait=False`` raises
    :class:`Busy` at once when another process holds the task's lock."""
    if spec.get("threads") is not None:
        os.environ["ICL_LAB_THREADS"] = str(spec["threads"])
    if spec.get("quiet"):
        os.environ["ICL_LAB_PROGRESS"] = "0"  # no trainer progress bars inside workers
    store = ResultsStore(spec["results"])
    lock = _locked(store, spec["experiment"], spec["key"], wait)
    try:
        done = None if spec.get("recompute") else store.get(spec["experiment"], spec["config"], exp=spec["exp"],
                                                              warn=False)
        if done is not None:  # stored meanwhile by the lock's last holder
            return dict(done, reused=True)
        rec = run_and_record(spec["experiment"], spec["config"], scale=spec["scale"], overrides=spec["overrides"],
                             device=spec.get("device"), threads=spec.get("threads"),
                             experiments={spec["experiment"]: spec["exp"]})
        try:
            store.write(rec)
        except OSError:  # a worker that cannot reach the results folder: the client stores the record
            if not spec.get("quiet"):
                raise
        return rec
    finally:
        if lock is not None:
            lock.release()


def load_or_run(experiment: str, cfg=None, results_dir: str | os.PathLike | None = None, *, scale: str | None = None,
                device=None, recompute: bool = False) -> dict:
    """The summary of ``experiment`` at config ``cfg``: read from the results store when a current
    record (or a set of seed chunks tiling its seeds) exists, else computed in this process under
    the task's lock, stored atomically and returned.

    ``cfg`` defaults to the experiment's config at ``scale`` (``$ICL_LAB_SCALE`` when None);
    ``results_dir`` to ``$ICL_LAB_RESULTS`` or ``results/`` at the book's root."""
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
        if recompute:
            return None
        rec = store.get(experiment, cfg, exp=exp)
        if rec is not None:
            return rec["summary"]
        return next((s for s in (from_chunks(layer, experiment, exp, cfg) for layer in (store, store.reference)
                                 if layer is not None) if s is not None), None)

    summary = stored()
    if summary is not None:
        return summary
    check_memory(exp, cfg)
    key = store.path_for(experiment, cfg).stem
    store.check_writable(experiment, [key])  # a read-only or full folder fails now, not after the computation
    lock = _locked(store, experiment, key, wait=True)
    try:
        summary = None if lock is None else stored()  # computed by another process meanwhile?
        if summary is None:
            rec = run_and_record(experiment, cfg, scale=s, device=device, experiments={experiment: exp})
            store.write(rec)
            summary = rec["summary"]
        return summary
    finally:
        if lock is not None:
            lock.release()
