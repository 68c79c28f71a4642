"""Criteria as data: the tests a claim declares in claims.toml and the written rules that decide it."""
from __future__ import annotations

import pytest

from icl_lab import criteria as cr
from icl_lab.claims import Claim, Ledger, declared, parse_declarations
from icl_lab.params import ConfigError

BELOW = {"quantity": "gap", "is": "below", "than": 1e-12, "source": "ours: float64 round-off"}


def _decide(tests, **q):
    return cr.decide(cr.parse_tests(list(tests), "t"), q, "t")


def test_a_bound_holds_below_and_fails_above():
    assert _decide([BELOW], gap=1e-15).passed
    assert not _decide([BELOW], gap=1e-9).passed


def test_an_interval_that_straddles_the_threshold_cannot_decide():
    t = {"quantity": "slope", "is": "above", "than": 1.8, "source": "paper: Thm 3.5"}
    assert _decide([t], slope=cr.Estimate(2.0, 1.9, 2.1)).passed
    assert not _decide([t], slope=cr.Estimate(1.5, 1.4, 1.7)).passed
    v = _decide([t], slope=cr.Estimate(1.85, 1.7, 2.0))
    assert v.inconclusive and "straddles" in v.inconclusive


def test_a_threshold_of_ours_that_decides_makes_the_claim_inconclusive():
    t = {"quantity": "rho", "is": "below", "than": 0.5, "source": "ours: a cut", "alternatives": [0.45, 0.55]}
    v = _decide([t], rho=0.48)
    assert v.inconclusive and "threshold of ours" in v.inconclusive and "0.45" in v.inconclusive
    v = _decide([t], rho=0.2)
    assert v.passed and not v.inconclusive and v.robust


def test_a_clear_failure_decides_even_beside_an_undecided_test():
    a = {"quantity": "a", "is": "above", "than": 1, "source": "paper: eq. (3)"}
    b = {"quantity": "b", "is": "below", "than": 1, "source": "paper: eq. (4)"}
    v = _decide([a, b], a=0.5, b=cr.Estimate(1, 0.5, 1.5))
    assert not v.passed and not v.inconclusive


def test_sequences_statistics_orderings_and_comparisons_with_other_quantities():
    assert _decide([{"quantity": "x", "is": "increasing"}], x=[1, 2, 3]).passed
    assert not _decide([{"quantity": "x", "is": "increasing"}], x=[1, 3, 2]).passed
    every = {"quantity": "x", "is": "below", "than": 2, "source": "paper: Lemma 1"}
    assert not _decide([every], x=[1, 3]).passed
    assert _decide([{**every, "statistic": "median"}], x=[1, 1, 3]).passed
    rel = {"quantity": "a", "is": "below", "than": "b"}
    assert _decide([rel], a=1.0, b=2.0).passed and not _decide([rel], a=3.0, b=2.0).passed
    near = {"quantity": "s", "is": "nearer", "to": "p", "than": "q"}
    assert _decide([near], s=1.4, p=1.5, q=1.0).passed
    assert _decide([{"quantity": "ok", "is": "true"}], ok=[True, True]).passed


def test_what_a_failure_means_is_declared():
    cav = {"quantity": "s", "is": "below", "than": -1, "source": "paper: Lemma D.1", "fails": "caveat",
           "note": "slope {s:.2f} is shallower than -1"}
    v = _decide([cav], s=-0.8)
    assert v.passed and v.caveats == ("slope -0.80 is shallower than -1",)
    inc = {**cav, "fails": "inconclusive", "note": "the optimum lies on the grid's edge"}
    assert _decide([inc], s=-0.8).inconclusive == "the optimum lies on the grid's edge"


@pytest.mark.parametrize("row, message", [
    ({"quantity": "x", "is": "below", "than": 1}, "source"),
    ({"quantity": "x", "is": "below", "than": 1, "source": "mine"}, "source"),
    ({"quantity": "x", "is": "smaller", "than": 1, "source": "ours: x"}, "is"),
    ({"quantity": "x", "is": "between", "source": "ours: x"}, "range"),
    ({"quantity": "x", "is": "below", "than": 1, "source": "paper: Thm 1", "alternatives": [2]}, "alternatives"),
    ({"quantity": "x", "is": "below", "than": 1, "source": "ours: x", "fails": "caveat"}, "note"),
    ({"quantity": "x", "is": "below", "than": 1, "source": "ours: x", "colour": "red"}, "unknown"),
])
def test_malformed_tests_are_refused_naming_the_field(row, message):
    with pytest.raises(ConfigError, match=message):
        cr.parse_tests([row], "t")


def test_a_tolerance_wider_than_the_statement_is_refused():
    row = {"quantity": "slope", "is": "between", "range": [-2.5, -1.5], "source": "ours: fit error",
           "stated": [-2.2, -1.8]}
    with pytest.raises(ConfigError, match="wider than the range the statement allows"):
        cr.parse_tests([row], "t")
    cr.parse_tests([{**row, "range": [-2.1, -1.9]}], "t")
    with pytest.raises(ConfigError, match="wider"):  # an alternative of ours is held to it as well
        cr.parse_tests([{**row, "range": [-2.1, -1.9], "source": "ours: x", "alternatives": [[-3, -1]]}], "t")


TOML = """
[[claim]]
id = 'X1'
location = 'Thm 1'
statement = 'the rate is 2'
unconditional = 'a test table: the rate alone is tested'
caveat = 'measured at {n} points'
[claim.choice]
what = 'learning rate'
options = ['0.1', '0.01']
closest = '0.01'
[[claim.test]]
quantity = 'rate'
is = 'between'
range = [1.8, 2.2]
source = 'ours: the fit error over 5 sizes'
"""


def test_a_claim_decided_under_the_option_closest_to_the_paper_names_the_others(monkeypatch):
    decl = parse_declarations(TOML, "common")
    monkeypatch.setattr("icl_lab.claims.declared", lambda paper: decl)
    c = Claim(id="X1", paper="common", location="Thm 1", statement="the rate is 2")
    c.measure(under={"0.1": {"rate": 1.2}, "0.01": {"rate": 2.05}}, n=5, how="fit")
    assert c.status == "reproduced with caveat"
    assert "measured at 5 points" in c.caveat and "under 0.1: not reproduced" in c.caveat
    assert any("learning rate" in d for d in c.depends) and c.criterion
    c.measure(under={"0.1": {"rate": 2.1}, "0.01": {"rate": 2.05}}, n=5, how="fit")
    assert c.status == "reproduced with caveat" and "under" not in c.caveat
    assert any("learning rate" in r for r in c.robust)
    with pytest.raises(ConfigError, match="under"):
        c.measure(rate=2.0, how="fit")


def test_a_chapter_asks_how_a_declared_test_judges_one_value(monkeypatch):
    """Claim.outcome: whether each option of a choice passes the claim's own test, without retyping it."""
    decl = parse_declarations(TOML, "common")
    monkeypatch.setattr("icl_lab.claims.declared", lambda paper: decl)
    c = Claim(id="X1", paper="common", location="Thm 1", statement="the rate is 2")
    assert c.outcome("rate", 2.05) == "holds" and c.outcome("rate", 1.2) == "fails"
    assert c.outcome("rate", cr.Estimate(2.1, 1.7, 2.3, 5, "mean")) == "straddles"
    with pytest.raises(ConfigError, match="no test of 'slope'"):
        c.outcome("slope", 2.0)


@pytest.mark.declarations
def test_declared_tests_cannot_be_bypassed_with_a_typed_verdict():
    ledger = Ledger("common")
    with pytest.raises(ConfigError, match="measure"):
        ledger["S1"].check(measured="0", how="x", passed=True)
    with pytest.raises(ConfigError, match="not measured"):
        ledger["S1"].measure({"another name": 0.0})
    ledger["S1"].measure({"max difference": 1e-16})
    assert ledger["S1"].status == "reproduced" and ledger["S1"].criterion


@pytest.mark.declarations
def test_every_number_of_a_declared_test_gives_its_reason():
    from icl_lab.papers import PAPERS

    for paper in PAPERS:
        for d in declared(paper).values():
            if d.not_checkable:
                continue
            for t in d.tests:  # every number has its source (parse_tests checks it): here, a reason too
                src = t.get("source", "")
                assert not src or len(src.split(":", 1)[-1].strip()) > 3, (paper, d.id, src)


def test_per_seed_values_are_judged_on_the_declared_interval():
    t = {"quantity": "own", "is": "above", "than": 0.9, "source": "paper: Thm 1", "interval": "median"}
    assert _decide([t], own=[0.95, 0.96, 0.97, 0.98, 0.99, 0.93]).passed
    assert _decide([t], own=[0.7, 0.95, 0.96, 0.97, 0.5, 0.6]).inconclusive
    rate = {"quantity": "solved", "is": "above", "than": 0.9, "source": "ours: 'with high probability'",
            "interval": "rate"}
    assert "straddles" in _decide([rate], solved=[True] * 5 + [False]).inconclusive


def test_one_interval_per_setting_and_a_failed_validity_check_overrides_a_failure():
    t = {"quantity": "slopes", "is": "between", "range": [0, 0.5], "source": "paper: Thm 3.4"}
    assert _decide([t], slopes=[cr.Estimate(0.3, 0.2, 0.4), cr.Estimate(0.4, 0.35, 0.45)]).passed
    assert "straddles" in _decide([t], slopes=[cr.Estimate(0.3, 0.2, 0.4), cr.Estimate(0.48, 0.45, 0.52)]).inconclusive
    assert not _decide([t], slopes=[cr.Estimate(0.48, 0.45, 0.52), cr.Estimate(0.7, 0.6, 0.8)]).passed
    valid = {"quantity": "inside grid", "is": "true", "fails": "inconclusive", "note": "the optimum is on the grid's edge"}
    v = _decide([t, valid], slopes=[cr.Estimate(0.7, 0.6, 0.8)], **{"inside grid": False})
    assert v.inconclusive == "the optimum is on the grid's edge"


HYP = """
[[claim]]
id = 'H1'
location = 'Thm 2'
statement = 'the error is below 0.1'
hypotheses = ['N >= K^3', 'K >= 1/eps']
[[claim.test]]
quantity = 'err'
is = 'below'
than = 0.1
source = 'paper: Thm 2'
"""


def test_a_claim_citing_a_theorem_declares_its_hypotheses_and_every_measurement_reports_them(monkeypatch):
    bare = HYP.replace("hypotheses = ['N >= K^3', 'K >= 1/eps']\n", "")
    with pytest.raises(ConfigError, match="H1.*cites a result but hypotheses is empty"):
        parse_declarations(bare, "common")
    ok = parse_declarations(bare.replace("location", "unconditional = 'an identity'\nlocation"), "common")
    assert ok["H1"].unconditional == "an identity"
    decl = parse_declarations(HYP, "common")
    monkeypatch.setattr("icl_lab.claims.declared", lambda paper: decl)
    c = Claim(id="H1", paper="common", location="Thm 2", statement="s")
    with pytest.raises(ConfigError, match=r"missing: \['K >= 1/eps'\]"):
        c.measure(err=0.01, how="h", hypotheses={"N >= K^3": True})
    c.measure(err=0.5, how="h", hypotheses={"N >= K^3": True, "K >= 1/eps": False})
    assert c.status == "inconclusive" and "K >= 1/eps" in c.caveat
    c.measure(err=0.01, how="h", hypotheses={"N >= K^3": True, "K >= 1/eps": True})
    assert c.status == "reproduced" and c.hypotheses == {"N >= K^3": True, "K >= 1/eps": True}
    assert "Hypotheses:" in c._repr_html_() and r"\(K \ge 1/\epsilon\) held" in c._repr_html_()


def test_a_rate_threshold_of_ours_is_tried_inside_0_and_1():
    t = {"quantity": "ok", "is": "above", "than": 0.9, "interval": "rate", "source": "ours: most runs"}
    v = _decide([t], ok=cr.rate_of(20, 20))
    assert v.passed and "moved down (0.85) or moved up (0.95)" in v.robust[0]


def test_a_mean_over_few_seeds_gets_students_t_interval():
    e = cr.mean_of([1.0, 2.0])  # SE 0.5, t(1) = 12.706: two seeds show little
    assert abs(e.hi - e.value - 12.706 * 0.5) < 1e-9 and "t 95%" in e.what
    assert abs(cr.mean_of([1.0, 2.0], z=2).hi - 2.5) < 1e-9


def test_a_failure_no_hypothesis_explains_is_not_excused_by_them(monkeypatch):
    toml = HYP.replace("source = 'paper: Thm 2'", "source = 'paper: Thm 2'\nregardless = 'no predictor reaches it'")
    decl = parse_declarations(toml, "common")
    monkeypatch.setattr("icl_lab.claims.declared", lambda paper: decl)
    c = Claim(id="H1", paper="common", location="Thm 2", statement="s")
    c.measure(err=0.5, how="h", hypotheses={"N >= K^3": False, "K >= 1/eps": True})
    assert c.status == "not reproduced" and "no predictor reaches it" in c.caveat and "N >= K^3" in c.caveat
    with pytest.raises(ConfigError, match="regardless"):
        parse_declarations(toml.replace("'no predictor reaches it'", "''"), "common")


def test_the_depends_line_names_only_the_values_that_flip_the_outcome():
    t = {"quantity": "slope", "is": "equal", "to": -1, "tol": 0.25, "source": "ours: the fit error"}
    v = _decide([t], slope=-1.14)  # inside +-0.25 and +-0.5, outside +-0.125
    assert v.passed and v.depends and v.depends[0].endswith("it changes with it halved (±0.125)")


def test_an_interval_over_fewer_seeds_than_the_minimum_cannot_decide():
    # the floor: the smallest n whose (min, max) covers the median with 95% whatever the distribution
    assert 1 - 2 * 0.5 ** (cr.MIN_SEEDS - 1) < 0.95 <= 1 - 2 * 0.5 ** cr.MIN_SEEDS and cr.MIN_SEEDS == 6
    assert [cr.order_statistic_rank(n) for n in (3, 5, 6, 8, 9, 12, 20)] == [0, 0, 1, 1, 2, 3, 6]
    e = cr.median_of([5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 7.0, 8.0, 6.0])  # n = 9: [x_(2), x_(8)], coverage 96.1%
    assert (e.value, e.lo, e.hi, e.n) == (5.0, 2.0, 8.0, 9) and "order-statistic 95%" in e.what
    assert (cr.median_of([1.0, 2.0, 3.0, 4.0]).value, cr.median_of([3.0, 1.0, 2.0]).lo) == (2.5, 1.0)
    assert "no 95% interval" in cr.median_of([1.0, 2.0, 3.0]).what
    med = {"quantity": "gain", "is": "above", "than": 0.15, "source": "ours: a gap", "interval": "median"}
    five, six = [0.3, 0.31, 0.32, 0.33, 0.34], [0.3, 0.31, 0.32, 0.33, 0.34, 0.35]
    v = _decide([med], gain=five)
    assert not v.robust and "5 seeds cannot decide" in v.inconclusive and "at least 6" in v.inconclusive
    assert _decide([med], gain=six).passed and not _decide([med], gain=six).inconclusive
    # a clear failure over too few seeds is no failure either: the claim is undecided, not 'not reproduced'
    assert "5 seeds cannot decide" in _decide([med], gain=[0.0, 0.01, 0.02, 0.03, 0.04]).inconclusive
    assert not _decide([med], gain=[0.0, 0.01, 0.02, 0.03, 0.04, 0.05]).passed
    mean = {**med, "interval": "mean"}
    assert "3 seeds cannot decide" in _decide([mean], gain=[0.3, 0.3, 0.31]).inconclusive
    # an Estimate handed over (one per setting too) is held to the same floor; a rate's Wilson interval is not
    few, s = cr.median_of([1.0, 1.1, 1.2]), {"quantity": "s", "is": "above", "than": 0.5, "source": "paper: eq. (1)"}
    assert "3 seeds" in _decide([s], s=few).inconclusive
    assert "3 seeds" in _decide([s], s=[cr.median_of([1.0] * 6), few]).inconclusive
    rate = {"quantity": "ok", "is": "above", "than": 0.2, "source": "ours: some runs", "interval": "rate"}
    assert _decide([rate], ok=[True] * 5).passed  # 5 of 5: Wilson [0.57, 1], decided by the count
    assert _decide([s], s=cr.Estimate(1.0, 0.9, 1.1)).passed  # an interval of unknown count: nothing to enforce
    # a clear failure of another test still decides beside the undecided one
    other = {"quantity": "a", "is": "above", "than": 1, "source": "paper: eq. (3)"}
    v = _decide([other, med], a=0.5, gain=five)
    assert not v.passed and not v.inconclusive


CLASH = """
[[claim]]
id = 'H2'
location = 'Thm 1'
statement = 's'
hypotheses = {hyp}
[[claim.test]]
quantity = 'err'
is = 'below'
than = 0.1
source = 'paper: Thm 1'
"""


@pytest.mark.parametrize("hyp", [
    "['Lemma 6: log M1 >= delta^2 beta^2', 'Lemma 4: log M1 <= delta^2 beta^2']",
    "['log M1 >= delta^2 beta^2', 'delta^2 beta^2 >= log M1']",  # the same pair, sides swapped
    "['L <= L* (flat regime)', 'L >= L* (sharp regime)']",  # remarks in brackets do not hide the pair
    "['x > 0.5', 'x < 0.3']", "['initialisation: delta in (0, 0.1)', 'delta >= 0.2']", "['0 < x < 1', 'x >= 1']"])
def test_hypotheses_that_cannot_hold_together_are_refused_naming_both(hyp):
    with pytest.raises(ConfigError, match=r"claim H2: its hypotheses cannot hold together: .* and .*") as e:
        parse_declarations(CLASH.format(hyp=hyp), "common")
    assert "\n" not in str(e.value)
    first, second = eval(hyp)  # noqa: S307 -- the literal above
    assert repr(first) in str(e.value) and repr(second) in str(e.value)


@pytest.mark.parametrize("hyp", ["['N >= K^3', 'K >= 1/eps']", "['x > 0.1', 'x < 0.3']", "['0 < eps < 1']",
                                 "['tau <= O(1/M1), 1 - eps_m - tau M1 > 0', 'delta in (0, 0.1)', 'beta = Theta(1)']",
                                 "['L <= L* (flat regime)', 'N >= L*']"])
def test_hypotheses_that_can_hold_together_are_accepted(hyp):
    assert parse_declarations(CLASH.format(hyp=hyp), "common")["H2"].hypotheses == tuple(eval(hyp))  # noqa: S307


def test_conditions_in_words_give_their_comparisons():
    assert cr.comparisons("batch (39): B >= M1 log M1") == [("B", ">=", "M1 log M1")]
    assert cr.comparisons("initialisation: delta in (0, 0.1]") == [("delta", ">", "0"), ("delta", "<=", "0.1")]
    assert cr.comparisons("0 < eps < 1") == [("0", "<", "eps"), ("eps", "<", "1")]
    assert cr.comparisons("scale: beta = Theta(log log M1)") == []
    assert cr.comparisons("L <= L* (flat regime of Thm 1)") == [("L", "<=", "L*")]


@pytest.mark.declarations
def test_every_papers_claims_declare_hypotheses_that_can_hold_together():
    from icl_lab.papers import PAPERS

    for paper in PAPERS:
        for d in declared(paper).values():
            assert cr.contradictions(d.hypotheses) == [], (paper, d.id)


def test_a_threshold_that_decides_names_each_alternatives_own_outcome():
    """The reason names what each flipping alternative gives: an interval astride it is not 'holds'."""
    from icl_lab.criteria import Estimate
    t = {"quantity": "x", "is": "below", "than": 5, "source": "ours: a cut", "alternatives": [6, 7]}
    q = {"x": Estimate(5.8, 5.2, 6.29, 8, "median, order-statistic 95%")}
    v = cr.decide((t,), q, "here")
    assert v.inconclusive
    assert "x below 5 fails" in v.inconclusive
    assert "x below 6 cannot be decided (its interval straddles the threshold)" in v.inconclusive
    assert "x below 7 holds" in v.inconclusive


def test_range_alternatives_name_their_outcome_too():
    """A 'between' test's alternatives are ranges (lists): each is judged and named."""
    t = {"quantity": "r", "is": "between", "range": [0.6667, 1.5], "source": "ours: a band",
         "alternatives": [[0.8, 1.25], [0.5, 2.0]]}
    v = cr.decide((t,), {"r": cr.Estimate(1.1, 0.9, 1.4, 8, "median, order-statistic 95%")}, "here")
    assert "cannot be decided (its interval straddles the threshold)" in v.inconclusive
