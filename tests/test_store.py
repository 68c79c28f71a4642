"""The results store: atomic records with checksums, corrupt files recomputed, load_or_run,
merging seed chunks."""
from __future__ import annotations

import json
import os
import re
import time

import pytest
import torch

from icl_lab import ConfigError, store, sweep
from icl_lab import records, runner
from icl_lab import registry
from icl_lab.records import StoreError
from icl_lab.store import ResultsStore

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
    return runner.run_and_record("toy.toy", cfg, experiments={"toy.toy": TOY}, **kw)


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
    # the kind of CPU, numerically (what makes bit-for-bit comparisons meaningful): 12 hex digits, the same
    # whatever the thread count of the caller
    assert meta["cpu_kind"] == records.cpu_kind() and re.fullmatch(r"[0-9a-f]{12}", meta["cpu_kind"])
    threads = torch.get_num_threads()
    records.cpu_kind.cache_clear()
    torch.set_num_threads(2)
    try:
        assert records.cpu_kind() == meta["cpu_kind"] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    assert back["checksum"].startswith("sha256:") and back["checksum"] == records.checksum(back)
    assert st.get("toy.toy", ToyConfig(seeds=2), exp=TOY)["key"] == rec["key"]
    assert st.get("toy.toy", ToyConfig(seeds=3), exp=TOY) is None


def test_key_depends_on_every_field_not_on_how_the_config_was_built():
    a = ToyConfig.for_scale("ci")  # seeds=2
    b = ToyConfig.for_scale("paper", seeds=2)
    assert records.config_key("toy.toy", a) == records.config_key("toy.toy", b)
    assert records.config_key("toy.toy", a) != records.config_key("toy.toy", a.replace(scale=2.0))
    assert records.config_key("toy.toy", a) != records.config_key("other.toy", a)


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
    first = runner.load_or_run(toy_registry, cfg, tmp_path)
    assert len(_sweep_toy.CALLS) == 1
    again = runner.load_or_run(toy_registry, cfg, tmp_path)
    assert again == first and len(_sweep_toy.CALLS) == 1
    # corrupt file: recomputed, same numbers
    path = ResultsStore(tmp_path).path_for(toy_registry, cfg)
    path.write_text(path.read_text()[:40])
    with pytest.warns(UserWarning, match="recomputed"):
        third = runner.load_or_run(toy_registry, cfg, tmp_path)
    assert len(_sweep_toy.CALLS) == 2
    assert store.strip_timings(third) == store.strip_timings(first)
    # default config follows the scale
    ci = runner.load_or_run(toy_registry, None, tmp_path, scale="ci")
    assert len(ci["per_seed"][0]) == ToyConfig.CI["seeds"]


def test_load_or_run_merges_stored_seed_chunks(tmp_path, toy_registry):
    p = sweep.plan(toy_registry, "paper", seeds=5, seeds_per_task=2)  # chunks of 2, 2, 1 seeds
    assert [len(t.seeds) for t in p.tasks] == [2, 2, 1]
    sweep.run(p, results_dir=tmp_path, progress=False)
    n = len(_sweep_toy.CALLS)
    merged = runner.load_or_run(toy_registry, ToyConfig(seeds=5), tmp_path)
    assert len(_sweep_toy.CALLS) == n  # nothing recomputed
    whole = runner.run_and_record(toy_registry, ToyConfig(seeds=5))["summary"]
    assert store.strip_timings(merged) == store.strip_timings(whole)


def test_load_or_run_rejects_a_config_of_another_experiment(tmp_path, toy_registry):
    from icl_lab.papers.common.experiments import ContextLengthConfig

    with pytest.raises(ConfigError, match="^cfg must be a ToyConfig"):
        runner.load_or_run(toy_registry, ContextLengthConfig.for_scale("ci"), tmp_path)
    assert not list(tmp_path.iterdir())


def test_merge_chunks():
    a = {"N": [2, 4, 8], "loss": [[1, 2], [3, 4], [5, 6]], "seconds": 1.0, "flag": "x"}
    b = {"N": [2, 4, 8], "loss": [[7], [8], [9]], "seconds": 2.0, "flag": "x"}
    m = store.merge_chunks([a, b], [2, 1], per_seed={"loss": 1}, timings=("seconds",))
    assert m == {"N": [2, 4, 8], "loss": [[1, 2, 7], [3, 4, 8], [5, 6, 9]], "seconds": 3.0, "flag": "x"}
    # a table of per-seed values: the declared axis is in every entry
    t = store.merge_chunks([{"v": {"a": [1, 2], "b": [3, 4]}}, {"v": {"a": [5], "b": [6]}}], [2, 1], per_seed={"v": 0})
    assert t == {"v": {"a": [1, 2, 5], "b": [3, 4, 6]}}
    # the seed axis is the one declared, even where another axis is as long
    sq = store.merge_chunks([{"v": [[1, 2], [3, 4]]}, {"v": [[5, 6], [7, 8]]}], [2, 2], per_seed={"v": 1})
    assert sq == {"v": [[1, 2, 5, 6], [3, 4, 7, 8]]}
    # an undeclared entry that differs (a seed-averaged statistic) cannot be merged
    with pytest.raises(StoreError, match="not declared per seed"):
        store.merge_chunks([{"mean": 0.5}, {"mean": 0.7}], [2, 2])
    # a per-seed entry whose axis is not as long as the chunk's seeds
    with pytest.raises(StoreError, match="seed axis"):
        store.merge_chunks([{"v": [1, 2]}, {"v": [3]}], [2, 2], per_seed={"v": 0})


def test_strip_timings_drops_the_declared_timings_only():
    s = {"seconds": 1, "cpu_seconds": 2, "loss": [1], "timeline": 6}
    assert store.strip_timings(s) == {"cpu_seconds": 2, "loss": [1], "timeline": 6}
    assert store.strip_timings(s, ("seconds", "cpu_seconds")) == {"loss": [1], "timeline": 6}


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
    """A stored summary is reused only while the code that computed it (its fingerprint) is unchanged."""

    calls = []
    real = runner.run_and_record

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(runner, "run_and_record", counting)
    from icl_lab.papers.synthesis.experiments import CrossPaperConfig

    cfg = CrossPaperConfig.for_scale("ci", L_values=(2.0,), seeds=1, steps=20, contrast_tasks=200, eval_prompts=16)
    first = runner.load_or_run("synthesis.cross_paper", cfg, tmp_path)
    again = runner.load_or_run("synthesis.cross_paper", cfg, tmp_path)
    same = json.dumps(store.strip_timings(again), sort_keys=True) == json.dumps(store.strip_timings(first), sort_keys=True)
    assert len(calls) == 1 and same
    monkeypatch.setattr(type(registry.all_experiments()["synthesis.cross_paper"]), "fingerprint",
                        property(lambda self: "other-code"))
    runner.load_or_run("synthesis.cross_paper", cfg, tmp_path)
    assert len(calls) == 2


def test_a_task_lock_blocks_while_its_holder_lives_and_frees_when_it_dies(tmp_path):
    """The lock is an OS file lock: held by a live process, released by the kernel when it dies,
    however it dies (SIGKILL included), and never waited for longer than ICL_LAB_LOCK_STALE."""
    import signal
    import subprocess
    import sys

    st = ResultsStore(tmp_path)
    path = st.lock("exp", "0" * 24).lock_file
    holder = subprocess.Popen([sys.executable, "-c", "import filelock, sys, time\n"
                               f"lock = filelock.FileLock({path!r}); lock.acquire(); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(runner.Busy):
            runner._locked(st, "exp", "0" * 24, wait=False)
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        lock = runner._locked(st, "exp", "0" * 24, wait=False)  # free at once: no staleness to wait out
        assert lock is not None and lock.is_locked
        lock.release()
    finally:
        holder.kill()


def test_waiting_for_a_lock_ends_after_icl_lab_lock_stale(tmp_path, monkeypatch):
    st = ResultsStore(tmp_path)
    held = st.lock("exp", "1" * 24)
    held.acquire()
    monkeypatch.setenv("ICL_LAB_LOCK_STALE", "10")
    monkeypatch.setattr(runner, "lock_wait", lambda: 0.3)  # the variable's minimum is 10 s; the test waits less
    t0 = time.monotonic()
    with pytest.warns(UserWarning, match="computing it here"):
        assert runner._locked(st, "exp", "1" * 24, wait=True) is None
    assert time.monotonic() - t0 < 5
    held.release()


@pytest.mark.parametrize("kind", ["directory", "fifo", "garbage", "empty"])
def test_odd_lock_files_never_hang(tmp_path, kind):
    st = ResultsStore(tmp_path)
    path = st.lock("exp", "2" * 24).lock_file
    if kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        open(path, "w").write("x\x00garbage" if kind == "garbage" else "")
    t0 = time.monotonic()
    lock = runner._locked(st, "exp", "2" * 24, wait=True)
    assert time.monotonic() - t0 < 5
    if lock is not None:
        lock.release()


def test_the_fingerprint_covers_the_code_that_computes_an_experiment_only():
    """Editing a plot, a widget, the ledger, the command line or the store leaves an experiment's
    records current; editing its training loop, a sampler or its paper's modules makes them stale."""
    from pathlib import Path

    from icl_lab.records import PACKAGE, fingerprint

    module = registry.all_experiments()["selectors.alpha"].run.__module__
    base = fingerprint(module)

    def edited(rel, edit=b"\nEDITED = 1\n"):
        path = PACKAGE / rel
        return fingerprint(module, {path: path.read_bytes() + edit})

    for rel in ("plotting.py", "widgets.py", "claims.py", "claims_html.py", "cli.py", "reports.py", "store.py",
                "sweep.py", "papers/selectors/figures.py", "papers/window/trained.py"):
        assert edited(rel) == base, f"editing {rel} must not change the fingerprint"
    for rel in ("train.py", "data/prompts.py", "models/transformer.py", "params.py", "papers/selectors/training.py"):
        assert edited(rel) != base, f"editing {rel} must change the fingerprint"
    assert Path(PACKAGE / "papers/selectors/figures.py").exists()
    # comments, docstrings and layout are not code: rewording them leaves the records current
    for rel in ("train.py", "params.py", "papers/selectors/training.py"):
        path = PACKAGE / rel
        text = path.read_text()
        assert fingerprint(module, {path: (text + "\n# a comment\n").encode()}) == base
        reworded = text.replace('"""', '"""Reworded. ', 1)
        assert reworded != text and fingerprint(module, {path: reworded.encode()}) == base


def test_the_reduced_scales_are_not_in_the_fingerprint():
    """A config class's CI/BOOK/BOOK_WHY choose other configs, whose records have other keys: changing
    them leaves the paper's records current; changing a paper default (a field) does not."""
    from icl_lab.records import PACKAGE, fingerprint

    module = registry.all_experiments()["selectors.alpha"].run.__module__
    base = fingerprint(module)
    path = PACKAGE / "papers/selectors/experiments.py"
    text = path.read_text()
    cls = text.index("class AlphaSweepConfig")
    ci = text.index("    CI = dict(", cls)
    assert fingerprint(module, {path: (text[:ci] + "    CI = dict(steps=3)\n" + text[ci:]).encode()}) == base
    steps = text.index("    steps: int = ", cls)
    changed = text[:steps] + "    steps: int = 7\n" + text[text.index("\n", steps) + 1:]
    assert fingerprint(module, {path: changed.encode()}) != base
    # only a class's own assignments of those names: a module-level CI is code like any other
    assert fingerprint(module, {path: (text + "\nCI = dict(steps=3)\n").encode()}) != base


def test_shipped_references_are_a_read_only_layer(tmp_path, monkeypatch, toy_registry):
    """load_or_run serves a current record of the shipped references (whole or in seed chunks) when the
    results folder has none, computes nothing, and never writes into the shipped folder."""
    from icl_lab import paths

    shipped = tmp_path / "reference"
    monkeypatch.setenv("ICL_LAB_REFERENCE_TOOL", "1")
    sweep.run(sweep.plan(toy_registry, "paper", seeds=4, seeds_per_task=2), results_dir=shipped, progress=False)
    monkeypatch.delenv("ICL_LAB_REFERENCE_TOOL")
    monkeypatch.setattr(paths, "REFERENCE", shipped)
    n = len(_sweep_toy.CALLS)
    mine = tmp_path / "mine"
    summary = runner.load_or_run(toy_registry, ToyConfig(seeds=4), mine)
    assert len(_sweep_toy.CALLS) == n and len(summary["per_seed"][0]) == 4  # merged from the shipped chunks
    assert not mine.exists()
    runner.load_or_run(toy_registry, ToyConfig(seeds=3), mine)  # not shipped: computed into the results folder
    assert len(_sweep_toy.CALLS) == n + 1 and len(list((mine / toy_registry).glob("*.json"))) == 1
    with pytest.raises(StoreError, match="only tools/reference_runs.sh writes"):
        ResultsStore(shipped).write(runner.run_and_record(toy_registry, ToyConfig(seeds=1)))
