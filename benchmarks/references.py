"""Profile of the shipped references: where a regeneration's time goes, from a short slice of each.

    .venv/bin/python benchmarks/references.py --profile [--steps 12] [--only NAME ...] [--full 4]
    .venv/bin/python benchmarks/references.py --compare-threads NAME ... [--steps 20] [--repeat 3]

For every shipped reference experiment (those ``tools/reference_runs.sh`` regenerates) it runs the
configuration of its cheapest stored record (one seed chunk, at paper shapes) in this process, and
for the ``--full`` heaviest stored full results (``tools/reference_pages.sh``) their stored call. The
first batched training (:func:`icl_lab.train.train`) of each run is timed phase by phase for
``--warmup`` + ``--steps`` steps and then stopped:

* ``sampling``: the sampler's ``sample_runs`` (fresh prompts; a fixed set's mini-batch gather is in
  ``other``);
* ``forward``: the model's forward pass with gradients (forward hooks on the model);
* ``backward``: ``Tensor.backward``;
* ``optimizer``: :class:`icl_lab.train.BatchedOptimizer` ``.step``;
* ``other``: the rest of a step (the loss, a fixed set's mini-batch, the trainer's Python);
* ``evaluation``: one call of the training's ``record`` callback (its measurements), and how many
  the whole training makes.

Every phase is measured in CPU time of the calling thread (``time.thread_time``), which a loaded
machine disturbs far less than wall time; run with one torch thread (the references' setting).
The estimate of a task's CPU time is ``setup + steps * step + records * evaluation`` (setup: the CPU
time before the training starts); times the number of stored records it estimates the experiment's
regeneration. Where a run trains more than once or computes much after its training, the estimate
covers the first training only: the table then shows it well below the stored records' CPU time
(``covers`` < 70 %). An experiment without a batched training runs whole.

``--compare-threads NAME ...`` measures instead how a reference's training steps use the two cores:
the same slice on 1 thread, on 2 threads, and as 2 processes of 1 thread at once (what two Dask
workers do), each in a fresh process, the three interleaved ``--repeat`` times; it reports the
steps per second of wall time (all processes together), medians, and the load average
(benchmarks/out/references_threads.json).

Writes benchmarks/out/references_profile.json and .md; it reports, it never fails.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from icl_lab import memo, paths, registry  # noqa: E402
from icl_lab.config import configure_threads  # noqa: E402
from icl_lab.records import config_from_json  # noqa: E402

train_module = sys.modules["icl_lab.train"]  # the module (the package's ``train`` is the function)

PHASES = ("sampling", "forward", "backward", "optimizer", "other")
EXTRA = ("selectors.theorem1", "synthesis.cross_paper")  # as tools/reference_runs.sh


class SliceDone(Exception):
    """Raised inside the first training once its slice is measured."""


def reference_experiments() -> list[str]:
    exps = registry.all_experiments()
    names = [n for n, e in sorted(exps.items()) if e.config.deviations()]
    return names + [n for n in EXTRA if n in exps and n not in names]


class Profiler:
    """Wraps :func:`icl_lab.train.train` everywhere it was imported, for one measured run at a time."""

    def __init__(self, steps: int, warmup: int):
        self.steps, self.warmup = steps, warmup
        self.original = train_module.train
        self.patched = []
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("icl_lab") and getattr(mod, "train", None) is self.original:
                setattr(mod, "train", self.train)
                self.patched.append(mod)
        self.result = None

    def restore(self):
        for mod in self.patched:
            mod.train = self.original

    def train(self, model, data, **kw):
        if self.result is not None:  # only the first training of a run is measured
            return self.original(model, data, **kw)
        clock = time.thread_time
        acc = dict.fromkeys(PHASES + ("evaluation",), 0.0)
        acc_steps = {"n": 0, "t_step": None, "measured": 0, "step_total": 0.0, "rec_n": 0, "w_step": None,
                     "wall_total": 0.0}
        setup = clock() - self.t_start
        warm = self.warmup

        def counting() -> bool:
            return acc_steps["n"] >= warm

        def add(name, t0):
            if counting():
                acc[name] += clock() - t0

        fwd_t0 = {}

        def pre(mod, args):
            if torch.is_grad_enabled():
                fwd_t0["t"] = clock()

        def post(mod, args, out):
            if torch.is_grad_enabled() and "t" in fwd_t0:
                add("forward", fwd_t0.pop("t"))

        h1, h2 = model.register_forward_pre_hook(pre), model.register_forward_hook(post)
        record = kw.get("record")
        if record is not None:
            def timed_record(m, step):
                t0 = clock()
                out = record(m, step)
                acc["evaluation"] += clock() - t0
                acc_steps["rec_n"] += 1
                return out
            kw["record"] = timed_record
        if hasattr(data, "sample_runs") and not isinstance(data, train_module.PromptBatch):
            data = _TimedSampler(data, lambda t0: add("sampling", t0), clock)
        opt_step, backward = train_module.BatchedOptimizer.step, torch.Tensor.backward

        def timed_backward(t, *a, **k):
            t0 = clock()
            out = backward(t, *a, **k)
            add("backward", t0)
            return out

        def timed_step(opt):
            t0 = clock()
            opt_step(opt)
            add("optimizer", t0)
            acc_steps["n"] += 1
            now, wall = clock(), time.perf_counter()
            if acc_steps["t_step"] is not None and acc_steps["n"] > warm:
                acc_steps["step_total"] += now - acc_steps["t_step"]
                acc_steps["wall_total"] += wall - acc_steps["w_step"]
                acc_steps["measured"] += 1
            acc_steps["t_step"], acc_steps["w_step"] = now, wall
            if acc_steps["measured"] >= self.steps:
                raise SliceDone

        steps_total = kw["steps"]
        schedule = train_module._record_schedule(steps_total, kw.get("record_every"), kw.get("record_at"))
        train_module.BatchedOptimizer.step, torch.Tensor.backward = timed_step, timed_backward
        try:
            self.original(model, data, **kw)
            finished = True
        except SliceDone:
            finished = False
        finally:
            train_module.BatchedOptimizer.step, torch.Tensor.backward = opt_step, backward
            h1.remove()
            h2.remove()
        n = max(acc_steps["measured"], 1)
        # the evaluations measured include the one at step 0 (before the warm-up); per call:
        per_record = acc["evaluation"] / max(acc_steps["rec_n"], 1) if record is not None else 0.0
        # the step total runs from one optimizer step's end to the next: the phases above minus the
        # warm-up's share, plus what lies between them (other)
        step = acc_steps["step_total"] / n
        rec_in_steps = per_record * max(acc_steps["rec_n"] - 1, 0) / n  # records inside the measured steps
        phases = {k: acc[k] / n for k in PHASES[:-1]}
        phases["other"] = max(step - rec_in_steps - sum(phases.values()), 0.0)
        step = sum(phases.values())
        self.result = dict(setup_s=setup, steps=steps_total, records=len(schedule) if record is not None else 0,
                           step_s=step, phases_s=phases, evaluation_s=per_record, measured_steps=acc_steps["measured"],
                           step_wall_s=acc_steps["wall_total"] / n,
                           runs=getattr(model, "runs", None), finished=finished)
        raise SliceDone


class _TimedSampler:
    def __init__(self, inner, add, clock):
        self.inner, self.add, self.clock = inner, add, clock
        self.takes_dtype = "dtype" in inspect.signature(inner.sample_runs).parameters

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def sample_runs(self, batch, generators, dtype=torch.float64):
        t0 = self.clock()
        out = self.inner.sample_runs(batch, generators, dtype=dtype) if self.takes_dtype else \
            self.inner.sample_runs(batch, generators)
        self.add(t0)
        return out


def profile_call(prof: Profiler, fn) -> dict:
    prof.result = None
    prof.t_start = time.thread_time()
    c0 = time.process_time()
    try:
        fn()
    except SliceDone:
        pass
    cpu = time.process_time() - c0
    if prof.result is None:
        return {"whole_run_s": cpu, "estimate_s": cpu}
    r = prof.result
    r["estimate_s"] = r["setup_s"] + r["steps"] * r["step_s"] + r["records"] * r["evaluation_s"]
    r["slice_cpu_s"] = cpu
    return r


def runner(exp, rec):
    """A call of ``exp``'s run function on the config of the stored record ``rec``."""
    cfg = config_from_json(exp.config, rec["config"])
    if "device" in inspect.signature(exp.run).parameters:
        return lambda: exp.run(cfg, device="cpu")
    return lambda: exp.run(cfg)


def slice_of(name: str, prof: Profiler) -> dict:
    """The profile of the cheapest stored record of ``name`` (this process's thread setting)."""
    rec = min(stored_records(name), key=lambda r: r["meta"].get("cpu_seconds") or 0)
    return profile_call(prof, runner(registry.all_experiments()[name], rec))


def compare_threads(args) -> None:
    """1 thread, 2 threads, 2 processes of 1 thread: the training steps per second of wall time of
    each reference's slice, the three variants interleaved, medians over the repetitions."""
    import statistics
    import subprocess

    def child(name, threads):
        cmd = [sys.executable, __file__, "--slice", name, "--threads", str(threads), "--steps", str(args.steps),
               "--warmup", str(args.warmup)]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "ICL_LAB_THREADS": str(threads)})

    def rate(procs):
        outs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        return sum(1.0 / o["step_wall_s"] for o in outs)  # steps per second, all processes together

    rows = []
    for name in args.compare_threads:
        rates = {"1 thread": [], "2 threads": [], "2 processes x 1 thread": []}
        loads = []
        for _ in range(args.repeat):
            loads.append(os.getloadavg()[0])
            rates["1 thread"].append(rate([child(name, 1)]))
            rates["2 threads"].append(rate([child(name, 2)]))
            rates["2 processes x 1 thread"].append(rate([child(name, 1), child(name, 1)]))
        med = {k: statistics.median(v) for k, v in rates.items()}
        rows.append({"name": name, "steps_per_s": med, "all": rates, "load": loads})
        print(f"{name}: " + ", ".join(f"{k} {v:.2f} steps/s ({v / med['1 thread']:.2f}x)" for k, v in med.items())
              + f"; load {min(loads):.1f}-{max(loads):.1f}", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "references_threads.json").write_text(json.dumps({"steps": args.steps, "repeat": args.repeat, "rows": rows},
                                                            indent=2))


def stored_records(name: str) -> list[dict]:
    folder = paths.REFERENCE / name
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", action="store_true", help="profile the references (the only mode)")
    ap.add_argument("--steps", type=int, default=12, help="measured training steps per run")
    ap.add_argument("--warmup", type=int, default=2, help="training steps run before measuring")
    ap.add_argument("--only", nargs="*", default=None, help="these experiments only")
    ap.add_argument("--full", type=int, default=4, help="how many of the heaviest stored full results")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    ap.add_argument("--compare-threads", nargs="+", metavar="NAME",
                    help="instead: these references' training steps on 1 thread, 2 threads and 2 processes of 1 "
                         "thread, interleaved --repeat times (wall time: throughput in steps per second)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--slice", metavar="NAME", help=argparse.SUPPRESS)  # one measured slice (a child process)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.slice:
        configure_threads(args.threads)
        print(json.dumps(slice_of(args.slice, Profiler(args.steps, args.warmup))))
        return
    if args.compare_threads:
        return compare_threads(args)
    if not args.profile:
        ap.error("give --profile or --compare-threads")
    threads = configure_threads(1)
    exps = registry.all_experiments()
    prof = Profiler(args.steps, args.warmup)
    rows = []
    for name in args.only or reference_experiments():
        recs = stored_records(name)
        if not recs:
            print(f"note: {name} has no stored records; skipped", file=sys.stderr)
            continue
        rec = min(recs, key=lambda r: r["meta"].get("cpu_seconds") or 0)
        r = profile_call(prof, runner(exps[name], rec))
        stored = [x["meta"].get("cpu_seconds") or 0 for x in recs]
        rows.append(dict(name=name, kind="record", tasks=len(recs), stored_cpu_s=sum(stored),
                         stored_task_cpu_s=rec["meta"].get("cpu_seconds"), **r))
        _print_row(rows[-1])
    if args.full and not args.only:
        metas = sorted(memo.stored(), key=lambda m: -(m.get("cpu_seconds") or 0))[: args.full]
        for meta in metas:
            r = profile_call(prof, lambda meta=meta: memo.recompute(meta))
            rows.append(dict(name=meta["call"]["function"].removeprefix("icl_lab.papers."), kind="full", tasks=1,
                             stored_cpu_s=meta.get("cpu_seconds"), stored_task_cpu_s=meta.get("cpu_seconds"), **r))
            _print_row(rows[-1])
    prof.restore()
    load = os.getloadavg()
    report = {"machine": {"platform": platform.platform(), "processor": platform.processor(), "torch": torch.__version__,
                          "threads": threads, "cpu_count": os.cpu_count(), "loadavg_at_end": load},
              "method": {"steps": args.steps, "warmup": args.warmup, "clock": "time.thread_time"}, "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "references_profile.json").write_text(json.dumps(report, indent=2))
    md = markdown(rows, load)
    (out / "references_profile.md").write_text(md)
    print(md)


def _print_row(r):
    est = r["estimate_s"]
    print(f"{r['name']}: estimate {est:.1f} s per task x {r['tasks']} (stored {r['stored_task_cpu_s'] or 0:.1f} s)",
          flush=True)


def markdown(rows: list[dict], load) -> str:
    lines = [f"Profile of the references (one task each, 1 thread, CPU time; load average at the end "
             f"{load[0]:.1f}). Shares are of one training step; evaluation is the measurements' share of the "
             "whole training.", "",
             "| reference | runs | step ms | sampling | forward | backward | optimizer | other | evaluation | setup s "
             "| est. task s | stored task s | covers | tasks | est. all min | stored all min |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tot_est = tot_stored = 0.0
    for r in rows:
        stored_task = r["stored_task_cpu_s"] or 0.0
        covers = r["estimate_s"] / stored_task if stored_task else float("nan")
        est_all = r["estimate_s"] * r["tasks"] if r["kind"] == "record" else r["estimate_s"]
        # where the estimate covers the first training only, scale the stored time by the slice's ratio
        tot_est += est_all if covers >= 0.7 or covers != covers else (r["stored_cpu_s"] or 0)
        tot_stored += r["stored_cpu_s"] or 0
        if "step_s" in r:
            st, ph = r["step_s"], r["phases_s"]
            train = r["steps"] * st + r["records"] * r["evaluation_s"]
            ev = r["records"] * r["evaluation_s"] / train if train else 0.0
            cells = [f"{r['runs']}", f"{st * 1e3:.1f}"] + [f"{ph[k] / st:.0%}" if st else "-" for k in PHASES] + \
                [f"{ev:.0%}", f"{r['setup_s']:.1f}"]
        else:
            cells = ["-", "-"] + ["-"] * len(PHASES) + ["-", f"{r['whole_run_s']:.1f} (whole run)"]
        lines.append(f"| {r['name']}{' (full result)' if r['kind'] == 'full' else ''} | " + " | ".join(cells) +
                     f" | {r['estimate_s']:.1f} | {stored_task:.1f} | {covers:.0%} | {r['tasks']} | {est_all / 60:.1f} "
                     f"| {(r['stored_cpu_s'] or 0) / 60:.1f} |")
    lines += ["", f"Estimated CPU time of all rows: {tot_est / 60:.0f} min (the stored time where an estimate covers "
              f"less than 70 %), against {tot_stored / 60:.0f} min stored."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
