"""The claims ledger."""
from __future__ import annotations

import json

import pytest
import torch

from icl_lab import ConfigError, Ledger
from icl_lab import claims as claims_mod
from icl_lab.claims import Claim, ClaimsTable, compare, declare, load_all


def test_check_sets_status_from_passed():
    led = Ledger("convergence")
    c1 = led.claim("C1", "Thm 3.1", "two phases").check(measured=1.234567, how="phase times", passed=True)
    c2 = led.claim("C2", "Thm 3.2", "four phases").check(measured="x", how="h", passed=True, caveat="K <= 8 only")
    c3 = led.claim("C3", "Fig. 2", "loss falls").check(measured=2, how="h", passed=False)
    c4 = led.claim("C4", "Fig. 3", "a tensor outcome").check(measured=torch.tensor(0.5), how="h",
                                                            passed=torch.tensor(True))
    c5 = led.claim("C5", "Fig. 4", "caveat but failed").check(measured=0, how="h", passed=False, caveat="c")
    assert c1.status == "reproduced" and c1.ok and c1.measured == "1.23" and c1.how == "phase times"
    assert c2.status == "reproduced with caveat" and c2.ok and c2.caveat == "K <= 8 only"
    assert c3.status == "not reproduced" and not c3.ok
    assert c4.status == "reproduced" and c4.measured == "0.5"
    assert c5.status == "not reproduced"
    assert led.counts() == {"reproduced": 2, "reproduced with caveat": 1, "not reproduced": 2, "inconclusive": 0, "not checkable": 0}
    with pytest.raises(ConfigError, match="how"):
        led.claim("C6", "x", "y").check(measured=1, how="", passed=True)


def test_not_checkable_requires_why():
    led = Ledger("window")
    with pytest.raises(ConfigError, match="why"):
        led.not_checkable("N1", "Lemma C.3", "hidden constants", why="")
    assert "N1" not in led.claims
    c = led.not_checkable("N1", "Lemma C.3", "hidden constants", why="constants unspecified")
    assert c.status == "not checkable" and c.how == "constants unspecified" and not c.ok


def test_duplicate_ids_and_bad_paper_raise():
    led = Ledger("selectors")
    led.claim("S1", "Thm 1", "statement")
    with pytest.raises(ConfigError, match="S1"):
        led.claim("S1", "Thm 2", "another")
    with pytest.raises(ConfigError, match="S1"):
        led.not_checkable("S1", "Thm 2", "another", why="w")
    with pytest.raises(ConfigError, match="paper"):
        Ledger("no-such-paper")


def test_export_refuses_pending_claims(tmp_path):
    led = Ledger("nonlinear")
    led.claim("L1", "Thm 1", "checked").check(measured=1, how="h", passed=True)
    led.claim("L2", "Thm 2", "never checked")
    assert led.pending() == ["L2"]
    with pytest.raises(ConfigError, match="L2"):
        led.export(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_export_is_atomic_and_load_all_reads_it_back(tmp_path):
    led = Ledger("convergence")
    led.claim("C1", "Thm 3.1", "a | pipe").check(measured=0.5, how="h1", passed=True)
    led.not_checkable("C2", "Lemma C.3", "b", why="hidden constants")
    other = Ledger("window")
    other.claim("W1", "Fig. 3", "c").check(measured="m", how="h2", passed=False)
    out = tmp_path / "claims"
    p1 = led.export(out)
    p2 = other.export(out)
    assert p1 == out / "convergence.json" and p2 == out / "window.json"
    assert sorted(f.name for f in out.iterdir()) == ["convergence.json", "window.json"]  # no temp files left
    data = json.loads(p1.read_text())
    assert data["paper"] == "convergence" and data["counts"]["not checkable"] == 1
    loaded = load_all(out)
    assert [c.id for c in loaded] == ["C1", "C2", "W1"]
    assert loaded[0] == led["C1"] and loaded[2] == other["W1"]
    assert all(isinstance(c, Claim) for c in loaded)
    # re-export replaces the file in place
    led["C1"].check(measured=0.7, how="h1", passed=False)
    led.export(out)
    assert sorted(f.name for f in out.iterdir()) == ["convergence.json", "window.json"]
    assert load_all(out)[0].status == "not reproduced"


def test_export_directory_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ICL_LAB_CLAIMS_DIR", str(tmp_path / "env"))
    led = Ledger("common")
    led.claim("X", "s", "t").check(measured=1, how="h", passed=True)
    assert led.export() == tmp_path / "env" / "common.json"
    assert [c.id for c in load_all()] == ["X"]


def test_to_markdown_has_one_row_per_claim():
    led = Ledger("convergence")
    led.claim("C1", "Thm 3.1", "with | a pipe\nand a newline").check(measured=1, how="h", passed=True)
    led.claim("C2", "Thm 3.2", "b").check(measured=2, how="h", passed=True, caveat="small K")
    led.not_checkable("C3", "Lemma", "c", why="w")
    lines = led.to_markdown().splitlines()
    assert len(lines) == 2 + 3  # header, separator, one row per claim
    assert lines[2].startswith("| C1 |") and "\\|" in lines[2]
    assert "reproduced with caveat (small K)" in lines[3]
    assert "not checkable" in lines[4]
    html = led._repr_html_()
    assert html.count("<tr") == 1 + 3  # header + one row per claim (rendering: tests/test_claims_html.py)


def test_claims_table_orders_papers_and_counts(tmp_path):
    from icl_lab.claims import ClaimsTable, Ledger

    for paper, ok in (("window", True), ("common", False)):
        led = Ledger(paper)
        led.claim("A", "Thm 1", "a statement").check(measured=1.0, how="measured", passed=ok)
        led.not_checkable("B", "Lemma 2", "hidden constants", why="no constants given")
        led.export(tmp_path)
    table = ClaimsTable.load(tmp_path)
    assert table.papers == ["common", "window"]
    assert table.counts()["not checkable"] == 2
    assert table.counts("window")["reproduced"] == 1 and table.counts("common")["not reproduced"] == 1
    assert table.missing(("common", "window", "selectors")) == ["selectors"]
    md = table.to_markdown()
    assert md.count("\n") == 1 + 4 and "| window | A |" in md
    assert "| **all** | 1 | 0 | 1 | 0 | 2 | 4 |" in table.counts_markdown()


DECL = {"A": declare("A", "Thm 1", r"$x > 0$ for $K \\ge 2$", hypotheses=("K >= 2",)),
        "B": declare("B", "Lemma 2", "an identity", kind="consistency", part="theory", unconditional="an identity"),
        "C": declare("C", "Fig. 3", "hidden constants", not_checkable="only hidden constants", part="experiments"),
        "D": declare("D", "this book", "our conjecture", kind="finding", part="experiments")}


@pytest.mark.declarations
def test_claims_tables_are_read_strictly():
    from icl_lab.claims import parse_declarations
    good = parse_declarations("[[claim]]\nid = 'A'\nlocation = 'Thm 1'\nstatement = '$x$'\n"
                              "hypotheses = 'THM1'\npart = 'mechanism'\n", "selectors")
    from icl_lab.papers.selectors.conditions import THM1  # Theorem 1's conditions (theory.THM1)
    assert good["A"].hypotheses == THM1 and good["A"].kind == "paper"
    bad = {"id = 'A'\nlocation = 'L'\nstatment = 's'": "unknown field",
           "id = 'A'\nlocation = 'L'\nstatement = 's'\nhypotheses = 'NOPE'": "names no tuple",
           "id = 'A'\nlocation = 'L'\nstatement = 's'\nhypotheses = [1]": r"claim 'A' hypotheses\[0\]: must be a string",
           "id = 'A'\nlocation = 5\nstatement = 's'": "must be a string",
           "id = 'A'\nlocation = 'L'\nstatement = 's'\nkind = 'lemma'": "kind",
           "id = 'A'\nlocation = 'L'\nstatement = ''": "non-empty",
           "id = 'A'\nlocation = 'L'\nstatement = 's'\n[[claim]]\nid = 'A'\nlocation = 'L'\nstatement = 't'":
               "declared twice",
           "id = 'A\nlocation": "claims.toml"}
    for body, message in bad.items():
        with pytest.raises(ConfigError, match=message):
            parse_declarations("[[claim]]\n" + body + "\n", "selectors")


@pytest.mark.declarations
def test_declared_claims_are_loaded_pending_and_checked_by_id(monkeypatch, tmp_path):
    monkeypatch.setattr(claims_mod, "declared", lambda paper: DECL)
    led = Ledger("window")
    assert [c.id for c in led] == ["A", "B", "C", "D"] and led["A"].status == "pending"
    assert led["C"].status == "not checkable" and led["B"].kind == "consistency"
    with pytest.raises(ConfigError, match="not declared"):
        led["Z"]
    with pytest.raises(ConfigError, match="another statement"):
        led.claim("A", "Thm 1", "a different statement")
    with pytest.raises(ConfigError, match="never checked"):
        led.export(tmp_path)
    # a failure where a declared hypothesis is violated is inconclusive, with the reason
    a = led["A"].check(measured=-1, how="h", passed=False, hypotheses={"K >= 2": False})
    assert a.status == "inconclusive" and "K >= 2" in a.caveat and a.hypotheses == {"K >= 2": False}
    # a pass there keeps the violated condition as a caveat
    assert led["A"].check(measured=1, how="h", passed=True, hypotheses={"K >= 2": False}).status == "reproduced with caveat"
    assert led["A"].check(measured=1, how="h", passed=True, hypotheses={"K >= 2": True}).status == "reproduced"
    with pytest.raises(ConfigError, match="not declared"):
        led["A"].check(measured=1, how="h", passed=True, hypotheses={"N large": True})
    b = led["B"].check(measured=0, how="h", passed=False, inconclusive="the test cannot see the identity")
    assert b.status == "inconclusive" and b.caveat == "the test cannot see the identity"
    led["D"].check(measured=1, how="h", passed=False)
    # headline counts count paper claims only
    assert led.counts() == {"reproduced": 1, "reproduced with caveat": 0, "not reproduced": 0, "inconclusive": 0,
                            "not checkable": 1}
    assert led.counts(None)["inconclusive"] == 1 and led.counts("finding")["not reproduced"] == 1
    path = led.export(tmp_path)
    data = json.loads(path.read_text())
    assert data["counts_by_kind"]["consistency"]["inconclusive"] == 1
    assert {c["id"]: c["kind"] for c in data["claims"]} == {"A": "paper", "B": "consistency", "C": "paper", "D": "finding"}


@pytest.mark.declarations
def test_parts_export_their_own_claims_and_load_together(monkeypatch, tmp_path):
    monkeypatch.setattr(claims_mod, "declared", lambda paper: DECL)
    theory = Ledger("window", part="theory")
    assert [c.id for c in theory] == ["B"]
    theory["B"].check(measured=0, how="h", passed=True)
    exp = Ledger("window", part="experiments")
    exp["D"].check(measured=1, how="h", passed=True)
    assert theory.export(tmp_path).name == "window.theory.json"
    assert exp.export(tmp_path).name == "window.experiments.json"
    table = ClaimsTable.load(tmp_path)
    assert sorted(c.id for c in table.claims) == ["B", "C", "D"] and table.papers == ["window"]
    with pytest.raises(ConfigError, match="part must be one of"):
        Ledger("window", part="nope")


def test_compare_lists_status_changes(tmp_path):
    def table(status_a):
        led = Ledger("common")
        led.claim("A", "x", "y").check(measured=1, how="h", passed=status_a)
        led.claim("B", "x", "y").check(measured=1, how="h", passed=True)
        return ClaimsTable(list(led))

    assert compare(table(True), table(True)) == []
    diff = compare(table(True), table(False))
    assert [(d["id"], d["a"], d["b"]) for d in diff] == [("A", "reproduced", "not reproduced")]


@pytest.mark.declarations
def test_a_status_that_differs_at_another_scale_is_noted(monkeypatch, tmp_path):
    """A conclusion that the ledger shipped for another scale does not share is written next to it."""
    monkeypatch.setattr(claims_mod, "declared", lambda paper: DECL)
    monkeypatch.setattr(claims_mod, "shipped_statuses",
                        lambda: {("paper", "window", "A"): "reproduced", ("paper", "window", "D"): "not reproduced",
                                 ("book", "window", "A"): "not reproduced"})
    monkeypatch.setenv("ICL_LAB_SCALE", "book")
    led = Ledger("window")
    a = led["A"].check(measured=-1, how="h", passed=False)
    assert a.status == "not reproduced" and a.elsewhere == {"paper": "reproduced"}  # same status at book: no note
    assert led["D"].check(measured=0, how="h", passed=False).elsewhere == {}
    from icl_lab.claims_html import claim_card

    assert "Reproduced at paper scale (the ledger shipped for that scale)" in claim_card(a)


def test_shipped_ledgers_notes_on_other_scales_are_current():
    """Each shipped ledger names the other scales' statuses where they differ (rule 6); a ledger
    regenerated after another must not keep a note about the other's previous version."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location("refresh_elsewhere", Path(__file__).parents[1] / "tools" / "refresh_elsewhere.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.stale() == [], "run tools/refresh_elsewhere.py"


def test_words_inside_math_are_refused_when_claims_are_read():
    from icl_lab.claims import parse_declarations

    bad = "[[claim]]\nid = 'Z1'\nlocation = 'Fig. 1'\nstatement = 'It holds ($N >= 20 K^3 as in Lemma C.5$).'\n"
    with pytest.raises(ConfigError, match=r"claim 'Z1'.*statement has words inside math \(Lemma\)"):
        parse_declarations(bad, "common")
    ok = bad.replace("($N >= 20 K^3 as in Lemma C.5$)", r"($N \ge 20 K^3$, as in Lemma C.5; $L^{\mathrm{low}}$)")
    assert parse_declarations(ok, "common")["Z1"].statement.endswith(r"Lemma C.5; $L^{\mathrm{low}}$).")


def test_hypotheses_render_as_prose_with_inline_math():
    from icl_lab.claims_html import condition_md
    from icl_lab.render import prose_in_math

    for cond, want in [("N >> K^3 (read N >= 20 K^3, as in Lemma C.5)", r"$N \gg K^{3}$ (read $N \ge 20 K^{3}$, as in Lemma C.5)"),
                       ("eta t >= 1/(4 p_2 L_2^low)", r"$\eta t \ge 1/(4 p_2 L_2^{\mathrm{low}})$"),
                       ("L_k = p_k K - c > 0 (k >= 2 for E*_imbal)", r"$L_k = p_k K - c > 0$ ($k \ge 2$ for $E^*_{\mathrm{imbal}}$)"),
                       ("sigma = 0 (Case 1) or n = 2 (Case 2)", r"$\sigma = 0$ (Case 1) or $n = 2$ (Case 2)")]:
        assert condition_md(cond) == want and prose_in_math(want) == []
