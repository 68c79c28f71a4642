"""The store reader over hostile files: each is refused (StoreError) quickly, never hangs or loads."""
import os
import time

import pytest

from icl_lab.records import StoreError
from icl_lab.store import ResultsStore


def _make(kind, path, tmp_path):
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "link_out":
        outside = tmp_path / "outside.json"
        outside.write_text("{}")
        os.symlink(outside, path)
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


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "link_out", "deep", "huge_int", "directory", "loop", "not_json"])
def test_reader_refuses_hostile_files_quickly(tmp_path, kind):
    root = tmp_path / "results"
    (root / "exp").mkdir(parents=True)
    path = root / "exp" / "k.json"
    _make(kind, path, tmp_path)
    t = time.perf_counter()
    with pytest.raises(StoreError):
        ResultsStore(root).read(path)
    assert time.perf_counter() - t < 2.0


# ----------------------------------------------------------------------------- checksum-valid, wrong content
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
    import json

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


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "deep", "huge_int"])
def test_reader_in_a_limited_subprocess(tmp_path, kind):
    """Each hostile file read in a child with 1 GB of address space and a 20 s timeout."""
    import subprocess
    import sys

    root = tmp_path / "results"
    (root / "exp").mkdir(parents=True)
    path = root / "exp" / "k.json"
    _make(kind, path, tmp_path)
    code = ("import resource,sys; resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))\n"
            "from icl_lab.records import StoreError\nfrom icl_lab.store import ResultsStore\n"
            f"try:\n    ResultsStore({str(root)!r}).read({str(path)!r})\nexcept StoreError:\n    sys.exit(3)\n")
    r = subprocess.run([sys.executable, "-c", code], timeout=20, capture_output=True)
    assert r.returncode == 3, r.stderr.decode()[-500:]


def test_a_summary_without_the_experiments_keys_is_recomputed(toy, tmp_path, monkeypatch):
    """A record edited to another shape (its checksum recomputed, so it reads as intact) is not served:
    the experiment's declared summary keys are checked on read, and the task is computed again; a
    computed summary that does not match its declaration fails its task."""
    import json

    import _sweep_toy

    from icl_lab import sweep
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
