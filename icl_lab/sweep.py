"""Sweeps: an experiment over a grid of parameters and seeds, on one core or a Dask cluster.

A sweep is planned first (every value parsed, every grid point's config built and validated), so
bad input fails with one :class:`~icl_lab.ConfigError` before anything runs. A *task* is one grid
point with a chunk of its seeds, trained together in the trainer's run dimension. Executors:
``local`` (this process) or ``dask`` (a LocalCluster of one-thread workers, or the scheduler at
``address``). Each finished task is stored at once (:func:`icl_lab.tasks.execute_task`) and stored
tasks are skipped, so an interrupted sweep completes when the same command runs again::

    plan = sweep.plan("common.context_length", scale="ci", grid=["lr=10,30"], seeds=6, seeds_per_task=3)
    result = sweep.run(plan, executor="dask", workers=2)
    result.point_summaries()      # one merged summary per grid point
"""
from __future__ import annotations

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
from .chunks import merge_records
from .config import get_scale, progress_enabled, threads_from_env
from .params import ConfigError, coerce_value
from .records import StoreError, config_key, seeds_of
from .registry import resolve_experiment
from .resources import check_memory, memory_limit
from .store import ResultsStore
from .tasks import Busy, check_environment, execute_task, usable_device, worker_wait

EXECUTORS = ("local", "dask")
ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://[^\s/]+$|^[\w.-]+:\d{1,5}$")


def _split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets and quotes: ``"[1,2],[3,4]"`` -> ``["[1,2]", "[3,4]"]``."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def parse_assignment(text: str, option: str = "--set") -> tuple[str, str]:
    if not isinstance(text, str) or "=" not in text or not text.split("=", 1)[0].strip():
        raise ConfigError(f"{option} expects key=value, e.g. {option} steps=100 (got {text!r})")
    key, value = text.split("=", 1)
    return key.strip(), value


def build_config(exp, scale: str, overrides: dict):
    """The experiment's config at ``scale`` with ``overrides`` (values are type-checked first)."""
    return exp.config.for_scale(scale, **{k: coerce_value(exp.config, k, v) for k, v in overrides.items()})


# ============================================================================ the plan
@dataclass(frozen=True)
class Task:
    """One unit of work: a grid point's config restricted to a chunk of its seeds."""

    experiment: str
    config: Any
    point: tuple  # ((field, value), ...) of the grid point, in grid order
    scale: str
    overrides: tuple  # ((field, value), ...): --set values and the grid point
    key: str

    @property
    def seeds(self) -> list | None:
        return seeds_of(self.config)


@dataclass
class Plan:
    experiment: str
    scale: str
    axes: list  # [(field, [values])] of the grid
    points: list  # one dict per grid point
    tasks: list  # Task, grouped by grid point in grid order, seeds ascending
    seeds_per_task: int | None
    exp: Any = field(repr=False, default=None)

    def describe(self) -> str:
        n_seeds = [len(t.seeds) for t in self.tasks if t.seeds is not None]
        per = f", {min(n_seeds)}-{max(n_seeds)} seeds per task" if n_seeds else ""
        return f"{self.experiment} at scale {self.scale}: {len(self.points)} grid point(s), {len(self.tasks)} task(s){per}"


#: The most tasks one sweep may generate (grid points x seed chunks); planning refuses more.
MAX_TASKS = 100_000


def _chunks(total: int, per_task: int) -> list[int]:
    """Balanced chunk sizes: 30 seeds, at most 8 per task -> [8, 8, 7, 7]."""
    n = -(-total // per_task)
    base, extra = divmod(total, n)
    return [base + (i < extra) for i in range(n)]


def plan(experiment: str, scale: str | None = None, *, sets=(), grid=(), seeds: int | None = None,
         seeds_per_task: int | None = None, registry: dict | None = None, max_memory=None) -> Plan:
    """Parse and validate a whole sweep before anything runs.

    ``sets``: ``["key=value", ...]`` or a dict; ``grid``: ``["key=v1,v2", ...]`` or a dict of lists
    (the sweep is their Cartesian product); ``seeds``: how many seeds per grid point (the config's
    ``seeds`` field); ``seeds_per_task``: at most this many seeds trained together in one task
    (default: all of a grid point's seeds in one task); ``max_memory``: the memory limit of one
    task (:func:`icl_lab.resources.check_memory`).  Raises ConfigError naming the field.
    """
    exp = resolve_experiment(experiment, registry)
    scale = get_scale(scale) if scale is not None else get_scale()
    limit = memory_limit(max_memory)
    cls = exp.config
    # fixed values
    fixed: dict = {}
    items = sets.items() if isinstance(sets, dict) else [parse_assignment(s, "--set") for s in sets]
    for key, value in items:
        if key in fixed:
            raise ConfigError(f"--set gives {key} twice")
        fixed[key] = coerce_value(cls, key, value)
    if seeds is not None:
        if not exp.seed_splittable:
            raise ConfigError(f"seeds: {experiment} trains no seeds (its config has no seeds/seed fields); drop --seeds")
        if "seeds" in fixed:
            raise ConfigError("seeds is given twice (--seeds and --set seeds=...)")
        fixed["seeds"] = params.positive_int("seeds", seeds)
    if seeds_per_task is not None:
        if not exp.seed_splittable:
            raise ConfigError(f"seeds_per_task: {experiment} trains no seeds (its config has no seeds/seed fields)")
        seeds_per_task = params.positive_int("seeds_per_task", seeds_per_task)
    # grid axes
    axes = []
    grid_items = grid.items() if isinstance(grid, dict) else [parse_assignment(g, "--grid") for g in grid]
    for key, raw in grid_items:
        if key in fixed:
            raise ConfigError(f"{key} is both fixed (--set/--seeds) and swept (--grid); give it once")
        if key in dict(axes):
            raise ConfigError(f"--grid gives {key} twice")
        if exp.seed_splittable and key in ("seed", "seeds"):
            raise ConfigError(f"{key} cannot be swept with --grid: use --seeds N (N seeds for every grid point)"
                              " and --set seed=S (the first seed)")
        raw_values = _split_top_level(raw) if isinstance(raw, str) else list(raw)
        if not raw_values or any(isinstance(v, str) and not v for v in raw_values):
            raise ConfigError(f"--grid {key} needs one or more comma-separated values, e.g. {key}=1,2,4 (got {raw!r})")
        values = [coerce_value(cls, key, v) for v in raw_values]
        dup = [v for i, v in enumerate(values) if v in values[:i]]
        if dup:
            raise ConfigError(f"--grid {key} lists {dup[0]!r} twice")
        axes.append((key, values))
    # every grid point, every chunk: built and validated before anything runs
    points, tasks = [], []
    names = [k for k, _ in axes]
    for combo in itertools.product(*[v for _, v in axes]):
        point = dict(zip(names, combo))
        overrides = {**fixed, **point}
        try:
            cfg = cls.for_scale(scale, **overrides)
        except ConfigError as e:
            where = ", ".join(f"{k}={v!r}" for k, v in point.items())
            raise ConfigError(f"{e} [grid point {where}]" if point else str(e)) from None
        points.append(point)
        if exp.seed_splittable and int(cfg.seed) + int(cfg.seeds) > params.SEED.hi + 1:
            raise ConfigError(f"seed + seeds must be at most 2**63 (the seeds a torch.Generator accepts; "
                              f"got seed={cfg.seed}, seeds={cfg.seeds})")
        if exp.seed_splittable:
            per = seeds_per_task or int(cfg.seeds)
            if len(tasks) + -(-int(cfg.seeds) // per) > MAX_TASKS:
                raise ConfigError(f"the sweep would generate more than {MAX_TASKS} tasks; "
                                  "use fewer grid values, fewer seeds or a larger --seeds-per-task")
            sizes = _chunks(int(cfg.seeds), per)
            # linear: running sum of chunk sizes (was sum(sizes[:i]), quadratic in the task count)
            starts = [int(cfg.seed) + s for s in itertools.accumulate([0] + sizes[:-1])]
            chunk_cfgs = [cfg if len(sizes) == 1 else cfg.replace(seed=s, seeds=n) for s, n in zip(starts, sizes)]
        else:
            if len(tasks) + 1 > MAX_TASKS:
                raise ConfigError(f"the sweep would generate more than {MAX_TASKS} tasks; use fewer grid values")
            chunk_cfgs = [cfg]
        try:  # the first chunk is the largest
            check_memory(exp, chunk_cfgs[0], "none" if limit is None else limit)
        except ConfigError as e:
            where = ", ".join(f"{k}={v!r}" for k, v in point.items())
            raise ConfigError(f"{e} [grid point {where}]" if point else str(e)) from None
        for c in chunk_cfgs:
            tasks.append(Task(experiment, c, tuple(point.items()), scale, tuple(overrides.items()),
                              config_key(experiment, c)))
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):  # pragma: no cover - distinct grid values give distinct configs
        raise ConfigError("grid: two grid points give the same configuration")
    return Plan(experiment, scale, axes, points, tasks, seeds_per_task, exp)


# ============================================================================ running tasks
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
        """One entry per grid point: ``{"point", "seeds", "summary"}`` with the chunks' summaries
        merged in seed order (:func:`icl_lab.store.merge_chunks`); where the chunks cannot be merged
        unambiguously, ``summary`` is None and ``chunks`` lists the chunks' summaries in seed order."""
        out = []
        for i, point in enumerate(self.plan.points):
            tasks = [t for t in self.plan.tasks if dict(t.point) == point]
            recs = [self.records.get(t.key) for t in tasks]
            if any(r is None for r in recs):
                out.append({"point": point, "seeds": None, "summary": None})
                continue
            seeds = [s for t in tasks for s in (t.seeds or [])] or None
            entry = {"point": point, "seeds": seeds}
            try:
                entry["summary"] = merge_records(self.plan.exp, recs)
            except StoreError as e:  # e.g. every chunk has as many seeds as another axis is long
                entry.update(summary=None, merge_error=str(e), chunks=[r["summary"] for r in recs])
            out.append(entry)
        return out


def _bar(total, desc, progress):
    return tqdm(total=total, desc=desc, unit="task", disable=not progress_enabled(progress), dynamic_ncols=True)


def run(plan: Plan, *, executor: str = "local", address: str | None = None, workers: int | None = None,
        results_dir=None, progress: bool | None = None, device: str | None = None,
        cluster_kwargs: dict | None = None, recompute: bool = False) -> SweepResult:
    """Run every task of ``plan`` not yet in the store; returns the records of all tasks.

    A task that raises is reported in ``failed`` (the others still run and are stored); completed
    tasks are on disk as soon as they finish, so Ctrl-C or a killed process loses nothing done.
    ``recompute=True`` ignores (and overwrites) stored records, e.g. after changing the code."""
    params.one_of("executor", executor, EXECUTORS)
    check_environment()
    if device is not None:
        usable_device(device)
    if address is not None and executor != "dask":
        raise ConfigError("address only applies with executor 'dask' (use --executor dask --address ...)")
    if workers is not None:
        workers = params.positive_int("workers", workers)
    store = ResultsStore(results_dir)
    root = store.root.resolve()
    t0 = time.perf_counter()
    records, skipped, todo = {}, [], []
    for t in plan.tasks:
        rec = None if recompute else store.get(t.experiment, t.config, exp=plan.exp)
        if rec is not None:
            records[t.key] = rec
            skipped.append(t.key)
        else:
            todo.append(t)
    failed: dict = {}
    computed: list = []
    if todo:
        created = [f for f in (root / plan.experiment, root) if not f.exists()]  # removed again if left empty
        store.check_writable(plan.experiment, [t.key for t in todo])
        store.clean_tmp(older_than=3600)  # debris of writers killed long ago
        specs = [dict(experiment=t.experiment, exp=plan.exp, config=t.config, scale=t.scale, overrides=dict(t.overrides),
                      results=str(root), device=device, threads=None if executor == "local" else _worker_threads(),
                      quiet=executor != "local", key=t.key, recompute=recompute) for t in todo]
        runner = _run_local if executor == "local" else _run_dask
        try:
            runner(specs, records, computed, failed, skipped, store, progress=progress, address=address, workers=workers,
                   desc=plan.experiment, cluster_kwargs=cluster_kwargs or {})
        finally:  # refused input, no scheduler at --address, every task failed: leave no empty folder behind
            ours = {f".{t.key}.lock" for t in todo}  # the lock files of this sweep's tasks, in a folder it made
            for folder in created:
                if folder.is_dir() and all(p.name in ours for p in folder.iterdir()):
                    for p in folder.iterdir():
                        p.unlink(missing_ok=True)
                    folder.rmdir()
    return SweepResult(plan, records, computed, skipped, failed, root, time.perf_counter() - t0)


def _worker_threads() -> int:
    """Torch threads per Dask worker: 1 (many single-threaded processes beat a few multi-threaded
    ones on these small matrices), or ``$ICL_LAB_WORKER_THREADS``."""
    return threads_from_env("ICL_LAB_WORKER_THREADS") or 1


def _record_outcome(spec, fn, records, computed, failed, skipped) -> None:
    """Run ``fn()`` (a task); a failure, including a store write, is that task's failure only. A
    record another process stored while this one waited for its lock counts as from the store."""
    try:
        rec = fn()
    except (ConfigError, Busy):
        raise
    except Exception as e:  # a failing task does not stop the sweep
        failed[spec["key"]] = f"{type(e).__name__}: {e}"
    else:
        records[spec["key"]] = rec
        (skipped if rec.get("reused") else computed).append(spec["key"])


def _run_local(specs, records, computed, failed, skipped, store, *, progress, desc, **_):
    busy = []
    with _bar(len(specs), desc, progress) as bar:
        for spec in specs:  # first the tasks nobody else is computing ...
            try:
                _record_outcome(spec, lambda: execute_task(spec, wait=False), records, computed, failed, skipped)
            except Busy:
                busy.append(spec)
                continue
            bar.update(1)
        for spec in busy:  # ... then wait for those another sweep is computing
            _record_outcome(spec, lambda: execute_task(spec), records, computed, failed, skipped)
            bar.update(1)


def connect(address: str | None = None, workers: int | None = None, cluster_kwargs: dict | None = None,
            timeout: float = 20):
    """A Dask client: to the scheduler at ``address``, or to a new LocalCluster of ``workers``
    processes (default: one per core) with one thread each.  Returns ``(client, cluster or None)``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover
        raise ConfigError("executor 'dask' needs Dask distributed: pip install 'dask[distributed]'") from None
    if address is not None:
        import dask  # an optional dependency, like distributed above

        if not isinstance(address, str) or not ADDRESS.match(address.strip()):
            raise ConfigError(f"address must be a scheduler address such as tcp://10.0.0.5:8786 (got {address!r})")
        out: dict = {}

        def _connect():
            try:
                with dask.config.set({"distributed.comm.timeouts.connect": f"{timeout}s"}):
                    out["client"] = Client(address.strip(), timeout=f"{timeout}s")
            except Exception as e:  # refused, timed out, or a service answering something else
                out["error"] = e

        # a port that accepts and never answers stalls Dask's handshake past its own timeout: bound it here
        t = threading.Thread(target=_connect, name="icl-lab-connect", daemon=True)
        t.start()
        t.join(timeout + 5)
        if "client" in out:
            return out["client"], None
        e = out.get("error")
        why = f"{type(e).__name__}: {str(e)[:120]}" if e is not None else "no answer to the handshake"
        raise ConfigError(f"address: no Dask scheduler answered at {address!r} within {timeout:g} s ({why})")
    n = workers or os.cpu_count() or 1
    kw = dict(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
              silence_logs=logging.CRITICAL, env={"ICL_LAB_THREADS": str(_worker_threads()), "ICL_LAB_PROGRESS": "0"})
    kw.update(cluster_kwargs or {})
    cluster = LocalCluster(**kw)
    return Client(cluster), cluster


def _run_dask(specs, records, computed, failed, skipped, store, *, progress, address, workers, desc, cluster_kwargs):
    from distributed import as_completed  # an optional dependency (connect checked it)

    client, cluster = connect(address, workers, cluster_kwargs)
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
        for spec in specs:
            fut = client.submit(execute_task, spec, key=f"icl-lab-{spec['key']}", pure=False, retries=0)
            futures[fut] = spec
        with _bar(len(specs), desc, progress) as bar:
            for fut in as_completed(list(futures)):
                spec = futures[fut]
                _record_outcome(spec, lambda: _collect(fut, spec, store), records, computed, failed, skipped)
                bar.update(1)
    finally:
        for fut in futures:
            if not fut.done():
                fut.cancel()
        client.close()
        if cluster is not None:
            cluster.close()


def _collect(fut, spec, store) -> dict:
    """A finished Dask task's record, also stored here when the worker wrote elsewhere (a store
    error, e.g. a full disk, fails this task only)."""
    rec = fut.result()
    if store.get(rec["experiment"], spec["config"], exp=spec["exp"], warn=False) is None:
        store.write({k: v for k, v in rec.items() if k not in ("checksum", "reused")})
    return rec


def load_plan_records(plan: Plan, results_dir=None) -> dict:
    """The stored records of a plan's tasks (valid ones only): ``{task key: record}``."""
    store = ResultsStore(results_dir)
    out = {}
    for t in plan.tasks:
        rec = store.get(t.experiment, t.config, exp=plan.exp, warn=False)
        if rec is not None:
            out[t.key] = rec
    return out


__all__ = ["EXECUTORS", "Plan", "SweepResult", "Task", "build_config", "connect", "load_plan_records",
           "parse_assignment", "plan", "run"]
