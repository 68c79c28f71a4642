"""Declared parameter constraints: every config field says once what values it accepts.

As scikit-learn's ``_parameter_constraints``, a config class maps each field to a :class:`Constraint`::

    PARAMS = dict(d=Int(1, 4096), lr=Real(0, 1e6, closed="right"), N_values=TupleOf(Int(1, 100_000)))

That one declaration gives validation on every construction (``<name> must be <description> (got <value>)``),
the parsing of command-line text (``icl-lab run --set lr=3``), the ranges ``icl-lab show`` prints, and the
invalid values of the invalid-configuration tests. Every bound is finite (a batch of 10^9 prompts would ask
for terabytes); a config's ``validate()`` keeps only the rules that span fields (``K <= d``). Below: the
checks of single arguments that samplers, models and metrics run before computing.
"""
from __future__ import annotations

import ast
import math
import numbers
import sys
from dataclasses import dataclass
from typing import Iterable, Sequence

import torch


class ConfigError(ValueError):
    """An invalid parameter value. The message names the parameter."""

CLOSED = ("both", "left", "right", "neither")


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) >= 1e5:
        return f"{v:.0e}"
    return repr(v) if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)


def _bad(name, what, value) -> ConfigError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ConfigError(f"{name} must be {what} (got {shown})")


def literal(text: str):
    """A Python literal from command-line text (``ast.literal_eval``), else the text itself."""
    text = text.strip()
    if len(text) > 10_000:
        raise ConfigError(f"a value may be at most 10000 characters (got {len(text)})")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


class Constraint:
    """What a field accepts: ``check`` (validate and normalise a value), ``describe`` (in words),
    ``parse`` (command-line text to a value) and ``invalid`` (values that must be rejected)."""

    def check(self, name: str, value):  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, name: str, text: str):
        """Command-line text to a checked value."""
        return self.check(name, literal(text) if isinstance(text, str) else text)

    def invalid(self) -> list:
        """Values this constraint must reject (for the invalid-configuration tests)."""
        return [None, "abc", [object()]]

    def __repr__(self) -> str:
        return self.describe()


class _Interval(Constraint):
    """The bounds ``lo``, ``hi`` of :class:`Int` and :class:`Real` and which ends belong."""

    what = "a number"

    def __post_init__(self):
        assert self.closed in CLOSED and self.lo <= self.hi
        assert math.isfinite(self.lo) and math.isfinite(self.hi)

    def _in(self, v) -> bool:
        lo_ok = v >= self.lo if self.closed in ("both", "left") else v > self.lo
        hi_ok = v <= self.hi if self.closed in ("both", "right") else v < self.hi
        return lo_ok and hi_ok

    def describe(self) -> str:
        a = "[" if self.closed in ("both", "left") else "("
        b = "]" if self.closed in ("both", "right") else ")"
        return f"{self.what} in {a}{_fmt(self.lo)}, {_fmt(self.hi)}{b}"


@dataclass(frozen=True, repr=False)
class Int(_Interval):
    """An integer in [lo, hi] (or an open end with ``closed``). ``2.0`` and ``1e4`` are accepted as
    the integers they denote; ``True`` is not a number here."""

    lo: int
    hi: int
    closed: str = "both"
    what = "an integer"

    def check(self, name, value):
        if isinstance(value, bool) or not (
            isinstance(value, numbers.Integral)
            or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
        ):
            raise _bad(name, self.describe(), value)
        v = int(value)
        if not self._in(v):
            raise _bad(name, self.describe(), value)
        return v

    def parse(self, name, text):
        v = literal(text) if isinstance(text, str) else text
        if isinstance(v, str):  # '1e4' parses as a float literal already; anything else is not a number
            raise _bad(name, self.describe(), text)
        return self.check(name, v)

    def invalid(self) -> list:
        out = [2.5, "abc", None, True, float("nan"), float("inf"), [self.lo]]
        out += [self.lo - 1] if self.closed in ("both", "left") else [self.lo]
        out += [self.hi + 1] if self.closed in ("both", "right") else [self.hi]
        return out


@dataclass(frozen=True, repr=False)
class Real(_Interval):
    """A finite real number between lo and hi (``closed`` says which ends belong to it), not subnormal:
    a value below 2.2e-308 in magnitude (other than 0) cannot compute (its reciprocal overflows)."""

    lo: float
    hi: float
    closed: str = "both"

    def check(self, name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise _bad(name, self.describe(), value)
        try:
            v = float(value)
        except OverflowError:
            raise _bad(name, self.describe(), value) from None
        if not math.isfinite(v) or not self._in(v):
            raise _bad(name, self.describe(), value)
        if v != 0 and abs(v) < sys.float_info.min:  # subnormal: 1/v overflows, v * v underflows to 0
            raise _bad(name, f"{self.describe()}, not subnormal (|value| >= {sys.float_info.min:.1e})", value)
        return v

    def parse(self, name, text):
        v = literal(text) if isinstance(text, str) else text
        if isinstance(v, str):
            try:
                v = float(v)  # 'inf', 'nan' parse here and are then refused as not finite
            except ValueError:
                raise _bad(name, self.describe(), text) from None
        return self.check(name, v)

    def invalid(self) -> list:
        out = ["abc", None, True, float("nan"), float("inf"), -float("inf"), [self.lo]]
        span = max(1.0, abs(self.hi - self.lo))
        out += [self.lo - 0.5 * span] if self.closed in ("both", "left") else [self.lo]
        out += [self.hi + 0.5 * span] if self.closed in ("both", "right") else [self.hi]
        tiny = 1e-320 if self._in(1e-320) else -1e-320 if self._in(-1e-320) else None
        return out + ([tiny] if tiny is not None else [])  # a subnormal inside the interval


@dataclass(frozen=True, repr=False)
class OneOf(Constraint):
    """One of a fixed set of values (strings, or numbers such as a list of allowed dimensions)."""

    options: tuple

    def __init__(self, *options):
        object.__setattr__(self, "options", tuple(options))

    def describe(self) -> str:
        return "one of " + ", ".join(_fmt(o) for o in self.options)

    def check(self, name, value):
        for o in self.options:
            if type(value) is type(o) and value == o or (
                isinstance(o, numbers.Real) and not isinstance(o, bool) and isinstance(value, numbers.Real)
                and not isinstance(value, bool) and value == o
            ):
                return o
        raise _bad(name, self.describe(), value)

    def parse(self, name, text):
        if isinstance(text, str) and text.strip() in [o for o in self.options if isinstance(o, str)]:
            return text.strip()
        return self.check(name, literal(text) if isinstance(text, str) else text)

    def invalid(self) -> list:
        bad = ["not-an-option", None, 12345, ""]
        return [b for b in bad if b not in self.options]


@dataclass(frozen=True, repr=False)
class Bool(Constraint):
    """True or False (the command line also accepts true/false, yes/no, 1/0)."""

    def describe(self) -> str:
        return "true or false"

    def check(self, name, value):
        if not isinstance(value, bool):
            raise _bad(name, self.describe(), value)
        return value

    def parse(self, name, text):
        if isinstance(text, str):
            t = text.strip().lower()
            if t in ("true", "yes", "1", "on"):
                return True
            if t in ("false", "no", "0", "off"):
                return False
        return self.check(name, text)

    def invalid(self) -> list:
        return ["maybe", None, 2, 0.5]


@dataclass(frozen=True, repr=False)
class TupleOf(Constraint):
    """A tuple of ``min_len`` to ``max_len`` values, each meeting ``item``; ``distinct`` and
    ``increasing`` add order rules. Lists are accepted and stored as tuples."""

    item: Constraint
    min_len: int = 1
    max_len: int = 1000
    distinct: bool = False
    increasing: bool = False

    def describe(self) -> str:
        n = f"{self.min_len} to {self.max_len}" if self.min_len != self.max_len else str(self.min_len)
        order = " increasing" if self.increasing else " distinct" if self.distinct else ""
        return f"a list of {n}{order} values, each {self.item.describe()}"

    def check(self, name, value):
        if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
            raise _bad(name, self.describe(), value)
        if not self.min_len <= len(value) <= self.max_len:
            raise _bad(name, self.describe(), value)
        out = tuple(self.item.check(f"{name}[{i}]", v) for i, v in enumerate(value))
        if (self.distinct or self.increasing) and len(set(out)) != len(out):
            raise _bad(name, self.describe(), value)
        if self.increasing and list(out) != sorted(out):
            raise _bad(name, self.describe(), value)
        return out

    def parse(self, name, text):
        v = literal(text) if isinstance(text, str) else text
        if isinstance(v, str):  # '2,4,8' without brackets when an item is not a literal
            v = [literal(p) for p in v.split(",")]
        if not isinstance(v, (tuple, list)):
            v = (v,)  # '--set N_values=5' is the one-element list
        items = []
        for i, x in enumerate(v):
            items.append(self.item.parse(f"{name}[{i}]", x) if isinstance(x, str) else x)
        return self.check(name, items)

    def invalid(self) -> list:
        out = [None, "abc", 5] if not isinstance(self.item, TupleOf) else [None, "abc"]
        if self.min_len > 0:
            out.append(())
        item_bad = [b for b in self.item.invalid() if not isinstance(b, (list, tuple))]
        tiny = [b for b in item_bad[3:] if isinstance(b, float) and 0 < abs(b) < sys.float_info.min]  # subnormal
        out += [(b,) * max(1, self.min_len) for b in item_bad[:3] + tiny]
        out.append((self.item_example(),) * (self.max_len + 1))
        return out

    def item_example(self):
        it = self.item
        if isinstance(it, (Int, Real)):
            return it.lo if it.closed in ("both", "left") else it.hi
        if isinstance(it, OneOf):
            return it.options[0]
        return None


@dataclass(frozen=True, repr=False)
class NoneOr(Constraint):
    """``None`` or a value meeting ``inner``."""

    inner: Constraint

    def describe(self) -> str:
        return f"None or {self.inner.describe()}"

    def check(self, name, value):
        return None if value is None else self.inner.check(name, value)

    def parse(self, name, text):
        if isinstance(text, str) and text.strip() in ("None", "none", "null"):
            return None
        return self.inner.parse(name, text)

    def invalid(self) -> list:
        return [b for b in self.inner.invalid() if b is not None]


# ------------------------------------------------------------------ common declarations
SEED = Int(0, 2**63 - 1)  # what torch.Generator.manual_seed accepts
COUNT = Int(1, 10**6)  # seeds, runs, samples of a summary
SIZE = Int(1, 4096)  # a dimension d, a number of features K, a width
STEPS = Int(1, 10**7)
PROMPTS = Int(1, 10**6)
LR = Real(0, 1e6, closed="right")
PROB = Real(0, 1)


def constraints_of(cls) -> dict:
    """The declared constraints of a config class (``PARAMS``, merged along the class hierarchy)."""
    out: dict = {}
    for klass in reversed(cls.__mro__):
        out.update(getattr(klass, "PARAMS", None) or {})
    return out


def check_fields(obj) -> dict:
    """Every field of ``obj`` checked against its declaration (normalised); an undeclared field is a TypeError."""
    from dataclasses import fields

    cons = constraints_of(type(obj))
    out = {}
    for f in fields(obj):
        if f.name not in cons:
            raise TypeError(f"{type(obj).__name__}.{f.name} has no declared constraint in PARAMS")
        out[f.name] = cons[f.name].check(f.name, getattr(obj, f.name))
    return out


def is_declared(cls) -> bool:
    """True when every field of ``cls`` has a declared constraint."""
    from dataclasses import fields

    declared = constraints_of(cls)
    return all(f.name in declared for f in fields(cls))


def coerce_value(cls, name: str, value):
    """``value`` (command-line text or a Python/JSON value) parsed and checked by field ``name``'s constraint."""
    cons = constraints_of(cls)
    if name not in cons:
        raise ConfigError(f"{name} is not a parameter of {cls.__name__} (known: {sorted(cons)})")
    c = cons[name]
    return c.parse(name, value) if isinstance(value, str) else c.check(name, value)


def describe(cls) -> dict[str, str]:
    """``{field: allowed values in words}`` for every field (``icl-lab show``, help texts)."""
    from dataclasses import fields

    cons = constraints_of(cls)
    return {f.name: cons[f.name].describe() if f.name in cons else "undeclared" for f in fields(cls)}


# ------------------------------------------------------------------ checks of single arguments
def positive_int(name: str, value, *, minimum: int = 1) -> int:
    # numbers.Integral: also numpy integers (e.g. from np.arange sweeps), not only Python ints
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) and not (
        isinstance(value, float) and value.is_integer()
    ):
        raise ConfigError(f"{name} must be an integer >= {minimum} (got {value!r})")
    value = int(value)
    if value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum} (got {value})")
    return value


def positive(name: str, value, *, allow_zero: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} number (got {value!r})") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ConfigError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} finite number (got {value!r})")
    return v


def positive_values(name: str, values) -> torch.Tensor:
    """A scalar or a 1-d sequence of positive numbers, returned as a float64 tensor."""
    t = torch.as_tensor(values, dtype=torch.float64)
    if t.ndim > 1 or t.numel() == 0:
        raise ConfigError(f"{name} must be a positive number or a 1-d sequence of them (got shape {tuple(t.shape)})")
    if not torch.isfinite(t).all() or (t <= 0).any():
        raise ConfigError(f"{name} must be positive and finite (got {t.tolist()})")
    return t


def one_of(name: str, value, options: Iterable[str]) -> str:
    options = tuple(options)
    if value not in options:
        raise ConfigError(f"{name} must be one of {options} (got {value!r})")
    return value


def probabilities(name: str, p, K: int | None = None, *, atol: float = 1e-6) -> torch.Tensor:
    """A probability vector: positive entries summing to one (length K when given)."""
    t = torch.as_tensor(p, dtype=torch.float64)
    if t.ndim != 1 or t.numel() == 0:
        raise ConfigError(f"{name} must be a 1-d sequence of probabilities (got shape {tuple(t.shape)})")
    if K is not None and t.numel() != K:
        raise ConfigError(f"{name} must have K={K} entries (got {t.numel()})")
    if not torch.isfinite(t).all() or (t < 0).any():
        raise ConfigError(f"{name} must have non-negative finite entries (got {t.tolist()})")
    if abs(float(t.sum()) - 1.0) > atol:
        raise ConfigError(f"{name} must sum to 1 (got sum {float(t.sum()):.6g})")
    return t


def probability(name: str, value, *, open_interval: bool = False) -> float:
    v = positive(name, value, allow_zero=not open_interval)
    if v > 1 or (open_interval and v >= 1):
        raise ConfigError(f"{name} must lie in {'(0, 1)' if open_interval else '[0, 1]'} (got {value!r})")
    return v


def generator(name: str, gen) -> torch.Generator:
    """A ``torch.Generator``, or the per-run streams of :class:`icl_lab.data._random.Streams`."""
    if not (isinstance(gen, torch.Generator) or isinstance(getattr(gen, "generators", None), list)):
        raise ConfigError(
            f"{name} must be a torch.Generator (got {type(gen).__name__}); use icl_lab.make_generator(seed)"
        )
    return gen


def shape(name: str, t: torch.Tensor, expected: Sequence[int | None]) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise ConfigError(f"{name} must be a torch.Tensor (got {type(t).__name__})")
    if t.ndim != len(expected) or any(e is not None and s != e for s, e in zip(t.shape, expected)):
        exp = tuple("*" if e is None else e for e in expected)
        raise ConfigError(f"{name} must have shape {exp} (got {tuple(t.shape)})")
    return t


def features_fit(K: int, d: int, what: str = "orthonormal features") -> None:
    """K orthonormal (or orthogonal) features exist in dimension d only if K <= d (a cross-field rule)."""
    if K > d:
        raise ConfigError(f"K must be <= d for {what} (got K={K}, d={d})")


def every_feature_queried(query_ids: torch.Tensor, K: int, name: str, value: int) -> None:
    """Refuse prompts where a feature is never queried: its per-feature loss would be NaN. ``query_ids``
    (..., B, m): the query features of the drawn prompts, one set per leading index (run)."""
    flat = query_ids.reshape(-1, query_ids.shape[-2] * query_ids.shape[-1]) if query_ids.ndim > 2 else query_ids.reshape(1, -1)
    for row in flat:
        missing = sorted(set(range(K)) - set(row.tolist()))
        if missing:
            shown = ", ".join(str(k + 1) for k in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise ConfigError(f"{name}={value} leaves feature(s) {shown} with no query: per-feature losses "
                              f"would be undefined; use more prompts")
