"""Each paper's coverage (icl_lab/papers/<key>/coverage.toml): its statements, each with the claims that
test it, why none does, or what would. Every paper and the template have one that matches
icl_lab/schemas/coverage.schema.json; every id named is a claim of that paper; every paper-kind claim
tests a listed statement (or is untied with why); a malformed file is refused in one line."""
from __future__ import annotations

import tomllib

import pytest

from icl_lab import coverage, schemas
from icl_lab.params import ConfigError

PAPERS = ("convergence", "nonlinear", "window", "selectors")
COVERED = PAPERS + ("_template",)
KINDS = {"A1": "paper", "A2": "paper", "C1": "consistency", "F'1": "finding"}
GOOD = """
[[statement]]
where = 'Thm 1'
statement = 'A bound.'
claims = ['A1', 'C1']

[[statement]]
where = 'Abstract'
statement = 'A trend.'
gap = 'the slope of the loss in N would test it'

[[statement]]
where = 'Def. 2'
statement = 'A definition.'
reason = 'a definition'

[untied]
A2 = 'a check of the setup the paper states in passing'
"""


def _text(paper: str) -> str:
    return (coverage.PAPERS_DIR / paper / "coverage.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("paper", COVERED)
def test_every_paper_has_a_coverage_that_matches_the_schema(paper):
    table = tomllib.loads(_text(paper))
    assert table["statement"] and schemas.problem("coverage", table) is None


@pytest.mark.parametrize("paper", COVERED)
def test_every_claim_named_exists_and_every_paper_claim_is_named(paper):
    cov = coverage.load(paper)  # refuses an unknown id or an unnamed paper-kind claim
    kinds = coverage.declared_kinds((coverage.PAPERS_DIR / paper / "claims.toml").read_text(encoding="utf-8"))
    assert cov.named() <= set(kinds)
    paper_claims = {c for c, k in kinds.items() if k == "paper"}
    assert paper_claims <= cov.named() | set(cov.untied)
    assert all(e.where.strip() and e.statement.strip() for e in cov.entries)
    assert all(sum(map(bool, (e.claims, e.reason, e.gap))) == 1 for e in cov.entries)


@pytest.mark.parametrize("paper", PAPERS)
def test_a_paper_lists_its_abstract_and_numbered_results(paper):
    """A coverage list starts where the paper does: the abstract, the introduction's contributions and at
    least one numbered result."""
    wheres = [e.where for e in coverage.load(paper).entries]
    assert any(w.startswith("Abstract") for w in wheres)
    assert any(w.startswith(("Intro", "Sec. 1")) for w in wheres)
    assert any(w.startswith(("Thm", "Lemma", "Prop", "Cor", "Eq.")) for w in wheres)
    assert len(set(zip(wheres, (e.statement for e in coverage.load(paper).entries)))) == len(wheres)


@pytest.mark.parametrize("paper", COVERED)
def test_summary_counts_every_statement_once(paper):
    s = coverage.summary(paper)
    assert s["statements"] == s["tested"] + s["reasons"] + s["gaps"] == len(coverage.load(paper).entries)
    assert s["tested"] >= 1


def test_a_good_file_parses_with_each_status():
    cov = coverage.parse(GOOD, "convergence", KINDS)
    assert [e.status for e in cov.entries] == ["tested", "gap", "reason"]
    assert cov.named() == {"A1", "C1"} and cov.untied == {"A2": "a check of the setup the paper states in passing"}
    assert cov.entries[0].claims == ("A1", "C1")


BAD = {
    "statement[0]: must be a table with where, statement and exactly one of claims, reason or gap (got a table)":
        GOOD.replace("claims = ['A1', 'C1']", "claims = ['A1', 'C1']\nreason = 'also a reason'"),
    "statement[1]: must be a table with where, statement and exactly one of claims, reason or gap (got a table)":
        GOOD.replace("gap = 'the slope of the loss in N would test it'", ""),
    "statement[0].where: is required": GOOD.replace("where = 'Thm 1'", ""),
    "statement[2].reason: must be non-empty": GOOD.replace("reason = 'a definition'", "reason = ''"),
    "statement[0].claims: must be a non-empty list of distinct claim ids (got a list of 0)":
        GOOD.replace("claims = ['A1', 'C1']", "claims = []"),
    "statement[0].claims[1]: must be a claim id": GOOD.replace("'C1']", "'C 1']"),
    "statement[0]: unknown field 'claim'": GOOD.replace("claims = [", "claim = ["),
    "statement: is required": "[untied]\nA2 = 'x'\n",
    "statement[0].claims[1]: 'C9' is no claim of icl_lab/papers/convergence/claims.toml (Thm 1)":
        GOOD.replace("'C1']", "'C9']"),
    "untied.C1: 'C1' is a consistency claim of": GOOD + "C1 = 'why'\n",
    "untied.A1: 'A1' tests a statement listed here": GOOD.replace("A2 = ", "A1 = 'x'\nA2 = "),
    "paper-kind claim 'A2' tests no statement listed": GOOD.split("[untied]")[0],
    "Expected": GOOD.replace("[[statement]]", "[[statement", 1),
}


@pytest.mark.parametrize("message, text", list(BAD.items()), ids=list(range(len(BAD))))
def test_a_bad_file_is_refused_in_one_line_naming_the_field(message, text):
    with pytest.raises(ConfigError) as e:
        coverage.parse(text, "convergence", KINDS)
    said = str(e.value)
    assert said.startswith("icl_lab/papers/convergence/coverage.toml: ") and "\n" not in said
    assert message in said


def test_load_refuses_an_unknown_paper_and_a_paper_without_a_file():
    with pytest.raises(ConfigError, match="paper must be one of"):
        coverage.load("nope")
    with pytest.raises(ConfigError, match="common/coverage.toml: no such file"):
        coverage.load("common")
