"""Batched training of the window paper's attention unit (App. J): the tied M = W^T W from
W = 0.001 I, Adam, one task per iteration; every (swept value, trial) pair is one run of a single
batched training, mapped by a :class:`~icl_lab.train.RunGrid`."""
from __future__ import annotations

from typing import Callable

import torch

from ...data.prompts import PromptBatch, StackedSampler
from ...metrics import spectral_norm
from ...models import KernelAttention
from ...train import RunGrid, train
from .data import F64, PrefetchSampler


def icl_error(model, batch: PromptBatch) -> torch.Tensor:
    """(R,) test ICL error E(y_hat - f(x_q))^2 of every run on ``batch`` (noiseless targets)."""
    p = next(model.parameters())
    if batch.x.dtype != p.dtype or batch.x.device != p.device:
        batch = batch.to(p.device, p.dtype)
    with torch.no_grad():
        out = model(batch)
    target = batch.y_query if batch.has_runs else batch.y_query.unsqueeze(0)
    return ((out.pred - target.to(out.pred.dtype)) ** 2).mean(dim=(-2, -1)).to("cpu", F64)


def anisotropy(M: torch.Tensor) -> torch.Tensor:
    """||M - tr(M)/d I||_F / ||M||_F (0 iff M is a multiple of I): (...,)."""
    d = M.shape[-1]
    iso = torch.diagonal(M, dim1=-2, dim2=-1).mean(-1)[..., None, None] * torch.eye(d, dtype=M.dtype, device=M.device)
    return torch.linalg.matrix_norm(M - iso) / torch.linalg.matrix_norm(M)


def train_window(grid: RunGrid, sampler_of: Callable, d: int, seed: int, *, steps: int, lr, lr_decay: float,
                 activation: str = "softmax", record: Callable | None = None, record_every: int | None = None,
                 record_at=None, init=0.001, tied: bool = True, init_std: float = 0.01, device=None):
    """Adam on one task per iteration for the runs of ``grid``: run r draws its prompts from
    ``sampler_of(run)`` (``run`` = the grid's dict of values for r) with seed ``seed + run['trial']``
    (trial t of every setting sees the same random stream). ``lr`` may be a per-run list.
    Records ``norm`` (||M||_2), ``mean_eig`` (tr M / d) and whatever ``record(model, step)`` returns."""
    runs = grid.runs
    seeds = [seed + r["trial"] for r in runs]
    model = KernelAttention(d, seeds=seeds, activation=activation, tied=tied, init=init, init_std=init_std)

    def rec(m, step):
        out = {"norm": spectral_norm(m.M), "mean_eig": torch.diagonal(m.M, dim1=-2, dim2=-1).mean(-1)}
        if record is not None:
            out.update(record(m, step))
        return out

    data = PrefetchSampler(StackedSampler([sampler_of(r) for r in runs]), steps_per_draw=min(steps, 500))
    hist = train(model, data, steps=steps, optimizer="adam", lr=lr, lr_decay=lr_decay, batch_size=1, record=rec,
                 record_every=record_every, record_at=record_at, device=device)
    return model.to("cpu"), hist


def error_drops(res) -> tuple[dict, dict, dict]:
    """Figure 1's reading of a :class:`~.trained.HillsResult`, per nu (means over trials): the error of
    softmax attention at the largest n over that at the smallest n, the same for linear attention, and
    softmax over linear at the largest n."""
    tr = {k: v.mean(-1) for k, v in res.trained.items()}
    return ({nu: float(tr[("softmax", nu)][-1] / tr[("softmax", nu)][0]) for nu in res.config.nus},
            {nu: float(tr[("linear", nu)][-1] / tr[("linear", nu)][0]) for nu in res.config.nus},
            {nu: float(tr[("softmax", nu)][-1] / tr[("linear", nu)][-1]) for nu in res.config.nus})


def final_norms(res, keys) -> list:
    """Mean over trials of the final spectral norm of M, one per setting key of a :class:`~.trained.NormResult`."""
    return [float(res.norm[k][-1].mean()) for k in keys]


