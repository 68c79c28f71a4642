"""Batched Adam training on fixed prompts for App. A's experiments (Figs. 2, 3): one model per
(setting, lr, seed), all runs of one batched training, mapped by a :class:`~icl_lab.train.RunGrid`."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from ... import params as chk

from ... import metrics
from ...config import make_generator
from ...data import LinearTask, PromptBatch, PromptSampler, standard_basis
from ...train import RunGrid, train
from .theory import p_for


@dataclass
class TrainedRuns:
    """Empirical training of the runs of ``grid`` (axes setting, lr, seed). ``labels`` per run; curves
    of the per-feature loss (T, R, K) on the training and held-out prompts at ``epochs`` (T,),
    attention maps (T, R, K, K) likewise."""

    grid: RunGrid
    labels: list
    epochs: list
    train_loss: torch.Tensor
    test_loss: torch.Tensor
    train_map: torch.Tensor
    test_map: torch.Tensor
    final_S: torch.Tensor | None = None  # (R, K, K) for the Q-only model
    seconds: float = 0.0


def _feature_metrics(model, batch: PromptBatch, K: int):
    with torch.no_grad():
        out = model(batch)
    loss = metrics.per_feature_loss(out.pred, batch.y_query, batch.query_ids, K)
    amap = metrics.feature_attention_map(out.attn, batch.ids, batch.query_ids, K)
    return loss, amap


def draw_settings(grid: RunGrid, *, K, d, N, train_prompts, test_prompts, seed_base: int, p1: float, features=None):
    """The prompts of :func:`train_on_settings`: ``(tests per setting, every run's training prompts)``;
    a ConfigError when a drawn set leaves a feature with no query (also called before a sweep runs)."""
    V = standard_basis(K, d) if features is None else features
    settings = grid.axes["setting"]
    samplers = {s: PromptSampler.from_features(V, LinearTask(d), N=N, p=p_for(s, K, p1)) for s in settings}
    tests = {s: samplers[s].sample(test_prompts, make_generator(seed_base + 10_000 + i)).to(dtype=torch.float32)
             for i, s in enumerate(settings)}
    labels = grid.runs
    data = PromptBatch.stack([samplers[r["setting"]].sample(train_prompts, make_generator(seed_base + r["seed"]))
                              for r in labels])
    for s in settings:
        chk.every_feature_queried(tests[s].query_ids, K, "test_prompts", test_prompts)
    chk.every_feature_queried(data.query_ids, K, "train_prompts", train_prompts)  # each run's own prompts
    return tests, data


def train_on_settings(make_model, grid: RunGrid, *, K, d, N, train_prompts, test_prompts, epochs, record_at,
                      seed_base: int, p1: float, features=None) -> TrainedRuns:
    """Full-batch Adam (one step per epoch) for every run of ``grid`` (axes ``setting``, ``lr``,
    ``seed``) on fixed prompts. Run r sees its own ``train_prompts`` prompts (drawn with seed
    ``seed_base + seed``); the held-out set is shared per setting. Metrics at ``record_at`` epochs."""
    V = standard_basis(K, d) if features is None else features
    settings = grid.axes["setting"]
    labels = grid.runs
    tests, data = draw_settings(grid, K=K, d=d, N=N, train_prompts=train_prompts, test_prompts=test_prompts,
                                seed_base=seed_base, p1=p1, features=V)
    model = make_model(grid["seed"])
    groups = {s: grid.index(setting=s) for s in settings}

    def rec(m, step):
        dev = next(m.parameters()).device
        tr_loss, tr_map = _feature_metrics(m, data.to(dev, torch.float32), K)
        te_loss = torch.empty_like(tr_loss)
        te_map = torch.empty_like(tr_map)
        for s, idx in groups.items():  # each run on its own setting's held-out prompts
            l_, m_ = _feature_metrics(m.select_runs(idx), tests[s].to(dev), K)
            te_loss[idx], te_map[idx] = l_, m_
        return {"train_loss": tr_loss, "test_loss": te_loss, "train_map": tr_map, "test_map": te_map}

    t0 = time.perf_counter()
    hist = train(model, data, steps=epochs, optimizer="adam", lr=grid["lr"], record=rec, record_at=record_at)
    out = TrainedRuns(grid=grid, labels=labels, epochs=list(hist.record_steps), train_loss=hist["train_loss"],
                      test_loss=hist["test_loss"], train_map=hist["train_map"], test_map=hist["test_map"],
                      seconds=time.perf_counter() - t0)
    if hasattr(model, "Q"):
        Q = model.Q.detach().to("cpu", torch.float64)
        out.final_S = V @ Q @ V.T
    return out


def select(runs: TrainedRuns, **match) -> list[int]:
    """Indices of the runs whose labels match, e.g. select(runs, setting='balanced', lr=0.02)."""
    return runs.grid.index(**match)
