"""The template paper's experiment: Q-only softmax attention trained by gradient descent from ``Q = 0``
on linear tasks, against the context average it starts from (:func:`.theory.average_loss`).

A paper's ``experiments.py`` holds its configs (one :class:`~icl_lab.config.ScaledConfig` per
experiment: defaults = the paper's setting, ``PARAMS`` = every field's allowed values, ``CI`` and
``BOOK`` = the smaller scales) and its run functions, each registered in ``EXPERIMENTS`` with the
summary that the results store keeps."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from ... import params as chk
from ...config import ScaledConfig, make_generator
from ...data import LinearTask, PromptSampler, standard_basis
from ...models import QOnlyAttention
from ...params import LR, SEED, SIZE, STEPS, Int
from ...registry import Registry, returns
from ...train import mse_loss, train
from . import theory

EXPERIMENTS = Registry("_template")


@dataclass(frozen=True)
class TrainingConfig(ScaledConfig):
    """Train ``seeds`` runs of Q-only attention (full-batch GD on ``batch`` fresh prompts a step) with
    ``K`` orthonormal features in ``d`` dimensions, drawn uniformly, and ``N`` demonstrations a prompt."""

    d: int = 8
    K: int = 4
    N: int = 16
    seeds: int = 6  # an interval over seeds decides from 6 (criteria.MIN_SEEDS)
    seed: int = 0  # run r uses seed + r (so that a sweep may split the seeds across tasks)
    steps: int = 300
    lr: float = 30.0
    batch: int = 128
    test_prompts: int = 2000
    test_seed: int = 10_000
    PARAMS = dict(d=SIZE, K=Int(2, 4096), N=Int(1, 100_000), seeds=Int(1, 1000), seed=SEED, steps=STEPS, lr=LR,
                  batch=Int(1, 100_000), test_prompts=Int(1, 200_000), test_seed=SEED)
    CI = dict(steps=60, batch=64, test_prompts=1000)  # the test suite: still far below the average's loss
    BOOK = {}  # the paper's setting fits a laptop's minutes: no reduction (else each one with its BOOK_WHY)

    def validate(self):
        chk.features_fit(self.K, self.d)


@dataclass
class TrainingResult:
    config: TrainingConfig
    curves: torch.Tensor  # (seeds, steps) training loss on fresh prompts
    trained_loss: torch.Tensor  # (seeds,) held-out loss of the trained model
    average_loss: float  # held-out loss of Q = 0 (the context average) on the same prompts
    average_theory: float  # its expectation, theory.average_loss
    seconds: float


@returns("curves", "trained_loss", "average_loss", "average_theory", "seconds",
         per_seed=("curves", "trained_loss"), timings=("seconds",))
def summarize_training(res: TrainingResult) -> dict:
    """What the results store keeps (JSON values; per-seed entries in seed order)."""
    return {"curves": res.curves.tolist(), "trained_loss": res.trained_loss.tolist(),
            "average_loss": res.average_loss, "average_theory": res.average_theory, "seconds": res.seconds}


@EXPERIMENTS.register("training", config=TrainingConfig, summary=summarize_training, location="Thm 1",
                      description="Q-only attention trained from Q = 0 against the context average",
                      claims=("T1",))
def run_training(cfg: TrainingConfig, device=None) -> TrainingResult:
    t0 = time.perf_counter()
    p = torch.full((cfg.K,), 1.0 / cfg.K, dtype=torch.float64)
    sampler = PromptSampler.from_features(standard_basis(cfg.K, cfg.d), LinearTask(cfg.d), N=cfg.N, p=p)
    model = QOnlyAttention(cfg.d, seeds=list(range(cfg.seed, cfg.seed + cfg.seeds)))
    hist = train(model, sampler, steps=cfg.steps, optimizer="gd", lr=cfg.lr, batch_size=cfg.batch, device=device)
    test = sampler.sample(cfg.test_prompts, make_generator(cfg.test_seed))
    model = model.to("cpu", torch.float64)
    with torch.no_grad():
        trained = mse_loss(model(test), test)  # (seeds,)
        untrained = mse_loss(QOnlyAttention(cfg.d, runs=1).to(dtype=torch.float64)(test), test)  # Q = 0
    return TrainingResult(cfg, hist.loss.T.contiguous(), trained, float(untrained[0]),
                          theory.average_loss(p, cfg.N), time.perf_counter() - t0)
