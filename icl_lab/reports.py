"""What the reproduction page reports: the book's deviations from the papers' settings, the
measured time of every notebook, the shipped reference results, and the claims whose status
differs between scales."""
from __future__ import annotations

import json
from pathlib import Path

from .claims import ClaimsTable, compare

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results" / "reference"


def toc_notebooks() -> list[Path]:
    """The notebooks of the table of contents, in book order."""
    out = []
    for line in (ROOT / "_toc.yml").read_text().splitlines():
        line = line.strip()
        if line.startswith("- file:") or line.startswith("file:"):
            f = line.split("file:", 1)[1].strip()
            if f.endswith(".ipynb"):
                out.append(ROOT / f)
    return out


def _cell(v) -> str:
    if isinstance(v, tuple):
        v = list(v)
    s = str(v)
    return (s if len(s) <= 60 else s[:57] + "...").replace("|", "\\|")


def deviation_rows() -> list[dict]:
    """Every reduction of the paper's setting at ``book`` scale, as declared next to each config."""
    from .registry import all_experiments

    rows, seen = [], set()
    for name, exp in sorted(all_experiments().items()):
        cls = exp.config
        for dev in cls.deviations():
            key = (cls.__name__, dev["field"])
            if key in seen:
                continue
            seen.add(key)
            rows.append(dict(experiment=name, location=exp.location, **dev))
    return rows


def deviations_markdown() -> str:
    rows = deviation_rows()
    if not rows:
        return "At `book` scale every experiment runs with the paper's parameters."
    out = ["| experiment | paper location | parameter | paper | book | why |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| `{r['experiment']}` | {r['location']} | `{r['field']}` | {_cell(r['paper'])} | "
                   f"{_cell(r['book'])} | {r['why']} |")
    return "\n".join(out)


def timings_markdown(path: Path | None = None) -> str:
    path = path or ROOT / "benchmarks" / "results" / "book.json"
    if not path.exists():
        return "No timings recorded yet: run `benchmarks/book.py`."
    data = json.loads(path.read_text())
    m = data.get("machine", {})
    rows = {}
    for r in data.get("notebooks", []):
        rows.setdefault(r["notebook"], {})[r["scale"]] = r
    scales = sorted({r["scale"] for r in data.get("notebooks", [])}, key=["ci", "book", "paper"].index)
    head = "| notebook | " + " | ".join(f"`{s}` wall / CPU (s)" for s in scales) + " |"
    out = [head, "|---" * (len(scales) + 1) + "|"]
    tot = {s: [0.0, 0.0] for s in scales}
    for nb, per in rows.items():
        cells = []
        for s in scales:
            r = per.get(s)
            if r:
                tot[s][0] += r["wall_seconds"]
                tot[s][1] += r["cpu_seconds"]
            cells.append(f"{r['wall_seconds']:.0f} / {r['cpu_seconds']:.0f}" if r else "—")
        out.append(f"| {nb} | " + " | ".join(cells) + " |")
    out.append("| **all, one after the other** | " + " | ".join(f"**{tot[s][0]:.0f} / {tot[s][1]:.0f}**" for s in scales) + " |")
    loads = [r["load_before"] for r in data.get("notebooks", [])]
    note = (f"\n\nMeasured on {m.get('cpus', '?')} cores ({m.get('cpu', '?')}), {m.get('threads', '?')} torch threads, "
            f"GPU: {m.get('gpu', 'none')}, commit {data.get('commit', '?')}, {data.get('date', '?')}; "
            f"load average before each notebook between {min(loads):.2f} and {max(loads):.2f}."
            if loads else "")
    return "\n".join(out) + note


def reference_rows() -> list[dict]:
    """The shipped reference records (``results/reference/**/*.json``)."""
    rows = []
    for p in sorted(REFERENCE.glob("*/*.json")):
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(rec, dict) or "experiment" not in rec:
            continue
        meta = rec.get("meta") if isinstance(rec.get("meta"), dict) else {}
        code = meta.get("code") if isinstance(meta.get("code"), dict) else {}
        rows.append({"experiment": rec["experiment"], "file": str(p.relative_to(ROOT)),
                     "date": str(meta.get("started", "")), "commit": str(code.get("git_commit") or ""),
                     "host": str(meta.get("host", "")), "wall_seconds": meta.get("wall_seconds"),
                     "cpu_seconds": meta.get("cpu_seconds")})
    return rows


def scale_differences_markdown(a: str = "ci", b: str = "book") -> str:
    """The claims whose status differs between the ledgers shipped for two scales."""
    da, db = REFERENCE / "claims" / a, REFERENCE / "claims" / b
    if not (da.is_dir() and db.is_dir()):
        return f"No shipped ledgers for both `{a}` and `{b}` scale yet."
    diff = compare(ClaimsTable.load(da), ClaimsTable.load(db))
    if not diff:
        return f"Every claim has the same status at `{a}` and `{b}` scale."
    out = [f"| paper | claim | kind | `{a}` | `{b}` | measured at `{a}` | measured at `{b}` |", "|---|---|---|---|---|---|---|"]
    for d in diff:
        out.append(f"| {d['paper']} | {d['id']} | {d['kind']} | {d['a']} | {d['b']} | {_cell(d['measured_a'])} | "
                   f"{_cell(d['measured_b'])} |")
    return "\n".join(out)
