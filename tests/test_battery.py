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
from icl_lab import ConfigError, cli, records, sweep, tasks
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
        tasks.load_or_run(toy, ToyConfig(seeds=1), tmp_path / "r", device=device)
    with pytest.raises(ConfigError, match="^device must be cpu or cuda"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path / "r", device=device, progress=False)
    assert not (tmp_path / "r").exists() and not _sweep_toy.CALLS


def test_the_environment_is_checked_by_every_entry_point(tmp_path, monkeypatch, toy):
    monkeypatch.setenv("ICL_LAB_LOCK_STALE", "abc")
    for call in (lambda: sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path, progress=False),
                 lambda: tasks.load_or_run(toy, ToyConfig(seeds=1), tmp_path)):
        with pytest.raises(ConfigError, match="^ICL_LAB_LOCK_STALE must be"):
            call()
    assert not _sweep_toy.CALLS


def test_a_record_path_or_experiment_folder_taken_by_something_else_is_refused_before_computing(tmp_path, toy):
    cfg = ToyConfig(seeds=1)
    st = ResultsStore(tmp_path)
    st.path_for(toy, cfg).mkdir(parents=True)  # a folder where the record belongs
    with pytest.raises(ConfigError, match="is not a file; remove it"):
        tasks.load_or_run(toy, cfg, tmp_path)
    with pytest.raises(ConfigError, match="is not a file; remove it"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / toy).write_text("a file where the experiment's folder belongs")
    with pytest.raises(ConfigError, match="^results: cannot write to"):
        tasks.load_or_run(toy, cfg, other)
    assert not _sweep_toy.CALLS


def test_a_full_disk_is_refused_before_computing_and_leaves_no_folder(tmp_path, monkeypatch, toy):
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(ConfigError, match="KB free"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path / "fresh", progress=False)
    with pytest.raises(ConfigError, match="KB free"):
        tasks.load_or_run(toy, ToyConfig(seeds=1), tmp_path / "fresh2")
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
    tasks.load_or_run(toy, ToyConfig(seeds=4), tmp_path)
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
    summary = tasks.load_or_run(toy, ToyConfig(seeds=4), tmp_path)
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
