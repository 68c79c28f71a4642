"""How claims look to a reader: :func:`claim_card` (what ``ledger["C1"].check(...)`` shows, anchored
``claim-<paper>-<id>``), :func:`ledger_html` (what ``ledger.show()`` shows: counts by kind, the chapter's
hypotheses stated once, the table folded under its counts; below 640 px wide each row becomes a card) and
:class:`FilterableLedger` (every chapter's claims for the synthesis, filtered by local JavaScript).

Plain HTML with inline styles and one scoped ``<style>`` block (``ledger.css``), so it reads the same in
JupyterLab, Colab and the book. Statements are MyST, rendered by :func:`icl_lab.render.markdown_inline`.
"""
from __future__ import annotations

import html
import os
import re
import uuid
from collections import Counter
from importlib.resources import files
from pathlib import Path

from .papers import PAPERS
from .paths import book_root
from .render import markdown_inline, plain, split_top_level

STATUS_COLORS = {
    "reproduced": "#1a7f37",
    "reproduced with caveat": "#9a6700",
    "not reproduced": "#cf222e",
    "inconclusive": "#8250df",
    "not checkable": "#6e7781",
    "pending": "#6e7781",
}
KIND_LABELS = {"paper": "paper claim", "consistency": "consistency check", "finding": "the book's finding"}
KIND_PLURAL = {"paper": "paper claims", "consistency": "consistency checks", "finding": "findings"}
RULES_PAGE = "chapters/claims_rules"  # the page "How claims are judged" (relative to the book root)
_MUTED = "#57606a"


def badge(status: str) -> str:
    color = STATUS_COLORS.get(status, "#6e7781")
    return (f'<span class="icl-badge" data-status="{html.escape(status)}" style="display:inline-block;'
            f"background:{color};color:#fff;border-radius:1em;padding:.05em .65em;font-size:.85em;"
            f'font-weight:600;white-space:nowrap;line-height:1.6">{html.escape(status)}</span>')


def _slug(prefix: str, text: str) -> str:
    return prefix + "-" + re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower()


def anchor(claim, prefix: str = "claim") -> str:
    """The id of a claim's card in its chapter page (``prefix="ledger"``: its row in the ledger)."""
    return _slug(prefix, f"{claim.paper}-{claim.id}")


_SHOWN_CARDS: set[str] = set()  # cards displayed in this kernel: the ledger links only to those


def _elsewhere(claim) -> str:
    """"at paper scale: reproduced with caveat" for each scale whose shipped ledger differs."""
    n = len(claim.elsewhere)
    return ("; ".join(f"{st} at {sc} scale" for sc, st in claim.elsewhere.items())
            + (" (the ledger shipped for that scale)" if n == 1 else " (the ledgers shipped for those scales)"))


def _sentence(text: str) -> str:
    """``text`` as one sentence: a capital first letter (outside math) and a full stop."""
    t = (text or "").strip().rstrip(";,")
    if re.match(r"[a-z]{2,}\b", t):  # a word, not a symbol ("f and -f ...")
        t = t[0].upper() + t[1:]
    return t if not t or t.endswith((".", "?", "!")) else t + "."


def _tests(items) -> str:
    """Tests in words, joined: ``a``; ``a and b``; ``a, b and c``."""
    items = [plain(x) for x in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _caveat_lead(claim) -> tuple[str, bool]:
    """The first clause of the claim's caveat (MyST) and whether it has more: a card's "Why" line stays one
    sentence, the whole caveat goes under its fold."""
    cav = caveat_md(claim)
    parts = split_top_level(cav, "; ", quotes="") if cav else []
    return (parts[0] if parts else ""), len(parts) > 1


def why_md(claim) -> str:
    """One sentence (MyST) of why the claim has its status: the tests that hold or fail, the caveat's first
    clause (the rest under the card's fold) or the reason it cannot be decided."""
    held, failed = list(getattr(claim, "held", ()) or ()), list(getattr(claim, "failed", ()) or ())
    cav, more = _caveat_lead(claim)
    if more:
        cav += " (more under How it is decided)"
    if claim.status == "not checkable":
        return _sentence(plain(claim.how) or "nothing measurable here can test it")
    if claim.status == "inconclusive":
        return _sentence("the measurement cannot decide it: " + (cav or "see how it is decided"))
    if claim.status == "not reproduced":
        what = (f"{_tests(failed)} fail{'s' if len(failed) == 1 else ''}" if failed else
                "the measurement fails its criterion")
        return _sentence(what + (f" ({cav})" if cav else ", and the statement's hypotheses hold where it was measured"))
    holds = (f"the test holds: {_tests(held)}" if len(held) == 1 else
             f"all {len(held)} tests hold: {_tests(held)}" if held else "every test of its criterion holds")
    return _sentence(holds + (f"; but {cav}" if cav and claim.status == "reproduced with caveat" else ""))


def _hyp_md(h: str, ok: bool, claim, prefix: str = "hypotheses") -> str:
    name = hypothesis_name(h)
    what = f"[{name}](#{_slug(prefix, claim.paper)})" if name != h else condition_md(h)
    return f"{what} {'held' if ok else 'did not hold'}"


def claim_card(claim) -> str:
    """One claim as a card a student reads: status, kind and location, statement, one sentence of what was
    measured (its key number with its interval) and one of why that verdict; how it is decided (every
    measured value, the criterion, hypotheses, what the verdict is robust to and depends on) under one fold,
    in sentences with math rendered."""
    color = STATUS_COLORS.get(claim.status, "#6e7781")
    _SHOWN_CARDS.add(anchor(claim))
    # the location is MyST too ("Lemma 4.2 at $p_1 = 0.3$"): its math is typeset like the statement's
    meta = " · ".join(x for x in (html.escape(KIND_LABELS.get(claim.kind, claim.kind)),
                                  markdown_inline(claim.location), html.escape(claim.id)) if x)
    rows = [f'<div style="display:flex;flex-wrap:wrap;gap:.2em .6em;align-items:center">{badge(claim.status)}'
            f'<span class="mathjax_process" style="font-size:.85em;color:{_MUTED}">{meta}</span></div>',
            f'<div class="icl-claim-statement mathjax_process" style="margin:.35em 0 .2em">'
            f"{markdown_inline(claim.statement)}</div>"]
    measured = plain(claim.measured if claim.measured not in ("", "—") else "")
    # the deciding quantity (a ledger exported before cards named it: the measured text's first clause)
    key = plain(getattr(claim, "key", "") or "") or (split_top_level(measured, "; ", quotes="")[0] if measured else "")
    lines = [("Measured", key and markdown_inline(_sentence(key))),
             ("Why", markdown_inline(why_md(claim)))]
    rows += [f'<div class="icl-claim-{label.lower()} mathjax_process" style="font-size:.92em">'
             f"<strong>{label}:</strong> {body}</div>" for label, body in lines if body]
    # how it is decided: folded, so that a page of cards stays short; the summary says if a choice of ours decides
    hyps = "; ".join(_hyp_md(h, ok, claim) for h, ok in (claim.hypotheses or {}).items())
    decided = [(label, text) for label, text in (
        ("Everything measured", measured and measured != key and measured + (f" ({plain(claim.how)})" if claim.how else "")),
        ("How it was measured", claim.how and (not measured or measured == key) and claim.status != "not checkable"
         and plain(claim.how)),
        ("Criterion", "; ".join(plain(x) for x in claim.criterion)),
        ("Hypotheses", hyps),
        ("Caveat", claim.caveat and (claim.status not in ("inconclusive", "reproduced with caveat", "not reproduced")
                                     or _caveat_lead(claim)[1]) and caveat_md(claim)),
        ("Robust to", "; ".join(plain(x) for x in claim.robust)),
        ("Depends on", "; ".join(plain(x) for x in claim.depends)),
        ("Other scales", claim.elsewhere and _elsewhere(claim))) if text]
    if decided:
        n = len(claim.depends)
        body = "".join(f"<div><strong>{label}:</strong> {markdown_inline(_sentence(text))}</div>" for label, text in decided)
        rows.append(f'<details class="icl-claim-how mathjax_process" style="font-size:.92em;color:{_MUTED}">'
                    f"<summary>How it is decided"
                    + (f" (depends on {n} choice{'s' if n > 1 else ''} of ours)" if n else "")
                    + f"</summary>{body}</details>")
    return (f'<div class="icl-claim-card" id="{anchor(claim)}" data-claim-id="{html.escape(claim.id)}" '
            f'data-status="{html.escape(claim.status)}" '
            f'style="border:1px solid #d0d7de;border-left:6px solid {color};border-radius:6px;'
            f'padding:.45em .8em;margin:.6em 0;max-width:100%;box-sizing:border-box;overflow-x:auto">{"".join(rows)}</div>')


# -- hypotheses: stated once per chapter, named in cards and rows ---------------------------------

_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "lambda", "mu", "nu", "rho", "sigma",
          "tau", "phi", "psi", "omega", "Theta", "Omega", "Lambda", "Delta")
_FUNCS = {"polylog": r"\mathrm{polylog}", "poly": r"\mathrm{poly}", "log": r"\log", "exp": r"\exp",
          "min": r"\min", "max": r"\max", "span": r"\mathrm{span}"}
_RELATION = re.compile(r">=|<=|!=|[<>=]|\bin\b")


def _tex(expr: str) -> str:
    """A condition written in ASCII (``m >= eps_m^-2 M1^2 log N``) as TeX."""
    t = expr.strip()
    t = re.sub(r"(?<![\^_])\{([^{}]*)\}", r"\\{\1\\}", t)  # a set or an indicator: span{mu}, 1{k = m}
    t = re.sub(r"\bsqrt\(([^()]*)\)|\bsqrt\s+(\w)", lambda m: r"\sqrt{" + (m.group(1) or m.group(2)) + "}", t)
    t = re.sub(r"(?<![A-Za-z\\])(sum|perp)(?![A-Za-z])", r"\\\1", t)
    t = t.replace(" ~ ", r" \sim ").replace("+-", r"\pm ")
    t = re.sub(r"\^\(([^()]*)\)", r"^{\1}", t)  # ^(2/d)
    t = re.sub(r"\^(-?[0-9.]+|\{[^}]*\})", lambda m: "^{" + m.group(1).strip("{}") + "}", t)
    t = re.sub(r"\^([A-Za-z]{2,})\b", r"^{\\mathrm{\1}}", t)  # L_2^low
    t = re.sub(r"(?<=[A-Za-z])\*", "^*", t)  # E*_imbal
    t = re.sub(r"(?<!\\)\b(" + "|".join(_GREEK) + r")(?=\b|_)", r"\\\1", t)
    t = re.sub(r"(?<!\\)\beps(?=\b|_)", r"\\epsilon", t)
    t = re.sub(r"(?<![A-Za-z\\])(" + "|".join(_FUNCS) + r")(?![A-Za-z])", lambda m: _FUNCS[m.group(1)], t)
    t = re.sub(r"_([A-Za-z]{2,})\b", r"_{\\mathrm{\1}}", t)  # E^*_imbal
    t = re.sub(r"\b([A-Za-z])([0-9]+)\b", r"\1_\2", t)  # M1 -> M_1
    t = t.replace(">>", r"\gg ").replace("<<", r"\ll ")
    t = t.replace(">=", r"\ge ").replace("<=", r"\le ").replace("!=", r"\ne ")
    t = re.sub(r"(?<=\s)in(?=\s)", r"\\in", t)
    return re.sub(r"\s+", " ", t)


_MATH_WORDS = {*_GREEK, *_FUNCS, "sqrt", "sum", "perp", "eps", "min", "max", "tr", "in"}
_FORMULA = re.compile(r">=|<=|!=|>>|<<|[<>=+/^_*|]|\b(?:" + "|".join(_GREEK) + r"|sqrt|sum|log)\b")


def _prose_token(tok: str) -> bool:
    core = tok.strip("(),;:.")
    if core in ("i.e", "e.g", "cf"):
        return True
    return bool(re.fullmatch(r"[A-Za-z]{2,}(?:-[A-Za-z]+)*|[A-Za-z]+(?:-[A-Za-z]+)+", core)) and core not in _MATH_WORDS


def _mixed(text: str) -> str:
    """Words and formulas in one phrase ("k >= 2 for E*_imbal"): each run of tokens between words that
    holds a relation or an operator becomes ``$...$``, the rest stays prose."""
    toks = text.split()
    prose = [_prose_token(t) for t in toks]
    for i, t in enumerate(toks):  # "in" is a relation between formulas, a word beside words ("as in Lemma")
        if t == "in" and ((i and prose[i - 1]) or (i + 1 < len(toks) and prose[i + 1])):
            prose[i] = True
    out, run = [], []

    def flush():
        if not run:
            return
        f = " ".join(run)
        lead = trail = ""
        while f.startswith("(") and f.count("(") > f.count(")"):
            lead, f = lead + "(", f[1:]
        m = re.search(r"[,;:.)]+$", f)
        while m and (m.group(0) != ")" * len(m.group(0)) or f.count(")") > f.count("(")):
            cut = 1 if f[-1] != ")" or f.count(")") > f.count("(") else 0
            if not cut:
                break
            trail, f = f[-1] + trail, f[:-1]
            m = re.search(r"[,;:.)]+$", f)
        out.append(lead + (f"${_tex(f)}$" if f and _FORMULA.search(f) else f) + trail)
        run.clear()

    for t, p in zip(toks, prose):
        if p:
            flush()
            out.append(t)
        else:
            run.append(t)
    flush()
    return " ".join(out)


def _condition_part(part: str) -> str:
    """One part of a condition: a formula with, at its end, a note in parentheses that holds words (each of
    the note's parts as prose with math), or a phrase of words and formulas."""
    m = re.fullmatch(r"(.*?)\s*\(((?:[^()]|\([^()]*\))*)\)", part, re.S)
    if m and m.group(1).strip() and any(_prose_token(t) for t in m.group(2).split()):
        note = "; ".join(condition_md(x) for x in split_top_level(m.group(2), "; ", quotes=""))
        return f"{_condition_part(m.group(1))} ({note})"
    return _mixed(part)


def condition_md(cond: str) -> str:
    """A condition in ASCII as MyST, math where it is a formula and prose where it is words: each
    comma-separated part is split into runs of words (prose) and formulas (``$...$``); a note in
    parentheses at its end is read the same way. Words never end up inside math
    (:func:`icl_lab.render.prose_in_math` finds none in the result)."""
    return ", ".join(_condition_part(p) for p in split_top_level(cond, ", ", quotes=""))


def condition_html(cond: str) -> str:
    """:func:`condition_md` as HTML (math delimited for MathJax)."""
    return markdown_inline(condition_md(cond))


def hypothesis_name(h: str) -> str:
    """The name a condition goes by (``"width (35)"`` for ``"width (35): m >= ..."``); a condition
    without a name is its own name."""
    name, sep, _ = h.partition(": ")
    return name if sep else h


def _hypotheses(claims) -> list[str]:
    """The conditions of every claim (declared or recorded at the measurement), in order, once."""
    out: dict[str, None] = {}
    for c in claims:
        for h in (*getattr(c, "hypotheses_declared", ()), *(c.hypotheses or {})):
            out.setdefault(h, None)
    return list(out)


def hypotheses_html(claims, paper: str, prefix: str = "hypotheses") -> str:
    """The chapter's hypotheses stated once: a named list, math rendered; empty without any."""
    hyps = _hypotheses(claims)
    named = [h for h in hyps if hypothesis_name(h) != h]
    if not named:
        return ""
    items = "".join(f'<li><strong>{html.escape(hypothesis_name(h))}</strong>: '
                    f'{condition_html(h.partition(": ")[2])}</li>' for h in named)
    bare = [h for h in hyps if hypothesis_name(h) == h]
    more = (f'<li>{"; ".join(condition_html(h) for h in bare)}</li>') if bare else ""
    # folded, as the table is: a page's ledger stays short; a card's link to it opens it (fragment navigation)
    return (f'<details class="icl-hypotheses mathjax_process" id="{_slug(prefix, paper)}"><summary>'
            f"<strong>Hypotheses</strong> ({len(named) + len(bare)} conditions of the theorems, named in the cards "
            f"and rows)</summary><ul>{items}{more}</ul></details>")


def caveat_md(claim, prefix: str = "hypotheses") -> str:
    """The caveat as MyST, in words: each condition of the claim that it lists by name links to the
    chapter's hypotheses where they are stated, the others are rendered as math."""
    def one(m) -> str:  # one pass, longest condition first: no condition is looked for inside another's text
        name = hypothesis_name(m.group(0))
        return f"[{name}](#{_slug(prefix, claim.paper)})" if name != m.group(0) else condition_md(name)
    hyps = sorted(_hypotheses([claim]), key=len, reverse=True)
    return plain(re.sub("|".join(map(re.escape, hyps)), one, claim.caveat or "") if hyps else claim.caveat)


def caveat_html(claim, prefix: str = "hypotheses") -> str:
    """:func:`caveat_md` as HTML."""
    return markdown_inline(caveat_md(claim, prefix))


# -- ledgers -----------------------------------------------------------------------------------

# the scoped block beats the theme's ``.bd-content div.output table {table-layout:auto}``: with the
# table's own style="table-layout:fixed" and <colgroup>, the widths hold in the book, JupyterLab and Colab
_STYLE = f"<style>\n{files(__package__).joinpath('ledger.css').read_text()}</style>"


def _ordered(counts) -> list[str]:
    """The statuses counted, in the order of STATUS_COLORS."""
    return [s for s in STATUS_COLORS if counts.get(s)]


def summary_html(claims) -> str:
    """One line per kind present: a stacked bar of statuses and the counts in words."""
    lines = []
    for kind in KIND_LABELS:
        counts = Counter(c.status for c in claims if c.kind == kind)
        total = sum(counts.values())
        if not total:
            continue
        order = _ordered(counts)
        bar = "".join(f'<span title="{html.escape(s)}: {counts[s]}" style="width:{100 * counts[s] / total:.1f}%;'
                      f'background:{STATUS_COLORS[s]}"></span>' for s in order)
        words = ", ".join(f"{counts[s]} {html.escape(s)}" for s in order)
        name = KIND_PLURAL[kind].removesuffix("s") if total == 1 else KIND_PLURAL[kind]
        lines.append(f'<div class="icl-summary"><span class="icl-bar" role="img" aria-label="{words}">{bar}</span>'
                     f"<span><strong>{total} {name}</strong>: {words}</span></div>")
    return "".join(lines)


def _from_here(root: Path | None, page: str) -> str:
    """``page`` (relative to the book's root) relative to the notebook being executed."""
    return page if root is None else os.path.relpath(root / page, Path.cwd().resolve()).replace(os.sep, "/")


def rules_link(root: Path | None = None) -> str:
    """A link to the page "How claims are judged", relative to the notebook being executed."""
    href = _from_here(root or book_root(), RULES_PAGE + ".html")
    return f'<a href="{html.escape(href)}">How claims are judged</a>'


def _row(c, link: str | None = None, paper: bool = False, row_prefix: str = "ledger",
         hyp_prefix: str = "hypotheses") -> str:
    ident = html.escape(c.id)
    if link:
        ident = f'<a href="{html.escape(link)}">{ident}</a>'
    where = (f'<span class="icl-muted">{html.escape(c.paper) + " · " if paper else ""}{ident} · '
             f"{markdown_inline(c.location)} · {html.escape(KIND_LABELS.get(c.kind, c.kind))}</span>")
    # the caveat, the other scales and how it was measured are folded under their names (the claim's card
    # shows them in full): a page's ledger stays short
    folds = (("caveat", c.caveat and caveat_html(c, hyp_prefix)),
             ("other scales", c.elsewhere and html.escape(_elsewhere(c))),
             ("how", c.how and markdown_inline(plain(c.how))))
    measured = (markdown_inline(plain(c.measured)) or "—") + "".join(
        f'<details class="icl-muted"><summary>{name}</summary>{text}</details>' for name, text in folds if text)
    attrs = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in (("claim-id", c.id), ("paper", c.paper),
                                                                ("kind", c.kind), ("status", c.status)))
    return (f'<tr id="{anchor(c, row_prefix)}" {attrs}><td class="icl-status">{badge(c.status)}</td>'
            f'<td class="mathjax_process" data-label="claim">{markdown_inline(c.statement)}<br>{where}</td>'
            f'<td class="mathjax_process icl-measured" data-label="measured">{measured}</td></tr>')


def _table(rows: str) -> str:
    return ('<div class="icl-scroll"><table class="icl-ledger-table" style="table-layout:fixed;width:100%">'
            '<colgroup><col style="width:10.5em"><col><col style="width:38%"></colgroup>'
            '<thead><tr><th>status</th><th>claim</th><th>measured</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>")


def counts_words(claims) -> str:
    """``"37 claims: 20 reproduced, 9 reproduced with caveat, ..."`` (every kind)."""
    counts = Counter(c.status for c in claims)
    order = _ordered(counts) + sorted(set(counts) - set(STATUS_COLORS))
    n = counts.total()
    return f"{n} claim{'s' if n != 1 else ''}: " + ", ".join(f"{counts[s]} {html.escape(s)}" for s in order)


def _fold(summary: str, body: str) -> str:
    return f'<details class="icl-fold"><summary>{summary}</summary>{body}</details>'


def ledger_html(ledger) -> str:
    """A chapter's ledger: summary of statuses by kind, link to the rules, the chapter's hypotheses
    stated once, then the full table folded under a bar of counts."""
    claims = list(ledger)
    rows = "".join(_row(c, link="#" + anchor(c) if anchor(c) in _SHOWN_CARDS else None) for c in claims)
    title = html.escape(ledger.paper) + (f" ({html.escape(ledger.part)})" if getattr(ledger, "part", None) else "")
    return (f'{_STYLE}<div class="icl-ledger" data-paper="{html.escape(ledger.paper)}">'
            f'<div style="font-size:.9em;margin-bottom:.2em">Claims ledger of the {title} chapter '
            f"({rules_link()}).</div>{summary_html(claims)}{hypotheses_html(claims, ledger.paper)}"
            f"{_fold('The full ledger (' + counts_words(claims) + ')', _table(rows))}</div>")


# -- the synthesis: every claim, filterable ------------------------------------------------------

def evidence_pages(root: Path | None = None) -> dict[tuple[str, str], str]:
    """Map (paper, part) to the chapter page (``chapters/.../NAME.html``, from the book root) that
    checks those claims, found from the notebooks on disk: the only notebook of the chapter's folder,
    or the one whose name is or ends with ``_<part>``."""
    root = root or book_root() or Path.cwd()
    out: dict[tuple[str, str], str] = {("common", ""): "chapters/common_setup.html",
                                       ("synthesis", ""): "synthesis/synthesis.html"}
    for folder in sorted((root / "chapters").glob("*/")):
        nbs = sorted(folder.glob("*.ipynb"))
        for nb in nbs:
            page = nb.relative_to(root).with_suffix(".html").as_posix()
            out[(folder.name, nb.stem.removeprefix(folder.name + "_"))] = page
            if len(nbs) == 1:
                out[(folder.name, "")] = page
    return out


_SCRIPT = f"<script>\n{files(__package__).joinpath('ledger.js').read_text()}</script>"


class FilterableLedger:
    """Every exported claim in one table with filters by paper, kind and status (local JavaScript),
    each row linking to the claim's row in its chapter's ledger (which links to its card).
    ``claims_with_parts``: ``(claim, part)`` pairs, part being the notebook of a chapter split over
    several (:meth:`icl_lab.claims.ClaimsTable.load` reads them)."""

    def __init__(self, claims_with_parts, root: Path | None = None):
        order = {p: i for i, p in enumerate(PAPERS)}
        self.items = sorted(claims_with_parts, key=lambda cp: (order.get(cp[0].paper, len(order)), cp[0].paper))
        self.root = root or book_root()

    def _repr_html_(self) -> str:
        uid = "icl" + uuid.uuid4().hex[:10]
        pages = evidence_pages(self.root) if self.root is not None else {}
        claims = [c for c, _ in self.items]

        def select(name, values, label):
            opts = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values)
            return (f'<label>{label} <select data-filter="{name}"><option value="">all</option>{opts}</select></label>')

        papers = list(dict.fromkeys(c.paper for c in claims))
        kinds = [k for k in KIND_LABELS if any(c.kind == k for c in claims)]
        statuses = _ordered(Counter(c.status for c in claims))
        filters = (f'<div class="icl-filters" id="{uid}-f">{select("paper", papers, "paper")}'
                   f'{select("kind", kinds, "kind")}{select("status", statuses, "status")}'
                   f'<label>text <input type="search" data-filter="text" placeholder="words in the claim"></label>'
                   f'<span class="icl-muted" id="{uid}-n">{len(claims)} of {len(claims)} claims</span></div>')
        # one folded table per paper; a filter opens the papers it leaves rows in
        folds = []
        for p in papers:
            mine = [(c, part) for c, part in self.items if c.paper == p]
            pages_of = [pages.get((c.paper, part)) or pages.get((c.paper, "")) for c, part in mine]
            rows = "".join(_row(c, link=page and f"{_from_here(self.root, page)}#{anchor(c, 'ledger')}", paper=True,
                                row_prefix="all", hyp_prefix="hypotheses-all") for (c, _), page in zip(mine, pages_of))
            body = hypotheses_html([c for c, _ in mine], p, "hypotheses-all") + _table(rows)
            folds.append(_fold(f"{html.escape(p)} ({counts_words([c for c, _ in mine])})", body))
        per_paper = "".join(f'<div style="margin:.3em 0"><strong>{html.escape(p)}</strong>'
                            f'{summary_html([c for c in claims if c.paper == p])}</div>' for p in papers)
        return (f'{_STYLE}<div class="icl-ledger icl-ledger-all">'
                f'<div style="font-size:.9em">Every claim of every chapter ({rules_link(self.root)}), one folded '
                f"table per paper; a filter opens the papers with matching claims.</div>"
                f'{per_paper}{filters}<div id="{uid}-b">{"".join(folds)}</div></div>{_SCRIPT.replace("ICLUID", uid)}')
