"""One ledger for a chapter split over several notebooks.

The ledger export writes one file per paper (``<claims dir>/window.json``).  The window chapter has
two notebooks, each checking its own claims (ids starting ``T-`` for the theory part, ``E-`` for the
experiments).  :func:`export_part` writes this notebook's claims and keeps the claims of the other
part already in the file, so the file holds the whole chapter whichever notebook runs last, and a
re-run of one part replaces only that part's claims.
"""
from __future__ import annotations

import json
from pathlib import Path

from ... import _checks as chk
from ...claims import Claim, Ledger, claims_dir


def merged_ledger(ledger: Ledger, prefix: str, directory=None) -> Ledger:
    """``ledger``'s claims (all ids must start with ``prefix``) plus the other parts' claims found in
    the exported file."""
    bad = [c.id for c in ledger if not c.id.startswith(prefix)]
    if bad:
        raise chk.ConfigError(f"claim ids {bad} do not start with this part's prefix {prefix!r}")
    path = Path(directory if directory is not None else claims_dir()) / f"{ledger.paper}.json"
    merged = Ledger(ledger.paper)
    others = []
    if path.exists():
        data = json.loads(path.read_text())
        others = [Claim(**c) for c in data.get("claims", []) if not c["id"].startswith(prefix)]
    # parts in a stable order: theory (T-) before experiments (E-)
    for c in sorted([*ledger, *others], key=lambda c: (not c.id.startswith("T-"), 0)):
        merged.claims[c.id] = c
    return merged


def export_part(ledger: Ledger, prefix: str, directory=None) -> Path:
    """Export ``ledger`` merged with the other parts' claims; returns the file written."""
    return merged_ledger(ledger, prefix, directory).export(directory)
