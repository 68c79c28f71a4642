"""A tiny test-only experiment for the sweep, store and CLI tests (registered by the tests, or via
``ICL_LAB_EXPERIMENTS=_sweep_toy`` with ``tests/`` on the path): per-seed Gaussian draws, an
optional sleep (so a sweep can be killed mid-task) and an optional failing seed."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from icl_lab import _checks as chk
from icl_lab.config import ScaledConfig, make_generator
from icl_lab.registry import Experiment

CALLS = []  # configs run in this process (to check that stored tasks are skipped)


@dataclass(frozen=True)
class ToyConfig(ScaledConfig):
    n: int = 6
    scale: float = 1.0
    seeds: int = 4
    seed: int = 0
    mode: str = "mean"
    shifts: tuple = (0.0, 1.0)
    sleep: float = 0.0
    fail_seed: int = -1  # a seed whose run raises (to test failures); -1: none
    CI = dict(seeds=2)

    def validate(self):
        chk.positive_int("n", self.n)
        chk.positive("scale", self.scale)
        chk.positive_int("seeds", self.seeds)
        chk.positive_int("seed", self.seed, minimum=0)
        chk.one_of("mode", self.mode, ("mean", "max"))
        if not self.shifts:
            raise chk.ConfigError("shifts must be a non-empty list of numbers")
        chk.positive("sleep", self.sleep, allow_zero=True)


@dataclass
class ToyResult:
    per_seed: torch.Tensor  # (len(shifts), seeds)
    seconds: float


def run_toy(cfg: ToyConfig) -> ToyResult:
    t0 = time.perf_counter()
    CALLS.append(cfg)
    seeds = range(cfg.seed, cfg.seed + cfg.seeds)
    if cfg.fail_seed in seeds:
        raise RuntimeError(f"seed {cfg.fail_seed} fails on purpose")
    draws = torch.stack([cfg.scale * torch.randn(cfg.n, generator=make_generator(s), dtype=torch.float64)
                         for s in seeds])  # (seeds, n)
    stat = draws.mean(-1) if cfg.mode == "mean" else draws.max(-1).values
    time.sleep(cfg.sleep)
    per_seed = torch.stack([stat + s for s in cfg.shifts])
    return ToyResult(per_seed, time.perf_counter() - t0)


def summarize_toy(res: ToyResult) -> dict:
    return {"per_seed": res.per_seed.tolist(), "shifts_count": res.per_seed.shape[0], "seconds": res.seconds}


TOY = Experiment(paper="common", location="test", description="per-seed Gaussian statistics (test only)",
                 config=ToyConfig, run=run_toy, summary=summarize_toy, claims=("T1",))
EXPERIMENTS = {"toy": TOY}
