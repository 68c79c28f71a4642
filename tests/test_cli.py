"""The ``icl-lab`` command line: list, show, run, report; clear errors; a sweep killed with SIGKILL
completes on the next invocation with the same results as an uninterrupted one."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from icl_lab import Ledger, cli, store


TESTS = Path(__file__).resolve().parent
CS = "common.context_length"
TINY = ["d=4", "K=2", "N_values=2,4", "steps=3", "batch=8", "test_prompts=16", "linear_fit_prompts=64"]


def run_cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def claims(tmp_path):
    """Exported ledgers at both scales, as the book writes them."""
    base = tmp_path / "claims"
    for scale, ok in (("ci", True), ("paper", False)):
        led = Ledger("common")
        led.claim("S4", "Sec. 5", "attention beats the average").check(measured=0.1, how="test", passed=ok)
        led.not_checkable("S9", "Sec. 6", "a constant", why="hidden constants")
        led.export(base / scale)
    return base


def test_help_explains_with_examples(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "icl-lab run common.context_length" in out and "report" in out
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    out = capsys.readouterr().out
    for word in ("--grid", "--seeds-per-task", "--executor", "--address", "dask-jobqueue", "examples:"):
        assert word in out
    assert cli.main([]) == 2  # no command: help, exit 2


def test_console_script_is_declared_and_installed():
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts.get("icl-lab") == "icl_lab.cli:main"
    assert (Path(sys.executable).parent / "icl-lab").exists()


def test_list_shows_experiments_and_claims(capsys, claims, toy):
    code, out, _ = run_cli(capsys, "list", "--claims", claims)
    assert code == 0
    assert CS in out and "Chapter 1, Sec. 5" in out and "toy.toy" in out
    assert "attention beats the average" in out and "| reproduced | — | not reproduced |" in out
    assert "| common | T1 |" in out  # a registry claim id without an exported statement
    code, out, _ = run_cli(capsys, "list", "--format", "json", "--claims", claims)
    data = json.loads(out)
    assert {e["name"] for e in data["experiments"]} >= {CS, "toy.toy"}
    s4 = next(c for c in data["claims"] if c["id"] == "S4")
    assert s4["status"] == {"ci": "reproduced", "paper": "not reproduced"} and CS in s4["experiments"]


@pytest.mark.declarations
def test_list_prints_every_declared_statement_on_a_fresh_clone(capsys, tmp_path):
    from icl_lab.claims import PAPERS, declared

    code, out, _ = run_cli(capsys, "list", "--claims", tmp_path / "none")
    assert code == 0
    for paper in PAPERS:
        for d in declared(paper).values():
            assert d.statement.replace("|", "\\|").replace("\n", " ")[:40] in out, (paper, d.id)


def test_show_lists_parameters(capsys):
    code, out, _ = run_cli(capsys, "show", CS)
    assert code == 0 and "| N_values | a list of " in out


def test_dry_run_checks_and_writes_nothing(capsys, tmp_path):
    code, out, err = run_cli(capsys, "run", CS, "--scale", "ci", "--grid", "lr=1,3", "--seeds", "5",
                             "--seeds-per-task", "3", "--results", tmp_path / "r", "--dry-run", "--set", *TINY)
    assert code == 0 and "2 grid point(s), 4 task(s)" in err
    assert out.count("to run") == 4 and "| lr=1.0 | 0-2 |" in out and "| lr=1.0 | 3-4 |" in out
    assert not (tmp_path / "r").exists()


def test_run_then_report(capsys, tmp_path, claims, toy):
    res = tmp_path / "r"
    code, out, err = run_cli(capsys, "run", toy, "--seeds", "3", "--grid", "mode=mean,max", "--results", res)
    assert code == 0 and "2 task(s) computed, 0 from the store" in err and "| mode=mean | 0-2 | 1 | 1 |" in out
    code, out, err = run_cli(capsys, "run", toy, "--seeds", "3", "--grid", "mode=mean,max", "--results", res, "--json")
    assert "0 task(s) computed, 2 from the store" in err
    pts = json.loads(out)["points"]
    assert [p["point"] for p in pts] == [{"mode": "mean"}, {"mode": "max"}] and len(pts[0]["summary"]["per_seed"][0]) == 3
    # a corrupt file is listed by the report, and recomputed by the next run
    victim = sorted((res / toy).glob("*.json"))[0]
    victim.write_text(victim.read_text()[:-30])
    code, out, _ = run_cli(capsys, "report", "--results", res, "--claims", claims, "--scale", "ci")
    assert code == 0 and "# Claims ledger, ci scale" in out and "attention beats the average" in out
    assert "| toy.toy |" in out and "1 unusable file(s)" in out and "not readable JSON" in out
    code, out, _ = run_cli(capsys, "report", "--results", res, "--claims", claims, "--scale", "paper", "--format", "json")
    data = json.loads(out)
    assert data["claims"]["total"]["not reproduced"] == 1 and len(data["results"]) == 1 and len(data["corrupt"]) == 1
    assert data["results"][0]["tasks"] == 1 and data["results"][0]["seeds"] == [0, 1, 2]
    code, _, err = run_cli(capsys, "run", toy, "--seeds", "3", "--grid", "mode=mean,max", "--results", res)
    warned = [line for line in err.splitlines() if "recomputed" in line]  # one line, no source line after it
    assert len(warned) == 1 and warned[0].startswith("icl-lab: warning: result file") and "UserWarning" not in err
    assert "1 task(s) computed, 1 from the store" in err
    code, out, _ = run_cli(capsys, "report", "--results", res, "--claims", tmp_path / "none")
    assert "No exported ledgers" in out and "unusable" not in out


@pytest.mark.parametrize("args,message", [
    (["run", CS, "--scale", "huge"], "argument --scale: invalid choice: 'huge'"),
    (["run", CS, "--executor", "mpi"], "argument --executor: invalid choice: 'mpi'"),
    (["run", CS, "--seeds", "-2"], "argument --seeds: must be an integer in [1, 1000000] (got '-2')"),
    (["run", CS, "--workers", "many"], f"argument --workers: must be an integer in [1, {4 * (os.cpu_count() or 1)}] (got 'many')"),
    (["run", CS, "--set", "stepz=3"], "stepz is not a parameter of ContextLengthConfig"),
    (["run", CS, "--set", "steps=3.5"], "steps must be an integer in [1, "),
    (["run", CS, "--grid", "lr=1,abc"], "lr must be a number in (0, 1e+06] (got 'abc')"),
    (["run", CS, "--grid", "K=2,40"], "K must be <= d for orthonormal features (got K=40, d=16) [grid point K=40]"),
    (["run", CS, "--address", "tcp://x:1"], "--address only applies with --executor dask"),
    (["run", CS, "--workers", "2"], "--workers only applies with --executor dask"),
    (["run", CS, "--device", "tpu"], "device must name a torch device"),
    (["run", "chapter.nope"], "experiment must be one of"),
    (["show", "nope"], "experiment must be one of"),
])
def test_bad_input_exits_2_with_one_clear_line(capsys, tmp_path, args, message):
    args = args + ["--results", str(tmp_path / "r")] if args[0] == "run" else args
    try:
        code = cli.main(args)
    except SystemExit as e:  # argparse errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("icl-lab") and "error: " in last and message in last, err
    assert "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_results_must_be_a_folder(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    code, _, err = run_cli(capsys, "run", CS, "--results", f)
    assert code == 2 and "--results must be a folder" in err


def test_sweep_killed_with_sigkill_completes_on_the_next_invocation(capsys, tmp_path, monkeypatch):
    """A real process kill: the CLI runs a sweep of 8 tasks in a subprocess and is SIGKILLed after
    some tasks were stored; one stored file is then corrupted.  Running the same command again
    computes exactly the missing and corrupt tasks, and the results equal an uninterrupted run."""
    monkeypatch.setenv("ICL_LAB_EXPERIMENTS", "_sweep_toy")
    name = "_sweep_toy.toy"
    cmd = ["run", name, "--seeds", "8", "--seeds-per-task", "1", "--set", "sleep=0.25", "--no-progress"]
    res = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "ICL_LAB_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "icl_lab.cli", *cmd, "--results", str(res)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    folder = res / name
    deadline = time.time() + 90
    while time.time() < deadline and len(list(folder.glob("*.json"))) < 2 and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done = sorted(folder.glob("*.json"))
    assert 2 <= len(done) < 8, "the sweep was not interrupted mid-way"
    for f in done:  # what was stored is complete and valid
        store.ResultsStore(res).read(f)
    victim = done[0]
    victim.write_bytes(victim.read_bytes()[:100])  # corrupt one completed result

    code, _, err = run_cli(capsys, *cmd, "--results", res)
    assert code == 0 and "icl-lab: warning: result file" in err and "recomputed" in err
    assert f"{8 - len(done) + 1} task(s) computed, {len(done) - 1} from the store" in err
    code, resumed, _ = run_cli(capsys, *cmd, "--results", res, "--json")
    code, straight, _ = run_cli(capsys, *cmd, "--results", tmp_path / "straight", "--json")
    a, b = json.loads(resumed)["points"], json.loads(straight)["points"]
    assert a[0]["seeds"] == list(range(8))
    assert store.strip_timings(a[0]["summary"]) == store.strip_timings(b[0]["summary"])
    assert len(list(folder.glob("*.json"))) == 8


def test_report_compare_lists_claims_whose_status_differs(capsys, claims):
    code, out, _ = run_cli(capsys, "report", "--compare", claims / "ci", claims / "ci")
    assert code == 0 and "same status" in out
    code, out, _ = run_cli(capsys, "report", "--compare", claims / "ci", claims / "paper")
    assert code == 1 and "S4" in out and "not reproduced" in out and "1 claims differ" in out
    code, _, err = run_cli(capsys, "report", "--compare", claims / "ci", claims / "nope")
    assert code == 2 and "not a folder" in err
