"""Random declared-valid configurations of every registered experiment, at the ci scale: each is either
refused before any work (one ConfigError: a rule spanning fields, the memory guard, prompts that would
leave a feature unqueried) or its task starts, after every check has passed. The run is a stub that
stops at "computation started", so nothing trains: what is tested is that no check is left inside the
computation and that no declared-valid value makes a check itself crash."""
from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icl_lab import ConfigError, registry, sweep
from icl_lab.params import Bool, Int, NoneOr, OneOf, Real, TupleOf, constraints_of

EXPERIMENTS = registry.all_experiments()


class ComputationStarted(Exception):
    """Raised by the stub run: every check before the task has passed."""


def _started(cfg, device=None):
    raise ComputationStarted(type(cfg).__name__)


def _ints(c: Int, default) -> st.SearchStrategy:
    """Declared-valid integers, at most about twice the ci value (sizes beyond that only cost time)."""
    lo = c.lo if c.closed in ("both", "left") else c.lo + 1
    hi = c.hi if c.closed in ("both", "right") else c.hi - 1
    cap = max(lo, 2 * default + 2) if isinstance(default, int) and default > 0 else lo + 4
    return st.integers(lo, max(lo, min(hi, cap)))


def _reals(c: Real) -> st.SearchStrategy:
    """Declared-valid reals over the whole range, with the extremes: the bounds or, at an open end, the
    nearest representable value inside it, and the smallest normal number where 0 is an open end."""
    lo_in, hi_in = c.closed in ("both", "left"), c.closed in ("both", "right")
    ends = [c.lo if lo_in else math.nextafter(c.lo, math.inf), c.hi if hi_in else math.nextafter(c.hi, -math.inf)]
    if c._in(2.3e-308):
        ends.append(2.3e-308)
    return st.one_of(st.sampled_from([v for v in ends if c._in(v)]),
                     st.floats(c.lo, c.hi, exclude_min=not lo_in, exclude_max=not hi_in, allow_nan=False,
                               allow_infinity=False, allow_subnormal=False))


def _values(c, default) -> st.SearchStrategy:
    if isinstance(c, Int):
        return _ints(c, default)
    if isinstance(c, Real):
        return _reals(c)
    if isinstance(c, OneOf):
        return st.sampled_from(c.options)
    if isinstance(c, Bool):
        return st.booleans()
    if isinstance(c, NoneOr):
        return st.one_of(st.none(), _values(c.inner, default))
    if isinstance(c, TupleOf) and isinstance(default, tuple) and default:
        items = [_values(c.item, d) for d in default]  # as long as the ci value
        return st.tuples(*items).map(lambda t: tuple(sorted(set(t))) if c.increasing else t)
    return st.just(default)


def configs(cls) -> st.SearchStrategy:
    """Overrides of some fields of ``cls``'s ci config, each drawn from its declared constraint."""
    base = cls.for_scale("ci")
    fields = {f: _values(c, getattr(base, f)) for f, c in constraints_of(cls).items()
              if not (f == "seed" or f.endswith("_seed"))}  # seeds change nothing a check sees
    return st.fixed_dictionaries({}, optional=fields)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_a_random_declared_valid_config_starts_its_task_or_is_refused_before_it(name, tmp_path):
    exp = EXPERIMENTS[name]
    stub = dataclasses.replace(exp, run=_started)
    outcomes = {"refused": 0, "started": 0}

    @settings(max_examples=8, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(overrides=configs(exp.config))
    def check(overrides):
        try:
            plan = sweep.plan(name, "ci", sets=overrides, registry={name: stub})
            res = sweep.run(plan, results_dir=tmp_path / "r", progress=False)
        except ConfigError as e:  # refused before any task: one line
            assert "\n" not in str(e)
            outcomes["refused"] += 1
            return
        assert set(res.failed) == {t.key for t in plan.tasks}, res.failed
        assert all(err.startswith("ComputationStarted") for err in res.failed.values()), res.failed
        outcomes["started"] += 1

    check()
    assert outcomes["started"] >= 1, outcomes  # the property is not only met by refusals
    assert not (tmp_path / "r").exists()  # nothing stored, no folder or lock left


def test_the_ci_config_of_every_experiment_passes_every_check():
    """The defaults themselves: no refusal (so the property above starts tasks, not only refusals)."""
    refused = []
    for name, exp in EXPERIMENTS.items():
        try:
            sweep.plan(name, "ci")
            if exp.check is not None:
                exp.check(exp.config.for_scale("ci"))
        except ConfigError as e:
            refused.append((name, str(e)))
    assert not refused
