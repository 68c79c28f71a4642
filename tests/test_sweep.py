"""Sweeps: planning (types, grid, seed chunks), the local and Dask executors (a real LocalCluster of
2 worker processes; identical results), failures, and a Dask worker killed mid-sweep."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import torch

from icl_lab import ConfigError, configure_threads, store, sweep
from icl_lab import registry
from icl_lab.papers.common.experiments import ContextLengthConfig

import _sweep_toy
from _sweep_toy import TOY, ToyConfig

CS = "common.context_length"
# common_setup at a tiny size: a task takes ~0.05 s
TINY = dict(d=4, K=2, N_values="2,4,8", steps=5, batch=8, test_prompts=16, linear_fit_prompts=64)


# ----------------------------------------------------------------------------- values and plans
def test_values_are_parsed_by_the_declared_constraints():
    c = ContextLengthConfig
    assert sweep.coerce_value(c, "steps", "1e3") == 1000 and sweep.coerce_value(c, "steps", 7.0) == 7
    assert sweep.coerce_value(c, "lr", "3e-2") == 0.03
    assert sweep.coerce_value(c, "N_values", "2,4,8") == (2, 4, 8)
    assert sweep.coerce_value(c, "N_values", "[2, 4]") == (2, 4)
    assert sweep.coerce_value(c, "N_values", [16]) == (16,)
    assert sweep.coerce_value(c, "nw_bandwidths", "0.5,1") == (0.5, 1)
    assert sweep.coerce_value(ToyConfig, "mode", "'max'") == "max"
    for field, bad, pattern in [("steps", "ten", r"^steps must be an integer in \[1, .*\] \(got 'ten'\)"),
                                ("steps", True, r"^steps must be an integer"),
                                ("steps", 2.5, r"^steps must be an integer"),
                                ("lr", "nan", r"^lr must be a number in"),
                                ("lr", "inf", r"^lr must be a number in"),
                                ("seed", "18446744073709551615", r"^seed must be an integer in \[0, "),
                                ("N_values", "2,x", r"^N_values(\[1\])? must be"),
                                ("mode", 3, r"^mode must be one of 'mean', 'max'"),
                                ("nope", 1, r"^nope is not a parameter of")]:
        cls = ToyConfig if field == "mode" else c
        with pytest.raises(ConfigError, match=pattern):
            sweep.coerce_value(cls, field, bad)


def test_plan_grid_product_and_seed_chunks(toy):
    p = sweep.plan(toy, "paper", sets=["n=3"], grid=["scale=1,2", "mode=mean,max"], seeds=7, seeds_per_task=3)
    assert p.points == [{"scale": 1.0, "mode": "mean"}, {"scale": 1.0, "mode": "max"},
                        {"scale": 2.0, "mode": "mean"}, {"scale": 2.0, "mode": "max"}]
    assert len(p.tasks) == 4 * 3
    first = p.tasks[:3]
    assert [t.seeds for t in first] == [[0, 1, 2], [3, 4], [5, 6]]  # balanced: 3, 2, 2
    assert all(t.config.n == 3 for t in p.tasks)
    assert len({t.key for t in p.tasks}) == len(p.tasks)
    # default: one task per grid point, all its seeds batched
    assert [len(t.seeds) for t in sweep.plan(toy, "paper", seeds=7).tasks] == [7]
    # tuple-valued fields in a grid
    q = sweep.plan(toy, "ci", grid=["shifts=[0,1],[2]"])
    assert [t.config.shifts for t in q.tasks] == [(0, 1), (2,)]


@pytest.mark.parametrize("kw,pattern", [
    (dict(sets=["n=0"]), r"^n must be an integer in \[1, "),
    (dict(sets=["n"]), r"^--set expects key=value"),
    (dict(sets=["n=2", "n=3"]), r"^--set gives n twice"),
    (dict(grid=["scale=1,-2"]), r"^scale must be a number in \(0, .*\(got -2\)"),
    (dict(grid=["scale=1,1"]), r"^--grid scale lists 1"),
    (dict(grid=["scale="]), r"^--grid scale needs one or more"),
    (dict(grid=["seeds=1,2"]), r"^seeds cannot be swept"),
    (dict(grid=["n=1,2"], sets=["n=3"]), r"^n is both fixed"),
    (dict(grid=["mode=mean,median"]), r"^mode must be one of 'mean', 'max'"),
    (dict(seeds=0), r"^seeds must be an integer >= 1"),
    (dict(seeds=2, sets=["seeds=3"]), r"^seeds is given twice"),
    (dict(seeds_per_task=0), r"^seeds_per_task must be an integer >= 1"),
    (dict(scale="big"), r"^scale must be one of \('ci', 'book', 'paper'\)"),
])
def test_bad_plans_fail_before_anything_runs(toy, kw, pattern, tmp_path):
    kw = dict(kw)
    scale = kw.pop("scale", "ci")
    with pytest.raises(ConfigError, match=pattern):
        sweep.plan(toy, scale, **kw)
    assert _sweep_toy.CALLS == []


def test_unknown_experiment_lists_the_known_ones():
    with pytest.raises(ConfigError, match=r"^experiment must be one of \[.*'common.context_length'"):
        sweep.plan("common.nope", "ci")


def test_plugin_experiments_from_the_environment(monkeypatch):
    monkeypatch.setenv("ICL_LAB_EXPERIMENTS", "_sweep_toy")
    assert "_sweep_toy.toy" in sweep.experiments()
    monkeypatch.setenv("ICL_LAB_EXPERIMENTS", "no_such_module_xyz")
    with pytest.raises(ConfigError, match="^ICL_LAB_EXPERIMENTS names the module 'no_such_module_xyz'"):
        sweep.experiments()


# ----------------------------------------------------------------------------- running
def test_local_sweep_skips_stored_tasks_and_reports_failures(toy, tmp_path):
    p = sweep.plan(toy, "paper", seeds=6, seeds_per_task=2, sets=["fail_seed=3"])
    res = sweep.run(p, results_dir=tmp_path, progress=False)
    assert len(res.computed) == 2 and len(res.failed) == 1 and not res.complete
    assert "seed 3 fails on purpose" in next(iter(res.failed.values()))
    assert len(list((tmp_path / toy).glob("*.json"))) == 2  # the failed task left nothing behind
    _sweep_toy.CALLS.clear()
    again = sweep.run(p, results_dir=tmp_path, progress=False)
    assert len(again.skipped) == 2 and len(_sweep_toy.CALLS) == 1  # only the failed task re-ran
    pts = again.point_summaries()
    assert pts[0]["summary"] is None  # incomplete point


def test_point_summaries_merge_chunks_like_one_task(toy, tmp_path):
    split = sweep.run(sweep.plan(toy, "paper", seeds=5, seeds_per_task=2), results_dir=tmp_path / "a", progress=False)
    whole = sweep.run(sweep.plan(toy, "paper", seeds=5), results_dir=tmp_path / "b", progress=False)
    a, b = split.point_summaries()[0], whole.point_summaries()[0]
    assert a["seeds"] == b["seeds"] == [0, 1, 2, 3, 4]
    assert store.strip_timings(a["summary"]) == store.strip_timings(b["summary"])


def test_dask_cluster_bit_identical_and_survives_a_killed_worker(toy, tmp_path, capsys):
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
            local = sweep.run(p, results_dir=tmp_path / "local", progress=False)
        finally:
            configure_threads(threads)
        dask = sweep.run(p, executor="dask", address=addr, results_dir=tmp_path / "dask", progress=False)
        assert local.complete and dask.complete and len(dask.computed) == 4
        assert os.getpid() not in {dask.records[t.key]["meta"]["pid"] for t in p.tasks}  # computed in the workers
        assert {dask.records[t.key]["meta"]["threads"] for t in p.tasks} == {1}
        for t in p.tasks:
            assert store.strip_timings(local.records[t.key]["summary"]) == \
                store.strip_timings(dask.records[t.key]["summary"])
        assert [store.strip_timings(x["summary"]) for x in local.point_summaries()] == \
            [store.strip_timings(x["summary"]) for x in dask.point_summaries()]
        assert len(sweep.run(p, results_dir=tmp_path / "dask", progress=False).skipped) == 4

        # 2. the command line, same cluster
        args = ["run", CS, "--scale", "ci", "--seeds", "4", "--seeds-per-task", "2", "--grid", "lr=1,3",
                "--executor", "dask", "--address", addr, "--results", str(tmp_path / "cli"), "--json", "--set"]
        args += [f"{k}={v}" for k, v in TINY.items()]
        assert cli.main(args) == 0
        out = __import__("json").loads(capsys.readouterr().out)
        assert [store.strip_timings(x["summary"]) for x in out["points"]] == \
            [store.strip_timings(x["summary"]) for x in local.point_summaries()]

        # 3. kill a worker mid-sweep
        q = sweep.plan(toy, "paper", seeds=4, seeds_per_task=1, sets=["sleep=0.3"])
        root = tmp_path / "killed" / toy
        killed = []

        def killer():
            deadline = time.time() + 60
            while time.time() < deadline:
                for f in root.glob("*.json"):
                    pid = store.ResultsStore(tmp_path / "killed").read(f)["meta"]["pid"]
                    os.kill(pid, signal.SIGKILL)  # that worker has started its next 0.3 s task
                    killed.append(pid)
                    return
                time.sleep(0.01)

        th = threading.Thread(target=killer)
        th.start()
        res = sweep.run(q, executor="dask", address=addr, results_dir=tmp_path / "killed", progress=False)
        th.join()
    finally:
        cluster.close()
    assert killed, "no task completed within a minute"
    assert res.complete and not res.failed
    ref = sweep.run(q, results_dir=tmp_path / "ref", progress=False)
    for t in q.tasks:
        assert store.strip_timings(res.records[t.key]["summary"]) == store.strip_timings(ref.records[t.key]["summary"])
    assert len(list(root.glob("*.json"))) == len(q.tasks)


def test_dask_a_disk_filling_up_fails_only_the_tasks_it_stops(toy, tmp_path, monkeypatch):
    """The results disk fills up in the middle of a Dask sweep: the tasks that could not store their
    record fail, each with its own "No space left on device" error; the others are stored and valid;
    nothing is cancelled, no temporary file is left, and the rerun computes only the failed tasks."""
    import _sweep_toy

    flag = tmp_path / "disk-is-full"
    root = tmp_path / "res"
    client, cluster = sweep.connect(workers=2)
    try:
        full = _sweep_toy.DiskFillsUp(str(flag))
        client.register_plugin(full)  # the workers' disk ...
        with monkeypatch.context() as m:  # ... is this process's disk: the record a worker returns cannot be stored here either
            m.setattr(os, "fsync", os.fsync)
            full.setup(None)
            q = sweep.plan(toy, "paper", seeds=6, seeds_per_task=1, sets=["sleep=0.3"])

            def fill():  # the disk is full from the moment the first record is stored
                deadline = time.time() + 60
                while time.time() < deadline and not list((root / toy).glob("*.json")):
                    time.sleep(0.01)
                flag.touch()

            th = threading.Thread(target=fill)
            th.start()
            res = sweep.run(q, executor="dask", address=cluster.scheduler_address, results_dir=root, progress=False)
            th.join()
    finally:
        client.close()
        cluster.close()
    assert flag.exists(), "no record was stored within a minute"
    assert 1 <= len(res.computed) < len(q.tasks) and len(res.computed) + len(res.failed) == len(q.tasks)
    assert all("No space left on device" in err for err in res.failed.values()), res.failed
    stored = list((root / toy).glob("*.json"))
    assert len(stored) == len(res.computed) and not list((root / toy).glob(".*.tmp"))
    st = store.ResultsStore(root)
    assert all(st.read(f) is not None for f in stored)
    flag.unlink()  # space freed: the rerun computes the failed tasks only, here in this process
    again = sweep.run(q, results_dir=root, progress=False)
    assert again.complete and len(again.skipped) == len(res.computed) and len(again.computed) == len(res.failed)


def test_executor_options_are_checked(toy, tmp_path):
    p = sweep.plan(toy, "ci")
    with pytest.raises(ConfigError, match=r"^executor must be one of \('local', 'dask'\)"):
        sweep.run(p, executor="threads", results_dir=tmp_path)
    with pytest.raises(ConfigError, match="^address only applies with executor 'dask'"):
        sweep.run(p, address="tcp://127.0.0.1:1", results_dir=tmp_path)
    with pytest.raises(ConfigError, match="^workers must be an integer >= 1"):
        sweep.run(p, executor="dask", workers=0, results_dir=tmp_path)
    with pytest.raises(ConfigError, match="^address: no Dask scheduler answered at 'tcp://127.0.0.1:9'"):
        sweep.connect("tcp://127.0.0.1:9", timeout=1)
    with pytest.raises(ConfigError, match="^address must be a scheduler address"):
        sweep.connect("  ")
    assert not list(tmp_path.iterdir())


def test_unwritable_results_fail_before_computing_and_recompute_overwrites(toy, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    p = sweep.plan(toy, "ci")
    with pytest.raises(ConfigError, match="^results: cannot write to"):
        sweep.run(p, results_dir=f / "sub", progress=False)
    assert _sweep_toy.CALLS == []
    sweep.run(p, results_dir=tmp_path / "r", progress=False)
    again = sweep.run(p, results_dir=tmp_path / "r", progress=False, recompute=True)
    assert len(again.computed) == 1 and len(_sweep_toy.CALLS) == 2
