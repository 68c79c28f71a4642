"""Where things are: the book's root, the results folder, the exported and shipped ledgers (a leaf
module: it imports nothing of the library)."""
from __future__ import annotations

import os
from pathlib import Path

#: the repository holding the package (the shipped references live beside it)
REPOSITORY = Path(__file__).resolve().parents[1]
#: paper-scale reference records shipped with the book; ``$ICL_LAB_REFERENCE`` points elsewhere
REFERENCE = Path(os.environ.get("ICL_LAB_REFERENCE") or REPOSITORY / "results" / "reference")


def book_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: the working directory) with the book's ``_config.yml``."""
    here = (start or Path.cwd()).resolve()
    return next((p for p in [here, *here.parents] if (p / "_config.yml").exists()), None)


def results_dir() -> Path:
    """``results/`` at the book's root, else ``./results`` (``$ICL_LAB_RESULTS`` is read by the store)."""
    return (book_root() or Path.cwd().resolve()) / "results"


def claims_dir(scale: str) -> Path:
    """Where the chapters export their ledgers: ``$ICL_LAB_CLAIMS_DIR``, else ``_build/claims/<scale>``."""
    env = os.environ.get("ICL_LAB_CLAIMS_DIR")
    return Path(env) if env else (book_root() or Path.cwd().resolve()) / "_build" / "claims" / scale
