"""Benchmark: the batched trainer against the naive per-run loop on three papers' largest sweeps.

    .venv/bin/python benchmarks/workloads.py [--steps 100] [--naive-runs 4] [--threads N] [--only NAME ...]

Workloads (the papers' settings; sizes from the reproduction specs where a paper gives none):

* ``nonlinear_fig4`` — nonlinear paper, Figure 4: the practical one-block transformer on quadratic
  tasks with Gaussian inputs, d = 30, N = 150, 500 training prompts, Adam lr 1e-3, mini-batches of 50,
  30 runs x 6 Lipschitz constants = 180 runs (400 epochs = 4000 steps in full). The 30 runs of one L
  share their 500 prompts and differ in initialisation and mini-batch order (keeps the benchmark's
  memory at 6 datasets).
* ``window_fig3`` — window paper, Figure 3: tied kernel attention M = W^T W, d = 5, n = 20 demonstrations,
  5 queries, sigma = 0.01, one task per iteration, Adam lr 0.1 with decay 0.999, 4 panels (ReLU/cos x
  isotropic/anisotropic) x 4 L x 10 trials = 160 runs (2000 iterations in full).
* ``selectors_seeds`` — selectors paper: attention + MLP, hinge loss, online SGD lr 1, batch 128, the
  spec's paper-size model (M1 = 16, M2 = 240, d_x = 272, m = 500), 5 values of alpha x 5 seeds = 25 runs
  (1500 steps in full).

For each: the batched trainer runs all R runs for ``--steps`` steps; the naive loop (one nn.Module and
one torch.optim optimizer per run, one run after another — benchmarks/naive.py) runs ``--naive-runs``
of them for the same steps, and the time per run·step gives the naive time of the whole sweep. Both
start from the same parameters and data, so their final losses agree (reported). Achieved FLOP/s come
from torch's FLOP counter on one batched training step, against the machine's measured dense-GEMM
peak. Writes benchmarks/out/workloads.json and a Markdown table; it reports, it never fails.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parent))
import icl_lab  # noqa: E402
from icl_lab.data import (AffineTask, CosineTask, PairClassificationSampler, PromptBatch, PromptSampler,  # noqa: E402,F401
                          QuadraticTask, StackedSampler, TwoReLUTask, anisotropic_sphere, cyclic_pair_tasks,
                          gaussian, sphere)
from icl_lab.data.features import relevant_irrelevant_patterns  # noqa: E402
from icl_lab.models import AttentionMLP, KernelAttention, OneBlockTransformer  # noqa: E402
from icl_lab.train import LOSSES  # noqa: E402
from naive import naive_train  # noqa: E402


def nonlinear_fig4():
    d, N, M, Ls, seeds = 30, 150, 500, (0.1, 0.2, 0.4, 1.0, 1.5, 2.0), 30
    sets = []
    for i, L in enumerate(Ls):
        s = PromptSampler.from_inputs(lambda shape, g: gaussian(shape, d, g), QuadraticTask(d, L), N=N)
        sets.append(s.sample(M, icl_lab.make_generator(100 + i), dtype=torch.float32))
    per_run = [b for b in sets for _ in range(seeds)]  # the 30 runs of one L share that L's prompts
    data = PromptBatch.stack(per_run)
    model = OneBlockTransformer(d + 1, seeds=range(len(per_run)))
    return model, data, dict(optimizer="adam", lr=1e-3, batch_size=50), 4000


def window_fig3():
    d, n, Nq, sigma, trials = 5, 20, 5, 0.01, 10
    panels = [("relu", sphere, (0.01, 0.03, 0.1, 1.0)), ("relu", anisotropic_sphere, (0.01, 0.03, 0.1, 1.0)),
              ("cos", sphere, (0.1, 0.3, 0.5, 1.0)), ("cos", anisotropic_sphere, (0.1, 0.3, 0.5, 1.0))]
    samplers = []
    for kind, law, Ls in panels:
        for L in Ls:
            task = TwoReLUTask(d, L) if kind == "relu" else CosineTask(d, L)
            s = PromptSampler.from_inputs(lambda shape, g, law=law: law(shape, d, g), task, N=n, num_queries=Nq, sigma=sigma)
            samplers += [s] * trials
    model = KernelAttention(d, seeds=range(len(samplers)))
    return model, StackedSampler(samplers), dict(optimizer="adam", lr=0.1, lr_decay=0.999, batch_size=1), 2000


def selectors_seeds():
    M1, M2, d_x, d_y, m, seeds = 16, 240, 272, 2, 500, 5
    mu, nu = relevant_irrelevant_patterns(M1, M2, d_x, beta=5.0)
    q = torch.zeros(d_y, dtype=torch.float64)
    q[0] = 1.0
    samplers = []
    for alpha in (0.3, 0.45, 0.6, 0.8, 1.0):
        s = PairClassificationSampler(mu, nu, cyclic_pair_tasks(M1), l=19, alpha=alpha, q=q, tau=0.25)
        samplers += [s] * seeds
    model = AttentionMLP(d_x, d_y, m, seeds=range(len(samplers)), m_a=282, m_b=282)
    return model, StackedSampler(samplers), dict(optimizer="sgd", lr=1.0, loss="hinge", batch_size=128), 1500


WORKLOADS = {"nonlinear_fig4": nonlinear_fig4, "window_fig3": window_fig3, "selectors_seeds": selectors_seeds}


def gemm_peak(threads: int, n: int = 2048, reps: int = 5) -> float:
    """Measured dense float32 GEMM throughput (FLOP/s) with the configured threads: the practical peak."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n**3 * reps / (time.perf_counter() - t)


def step_flops(model, data, kw) -> float:
    """FLOPs of one batched training step (forward + backward), counted by torch."""
    m = model.select_runs(list(range(model.runs))).float()
    if isinstance(data, PromptBatch):
        bs = kw.get("batch_size") or data.batch_size
        batch = data.slice(0, bs) if not data.has_runs else data._map(lambda t: t[:, :bs])
    else:
        batch = data.sample_runs(kw["batch_size"], icl_lab.make_generators(range(model.runs)), dtype=torch.float32)
    loss_fn = LOSSES[kw.get("loss", "mse")]
    with FlopCounterMode(display=False) as fc:
        loss_fn(m(batch), batch).sum().backward()
    return float(fc.get_total_flops())


def bench(name: str, steps: int, naive_runs: int) -> dict:
    model, data, kw, full_steps = WORKLOADS[name]()
    R = model.runs
    flops = step_flops(model, data, kw)
    batched_model = model.select_runs(list(range(R)))
    t = time.perf_counter()
    hist = icl_lab.train(batched_model, data, steps=steps, device="cpu", progress=False, **kw)
    t_batched = time.perf_counter() - t
    pick = sorted({0, R // 2, R - 1} | set(range(0, R, max(1, R // naive_runs))))[:naive_runs]
    nv = naive_train(model, data, steps=steps, device="cpu", runs=pick, **kw)
    per_run_step_naive = nv["seconds"] / (len(pick) * steps)
    per_run_step_batched = t_batched / (R * steps)
    agree = max(abs(hist.loss[-1, r].item() - v) / max(1e-12, abs(v)) for r, v in zip(pick, nv["final_loss"]))
    return {
        "workload": name, "runs": R, "steps_measured": steps, "full_steps": full_steps,
        "batched_seconds": round(t_batched, 3), "naive_seconds_measured": round(nv["seconds"], 3),
        "naive_runs_measured": len(pick),
        "batched_full_sweep_s": round(per_run_step_batched * R * full_steps, 1),
        "naive_full_sweep_s": round(per_run_step_naive * R * full_steps, 1),
        "speedup": round(per_run_step_naive / per_run_step_batched, 1),
        "final_loss_max_rel_diff": agree,
        "flop_per_step": flops, "achieved_gflops": round(flops * steps / t_batched / 1e9, 2),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--naive-runs", type=int, default=4)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--only", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    args = ap.parse_args()
    threads = icl_lab.configure_threads(args.threads)
    peak = gemm_peak(threads)
    rows = []
    for name in args.only:
        row = bench(name, args.steps, args.naive_runs)
        row["fraction_of_gemm_peak"] = round(row["achieved_gflops"] * 1e9 / peak, 4)
        rows.append(row)
        print(json.dumps(row), flush=True)
    report = {"machine": {"platform": platform.platform(), "processor": platform.processor(), "torch": torch.__version__,
                          "threads": threads, "gemm_peak_gflops": round(peak / 1e9, 1), "device": "cpu"},
              "workloads": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "workloads.json").write_text(json.dumps(report, indent=2))
    lines = [f"Measured on {platform.processor() or platform.machine()}, {threads} threads, dense GEMM peak "
             f"{peak / 1e9:.1f} GFLOP/s.", "",
             "| workload | runs | batched (full sweep) | naive (full sweep, extrapolated) | speedup | GFLOP/s | of peak | loss agreement |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['runs']} | {r['batched_full_sweep_s']:.0f} s | {r['naive_full_sweep_s']:.0f} s | "
                     f"{r['speedup']}x | {r['achieved_gflops']} | {100 * r['fraction_of_gemm_peak']:.1f}% | "
                     f"{r['final_loss_max_rel_diff']:.1e} |")
    (out / "workloads.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
