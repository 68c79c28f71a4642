"""The hostile battery: hostile files under the store's reader, hostile command lines (a corpus generated
from every experiment's declared PARAMS plus hand-written ones), hostile environments, results folders,
plugins and Dask addresses. Each case ends with one clear line (exit status 2 and ``icl-lab: error: ...``
from the command line, one ConfigError/StoreError from Python) before anything is computed or created,
or runs correctly; none hangs (a time limit on every case, the slow ones in child processes started at
once, in parallel with the rest)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch

import _sweep_toy
from _sweep_toy import ToyConfig
from icl_lab import ConfigError, cli, registry, runner, sweep
from icl_lab.params import Real, constraints_of, is_declared
from icl_lab.records import StoreError
from icl_lab.store import ResultsStore

pytestmark = pytest.mark.timeout(120)
TESTS = Path(__file__).resolve().parent
CS = "common.context_length"


# ----------------------------------------------------------------------------- helpers
def _make(kind, path, tmp_path):
    """A hostile thing at ``path``."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "link_out":
        outside = tmp_path / "outside.json"
        outside.write_text("{}")
        os.symlink(outside, path)
    elif kind == "dangling":
        os.symlink(tmp_path / "nowhere", path)
    elif kind == "deep":
        path.write_text("[" * 100_000)
    elif kind == "huge_int":
        path.write_text("1" * 5000)
    elif kind == "directory":
        path.mkdir()
    elif kind == "loop":
        os.symlink(path, path)
    elif kind == "not_json":
        path.write_bytes(b"\xff\xfe{")


def run_cli(capsys, *args) -> tuple[int, str]:
    try:
        code = cli.main([str(a) for a in args])
    except SystemExit as e:  # argparse
        code = e.code
    return code, capsys.readouterr().err


def lines_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip() and not line.startswith("usage:")]


def one_line_error(code, err, *, after_plan: bool = False) -> bool:
    """Exit status 2 and one error line (after the plan's one line, where the plan was printed), no
    warning, no traceback."""
    lines = lines_of(err)
    want = 2 if after_plan else 1
    return (code == 2 and len(lines) == want and lines[-1].startswith("icl-lab: error:")
            and "Traceback" not in err and "Warning" not in err)


# ----------------------------------------------------------------------------- children, started at once
READER_KINDS = ["fifo", "dev_zero", "deep", "huge_int"]
# One child process (importing torch takes seconds), started before the first test and read after the last:
# 1. each hostile file read with 2 GB of address space (a soft limit, lifted again after);
# 2. Client.__del__ of a client left to the garbage collector takes the class lock of Dask's LoopRunner; a
#    collection inside LoopRunner.start (which holds it) then deadlocked (make unit hung). The child makes
#    that collection happen there every time, after connect() failed on an address that answers HTTP.
CHILD = """
import gc, resource, socket, sys, threading
from icl_lab.records import StoreError
from icl_lab.store import ResultsStore
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (2**31, hard))
root, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    try:
        ResultsStore(root).read(path)
        print("read", flush=True)
    except StoreError:
        print("refused", flush=True)
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
try:
    from distributed.utils import LoopRunner
except ImportError:
    print("no distributed", flush=True)
    sys.exit(0)
from icl_lab import sweep
from icl_lab.params import ConfigError

start = LoopRunner._start_unlocked
def collecting(self):
    gc.collect()
    return start(self)
LoopRunner._start_unlocked = collecting
gc.disable()
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
def serve():
    while True:
        c, _ = srv.accept()
        c.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Length: 5\\r\\n\\r\\nhello")
threading.Thread(target=serve, daemon=True).start()
try:
    sweep.connect(f"tcp://127.0.0.1:{srv.getsockname()[1]}", timeout=1)
except ConfigError:
    print("refused", flush=True)
from distributed import LocalCluster
with LocalCluster(n_workers=0, processes=False, dashboard_address=None):
    print("cluster started", flush=True)
"""


@pytest.fixture(scope="module", autouse=True)
def child(tmp_path_factory):
    """The battery's child process, started at once; returns its output lines (after at most 60 s)."""
    tmp = tmp_path_factory.mktemp("child")
    root = tmp / "results"
    (root / "exp").mkdir(parents=True)
    paths = []
    for kind in READER_KINDS:
        path = root / "exp" / f"{kind}.json"
        _make(kind, path, tmp)
        paths.append(str(path))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), *paths], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    result: list = []

    def lines():
        if not result:
            try:
                out, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()[0], "timed out after 60 s (a hang)"
            result.extend([out.split("\n"), err])
        return result
    yield lines
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


# ----------------------------------------------------------------------------- the store's reader
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "link_out", "dangling", "deep", "huge_int", "directory",
                                  "loop", "not_json"])
def test_reader_refuses_hostile_files_quickly(tmp_path, kind):
    root = tmp_path / "results"
    (root / "exp").mkdir(parents=True)
    path = root / "exp" / "k.json"
    _make(kind, path, tmp_path)
    t = time.perf_counter()
    with pytest.raises(StoreError):
        ResultsStore(root).read(path)
    assert time.perf_counter() - t < 2.0


def _valid_record(**changes):
    from icl_lab.records import FORMAT, checksum

    rec = {"format": FORMAT, "experiment": "exp", "key": "0" * 24, "config": {}, "seeds": [0], "scale": "ci",
           "overrides": {}, "summary": {"loss": [0.1, 0.2]}, "meta": {"wall_seconds": 1.0, "cpu_seconds": 1.0}}
    rec.update(changes)
    rec["checksum"] = checksum(rec)
    return rec


SCHEMA_CASES = {"meta_int": dict(meta=5), "wall_text": dict(meta={"wall_seconds": "abc"}), "seeds_text": dict(seeds="abc"),
                "nan_loss": dict(summary={"loss": [float("nan")]}), "all_inf": dict(summary={"a": float("inf")}),
                "summary_list": dict(summary=[1, 2]), "escape": dict(experiment="../../etc"),
                "wall_negative": dict(meta={"wall_seconds": -1.0})}


@pytest.mark.parametrize("case", sorted(SCHEMA_CASES))
def test_checksum_valid_records_with_wrong_content_are_unusable(tmp_path, case):
    root = tmp_path / "results"
    (root / "exp").mkdir(parents=True)
    path = root / "exp" / ("0" * 24 + ".json")
    path.write_text(json.dumps(_valid_record(**SCHEMA_CASES[case])))
    with pytest.raises(StoreError):
        ResultsStore(root).read(path)
    if case == "escape":
        with pytest.raises(StoreError):
            ResultsStore(root).write({k: v for k, v in _valid_record(**SCHEMA_CASES[case]).items() if k != "checksum"})


def test_undefined_times_are_not_losses():
    """NaN marks a level never reached (a time such as ``T_eps_loss``); a NaN loss is a diverged run."""
    from icl_lab.records import summary_problem

    nan = float("nan")
    assert summary_problem({"T_eps_loss": [[nan, 3.0]], "final_loss": [0.1]}) is None
    assert summary_problem({"t_half": nan, "final_loss": [0.1]}) is None
    for bad in ({"final_loss": [nan], "a": 1}, {"x": {"train_loss": [float("inf")]}, "a": 1},
                {"per": {"5": {"loss": nan}}, "a": 1}, {"losses": [[1.0, nan]], "a": 1}):
        assert "non-finite loss" in summary_problem(bad)


def test_a_valid_record_is_read_and_written_with_the_umask(tmp_path):
    root = tmp_path / "results"
    old = os.umask(0o022)
    try:
        path = ResultsStore(root).write({k: v for k, v in _valid_record().items() if k != "checksum"})
    finally:
        os.umask(old)
    assert ResultsStore(root).read(path)["summary"] == {"loss": [0.1, 0.2]}
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_summary_without_the_experiments_keys_is_recomputed(toy, tmp_path, monkeypatch):
    """A record edited to another shape (its checksum recomputed, so it reads as intact) is not served:
    the experiment's declared summary keys are checked on read, and the task is computed again; a
    computed summary that does not match its declaration fails its task."""
    from icl_lab.records import checksum
    from icl_lab.registry import Returns

    p = sweep.plan(toy, "paper", seeds=2)
    first = sweep.run(p, results_dir=tmp_path, progress=False)
    (task,) = p.tasks
    path = ResultsStore(tmp_path).path_for(toy, task.config)
    rec = json.loads(path.read_text())
    rec["summary"] = {"per_seed": [[1.0]], "seconds": 0.1}  # shifts_count dropped
    del rec["checksum"]
    rec["checksum"] = checksum(rec)
    path.write_text(json.dumps(rec))
    with pytest.warns(UserWarning, match="missing shifts_count"):
        assert ResultsStore(tmp_path).get(toy, task.config, exp=_sweep_toy.TOY) is None
    with pytest.warns(UserWarning, match="missing shifts_count"):  # the sweep says why it recomputes
        again = sweep.run(p, results_dir=tmp_path, progress=False)
    assert again.computed == [task.key]
    assert again.records[task.key]["summary"]["per_seed"] == first.records[task.key]["summary"]["per_seed"]
    # a declaration out of date fails the task and stores nothing
    monkeypatch.setattr(_sweep_toy.summarize_toy, "summary_keys",
                        Returns(frozenset({"per_seed", "seconds"}), {"per_seed": 1}, ("seconds",)))
    res = sweep.run(p, results_dir=tmp_path / "other", progress=False)
    assert "unexpected shifts_count" in res.failed[task.key] and not list((tmp_path / "other").rglob("*.json"))


# ----------------------------------------------------------------------------- the command-line corpus
def _text(v) -> str:
    if isinstance(v, (tuple, list)):
        return "[" + ",".join(_text(x) for x in v) + "]"
    return repr(v) if not isinstance(v, str) else v


def _subnormal(value) -> bool:
    """A subnormal float, or a list holding one."""
    if isinstance(value, (tuple, list)):
        return any(_subnormal(v) for v in value)
    return isinstance(value, float) and 0 < abs(value) < sys.float_info.min


def _generated():
    """``--set field=<invalid value>`` for the first four generated invalid values of every declared field
    of every experiment, and its subnormal one where the field is a real number."""
    out = []
    for name, exp in sorted(registry.all_experiments().items()):
        for field, c in sorted(constraints_of(exp.config).items()):
            bads = c.invalid()[:4] + [b for b in c.invalid()[4:] if _subnormal(b)]
            for bad in bads:
                text = _text(bad)
                if isinstance(bad, str) and bad.strip().lower() in ("none", "null", ""):
                    continue
                try:  # invalid as a Python value but valid as typed text ("N_values=5" is [5])
                    c.parse(field, text)
                    continue
                except ConfigError:
                    pass
                out.append(["run", name, "--dry-run", "--set", f"{field}={text}"])
    return out


HAND = [
    ["run", CS, "--set", "seed=18446744073709551615"],
    ["run", CS, "--set", "seed=1e20"],
    ["run", CS, "--set", "test_seed=2**70"],
    ["run", CS, "--set", "batch=1e9"],
    ["run", CS, "--set", "N_values=[1000000000]"],
    ["run", CS, "--set", "steps=1e12"],
    ["run", CS, "--set", "lr=1e308"],
    ["run", CS, "--set", "lr=5e-324"],  # the smallest subnormal
    ["run", CS, "--set", "lr=-0.0"],
    ["run", CS, "--grid", "lr=1,1e-320"],
    ["run", CS, "--set", "nw_bandwidths=[0.5,1e-310]"],  # a subnormal inside a list
    ["run", "nonlinear.theory_figures", "--set", "c=1e-320"],  # trained, then failed: now refused at once
    ["run", "nonlinear.theory_figures", "--set", "c=1e-300"],  # (L/c)^2 overflows
    ["run", "nonlinear.block_figures", "--set", "c=1e-9"],
    ["run", CS, "--set", "seed=" + "9" * 5000],
    ["run", CS, "--set", "N_values=" + "[" * 100_000],
    ["run", CS, "--seeds", "1000000", "--seeds-per-task", "1", "--dry-run"],
    ["run", CS, "--results", ""],
    ["run", CS, "--results", "x" * 300],
    ["run", CS, "--max-memory", "lots"],
    ["run", CS, "--max-memory", "1K", "--dry-run"],
    ["run", CS, "--executor", "dask", "--address", "not an address"],
    ["run", CS, "--device", "quantum"],
    ["run", "nope.nothing"], ["show", "nope"], ["run", "../../etc"],
]
CORPUS = _generated() + HAND
ENV = [("ICL_LAB_THREADS", "abc"), ("ICL_LAB_THREADS", "100000"), ("ICL_LAB_THREADS", "0"), ("ICL_LAB_SCALE", "huge"),
       ("ICL_LAB_DEVICE", "quantum"), ("ICL_LAB_EXPERIMENTS", "../../etc"), ("ICL_LAB_MAX_MEMORY", "-3"),
       ("ICL_LAB_RESULTS", "y" * 300), ("ICL_LAB_LOCK_STALE", "never"), ("ICL_LAB_WORKER_WAIT", "-1"),
       ("ICL_LAB_WORKER_THREADS", "2000")]


def test_the_corpus_is_large_and_covers_every_real_fields_subnormal():
    assert len(CORPUS) + len(ENV) >= 200
    reals = [(name, f) for name, exp in registry.all_experiments().items()
             for f, c in constraints_of(exp.config).items()
             if any(isinstance(r, Real) and r._in(1e-320) for r in (c, getattr(c, "item", None)))]
    covered = {(a[1], a[4].split("=")[0]) for a in CORPUS if len(a) > 4 and "e-3" in a[4]}
    assert reals and set(reals) <= covered


def test_hostile_command_lines_exit_2_with_one_line(tmp_path, monkeypatch, capsys):
    import functools

    monkeypatch.setattr(cli, "build_parser", functools.lru_cache(maxsize=None)(cli.build_parser))  # built once
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICL_LAB_RESULTS", str(tmp_path / "results"))
    bad = []
    for argv in CORPUS:
        code, err = run_cli(capsys, *argv)
        lines = err.strip().splitlines()
        if code != 2 or not lines or not lines[-1].startswith("icl-lab") or "Traceback" in err:
            bad.append((argv[:5], code, lines[-1:]))
        if (tmp_path / "results").exists():
            bad.append((argv[:5], "created the results folder"))
            (tmp_path / "results").rmdir()
    assert not bad, bad[:8]


@pytest.mark.parametrize("var,value", ENV)
def test_bad_environment_is_one_line(monkeypatch, capsys, var, value, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(var, value)
    code, err = run_cli(capsys, "run", CS, "--dry-run")
    assert one_line_error(code, err), err


def test_every_config_declares_params():
    undeclared = [name for name, exp in registry.all_experiments().items() if not is_declared(exp.config)]
    assert not undeclared, f"configs without PARAMS for every field: {undeclared}"


def test_every_generated_invalid_value_of_every_experiment_is_refused():
    """Every declared field of every experiment refuses each of its generated invalid values (the
    subnormal of a real field among them), as a Python value and as typed text."""
    bad = []
    for name, exp in registry.all_experiments().items():
        for field, c in constraints_of(exp.config).items():
            for value in c.invalid():
                try:
                    c.check(field, value)
                    bad.append((name, field, value))
                except ConfigError:
                    pass
    assert not bad, bad[:8]


def test_the_smallest_declared_frequency_computes():
    """c = 1e-320 trained and then failed its task; the declared range now starts where a run computes
    (the record is made, its summary checked for non-finite losses, as a task does)."""
    from icl_lab.papers.nonlinear.experiments import TheoryConfig

    cfg = TheoryConfig.for_scale("ci", c=1e-6, seeds=1, steps=5, M=20, test_prompts=20, L_values=(1.0,))
    rec = runner.run_and_record("nonlinear.theory_figures", cfg, scale="ci")
    assert rec["summary"] and json.dumps(rec["summary"], allow_nan=False)  # finite throughout


# ----------------------------------------------------------------------------- every check before any task
def test_a_grid_point_whose_prompts_miss_a_feature_stops_the_sweep_before_any_task(capsys, tmp_path):
    """test_prompts=1 was refused only once its task had started, after test_prompts=200 was computed."""
    code, err = run_cli(capsys, "run", CS, "--scale", "ci", "--grid", "test_prompts=200,1", "--results", tmp_path / "r")
    assert one_line_error(code, err, after_plan=True) and "leaves feature(s) 2, 3, 4 with no query" in err
    assert "test_prompts=1" in lines_of(err)[-1] and not (tmp_path / "r").exists()


@pytest.mark.parametrize("name,field", [("common.context_length", "test_prompts"), ("convergence.identities", "prompts"),
                                        ("nonlinear.block_figures", "test_prompts")])
def test_every_experiment_that_draws_per_feature_prompts_checks_them_before_computing(name, field, monkeypatch,
                                                                                       tmp_path):
    """Their runs refuse prompts that leave a feature unqueried; the same check runs before any task."""
    exp = registry.all_experiments()[name]
    K = exp.config.for_scale("ci").K
    cfgs = [exp.config.for_scale("ci", **{field: K, "seed": s}) for s in range(20)] if field == "prompts" else \
        [exp.config.for_scale("ci", **{field: 1})]
    refused = []
    for cfg in cfgs:
        try:
            exp.check(cfg)
        except ConfigError as e:
            refused.append((cfg, str(e)))
    assert refused and all("with no query" in msg for _, msg in refused)
    monkeypatch.setattr(runner, "run_and_record", lambda *a, **k: pytest.fail("a task started"))
    with pytest.raises(ConfigError, match="with no query"):
        runner.load_or_run(name, refused[0][0], tmp_path / "r")
    assert not (tmp_path / "r").exists()


# ----------------------------------------------------------------------------- the results folder's rule
def test_an_experiment_folder_linked_out_of_the_results_folder_is_neither_served_nor_computed(capsys, tmp_path, toy):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "r"
    root.mkdir()
    os.symlink(outside, root / toy)
    code, err = run_cli(capsys, "run", toy, "--scale", "paper", "--seeds", 1, "--results", root)
    assert one_line_error(code, err, after_plan=True) and "leads out of the results folder" in err
    assert not _sweep_toy.CALLS and not any(outside.iterdir())
    with pytest.raises(ConfigError, match="leads out of the results folder"):
        runner.load_or_run(toy, ToyConfig(seeds=1), root)
    # a record stored there (by a run into that folder) is not served through the link
    good = sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path / "good", progress=False)
    (key,) = good.records
    src = ResultsStore(tmp_path / "good").path(toy, key)
    (outside / src.name).write_bytes(src.read_bytes())
    st = ResultsStore(root)
    with pytest.raises(StoreError, match="links out of the results folder"):
        st.read(root / toy / src.name)
    assert st.get(toy, ToyConfig(seeds=1), exp=_sweep_toy.TOY, warn=True) is None
    with pytest.raises(StoreError, match="leads outside the results folder"):
        st.write({k: v for k, v in json.loads(src.read_text()).items() if k != "checksum"})
    assert [p.name for p in outside.iterdir()] == [src.name]


@pytest.mark.parametrize("where", ["results", "experiment"])
@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_results_or_experiment_folder_that_links_nowhere_is_one_line(capsys, tmp_path, toy, where, kind):
    root = tmp_path / "r"
    link = root if where == "results" else root / toy
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(tmp_path / "nowhere" if kind == "dangling" else link, link)
    code, err = run_cli(capsys, "run", toy, "--scale", "paper", "--seeds", 1, "--results", root)
    if where == "results" and kind == "loop":  # the path itself cannot be used: refused before the plan
        assert one_line_error(code, err) and "cannot be used" in err, err
    else:
        assert one_line_error(code, err, after_plan=True) and "is a link to nowhere" in err, err
    assert not _sweep_toy.CALLS and link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_link_inside_the_results_folder_is_followed(tmp_path, toy):
    root = tmp_path / "r"
    (root / "real").mkdir(parents=True)
    os.symlink(root / "real", root / toy)
    res = sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=root, progress=False)
    assert len(res.computed) == 1 and list((root / "real").glob("*.json"))
    again = sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=root, progress=False)
    assert again.skipped == res.computed


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "dangling", "loop", "directory"])
def test_a_record_path_that_is_not_a_file_is_one_line_without_a_warning(capsys, tmp_path, toy, kind):
    root = tmp_path / "r"
    path = ResultsStore(root).path_for(toy, ToyConfig(seeds=1))
    path.parent.mkdir(parents=True)
    _make(kind, path, tmp_path)
    code, err = run_cli(capsys, "run", toy, "--scale", "paper", "--seeds", 1, "--results", root)
    assert one_line_error(code, err, after_plan=True) and "is not a file; remove it" in err, err
    assert not _sweep_toy.CALLS


def test_a_folder_without_a_free_inode_for_the_lock_and_the_temporary_file_is_refused_before_computing(
        tmp_path, monkeypatch, toy):
    """The pre-flight creates what a task creates, both at once: a folder with one free inode failed only
    after the computation."""
    import errno

    from icl_lab import store as store_mod

    real_open, made = os.open, []

    def one_inode(path, flags, *args):
        if flags & os.O_CREAT and made:
            raise OSError(errno.ENOSPC, "No space left on device")
        fd = real_open(path, flags, *args)
        if flags & os.O_CREAT:
            made.append(path)
        return fd
    monkeypatch.setattr(store_mod.os, "open", one_inode)
    with pytest.raises(ConfigError, match=r"^results: cannot write to .*No space left on device"):
        sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=tmp_path / "r", progress=False)
    made.clear()
    with pytest.raises(ConfigError, match="No space left on device"):
        runner.load_or_run(toy, ToyConfig(seeds=1), tmp_path / "r2")
    assert not _sweep_toy.CALLS and not (tmp_path / "r").exists() and not (tmp_path / "r2").exists()


def test_a_real_filesystem_with_one_free_inode_is_refused_before_computing(tmp_path, toy):
    """The same on a real tmpfs of 16 inodes, filled to one free inode (where mounting is allowed)."""
    import errno

    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,nr_inodes=16", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        root = mnt / "r"
        (root / toy).mkdir(parents=True)
        fillers = []
        try:
            while True:
                fillers.append(mnt / f"f{len(fillers)}")
                fillers[-1].touch()
        except OSError as e:
            assert e.errno == errno.ENOSPC
        fillers[-2].unlink()  # one inode free: the lock could be taken, the temporary file not
        with pytest.raises(ConfigError, match=r"^results: cannot write to .*No space left on device"):
            sweep.run(sweep.plan(toy, "paper", seeds=1), results_dir=root, progress=False)
        assert not _sweep_toy.CALLS and not any((root / toy).iterdir())
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


# ----------------------------------------------------------------------------- nothing left behind
def test_a_failed_task_of_load_or_run_leaves_no_folder_or_lock(tmp_path, toy):
    with pytest.raises(RuntimeError, match="fails on purpose"):
        runner.load_or_run(toy, ToyConfig(seeds=1, fail_seed=0), tmp_path / "r")
    assert not (tmp_path / "r").exists()
    (tmp_path / "kept").mkdir()  # an existing results folder stays; the experiment's folder it made goes
    with pytest.raises(RuntimeError):
        runner.load_or_run(toy, ToyConfig(seeds=1, fail_seed=0), tmp_path / "kept")
    assert (tmp_path / "kept").is_dir() and not any((tmp_path / "kept").iterdir())
    # a folder that held something before keeps it, and keeps the lock (another process may wait on it)
    runner.load_or_run(toy, ToyConfig(seeds=2), tmp_path / "kept")
    with pytest.raises(RuntimeError):
        runner.load_or_run(toy, ToyConfig(seeds=1, fail_seed=0), tmp_path / "kept")
    assert len(list((tmp_path / "kept" / toy).glob("*.json"))) == 1


# ----------------------------------------------------------------------------- plugins, threads
@pytest.mark.parametrize("body", ["import sys\nsys.exit(3)", "raise RuntimeError('boom')", "import sys\nsys.exit()",
                                  "import no_such_module_here", "EXPERIMENTS = 5"])
def test_a_plugin_that_fails_to_import_or_exits_is_one_line_naming_it(capsys, tmp_path, monkeypatch, body):
    name = f"hostile_plugin_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("ICL_LAB_EXPERIMENTS", name)
    code, err = run_cli(capsys, "list")
    assert one_line_error(code, err) and name in err, err
    sys.modules.pop(name, None)


def test_threads_above_the_cores_are_capped_with_one_warning_line(capsys, monkeypatch, tmp_path, toy):
    monkeypatch.setenv("ICL_LAB_THREADS", "1024")
    monkeypatch.setattr(runner, "_warned_threads", set())
    before = torch.get_num_threads()
    try:
        code, err = run_cli(capsys, "run", toy, "--scale", "paper", "--seeds", 1, "--results", tmp_path / "r")
        assert torch.get_num_threads() <= runner.machine_cores()
    finally:
        torch.set_num_threads(before)
    warned = [line for line in lines_of(err) if "warning" in line]
    assert code == 0 and len(warned) == 1 and warned[0].startswith("icl-lab: warning: ICL_LAB_THREADS=1024 is more")
    assert runner.capped_threads(1) == 1


# ----------------------------------------------------------------------------- Dask addresses
def test_addresses_of_services_that_are_not_schedulers_fail_fast_with_one_line():
    """A port that accepts and then stays silent, answers HTTP, or answers bytes that are not Dask's
    protocol: one ConfigError naming the address within the connection timeout, never a hang (the three
    at once)."""
    pytest.importorskip("distributed")
    replies = {"silent": b"", "http": b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", "garbage": b"\x00\xff" * 64}
    stop, servers, threads, errors = threading.Event(), [], [], {}

    def serve(srv, reply):
        conns = []
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            conns.append(c)
            if reply:
                try:
                    c.sendall(reply)
                except OSError:
                    pass
        for c in conns:
            c.close()

    def attempt(kind, port):
        try:
            sweep.connect(f"tcp://127.0.0.1:{port}", timeout=0.5)
            errors[kind] = "connected"
        except ConfigError as e:
            errors[kind] = str(e)

    try:
        for kind, reply in replies.items():
            srv = socket.socket()
            srv.bind(("127.0.0.1", 0))
            srv.listen(8)
            srv.settimeout(0.2)
            servers.append(srv)
            threads.append(threading.Thread(target=serve, args=(srv, reply), daemon=True))
            threads.append(threading.Thread(target=attempt, args=(kind, srv.getsockname()[1])))
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads[1::2]:
            t.join(30)
        assert time.monotonic() - t0 < 30
    finally:
        stop.set()
        for t in threads[::2]:
            t.join(timeout=5)
        for srv in servers:
            srv.close()
    assert set(errors) == set(replies)
    assert all(msg.startswith("address:") and "\n" not in msg for msg in errors.values()), errors


# ----------------------------------------------------------------------------- the children's results (last: they ran
# alongside every test above)
def test_a_failed_dask_client_is_not_left_to_the_garbage_collector(child):
    """A collection inside LoopRunner.start (holding its lock) after connect() failed: it hung before."""
    out, err = child()
    n = len(READER_KINDS)
    if out[n:n + 1] == ["no distributed"]:
        pytest.skip("Dask distributed is not installed")
    assert out[n:n + 2] == ["refused", "cluster started"], err[-800:]


@pytest.mark.parametrize("kind", READER_KINDS)
def test_reader_in_a_limited_subprocess(child, kind):
    """Each hostile file read in a child with 2 GB of address space: refused, never loaded or hung."""
    out, err = child()
    assert out[READER_KINDS.index(kind)] == "refused", err[-500:]
