"""What a reader sees of the ledgers, and the tools that check it: a ledger displayed once, a fixed
table layout folded under its counts, hypotheses stated once and named in cards, the browser
check's legibility rules, and the book build's quiet, progress-reporting pre-execution."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from icl_lab.claims import Ledger
from icl_lab.claims_html import caveat_html, condition_html, hypotheses_html, ledger_html

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import browser_check  # noqa: E402  (tools/ is not a package)


def _ledger():
    led = Ledger("convergence")
    led.claim("C1", "Thm 3.1", "two phases when $N < K^3$").check(measured="3.2", how="phase times", passed=True)
    led.claim("C2", "Thm 3.2", "b").check(measured=1, how="h", passed=True, caveat="small K")
    return led


def test_show_returns_nothing_so_a_cell_ending_with_it_shows_the_ledger_once():
    assert _ledger().show() is None


def test_the_table_has_a_fixed_layout_and_is_folded_under_its_counts():
    html = ledger_html(_ledger())
    assert 'style="table-layout:fixed;width:100%"' in html and "<colgroup>" in html
    assert '<col style="width:38%">' in html  # the measured column keeps over a third of the width
    assert "<details" in html and "<summary>The full ledger (2 claims: 1 reproduced, 1 reproduced with caveat)" in html
    assert html.index("<summary>") < html.index("<table")
    assert 'class="mathjax_process icl-measured" data-label="measured"' in html  # a stacked card labels it
    assert "@media (max-width:640px)" in html


def test_conditions_are_written_as_math_and_prose():
    assert condition_html("m >= eps_m^-2 M1^2 log N") == r"\(m \ge \epsilon_m^{-2} M_1^{2} \log N\)"
    assert condition_html("delta in (0, 0.1)") == r"\(\delta \in (0, 0.1)\)"
    assert condition_html("N >= poly(K) (mean field)") == r"\(N \ge \mathrm{poly}(K)\) (mean field)"
    assert condition_html("GD run long enough to approach the infimum") == "GD run long enough to approach the infimum"


@pytest.mark.declarations
def test_hypotheses_are_stated_once_and_cards_name_them():
    from icl_lab.papers.selectors import conditions  # Theorem 1's conditions

    led = Ledger("selectors", part="selection")
    held = {h: i % 2 == 0 for i, h in enumerate(conditions.THM1)}
    claim = next(c for c in led if c.status == "pending" and c.hypotheses_declared == conditions.THM1)
    claim._decide(measured=1, how="h", passed=True, hypotheses=held)  # the display, not the criterion, is tested
    assert "M1^2" in claim.caveat  # stored as declared
    cav = caveat_html(claim)
    assert "M1^2" not in cav and "M_1" not in cav  # named, not restated
    assert '<a href="#hypotheses-selectors">batch (39)</a>' in cav
    block = hypotheses_html(list(led), "selectors")
    assert block.count("width (35)") == 1 and r"\(m \ge \epsilon_m^{-2} M_1^{2} \log N\)" in block
    assert 'id="hypotheses-selectors"' in block


def test_browser_check_legibility_rules():
    assert browser_check.significant_digits("0.0012345") == 5
    assert browser_check.significant_digits("123.4500") == 7
    assert browser_check.significant_digits("1.2345678e-05") == 8
    leg = {"dupIds": ["ledger-window-c1 x2"], "twice": [], "raw": ["a claim card: ... $N$ ..."],
           "columns": [{"measured": 36.0, "narrowest": 36.0, "what": "window", "rows": 3}],
           "outputs": ["loss 0.123456789 after 3.25 s, version 1.0.4"], "plain": ["[1, 2, 3]", "A table"],
           "legends": [6.5], "unmeasurable": 0, "sliders": [{"caption": "", "label": "K = 3"}]}
    kinds = [k for k, _ in browser_check.legibility_checks("p.html", 30_000, leg)]
    assert sorted(kinds) == sorted(["page too tall", "ledger shown twice", "raw math", "ledger column too narrow",
                                    "unformatted number", "python repr", "legend too small", "no caption"])
    fine = {"dupIds": [], "twice": [], "raw": [], "columns": [{"measured": 250.0, "narrowest": 150.0, "what": "w",
                                                                "rows": 3}],
            "outputs": ["loss 0.1235 after 3.25 s"], "plain": ["scale = ci"], "legends": [], "unmeasurable": 2,
            "sliders": [{"caption": "Figure 1. a caption", "label": "K = 3"}]}
    assert browser_check.legibility_checks("p.html", 12_000, fine) == []


def test_pre_execution_drops_only_the_kernels_tcp_warning(tmp_path):
    code = (
        "import subprocess, sys; sys.path.insert(0, %r)\n"
        "import execute_parallel as ep\n"
        "restore = ep.filter_stderr()\n"
        "subprocess.run(['sh', '-c', 'echo \"[IPKernelApp] WARNING | Kernel is running over TCP without encryption. "
        "All communication...\" >&2; echo \"a real warning\" >&2'])\n"
        "print('to stderr', file=sys.stderr)\n"
        "restore()\n" % str(ROOT / "tools"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "without encryption" not in r.stderr
    assert "a real warning" in r.stderr and "to stderr" in r.stderr
