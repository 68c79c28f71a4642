"""Benchmark: wall and CPU time of every notebook of the table of contents, at ci and book scale.

    .venv/bin/python benchmarks/book.py [--scales ci book] [--threads 2] [--out benchmarks/results] [--merge]

Executes each notebook in a fresh kernel (as nbval and the book build do), one after the other, and
writes ``<out>/book.json`` (per notebook: wall seconds, the kernel's CPU seconds, the machine's load
average before and after, the commit and the date; the machine), plus a Markdown table on stdout.
``--merge`` keeps the existing file's rows this run does not measure again: those of the scales not run
(e.g. to add the hour of ``--scales paper`` to a ci/book measurement) and, with ``--only``, those of the
other notebooks.
The reproduction page shows the latest file. It reports; it never fails on slowness.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import time
from pathlib import Path

import nbformat

from icl_lab.render import md_table
from icl_lab.reports import toc_notebooks
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(nb_path: Path, scale: str, threads: int) -> dict:
    """Execute one notebook in a fresh kernel; the kernel is a child process, so its CPU time is the
    growth of this process's children's CPU time once it has exited."""
    nb = nbformat.read(nb_path, as_version=4)
    env_before = dict(os.environ)
    os.environ.update(ICL_LAB_SCALE=scale, ICL_LAB_THREADS=str(threads), MPLBACKEND="Agg")
    load0 = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        t = time.perf_counter()
        NotebookClient(nb, timeout=7200, kernel_name="python3",
                       resources={"metadata": {"path": str(nb_path.parent)}}).execute()
        wall = time.perf_counter() - t
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return {"notebook": str(nb_path.relative_to(ROOT)), "scale": scale, "wall_seconds": round(wall, 1),
            "cpu_seconds": round(cpu, 1), "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2),
            "commit": commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", nargs="+", default=["ci", "book"])
    ap.add_argument("--threads", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--only", nargs="*", default=None, help="notebook paths (default: the whole table of contents)")
    ap.add_argument("--merge", action="store_true", help="keep the existing file's rows that this run does not measure again (other scales, other notebooks)")
    args = ap.parse_args()
    rows = []
    out = Path(args.out)
    nbs = [ROOT / p for p in args.only] if args.only else toc_notebooks()
    if args.merge and (out / "book.json").exists():
        # keep every row this run does not measure again: the other scales, and with --only the other notebooks
        old = json.loads((out / "book.json").read_text())
        again = {(str(nb.relative_to(ROOT)), s) for nb in nbs for s in args.scales}
        rows = [{**r, "commit": r.get("commit", old.get("commit")), "date": r.get("date", old.get("date"))}
                for r in old.get("notebooks", []) if (r["notebook"], r["scale"]) not in again]
    for scale in args.scales:
        for nb in nbs:
            r = run(nb, scale, args.threads)
            rows.append(r)
            print(f"{r['notebook']} [{scale}]: {r['wall_seconds']:.1f} s wall, {r['cpu_seconds']:.1f} s CPU, "
                  f"load {r['load_before']} -> {r['load_after']}", flush=True)
    report = {"machine": {"platform": platform.platform(), "cpu": cpu_model(), "cpus": os.cpu_count(),
                          "threads": args.threads, "gpu": "none used"},
              "commit": commit(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "notebooks": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "book.json").write_text(json.dumps(report, indent=2) + "\n")
    print("\n" + md_table(["notebook", "scale", "wall s", "CPU s"],
                          [[r["notebook"], r["scale"], f"{r['wall_seconds']:.1f}", f"{r['cpu_seconds']:.1f}"] for r in rows]))


if __name__ == "__main__":
    main()
