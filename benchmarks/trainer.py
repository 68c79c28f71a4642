"""Benchmark: the batched trainer (R runs in one optimizer step) against the naive loop a user would
otherwise write (one nn.Module and one torch.optim optimizer per run, trained one after another).

    .venv/bin/python benchmarks/trainer.py [--runs 30] [--steps 200] [--threads 2] [--repeat 3]

The three variants (batched on fixed prompts, the naive loop, batched with fresh prompts every step)
run interleaved ``--repeat`` times in one process; the table gives each one's median and the
medians of the per-repetition ratios, in wall and in CPU time (a loaded machine disturbs the CPU
time less). Writes benchmarks/out/trainer.json and prints a Markdown table.  It reports; it never fails.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

import icl_lab
from icl_lab.data import LinearTask, PromptSampler, standard_basis


class NaiveQOnly(torch.nn.Module):
    """What a single-run implementation looks like (as in the public ICL repositories)."""

    def __init__(self, d):
        super().__init__()
        self.Q = torch.nn.Parameter(torch.zeros(d, d))

    def forward(self, x, y, xq):
        a = torch.softmax(torch.einsum("bnd,de,bme->bmn", x, self.Q, xq), dim=-1)
        return (a * y[:, None, :]).sum(-1)


def naive(batch, d, runs, steps, lr):
    x, y, xq, yq = (t.float() for t in (batch.x, batch.y, batch.x_query, batch.y_query))
    finals = []
    for _ in range(runs):
        model = NaiveQOnly(d)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        for _ in range(steps):
            loss = 0.5 * ((model(x, y, xq) - yq) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        finals.append(loss.item())
    return finals


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved repetitions (medians reported)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    args = ap.parse_args()
    threads = icl_lab.configure_threads(args.threads)
    d, K, N, M, lr = 16, 4, 64, 300, 0.05
    sampler = PromptSampler.from_features(standard_basis(K, d), LinearTask(d), N=N)
    batch = sampler.sample(M, icl_lab.make_generator(0))
    R, T = args.runs, args.steps

    def timed(fn):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        return out, time.perf_counter() - t, time.process_time() - c

    def batched_fixed():
        model = icl_lab.QOnlyAttention(d, runs=R)
        return icl_lab.train(model, batch, steps=T, optimizer="adam", lr=lr, device="cpu")

    def batched_fresh():
        model = icl_lab.QOnlyAttention(d, runs=R)
        return icl_lab.train(model, sampler, steps=T, optimizer="adam", lr=lr, batch_size=64, device="cpu")

    reps = []
    for _ in range(max(1, args.repeat)):  # interleaved: each repetition runs all three
        hist, wb, cb = timed(batched_fixed)
        finals, wn, cn = timed(lambda: naive(batch, d, R, T, lr))
        _, wf, cf = timed(batched_fresh)
        agree = max(abs(a - b) for a, b in zip(hist.loss[-1].tolist(), finals))
        reps.append(dict(batched_fixed_s=wb, naive_fixed_s=wn, batched_fresh_prompts_s=wf, batched_fixed_cpu_s=cb,
                         naive_fixed_cpu_s=cn, batched_fresh_prompts_cpu_s=cf, speedup=wn / wb, speedup_cpu=cn / cb,
                         fresh_over_fixed=wf / wb, fresh_over_fixed_cpu=cf / cb, max_final_loss_difference=agree))
    med = {k: statistics.median(r[k] for r in reps) for k in reps[0]}
    t_batched, t_naive, t_fresh = med["batched_fixed_s"], med["naive_fixed_s"], med["batched_fresh_prompts_s"]
    report = {
        "machine": {"platform": platform.platform(), "processor": platform.processor(), "torch": torch.__version__,
                    "threads": threads, "loadavg": os.getloadavg()},
        "setup": dict(model="QOnlyAttention", d=d, K=K, N=N, prompts=M, runs=R, steps=T, optimizer="adam"),
        **med, "batched_runs_steps_per_s": R * T / t_batched, "naive_runs_steps_per_s": R * T / t_naive,
        "repetitions": reps,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "trainer.json").write_text(json.dumps(report, indent=2))
    print(f"| trainer (R={R}, {T} Adam steps, {M} prompts, N={N}, d={d}, {threads} threads; median of {len(reps)}) "
          "| seconds | CPU seconds | runs*steps/s |")
    print("|---|---|---|---|")
    print(f"| batched (icl_lab.train) | {t_batched:.2f} | {med['batched_fixed_cpu_s']:.2f} | {R * T / t_batched:,.0f} |")
    print(f"| naive loop (nn.Module + torch.optim.Adam per run) | {t_naive:.2f} | {med['naive_fixed_cpu_s']:.2f} "
          f"| {R * T / t_naive:,.0f} |")
    print(f"| batched, fresh prompts every step (B=64) | {t_fresh:.2f} | {med['batched_fresh_prompts_cpu_s']:.2f} "
          f"| {R * T / t_fresh:,.0f} |")
    print(f"\nspeedup batched vs naive: {med['speedup']:.1f}x wall, {med['speedup_cpu']:.1f}x CPU; fresh vs fixed prompts: "
          f"{med['fresh_over_fixed']:.2f}x wall, {med['fresh_over_fixed_cpu']:.2f}x CPU (medians of the per-repetition "
          f"ratios); max |final loss difference| = {med['max_final_loss_difference']:.1e}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
