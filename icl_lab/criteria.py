"""How a claim is decided, as data: the tests written under a claim in ``claims.toml``, and the rules
that turn a chapter's measurements into a status (the page "How claims are judged").

A claim's criterion is a list of tests, each on one named quantity that the chapter measures::

    [[claim.test]]
    quantity = 'slope'            # the name the chapter hands over: ledger['T-C4'].measure(slope=...)
    is = 'between'                # below, above, between, equal, true, false, increasing, decreasing, nearer
    range = [-2.3, -1.7]
    source = 'ours: the statement gives -2 without a tolerance; +-0.3 is the fit error over 5 points'
    alternatives = [[-2.2, -1.8], [-2.5, -1.5]]   # other values of a threshold of ours
    stated = [-3, -1]             # the range the statement itself allows: a wider test is refused

The value a test compares with (``than``, ``to``, ``range``) is a number or the name of another
measured quantity. Every number carries a ``source``: ``paper`` (with the place) or ``ours`` (with the
reason). A measured quantity is a number, a boolean, a sequence (one value per seed, per size, ...)
or an :class:`Estimate` (a statistic with its interval).

The rules, applied here once for every claim:

* **Bounds as bounds, intervals with a margin** (rules 1 and 4). A test on an :class:`Estimate` holds
  when the whole interval satisfies it and fails when the whole interval violates it; an interval
  that straddles the threshold cannot decide, and the claim is inconclusive with that reason.
* **Seeds**: ``interval = 'median'`` (distribution-free 95%), ``'mean'`` (Student's t 95%) or ``'rate'``
  (the Wilson 95% interval of a success rate) turns the per-seed values the chapter hands over into
  that statistic with its interval, and the test is decided on the interval.
* **Sequences**: ``statistic`` says how the values of a sequence are combined (``all`` by default:
  every value must satisfy the test; ``any``, ``mean``, ``median``, ``min``, ``max``).
* **Thresholds of ours are not deciding** (rule 3, issue of robustness): a test whose ``source`` is
  ours may list ``alternatives``; when the outcome changes under one of them, the claim is
  inconclusive and says which value flips it.
* **Open choices run both ways** (rule 3): a claim may declare ``[claim.choice]`` with ``options``
  and the one ``closest`` to the paper's analysis; the chapter measures under every option, the
  status is the closest option's, and the caveat names any option under which it differs.
* **What a failure means**: ``fails = 'caveat'`` (the default is ``'not reproduced'``) turns a failing
  test into a caveat with its ``note``; ``fails = 'inconclusive'`` makes the claim inconclusive with
  its ``note`` (a test of whether the measurement can decide, e.g. that an optimum lies inside the grid:
  when it fails, no other test decides).
  Notes may name measured quantities: ``'the interval reaches {lo:.2f}'``.
* **Seeds enough to decide** (rule 4): an interval of a median or a mean over fewer than
  :data:`MIN_SEEDS` values cannot decide (a distribution-free 95% interval of a median needs 6 values:
  with 5, even the (min, max) interval covers the median only 93.75% of the time); the test is undecided
  and the claim inconclusive with that reason. A success rate's Wilson interval is exempt: its width
  already carries the count (3 successes of 3 give [0.44, 1]).
* **Hypotheses that can hold together**: :func:`contradictions` finds two declared conditions on the
  same quantity that point opposite ways (``a >= b`` and ``a <= b``; ``x > 0.5`` and ``x < 0.3``); a claim
  that declares such a pair is refused when its table is read.
* **Hypotheses**: a failure where a hypothesis of the statement was violated is inconclusive, unless
  the failing test says why no hypothesis can explain it (``regardless = '<why>'``: e.g. a bound that
  no predictor can reach, whatever the training); such a failure is a failure of the statement.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from . import metrics
from . import params as chk
from . import schemas
from .render import number, numbers

TESTS = ("below", "above", "between", "equal", "true", "false", "increasing", "decreasing", "nearer")
STATISTICS = ("all", "any", "mean", "median", "min", "max")
FAILS = ("not reproduced", "caveat", "inconclusive")
_TEST_FIELDS = {"quantity", "is", "than", "to", "range", "tol", "source", "alternatives", "stated", "statistic",
                "fails", "note", "strict", "interval", "regardless"}
INTERVALS = ("median", "mean", "rate")  # over seeds: median with its order-statistic interval, mean +- t SE, Wilson rate of successes
_CHOICE_FIELDS = {"what", "options", "closest", "source"}


#: the fewest values (seeds) an interval of a median or a mean over them needs to decide a test: the
#: smallest n with a distribution-free 95% interval of a median, 1 - 2 * 0.5**n >= 0.95 (n = 6: the
#: (min, max) interval covers 96.9%; n = 5: 93.75%). A mean +- t SE takes the same floor: its 95% rests on
#: the values being normal, which fewer values cannot check, and one stalled seed moves it most.
MIN_SEEDS = 6


@dataclass(frozen=True)
class Estimate:
    """A statistic over seeds (or draws) with its interval: ``value`` in ``[lo, hi]`` from ``n``
    values. Build one with :func:`median_of`, :func:`mean_of` or :func:`rate_of`."""

    value: float
    lo: float
    hi: float
    n: int = 0
    what: str = ""  # e.g. "median, bootstrap 95%"

    def __str__(self) -> str:
        n = f", {self.n} seeds" if self.n else ""
        value, lo, hi = numbers([self.value, self.lo, self.hi])
        return f"{value} [{lo}, {hi}]" + (f" ({self.what}{n})" if self.what else n)


def median_of(values) -> Estimate:
    """The median of ``values`` with its distribution-free 95% interval: the order statistics
    ``[x_(k), x_(n+1-k)]`` with the largest k such that ``2 P(Bin(n, 1/2) < k) <= 0.05``, which cover the
    median with at least 95% whatever the distribution of the values (a percentile bootstrap covers about
    87-93% from 5 to 12 values). None exists below :data:`MIN_SEEDS` values: the interval is then the
    range of the values, said so, and decides nothing."""
    v = sorted(float(x) for x in _seq(values))
    n = len(v)
    if not n:
        raise chk.ConfigError("median_of: values must not be empty")
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    k = order_statistic_rank(n)
    if k == 0:
        return Estimate(med, v[0], v[-1], n, f"median, range of the seeds: no 95% interval below {MIN_SEEDS}")
    return Estimate(med, v[k - 1], v[n - k], n, "median, order-statistic 95%")


def order_statistic_rank(n: int, level: float = 0.95) -> int:
    """The largest k with ``2 P(Bin(n, 1/2) < k) <= 1 - level`` (0 when even the range of ``n`` values
    covers the median less often than ``level``): ``[x_(k), x_(n+1-k)]`` is then a distribution-free
    interval of the median at that level."""
    k, tail = 0, 0.0
    while k < n // 2 + 1:
        tail += math.comb(n, k) / 2**n  # P(Bin(n, 1/2) <= k) after adding term k
        if 2 * tail > 1 - level:
            break
        k += 1
    return k


#: Student's t, two-sided 95%, by degrees of freedom (1 to 30; beyond, the normal 1.96)
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def mean_of(values, z: float | None = None) -> Estimate:
    """The mean of ``values`` with its 95% interval: +- t(n-1) standard errors (Student's t: with two or
    three seeds, +- 2 SE would claim far more than the seeds show), or +- ``z`` SE where given."""
    values = list(values)
    m, se = metrics.mean_se(values)
    df, what = len(values) - 1, "mean, t 95%" if z is None else f"mean +- {z:g} SE"
    if z is None:  # one value: no interval (SE is NaN)
        z = _T95[df - 1] if 1 <= df <= 30 else 1.96
    return Estimate(m, m - z * se, m + z * se, len(values), what)


def rate_of(successes: int, n: int) -> Estimate:
    """A success rate with its 95% Wilson interval."""
    p, lo, hi = metrics.wilson_interval(int(successes), int(n))
    return Estimate(p, lo, hi, int(n), "rate, Wilson 95%")


def too_few(v) -> int:
    """The number of values behind ``v`` (an :class:`Estimate`, or a sequence of them: the smallest) when it
    is an interval of a median or a mean over fewer than :data:`MIN_SEEDS` values; 0 otherwise (a rate's
    Wilson interval, a plain number, an interval of unknown count)."""
    ests = [v] if isinstance(v, Estimate) else [x for x in v if isinstance(x, Estimate)] \
        if isinstance(v, (list, tuple)) else []
    ns = [e.n for e in ests if 0 < e.n < MIN_SEEDS and not e.what.startswith("rate")]
    return min(ns) if ns else 0


def _num(v) -> str:
    """A number of a test or a verdict as a reader reads it (:func:`icl_lab.render.number`)."""
    return number(v) if isinstance(v, (bool, int, float)) else str(v)


# -- declaring: the [[claim.test]] rows are checked once, when claims.toml is read ---------------------


def parse_tests(rows, where: str) -> tuple:
    """``claims.toml``'s ``[[claim.test]]`` rows, checked: their structure against the claims schema's test
    table (``icl_lab/schemas/claims.schema.json``: fields, types, allowed words, what each test needs), then
    what only code can check: a source for every number, alternatives only for a threshold of ours, and no
    tolerance wider than what the statement states."""
    if not isinstance(rows, list):
        raise chk.ConfigError(f"{where}: test must be a list of tables ([[claim.test]])")
    for i, r in enumerate(rows):
        name = f"{where}, test {i + 1}"
        found = schemas.problem("claims", r, part="test")
        if found is not None:
            path, rule = found
            raise chk.ConfigError(f"{name}" + (f" {schemas.field(path)}" if path else "") + f": {rule}")
        numbers = any(isinstance(r.get(f), (int, float, list)) for f in ("than", "to", "range", "tol"))
        src = r.get("source", "")
        if numbers and not (isinstance(src, str) and src.split(":")[0].strip() in ("paper", "ours")):
            raise chk.ConfigError(f"{name}: a number needs its source, 'paper: <where>' or 'ours: <why>'")
        if r.get("alternatives") and not src.startswith("ours"):
            raise chk.ConfigError(f"{name}: alternatives are other values of a threshold of ours (source 'ours: ...')")
        if "stated" in r:
            _within_statement(r, name)
    return tuple(rows)


def _accepted(r: dict, value=None):
    """The interval of values a test on a number accepts (None: not an interval test)."""
    v = r.get(value, None) if value else None
    if r["is"] == "between":
        lo, hi = (v if v is not None else r["range"])
        return float(lo), float(hi)
    if r["is"] == "below":
        return -math.inf, float(v if v is not None else r["than"])
    if r["is"] == "above":
        return float(v if v is not None else r["than"]), math.inf
    if r["is"] == "equal":
        return float(r["to"]) - float(r["tol"]), float(r["to"]) + float(r["tol"])
    return None


def _within_statement(r: dict, name: str) -> None:
    stated = r["stated"]
    if not (isinstance(stated, list) and len(stated) == 2):
        raise chk.ConfigError(f"{name}: stated must be [low, high], the range the statement allows")
    if any(isinstance(r.get(f), str) for f in ("than", "to")):
        return  # compared with another measured quantity: nothing to check before measuring
    acc = _accepted(r)
    lo, hi = (-math.inf if stated[0] is None else stated[0]), (math.inf if stated[1] is None else stated[1])
    for a in [acc] + [_accepted({**r, "range": alt, "than": alt}) for alt in r.get("alternatives", ())]:
        if a is None or a[0] < lo or a[1] > hi:
            raise chk.ConfigError(f"{name}: the test accepts {list(a) if a else r['is']}, wider than the "
                                  f"range the statement allows, {stated}")


def parse_choice(row, where: str) -> dict:
    """``[claim.choice]``: an open choice the verdict may depend on, with its options and the one
    closest to the paper's analysis (its structure: the claims schema's choice table; that ``closest`` is
    one of the options is checked here)."""
    found = schemas.problem("claims", row, part="choice")
    if found is not None:
        path, rule = found
        raise chk.ConfigError(f"{where}, choice" + (f" {schemas.field(path)}" if path else "") + f": {rule}")
    chk.one_of(f"{where}, choice: closest", row.get("closest"), row["options"])
    return dict(row)


# -- hypotheses that can hold together --------------------------------------------------------------

_OP = r"(<=|>=|≤|≥|<|>)"
_NORM = {"≤": "<=", "≥": ">="}
_MIRROR = {"<=": ">=", ">=": "<=", "<": ">", ">": "<"}
_INTERVAL = re.compile(r"([^\s,;:()]+)\s+in\s+([(\[])\s*([^,()\[\]]+?)\s*,\s*([^,()\[\]]+?)\s*([)\]])")
_COMMENT = re.compile(r"\s+\((?:[^()]|\([^()]*\))*\)$")  # a remark in brackets after a side: 'L* (flat regime)'
_SPLIT = re.compile(r"[,;]|\b(?:and|with|for|if|where|so that|while)\b")


def comparisons(condition: str) -> list[tuple[str, str, str]]:
    """The comparisons ``(a, op, b)`` that a condition in words states (``op`` one of ``<=``, ``>=``, ``<``,
    ``>``; sides with their spacing normalised). A label before a colon is dropped (``'batch (39): B >= M1
    log M1'`` gives ``('B', '>=', 'M1 log M1')``); ``x in (a, b)`` gives ``x > a`` and ``x < b`` (``>=``, ``<=``
    with square brackets); a chain ``a < x < b`` gives both comparisons; a remark in brackets closing a side
    is dropped (``'L <= L* (flat regime)'`` compares L with L*); text without a comparison gives none."""
    body = condition.split(":", 1)[1] if ":" in condition else condition
    out = []
    for m in _INTERVAL.finditer(body):
        x, lb, a, b, rb = m.groups()
        out += [(x, ">=" if lb == "[" else ">", a), (x, "<=" if rb == "]" else "<", b)]
    body = _INTERVAL.sub(" ", body)
    for piece in _SPLIT.split(body):
        parts = re.split(_OP, piece)
        for i in range(1, len(parts) - 1, 2):
            a, b = (_COMMENT.sub("", " ".join(x.split())) for x in (parts[i - 1], parts[i + 1]))
            if a and b and "=" not in a and "=" not in b:
                out.append((a, _NORM.get(parts[i], parts[i]), b))
    return out


def _number(s: str):
    try:
        return float(s)
    except ValueError:
        return None


def contradictions(hypotheses) -> list[tuple[str, str, str]]:
    """Pairs of declared conditions that cannot hold together, each as ``(condition, other, why)``: two
    comparisons of the same two quantities pointing opposite ways (``a >= b`` and ``a <= b``, or
    ``b >= a``: together they hold at most where ``a = b``, so every measurement would fall outside them
    but one that hits the equality), or a lower and an upper numeric bound on one quantity that leave no
    room (``x > 0.5`` and ``x < 0.3``; ``x >= 1`` and ``x <= 1``)."""
    found, seen = [], []
    for h in hypotheses:
        for a, op, b in comparisons(str(h)):
            if a > b:  # one orientation per pair of sides: b >= a is a <= b
                a, op, b = b, _MIRROR[op], a
            seen.append((h, a, op, b))
    for i, (h1, a1, op1, b1) in enumerate(seen):
        for h2, a2, op2, b2 in seen[i + 1:]:
            if (a1, b1) == (a2, b2) and op1[0] != op2[0]:
                found.append((h1, h2, f"{a1} {op1} {b1} and {a2} {op2} {b2} point opposite ways (together they "
                                      f"hold only where {a1} = {b1})"))
                continue
            bounds = _bound(a1, op1, b1), _bound(a2, op2, b2)
            if all(bounds) and bounds[0][0] == bounds[1][0] and bounds[0][1] != bounds[1][1]:
                low, high = sorted(bounds, key=lambda t: t[1] != "lower")
                if low[2] >= high[2]:
                    room = f" but {low[0]} = {low[2]:g}" if low[2] == high[2] and not (low[3] or high[3]) else ""
                    found.append((h1, h2, f"{low[0]} {'>' if low[3] else '>='} {low[2]:g} and {high[0]} "
                                          f"{'<' if high[3] else '<='} {high[2]:g} leave no room{room}"))
    return found


def _bound(a: str, op: str, b: str):
    """``(quantity, 'lower' | 'upper', value, strict)`` for a comparison of a quantity with a number."""
    na, nb = _number(a), _number(b)
    if (na is None) == (nb is None):
        return None
    x, v, op = (b, na, _MIRROR[op]) if nb is None else (a, nb, op)
    return x, "lower" if op[0] == ">" else "upper", v, len(op) == 1


# -- deciding ---------------------------------------------------------------------------------------

HOLDS, FAILS_, STRADDLES = "holds", "fails", "straddles"


def _value(ref, q: dict, where: str):
    if isinstance(ref, str):
        if ref not in q:
            raise chk.ConfigError(f"{where}: the test compares with {ref!r}, which was not measured")
        v = q[ref]
        return v.value if isinstance(v, Estimate) else _scalar(v, where)
    return ref


def _scalar(v, where: str):
    if hasattr(v, "item") and getattr(v, "ndim", 1) == 0:
        return v.item()
    if isinstance(v, (bool, int, float)):
        return v
    raise chk.ConfigError(f"{where}: expected a number, got {type(v).__name__}")


def _seq(v) -> list:
    if hasattr(v, "tolist"):
        v = v.tolist()
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _combine(values: list, statistic: str):
    import statistics

    return {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}[statistic](values)


def _interval_outcome(lo: float, hi: float, acc: tuple, strict: bool = True) -> str:
    """Where an interval [lo, hi] lies against the accepted interval ``acc``."""
    a, b = acc
    inside = (lo > a and hi < b) if strict else (lo >= a and hi <= b)
    outside = hi < a or lo > b if strict else hi <= a or lo >= b
    if inside:
        return HOLDS
    if outside or math.isnan(lo) or math.isnan(hi):
        return FAILS_
    return STRADDLES


def measured(test: dict, v):
    """The value a test judges: per-seed values become the declared statistic with its interval."""
    if "interval" not in test or isinstance(v, Estimate):
        return v
    vals = _seq(v)
    return (rate_of(sum(bool(x) for x in vals), len(vals)) if test["interval"] == "rate" else
            median_of(vals) if test["interval"] == "median" else mean_of(vals))


def evaluate(test: dict, q: dict, where: str, threshold=None) -> str:
    """One test on the measured quantities ``q``: holds, fails or straddles (an interval that lies on
    both sides). ``threshold`` replaces the test's own value (an alternative of ours)."""
    name, kind = test["quantity"], test["is"]
    if name not in q:
        raise chk.ConfigError(f"{where}: quantity {name!r} was not measured (measured: {', '.join(q) or 'none'})")
    v, stat, strict = measured(test, q[name]), test.get("statistic", "all"), test.get("strict", True)
    if too_few(v):  # an interval over too few seeds decides nothing (rule 4)
        return STRADDLES
    if kind in ("true", "false"):
        vals = [bool(x) == (kind == "true") for x in _seq(v)]
        return HOLDS if (any(vals) if stat == "any" else all(vals)) else FAILS_
    if kind in ("increasing", "decreasing"):
        s = [float(x) for x in _seq(v)]
        d = [b - a for a, b in zip(s, s[1:])]
        ok = all((x > 0 if strict else x >= 0) if kind == "increasing" else (x < 0 if strict else x <= 0) for x in d)
        return HOLDS if ok and len(s) >= 2 else FAILS_
    if kind == "nearer":
        x = v.value if isinstance(v, Estimate) else _scalar(v, where)
        to, than = float(_value(test["to"], q, where)), float(_value(test["than"], q, where))
        return HOLDS if abs(x - to) < abs(x - than) else FAILS_
    if threshold is not None:
        test = {**test, "range": threshold, "than": threshold, "tol": threshold if kind == "equal" else test.get("tol")}
    acc = _accepted({**test, **{k: _value(test[k], q, where) for k in ("than", "to") if k in test}})
    if isinstance(v, Estimate):
        return _interval_outcome(v.lo, v.hi, acc, strict)
    if _seq(v) and all(isinstance(x, Estimate) for x in _seq(v)):  # one interval per setting
        outs = [_interval_outcome(x.lo, x.hi, acc, strict) for x in _seq(v)]
        first, second = (HOLDS, FAILS_) if stat == "any" else (FAILS_, HOLDS)
        return first if first in outs else second if all(o == second for o in outs) else STRADDLES
    vals = [float(x) for x in _seq(v)]
    if stat in ("all", "any"):
        res = [_interval_outcome(x, x, acc, strict) == HOLDS for x in vals]
        return HOLDS if (any(res) if stat == "any" else all(res)) and vals else FAILS_
    x = _combine(vals, stat)
    return _interval_outcome(x, x, acc, strict)


def describe(test: dict, threshold=None, source: bool = True) -> str:
    """A test in words: ``slope between -2.3 and -1.7 (ours: ...)`` (without its source: ``source=False``)."""
    t = {**test, "range": threshold, "than": threshold} if threshold is not None else test
    stat = t.get("statistic", "all")
    q = t["quantity"] if stat == "all" else f"{stat} of {t['quantity']}"
    what = {"below": lambda: f"below {_num(t['than'])}", "above": lambda: f"above {_num(t['than'])}",
            "between": lambda: f"between {_num(t['range'][0])} and {_num(t['range'][1])}",
            "equal": lambda: f"equal to {_num(t['to'])} within {_num(t['tol'])}", "true": lambda: "holds",
            "false": lambda: "does not hold", "increasing": lambda: "increasing", "decreasing": lambda: "decreasing",
            "nearer": lambda: f"nearer {_num(t['to'])} than {_num(t['than'])}"}[t["is"]]()
    if stat == "any" and t["is"] not in ("true", "false"):
        q = f"some value of {t['quantity']}"
    src = f" ({t['source']})" if t.get("source") and source else ""
    return f"{q} {what}{src}"


def _scaled(t: dict) -> list:
    """A test of ours with its threshold at half and at twice its size (its tolerance, for a range or
    an equality), or [] where that means nothing (a comparison with another measured quantity). A rate
    lives in [0, 1]: its threshold moves by half its distance to the nearer end, either way."""
    if t["is"] in ("below", "above") and t.get("interval") == "rate" and isinstance(t["than"], (int, float)):
        d = min(t["than"], 1 - t["than"]) / 2
        return [{**t, "than": t["than"] + e} for e in (-d, d)] if d > 0 else []
    if t["is"] in ("below", "above") and isinstance(t["than"], (int, float)) and t["than"] != 0:
        return [{**t, "than": t["than"] * f} for f in (0.5, 2.0)]
    if t["is"] == "between":
        (a, b), c = t["range"], (t["range"][0] + t["range"][1]) / 2
        return [{**t, "range": [c - (c - a) * f, c + (b - c) * f]} for f in (0.5, 2.0)]
    if t["is"] == "equal" and isinstance(t["to"], (int, float)):
        return [{**t, "tol": t["tol"] * f} for f in (0.5, 2.0)]
    return []


def _threshold(t: dict) -> str:
    """The threshold of a test in words: ``0.9``, ``[0.85, 0.95]``, ``±0.1``."""
    return (_num(t["than"]) if t["is"] in ("below", "above") else "±" + _num(t["tol"]) if t["is"] == "equal" else
            "[" + ", ".join(map(_num, t["range"])) + "]" if t["is"] == "between" else "")


def _alternatives_text(t: dict, alts, flips) -> str:
    """What a verdict is robust to (or depends on) among a threshold's declared alternatives, in a sentence."""
    if flips:
        return (f"its threshold of ours, {_threshold(t)}: the verdict would change with "
                + " or with ".join(describe(t, a, source=False) for a in flips))
    return (f"its threshold of ours, {_threshold(t)}: the verdict is the same with "
            + " or with ".join(describe(t, a, source=False) for a in alts))


def _scaled_text(t: dict, tried: list, moved: list, value=None) -> str:
    """The same for a threshold of ours tried at half and twice its size (its tolerance, for a range or an
    equality; half its distance to the nearer end, for a rate), in a sentence. A threshold moved past 1 for a
    quantity whose every value lies in [0, 1] (a share, an attention mass) is said to be out of its reach."""
    what = "tolerance" if t["is"] in ("between", "equal") else "threshold"
    how = ("moved down", "moved up") if t.get("interval") == "rate" else ("halved", "doubled")
    vals = [x for v in _seq(value) for x in ((v.lo, v.hi) if isinstance(v, Estimate) else (v,))] if value is not None else []
    share = bool(vals) and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in vals)
    same = [f"{h} ({_threshold(u)})" for h, u, m in zip(how, tried, moved) if not m]
    other = [f"{h} ({_threshold(u)})" + (", out of reach of a quantity whose values all lie in [0, 1]" if share and
                                          u["is"] == "above" and isinstance(u.get("than"), (int, float)) and u["than"] > 1
                                          else "") for h, u, m in zip(how, tried, moved) if m]
    if not other:
        return f"its {what} of ours, {_threshold(t)}: the verdict is the same with it " + " or ".join(same)
    return (f"its {what} of ours, {_threshold(t)}: " + (f"the verdict is the same with it {same[0]}, but " if same else "")
            + f"it changes with it {' or '.join(other)}")


def _fmt_note(note: str, q: dict) -> str:
    try:
        return note.format(**{k: (v.value if isinstance(v, Estimate) else v) for k, v in q.items()})
    except (KeyError, IndexError, ValueError, TypeError):  # a sequence given a number's format: the note as written
        return note


@dataclass
class Verdict:
    passed: bool
    inconclusive: str = ""  # a reason, when the measurement cannot decide
    caveats: tuple = ()
    robust: tuple = ()  # what the verdict was checked against and does not depend on
    depends: tuple = ()  # what it depends on
    regardless: str = ""  # a failure no violated hypothesis explains: why


def _outcome(out: str) -> str:
    """An outcome of :func:`evaluate` as a reader reads it after a test's description."""
    return "cannot be decided (its interval straddles the threshold)" if out == STRADDLES else out


def decide(tests: tuple, q: dict, where: str) -> Verdict:
    """Apply a claim's tests to its measured quantities ``q`` (see the module's rules)."""
    passed, reasons, invalid, caveats, robust, depends, firm = True, [], [], [], [], [], []
    for t in tests:
        out = evaluate(t, q, where)
        few = too_few(measured(t, q[t["quantity"]]))
        if few:
            reasons.append(f"{few} seeds cannot decide '{describe(t)}': an interval of a median or a mean needs at "
                           f"least {MIN_SEEDS} (with fewer, not even the range of the seeds is a 95% interval of "
                           "their median)")
            continue
        alts = t.get("alternatives", ())
        deciding = t.get("fails", "not reproduced") == "not reproduced"  # not a validity check or a side remark
        under = [evaluate(t, q, where, threshold=a) for a in alts]  # each alternative's own outcome
        flipped = [(a, o) for a, o in zip(alts, under) if o != out]
        flips = [a for a, _ in flipped]
        if alts and deciding:
            (depends if flips else robust).append(_alternatives_text(t, alts, flips))
        elif deciding and str(t.get("source", "")).startswith("ours") and _scaled(t):
            # no alternatives declared: say whether half and twice the threshold would decide alike
            tried = _scaled(t)
            moved = [evaluate(u, q, where) != out for u in tried]
            (depends if any(moved) else robust).append(_scaled_text(t, tried, moved, measured(t, q[t["quantity"]])))
        if flips:
            reasons.append(f"the verdict rests on a threshold of ours: {describe(t, source=False)} {_outcome(out)}, but "
                           + " and ".join(f"{describe(t, a, source=False)} {_outcome(o)}" for a, o in flipped))
            continue
        if out == STRADDLES:
            v = measured(t, q[t["quantity"]])
            span = ", ".join(f"[{_num(x.lo)}, {_num(x.hi)}]" for x in (v if isinstance(v, (list, tuple)) else [v]))
            reasons.append(f"the interval of {t['quantity']}, {span}, straddles the threshold of '{describe(t)}'")
        elif out == FAILS_:
            mode = t.get("fails", "not reproduced")
            if mode == "caveat":
                caveats.append(_fmt_note(t["note"], q))
            elif mode == "inconclusive":
                invalid.append(_fmt_note(t["note"], q))
            else:
                passed = False
                if t.get("regardless"):
                    firm.append(t["regardless"])
    # a measurement that is not a valid test decides nothing; otherwise a clear failure of the statement
    # decides, and failing that a test that cannot decide (an interval astride, a threshold of ours) does
    why = invalid or ([] if not passed else reasons)
    return Verdict(passed, "; ".join(why), tuple(caveats), tuple(robust), tuple(depends), "; ".join(firm))


def status_of(v: Verdict) -> str:
    return "inconclusive" if v.inconclusive else "reproduced" if v.passed else "not reproduced"
