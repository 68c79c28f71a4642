"""Rewrite the ``elsewhere`` field of every claim in the shipped ledgers from the ledgers themselves.

A chapter's ledger notes, for each claim, the status the ledgers shipped for the other scales give it
where that differs (``results/reference/claims/<scale>/``). Ledgers regenerated one scale after another
read each other's previous versions, so after copying new ledgers in, run this once::

    .venv/bin/python tools/refresh_elsewhere.py          # rewrite
    .venv/bin/python tools/refresh_elsewhere.py --check  # exit 1 if any note is stale (tests run this)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "results" / "reference" / "claims"


def ledgers() -> dict[Path, dict]:
    return {p: json.loads(p.read_text()) for p in sorted(CLAIMS.glob("*/*.json"))}


def expected(all_ledgers: dict[Path, dict]) -> dict[Path, dict]:
    """Each file's content with every claim's ``elsewhere`` recomputed."""
    status = {(p.parent.name, c["paper"], c["id"]): c["status"] for p, d in all_ledgers.items() for c in d["claims"]}
    scales = [s for s in ("ci", "book", "paper") if any(k[0] == s for k in status)]
    out = {}
    for p, d in all_ledgers.items():
        here = p.parent.name
        claims = []
        for c in d["claims"]:
            other = {s: status[(s, c["paper"], c["id"])] for s in scales
                     if s != here and (s, c["paper"], c["id"]) in status and status[(s, c["paper"], c["id"])] != c["status"]}
            claims.append({**c, "elsewhere": other} if other or "elsewhere" in c else c)
        out[p] = {**d, "claims": claims}
    return out


def stale() -> list[str]:
    have = ledgers()
    want = expected(have)
    return [f"{p.relative_to(ROOT)}: {c['id']} notes {c.get('elsewhere')} where the shipped ledgers give {w['elsewhere']}"
            for p in have for c, w in zip(have[p]["claims"], want[p]["claims"]) if c.get("elsewhere", {}) != w.get("elsewhere", {})]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        problems = stale()
        print("\n".join(problems) or "every shipped ledger's notes on the other scales are current")
        return 1 if problems else 0
    for p, d in expected(ledgers()).items():
        text = json.dumps(d, indent=2)  # as Ledger.export writes it
        if p.read_text() != text:
            p.write_text(text)
            print(f"rewrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
