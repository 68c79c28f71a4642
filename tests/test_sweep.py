"""Sweeps: planning (types, grid, seed chunks), the local and Dask executors (a real LocalCluster of
2 worker processes; identical results), failures, and a Dask worker killed mid-sweep."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from icl_lab import ConfigError, sweep
from icl_lab import params, registry, store
from icl_lab.papers.common.experiments import ContextLengthConfig

import _sweep_toy
from _sweep_toy import ToyConfig


# ----------------------------------------------------------------------------- values and plans
def test_values_are_parsed_by_the_declared_constraints():
    c = ContextLengthConfig
    assert params.coerce_value(c, "steps", "1e3") == 1000 and params.coerce_value(c, "steps", 7.0) == 7
    assert params.coerce_value(c, "lr", "3e-2") == 0.03
    assert params.coerce_value(c, "N_values", "2,4,8") == (2, 4, 8)
    assert params.coerce_value(c, "N_values", "[2, 4]") == (2, 4)
    assert params.coerce_value(c, "N_values", [16]) == (16,)
    assert params.coerce_value(c, "nw_bandwidths", "0.5,1") == (0.5, 1)
    assert params.coerce_value(ToyConfig, "mode", "'max'") == "max"
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
            params.coerce_value(cls, field, bad)


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
    assert "_sweep_toy.toy" in registry.experiments()
    monkeypatch.setenv("ICL_LAB_EXPERIMENTS", "no_such_module_xyz")
    with pytest.raises(ConfigError, match="^ICL_LAB_EXPERIMENTS names the module 'no_such_module_xyz'"):
        registry.experiments()


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


def _scenario(name: str, tmp_path, limit: float = 180, attempts: int = 2) -> None:
    """Runs a Dask scenario of ``_dask_scenarios`` in a process group of its own (the test process,
    its LocalCluster and the cluster's workers).  A run that does not end within ``limit`` seconds
    has its stacks printed and its whole group killed, and the scenario is run once more on a new
    cluster (a stall of Dask's recovery after a killed worker, not a result of the sweep's: Dask's
    own test suite reruns such tests); a scenario that fails, or stalls twice, fails the test."""
    import subprocess
    import sys
    import warnings

    for attempt in range(1, attempts + 1):
        folder = tmp_path / f"attempt{attempt}"
        folder.mkdir()
        env = {**os.environ, "ICL_LAB_SCENARIO_DUMP": str(limit - 10), "ICL_LAB_PROGRESS": "0"}
        proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("_dask_scenarios.py")), name, str(folder)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, env=env, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            warnings.warn(f"Dask scenario {name!r} stalled for {limit:g} s (attempt {attempt}); its stacks:\n{out[-4000:]}")
            continue
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever the scenario left running
            except ProcessLookupError:
                pass
        assert proc.returncode == 0, f"Dask scenario {name!r} failed:\n{out[-6000:]}"
        return
    pytest.fail(f"Dask scenario {name!r} stalled {attempts} times for {limit:g} s")


@pytest.mark.timeout(2 * 180 + 60)  # two attempts of at most 180 s each
def test_dask_cluster_bit_identical_and_survives_a_killed_worker(tmp_path):
    """A LocalCluster of 2 worker processes (started as by ``--executor dask``): the same sweep on
    the local executor and on the cluster, through the API and the command line, gives summaries
    equal bit for bit; a worker SIGKILLed mid-sweep is replaced, its task rescheduled, and every
    result equals the local run (``_dask_scenarios.killed_worker``)."""
    _scenario("killed_worker", tmp_path)


@pytest.mark.timeout(2 * 180 + 60)  # two attempts of at most 180 s each
def test_dask_a_disk_filling_up_fails_only_the_tasks_it_stops(tmp_path):
    """The results disk fills up in the middle of a Dask sweep: the tasks that could not store their
    record fail, each with its own "No space left on device" error; the others are stored and valid;
    nothing is cancelled, no temporary file is left, and the rerun computes only the failed tasks
    (``_dask_scenarios.disk_fills_up``)."""
    _scenario("disk_fills_up", tmp_path)


def test_executor_options_are_checked(toy, tmp_path):
    p = sweep.plan(toy, "ci")
    with pytest.raises(ConfigError, match=r"^executor must be one of \('local', 'dask'\)"):
        sweep.run(p, executor="threads", results_dir=tmp_path)
    with pytest.raises(ConfigError, match="^address only applies with executor dask"):
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
