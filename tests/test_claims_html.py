"""How claims display: a card per checked claim, a responsive ledger, the filterable full ledger."""
from __future__ import annotations

import re

from icl_lab.claims import ClaimsTable, Ledger
from icl_lab.claims_html import claim_card, ledger_html
from icl_lab.render import markdown_inline


def _ledger():
    led = Ledger("convergence")
    led.claim("C1", "Thm 3.1", r"Converges in two phases ($T_1 \sim K^2 \log K$) when $N < K^3$").check(
        measured="3.2 (5 seeds)", how="phase times", passed=True)
    led.claim("C2", "Lemma 2", "closed form = autograd", kind="consistency").check(measured=0.5, how="h", passed=False)
    led.claim("X1", "this chapter", "a **finding**", kind="finding").check(measured=1, how="h", passed=True,
                                                                          caveat="only at $d=2$")
    led.not_checkable("C3", "Lemma 4", "hidden constants", why="no constants given")
    return led


def test_math_becomes_mathjax_delimiters_and_html_is_escaped():
    out = markdown_inline(r"if $N < K^3$ then **fast** and $$a<b$$ <script>")
    assert r"\(N &lt; K^3\)" in out and r"\[a&lt;b\]" in out
    assert "<strong>fast</strong>" in out and "<script>" not in out


def test_card_shows_statement_measured_status_and_kind():
    led = _ledger()
    card = led["C1"]._repr_html_()
    assert card == claim_card(led["C1"])
    assert 'id="claim-convergence-c1"' in card and 'data-status="reproduced"' in card
    assert r"\(T_1 \sim K^2 \log K\)" in card and "3.2 (5 seeds)" in card and "paper claim" in card
    assert "mathjax_process" in card
    caveat = led["X1"]._repr_html_()
    assert "reproduced with caveat" in caveat and r"\(d=2\)" in caveat and "the book&#x27;s finding" in caveat


def test_ledger_puts_status_first_summarises_by_kind_and_links_the_rules():
    led = _ledger()
    claim_card(led["C1"])  # C1's card was shown: its ledger row links to it
    html = ledger_html(led)
    assert html == led._repr_html_()
    rows = re.findall(r"<tr id=\"ledger-[^\"]+\"[^>]*><td class=\"icl-status\">", html)
    assert len(rows) == 4  # every row starts with its status cell
    assert 'href="#claim-convergence-c1"' in html and 'href="#claim-convergence-c2"' not in html
    assert "@media (max-width:640px)" in html  # rows become blocks on a phone
    assert "2 paper claims</strong>: 1 reproduced, 1 not checkable" in html
    assert "1 consistency check</strong>: 1 not reproduced" in html
    assert "claims_rules.html" in html and "How claims are judged" in html


def test_filterable_ledger_has_filters_and_links_rows_to_chapter_ledgers(tmp_path):
    for paper in ("window", "common"):
        led = Ledger(paper)
        led.claim("A", "Thm 1", "a $x$ statement").check(measured=1.0, how="m", passed=paper == "window")
        led.export(tmp_path)
    html = ClaimsTable.load(tmp_path)._repr_html_()  # the synthesis table is filterable
    for name in ("paper", "kind", "status"):
        assert f'data-filter="{name}"' in html
    assert html.index('data-paper="common"') < html.index('data-paper="window"')  # book order
    assert "chapters/common_setup.html#ledger-common-a" in html
    assert "<script>" in html and "http" not in html.split("<script>")[1]  # local JavaScript only


def test_why_is_one_sentence_and_a_long_caveat_goes_under_the_fold():
    led = Ledger("convergence")
    led.claim("X2", "this chapter", "a long story", kind="finding").check(
        measured=1, how="h", passed=True, caveat="the first reason; a second clause; and a third one")
    card = claim_card(led["X2"])
    why = re.search(r"<strong>Why:</strong>(.*?)</div>", card).group(1)
    assert "the first reason (more under How it is decided)" in why and "second clause" not in why
    fold = card[card.index("<details"):]
    assert "<strong>Caveat:</strong>" in fold and "a second clause" in fold
