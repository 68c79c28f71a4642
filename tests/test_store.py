"""The results store: atomic records with checksums, corrupt files recomputed, load_or_run,
merging seed chunks."""
from __future__ import annotations

import json
import os
import time

import pytest

from icl_lab import ConfigError, store, sweep
from icl_lab import registry
from icl_lab.store import ResultsStore, StoreError

import _sweep_toy
from _sweep_toy import TOY, ToyConfig


@pytest.fixture
def toy_registry(monkeypatch):
    """The registry plus the test-only experiment ``toy.toy``."""
    real = registry.all_experiments
    monkeypatch.setattr(registry, "all_experiments", lambda: {**real(), "toy.toy": TOY})
    _sweep_toy.CALLS.clear()
    return "toy.toy"


def _record(cfg=None, **kw):
    cfg = cfg or ToyConfig(seeds=2)
    return store.run_and_record("toy.toy", cfg, experiments={"toy.toy": TOY}, **kw)


def test_record_roundtrip_and_metadata(tmp_path):
    st = ResultsStore(tmp_path)
    rec = _record(scale="ci", overrides={"seeds": 2})
    path = st.write(rec)
    assert path == tmp_path / "toy.toy" / f"{rec['key']}.json"
    assert not list(path.parent.glob(".*.tmp"))
    back = st.read(path, {"toy.toy": TOY})
    assert back["summary"] == rec["summary"] and back["seeds"] == [0, 1]
    meta = back["meta"]
    assert {"code", "versions", "device", "host", "started", "finished", "wall_seconds", "cpu_seconds"} <= set(meta)
    assert meta["code"]["icl_lab"] and meta["versions"]["torch"] and meta["device"] == "cpu"
    assert back["checksum"].startswith("sha256:") and back["checksum"] == store.checksum(back)
    assert st.get("toy.toy", ToyConfig(seeds=2))["key"] == rec["key"]
    assert st.get("toy.toy", ToyConfig(seeds=3)) is None


def test_key_depends_on_every_field_not_on_how_the_config_was_built():
    a = ToyConfig.for_scale("ci")  # seeds=2
    b = ToyConfig.for_scale("paper", seeds=2)
    assert store.config_key("toy.toy", a) == store.config_key("toy.toy", b)
    assert store.config_key("toy.toy", a) != store.config_key("toy.toy", a.replace(scale=2.0))
    assert store.config_key("toy.toy", a) != store.config_key("other.toy", a)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "edit_summary", "empty"])
def test_corrupt_files_are_detected_and_treated_as_missing(tmp_path, damage):
    st = ResultsStore(tmp_path)
    path = st.write(_record())
    text = path.read_text()
    if damage == "truncate":
        path.write_text(text[: len(text) // 2])
    elif damage == "flip":
        i = text.index('"per_seed"') + 20  # inside the numbers
        path.write_text(text[:i] + ("7" if text[i] != "7" else "3") + text[i + 1:])
    elif damage == "garbage":
        path.write_bytes(b"\x00\xff" * 50)
    elif damage == "edit_summary":
        rec = json.loads(text)
        rec["summary"]["shifts_count"] = 99  # a valid JSON edit without updating the checksum
        path.write_text(json.dumps(rec))
    else:
        path.write_text("")
    with pytest.raises(StoreError, match="result file"):
        st.read(path)
    with pytest.warns(UserWarning, match="recomputed"):
        assert st.get("toy.toy", ToyConfig(seeds=2)) is None
    (p, rec, err), = st.records()
    assert rec is None and "result file" in err


def test_moved_file_is_rejected(tmp_path):
    st = ResultsStore(tmp_path)
    path = st.write(_record())
    moved = path.with_name("0" * 24 + ".json")
    os.replace(path, moved)
    with pytest.raises(StoreError, match="moved or renamed"):
        st.read(moved)


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    st = ResultsStore(tmp_path)
    rec = _record()

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(store.os, "replace", boom)
    with pytest.raises(OSError):
        st.write(rec)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # neither the record nor a tmp file


def test_results_must_be_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ConfigError, match="^results must be a folder"):
        ResultsStore(f)


def test_load_or_run_computes_once_then_reads(tmp_path, toy_registry):
    cfg = ToyConfig(seeds=3)
    first = store.load_or_run(toy_registry, cfg, tmp_path)
    assert len(_sweep_toy.CALLS) == 1
    again = store.load_or_run(toy_registry, cfg, tmp_path)
    assert again == first and len(_sweep_toy.CALLS) == 1
    # corrupt file: recomputed, same numbers
    path = ResultsStore(tmp_path).path_for(toy_registry, cfg)
    path.write_text(path.read_text()[:40])
    with pytest.warns(UserWarning, match="recomputed"):
        third = store.load_or_run(toy_registry, cfg, tmp_path)
    assert len(_sweep_toy.CALLS) == 2
    assert store.strip_timings(third) == store.strip_timings(first)
    # default config follows the scale
    ci = store.load_or_run(toy_registry, None, tmp_path, scale="ci")
    assert len(ci["per_seed"][0]) == ToyConfig.CI["seeds"]


def test_load_or_run_merges_stored_seed_chunks(tmp_path, toy_registry):
    p = sweep.plan(toy_registry, "paper", seeds=5, seeds_per_task=2)  # chunks of 2, 2, 1 seeds
    assert [len(t.seeds) for t in p.tasks] == [2, 2, 1]
    sweep.run(p, results_dir=tmp_path, progress=False)
    n = len(_sweep_toy.CALLS)
    merged = store.load_or_run(toy_registry, ToyConfig(seeds=5), tmp_path)
    assert len(_sweep_toy.CALLS) == n  # nothing recomputed
    whole = store.run_and_record(toy_registry, ToyConfig(seeds=5))["summary"]
    assert store.strip_timings(merged) == store.strip_timings(whole)


def test_load_or_run_rejects_a_config_of_another_experiment(tmp_path, toy_registry):
    from icl_lab.papers.common.experiments import ContextLengthConfig

    with pytest.raises(ConfigError, match="^cfg must be a ToyConfig"):
        store.load_or_run(toy_registry, ContextLengthConfig.for_scale("ci"), tmp_path)
    assert not list(tmp_path.iterdir())


def test_merge_chunks():
    a = {"N": [2, 4, 8], "loss": [[1, 2], [3, 4], [5, 6]], "seconds": 1.0, "flag": "x"}
    b = {"N": [2, 4, 8], "loss": [[7], [8], [9]], "seconds": 2.0, "flag": "x"}
    m = store.merge_chunks([a, b], [2, 1])
    assert m == {"N": [2, 4, 8], "loss": [[1, 2, 7], [3, 4, 8], [5, 6, 9]], "seconds": 3.0, "flag": "x"}
    # first axis per seed
    assert store.merge_chunks([{"v": [1, 2]}, {"v": [3]}], [2, 1]) == {"v": [1, 2, 3]}
    # ambiguous: every chunk has 2 seeds and the other axis is 2 long too
    with pytest.raises(StoreError, match="ambiguous"):
        store.merge_chunks([{"v": [[1, 2], [3, 4]]}, {"v": [[5, 6], [7, 8]]}], [2, 2])
    # a seed-averaged statistic cannot be merged
    with pytest.raises(StoreError, match="no axis"):
        store.merge_chunks([{"mean": 0.5}, {"mean": 0.7}], [2, 2])


def test_strip_timings():
    s = {"seconds": 1, "fit_time": 2, "loss": [1], "inner": {"wall_s": 3, "elapsed": 4, "x": 5}, "timeline": 6}
    assert store.strip_timings(s) == {"loss": [1], "inner": {"x": 5}, "timeline": 6}


def test_clean_tmp_removes_only_old_debris(tmp_path):
    st = ResultsStore(tmp_path)
    st.write(_record())
    old = tmp_path / "toy.toy" / ".abc.123.tmp"
    new = tmp_path / "toy.toy" / ".def.456.tmp"
    old.write_text("{")
    new.write_text("{")
    os.utime(old, (0, 0))
    assert st.clean_tmp(older_than=3600) == 1 and not old.exists() and new.exists()
    assert len(st.records()) == 1  # tmp files are never read as records


def test_load_or_run_recomputes_a_record_made_by_other_library_code(tmp_path, monkeypatch):
    """A stored summary is reused only while the library source that computed it is unchanged."""
    from icl_lab import store

    calls = []
    real = store.run_and_record

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(store, "run_and_record", counting)
    from icl_lab.papers.synthesis.experiments import CrossPaperConfig

    cfg = CrossPaperConfig.for_scale("ci", L_values=(2.0,), seeds=1, steps=20, contrast_tasks=200, eval_prompts=16)
    first = store.load_or_run("synthesis.cross_paper", cfg, tmp_path)
    again = store.load_or_run("synthesis.cross_paper", cfg, tmp_path)
    same = json.dumps(store.strip_timings(again), sort_keys=True) == json.dumps(store.strip_timings(first), sort_keys=True)
    assert len(calls) == 1 and same
    monkeypatch.setattr(store, "source_hash", lambda: "another-library")
    store.load_or_run("synthesis.cross_paper", cfg, tmp_path)
    assert len(calls) == 2


def test_claim_files_block_live_owners_and_expire_for_dead_ones(tmp_path):
    import subprocess
    import sys

    st = store.ResultsStore(tmp_path)
    lock = st.claim("exp", "0" * 24)
    with pytest.raises(store.Busy):
        st.claim("exp", "0" * 24)  # this process is alive
    st.release(lock)
    host = __import__("socket").gethostname()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(json.dumps({"host": host, "pid": int(dead.stdout), "time": 0}))
    st.release(st.claim("exp", "0" * 24))  # a dead owner's claim is taken over
    if sys.platform == "linux":  # a process that has ended but that its parent has not reaped (a zombie)
        zombie = subprocess.Popen([sys.executable, "-c", "pass"])
        deadline = time.time() + 30
        while time.time() < deadline and store._process_alive(zombie.pid, None):
            time.sleep(0.05)
        assert os.path.exists(f"/proc/{zombie.pid}")  # ended, not reaped
        lock.write_text(json.dumps({"host": host, "pid": zombie.pid, "time": 0}))
        st.release(st.claim("exp", "0" * 24))
        zombie.wait()
    # a live process under the claim's pid that is not the one that took it (pid reused)
    start = store._process_start(os.getpid())
    if start is not None:
        lock.write_text(json.dumps({"host": host, "pid": os.getpid(), "start": start + 1, "time": 0}))
        st.release(st.claim("exp", "0" * 24))
    # a claim on another host is taken over once it has not been touched for ICL_LAB_LOCK_STALE seconds
    lock.write_text(json.dumps({"host": "elsewhere", "pid": 1, "time": 0}))
    with pytest.raises(store.Busy):
        st.claim("exp", "0" * 24)
    os.utime(lock, (time.time() - 121, time.time() - 121))
    st.release(st.claim("exp", "0" * 24))


def test_a_held_claim_is_kept_fresh_until_released(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "HEARTBEAT_SECONDS", 0.05)
    monkeypatch.setattr(store, "_HEARTBEAT", store._Heartbeat())
    st = store.ResultsStore(tmp_path)
    lock = st.claim("exp", "1" * 24)
    old = time.time() - 100
    os.utime(lock, (old, old))
    deadline = time.time() + 10
    while time.time() < deadline and lock.stat().st_mtime < old + 50:
        time.sleep(0.02)
    assert lock.stat().st_mtime > old + 50, "the holder did not touch its claim"
    st.release(lock)
    assert not lock.exists() and not store._HEARTBEAT._held
