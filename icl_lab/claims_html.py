"""How claims look to a reader: a card per checked claim, a responsive ledger per chapter, and a
filterable ledger of every chapter for the synthesis.

* :func:`claim_card` — what ``ledger["C1"].check(...)`` displays in a notebook: the statement with
  its math rendered, the measured value, a status badge and the claim's kind. The card carries the
  anchor ``claim-<paper>-<id>`` that the full ledger links to.
* :func:`ledger_html` — what ``ledger.show()`` displays: a one-line summary of statuses by kind
  (a small stacked bar each), then a table whose status column comes first, so that it stays
  visible on a phone (below 640 px wide every row becomes a block).
* :class:`FilterableLedger` — every exported claim with controls to filter by paper, kind and
  status (plain local JavaScript, no network), each row linking to the card where it is checked.

Everything is plain HTML with inline styles (plus one scoped ``<style>`` block for the responsive
rules), so it reads the same in JupyterLab, Colab and the built book. Statements are MyST
markdown, rendered by :func:`icl_lab.render.markdown_inline`. This module renders the claims it is
given; reading ledgers is :mod:`icl_lab.claims`' job.
"""
from __future__ import annotations

import html
import os
import re
import uuid
from pathlib import Path

from .papers import PAPERS
from .paths import book_root
from .render import markdown_inline

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
KIND_SINGULAR = {"paper": "paper claim", "consistency": "consistency check", "finding": "finding"}
RULES_PAGE = "chapters/claims_rules"  # the page "How claims are judged" (relative to the book root)
_MUTED = "#57606a"

def badge(status: str) -> str:
    color = STATUS_COLORS.get(status, "#6e7781")
    return (f'<span class="icl-badge" data-status="{html.escape(status)}" style="display:inline-block;'
            f"background:{color};color:#fff;border-radius:1em;padding:.05em .65em;font-size:.85em;"
            f'font-weight:600;white-space:nowrap;line-height:1.6">{html.escape(status)}</span>')


def anchor(claim, prefix: str = "claim") -> str:
    """The id of a claim's card in its chapter page (``prefix="ledger"``: its row in the ledger)."""
    return prefix + "-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{claim.paper}-{claim.id}").strip("-").lower()


_SHOWN_CARDS: set[str] = set()  # cards displayed in this kernel: the ledger links only to those


def _elsewhere(claim) -> str:
    """"at paper scale: reproduced with caveat" for each scale whose shipped ledger differs."""
    n = len(claim.elsewhere)
    return ("; ".join(f"{st} at {sc} scale" for sc, st in claim.elsewhere.items())
            + (" (the ledger shipped for that scale)" if n == 1 else " (the ledgers shipped for those scales)"))


def claim_card(claim) -> str:
    """One claim as a card: status badge, kind and location, statement, measured value and how,
    the caveat if any."""
    color = STATUS_COLORS.get(claim.status, "#6e7781")
    _SHOWN_CARDS.add(anchor(claim))
    meta = " · ".join(html.escape(x) for x in (KIND_LABELS.get(claim.kind, claim.kind), claim.location, claim.id) if x)
    rows = [f'<div style="display:flex;flex-wrap:wrap;gap:.2em .6em;align-items:center">{badge(claim.status)}'
            f'<span style="font-size:.85em;color:{_MUTED}">{meta}</span></div>',
            f'<div class="icl-claim-statement mathjax_process" style="margin:.35em 0 .2em">{markdown_inline(claim.statement)}</div>']
    if claim.measured or claim.how:
        how = f' <span style="color:{_MUTED}">({markdown_inline(claim.how)})</span>' if claim.how else ""
        rows.append(f'<div class="mathjax_process" style="font-size:.92em"><strong>Measured:</strong> '
                    f"{markdown_inline(claim.measured) or '—'}{how}</div>")
    if claim.caveat:
        rows.append(f'<div class="mathjax_process" style="font-size:.92em"><strong>Caveat:</strong> '
                    f"{markdown_inline(claim.caveat)}</div>")
    if claim.elsewhere:
        rows.append(f'<div style="font-size:.92em"><strong>Other scales:</strong> {html.escape(_elsewhere(claim))}</div>')
    return (f'<div class="icl-claim-card" id="{anchor(claim)}" data-claim-id="{html.escape(claim.id)}" '
            f'data-status="{html.escape(claim.status)}" '
            f'style="border:1px solid #d0d7de;border-left:6px solid {color};border-radius:6px;'
            f'padding:.45em .8em;margin:.6em 0;max-width:100%;box-sizing:border-box">{"".join(rows)}</div>')


# -- ledgers -----------------------------------------------------------------------------------

_STYLE = """<style>
.icl-ledger .icl-scroll{overflow-x:auto;max-width:100%}
.icl-ledger table{border-collapse:collapse;width:100%;font-size:.9em;table-layout:auto}
.icl-ledger th,.icl-ledger td{border-bottom:1px solid #d0d7de;padding:.3em .45em;vertical-align:top;text-align:left}
.icl-ledger td.icl-status{white-space:nowrap}
.icl-ledger .icl-muted{color:#57606a;font-size:.88em}
.icl-ledger .icl-bar{display:flex;height:.7em;width:9em;border-radius:.35em;overflow:hidden;background:#eaeef2;flex:none}
.icl-ledger .icl-summary{display:flex;flex-wrap:wrap;align-items:center;gap:.2em .6em;margin:.15em 0;font-size:.9em}
.icl-ledger .icl-filters{display:flex;flex-wrap:wrap;gap:.4em .8em;margin:.4em 0;font-size:.9em}
.icl-ledger .icl-filters select,.icl-ledger .icl-filters input{font-size:1em;max-width:100%}
@media (max-width:640px){
 .icl-ledger thead{display:none}
 .icl-ledger table,.icl-ledger tbody,.icl-ledger tr,.icl-ledger td{display:block;width:100%;box-sizing:border-box}
 .icl-ledger tr{border-bottom:1px solid #d0d7de;padding:.3em 0}
 .icl-ledger td{border:none;padding:.1em .2em}
}
</style>"""

STATUS_ORDER = tuple(k for k in STATUS_COLORS if k != "pending")


def _counts(claims, kind) -> dict:
    out = {}
    for c in claims:
        if c.kind == kind:
            out[c.status] = out.get(c.status, 0) + 1
    return out


def summary_html(claims) -> str:
    """One line per kind present: a stacked bar of statuses and the counts in words."""
    lines = []
    for kind in KIND_LABELS:
        counts = _counts(claims, kind)
        total = sum(counts.values())
        if not total:
            continue
        order = [s for s in (*STATUS_ORDER, "pending") if counts.get(s)]
        bar = "".join(f'<span title="{html.escape(s)}: {counts[s]}" style="width:{100 * counts[s] / total:.1f}%;'
                      f'background:{STATUS_COLORS[s]}"></span>' for s in order)
        words = ", ".join(f"{counts[s]} {html.escape(s)}" for s in order)
        lines.append(f'<div class="icl-summary"><span class="icl-bar" role="img" aria-label="{words}">{bar}</span>'
                     f"<span><strong>{total} {(KIND_SINGULAR if total == 1 else KIND_PLURAL)[kind]}</strong>: {words}</span></div>")
    return "".join(lines)


def rules_link(root: Path | None = None) -> str:
    """A link to the page "How claims are judged", relative to the notebook being executed."""
    href = RULES_PAGE + ".html"
    root = root or book_root()
    if root is not None:
        href = os.path.relpath(root / href, Path.cwd().resolve()).replace(os.sep, "/")
    return f'<a href="{html.escape(href)}">How claims are judged</a>'


def _row(c, link: str | None = None, paper: bool = False, row_prefix: str = "ledger") -> str:
    ident = html.escape(c.id)
    if link:
        ident = f'<a href="{html.escape(link)}">{ident}</a>'
    where = f'<span class="icl-muted">{html.escape(c.paper) + " · " if paper else ""}{ident} · {html.escape(c.location)} · ' \
            f"{html.escape(KIND_LABELS.get(c.kind, c.kind))}</span>"
    measured = markdown_inline(c.measured) or "—"
    if c.how:
        measured += f'<br><span class="icl-muted">{markdown_inline(c.how)}</span>'
    if c.caveat:
        measured += f'<br><span class="icl-muted"><em>caveat:</em> {markdown_inline(c.caveat)}</span>'
    if c.elsewhere:
        measured += f'<br><span class="icl-muted"><em>other scales:</em> {html.escape(_elsewhere(c))}</span>'
    attrs = (f'data-claim-id="{html.escape(c.id)}" data-paper="{html.escape(c.paper)}" data-kind="{html.escape(c.kind)}" '
             f'data-status="{html.escape(c.status)}"')
    row_id = anchor(c, row_prefix)
    return (f'<tr id="{row_id}" {attrs}><td class="icl-status">{badge(c.status)}</td>'
            f'<td class="mathjax_process">{markdown_inline(c.statement)}<br>{where}</td>'
            f'<td class="mathjax_process">{measured}</td></tr>')


def _table(rows: str, tbody_id: str = "") -> str:
    tid = f' id="{tbody_id}"' if tbody_id else ""
    return ('<div class="icl-scroll"><table><thead><tr><th>status</th><th>claim</th><th>measured</th></tr></thead>'
            f"<tbody{tid}>{rows}</tbody></table></div>")


def ledger_html(ledger) -> str:
    """A chapter's ledger: summary of statuses by kind, link to the rules, responsive table."""
    claims = list(ledger)
    rows = "".join(_row(c, link="#" + anchor(c) if anchor(c) in _SHOWN_CARDS else None) for c in claims)
    title = html.escape(ledger.paper) + (f" ({html.escape(ledger.part)})" if getattr(ledger, "part", None) else "")
    return (f'{_STYLE}<div class="icl-ledger" data-paper="{html.escape(ledger.paper)}">'
            f'<div style="font-size:.9em;margin-bottom:.2em">Claims ledger of the {title} chapter '
            f"({rules_link()}).</div>{summary_html(claims)}{_table(rows)}</div>")


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
            rel = nb.relative_to(root).with_suffix(".html").as_posix()
            stem = nb.stem
            part = stem.removeprefix(folder.name + "_") if stem.startswith(folder.name + "_") else stem
            out[(folder.name, part)] = rel
        if len(nbs) == 1:
            out[(folder.name, "")] = nbs[0].relative_to(root).with_suffix(".html").as_posix()
    return out


class FilterableLedger:
    """Every exported claim in one table with filters by paper, kind and status (local JavaScript),
    each row linking to the claim's row in its chapter's ledger (which links to its card).
    ``claims_with_parts``: ``(claim, part)`` pairs, part being the notebook of a chapter split over
    several (:meth:`icl_lab.claims.ClaimsTable.load` reads them)."""

    def __init__(self, claims_with_parts, root: Path | None = None):
        order = {p: i for i, p in enumerate(PAPERS)}
        self.items = sorted(claims_with_parts, key=lambda cp: (order.get(cp[0].paper, len(order)), cp[0].paper))
        self.root = root or book_root()

    def _link(self, c, part: str, pages: dict) -> str | None:
        page = pages.get((c.paper, part)) or pages.get((c.paper, ""))
        if page is None:
            return None
        if self.root is not None:
            page = os.path.relpath(self.root / page, Path.cwd().resolve()).replace(os.sep, "/")
        return f"{page}#{anchor(c, 'ledger')}"

    def _repr_html_(self) -> str:
        uid = "icl" + uuid.uuid4().hex[:10]
        pages = evidence_pages(self.root) if self.root is not None else {}
        claims = [c for c, _ in self.items]
        rows = "".join(_row(c, link=self._link(c, part, pages), paper=True, row_prefix="all") for c, part in self.items)

        def select(name, values, label):
            opts = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values)
            return (f'<label>{label} <select data-filter="{name}"><option value="">all</option>{opts}</select></label>')

        papers = list(dict.fromkeys(c.paper for c in claims))
        kinds = [k for k in KIND_LABELS if any(c.kind == k for c in claims)]
        statuses = [s for s in (*STATUS_ORDER, "pending") if any(c.status == s for c in claims)]
        filters = (f'<div class="icl-filters" id="{uid}-f">{select("paper", papers, "paper")}'
                   f'{select("kind", kinds, "kind")}{select("status", statuses, "status")}'
                   f'<label>text <input type="search" data-filter="text" placeholder="words in the claim"></label>'
                   f'<span class="icl-muted" id="{uid}-n">{len(claims)} of {len(claims)} claims</span></div>')
        script = f"""<script>
(function() {{
  var box = document.getElementById("{uid}-f"), body = document.getElementById("{uid}-b");
  var count = document.getElementById("{uid}-n"), total = body.rows.length;
  function apply() {{
    var want = {{}};
    box.querySelectorAll("[data-filter]").forEach(function(el) {{ want[el.getAttribute("data-filter")] = el.value.toLowerCase(); }});
    var shown = 0;
    Array.prototype.forEach.call(body.rows, function(tr) {{
      var ok = ["paper", "kind", "status"].every(function(k) {{ return !want[k] || tr.getAttribute("data-" + k) === want[k]; }})
               && (!want.text || tr.textContent.toLowerCase().indexOf(want.text) >= 0);
      tr.style.display = ok ? "" : "none"; if (ok) shown++;
    }});
    count.textContent = shown + " of " + total + " claims";
  }}
  box.addEventListener("input", apply); box.addEventListener("change", apply);
}})();
</script>"""
        per_paper = "".join(f'<div style="margin:.3em 0"><strong>{html.escape(p)}</strong>'
                            f'{summary_html([c for c in claims if c.paper == p])}</div>' for p in papers)
        return (f'{_STYLE}<div class="icl-ledger icl-ledger-all">'
                f'<div style="font-size:.9em">Every claim of every chapter ({rules_link(self.root)}).</div>'
                f"{per_paper}{filters}{_table(rows, uid + '-b')}</div>{script}")
