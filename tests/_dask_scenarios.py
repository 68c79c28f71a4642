"""The Dask executor's scenarios with a real LocalCluster, each run by ``tests/test_sweep.py`` in a
process of its own (``python tests/_dask_scenarios.py NAME FOLDER``) under a time limit.

A cluster whose worker is SIGKILLed or whose disk fills up exercises Dask's own recovery (nannies
restarting workers, tasks rescheduled); in its own process group the whole cluster can be ended
if it stalls, so no state of Dask's can keep the test suite waiting.  Each scenario asserts what
the sweep promises and exits 0, or fails with its traceback."""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from icl_lab import configure_threads, registry, store, sweep  # noqa: E402
from icl_lab.store import strip_timings  # noqa: E402

import _sweep_toy  # noqa: E402

CS = "common.context_length"
# common_setup at a tiny size: a task takes ~0.05 s
TINY = dict(d=4, K=2, N_values="2,4,8", steps=5, batch=8, test_prompts=16, linear_fit_prompts=64)
TOY = "toy.toy"


def _register_toy():
    real = registry.all_experiments
    registry.all_experiments = lambda: {**real(), TOY: _sweep_toy.TOY}


def killed_worker(tmp: Path) -> None:
    """The Dask executor for real: a LocalCluster of 2 worker processes, started by the same code
    as ``--executor dask`` (``sweep.connect``), reached by address as on a cluster.

    1. the same sweep on the local executor and on the cluster: summaries equal bit for bit;
    2. the same through the command line (``--executor dask --address``);
    3. a worker process SIGKILLed mid-sweep, right after its first task was stored: Dask
       reschedules the lost task, the sweep completes, and every result equals the local run."""
    from icl_lab import cli

    client, cluster = sweep.connect(workers=2)
    client.close()
    addr = cluster.scheduler_address
    try:
        # 1. bit-identical to the local executor
        p = sweep.plan(CS, "ci", sets=TINY, grid=["lr=1,3"], seeds=4, seeds_per_task=2)
        threads = torch.get_num_threads()
        configure_threads(1)  # as in the workers
        try:
            local = sweep.run(p, results_dir=tmp / "local", progress=False)
        finally:
            configure_threads(threads)
        dask = sweep.run(p, executor="dask", address=addr, results_dir=tmp / "dask", progress=False)
        assert local.complete and dask.complete and len(dask.computed) == 4
        assert os.getpid() not in {dask.records[t.key]["meta"]["pid"] for t in p.tasks}  # computed in the workers
        assert {dask.records[t.key]["meta"]["threads"] for t in p.tasks} == {1}
        for t in p.tasks:
            assert strip_timings(local.records[t.key]["summary"]) == \
                strip_timings(dask.records[t.key]["summary"])
        assert [strip_timings(x["summary"]) for x in local.point_summaries()] == \
            [strip_timings(x["summary"]) for x in dask.point_summaries()]
        assert len(sweep.run(p, results_dir=tmp / "dask", progress=False).skipped) == 4

        # 2. the command line, same cluster
        args = ["run", CS, "--scale", "ci", "--seeds", "4", "--seeds-per-task", "2", "--grid", "lr=1,3",
                "--executor", "dask", "--address", addr, "--results", str(tmp / "cli"), "--json", "--set"]
        args += [f"{k}={v}" for k, v in TINY.items()]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(args) == 0
        assert [strip_timings(x["summary"]) for x in json.loads(out.getvalue())["points"]] == \
            [strip_timings(x["summary"]) for x in local.point_summaries()]

        # 3. kill a worker mid-sweep
        q = sweep.plan(TOY, "paper", seeds=4, seeds_per_task=1, sets=["sleep=0.3"])
        root = tmp / "killed" / TOY
        killed = []

        def killer():
            deadline = time.time() + 60
            while time.time() < deadline:
                for f in root.glob("*.json"):
                    pid = store.ResultsStore(tmp / "killed").read(f)["meta"]["pid"]
                    os.kill(pid, signal.SIGKILL)  # that worker has started its next 0.3 s task
                    killed.append(pid)
                    return
                time.sleep(0.01)

        th = threading.Thread(target=killer, daemon=True)
        th.start()
        res = sweep.run(q, executor="dask", address=addr, results_dir=tmp / "killed", progress=False)
        th.join(60)
    finally:
        cluster.close(timeout=30)
    assert killed, "no task completed within a minute"
    assert res.complete and not res.failed, res.failed
    ref = sweep.run(q, results_dir=tmp / "ref", progress=False)
    for t in q.tasks:
        assert strip_timings(res.records[t.key]["summary"]) == strip_timings(ref.records[t.key]["summary"])
    assert len(list(root.glob("*.json"))) == len(q.tasks)


def disk_fills_up(tmp: Path) -> None:
    """The results disk fills up in the middle of a Dask sweep: the tasks that could not store their
    record fail, each with its own "No space left on device" error; the others are stored and valid;
    nothing is cancelled, no temporary file is left, and the rerun computes only the failed tasks."""
    flag = tmp / "disk-is-full"
    root = tmp / "res"
    client, cluster = sweep.connect(workers=2)
    real_fsync = os.fsync
    try:
        full = _sweep_toy.DiskFillsUp(str(flag))
        client.register_plugin(full)  # the workers' disk ...
        full.setup(None)  # ... is this process's disk: the record a worker returns cannot be stored here either
        q = sweep.plan(TOY, "paper", seeds=6, seeds_per_task=1, sets=["sleep=0.3"])

        def fill():  # the disk is full from the moment the first record is stored
            deadline = time.time() + 60
            while time.time() < deadline and not list((root / TOY).glob("*.json")):
                time.sleep(0.01)
            flag.touch()

        th = threading.Thread(target=fill, daemon=True)
        th.start()
        res = sweep.run(q, executor="dask", address=cluster.scheduler_address, results_dir=root, progress=False)
        th.join(60)
    finally:
        os.fsync = real_fsync
        client.close()
        cluster.close(timeout=30)
    assert flag.exists(), "no record was stored within a minute"
    assert 1 <= len(res.computed) < len(q.tasks) and len(res.computed) + len(res.failed) == len(q.tasks)
    assert all("No space left on device" in err for err in res.failed.values()), res.failed
    stored = list((root / TOY).glob("*.json"))
    assert len(stored) == len(res.computed) and not list((root / TOY).glob(".*.tmp"))
    st = store.ResultsStore(root)
    assert all(st.read(f) is not None for f in stored)
    flag.unlink()  # space freed: the rerun computes the failed tasks only, here in this process
    again = sweep.run(q, results_dir=root, progress=False)
    assert again.complete and len(again.skipped) == len(res.computed) and len(again.computed) == len(res.failed)


SCENARIOS = {"killed_worker": killed_worker, "disk_fills_up": disk_fills_up}

if __name__ == "__main__":
    import faulthandler

    faulthandler.dump_traceback_later(float(os.environ.get("ICL_LAB_SCENARIO_DUMP", "170")), exit=False)
    _register_toy()
    SCENARIOS[sys.argv[1]](Path(sys.argv[2]))
    print(f"scenario {sys.argv[1]}: ok")
