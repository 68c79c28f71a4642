"""The stored full results the chapters read at paper scale (icl_lab.memo)."""
from __future__ import annotations

import json

import pytest
import torch

from icl_lab import memo, paths
from icl_lab.papers.convergence.asymptotics import run_under


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """A private results folder, an empty shipped layer, and no write target."""
    monkeypatch.setenv("ICL_LAB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(paths, "REFERENCE", tmp_path / "reference")
    monkeypatch.delenv(memo.WRITE_ENV, raising=False)
    return tmp_path


def _calls(monkeypatch):
    """Count the calls that reach the function itself."""
    n = {"calls": 0}

    def counted(*a, **k):
        n["calls"] += 1
        return run_under(*a, **k)

    counted.__module__, counted.__qualname__ = run_under.__module__, run_under.__qualname__
    return counted, n


def test_nothing_is_written_without_the_write_target(folders, monkeypatch):
    fn, n = _calls(monkeypatch)
    a = memo.full(fn, 100.0, 0.3, eps=1e-3)
    b = memo.full(fn, 100.0, 0.3, eps=1e-3)
    assert n["calls"] == 2 and a.lowest_ratio == b.lowest_ratio
    assert not any(folders.rglob("*.pt"))


def test_a_stored_result_is_read_back_equal_and_served_from_the_shipped_layer(folders, monkeypatch):
    fn, n = _calls(monkeypatch)
    monkeypatch.setenv(memo.WRITE_ENV, str(folders / "reference" / memo.FOLDER))
    first = memo.full(fn, 100.0, 0.3, eps=1e-3)
    monkeypatch.delenv(memo.WRITE_ENV)
    again = memo.full(fn, 100.0, 0.3, eps=1e-3)
    assert n["calls"] == 1
    assert type(again) is type(first) and again.lowest_ratio == first.lowest_ratio
    (meta,) = memo.stored(folders / "reference" / memo.FOLDER)
    assert meta["current"] and meta["call"]["function"].endswith("asymptotics.run_under")
    assert meta["wall_seconds"] >= 0 and meta["cpu_kind"] and meta["bytes"] > 0
    # another argument is another result: 100.0 and 100 are different calls, so is eps=1e-3 vs 1e-3 + tiny
    memo.full(fn, 100, 0.3, eps=1e-3)
    memo.full(fn, 100.0, 0.3, eps=1e-3 + 1e-18)
    assert n["calls"] == 3


def test_changed_code_makes_a_stored_result_stale(folders, monkeypatch):
    fn, n = _calls(monkeypatch)
    monkeypatch.setenv(memo.WRITE_ENV, str(folders / "results" / memo.FOLDER))
    memo.full(fn, 100.0, 0.3, eps=1e-3)
    monkeypatch.delenv(memo.WRITE_ENV)
    monkeypatch.setattr(memo, "code_of", lambda module: "0" * 16)  # as if a computing module had changed
    with pytest.warns(UserWarning, match="computed by other code"):  # said, since a paper-scale call can take long
        memo.full(fn, 100.0, 0.3, eps=1e-3)
    assert n["calls"] == 2


def test_a_damaged_file_is_computed_again(folders, monkeypatch):
    fn, n = _calls(monkeypatch)
    target = folders / "results" / memo.FOLDER
    monkeypatch.setenv(memo.WRITE_ENV, str(target))
    memo.full(fn, 100.0, 0.3, eps=1e-3)
    (pt,) = target.rglob("*.pt")
    pt.write_bytes(b"not a pickle")
    monkeypatch.delenv(memo.WRITE_ENV)
    assert memo.full(fn, 100.0, 0.3, eps=1e-3).lowest_ratio < 0
    assert n["calls"] == 2


def test_unkeyable_arguments_are_computed_never_stored(folders, monkeypatch):
    monkeypatch.setenv(memo.WRITE_ENV, str(folders / "w"))
    assert memo.full(torch.add, torch.ones(2), 1).tolist() == [2.0, 2.0]  # not a library function
    with pytest.raises(memo.NotStorable):
        memo.call_of(run_under, (torch.ones(2),), {})
    assert not (folders / "w").exists()


def test_the_key_names_the_call_exactly():
    k = memo.key_of(memo.call_of(run_under, (100.0, 0.3), {"eps": 1e-3}))
    assert k == memo.key_of(json.loads(json.dumps(memo.call_of(run_under, (100.0, 0.3), {"eps": 1e-3}))))
    assert k != memo.key_of(memo.call_of(run_under, (100.0, 0.3), {"eps": 1e-3, "rtol": 1e-9}))


def test_memo_is_not_computing_code():
    from icl_lab.records import NOT_COMPUTING

    assert "memo" in NOT_COMPUTING


def test_a_stored_call_can_be_made_again_and_compared(folders, monkeypatch):
    from icl_lab.papers.convergence import experiments as cv

    monkeypatch.setenv(memo.WRITE_ENV, str(folders / "w"))
    cfg = cv.IdentitiesConfig.for_scale("ci")
    first = memo.full(cv.run_identities, cfg)
    (meta,) = memo.stored(folders / "w")
    again = memo.recompute(meta)
    assert memo.differences(first, again) == []
    # a changed value is found and named
    assert memo.differences({"a": torch.tensor([1.0, float("nan")])}, {"a": torch.tensor([1.0, float("nan")])}) == []
    diff = memo.differences({"a": torch.tensor([1.0, 2.0])}, {"a": torch.tensor([1.0, 2.5])})
    assert diff and "['a']" in diff[0] and "0.5" in diff[0]
    assert memo.differences([1.0, 2.0], [1.0]) == ["result: lengths 2 and 1"]


def test_keep_stores_only_the_named_entries(folders, monkeypatch):
    monkeypatch.setenv(memo.WRITE_ENV, str(folders / "w"))
    part = memo.full(run_under, 100.0, 0.3, eps=1e-3, _keep=("lowest_ratio",))
    assert set(part) == {"lowest_ratio"} and part["lowest_ratio"] == run_under(100.0, 0.3, eps=1e-3).lowest_ratio
    (meta,) = memo.stored(folders / "w")
    assert meta["call"]["keep"] == ["lowest_ratio"] and memo.differences(memo.recompute(meta), part) == []
    monkeypatch.delenv(memo.WRITE_ENV)
    assert memo.full(run_under, 100.0, 0.3, eps=1e-3, _keep=("lowest_ratio",)) == part  # read back


@pytest.fixture
def toy_from_summary(monkeypatch):
    """The test-only toy experiment, registered as ``toy.toy`` with a ``from_summary``."""
    import dataclasses

    import _sweep_toy
    from icl_lab import registry

    def rebuild(cfg, s):
        return _sweep_toy.ToyResult(torch.tensor(s["per_seed"], dtype=torch.float64), s["seconds"])

    exp = dataclasses.replace(_sweep_toy.TOY, from_summary=rebuild)
    real = registry.all_experiments
    monkeypatch.setattr(registry, "all_experiments", lambda: {**real(), "toy.toy": exp})
    _sweep_toy.CALLS.clear()
    return _sweep_toy


def test_one_path_reads_a_current_record_else_computes(folders, toy_from_summary):
    """full() of a registered run function: computed while no record is stored (a page never writes one),
    rebuilt by the experiment's from_summary from a current record (or seed chunks tiling its seeds) once
    ``icl-lab run`` has stored it, and computed again when the record is of other code."""
    from icl_lab import records, runner

    toy = toy_from_summary
    cfg = toy.ToyConfig(seeds=3)
    first = memo.full(toy.run_toy, cfg)
    assert len(toy.CALLS) == 1 and isinstance(first, toy.ToyResult)
    assert not (folders / "results").exists()  # nothing written by a page's read
    assert memo.full(toy.run_toy, cfg, _if_stored=True) is None and len(toy.CALLS) == 1
    runner.load_or_run("toy.toy", cfg.replace(seeds=2))  # seeds 0, 1 ...
    runner.load_or_run("toy.toy", cfg.replace(seed=2, seeds=1))  # ... and 2: chunks that tile the config's seeds
    toy.CALLS.clear()
    read = memo.full(toy.run_toy, cfg)
    assert not toy.CALLS and torch.equal(read.per_seed, first.per_seed)
    summary = memo.full(toy.run_toy, cfg, _summary=True)
    assert summary["per_seed"] == first.per_seed.tolist() and not toy.CALLS
    for path in (folders / "results" / "toy.toy").glob("*.json"):  # the records become other code's
        rec = json.loads(path.read_text())
        rec["meta"]["code"]["fingerprint"] = "0" * 16
        rec["checksum"] = records.checksum(rec)
        path.write_text(json.dumps(rec))
    again = memo.full(toy.run_toy, cfg)
    assert len(toy.CALLS) == 1 and torch.equal(again.per_seed, first.per_seed)


def test_one_path_serves_the_shipped_records_and_checks_before_computing(folders, toy_from_summary, monkeypatch):
    """A record in the shipped layer is read like one in the results folder; with none, the experiment's own
    check refuses a config before anything is computed; ``_summary`` needs a registered experiment."""
    import dataclasses

    from icl_lab import registry, runner
    from icl_lab.params import ConfigError

    toy = toy_from_summary
    cfg = toy.ToyConfig(seeds=2)
    monkeypatch.setenv("ICL_LAB_RESULTS", str(folders / "reference"))
    monkeypatch.setenv("ICL_LAB_REFERENCE_TOOL", "1")
    runner.load_or_run("toy.toy", cfg)
    monkeypatch.setenv("ICL_LAB_RESULTS", str(folders / "results"))
    toy.CALLS.clear()
    assert memo.full(toy.run_toy, cfg).per_seed.shape == (2, 2) and not toy.CALLS

    def refuse(c):
        raise ConfigError("n: refused by the experiment's check")

    exp = dataclasses.replace(registry.all_experiments()["toy.toy"], check=refuse)
    monkeypatch.setattr(registry, "all_experiments", lambda: {"toy.toy": exp})
    with pytest.raises(ConfigError, match="refused by the experiment's check"):
        memo.full(toy.run_toy, cfg.replace(n=7))
    assert not toy.CALLS
    with pytest.raises(TypeError, match="registered experiment"):
        memo.full(run_under, 100.0, 0.3, _summary=True)
