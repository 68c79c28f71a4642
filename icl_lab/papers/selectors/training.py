"""Batched training and measurements of the selectors chapter: the per-run measurements of Prop. 1-2,
Lemma 7 and Fig. 1 (:func:`evaluate`), one batched training over groups x seeds
(:func:`train_groups`, plain online SGD on the hinge loss with fresh prompts every step, N = BT), and
what is read off a training (first-hit times, Lemma 3's output-layer split)."""
from __future__ import annotations

import ctypes
import math
from contextlib import contextmanager
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import torch

from ... import params as chk
from ...config import make_generator
from ...data.prompts import PairClassificationSampler, PromptBatch, StackedSampler
from ...data.tasks import PairTask
from ...criteria import Estimate
from ...metrics import first_crossing, loglog_slope
from ...models import AttentionMLP
from ...train import RunGrid, train


def evaluate(model: AttentionMLP, batch: PromptBatch, tasks: Sequence[PairTask] | None = None,
             patterns: tuple[torch.Tensor, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    """Per-run measurements on a batch of prompts (shared by all runs, or with a run dimension).

    Always: ``acc`` (0-1 accuracy), ``hinge``, ``mass`` (attention on N_*, the demonstrations that
    share the query's relevant pattern; ``mass_present`` the same over prompts with N_* non-empty), ``partner_mass`` (attention on the demonstrations of the
    task's other pattern; needs ``tasks``), ``margin`` (mean y F).  With ``patterns = (mu, nu)`` also
    the mechanism of Props. 1-2 and Lemma 7:

    * ``WQ_mu``, ``WK_mu``, ``WQ_nu``, ``WK_nu``: mean over patterns of ||W_{.,1:d_x} mu_j|| (Fig. 1a);
    * Figure 1(b), the pre-ReLU output h = W_O sa split two ways, mean |.| over prompts
      and neurons: input-part split ``lab_in`` = W_O W_V[:, label] ybar, ``feat_in`` =
      W_O W_V[:, input] xbar (ybar, xbar the attention-weighted label / input parts of the tokens;
      the two sum to h exactly); literal coordinate split of eq. (10) ``lab_lit`` =
      W_O[:, label] sa[label], ``feat_lit`` = W_O[:, input] sa[input], ``rest_lit`` (coordinates
      beyond d_x + d_y);
    * ``label_dominant``: fraction of neurons whose mean |lab_in| exceeds their mean |feat_in|;
      ``h_abs`` the mean |h_i| over all neurons, ``h_abs_other`` over the other neurons (Prop. 2's
      "for other i, O(xi)");
    * ``lucky_W``, ``lucky_U``: |W(t)|/m, |U(t)|/m with W(t) = {i: a_i > 0, W_O(i) W_V (0, q) > 0},
      U(t) = {i: a_i < 0, W_O(i) W_V (0, q) < 0} (our reading: the paper never defines them).
    """
    with torch.no_grad():
        out = model(batch)
        R = out.pred.shape[0]
        y = batch.y_query if batch.has_runs else batch.y_query.unsqueeze(0)  # (R?, B, 1)
        F = out.pred
        res = {"acc": (torch.sign(F) == y).to(F.dtype).mean(dim=(-2, -1)),
               "hinge": torch.clamp(1 - y * F, min=0).mean(dim=(-2, -1)),
               "margin": (y * F).mean(dim=(-2, -1))}
        att = out.attn[..., 0, :]  # (R, B, l)
        ids = batch.ids if batch.has_runs else batch.ids.unsqueeze(0)
        qid = batch.query_ids if batch.has_runs else batch.query_ids.unsqueeze(0)
        same = (ids == qid).to(att.dtype)
        res["mass"] = (att * same).sum(-1).mean(-1)
        present = (same.sum(-1) > 0).to(att.dtype)  # prompts with a non-empty N_*
        res["mass_present"] = ((att * same).sum(-1) * present).sum(-1) / present.sum(-1).clamp_min(1)
        if tasks is not None and batch.task_ids is not None:
            tid = batch.task_ids if batch.has_runs else batch.task_ids.unsqueeze(0)
            ab = torch.tensor([[t.a, t.b] for t in tasks], device=tid.device)
            partner = ab[tid].sum(-1, keepdim=True) - qid  # a + b - query pattern
            res["partner_mass"] = (att * (ids == partner).to(att.dtype)).sum(-1).mean(-1)
        if patterns is not None:
            mu, nu = (p.to(device=F.device, dtype=F.dtype) for p in patterns)
            dx = mu.shape[1]
            for name, W in (("WQ", model.W_Q), ("WK", model.W_K)):
                res[f"{name}_mu"] = (W[..., :dx] @ mu.T).norm(dim=-2).mean(-1)
                res[f"{name}_nu"] = (W[..., :dx] @ nu.T).norm(dim=-2).mean(-1)
            tokens = model._with_runs(batch.embedding(), 4)[..., : batch.N, :].to(F.dtype)  # (R?, B, l, D)
            pbar = torch.einsum("rbl,rbld->rbd", att, tokens.expand(R, *tokens.shape[1:]))  # sum_s sigma_s p_s
            WO, WV = model.W_O, model.W_V  # (R, m, m_b), (R, m_b, D)
            OV = WO @ WV  # (R, m, D)
            feat_in = torch.einsum("rmd,rbd->rbm", OV[..., :dx], pbar[..., :dx])
            lab_in = torch.einsum("rmd,rbd->rbm", OV[..., dx:], pbar[..., dx:])
            sa = out.extras["sa"][..., 0, :]  # (R, B, m_b)
            D = model.d_x + model.d_y
            res["feat_in"] = feat_in.abs().mean(dim=(1, 2))
            res["lab_in"] = lab_in.abs().mean(dim=(1, 2))
            res["feat_lit"] = torch.einsum("rmj,rbj->rbm", WO[..., :dx], sa[..., :dx]).abs().mean(dim=(1, 2))
            res["lab_lit"] = torch.einsum("rmj,rbj->rbm", WO[..., dx:D], sa[..., dx:D]).abs().mean(dim=(1, 2))
            res["rest_lit"] = torch.einsum("rmj,rbj->rbm", WO[..., D:], sa[..., D:]).abs().mean(dim=(1, 2))
            dominant = lab_in.abs().mean(1) > feat_in.abs().mean(1)  # (R, m)
            res["label_dominant"] = dominant.to(F.dtype).mean(-1)
            h_abs = out.extras["h"][..., 0, :].abs().mean(1)  # (R, m) mean |h_i| per neuron
            res["h_abs"] = h_abs.mean(-1)
            other = (~dominant).to(F.dtype)
            res["h_abs_other"] = (h_abs * other).sum(-1) / other.sum(-1).clamp_min(1)  # 0 when every neuron is label-dominant
            q_tok = torch.zeros(D, dtype=F.dtype, device=F.device)
            q_tok[dx:] = batch.label_embedding.to(device=F.device, dtype=F.dtype)
            label_read = torch.einsum("rmd,d->rm", OV, q_tok)  # W_O(i) W_V (0, q)
            a = model.a.to(F.dtype)
            res["lucky_W"] = ((a > 0) & (label_read > 0)).to(F.dtype).mean(-1)
            res["lucky_U"] = ((a < 0) & (label_read < 0)).to(F.dtype).mean(-1)
    return res



@dataclass
class Group:
    """Runs that share a data law (one swept value): ``cfg.seeds`` of them."""

    label: str
    value: float
    sampler: PairClassificationSampler
    lr: float
    tasks: list = field(default_factory=list)


@dataclass
class TrainResult:
    """One batched training of ``len(labels) = G`` groups x ``S`` seeds, the runs laid out by
    ``RunGrid(group=labels, seed=range(S))`` (run r = g * S + s).

    ``curves[name]``: (n_rec, R) test measurements at ``steps`` (:func:`evaluate`);
    ``t_hit``: (R,) first step with test accuracy >= ``hit_acc`` (NaN: not reached)."""

    labels: list
    values: list
    seeds: list
    steps: list
    curves: dict
    t_hit: torch.Tensor
    train_loss: torch.Tensor  # (steps, R)
    model: AttentionMLP
    seconds: float
    cpu_seconds: float

    @property
    def S(self) -> int:
        return len(self.seeds) // len(self.labels)

    @property
    def runs(self) -> RunGrid:
        return RunGrid(group=self.labels, seed=range(self.S))

    def grid(self, x: torch.Tensor) -> torch.Tensor:
        """(R, ...) -> (G, S, ...)."""
        return self.runs.reshape(x)

    def group_curves(self, name: str, group: str) -> torch.Tensor:
        """(S, n_rec) the curves of one measurement for the seeds of the group labelled ``group``."""
        return self.grid(self.curves[name].T)[list(self.labels).index(group)]

    def final(self, name: str) -> torch.Tensor:
        """(G, S) last recorded value of a measurement."""
        return self.grid(self.curves[name][-1])

    def hits(self) -> torch.Tensor:
        return self.grid(self.t_hit)

    def summary(self) -> dict:
        """The stored summary of a training (keys: :data:`TRAIN_SUMMARY`)."""
        return {"labels": list(map(str, self.labels)), "values": [float(v) for v in self.values],
                "t_hit": _nan_none(self.hits().tolist()), "final_acc": self.final("acc").tolist(),
                "final_mass": self.final("mass").tolist(), "seconds": self.seconds, "cpu_seconds": self.cpu_seconds}


TRAIN_SUMMARY = ("labels", "values", "t_hit", "final_acc", "final_mass", "seconds", "cpu_seconds")

def _nan_none(x):
    if isinstance(x, list):
        return [_nan_none(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


def _heap_trimmer():
    """glibc's ``malloc_trim`` (None elsewhere: macOS, musl, Windows)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _heap_trimmer()


def release_freed_heap() -> None:
    """Give the memory freed inside the C heap back to the system. A measurement on 1000 held-out
    prompts allocates and frees hundreds of MB; the small tensors it keeps (the recorded values) land
    between the freed blocks and stop glibc from returning them, so without this a 6000-step training
    at Theorem 1's width grew by about 85 MB per record to 18 GB (flat at 0.3 GB with it, same time,
    same numbers)."""
    if _TRIM is not None:
        _TRIM(0)


@contextmanager
def flushing_denormals():
    """Flush denormal floats to zero inside the block (softmax of large logits produces denormals,
    which are slow on CPUs), and give the process its previous setting back afterwards."""
    before = float(torch.tensor(1e-300, dtype=torch.float64) * 1e-20) == 0.0
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


def train_groups(cfg, groups: Sequence[Group], *, mechanism: bool = False, patterns=None,
                 device=None) -> TrainResult:
    """Train ``cfg.seeds`` runs per group, all groups together (one model with R = G x S runs;
    run (g, s) uses seed ``cfg.seed + s``: common random numbers across the swept values)."""
    with flushing_denormals():
        return _train_groups(cfg, groups, mechanism=mechanism, patterns=patterns, device=device)


def _train_groups(cfg, groups: Sequence[Group], *, mechanism: bool, patterns, device) -> TrainResult:
    t0, c0 = time.perf_counter(), time.process_time()
    grid = RunGrid(group=range(len(groups)), seed=range(cfg.seeds))
    seeds = [cfg.seed + s for s in grid["seed"]]
    per_run = [groups[g] for g in grid["group"]]
    model = cfg.model(seeds)
    data = StackedSampler([g.sampler for g in per_run])
    tests = {id(g): g.sampler.sample(cfg.test_prompts, make_generator(cfg.test_seed), dtype=torch.float32)
             for g in groups}
    test = PromptBatch.stack([tests[id(g)] for g in per_run])
    tasks_all = None
    if all(g.tasks for g in groups):
        # task ids index each group's own task list: remap to one list for the partner measurement
        tasks_all, offs = [], []
        for g in groups:
            offs.append(len(tasks_all))
            tasks_all.extend(g.tasks)
        off = torch.tensor([offs[g] for g in grid["group"]])[:, None]
        test = replace(test, task_ids=test.task_ids + off)
    pats = (patterns if patterns is not None else cfg.patterns()) if mechanism else None
    test_dev: dict = {}

    def measure(m, step) -> dict:
        dev = m.W_Q.device
        if dev not in test_dev:
            test_dev.clear()
            test_dev[dev] = test.to(dev, m.W_Q.dtype)
        out = evaluate(m, test_dev[dev], tasks_all, pats)
        release_freed_heap()
        return out

    hist = train(model, data, steps=cfg.steps, optimizer="sgd", lr=[g.lr for g in per_run], loss="hinge",
                 batch_size=cfg.batch, record=measure, record_every=cfg.eval_every, device=device)
    curves = {k: v.to(torch.float64) for k, v in hist.records.items()}
    t_hit = first_crossing(curves["acc"], cfg.hit_acc, times=hist.record_steps)
    return TrainResult(labels=[g.label for g in groups], values=[g.value for g in groups], seeds=seeds,
                       steps=list(hist.record_steps), curves=curves, t_hit=t_hit, train_loss=hist.loss,
                       model=model.to("cpu", torch.float32), seconds=time.perf_counter() - t0,
                       cpu_seconds=time.process_time() - c0)


def group_hits(res: TrainResult, how: str = "median") -> np.ndarray:
    """(G,) iterations to ``hit_acc`` per swept value: the median over seeds (a seed that never got
    there counts as later than every seed that did: +inf) or the fastest seed (``how='min'``)."""
    h = res.hits().numpy().copy()
    h[np.isnan(h)] = np.inf
    return np.median(h, axis=1) if how == "median" else h.min(axis=1)


@dataclass
class HitSweep:
    """A sweep's iterations to ``hit_acc`` per swept value, as the chapter reads them: the values,
    the median over seeds and the fastest seed (:func:`group_hits`: a seed that never got there
    counts as +inf). Build it with :meth:`of`."""

    res: TrainResult
    values: np.ndarray  # (G,) the swept values
    median: np.ndarray  # (G,)
    fastest: np.ndarray  # (G,)

    @classmethod
    def of(cls, res: TrainResult) -> "HitSweep":
        return cls(res, np.asarray(res.values, dtype=float), group_hits(res), group_hits(res, "min"))

    def slope(self, inverse: bool = False, fastest: bool = False) -> float:
        """Log-log slope of the median (or fastest) hits against the swept value, or its inverse."""
        return loglog_slope(1 / self.values if inverse else self.values, self.fastest if fastest else self.median)

    def slope_estimate(self, inverse: bool = False, n_boot: int = 2000, seed: int = 0) -> Estimate:
        """The median-hit slope (:meth:`slope`) with a 95% percentile-bootstrap interval over seeds:
        each resample draws every swept value's seeds with replacement (its own seeded generator, so
        the interval is the same on every run); a resample whose median never got there has no finite
        slope and counts as the steepest."""
        h = self.res.hits().numpy().copy()
        h[np.isnan(h)] = np.inf
        G, S = h.shape
        x = 1 / self.values if inverse else self.values
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, S, size=(n_boot, G, S))
        meds = np.median(np.take_along_axis(np.broadcast_to(h, (n_boot, G, S)), idx, axis=2), axis=2)
        slopes = np.sort([loglog_slope(x, m) if np.isfinite(m).all() else np.inf for m in meds])
        if np.isnan(slopes).any():  # too few finite medians for a slope
            return Estimate(float("nan"), float("nan"), float("nan"), S, "median hits, bootstrap 95% over seeds")
        lo, hi = slopes[int(0.025 * (n_boot - 1))], slopes[int(np.ceil(0.975 * (n_boot - 1)))]
        return Estimate(self.slope(inverse), float(lo), float(hi), S, "median hits, bootstrap 95% over seeds")

    def medians(self) -> dict:
        """``{swept value: median hit}``, None where the median seed never got there."""
        return {v: None if not np.isfinite(m) else int(m) for v, m in zip(self.res.values, self.median)}

    def report(self, name: str) -> str:
        """Runs, wall and CPU time, and the hits per seed of every swept value."""
        r = self.res
        return (f"{len(r.seeds)} runs in {r.seconds:.1f} s wall ({r.cpu_seconds:.1f} s CPU)\n"
                f"{name}: {tuple(r.values)}  T_hit per seed: {r.hits().tolist()}")


SPLITS = ("coordinates", "projections")


def output_layer_split(cfg, res: TrainResult, reading: str = "coordinates") -> torch.Tensor:
    """Lemma 3: (G, S, 2) mean over lucky neurons (W(t) and U(t) as in :func:`evaluate`, at the end
    of training) of the accumulated W_O update, feature part (column 0) and label part (column 1).
    The initial W_O is rebuilt from the seeds. Two readings:

    * ``'coordinates'`` (the statement, eqs. (15)-(16)): the norm of the update on the coordinates
      1..d_x and on d_x+1..d_x+d_y;
    * ``'projections'`` (the proof's evaluation, eqs. (76)-(77)): the update applied to the token
      parts the proof names, (mu_l, 0) and (0, q): the norm of its projection onto the span of the
      relevant patterns mu_1..mu_M1, and its component along q.
    """
    chk.one_of("reading", reading, SPLITS)
    init = cfg.model(res.seeds).W_O.detach().float()
    WO = res.model.W_O.detach()
    dW = WO - init
    dx, D = cfg.d_x, cfg.D
    q = cfg.q().float()
    q_tok = torch.zeros(D)
    q_tok[dx:] = q
    read = torch.einsum("rmj,rjd,d->rm", WO, res.model.W_V.detach(), q_tok)
    a = res.model.a.float()
    lucky = (((a > 0) & (read > 0)) | ((a < 0) & (read < 0))).float()
    if reading == "coordinates":
        feat, lab = dW[..., :dx].norm(dim=-1), dW[..., dx:D].norm(dim=-1)
    else:
        basis, _ = torch.linalg.qr(cfg.patterns()[0].float().T)  # (d_x, M1) orthonormal, span{mu_l}
        feat = (dW[..., :dx] @ basis).norm(dim=-1)
        lab = (dW[..., dx:D] @ (q / q.norm())).abs()
    feat = (feat * lucky).sum(-1) / lucky.sum(-1).clamp_min(1)
    lab = (lab * lucky).sum(-1) / lucky.sum(-1).clamp_min(1)
    return res.grid(torch.stack([feat, lab], -1).double())
