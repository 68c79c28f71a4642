"""Declared structure: records and claims.toml are checked against the JSON Schemas of icl_lab/schemas/,
and a file that breaks one is refused in one line naming the file, the field and the rule."""
from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest

from icl_lab import claims, criteria, paths, records, schemas
from icl_lab.claims import parse_declarations
from icl_lab.papers import PAPERS
from icl_lab.params import ConfigError
from icl_lab.records import StoreError
from icl_lab.store import ResultsStore

PAPERS_DIR = Path(claims.__file__).parent / "papers"


def _record(**changes) -> dict:
    rec = {"format": records.FORMAT, "experiment": "exp", "key": "0" * 24, "config": {}, "seeds": [0],
           "scale": "ci", "overrides": {}, "summary": {"loss": [0.1, 0.2]},
           "meta": {"wall_seconds": 1.0, "cpu_seconds": 1.0}}
    rec.update(changes)
    return {**rec, "checksum": records.checksum(rec)}


def _reference_records() -> list[Path]:
    root = paths.REFERENCE
    return sorted(p for p in root.glob("*/*.json") if p.parent.name not in ("claims", "full"))


def test_every_shipped_record_matches_the_record_schema():
    found = _reference_records()
    assert len(found) > 100  # the shipped references are there to be checked
    bad = {str(p): schemas.problem("record", json.loads(p.read_text())) for p in found}
    assert {p: why for p, why in bad.items() if why} == {}


@pytest.mark.parametrize("paper", [p for p in PAPERS if (PAPERS_DIR / p / "claims.toml").is_file()])
def test_every_claims_table_matches_the_claims_schema(paper):
    table = tomllib.loads((PAPERS_DIR / paper / "claims.toml").read_text(encoding="utf-8"))
    assert table["claim"] and schemas.problem("claims", table) is None


def test_the_schemas_are_valid_and_say_what_the_code_says():
    """The words a schema allows are the library's own constants: one cannot drift from the other."""
    for name in schemas.SCHEMAS:
        assert schemas.validator(name) is schemas.validator(name)  # compiled (and checked) once
    rec, decl = schemas.schema("record"), schemas.schema("claims")["$defs"]
    assert rec["properties"]["format"]["const"] == records.FORMAT
    assert decl["claim"]["properties"]["kind"]["enum"] == list(claims.KINDS)
    test = decl["test"]["properties"]
    assert set(test) == criteria._TEST_FIELDS and set(decl["choice"]["properties"]) == criteria._CHOICE_FIELDS
    assert test["is"]["enum"] == list(criteria.TESTS) and test["statistic"]["enum"] == list(criteria.STATISTICS)
    assert test["fails"]["enum"] == list(criteria.FAILS) and test["interval"]["enum"] == list(criteria.INTERVALS)
    with pytest.raises(ValueError, match="schema must be one of"):
        schemas.schema("nope")


def test_the_schemas_are_package_data():
    """An installed wheel carries them: pyproject.toml's package data names them."""
    pyproject = tomllib.loads((Path(claims.__file__).parents[1] / "pyproject.toml").read_text())
    assert "*.schema.json" in pyproject["tool"]["setuptools"]["package-data"]["*"]
    assert any(d.startswith("jsonschema") for d in pyproject["project"]["dependencies"])
    assert sorted(p.name for p in Path(schemas.__file__).parent.glob("*.schema.json")) == [
        f"{n}.schema.json" for n in sorted(schemas.SCHEMAS)]


RECORD_CASES = {
    "meta.wall_seconds: must be a number >= 0 (got -1.0)": dict(meta={"wall_seconds": -1.0}),
    "meta.cpu_seconds: must be a finite number >= 0 (got inf)": dict(meta={"cpu_seconds": math.inf}),
    "meta.wall_seconds: must be a number (got 'abc')": dict(meta={"wall_seconds": "abc"}),
    "meta.code.fingerprint: must be a string or null (got 5)": dict(meta={"code": {"fingerprint": 5}}),
    "seeds[1]: must be an integer (got 1.0)": dict(seeds=[0, 1.0]),
    "summary: must be an object (got a list of 2)": dict(summary=[1, 2]),
    "format: must be 'icl-lab-result/1' (got 'icl-lab-result/0')": dict(format="icl-lab-result/0"),
    "experiment: must be an experiment name: words of letters, digits and _ joined by dots (got 'a/b')":
        dict(experiment="a/b"),
}


@pytest.mark.parametrize("message", sorted(RECORD_CASES))
def test_a_malformed_record_is_refused_in_one_line_naming_file_field_and_rule(tmp_path, message):
    path = tmp_path / "exp" / ("0" * 24 + ".json")
    path.parent.mkdir()
    path.write_text(json.dumps(_record(**RECORD_CASES[message]), allow_nan=True))
    with pytest.raises(StoreError) as err:
        ResultsStore(tmp_path, reference=False).read(path)
    assert str(err.value) == f"result file {str(path)!r} is invalid at {message}"


def test_a_record_with_an_unknown_or_missing_field_is_refused(tmp_path):
    extra = {**_record(), "comment": "x"}
    assert records.record_problem(extra) == ("is invalid: unknown field 'comment' (known: checksum, config, "
                                             "experiment, format, key, meta, overrides, scale, seeds, summary)")
    assert records.record_problem({k: v for k, v in _record().items() if k != "checksum"}) == \
        "is invalid at checksum: is required"
    assert records.record_problem([1]) == "is invalid: must be an object (got a list of 1)"
    assert records.record_problem(_record()) is None
    # meta is open: what a newer library notes about a run is kept, typed where the schema knows it
    assert records.record_problem(_record(meta={"wall_seconds": 1.0, "note": "x"})) is None
    with pytest.raises(StoreError, match=r"^record 'exp'/'0{24}' is invalid at scale: must be a string or null "
                                         r"\(got 3\); not written$"):
        ResultsStore(tmp_path, reference=False).write({k: v for k, v in _record(scale=3).items() if k != "checksum"})


HEAD = "[[claim]]\nid = 'S3'\nlocation = 'Fig. 2'\nstatement = 's'\n"
TEST = HEAD + "[[claim.test]]\nquantity = 'x'\nsource = 'ours: x'\n"
WHERE = "icl_lab/papers/selectors/claims.toml: "
CLAIMS_CASES = {
    HEAD + "statment = 't'":
        "claim 'S3': unknown field 'statment' (known: caveat, choice, how, hypotheses, id, kind, location, "
        "not_checkable, part, statement, test, unconditional)",
    "[[claim]]\nlocation = 'L'\nstatement = 's'": "claim #1 id: is required",
    HEAD.replace("'Fig. 2'", "5"): "claim 'S3' location: must be a string (got 5)",
    HEAD + "hypotheses = [1]": "claim 'S3' hypotheses[0]: must be a string (got 1)",
    HEAD + "kind = 'lemma'": "claim 'S3' kind: must be one of 'paper', 'consistency', 'finding' (got 'lemma')",
    TEST + "is = 'below'": "claim 'S3' test[0].than: is required by a test 'below' or 'above'",
    TEST + "is = 'smaller'\nthan = 1": ("claim 'S3' test[0].is: must be one of 'below', 'above', 'between', 'equal', "
                                       "'true', 'false', 'increasing', 'decreasing', 'nearer' (got 'smaller')"),
    TEST + "is = 'between'\nrange = [1]":
        "claim 'S3' test[0].range: must be a pair of numbers [low, high] (got a list of 1)",
    TEST + "is = 'between'\nrange = [1, 'a']": "claim 'S3' test[0].range[1]: must be a number (got 'a')",
    TEST + "is = 'below'\nthan = [1]":
        "claim 'S3' test[0].than: must be a number or the name of another measured quantity (got a list of 1)",
    TEST + "is = 'below'\nthan = 1\nfails = 'caveat'":
        "claim 'S3' test[0].note: is required by a test that fails as 'caveat' or 'inconclusive', to say why",
    TEST + "is = 'true'\nstrict = 'yes'": "claim 'S3' test[0].strict: must be true or false (got 'yes')",
    HEAD + "[claim.choice]\nwhat = 'lr'\noptions = ['a']\nclosest = 'a'":
        "claim 'S3' choice.options: must list at least 2 items (got a list of 1)",
    "claim = 5": "claim: must be a list (got 5)",
    "title = 'x'\n" + HEAD: "unknown field 'title' (known: claim)",
}


@pytest.mark.parametrize("body", list(CLAIMS_CASES), ids=range(len(CLAIMS_CASES)))
def test_a_malformed_claims_table_is_refused_in_one_line_naming_file_field_and_rule(body):
    with pytest.raises(ConfigError) as err:
        parse_declarations(body + "\n", "selectors")
    assert str(err.value) == WHERE + CLAIMS_CASES[body] and "\n" not in str(err.value)


def test_what_a_schema_cannot_say_is_still_checked_after_it():
    """Semantics stay in code: a number's source, a closest option among the options, ids declared once."""
    with pytest.raises(ConfigError, match=r"claim 'S3', test 1: a number needs its source"):
        parse_declarations(HEAD + "[[claim.test]]\nquantity = 'x'\nis = 'below'\nthan = 1\n", "selectors")
    with pytest.raises(ConfigError, match="closest must be one of"):
        parse_declarations(HEAD + "[claim.choice]\nwhat = 'lr'\noptions = ['a', 'b']\nclosest = 'c'\n", "selectors")
    with pytest.raises(ConfigError, match="declared twice"):
        parse_declarations(HEAD + HEAD, "selectors")


def test_jsonschema_is_imported_only_when_a_file_is_checked():
    """Importing jsonschema can take over a second (its optional format checkers): the library imports
    it when it first checks a file, not when it is imported."""
    import subprocess
    import sys

    code = ("import sys, icl_lab, icl_lab.records, icl_lab.claims, icl_lab.store\n"
            "assert 'jsonschema' not in sys.modules, 'imported with the library'\n"
            "assert icl_lab.records.record_problem([]) == 'is invalid: must be an object (got a list of 0)'\n"
            "assert 'jsonschema' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
