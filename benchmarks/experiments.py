"""Benchmark: every registered experiment (``icl-lab list``) at ci and paper scale, timed, on the
available device — and, where a GPU is present, its float32 summary against the CPU's.

    .venv/bin/python benchmarks/experiments.py [--scales ci paper] [--only NAME ...] [--threads N]
        [--compare-devices]   # run each experiment on the CPU and on CUDA, report the largest difference
        [--against-references]  # at paper scale: the largest difference from the shipped reference's
                                # summary, and the time that reference took where it was computed

Writes benchmarks/out/experiments.json and a Markdown table. It reports; it never fails on slowness.
Each experiment runs in this process one after another (the paper-scale column is what a reader who
runs that experiment alone waits for); notebook times, figures included, are in benchmarks/book.py.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

import torch

import icl_lab
from icl_lab.registry import all_experiments
from icl_lab.reports import load_reference, provenance


def _numbers(x, path=""):
    """Flatten a summary into {path: float} for the numeric leaves (timings excluded)."""
    out = {}
    if isinstance(x, dict):
        for k, v in x.items():
            if "second" in k or k in ("wall", "cpu"):
                continue
            out.update(_numbers(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            out.update(_numbers(v, f"{path}[{i}]"))
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        out[path] = float(x)
    return out


def max_rel_diff(a: dict, b: dict) -> float:
    na, nb = _numbers(a), _numbers(b)
    worst = 0.0
    for k in na.keys() & nb.keys():
        x, y = na[k], nb[k]
        if math.isnan(x) and math.isnan(y):
            continue
        worst = max(worst, abs(x - y) / max(1e-6, abs(x), abs(y)))
    return worst


def run_one(exp, scale: str, device) -> tuple[dict, float, float]:
    cfg = exp.config.for_scale(scale)
    t, c = time.perf_counter(), time.process_time()
    try:
        res = exp.run(cfg, device=device)
    except TypeError:  # run functions without a device argument use the default device
        res = exp.run(cfg)
    return exp.summary(res), time.perf_counter() - t, time.process_time() - c


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", nargs="+", default=["ci", "paper"])
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--compare-devices", action="store_true")
    ap.add_argument("--against-references", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    args = ap.parse_args()
    threads = icl_lab.configure_threads(args.threads)
    dev = icl_lab.default_device()
    exps = all_experiments()
    names = args.only or list(exps)
    rows = []
    for name in names:
        for scale in args.scales:
            summary, wall, cpu = run_one(exps[name], scale, dev)
            row = {"experiment": name, "scale": scale, "device": str(dev), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
            if args.compare_devices and torch.cuda.is_available():
                other = torch.device("cpu") if dev.type == "cuda" else torch.device("cuda")
                s2, wall2, _ = run_one(exps[name], scale, other)
                row.update({"other_device": str(other), "other_wall_s": round(wall2, 2),
                            "max_rel_diff_vs_other": max_rel_diff(summary, s2)})
            if args.against_references and scale == "paper":
                ref = load_reference(name)
                if ref.summary is not None and ref.complete:
                    p = provenance(ref.records)
                    row.update({"reference_wall_s": round(p["wall_seconds"], 1), "reference_cpu_s": round(p["cpu_seconds"], 1),
                                "reference_hosts": p["hosts"], "reference_devices": p["devices"],
                                "max_rel_diff_vs_reference": max_rel_diff(summary, ref.summary)})
            rows.append(row)
            print(json.dumps(row), flush=True)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    report = {"machine": {"platform": platform.platform(), "processor": platform.processor(), "torch": torch.__version__,
                          "threads": threads, "device": str(dev), "gpu": gpu}, "experiments": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "experiments.json").write_text(json.dumps(report, indent=2))
    lines = [f"Device {dev}{f' ({gpu})' if gpu else ''}, {threads} torch threads.", "",
             "| experiment | scale | wall (s) | CPU (s) |", "|---|---|---|---|"]
    lines += [f"| {r['experiment']} | {r['scale']} | {r['wall_s']} | {r['cpu_s']} |" for r in rows]
    (out / "experiments.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
