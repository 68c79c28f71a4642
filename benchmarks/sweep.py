"""Benchmark: one sweep on the local executor and on a Dask LocalCluster, side by side.

    python benchmarks/sweep.py --workers 2 --grid lr=10,30 --seeds 4 --seeds-per-task 2

Reports wall and CPU seconds of the local executor (one process), the LocalCluster's start-up, the
Dask run itself, the per-task overhead of Dask (Dask wall x workers / tasks minus the mean task
compute time), and checks that both give the same summaries (bit for bit on the CPU).  Writes
``benchmarks/out/sweep.json`` (or ``--out``).  It reports, it never fails.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experiment", default="common.context_length")
    ap.add_argument("--scale", default="ci")
    ap.add_argument("--grid", action="append", default=[])
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--seeds-per-task", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--local-threads", type=int, default=1, help="torch threads of the local executor")
    ap.add_argument("--skip-local", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "sweep.json"))
    args = ap.parse_args()

    from icl_lab import configure_threads, sweep
    from icl_lab.store import strip_timings

    plan = sweep.plan(args.experiment, args.scale, sets=args.set, grid=args.grid or ["lr=10,30"], seeds=args.seeds,
                      seeds_per_task=args.seeds_per_task)
    out = {"plan": plan.describe(), "cores": os.cpu_count(), "workers": args.workers}
    tmp = Path(tempfile.mkdtemp(prefix="icl-sweep-bench-"))
    local = None
    if not args.skip_local:
        configure_threads(args.local_threads)
        t0, c0 = time.perf_counter(), time.process_time()
        local = sweep.run(plan, results_dir=tmp / "local", progress=False, device=args.device)
        out["local"] = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                        "threads": args.local_threads, "device": local.records[plan.tasks[0].key]["meta"]["device"]}
    t0 = time.perf_counter()
    client, cluster = sweep.connect(workers=args.workers)
    client.close()
    out["dask_startup_s"] = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        dask = sweep.run(plan, executor="dask", address=cluster.scheduler_address, results_dir=tmp / "dask",
                         progress=False, device=args.device)
        wall = time.perf_counter() - t0
    finally:
        cluster.close()
    task_walls = [dask.records[t.key]["meta"]["wall_seconds"] for t in plan.tasks]
    out["dask"] = {"wall_s": wall, "tasks": len(plan.tasks), "mean_task_s": statistics.mean(task_walls),
                   "overhead_per_task_s": wall * min(args.workers, len(plan.tasks)) / len(plan.tasks)
                   - statistics.mean(task_walls)}
    if local is not None:
        same = all(strip_timings(local.records[t.key]["summary"]) == strip_timings(dask.records[t.key]["summary"])
                   for t in plan.tasks)
        out["identical_summaries"] = same
        out["speedup_vs_local"] = out["local"]["wall_s"] / wall
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
