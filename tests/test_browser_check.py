"""The browser check's detections of what a reader should not see, on small inputs (no browser needed)."""
import html
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import browser_check as bc  # noqa: E402

from icl_lab.claims import Claim, load_all  # noqa: E402
from icl_lab.claims_html import claim_card  # noqa: E402
from icl_lab.paths import REFERENCE  # noqa: E402


def _card(snippet: str, folded: bool = False, cid: str = "C1") -> dict:
    """What the page's script reads from a card: its text outside math, the TeX of its formulas."""
    tex = re.findall(r"\\\((.+?)\\\)", snippet)
    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"\\\(.+?\\\)", " ", snippet)))
    return {"id": cid, "text": text, "tex": [html.unescape(t) for t in tex], "folded": folded}


@pytest.mark.parametrize("shown, what", [
    ("<div>per seed: [[10.0, 80.0, 80.0], [20.0, 100.0, 80.0]]</div>", "a nested list"),
    ("<div>median T_hit = {0.4: 3575, 0.5: 212}</div>", "a dict"),
    ("<div>off-target attention falls together = True</div>", "a Python boolean"),
    ("<div>tau = inf</div>", "inf or nan"),
    ("<div>first reaches it at tau = 3.89e+198</div>", "1e+200"),
    ("<div>T1/(K^2 log K) = [0.738, 0.481, 0.314, 0.246]</div>", "a list of numbers"),
])
def test_a_python_repr_in_a_card_fails(shown, what):
    found = bc.card_checks("p.html", [_card(shown)])
    assert found and {k for k, _ in found} == {"python repr in a card"} and any(what in m for _, m in found)


def test_plain_words_intervals_and_math_in_a_card_pass():
    ok = _card(r"<div>slope = 1.46 [0.869, 2.36] (median over 2 seeds); 2 of 3 seeds: yes; "
               r"error \(2.2\times10^{-16}\) below \(\{k: k \ge 2\}\)</div>")
    assert bc.card_checks("p.html", [ok]) == []


def test_words_inside_a_cards_math_fail_and_text_or_mathrm_pass():
    bad = _card(r"<div>\(N \ge 20K^3, as in LemmaC.5\)</div>")
    good = _card(r"<div>\(N \ge 20K^3\) (Lemma C.5), \(L_2^{\mathrm{low}}\), \(E^*_{\text{imbal}}\)</div>")
    found = bc.card_checks("p.html", [bad])
    assert [k for k, _ in found] == ["prose in math"] and "Lemma" in found[0][1]
    assert bc.card_checks("p.html", [good]) == []


def test_a_card_in_a_code_fold_fails():
    found = bc.card_checks("p.html", [_card("<div>slope = 1</div>", folded=True, cid="O1")])
    assert found == [("card in a code fold", "p.html: claim O1's card is inside a folded code cell output")]


def test_every_shipped_ledger_row_reads_without_reprs():
    from icl_lab.claims_html import _row

    claims = load_all(REFERENCE / "claims" / "paper")
    rows = [{**_card(_row(c), cid=c.id), "where": "ledger row"} for c in claims]
    assert bc.card_checks("all.html", rows) == []
    assert bc.card_checks("p.html", [{**_card("<td>ok = True</td>"), "where": "ledger row"}])[0][1].startswith(
        "p.html: claim C1's ledger row shows a Python boolean")


def test_a_formula_wider_than_the_column_fails_unless_it_scrolls():
    wide = {"width": 520, "right": 540, "column": 374, "scrolls": False, "display": True, "tex": "L = ..."}
    assert bc.math_overflow_checks("p.html", [wide])[0][0] == "formula overflows on a phone"
    assert bc.math_overflow_checks("p.html", [{**wide, "scrolls": True}]) == []
    assert bc.math_overflow_checks("p.html", [{**wide, "width": 300, "right": 360}]) == []


def test_a_non_ascii_dash_in_code_fails():
    found = bc.code_dash_checks("p.html", ["icl-lab run \u2013scale paper", "icl-lab run --scale paper"])
    assert len(found) == 1 and "U+2013" in found[0][1]


def test_page_warnings_count_height_and_derivations_without_exercise_fail():
    assert bc.page_warnings("p.html", 12_300, ["Derivation 1: the head", "Exercises"]) == [
        "p.html: 12,300 px tall at 1280 px (a page a student can finish: at most 12,000)"]
    assert bc.page_warnings("p.html", 9_000, ["Derivation 1: the head"]) == []
    assert bc.exercise_checks("p.html", ["Derivation 1: the head"]) == [
        ("derivations without an exercise", "p.html: the page has derivations and no exercise")]
    assert bc.exercise_checks("p.html", ["Proof of Lemma 2", "Exercise 3.1"]) == []
    assert bc.exercise_checks("p.html", ["Setup"]) == []


def test_a_page_over_the_height_limit_fails():
    leg = {"dupIds": [], "twice": [], "columns": [], "raw": [], "outputs": [], "plain": [], "legends": [], "sliders": []}
    assert bc.legibility_checks("p.html", 12_000, leg) == []
    assert [k for k, _ in bc.legibility_checks("p.html", 13_000, leg)] == ["page too tall"]


@pytest.mark.parametrize("scale", ["ci", "paper"])
def test_every_shipped_claim_renders_as_a_card_without_reprs_or_prose_in_math(scale):
    claims = load_all(REFERENCE / "claims" / scale)
    assert len(claims) > 100
    found = [f for c in claims for f in bc.card_checks(f"{c.paper}.html", [_card(claim_card(c), cid=c.id)])]
    assert found == []


def test_a_card_states_one_measured_sentence_and_one_why():
    c = Claim("S4", "common", "Thm 3.1", "attention concentrates", how="3 seeds", status="reproduced",
              measured="own-feature attention = 0.9888, 0.989, 0.9888", key="mean of own-feature attention = 0.989",
              held=["mean of own-feature attention above 0.9"])
    card = claim_card(c)
    assert "<strong>Measured:</strong> Mean of own-feature attention = 0.989." in card
    assert "<strong>Why:</strong> The test holds: mean of own-feature attention above 0.9." in card
    assert card.count("<details") == 1 and "Everything measured" in card  # the machinery behind one fold
