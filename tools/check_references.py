"""CI: every shipped reference record is one the current code reproduces.

For every experiment with records in ``results/reference/``:

1. every record's fingerprint must be the experiment's current one (:func:`icl_lab.records.fingerprint`):
   a record computed by other code fails, naming the command that regenerates it;
2. its cheapest record (the seed chunk that took the least CPU time) is computed again with the
   current code, one torch thread as it was stored, and its summary must equal the stored one bit for
   bit (run times aside): on the same kind of CPU, the same code and thread count give the same floats.

Bit for bit holds within one kind of CPU only (:func:`icl_lab.records.cpu_kind`, stored in each record's
``meta.cpu_kind``): math libraries pick other vector kernels on other CPUs, the last bits differ and a
training amplifies them (two kinds of machine lent here differ by 3e-7 in a window-paper fit and by
10-20 % in a selectors training). So a record of another kind is not recomputed (reported, not failed),
and records from before kinds were stored (no ``cpu_kind``) are recomputed: when at least half of them
differ, this machine is taken to be of another kind than theirs and their differences are reported, not
failed; otherwise every difference fails.

3. every stored full result in ``results/reference/full/`` (:mod:`icl_lab.memo`: what the pages draw at
   paper scale) must be current, and those that took at most ``--full-seconds`` of CPU time are computed
   again and compared bit for bit (tensors, arrays, floats, trained weights), on their kind of CPU; the
   longer ones (the trainings a laptop cannot redo in CI's budget) are checked by fingerprint only.

Two records are recomputed at a time (one per core). Prints one line per experiment and the total
time; exits 1 on any failure::

    .venv/bin/python tools/check_references.py            # all of them
    .venv/bin/python tools/check_references.py window.fig3_norm_vs_L
"""
from __future__ import annotations

import argparse
import os
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from icl_lab import paths, registry  # noqa: E402
from icl_lab.store import strip_timings  # noqa: E402
from icl_lab.records import config_from_json, cpu_kind  # noqa: E402
from icl_lab.store import ResultsStore  # noqa: E402
from icl_lab.runner import run_and_record  # noqa: E402


def _differences(a, b, where="summary", out=None) -> list[str]:
    """Where two JSON values differ (at most a few places), with the size of numeric differences."""
    out = [] if out is None else out
    if len(out) >= 3:
        return out
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            _differences(a[k], b[k], f"{where}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _differences(x, y, f"{where}[{i}]", out)
    elif a != b and not (a != a and b != b):  # NaN equals NaN here
        num = isinstance(a, (int, float)) and isinstance(b, (int, float))
        out.append(f"{where}: {a!r} vs {b!r}" + (f" (relative {abs(a - b) / max(abs(a), abs(b), 1e-300):.1e})"
                                                 if num else ""))
    return out


def recompute(name: str, rec: dict) -> tuple[str, bool, float, str]:
    """Compute a stored record's config again; (name, identical, seconds, what differs)."""
    exp = registry.all_experiments()[name]
    cfg = config_from_json(exp.config, rec["config"])
    t0 = time.perf_counter()
    new = run_and_record(name, cfg, threads=int(rec["meta"].get("threads") or 1), device="cpu")
    timings = exp.summary_keys.timings
    old, now = strip_timings(rec["summary"], timings), strip_timings(new["summary"], timings)
    same = json.dumps(old, sort_keys=True) == json.dumps(now, sort_keys=True)
    return name, same, time.perf_counter() - t0, "; ".join(_differences(old, now))


def recompute_full(meta_path: str) -> tuple[str, bool, float, str]:
    """Compute a stored full result again, with the torch threads it was stored with; (path, identical,
    seconds, what differs)."""
    import torch

    from icl_lab import memo
    from icl_lab.config import configure_threads

    meta = json.loads(Path(meta_path).read_text())
    # the threads it was stored with, and the allocator tuning the pages run with: where a buffer lands can
    # change a vector kernel's last bits (seen: the convergence theory model's Adam curves 1e-7 apart without it)
    configure_threads(int(meta.get("threads") or 1))
    old = torch.load(Path(meta_path).with_suffix(".pt"), map_location="cpu", weights_only=False)
    t0 = time.perf_counter()
    new = memo.recompute(meta)
    diff = memo.differences(old, new)
    return meta_path, not diff, time.perf_counter() - t0, "; ".join(diff)


def check_full(jobs: int, limit: float, here: str) -> tuple[list[str], list[str], int]:
    """The stored full results (results/reference/full): every one current, and those that took at most
    ``limit`` CPU seconds computed again bit for bit (on their CPU kind). (failures, notes, recomputed)."""
    from icl_lab import memo

    failures, notes, todo = [], [], []
    for m in memo.stored():
        name = m["call"]["function"]
        if not m["current"]:
            failures.append(f"full result {m['path']} ({name}) was computed by other code; regenerate: "
                            "tools/reference_pages.sh")
        elif m.get("cpu_kind") != here:
            notes.append(f"{name} (full result computed on CPU kind {m.get('cpu_kind')})")
        elif m["cpu_seconds"] <= limit:
            todo.append(m["path"])
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        for path, same, seconds, diff in pool.map(recompute_full, todo) if todo else ():
            name = json.loads(Path(path).read_text())["call"]["function"]
            print(f"{'ok  ' if same else 'DIFF'} full result {name} ({Path(path).stem[:8]}): recomputed in {seconds:.0f} s"
                  + ("" if same else f"; differs: {diff}; regenerate: tools/reference_pages.sh"), flush=True)
            if not same:
                failures.append(f"full result {path} ({name}): the current code does not reproduce it ({diff})")
    return failures, notes, len(todo)


def judge(results: list[tuple[str, bool, str]], unknown: set[str]) -> tuple[list[str], list[str], bool]:
    """Failures and not-comparable notes from recomputed records ``(name, identical, what differs)``.

    ``unknown`` names the records stored without a CPU kind. When at least half of those differ here,
    this machine is taken to be of another kind than theirs: their differences are reported, not
    failed. A record of this machine's kind (not in ``unknown``) that differs always fails, and so does
    one without a kind when most of the others reproduce."""
    differ_unknown = [n for n, same, _ in results if n in unknown and not same]
    another_kind = bool(unknown) and 2 * len(differ_unknown) >= len(unknown)
    failures, other = [], []
    for name, same, diff in results:
        if same:
            continue
        if name in unknown and another_kind:
            other.append(f"{name} (no CPU kind stored; differs here: {diff.split(';')[0]})")
        else:
            failures.append(f"{name}: the current code does not reproduce its reference ({diff})")
    return failures, other, another_kind


def main(argv=None) -> int:
    os.environ["ICL_LAB_PROGRESS"] = "0"  # no progress bars from the recomputations
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="experiments to check (default: every one with shipped records)")
    ap.add_argument("--jobs", type=int, default=2, help="records recomputed at a time (default 2)")
    ap.add_argument("--fingerprints-only", action="store_true",
                    help="only check that every reference record and stored full result is current (seconds)")
    ap.add_argument("--full-seconds", type=float, default=30.0,
                    help="recompute the stored full results that took at most this much CPU time (default 30)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    exps = registry.all_experiments()
    by_name: dict[str, list] = {}
    failures, other, here = [], [], cpu_kind()
    for path, rec, err in ResultsStore(paths.REFERENCE, reference=False).records(experiments=exps):
        if path.parent.name not in exps or (args.names and path.parent.name not in args.names):
            continue  # e.g. results/reference/claims: ledgers, not records
        if rec is None:
            failures.append(f"{path.parent.name}: {err}")
        else:
            by_name.setdefault(rec["experiment"], []).append(rec)
    todo = []
    for name, recs in sorted(by_name.items()):
        stale = [r for r in recs if (r["meta"].get("code") or {}).get("fingerprint") != exps[name].fingerprint]
        if stale:
            failures.append(f"{name}: {len(stale)} of {len(recs)} reference records were computed by other code; "
                            f"regenerate them: tools/reference_runs.sh {name}")
            continue
        cheapest = min(recs, key=lambda r: r["meta"].get("cpu_seconds") or 0.0)
        kind = cheapest["meta"].get("cpu_kind")
        if kind is not None and kind != here:
            other.append(f"{name} (computed on CPU kind {kind})")
            continue
        todo.append((name, cheapest))
    if args.fingerprints_only:
        todo, other = [], []
    unknown = {name for name, rec in todo if rec["meta"].get("cpu_kind") is None}
    results = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, same, seconds, diff in pool.map(recompute, *zip(*todo)) if todo else ():
            print(f"{'ok  ' if same else 'DIFF'} {name}: cheapest record recomputed in {seconds:.0f} s"
                  + ("" if same else f"; differs: {diff}; regenerate: tools/reference_runs.sh {name}"), flush=True)
            results.append((name, same, diff))
    fails, others, another_kind = judge(results, unknown)
    failures += fails
    other += others
    full_failures, full_other, full_done = ([], [], 0) if args.names else check_full(
        args.jobs, -1.0 if args.fingerprints_only else args.full_seconds, here)
    failures += full_failures
    other += full_other
    if another_kind:
        print(f"{sum(1 for n, same, _ in results if n in unknown and not same)} of the {len(unknown)} records stored "
              f"without a CPU kind differ here: this machine (CPU kind {here}) is taken to be of another kind than theirs")
    for o in other:
        print(f"not comparable bit for bit on this kind of CPU: {o}")
    print(f"{len(todo)} references and {full_done} full results recomputed, {len(other)} not comparable on this CPU kind, "
          f"{len(failures)} failure(s), "
          f"{time.perf_counter() - t0:.0f} s in all")
    for f in failures:
        print(f"FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
