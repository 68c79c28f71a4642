"""Where things are: the book's root, the results folder, the exported and shipped ledgers (a leaf
module: it imports nothing of the library)."""
from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path
from typing import Callable

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


def atomic_write(path: str | os.PathLike, write: Callable) -> Path:
    """Write ``path`` whole or not at all: ``write(f)`` fills a temporary file (binary, mode 0o666 less the
    umask) beside it, which is flushed, fsynced and renamed over ``path`` (:func:`os.replace`); the folder is
    fsynced where the platform allows it. On any failure, an interrupt included, the temporary file is
    removed and ``path`` is as it was. The one way the library writes a file another process may read."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return path
