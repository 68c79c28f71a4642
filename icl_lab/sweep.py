"""Sweeps: an experiment over a grid of parameters and seeds, on one core or a Dask cluster.

A sweep is planned first (every grid point's config built and validated), so bad input fails with one
:class:`~icl_lab.ConfigError` before anything runs. A *task* is one grid point with a chunk of its seeds,
trained together. Each finished task is stored at once and stored tasks are skipped, so an interrupted
sweep completes when the same command runs again::

    plan = sweep.plan("common.context_length", scale="ci", grid=["lr=10,30"], seeds=6, seeds_per_task=3)
    result = sweep.run(plan, executor="dask", workers=2)
    result.point_summaries()      # one merged summary per grid point
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from . import params
from .config import get_scale, progress_enabled, threads_from_env
from .params import ConfigError, coerce_value
from .records import StoreError, config_key
from .render import split_top_level
from .registry import resolve_experiment
from .resources import check_memory, memory_limit
from .store import ResultsStore, merge_records
from .runner import (Busy, Task, at_point, check_environment, check_tasks, execute_task, remove_if_only_locks,
                     usable_device, worker_wait)

EXECUTORS = ("local", "dask")
ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://[^\s/]+$|^[\w.-]+:\d{1,5}$")
#: The most tasks one sweep may generate (grid points x seed chunks); planning refuses more.
MAX_TASKS = 100_000


def _assignments(items, option: str) -> list[tuple]:
    """``["key=value", ...]`` (or a dict) as ``[(key, value)]``."""
    if isinstance(items, dict):
        return list(items.items())
    for text in items:
        if not isinstance(text, str) or "=" not in text or not text.split("=", 1)[0].strip():
            raise ConfigError(f"{option} expects key=value, e.g. {option} steps=100 (got {text!r})")
    return [(k.strip(), v) for k, v in (text.split("=", 1) for text in items)]


@dataclass
class Plan:
    experiment: str
    scale: str
    points: list  # one dict per grid point, in grid order
    tasks: list  # Task, grouped by grid point in grid order, seeds ascending
    exp: Any = field(repr=False)

    def describe(self) -> str:
        n_seeds = [len(t.seeds) for t in self.tasks if t.seeds is not None]
        per = f", {min(n_seeds)}-{max(n_seeds)} seeds per task" if n_seeds else ""
        return (f"{self.experiment} at scale {self.scale}: {len(self.points)} grid point(s), "
                f"{len(self.tasks)} task(s){per}")


def _chunk_sizes(cfg, per_task: int | None) -> list[int]:
    """``cfg``'s seeds in balanced chunks of at most ``per_task`` seeds (30 by 8: 8, 8, 7, 7)."""
    total = int(cfg.seeds)  # seed + seeds - 1 is within seed's declared range: the config checked it
    n = -(-total // (per_task or total))
    base, extra = divmod(total, n)
    return [base + (i < extra) for i in range(n)]


def plan(experiment: str, scale: str | None = None, *, sets=(), grid=(), seeds: int | None = None,
         seeds_per_task: int | None = None, registry: dict | None = None, max_memory=None) -> Plan:
    """Parse and validate a whole sweep before anything runs.

    ``sets``: ``["key=value", ...]`` or a dict; ``grid``: ``["key=v1,v2", ...]`` or a dict of lists (the
    sweep is their product); ``seeds``: seeds per grid point; ``seeds_per_task``: at most this many seeds
    in one task (default: all); ``max_memory``: one task's memory limit. Raises ConfigError naming the field.
    """
    exp = resolve_experiment(experiment, registry)
    scale, limit, cls = get_scale(scale), memory_limit(max_memory), exp.config
    fixed: dict = {}
    for key, value in _assignments(sets, "--set"):
        if key in fixed:
            raise ConfigError(f"--set gives {key} twice")
        fixed[key] = coerce_value(cls, key, value)
    for name, value in (("seeds", seeds), ("seeds_per_task", seeds_per_task)):
        if value is not None and not exp.seed_splittable:
            raise ConfigError(f"{name}: {experiment} trains no seeds (its config has no seeds/seed fields); drop it")
    if seeds is not None:
        if "seeds" in fixed:
            raise ConfigError("seeds is given twice (--seeds and --set seeds=...)")
        fixed["seeds"] = params.positive_int("seeds", seeds)
    seeds_per_task = None if seeds_per_task is None else params.positive_int("seeds_per_task", seeds_per_task)
    axes: dict = {}
    for key, raw in _assignments(grid, "--grid"):
        if key in fixed:
            raise ConfigError(f"{key} is both fixed (--set/--seeds) and swept (--grid); give it once")
        if key in axes:
            raise ConfigError(f"--grid gives {key} twice")
        if exp.seed_splittable and key in ("seed", "seeds"):
            raise ConfigError(f"{key} cannot be swept with --grid: use --seeds N (N seeds for every grid point)"
                              " and --set seed=S (the first seed)")
        raw_values = split_top_level(raw) if isinstance(raw, str) else list(raw)
        if not raw_values or any(isinstance(v, str) and not v for v in raw_values):
            raise ConfigError(f"--grid {key} needs one or more comma-separated values, e.g. {key}=1,2,4 (got {raw!r})")
        values = [coerce_value(cls, key, v) for v in raw_values]
        dup = [v for i, v in enumerate(values) if v in values[:i]]
        if dup:
            raise ConfigError(f"--grid {key} lists {dup[0]!r} twice")
        axes[key] = values
    points, tasks = [], []
    for combo in itertools.product(*axes.values()):  # every grid point and chunk, validated before anything runs
        point = dict(zip(axes, combo))
        overrides = {**fixed, **point}
        try:
            cfg = cls.for_scale(scale, **overrides)
            sizes = _chunk_sizes(cfg, seeds_per_task) if exp.seed_splittable else [1]
            if len(tasks) + len(sizes) > MAX_TASKS:
                raise ConfigError(f"the sweep would generate more than {MAX_TASKS} tasks; use fewer grid values"
                                  + (", fewer seeds or a larger --seeds-per-task" if exp.seed_splittable else ""))
            chunks = [cfg] if len(sizes) == 1 else [cfg.replace(seed=s, seeds=k) for s, k in
                                                    zip(itertools.accumulate([int(cfg.seed), *sizes[:-1]]), sizes)]
            check_memory(chunks[0], limit)  # the first chunk is the largest
        except ConfigError as e:
            raise at_point(point, e) from None
        points.append(point)
        tasks += [Task(c, tuple(point.items()), tuple(overrides.items()), config_key(experiment, c)) for c in chunks]
    return Plan(experiment, scale, points, tasks, exp)


@dataclass
class SweepResult:
    plan: Plan
    records: dict  # task key -> record
    computed: list  # keys computed by this invocation
    skipped: list  # keys found in the store
    failed: dict  # key -> error message
    root: Path
    seconds: float

    @property
    def complete(self) -> bool:
        return not self.failed and all(t.key in self.records for t in self.plan.tasks)

    def point_summaries(self) -> list[dict]:
        """Per grid point ``{"point", "seeds", "summary"}``, the chunks' summaries merged in seed order;
        where they cannot be merged, ``summary`` is None and ``chunks`` lists them."""
        out = []
        for point in self.plan.points:
            tasks = [t for t in self.plan.tasks if dict(t.point) == point]
            recs = [self.records.get(t.key) for t in tasks]
            out.append({"point": point, "seeds": None, "summary": None})
            if all(r is not None for r in recs):
                out[-1]["seeds"] = [s for t in tasks for s in (t.seeds or [])] or None
                try:
                    out[-1]["summary"] = merge_records(self.plan.exp, recs)
                except StoreError as e:  # e.g. every chunk has as many seeds as another axis is long
                    out[-1].update(merge_error=str(e), chunks=[r["summary"] for r in recs])
        return out


def _bar(total, desc, progress):
    return tqdm(total=total, desc=desc, unit="task", disable=not progress_enabled(progress), dynamic_ncols=True)


def run(plan: Plan, *, executor: str = "local", address: str | None = None, workers: int | None = None,
        results_dir=None, progress: bool | None = None, device: str | None = None, recompute: bool = False
        ) -> SweepResult:
    """Run every task of ``plan`` not yet in the store (``recompute=True``: every task, overwriting);
    returns the records of all tasks. A task that raises is reported in ``failed`` and the others go on;
    finished tasks are stored at once, so Ctrl-C or a killed process loses nothing done."""
    check_environment()
    workers = check_executor(executor, address, workers, device)
    store = ResultsStore(results_dir)
    root, t0 = store.root.resolve(), time.perf_counter()
    records = {} if recompute else load_plan_records(plan, store, warn=True)
    out = SweepResult(plan, records, [], list(records), {}, root, 0.0)
    todo = [t for t in plan.tasks if t.key not in records]
    if todo:
        created = [f for f in (root / plan.experiment, root) if not f.exists()]  # removed again if left empty
        check_tasks(store, plan.experiment, plan.exp, todo)
        store.clean_tmp(older_than=3600)  # debris of writers killed long ago
        local = executor == "local"
        specs = [dict(experiment=plan.experiment, exp=plan.exp, config=t.config, scale=plan.scale, key=t.key,
                      overrides=dict(t.overrides), results=str(root), device=device, recompute=recompute,
                      threads=None if local else _worker_threads(), quiet=not local) for t in todo]
        try:
            if local:
                _run_local(specs, out, progress)
            else:
                _run_dask(specs, out, store, progress, address, workers)
        finally:  # refused input, no scheduler at --address, every task failed: leave no empty folder behind
            remove_if_only_locks(created, {f".{t.key}.lock" for t in todo})  # this sweep's locks, in folders it made
    out.seconds = time.perf_counter() - t0
    return out


def _worker_threads() -> int:
    """Torch threads per Dask worker: 1 (many one-thread processes beat a few multi-threaded ones on
    these small matrices), or ``$ICL_LAB_WORKER_THREADS``."""
    return threads_from_env("ICL_LAB_WORKER_THREADS") or 1


def _outcome(key: str, fn, out: SweepResult) -> None:
    """Run ``fn()`` (a task); a failure, a store write's included, is that task's only. A record that
    another process stored while this one waited for its lock counts as from the store."""
    try:
        rec = fn()
    except (ConfigError, Busy):
        raise
    except Exception as e:  # a failing task does not stop the sweep
        out.failed[key] = f"{type(e).__name__}: {e}"
    else:
        out.records[key] = rec
        (out.skipped if rec.get("reused") else out.computed).append(key)


def _run_local(specs, out: SweepResult, progress) -> None:
    queue = [(spec, False) for spec in specs]  # first the tasks nobody else is computing ...
    with _bar(len(specs), out.plan.experiment, progress) as bar:
        for spec, wait in queue:
            try:
                _outcome(spec["key"], lambda: execute_task(spec, wait=wait), out)
            except Busy:
                queue.append((spec, True))  # ... then, at the end, wait for those another sweep is computing
                continue
            bar.update(1)


def check_address(address, name: str = "address") -> None:
    if not isinstance(address, str) or not ADDRESS.match(address.strip()):
        raise ConfigError(f"{name} must be a scheduler address such as tcp://10.0.0.5:8786 (got {address!r})")


def check_executor(executor: str, address=None, workers=None, device=None, flag: str = "") -> int | None:
    """Where the tasks would run, checked before anything is planned; ``flag="--"`` names the options as
    the command line does. Returns ``workers`` as an int."""
    params.one_of(f"{flag}executor", executor, EXECUTORS)
    if device is not None:
        usable_device(device)
    for name, value in (("address", address), ("workers", workers)):
        if value is not None and executor != "dask":
            raise ConfigError(f"{flag}{name} only applies with {flag}executor dask")
    if address is not None:
        check_address(address, f"{flag}address")
        if workers is not None:
            raise ConfigError(f"{flag}workers only applies to a LocalCluster; with {flag}address the cluster has its "
                              "own workers")
    return None if workers is None else params.positive_int(f"{flag}workers", workers)


def _collect_garbage() -> None:
    """Collect unreachable objects now, where this thread holds none of Dask's locks.

    A distributed ``Client`` left to the garbage collector (one whose ``__init__`` raised, kept alive by its
    own reference cycles) closes itself in ``__del__``, which takes the class lock of Dask's ``LoopRunner``;
    when a collection happens to run inside ``LoopRunner.start``, which holds that lock, the process
    deadlocks. So :func:`connect` closes a half-built client itself, in the thread that made it, and
    collects any other such garbage before it starts anything of Dask's."""
    import gc

    gc.collect()


def _half_built(error: BaseException, cls):
    """The instance of ``cls`` whose ``__init__`` raised ``error`` (found in its traceback), or None."""
    tb = error.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        if isinstance(obj, cls):
            return obj
        tb = tb.tb_next
    return None


def connect(address: str | None = None, workers: int | None = None, timeout: float = 20):
    """A Dask client to the scheduler at ``address``, or to a new LocalCluster of ``workers`` one-thread
    processes (default: one per core). Returns ``(client, cluster or None)``. No client is left to the
    garbage collector (:func:`_collect_garbage`): a half-built one, or one that connects after this call
    gave up, is closed by the thread that made it."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover
        raise ConfigError("executor 'dask' needs Dask distributed: pip install 'dask[distributed]'") from None
    _collect_garbage()
    if address is None:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL,
                               env={"ICL_LAB_THREADS": str(_worker_threads()), "ICL_LAB_PROGRESS": "0"})
        try:
            return Client(cluster), cluster
        except BaseException as e:
            half = _half_built(e, Client)
            with contextlib.suppress(Exception):
                if half is not None:
                    half.close()
            cluster.close()
            raise
    import dask  # an optional dependency, like distributed above

    check_address(address)
    out: dict = {}
    guard = threading.Lock()  # the caller's giving up and the thread's result, one after the other

    def _connect():
        client = None
        try:
            with dask.config.set({"distributed.comm.timeouts.connect": f"{timeout}s"}):
                client = Client(address.strip(), timeout=f"{timeout}s")
        except Exception as e:  # refused, timed out, or a service answering something else
            out["error"] = f"{type(e).__name__}: {str(e)[:120]}"  # the text only: the traceback holds the client
            client = _half_built(e, Client)
        with guard:
            if client is not None and "error" not in out and not out.get("gave_up"):
                out["client"], client = client, None
        if client is not None:  # half-built, or connected after the caller gave up: nobody else will close it
            with contextlib.suppress(Exception):  # here, where no lock of Dask's is held
                client.close()
            client = None

    # a port that accepts and never answers stalls Dask's handshake past its own timeout: bound it here
    t = threading.Thread(target=_connect, name="icl-lab-connect", daemon=True)
    t.start()
    t.join(timeout + min(5.0, timeout))  # Dask's own timeout, plus some slack for its handshake
    with guard:
        out["gave_up"] = "client" not in out
    if "client" in out:
        return out["client"], None
    why = out.get("error", "no answer to the handshake")
    raise ConfigError(f"address: no Dask scheduler answered at {address!r} within {timeout:g} s ({why})")


def _run_dask(specs, out: SweepResult, store, progress, address, workers) -> None:
    from distributed import as_completed  # an optional dependency (connect checked it)

    client, cluster = connect(address, workers)
    futures = {}
    try:
        if address is not None and not client.scheduler_info().get("workers"):
            wait = worker_wait()
            print(f"icl-lab: the scheduler at {address} has no workers yet; waiting up to {wait:g} s for one "
                  "(ICL_LAB_WORKER_WAIT)", file=sys.stderr, flush=True)
            try:
                client.wait_for_workers(1, timeout=wait)
            except (TimeoutError, OSError) as e:
                raise ConfigError(f"address: no worker joined the scheduler at {address} within {wait:g} s "
                                  "(set ICL_LAB_WORKER_WAIT to wait longer)") from e
        futures = {client.submit(execute_task, s, key=f"icl-lab-{s['key']}", pure=False, retries=0): s for s in specs}
        with _bar(len(specs), out.plan.experiment, progress) as bar:
            for fut in as_completed(list(futures)):
                _outcome(futures[fut]["key"], lambda: _collect(fut, futures[fut], store), out)
                bar.update(1)
    finally:
        for fut in futures:
            if not fut.done():
                fut.cancel()
        try:
            client.close()
        finally:
            if cluster is not None:
                cluster.close()


def _collect(fut, spec, store) -> dict:
    """A finished Dask task's record, also stored here when the worker wrote elsewhere (a store
    error, e.g. a full disk, fails this task only)."""
    rec = fut.result()
    if store.get(rec["experiment"], spec["config"], exp=spec["exp"], warn=False) is None:
        store.write({k: v for k, v in rec.items() if k not in ("checksum", "reused")})
    return rec


def load_plan_records(plan: Plan, store: ResultsStore, warn: bool = False) -> dict:
    """The valid records of a plan's tasks in ``store``, ``{task key: record}``."""
    recs = {t.key: store.get(plan.experiment, t.config, exp=plan.exp, warn=warn) for t in plan.tasks}
    return {k: r for k, r in recs.items() if r is not None}

