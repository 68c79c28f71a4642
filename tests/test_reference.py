"""The shipped reference results (``results/reference``): every record is readable and is a record of
its experiment's current ``paper`` configuration (or of a seed chunk of it).  When a paper config
changes, its reference records are stale: regenerate them with ``tools/reference_runs.sh``."""
from __future__ import annotations

import json

import pytest

from icl_lab import reports, store
from icl_lab import records
from icl_lab.params import ConfigError


def test_shipped_reference_records_match_the_paper_configs(capsys):
    rows = reports.reference_records()
    bad = [f"{p.relative_to(reports.ROOT)}: {problem}" for p, _, problem in rows if problem]
    assert not bad, "stale or unreadable reference records (tools/reference_runs.sh regenerates them):\n" + "\n".join(bad)
    with capsys.disabled():
        print(f"\n{len(rows)} reference record(s) checked against the current paper configs")


def test_reference_records_merge(tmp_path):
    """Every experiment with shipped records merges them into one reference (seed chunks fit together)."""
    for name in sorted({p.parent.name for p, _, _ in reports.reference_records()}):
        ref = reports.load_reference(name)
        assert ref.records and ref.summary is not None and len(ref.seeds) == len(set(ref.seeds)), (name, ref.problem)


def _paper_record(root, seed=0, **changes):
    from icl_lab.papers.nonlinear.experiments import PolynomialConfig
    from icl_lab.registry import all_experiments

    cfg = PolynomialConfig.for_scale("paper").replace(seed=seed, seeds=1, **changes)
    rec = records.make_record("nonlinear.polynomial", cfg, {"final_train_loss": [[1.0]] * 6}, scale="paper",
                            started="2026-01-01T00:00:00", wall=1.0, cpu=1.0, device="cpu",
                            fingerprint=all_experiments()["nonlinear.polynomial"].fingerprint)
    return store.ResultsStore(root).write(rec)


def test_check_detects_a_stale_config(tmp_path):
    _paper_record(tmp_path, seed=0)
    _paper_record(tmp_path, seed=1, epochs=399)  # a config that is no longer the paper's
    problems = [problem for _, _, problem in reports.reference_records(root=tmp_path)]
    assert problems[0] is None or problems[1] is None
    assert any(p and "epochs" in p for p in problems)
    ref = reports.load_reference("nonlinear.polynomial", tmp_path)
    assert ref.seeds == [0] and ref.wanted == 30 and not ref.complete
    assert "1 of 30 seeds" in ref.provenance()


def test_check_detects_seeds_outside_the_paper_run_and_damage(tmp_path):
    _paper_record(tmp_path, seed=30)  # seed 30 is not among the paper's 0..29
    p = _paper_record(tmp_path, seed=2)
    rec = json.loads(p.read_text())
    rec["summary"]["final_train_loss"] = [[2.0]] * 6  # edited: the checksum fails
    p.write_text(json.dumps(rec))
    problems = sorted(str(problem) for _, _, problem in reports.reference_records(root=tmp_path))
    assert any("seeds" in p for p in problems) and any("checksum" in p for p in problems)


@pytest.mark.parametrize("root_exists", [False, True])
def test_no_records(tmp_path, root_exists):
    root = tmp_path / "ref"
    if root_exists:
        root.mkdir()
    assert reports.reference_records(root=root) == []
    assert reports.reference_markdown(root) == "No reference records have been shipped yet."


def _check_references_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("check_references", reports.ROOT / "tools" / "check_references.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_check_references_tells_another_cpu_kind_from_a_failure():
    """Records without a CPU kind: when at least half differ, the machine is of another kind (reported, not
    failed); when most reproduce, the one that differs fails. A record of this machine's kind always fails."""
    judge = _check_references_module().judge
    # two of three kind-less records differ: another kind, nothing fails
    fails, other, another = judge([("a", False, "x: 1 -> 2"), ("b", False, "y"), ("c", True, "")], {"a", "b", "c"})
    assert another and not fails and len(other) == 2 and other[0].startswith("a (no CPU kind stored")
    # one of three differs: the code changed what it computes, so it fails
    fails, other, another = judge([("a", False, "x"), ("b", True, ""), ("c", True, "")], {"a", "b", "c"})
    assert not another and not other and len(fails) == 1 and fails[0].startswith("a: the current code does not reproduce")
    # a record stamped with this machine's kind (not in the kind-less set) fails even when the others differ too
    fails, other, another = judge([("a", False, "x"), ("b", False, "y"), ("k", False, "z")], {"a", "b"})
    assert another and [f.split(":")[0] for f in fails] == ["k"] and len(other) == 2
    # everything reproduces
    assert judge([("a", True, ""), ("k", True, "")], {"a"}) == ([], [], False)


def test_folded_puts_a_table_in_a_fold_and_leaves_sentences():
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    out = reports.folded("The numbers", table)
    assert out.startswith('<details class="icl-fold">') and out.rstrip().endswith("</details>")
    assert "<summary>The numbers (2 rows)</summary>" in out and "\n\n| a | b |" in out
    assert reports.folded("The numbers", "No reference records have been shipped yet.") == \
        "No reference records have been shipped yet."
    with pytest.raises(ConfigError, match="summary"):
        reports.folded(" ", table)
