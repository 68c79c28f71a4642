"""A tiny test-only experiment for the sweep, store and CLI tests (registered by the tests, or via
``ICL_LAB_EXPERIMENTS=_sweep_toy`` with ``tests/`` on the path): per-seed Gaussian draws, an
optional sleep (so a sweep can be killed mid-task) and an optional failing seed."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from icl_lab.config import ScaledConfig, make_generator
from icl_lab.params import SEED, Int, OneOf, Real, TupleOf
from icl_lab.registry import Experiment, returns

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
    PARAMS = dict(n=Int(1, 10**6), scale=Real(0, 1e6, closed="right"), seeds=Int(1, 10**6), seed=SEED,
                  mode=OneOf("mean", "max"), shifts=TupleOf(Real(-1e6, 1e6)), sleep=Real(0, 3600),
                  fail_seed=Int(-1, 2**63 - 1))


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


@returns("per_seed", "shifts_count", "seconds", per_seed={"per_seed": 1}, timings=("seconds",))
def summarize_toy(res: ToyResult) -> dict:
    return {"per_seed": res.per_seed.tolist(), "shifts_count": res.per_seed.shape[0], "seconds": res.seconds}


TOY = Experiment(paper="common", location="test", description="per-seed Gaussian statistics (test only)",
                 config=ToyConfig, run=run_toy, summary=summarize_toy, claims=("T1",))
EXPERIMENTS = {"toy": TOY}


try:
    from distributed import WorkerPlugin
except ImportError:  # the sweep tests that need Dask skip without it
    WorkerPlugin = object


class DiskFillsUp(WorkerPlugin):
    """A Dask worker plugin for the full-disk test: once the file ``flag`` exists, every record write on
    the worker fails as on a full disk (``OSError`` ENOSPC from ``fsync``, where a real full disk
    reports it for buffered writes), so the store's clean-up and the sweep's per-task handling are
    exercised for real."""

    name = "icl-lab-disk-fills-up"

    def __init__(self, flag: str):
        self.flag = flag

    def setup(self, worker):
        import errno
        import os

        real, flag = os.fsync, self.flag

        def fsync(fd):
            if os.path.exists(flag):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd)

        os.fsync = fsync
