"""A paper's coverage: the statements of the paper, each with the claims that test it, why none does, or
what would.

``icl_lab/papers/<key>/coverage.toml`` sits beside the paper's ``claims.toml``. It lists every numbered
result of the main text, every claim of the abstract and introduction and every trend a figure's caption
or the text around it states, one ``[[statement]]`` table each: ``where`` ("Abstract", "Thm 3.1(2)",
"Fig. 2a caption"), ``statement`` (a short quote or a faithful paraphrase, MyST math allowed) and exactly
one of

* ``claims``: the ids of the claims of that paper's ``claims.toml`` that test it;
* ``reason``: why no claim tests it (a definition, a step of a proof tested through the result it serves,
  hidden constants only);
* ``gap``: a checkable statement that no claim tests yet, and what would test it.

A paper-kind claim that tests no listed statement is suspect; where one is meant, the optional
``[untied]`` table names it with the reason. The file's shape is declared in
``icl_lab/schemas/coverage.schema.json``; :func:`load` checks it and, against the paper's claims, that
every id named is a claim of that paper and that every paper-kind claim is named (or untied), and refuses
a file that breaks either in one line. :func:`summary` counts the statements.

The coverage is read by tests and by whoever audits a ledger; no experiment imports it."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import schemas
from .params import ConfigError
from .papers import PAPERS

PAPERS_DIR = Path(__file__).parent / "papers"
#: the papers that may have a coverage file: the book's papers and the template a new paper copies
COVERABLE = PAPERS + ("_template",)


@dataclass(frozen=True)
class Entry:
    """One statement of the paper and how the ledger covers it."""

    where: str
    statement: str
    claims: tuple[str, ...] = ()
    reason: str = ""
    gap: str = ""

    @property
    def status(self) -> str:
        """``tested`` (claims test it), ``reason`` (why no claim does) or ``gap`` (none does yet)."""
        return "tested" if self.claims else "reason" if self.reason else "gap"


@dataclass(frozen=True)
class Coverage:
    paper: str
    entries: tuple[Entry, ...]
    untied: dict[str, str] = field(default_factory=dict)

    def named(self) -> set[str]:
        """Every claim id an entry names."""
        return {c for e in self.entries for c in e.claims}


def _where(paper: str) -> str:
    return f"icl_lab/papers/{paper}/coverage.toml"


def declared_kinds(text: str) -> dict[str, str]:
    """``{id: kind}`` of a claims table's text (kind ``paper`` where none is given)."""
    return {row["id"]: row.get("kind", "paper") for row in tomllib.loads(text).get("claim", ())
            if isinstance(row, dict) and isinstance(row.get("id"), str)}


def parse(text: str, paper: str, kinds: dict[str, str]) -> Coverage:
    """A coverage file's text checked against its schema and against ``kinds`` (``{claim id: kind}`` of the
    paper's claims): every id named is a claim; every paper-kind claim is named by an entry or untied (with
    its reason), never both. Raises :class:`ConfigError` in one line naming the file and the field."""
    where = _where(paper)
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: {e}") from None
    found = schemas.problem("coverage", table)
    if found:
        path, rule = found
        raise ConfigError(f"{where}: {schemas.field(path) + ': ' if path else ''}{rule}")
    entries = tuple(Entry(e["where"], e["statement"], tuple(e.get("claims", ())), e.get("reason", ""),
                          e.get("gap", "")) for e in table["statement"])
    for i, e in enumerate(entries):
        for j, c in enumerate(e.claims):
            if c not in kinds:
                raise ConfigError(f"{where}: statement[{i}].claims[{j}]: {c!r} is no claim of "
                                  f"icl_lab/papers/{paper}/claims.toml ({e.where})")
    untied = dict(table.get("untied", {}))
    cov = Coverage(paper, entries, untied)
    named = cov.named()
    for c in untied:
        if kinds.get(c) != "paper":
            what = "is no claim of" if c not in kinds else f"is a {kinds[c]} claim of"
            raise ConfigError(f"{where}: untied.{c}: {c!r} {what} icl_lab/papers/{paper}/claims.toml: only a "
                              "paper-kind claim needs untying")
        if c in named:
            raise ConfigError(f"{where}: untied.{c}: {c!r} tests a statement listed here; untie it or drop it there")
    missing = [c for c, k in kinds.items() if k == "paper" and c not in named and c not in untied]
    if missing:
        raise ConfigError(f"{where}: paper-kind claim{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(map(repr, missing))} test{'' if len(missing) > 1 else 's'} no statement "
                          "listed: name each in the claims of the statement it tests, or under [untied] with why")
    return cov


def load(paper: str) -> Coverage:
    """The coverage of ``paper`` (one of :data:`COVERABLE`), checked (:func:`parse`)."""
    if paper not in COVERABLE:
        raise ConfigError(f"paper must be one of {', '.join(COVERABLE)} (got {paper!r})")
    src, claims_src = PAPERS_DIR / paper / "coverage.toml", PAPERS_DIR / paper / "claims.toml"
    if not src.is_file():
        raise ConfigError(f"{_where(paper)}: no such file: paper {paper!r} lists no coverage")
    kinds = declared_kinds(claims_src.read_text(encoding="utf-8")) if claims_src.is_file() else {}
    return parse(src.read_text(encoding="utf-8"), paper, kinds)


def summary(paper: str) -> dict[str, int]:
    """Counts of ``paper``'s statements: ``statements`` (all), ``tested`` (a claim tests it), ``reasons``
    (no claim can or needs to, with why) and ``gaps`` (checkable, untested yet)."""
    entries = load(paper).entries
    count = {s: sum(e.status == s for e in entries) for s in ("tested", "reason", "gap")}
    return {"statements": len(entries), "tested": count["tested"], "reasons": count["reason"],
            "gaps": count["gap"]}
