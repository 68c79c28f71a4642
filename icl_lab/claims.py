"""The claims ledger: every checkable statement of a paper, how it was measured, and its status.

Claims are *declared* in the library, one table per paper (``icl_lab/papers/<key>/claims.toml``)::

    [[claim]]
    id = 'C1'
    location = 'Thm 3.1'
    statement = 'Balanced features converge in two phases'
    hypotheses = ['K >= 3']

    [[claim]]
    id = 'C9'
    location = 'Lemma C.3'
    statement = '...'
    not_checkable = 'hidden constants only'

with the tests that decide it (``[[claim.test]]``, written once as data: see :mod:`icl_lab.criteria`),
and *measured* in the chapters, which hand over named quantities and never a verdict::

    ledger = Ledger("convergence")          # every declared claim, pending
    ledger["C1"].measure({"T2 / T1": t2 / t1}, how="phase times from 5 seeds")
    ledger.judge(checks.phases(res))        # the same through the paper's checks (papers/<key>/checks.py):
                                            # Measurement objects, their names checked against the tests
    ledger.show()      # a table in the notebook
    ledger.export()    # JSON for the synthesis chapter and CI

Kinds: ``paper`` (a statement of the paper: theorem, lemma, figure observation, stated number),
``consistency`` (holds by construction, or checks the library's own code) and ``finding`` (the
book's own result or conjecture). Headline counts count ``paper`` claims.

Statuses: ``reproduced``, ``reproduced with caveat``, ``not reproduced``, ``inconclusive`` (the
measurement cannot decide: a hypothesis of the statement is violated where it was measured, or the
measurement is not a valid test; always with the reason) and ``not checkable``. A claim's status
comes from a measurement and the declared tests (:meth:`Claim.measure`), never from a literal; a ledger with an unmeasured
claim refuses to export. How a status is decided is written once, on the book's page "How claims
are judged".
"""
from __future__ import annotations

import json
import os
import re
import string
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import criteria
from . import params as chk
from . import paths, schemas
from .claims_html import FilterableLedger, claim_card, condition_md, hypothesis_name, ledger_html
from .config import SCALES, get_scale
from .papers import PAPERS
from .render import md_table, plain, plain_value, prose_in_math

STATUSES = ("reproduced", "reproduced with caveat", "not reproduced", "inconclusive", "not checkable")
KINDS = ("paper", "consistency", "finding")


@dataclass(frozen=True)
class Declared:
    """A claim as the library declares it: what it says, where, what kind of claim it is, and the
    conditions under which the statement is made."""

    id: str
    location: str
    statement: str  # MyST markdown: inline math as $...$
    kind: str = "paper"
    hypotheses: tuple = ()  # the statement's conditions, in words
    not_checkable: str = ""  # why it cannot be checked ("" = it is checked)
    part: str = ""  # for a chapter over several notebooks: the notebook that checks it
    tests: tuple = ()  # how it is decided: the [[claim.test]] rows (icl_lab.criteria)
    choice: dict | None = None  # an open choice the verdict may depend on: [claim.choice]
    caveat: str = ""  # what a pass always carries (may name measured quantities: {name:.2f})
    how: str = ""  # how it is measured, when the chapter does not say more
    unconditional: str = ""  # why a claim that cites a result has no hypotheses to record


def quantities_read(d: Declared) -> frozenset[str]:
    """The names of the measured quantities that claim ``d``'s tests read: each test's ``quantity``, a
    threshold that names another quantity (``than``, ``to``, ``range``), and the fields of a test's
    ``note`` and of the claim's ``caveat`` (``{name:.2f}``)."""
    names = set()
    for t in d.tests:
        names.add(t["quantity"])
        refs = [t.get("than"), t.get("to"), *(t.get("range") or ())]
        names |= {r for r in refs if isinstance(r, str)}
        names |= _fields(t.get("note", ""))
    return frozenset(names | _fields(d.caveat))


def _fields(text: str) -> set[str]:
    """The named fields of a format string (``'{rate I:.2f}'`` -> ``{'rate I'}``); none where it is not one."""
    try:
        parsed = list(string.Formatter().parse(text or ""))
    except ValueError:
        return set()
    return {f for _, f, _, _ in parsed if f and not f.isdigit()}


@dataclass(frozen=True)
class Measurement:
    """What a paper's checks (``papers/<key>/checks.py``) measured for one claim, ready for
    :meth:`Ledger.judge`: the quantities under the names the claim's tests read, how they were measured
    (empty: the claim's declared ``how``), whether each declared hypothesis held there, for a claim
    with an open choice the quantities under each option (``under``), and how the card states it:
    ``shown``, what the card's measured line lists first, in its order, where that is more than the tested
    quantities (context a reader wants beside them, e.g. the values a ratio was taken from; a tested name in
    it takes its value from ``quantities``, and the tested quantities it does not name follow), or
    ``measured``, the card's whole measured text (None: the quantities); ``shown_under`` does for each option
    of a choice what ``shown`` does for the quantities (option -> context listed first under that option). Where the measurement cannot test
    the statement, ``why`` says so, and the claim is recorded as undecided whatever the quantities. ``note``, a
    sentence that leads the card's reason where the tests leave the claim undecided (what the measurement shows
    beside the tests' own reason, e.g. that one seed sets the interval's end), is ignored where they decide it."""

    claim: str
    quantities: dict
    how: str = ""
    hypotheses: dict | None = None
    under: dict | None = None
    shown: dict | None = None
    measured: str | None = None
    why: str = ""
    shown_under: dict | None = None
    note: str = ""

    @property
    def names(self) -> frozenset[str]:
        """The names of the quantities handed over (under every option of a choice)."""
        return frozenset(self.quantities).union(*(self.under or {}).values())


#: a location that cites a result of the paper (its conditions must be declared: ``hypotheses``)
CITES_RESULT = re.compile(r"\b(Thm|Theorem|Lemma|Prop|Proposition|Cor|Corollary)s?\.?\s*[0-9A-Z]")


def declare(id: str, location: str, statement: str, *, kind: str = "paper", hypotheses=(),
            not_checkable: str = "", part: str = "", tests=(), choice=None, caveat: str = "",
            how: str = "", unconditional: str = "") -> Declared:
    """Declare a claim (one ``[[claim]]`` row of ``icl_lab/papers/<key>/claims.toml``). A checkable
    claim whose location cites a theorem, lemma, proposition or corollary lists that result's
    conditions (``hypotheses``), or says why it has none to record (``unconditional``)."""
    if not id or not statement or not location:
        raise chk.ConfigError("id, location and statement must be non-empty")
    chk.one_of("kind", kind, KINDS)
    if hypotheses and unconditional:
        raise chk.ConfigError(f"claim {id}: hypotheses and unconditional exclude each other")
    if not (hypotheses or unconditional or not_checkable) and CITES_RESULT.search(location):
        raise chk.ConfigError(f"claim {id}: its location ({location}) cites a result but hypotheses is empty: list "
                              "the result's conditions, or say why there are none with unconditional = '...'")
    clash = criteria.contradictions(hypotheses)
    if clash:
        h1, h2, why = clash[0]
        raise chk.ConfigError(f"claim {id}: its hypotheses cannot hold together: {h1!r} and {h2!r}: {why}; every "
                              "measurement would fall outside them (keep the theorem's condition, not a step that "
                              "contradicts it)")
    return Declared(id, location, statement, kind, tuple(hypotheses), not_checkable, part, tuple(tests), choice,
                    caveat, how, unconditional)


def declared(paper: str) -> dict[str, Declared]:
    """The claims declared for ``paper`` in ``icl_lab/papers/<paper>/claims.toml`` (in order)."""
    from importlib import resources

    chk.one_of("paper", paper, PAPERS)
    src = resources.files(f"icl_lab.papers.{paper}").joinpath("claims.toml")
    if not src.is_file():
        return {}
    return parse_declarations(src.read_text(encoding="utf-8"), paper)


def parse_declarations(text: str, paper: str) -> dict[str, Declared]:
    """Read a paper's claims table. Each ``[[claim]]`` gives ``id``, ``location``, ``statement`` and
    optionally ``kind``, ``hypotheses``, ``not_checkable`` and ``part``. ``hypotheses`` is a list of
    conditions in words, or the name of a tuple in the paper's ``conditions`` module, else its ``theory``
    module (``"THM1"``), so that
    a theorem's conditions are written once, beside the code that checks them.

    The table's structure is declared in ``icl_lab/schemas/claims.schema.json`` (fields, types, allowed
    words, what each test needs); a file that breaks it is refused in one line naming the file, the claim,
    the field and the rule (``...claims.toml: claim 'S3' test[0].than: is required by a test 'below' or
    'above'``; items counted from 0). What the schema cannot say is checked here and in
    :func:`icl_lab.criteria.parse_tests`: names resolved in the paper's modules, every number's source, a
    tolerance no wider than the statement's, ids declared once."""
    import importlib
    import tomllib

    where = f"icl_lab/papers/{paper}/claims.toml"
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise chk.ConfigError(f"{where}: {e}") from None
    found = schemas.problem("claims", table)
    if found:
        raise chk.ConfigError(f"{where}: {_field(table, *found)}")
    out: dict[str, Declared] = {}
    for row in table.get("claim", ()):
        name = f"{where}, claim {row['id']!r}"
        hyp = row.get("hypotheses", [])
        if isinstance(hyp, str):  # a paper's conditions module, where it has one, else its theory module
            try:
                theory = importlib.import_module(f"icl_lab.papers.{paper}.conditions")
            except ModuleNotFoundError:
                theory = importlib.import_module(f"icl_lab.papers.{paper}.theory")
            if not isinstance(getattr(theory, hyp, None), tuple):
                raise chk.ConfigError(f"{name}: hypotheses {hyp!r} names no tuple in {theory.__name__}")
            hyp = getattr(theory, hyp)
        d = declare(row.get("id", ""), row.get("location", ""), row.get("statement", ""),
                    kind=row.get("kind", "paper"), hypotheses=hyp,
                    not_checkable=row.get("not_checkable", ""), part=row.get("part", ""),
                    tests=criteria.parse_tests(row.get("test", []), name),
                    choice=criteria.parse_choice(row["choice"], name) if "choice" in row else None,
                    caveat=row.get("caveat", ""), how=row.get("how", ""),
                    unconditional=row.get("unconditional", ""))
        _no_prose_in_math(d, name)
        if d.id in out:
            raise chk.ConfigError(f"{where}: claim id {d.id!r} is declared twice")
        out[d.id] = d
    return out


def _no_prose_in_math(d: Declared, name: str) -> None:
    """Refuse words inside math (``$N >= 20 K^3 as in Lemma C.5$`` reads "asinLemmaC.5"): in the statement,
    location and caveat as written, and in each hypothesis as the cards render it."""

    texts = [("statement", d.statement), ("location", d.location), ("caveat", d.caveat)]
    texts += [(f"hypothesis {h!r}", condition_md(h.partition(": ")[2] if hypothesis_name(h) != h else h))
              for h in d.hypotheses]
    for what, text in texts:
        words = prose_in_math(text)
        if words:
            raise chk.ConfigError(f"{name}: {what} has words inside math ({', '.join(words[:3])}): write them "
                                  r"outside $...$ or as \text{...}")


def _field(table: dict, path: list, rule: str) -> str:
    """A schema error of a claims table in words: ``claim 'S3' test[0].than: must be ...``."""
    if len(path) < 2 or path[0] != "claim":
        return f"{schemas.field(path)}: {rule}" if path else rule
    row = table["claim"][path[1]]
    ident = row.get("id") if isinstance(row, dict) else None
    claim = f"claim {ident!r}" if isinstance(ident, str) and ident else f"claim #{path[1] + 1}"
    return f"{claim} {schemas.field(path[2:])}: {rule}" if len(path) > 2 else f"{claim}: {rule}"


@dataclass
class Claim:
    id: str
    paper: str
    location: str
    statement: str
    how: str = ""
    measured: str = ""
    status: str = "pending"
    caveat: str = ""
    kind: str = "paper"
    hypotheses: dict = field(default_factory=dict)  # condition -> held where measured (True/False)
    elsewhere: dict = field(default_factory=dict)  # scale -> status in the ledger shipped for it, where different
    criterion: list = field(default_factory=list)  # the declared tests, in words
    robust: list = field(default_factory=list)  # what the verdict was checked against and does not depend on
    depends: list = field(default_factory=list)  # what it depends on (thresholds of ours, a choice)
    key: str = ""  # the card's measured sentence: the deciding quantity with its value (and interval)
    held: list = field(default_factory=list)  # the deciding tests that hold, in words
    failed: list = field(default_factory=list)  # those that fail

    def measure(self, values: dict | None = None, /, *, how: str = "", measured=None, hypotheses: dict | None = None,
                under: dict | None = None, **quantities) -> "Claim":
        """Hand over what the chapter measured, by name; the claim's declared tests
        (``[[claim.test]]`` in ``claims.toml``) decide its status by the written rules
        (:mod:`icl_lab.criteria`). Quantities come as keywords or as a dict (names with spaces). For a
        claim with an open choice (``[claim.choice]``), ``under`` maps
        each option to its quantities. ``measured`` is the text shown (default: the quantities)."""
        quantities = {**(values or {}), **quantities}
        d = declared(self.paper).get(self.id)
        if d is None or not d.tests:
            raise chk.ConfigError(f"claim {self.id} declares no test in icl_lab/papers/{self.paper}/claims.toml")
        where = f"claim {self.id}"
        missing = [h for h in d.hypotheses if h not in (hypotheses or {})]
        if missing:
            raise chk.ConfigError(f"{where}: hypotheses must say whether each declared condition held where it was "
                                  f"measured; missing: {missing}")
        if d.choice:
            opts = d.choice["options"]
            if not isinstance(under, dict) or set(under) != set(opts):
                raise chk.ConfigError(f"{where}: under must give the quantities for each of {opts}")
            verdicts = {o: criteria.decide(d.tests, {**quantities, **under[o]}, where) for o in opts}
            best = d.choice["closest"]
            v = verdicts[best]
            q = {**quantities, **under[best]}
            other = {o: criteria.status_of(x) for o, x in verdicts.items() if o != best}
            differ = {o: s for o, s in other.items() if s != criteria.status_of(v)}
            ours = str(d.choice.get("source", "")).startswith("ours")
            choice = f"the {d.choice['what']} (decided under {best}, " + (
                "our reading: the paper leaves it open)" if ours else "the closest to the paper's analysis)")
            if differ:
                others = "; ".join(f"under {o}: {s}" for o, s in differ.items())
                if v.inconclusive:  # the card keeps what the other options gave
                    v.inconclusive += f"; {others}"
                else:
                    v.caveats += (others,)
                v.depends += (choice,)
                same = [o for o in other if o not in differ]
                if same and not v.inconclusive:  # the options that agree with the one that decides
                    v.robust += (f"the {d.choice['what']}: the same under " + ", ".join([best] + same),)
            elif not v.inconclusive:  # an undecided claim is robust to nothing
                v.robust += (f"the {d.choice['what']}: the same under " + ", ".join(opts),)
            shown = measured if measured is not None else "; ".join(
                f"{o}: {_quantities(under[o], d.tests)}" for o in opts) + (
                f"; {_quantities(quantities, d.tests)}" if quantities else "")
        else:
            if under is not None:
                raise chk.ConfigError(f"{where}: under is for a claim with a declared choice")
            q = quantities
            v = criteria.decide(d.tests, q, where)
            shown = measured if measured is not None else _quantities(q, d.tests)
        notes = [criteria._fmt_note(d.caveat, q)] if d.caveat else []
        self._decide(measured=shown, how=how or d.how, passed=v.passed,
                     caveat="; ".join(notes + list(v.caveats)) or None, hypotheses=hypotheses,
                     inconclusive=v.inconclusive or None, regardless=v.regardless)
        self.criterion = [criteria.describe(t) for t in d.tests]
        self.robust, self.depends = list(v.robust), list(v.depends)
        deciding = [t for t in d.tests if t.get("fails", "not reproduced") == "not reproduced"] or list(d.tests)
        outs = {id(t): criteria.evaluate(t, q, where) for t in d.tests}
        # every test that holds is listed (a side remark's test too: its failure would be a caveat); a failure
        # listed is one that decides (the others show as a caveat, or make the claim inconclusive)
        self.held = [criteria.describe(t, source=False) for t in d.tests if outs[id(t)] == criteria.HOLDS]
        self.failed = [criteria.describe(t, source=False) for t in deciding if outs[id(t)] == criteria.FAILS_]
        self.key = _key(deciding[0], q[deciding[0]["quantity"]]) + (f" (under {best})" if d.choice else "")
        self.elsewhere = _elsewhere(self)
        return self

    def outcome(self, quantity: str, value) -> str:
        """How this claim's declared test of ``quantity`` judges ``value`` on its own: ``"holds"``,
        ``"fails"`` or ``"straddles"`` (an interval on both sides of the threshold). For a chapter that
        must say whether two options of a choice reach the same outcome, without typing the criterion."""
        d = declared(self.paper).get(self.id)
        tests = [t for t in (d.tests if d is not None else ()) if t["quantity"] == quantity]
        if not tests:
            raise chk.ConfigError(f"claim {self.id} declares no test of {quantity!r} in icl_lab/papers/{self.paper}/claims.toml")
        return criteria.evaluate(tests[0], {quantity: value}, f"claim {self.id}")

    def cannot_decide(self, *, how: str, why: str, measured="—") -> "Claim":
        """Record that nothing measured here can decide the claim (e.g. a record is missing)."""
        self._decide(measured=measured, how=how, passed=False, inconclusive=why)
        self.key, self.held, self.failed = "", [], []
        self.elsewhere = _elsewhere(self)
        return self

    def check(self, *, measured, how: str, passed: bool, caveat: str | None = None,
              hypotheses: dict | None = None, inconclusive: str | None = None) -> "Claim":
        """Record a measurement (see :meth:`_decide`), and note where the ledgers shipped for the other
        scales (``results/reference/claims/<scale>/``) give this claim another status: a conclusion
        of the reduced scales that the full size does not share is written next to it. For a claim of
        one's own; a claim the library declares with tests is decided by :meth:`measure`."""
        d = declared(self.paper).get(self.id) if self.paper in PAPERS else None
        if d is not None and d.tests:
            raise chk.ConfigError(f"claim {self.id} declares its tests in claims.toml: hand over the measured "
                                  "quantities with measure()")
        self._decide(measured=measured, how=how, passed=passed, caveat=caveat, hypotheses=hypotheses,
                     inconclusive=inconclusive)
        self.key, self.held, self.failed = "", [], []
        self.elsewhere = _elsewhere(self)
        return self

    def _decide(self, *, measured, how: str, passed: bool, caveat: str | None = None,
                hypotheses: dict | None = None, inconclusive: str | None = None, regardless: str = "") -> "Claim":
        """Record a measurement. ``passed`` is the outcome of comparing the measurement with the
        statement; with a ``caveat`` a pass becomes ``reproduced with caveat``.

        ``hypotheses`` maps each declared condition of the statement to whether it held where the
        measurement was taken. A failure where a condition was violated is ``inconclusive``, not
        ``not reproduced``; a pass there carries the violated conditions as a caveat.
        ``inconclusive`` (a reason) records that the measurement cannot decide the statement;
        ``regardless`` (a reason) that a failure does not depend on the hypotheses."""
        if not isinstance(passed, bool):
            try:
                passed = bool(passed)  # accepts 0-d tensors / numpy bools
            except Exception as e:  # pragma: no cover
                raise chk.ConfigError(f"passed must be a boolean (got {passed!r})") from e
        if not how:
            raise chk.ConfigError(f"how must describe the measurement of claim {self.id}")
        hyp = {str(k): bool(v) for k, v in (hypotheses or {}).items()}
        unknown = [k for k in hyp if self.hypotheses_declared and k not in self.hypotheses_declared]
        if unknown:
            raise chk.ConfigError(f"hypotheses {unknown} are not declared for claim {self.id} "
                                  f"(declared: {list(self.hypotheses_declared)})")
        self.measured = plain(_fmt(measured))
        self.how = how
        self.hypotheses = hyp
        violated = [k for k, v in hyp.items() if not v]
        notes = [caveat] if caveat else []
        if inconclusive:
            self.status, self.caveat = "inconclusive", inconclusive
            return self
        if violated and not passed and not regardless:
            self.status = "inconclusive"
            self.caveat = "; ".join(notes + ["measured where these hypotheses do not hold: " + "; ".join(violated)])
            return self
        if violated:
            notes.append("measured outside the hypotheses: " + "; ".join(violated)
                         + (f" (they do not explain the failure: {regardless})" if regardless and not passed else ""))
        self.caveat = "; ".join(notes)
        self.status = ("reproduced with caveat" if self.caveat else "reproduced") if passed else "not reproduced"
        return self

    @property
    def hypotheses_declared(self) -> tuple:
        d = declared(self.paper).get(self.id) if self.paper in PAPERS else None
        return d.hypotheses if d is not None else ()

    def _repr_html_(self) -> str:  # a card: statement, measured value, status badge, kind
        return claim_card(self)

    @property
    def ok(self) -> bool:
        return self.status in ("reproduced", "reproduced with caveat")


def _elsewhere(c: Claim) -> dict:
    here = get_scale()
    return {sc: st for (sc, paper, cid), st in shipped_statuses().items()
            if paper == c.paper and cid == c.id and sc != here and st != c.status}


def _quantities(q: dict, tests=()) -> str:
    """Measured quantities as text (:func:`icl_lab.render.plain_value`): ``name = value`` (a sequence: its
    values, comma-separated; per-seed values that a test judges by an interval: that statistic with its
    interval; a yes-or-no answer: ``name: yes``)."""
    q = {k: next((criteria.measured(t, v) for t in tests if t["quantity"] == k), v) for k, v in q.items()}
    return "; ".join(f"{k}: {plain_value(v)}" if isinstance(v, bool) else f"{k} = {_fmt(v)}" for k, v in q.items())


def _fmt(v, shown: int = 0) -> str:
    """A value, or a sequence of values, as a reader reads it (a sequence longer than ``shown``, default
    ``_SHOWN_VALUES``, summarised by its first and last values and its length)."""
    shown = shown or _SHOWN_VALUES
    if hasattr(v, "tolist") and getattr(v, "ndim", 0) > 0:
        v = v.tolist()
    if isinstance(v, (list, tuple)) and len(v) > shown:
        head = v[:shown - 2]
        return f"{plain_value(head)}, …, {plain_value(v[-2:])} ({len(v)} values)"
    return plain_value(v)


_SHOWN_VALUES = 8  # a longer sequence is shown as its first and last values and its length


def _key(test: dict, value) -> str:
    """The card's measured sentence: the quantity a deciding test reads, with the value it judges (a
    statistic of a sequence with the number of values it is taken over; an interval where there is one)."""
    name, stat = test["quantity"], test.get("statistic", "all")
    v = criteria.measured(test, value)
    seq = v.tolist() if hasattr(v, "tolist") and getattr(v, "ndim", 0) > 0 else v
    if isinstance(seq, (list, tuple)) and len(seq) > 1 and stat in ("mean", "median", "min", "max") and \
            all(isinstance(x, (int, float)) for x in seq):
        import statistics

        comb = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}[stat](seq)
        return f"{stat} of {name} = {plain_value(comb)} over {len(seq)} values ({_fmt(seq, 4)})"
    if isinstance(v, bool):
        return f"{name}: {plain_value(v)}"
    return f"{name} = {_fmt(v, 4)}"


def claims_dir() -> Path:
    """Where ledgers are exported at the active scale (:func:`icl_lab.paths.claims_dir`)."""
    return paths.claims_dir(get_scale())



def _under_shown(m: Measurement) -> dict | None:
    """``m.under`` with each option's ``shown_under`` context listed first (a tested name takes its value from ``under``)."""
    if m.under is None or not m.shown_under:
        return m.under
    return {o: {**{k: q.get(k, v) for k, v in (m.shown_under.get(o) or {}).items()}, **q} for o, q in m.under.items()}


class Ledger:
    """The claims of one paper (or of the common-setup chapter)."""

    def __init__(self, paper: str, part: str | None = None):
        """The declared claims of ``paper`` (of one ``part`` only, for a chapter split over
        several notebooks: each notebook checks and exports its own part)."""
        self.paper = chk.one_of("paper", paper, PAPERS)
        self.part = part
        self.claims: dict[str, Claim] = {}
        decl = declared(paper).values()
        if part is not None:
            parts = sorted({d.part for d in decl})
            chk.one_of("part", part, parts)
            decl = [d for d in decl if d.part == part]
        for d in decl:
            c = Claim(id=d.id, paper=paper, location=d.location, statement=d.statement, kind=d.kind)
            if d.not_checkable:
                c.status, c.how, c.measured = "not checkable", d.not_checkable, "—"
            self.claims[d.id] = c

    def claim(self, id: str, location: str | None = None, statement: str | None = None, *,
              kind: str = "paper") -> Claim:
        """The declared claim ``id``. Claims not declared in the library can still be added here
        (``location`` and ``statement`` given), e.g. by a reader's own notebook."""
        if id in self.claims:
            if statement is not None and statement != self.claims[id].statement:
                raise chk.ConfigError(f"claim {id!r} is declared in icl_lab.papers.{self.paper}.claims with "
                                      "another statement: check it with ledger[id]")
            return self.claims[id]
        if not id or not statement or not location:
            raise chk.ConfigError(f"claim {id!r} is not declared for {self.paper}: give its location and statement")
        c = Claim(id=id, paper=self.paper, location=location, statement=statement, kind=chk.one_of("kind", kind, KINDS))
        self.claims[id] = c
        return c

    def not_checkable(self, id: str, location: str | None = None, statement: str | None = None, *,
                      why: str) -> Claim:
        if not why:
            raise chk.ConfigError("why must explain why the claim cannot be checked")
        c = self.claim(id, location, statement)
        c.status, c.how, c.measured = "not checkable", why, "—"
        return c

    def __getitem__(self, id: str) -> Claim:
        if id not in self.claims:
            raise chk.ConfigError(f"claim {id!r} is not declared for {self.paper} "
                                  f"(declared: {', '.join(self.claims) or 'none'})")
        return self.claims[id]

    def __iter__(self):
        return iter(self.claims.values())

    def counts(self, kind: str | None = "paper") -> dict[str, int]:
        """Claims per status, of one kind (default: the paper's own claims; ``None``: all)."""
        out = {s: 0 for s in STATUSES}
        for c in self:
            if kind is None or c.kind == kind:
                out[c.status] = out.get(c.status, 0) + 1
        return out

    def counts_by_kind(self) -> dict[str, dict[str, int]]:
        return {k: self.counts(k) for k in KINDS}

    def pending(self) -> list[str]:
        return [c.id for c in self if c.status == "pending"]

    def to_records(self) -> list[dict]:
        return [asdict(c) for c in self]

    def to_markdown(self) -> str:
        return md_table(["id", "location", "statement", "how measured", "measured", "status"],
                        [[c.id, c.location, c.statement, c.how, c.measured, _status(c)] for c in self])

    def _repr_html_(self) -> str:
        return ledger_html(self)

    def show(self) -> None:
        """Display the ledger in a notebook. Returns None, so that a cell ending with
        ``ledger.show()`` (no ``;``) shows it once, not a second time as the cell's value."""
        try:
            from IPython.display import display

            display(self)
        except ImportError:  # pragma: no cover
            print(self.to_markdown())

    def cards(self, *ids: str) -> None:
        """Display the cards of the claims ``ids`` (those just checked) in a notebook."""
        from IPython.display import display

        for i in ids:
            display(self[i])

    def judge(self, measurements, *, show: bool = True) -> list[Claim]:
        """Decide the claims of ``measurements`` (a :class:`Measurement` or an iterable of them, as a
        paper's checks return) by their declared tests, show their cards in a notebook (``show``) and
        return the claims. Refuses, before deciding anything, a measurement whose quantity names are not
        exactly those its claim's tests read (a misspelt or a missing name). A measurement's ``shown`` (context
        beside the tested quantities) sets the card's measured line and its order; the tests read only the
        tested quantities."""
        ms = [measurements] if isinstance(measurements, Measurement) else list(measurements)
        decl = declared(self.paper)
        for m in ms:
            if not isinstance(m, Measurement):
                raise chk.ConfigError(f"measurements must be Measurement objects (got {type(m).__name__})")
            self[m.claim]  # a claim of this ledger
            want = quantities_read(decl[m.claim]) if m.claim in decl else frozenset()
            if m.names != want:
                raise chk.ConfigError(f"claim {m.claim}: the quantities handed over are not those its tests read "
                                      f"(not read: {sorted(m.names - want)}; missing: {sorted(want - m.names)})")
        claims = [self[m.claim].cannot_decide(how=m.how, why=m.why, measured=m.measured or "—") if m.why else
                  self[m.claim].measure({**{k: m.quantities.get(k, v) for k, v in (m.shown or {}).items()},
                                         **m.quantities}, how=m.how, measured=m.measured or None, hypotheses=m.hypotheses,
                                        under=_under_shown(m))
                  for m in ms]
        for m, c in zip(ms, claims):
            if m.note and not m.why and c.status == "inconclusive":
                c.caveat = f"{m.note}; {c.caveat}" if c.caveat else m.note
        if show:
            self.cards(*(c.id for c in claims))
        return claims

    def export(self, directory: str | os.PathLike | None = None) -> Path:
        """Write ``<directory>/<paper>.json`` atomically (write to a temporary file, then rename)
        and return its path.  Refuses while a declared claim has no status yet."""
        pending = self.pending()
        if pending:
            raise chk.ConfigError(f"claims {pending} of the {self.paper} ledger were declared but never checked")
        d = Path(directory) if directory is not None else claims_dir()
        d.mkdir(parents=True, exist_ok=True)
        name = self.paper if not self.part else f"{self.paper}.{self.part}"
        path = d / f"{name}.json"
        payload = {"paper": self.paper, "part": self.part or "", "scale": get_scale(), "counts": self.counts(None),
                   "counts_by_kind": self.counts_by_kind(), "claims": self.to_records()}
        paths.atomic_write(path, lambda f: f.write(json.dumps(payload, indent=2).encode()))
        return path


_SHIPPED: dict | None = None


def shipped_statuses() -> dict:
    """``{(scale, paper, id): status}`` of the ledgers shipped with the book in
    ``results/reference/claims/<scale>/`` (empty when the package runs without the repository)."""
    global _SHIPPED
    if _SHIPPED is None:
        out = {}
        root = paths.REFERENCE / "claims"
        for scale in SCALES:
            if (root / scale).is_dir():
                try:
                    out.update({(scale, c.paper, c.id): c.status for c in load_all(root / scale)})
                except (OSError, ValueError, KeyError, TypeError):  # a damaged file: no notes from it
                    continue
        _SHIPPED = out
    return _SHIPPED


def _status(c: Claim) -> str:
    return c.status + (f" ({c.caveat})" if c.caveat else "")


def load_parts(directory: str | os.PathLike | None = None) -> list[tuple[Claim, str]]:
    """Every exported claim with the part (notebook) of its chapter that checked it."""
    d = Path(directory) if directory is not None else claims_dir()
    names = set(Claim.__dataclass_fields__)
    out: list[tuple[Claim, str]] = []
    for p in sorted(d.glob("*.json")):
        if not p.is_file():  # a FIFO or a folder named like a ledger: reading it could block
            raise ValueError(f"{p.name} is not a regular file")
        data = json.loads(p.read_text())
        out.extend((Claim(**{k: v for k, v in c.items() if k in names}), data.get("part") or "")
                   for c in data["claims"])
    return out


def load_all(directory: str | os.PathLike | None = None) -> list[Claim]:
    """Every exported claim (for the synthesis chapter and CI), ordered by paper then id."""
    return [c for c, _ in load_parts(directory)]


class ClaimsTable:
    """Every exported claim of every chapter in one table (the synthesis chapter's ledger), with
    the counts per paper and status.  Papers appear in book order (``PAPERS``)."""

    def __init__(self, claims: list[Claim], parts: list[str] | None = None):
        order = {p: i for i, p in enumerate(PAPERS)}
        items = sorted(zip(claims, parts or [""] * len(claims)),
                       key=lambda cp: (order.get(cp[0].paper, len(order)), cp[0].paper))
        self.claims = [c for c, _ in items]
        self.parts = [p for _, p in items]

    @classmethod
    def load(cls, directory: str | os.PathLike | None = None) -> "ClaimsTable":
        pairs = load_parts(directory)
        return cls([c for c, _ in pairs], [p for _, p in pairs])

    @property
    def papers(self) -> list[str]:
        return list(dict.fromkeys(c.paper for c in self.claims))

    def counts(self, paper: str | None = None, kind: str | None = "paper") -> dict[str, int]:
        """Claims per status for one paper (``None``: all papers) and one kind (default ``paper``)."""
        out = {s: 0 for s in STATUSES}
        for c in self.claims:
            if (paper is None or c.paper == paper) and (kind is None or c.kind == kind):
                out[c.status] = out.get(c.status, 0) + 1
        return out

    def missing(self, expected=PAPERS) -> list[str]:
        """The papers whose ledger has not been exported (their chapter has not run at this scale)."""
        return [p for p in expected if p not in self.papers]

    def counts_markdown(self, kind: str | None = "paper") -> str:
        rows = ["| paper | " + " | ".join(STATUSES) + " | total |", "|---" * (len(STATUSES) + 2) + "|"]
        for p in [*self.papers, None]:
            c = self.counts(p, kind)
            rows.append(f"| {p or '**all**'} | " + " | ".join(str(c[s]) for s in STATUSES) + f" | {sum(c.values())} |")
        return "\n".join(rows)

    def to_markdown(self) -> str:
        return md_table(["paper", "id", "location", "statement", "measured", "status"],
                        [[c.paper, c.id, c.location, c.statement, c.measured, _status(c)] for c in self.claims])

    def to_json(self) -> str:
        return json.dumps({"counts": {p: self.counts(p) for p in self.papers}, "total": self.counts(),
                           "claims": [asdict(c) for c in self.claims]}, indent=2)

    def _repr_html_(self) -> str:  # filterable by paper, kind and status
        return FilterableLedger(list(zip(self.claims, self.parts)))._repr_html_()


def compare(a: "ClaimsTable", b: "ClaimsTable") -> list[dict]:
    """The claims whose status differs between two ledgers (two builds, scales or machines):
    ``[{paper, id, kind, a, b, measured_a, measured_b}]``; a claim present in only one is listed with
    status ``"absent"`` on the other side."""
    left = {(c.paper, c.id): c for c in a.claims}
    right = {(c.paper, c.id): c for c in b.claims}
    out = []
    order = {p: i for i, p in enumerate(PAPERS)}
    for key in sorted(set(left) | set(right), key=lambda k: (order.get(k[0], 99), k[1])):
        ca, cb = left.get(key), right.get(key)
        sa = ca.status if ca else "absent"
        sb = cb.status if cb else "absent"
        if sa != sb:
            out.append({"paper": key[0], "id": key[1], "kind": (ca or cb).kind, "a": sa, "b": sb,
                        "measured_a": ca.measured if ca else "", "measured_b": cb.measured if cb else ""})
    return out
