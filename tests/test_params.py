"""Declared parameter constraints: one error format, parsing of command-line text, generated
invalid values that every constraint rejects."""
from __future__ import annotations

import math

import pytest

from icl_lab import ConfigError
from icl_lab.params import SEED, Bool, Int, OneOf, NoneOr, Real, TupleOf, constraints_of, describe

CONSTRAINTS = [Int(1, 10), Int(0, 5, closed="neither"), Real(0, 1), Real(0, 1e6, closed="right"),
               OneOf("relu", "cos"), OneOf(2, 3, 5), Bool(), TupleOf(Int(1, 100), max_len=4),
               TupleOf(Real(0, 1, closed="right"), min_len=2, max_len=3, increasing=True), NoneOr(Int(1, 3)), SEED]


@pytest.mark.parametrize("c", CONSTRAINTS, ids=repr)
def test_every_generated_invalid_value_is_refused_with_the_name(c):
    for bad in c.invalid():
        with pytest.raises(ConfigError) as e:
            c.check("param", bad)
        assert str(e.value).startswith("param") and "must be" in str(e.value) and "(got " in str(e.value)


def test_intervals_and_their_ends():
    assert Int(1, 10).check("n", 10) == 10 and Int(1, 10).check("n", 3.0) == 3
    assert isinstance(Int(1, 10).check("n", 3.0), int)
    for bad in (0, 11, True, 2.5, float("nan"), "3"):
        with pytest.raises(ConfigError, match=r"^n must be an integer in \[1, 10\]"):
            Int(1, 10).check("n", bad)
    with pytest.raises(ConfigError, match=r"^lr must be a number in \(0, 1e\+06\]"):
        Real(0, 1e6, closed="right").check("lr", 0)
    assert Real(0, 1, closed="neither").check("p", 0.5) == 0.5
    with pytest.raises(ConfigError):
        Real(0, 1).check("p", math.inf)
    with pytest.raises(ConfigError):
        SEED.check("seed", 2**64)  # what no torch.Generator accepts


def test_parsing_command_line_text():
    assert Int(1, 10**6).parse("n", "1e4") == 10_000
    assert Real(0, 10).parse("lr", "3") == 3.0
    with pytest.raises(ConfigError, match="^lr must be"):
        Real(0, 10).parse("lr", "inf")
    with pytest.raises(ConfigError, match="^n must be"):
        Int(1, 10).parse("n", "abc")
    t = TupleOf(Int(1, 100), max_len=4)
    assert t.parse("Ns", "2,4,8") == (2, 4, 8) == t.parse("Ns", "[2, 4, 8]")
    assert t.parse("Ns", "5") == (5,)
    with pytest.raises(ConfigError, match=r"^Ns\[1\] must be an integer"):
        t.parse("Ns", "2,0")
    with pytest.raises(ConfigError, match="^Ns must be a list of 1 to 4"):
        t.parse("Ns", "1,2,3,4,5")
    assert Bool().parse("flag", "yes") is True and Bool().parse("flag", "off") is False
    assert OneOf("relu", "cos").parse("act", " cos ") == "cos"
    assert NoneOr(Int(1, 3)).parse("k", "None") is None
    with pytest.raises(ConfigError, match="at most 10000 characters"):
        Int(1, 3).parse("k", "[" * 20_000)


def test_tuple_order_rules():
    inc = TupleOf(Real(0, 1, closed="right"), min_len=2, max_len=3, increasing=True)
    assert inc.check("s", [0.1, 0.5]) == (0.1, 0.5)
    for bad in ([0.5, 0.1], [0.1, 0.1], [0.2]):
        with pytest.raises(ConfigError, match="^s must be a list"):
            inc.check("s", bad)


def test_configs_declare_every_field():
    from icl_lab.papers.common.experiments import ContextLengthConfig

    cons = constraints_of(ContextLengthConfig)
    assert set(cons) == set(ContextLengthConfig.__dataclass_fields__)
    assert describe(ContextLengthConfig)["lr"].startswith("a number in (0,")
    with pytest.raises(ConfigError, match=r"^K must be <= d"):
        ContextLengthConfig.for_scale("ci", K=17)
