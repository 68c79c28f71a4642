"""The second hostile battery's cases: each ends with one clear line (exit 2 from the command line, one
ConfigError from Python) before anything is computed, never hangs (a time limit on every case), and
nothing wrong is stored or served."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import _sweep_toy
from _sweep_toy import ToyConfig
from icl_lab import ConfigError, cli, records, runner, sweep
from icl_lab.papers.convergence.experiments import ReplicaConfig
from icl_lab.store import ResultsStore

pytestmark = pytest.mark.timeout(120)
TESTS = Path(__file__).resolve().parent
CS = "common.context_length"


def run_cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err):
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("usage:")]
    return code == 2 and len(lines) == 1 and lines[0].startswith("icl-lab: error:") and "Traceback" not in err


@pytest.mark.parametrize("device", ["meta", "lazy", "mps", "xpu", "vulkan", "hpu", "ipu"])
def test_devices_torch_cannot_compute_on_are_refused_everywhere(capsys, tmp_path, monkeypatch, device, toy):
    code, _, err = run_cli(capsys, "run", CS, "--scale", "ci", "--device", device, "--results", tmp_path / "r")
    assert one_line_error(code, err) and "device" in err and not (tmp_path / "r").exists()
    monkeypatch.setenv("ICL_LAB_DEVICE", device)
    code, _, err = run_cli(capsys, "list")
    assert one_line_error(code, err) and "ICL_LAB_DEVICE" in err
    monkeypatch.delenv("ICL_LAB_DEVICE")
    with pytest.raises(ConfigError, match="^device must be cpu or cuda"):
        runner.load_or_run(toy, ToyConfig(seeds=1), tmp_path / "r", device=device)
    with pytest.raises(ConfigError, match="^device must be cpu or cuda"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path / "r", device=device, progress=False)
    assert not (tmp_path / "r").exists() and not _sweep_toy.CALLS


def test_the_environment_is_checked_by_every_entry_point(tmp_path, monkeypatch, toy):
    monkeypatch.setenv("ICL_LAB_LOCK_STALE", "abc")
    for call in (lambda: sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path, progress=False),
                 lambda: runner.load_or_run(toy, ToyConfig(seeds=1), tmp_path)):
        with pytest.raises(ConfigError, match="^ICL_LAB_LOCK_STALE must be"):
            call()
    assert not _sweep_toy.CALLS


def test_a_record_path_or_experiment_folder_taken_by_something_else_is_refused_before_computing(tmp_path, toy):
    cfg = ToyConfig(seeds=1)
    st = ResultsStore(tmp_path)
    st.path_for(toy, cfg).mkdir(parents=True)  # a folder where the record belongs
    with pytest.raises(ConfigError, match="is not a file; remove it"):
        runner.load_or_run(toy, cfg, tmp_path)
    with pytest.raises(ConfigError, match="is not a file; remove it"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / toy).write_text("a file where the experiment's folder belongs")
    with pytest.raises(ConfigError, match="^results: cannot write to"):
        runner.load_or_run(toy, cfg, other)
    assert not _sweep_toy.CALLS


def test_a_full_disk_is_refused_before_computing_and_leaves_no_folder(tmp_path, monkeypatch, toy):
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(ConfigError, match="KB free"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path / "fresh", progress=False)
    with pytest.raises(ConfigError, match="KB free"):
        runner.load_or_run(toy, ToyConfig(seeds=1), tmp_path / "fresh2")
    assert not (tmp_path / "fresh").exists() and not (tmp_path / "fresh2").exists() and not _sweep_toy.CALLS


def test_ledgers_that_are_fifos_or_damaged_give_one_line_not_a_hang(capsys, tmp_path):
    good = tmp_path / "good" / "ci"
    good.mkdir(parents=True)
    (good / "common.json").write_text(json.dumps({"paper": "common", "part": "", "claims": []}))
    fifo = tmp_path / "fifo" / "ci"
    fifo.mkdir(parents=True)
    os.mkfifo(fifo / "common.json")
    bad = tmp_path / "bad" / "ci"
    bad.mkdir(parents=True)
    (bad / "common.json").write_text("{not json")
    for folder in (fifo, bad):
        code, _, err = run_cli(capsys, "report", "--compare", good, folder)
        assert one_line_error(code, err) and "cannot be read" in err
        code, _, err = run_cli(capsys, "list", "--claims", folder.parent)
        assert one_line_error(code, err)


def test_too_many_workers_are_refused(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", CS, "--executor", "dask", "--workers", str(10**12)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and [line for line in err.splitlines() if "error" in line] == [
        f"icl-lab: error: argument --workers: must be an integer in [1, {4 * (os.cpu_count() or 1)}] (got '{10**12}')"]


def test_seed_chunks_with_bad_seed_fields_are_neither_merged_nor_looped_over(tmp_path, toy):
    """Records edited to seeds <= 0 (checksum recomputed) are unusable: load_or_run computes, in bounded time."""
    p = sweep.plan(toy, "paper", seeds=4, seeds_per_task=2)
    sweep.run(p, results_dir=tmp_path, progress=False)
    for t in p.tasks:
        path = ResultsStore(tmp_path).path_for(toy, t.config)
        rec = json.loads(path.read_text())
        rec["config"]["seeds"] = 0
        rec["checksum"] = records.checksum(rec)
        path.write_text(json.dumps(rec))
    n = len(_sweep_toy.CALLS)
    t0 = time.monotonic()
    runner.load_or_run(toy, ToyConfig(seeds=4), tmp_path)
    assert time.monotonic() - t0 < 30 and len(_sweep_toy.CALLS) == n + 1


def test_a_chunk_missing_a_declared_key_is_not_served(tmp_path, toy):
    p = sweep.plan(toy, "paper", seeds=4, seeds_per_task=2)
    sweep.run(p, results_dir=tmp_path, progress=False)
    path = ResultsStore(tmp_path).path_for(toy, p.tasks[0].config)
    rec = json.loads(path.read_text())
    del rec["summary"]["shifts_count"]
    rec["checksum"] = records.checksum(rec)
    path.write_text(json.dumps(rec))
    n = len(_sweep_toy.CALLS)
    summary = runner.load_or_run(toy, ToyConfig(seeds=4), tmp_path)
    assert "shifts_count" in summary and len(_sweep_toy.CALLS) == n + 1


def test_identical_sweeps_started_together_compute_each_task_once_and_say_so(tmp_path, toy):
    """Three identical sweeps at once: every task is computed by one of them; the others report it as
    taken from the store, so the counts add up to the tasks, not three times them."""
    p = sweep.plan(toy, "paper", seeds=4, seeds_per_task=1, sets=["sleep=0.3"])
    results = []
    threads = [threading.Thread(target=lambda: results.append(sweep.run(p, results_dir=tmp_path, progress=False)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 3
    assert sum(len(r.computed) for r in results) == len(p.tasks) == len(_sweep_toy.CALLS)
    assert all(len(r.computed) + len(r.skipped) == len(p.tasks) for r in results)


def test_json_output_is_strict(capsys, tmp_path, monkeypatch, toy):
    import dataclasses

    from icl_lab import registry

    def with_nan(res):
        out = _sweep_toy.summarize_toy(res)
        out["per_seed"] = [[float("nan")] + row[1:] for row in out["per_seed"]]
        return out

    with_nan.summary_keys = _sweep_toy.summarize_toy.summary_keys
    real = registry.all_experiments
    monkeypatch.setattr(registry, "all_experiments",
                        lambda: {**real(), toy: dataclasses.replace(_sweep_toy.TOY, summary=with_nan)})
    code, out, err = run_cli(capsys, "run", toy, "--scale", "paper", "--seeds", 2, "--json", "--results", tmp_path)
    assert code == 0 and "NaN" not in out and json.loads(out)["points"][0]["summary"]["per_seed"][0][0] is None
    assert "written as null" in err


def test_the_command_line_never_hangs_on_a_fifo_lock(tmp_path):
    """A lock file that is a FIFO: the run takes the lock (an OS lock works on it) and finishes."""
    env = dict(os.environ, ICL_LAB_EXPERIMENTS="_sweep_toy",
               PYTHONPATH=f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    key = records.config_key("_sweep_toy.toy", ToyConfig(seeds=1))
    (tmp_path / "_sweep_toy.toy").mkdir()
    os.mkfifo(tmp_path / "_sweep_toy.toy" / f".{key}.lock")
    r = subprocess.run([sys.executable, "-m", "icl_lab.cli", "run", "_sweep_toy.toy", "--scale", "paper", "--seeds",
                        "1", "--results", str(tmp_path), "--no-progress"], env=env, capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and "1 task(s) computed" in r.stderr, r.stderr[-500:]


def test_seed_plus_seeds_past_the_declared_seed_range_is_refused_before_computing(capsys, tmp_path, toy):
    from icl_lab.papers.selectors.experiments import AlphaSweepConfig

    code, _, err = run_cli(capsys, "run", "selectors.alpha", "--scale", "ci", "--set", "seed=2147483647", "--seeds", 2,
                           "--results", tmp_path / "r")
    assert one_line_error(code, err) and "seed + seeds - 1 must be <= 2147483647" in err
    code, _, err = run_cli(capsys, "run", toy, "--scale", "paper", "--set", f"seed={2**63 - 1}", "--seeds", 2,
                           "--results", tmp_path / "r")
    assert one_line_error(code, err) and f"seed + seeds - 1 must be <= {2**63 - 1}" in err
    with pytest.raises(ConfigError, match="^seed \\+ seeds - 1"):
        AlphaSweepConfig.for_scale("ci", seed=2**31 - 2, seeds=3)
    assert AlphaSweepConfig.for_scale("ci", seed=2**31 - 2, seeds=2).seeds == 2  # the last seed is 2**31 - 1: allowed
    assert not (tmp_path / "r").exists() and not _sweep_toy.CALLS


def test_a_run_whose_tasks_all_fail_or_are_refused_leaves_no_folder(tmp_path, toy):
    p = sweep.plan(toy, "paper", seeds=2, sets=["fail_seed=1"])
    res = sweep.run(p, results_dir=tmp_path / "r", progress=False)
    assert len(res.failed) == 1 and not (tmp_path / "r").exists()
    (tmp_path / "r").mkdir()  # an existing results folder stays; the experiment's new, empty folder goes
    sweep.run(p, results_dir=tmp_path / "r", progress=False)
    assert (tmp_path / "r").is_dir() and not any((tmp_path / "r").iterdir())


def test_a_summary_holding_text_where_numbers_are_declared_is_neither_stored_nor_served(tmp_path, toy):
    """A record edited to hold a string in a numeric entry (checksum recomputed) is recomputed, not served."""
    from icl_lab import registry

    exp = registry.all_experiments()[toy]
    assert exp.summary_problem({"per_seed": [[0.5]], "shifts_count": 1, "seconds": 0.1}) is None
    assert "per_seed[0][0] = 'x'" in exp.summary_problem({"per_seed": [["x"]], "shifts_count": 1, "seconds": 0.1})
    runner.load_or_run(toy, ToyConfig(seeds=1), tmp_path)
    path = ResultsStore(tmp_path).path_for(toy, ToyConfig(seeds=1))
    rec = json.loads(path.read_text())
    rec["summary"]["shifts_count"] = "two"
    rec["checksum"] = records.checksum(rec)
    path.write_text(json.dumps(rec))
    n = len(_sweep_toy.CALLS)
    assert runner.load_or_run(toy, ToyConfig(seeds=1), tmp_path)["shifts_count"] == 2
    assert len(_sweep_toy.CALLS) == n + 1


def test_every_shipped_reference_summary_has_its_declared_types():
    """Text only where a summary function declares it (labels, names): every shipped record passes."""
    from icl_lab import paths, registry

    exps = registry.all_experiments()
    problems = [f"{path}: {exp.summary_problem(rec['summary'])}"
                for path, rec, _ in ResultsStore(paths.REFERENCE, reference=False).records(experiments=exps)
                if rec is not None and (exp := exps.get(rec["experiment"])) and exp.summary_problem(rec["summary"])]
    assert not problems


def test_a_scheduler_without_workers_is_waited_for_as_long_as_the_user_says(capsys, tmp_path, monkeypatch, toy):
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    monkeypatch.setenv("ICL_LAB_WORKER_WAIT", "abc")
    code, _, err = run_cli(capsys, "list")
    assert one_line_error(code, err) and "ICL_LAB_WORKER_WAIT" in err
    monkeypatch.setenv("ICL_LAB_WORKER_WAIT", "2")
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None, host="127.0.0.1") as cluster:
        t0 = time.monotonic()
        code, _, err = run_cli(capsys, "run", toy, "--scale", "paper", "--seeds", 1, "--executor", "dask",
                               "--address", cluster.scheduler_address, "--results", tmp_path / "r")
    assert time.monotonic() - t0 < 30 and code == 2 and "has no workers yet; waiting up to 2 s" in err
    assert "no worker joined the scheduler" in err.splitlines()[-1] and "Traceback" not in err
    assert not (tmp_path / "r").exists() and not _sweep_toy.CALLS


def test_a_later_grid_point_whose_prompts_miss_a_feature_is_refused_before_any_point_computes(capsys, tmp_path):
    """The experiment's check draws each task's prompts before any task runs: a grid whose second point
    (p1 = 1e-9) would leave feature 1 unqueried stops at once, and the first point is not computed."""
    code, _, err = run_cli(capsys, "run", "convergence.replica", "--scale", "ci", "--set", "epochs=10", "snapshots=1,10",
                           "--grid", "p1=0.8,1e-9", "--results", tmp_path / "r")
    last = err.strip().splitlines()[-1]  # after the plan's one line, one error line naming the point
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 2
    assert last.startswith("icl-lab: error:") and "leaves feature(s) 1 with no query" in last and "p1=1e-09" in last
    assert not (tmp_path / "r").exists()
    cfg = ReplicaConfig.for_scale("ci", p1=1e-9)
    with pytest.raises(ConfigError, match="leaves feature"):
        runner.load_or_run("convergence.replica", cfg, tmp_path / "r")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kind", ["garbage", "empty", "folder"])
def test_a_lock_file_holding_garbage_nothing_or_a_folder_is_not_waited_for(tmp_path, monkeypatch, toy, kind):
    """Only a lock another process holds is waited for: a lock path holding garbage (a pid too large for
    the OS), nothing, or a folder lets the run go ahead at once, whatever ICL_LAB_LOCK_STALE says."""
    monkeypatch.setenv("ICL_LAB_LOCK_STALE", "30")
    key = records.config_key(toy, ToyConfig(seeds=1))
    lock = tmp_path / toy / f".{key}.lock"
    lock.parent.mkdir()
    {"garbage": lambda: lock.write_text("99999999999999 host garbage"), "empty": lambda: lock.write_text(""),
     "folder": lambda: lock.mkdir()}[kind]()
    t0 = time.monotonic()
    res = sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path, progress=False)
    assert time.monotonic() - t0 < 10 and len(res.computed) == 1 and not res.failed
