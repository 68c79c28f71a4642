"""Execute the book's notebooks a few at a time into Jupyter Book's execution cache.

    python tools/execute_parallel.py _build/book/_build/.jupyter_cache --jobs 2

``jupyter-book build`` with ``execute_notebooks: cache`` executes notebooks one after the other and
re-uses a cached execution whenever a notebook's code is unchanged. This script fills that same
cache (jupyter-cache, the library Jupyter Book uses) with several kernels at once, so the build
that follows only reads the outputs. Notebooks whose metadata forces execution on every build
(``mystnb: execution_mode: force``: the synthesis, which reads every chapter's ledger, and the
reproduction page) are left to the build. Each kernel inherits the environment (``ICL_LAB_SCALE``,
``ICL_LAB_THREADS``). The longest notebooks start first (their last measured time, else the order
of the table of contents). A notebook that fails (its kernel died or stopped answering, which a loaded
machine can cause) is executed once more, alone, with a warning in the log; a second failure exits non-zero
naming the notebook and showing the end of its traceback. The kernel client polls for replies in
slices of a second (``_ext/kernel_poll.py``): its event loop sometimes missed a reply after a widget
cell, and the notebook then sat idle until the cell timeout.

It prints one line when a notebook starts and one when it ends (with its seconds), so a long build is
never silent. Each kernel's log line "Kernel is running over TCP without encryption" (ipykernel's
kernelapp warns at every start when the transport is TCP: the kernels here are local, started by
jupyter_client on 127.0.0.1) is dropped from the kernels' stderr; every other line passes through.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import threading
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def forced(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    return nb.metadata.get("mystnb", {}).get("execution_mode") == "force"


# the one known-harmless line a kernel logs at every start (ipykernel.kernelapp.IPKernelApp.init_sockets)
HARMLESS = (b"Kernel is running over TCP without encryption.",)


def filter_stderr(harmless=HARMLESS):
    """Route this process's stderr (file descriptor 2, which the kernels started from here inherit)
    through a pipe that drops the lines containing one of ``harmless`` and passes every other line
    on. Returns a function that restores stderr and forwards what is left."""
    sys.stderr.flush()
    saved = os.dup(2)
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)

    def pump():
        with os.fdopen(read, "rb") as src:
            for line in src:
                if not any(h in line for h in harmless):
                    os.write(saved, line)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()

    def restore():
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe closes once no process of ours holds its write end any more
        thread.join(timeout=5)

    return restore


def _execute(args):
    cache_path, pk, uri, timeout = args
    sys.path.insert(0, str(ROOT / "_ext"))
    from kernel_poll import install

    install()  # a reply the event loop missed is read within a second, not after the cell timeout
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ProcessData

    print(f"  {_name(uri)}: started", flush=True)
    t = time.perf_counter()
    code, _ = ExecutionWorkerLocalMProc()(ProcessData(pk, uri, get_cache(cache_path), timeout, False))
    return uri, code, time.perf_counter() - t


def _name(uri) -> str:
    path = Path(uri).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", help="the build's jupyter-cache folder, e.g. _build/book/_build/.jupyter_cache")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--notebooks", nargs="+", type=Path, help="these notebooks instead of the table of contents'")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        print("execute_parallel: --jobs must be >= 1", file=sys.stderr)
        return 2
    from jupyter_cache import get_cache

    cache = get_cache(args.cache)
    if args.notebooks:
        notebooks = args.notebooks
    else:  # imported here, not at the top: the spawned workers re-import this module, and the library's import
        from icl_lab.reports import toc_notebooks  # (torch) would add seconds to every worker's start

        notebooks = toc_notebooks()
    todo = []
    for nb in notebooks:
        if forced(nb):
            continue
        rec = cache.add_nb_to_project(str(nb))
        if cache.get_cached_project_nb(rec.pk) is None:  # no cached execution of this exact code
            todo.append((rec.pk, str(nb)))
    if not todo:
        print("execute_parallel: every notebook's execution is cached")
        return 0
    # the last measured time at this scale ($ICL_LAB_SCALE), else at any scale; paths as given or absolute
    last, scale = {}, os.environ.get("ICL_LAB_SCALE", "book")
    timings = ROOT / "benchmarks" / "results" / "book.json"
    if timings.exists():
        for r in json.loads(timings.read_text()).get("notebooks", []):
            key, secs = str((ROOT / r["notebook"]).resolve()), r.get("wall_seconds") or 0
            rank = (r.get("scale") == scale, secs)
            last[key] = max(last.get(key, (False, 0)), rank)
    todo.sort(key=lambda t: tuple(-v for v in last.get(str(Path(t[1]).resolve()), (False, 0))))
    print(f"execute_parallel: {len(todo)} notebook(s), {args.jobs} at a time", flush=True)
    restore = filter_stderr()
    try:
        return _run(args, cache, todo)
    finally:
        restore()


def _run(args, cache, todo) -> int:
    pk_of = {uri: pk for pk, uri in todo}
    failed = []
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for uri, code, secs in pool.imap_unordered(_execute, [(args.cache, pk, uri, args.timeout) for pk, uri in todo],
                                                    chunksize=1):
            print(f"  {_name(uri)}: {'finished' if code == 0 else 'FAILED'} in {secs:.0f} s", flush=True)
            if code != 0:
                failed.append((pk_of[uri], uri))
    still = []
    for pk, uri in failed:  # once more, alone: a kernel that died under load usually runs through
        print(f"execute_parallel: WARNING: {_name(uri)} failed (an error, or its kernel died or stopped "
              "answering); executing it once more, alone", flush=True)
        _, code, secs = _execute((args.cache, pk, uri, args.timeout))
        print(f"  {_name(uri)}: {'finished' if code == 0 else 'FAILED again'} in {secs:.0f} s", flush=True)
        if code != 0:
            still.append((pk, uri))
    for pk, uri in still:
        tb = cache.get_project_record(pk).traceback or "(no traceback recorded)"
        print(f"execute_parallel: {_name(uri)} failed twice; the end of its traceback:\n{tb[-3000:]}", file=sys.stderr)
    if still:
        print(f"execute_parallel: failed twice: {', '.join(_name(u) for _, u in still)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
