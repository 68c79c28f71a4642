"""Benchmark: wall time of every chapter notebook in the table of contents, at ci and paper scale.

    .venv/bin/python benchmarks/book.py [--scales ci paper] [--threads 2]

Executes each notebook in a fresh kernel (as nbval and the book build do) and writes
benchmarks/out/book.json plus a Markdown table.  It reports; it never fails on slowness.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def toc_notebooks() -> list[Path]:
    out = []
    for line in (ROOT / "_toc.yml").read_text().splitlines():
        line = line.strip()
        if line.startswith("- file:") or line.startswith("file:"):
            f = line.split("file:", 1)[1].strip()
            if f.endswith(".ipynb"):
                out.append(ROOT / f)
    return out


def run(nb_path: Path, scale: str, threads: int) -> float:
    nb = nbformat.read(nb_path, as_version=4)
    env_before = dict(os.environ)
    os.environ.update(ICL_LAB_SCALE=scale, ICL_LAB_THREADS=str(threads), MPLBACKEND="Agg")
    try:
        t = time.perf_counter()
        NotebookClient(nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(nb_path.parent)}}).execute()
        return time.perf_counter() - t
    finally:
        os.environ.clear()
        os.environ.update(env_before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", nargs="+", default=["ci", "paper"])
    ap.add_argument("--threads", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "out"))
    args = ap.parse_args()
    rows = []
    for nb in toc_notebooks():
        for scale in args.scales:
            secs = run(nb, scale, args.threads)
            rows.append({"notebook": str(nb.relative_to(ROOT)), "scale": scale, "seconds": round(secs, 2)})
            print(f"{nb.relative_to(ROOT)} [{scale}]: {secs:.1f} s", flush=True)
    report = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": args.threads},
              "notebooks": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "book.json").write_text(json.dumps(report, indent=2))
    print("\n| notebook | scale | seconds (kernel start included) |\n|---|---|---|")
    for r in rows:
        print(f"| {r['notebook']} | {r['scale']} | {r['seconds']:.1f} |")


if __name__ == "__main__":
    main()
