"""Chapter: *Transformers as Multi-Task Feature Selectors* (H. Li, M. Wang, et al., NeurIPS 2023 M3L).

The paper gives no experimental parameters; every default below is the reproduction spec's
recommendation (spec selectors §7, §9) and the chapter says so.  The model is
:class:`~icl_lab.models.AttentionMLP` (eq. 2 with the paper's initialisation), the prompts come from
:class:`SelectorsSampler` (the library's :class:`~icl_lab.data.PairClassificationSampler` with a
cheaper noise draw), the loss is the hinge loss and the optimiser plain online SGD (fresh prompts
every step, ``N = BT``).

Every experiment trains all its runs -- seeds x swept values -- in **one** batched training (the
run dimension R of :func:`icl_lab.train.train`); runs that differ in their data law draw from a
:class:`GroupedSampler`.  Evaluation prompts come from separate generators (spec A21), so the
logging interval does not change training.

Experiments (spec §6.3): ``seed_sweep`` (E1 = Figure 1, Prop. 1-2, Lemma 7, the cyclic vs all-pairs
task sets), ``alpha`` (E2), ``noise`` (E3), ``lambda_star`` (E4), ``eta`` (E5), ``num_patterns``
(M), ``prompt_length`` (E6), ``task_count`` (E7, Lemma 1), ``ood`` (E8-E9, Thm 2 / Cor. 1) and the
attention-collapse recursion (E10, :func:`collapse_recursion`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import torch

from ... import _checks as chk
from ...config import ScaledConfig, make_generator
from ...data import _random as rnd
from ...data.prompts import PairClassificationSampler, PromptBatch
from ...data.tasks import PairTask, cyclic_pair_tasks
from ...models import AttentionMLP
from ...train import train

TASK_SETS = ("cyclic", "all_pairs")


# ============================================================================ data
def all_pair_tasks(M1: int) -> list[PairTask]:
    """Every ordered pair (a, b), a != b: M1 (M1 - 1) tasks; covers every pattern evenly as +1 and
    -1 (the robust task set of spec A13)."""
    M1 = chk.positive_int("M1", M1, minimum=2)
    return [PairTask(a, b) for a in range(M1) for b in range(M1) if a != b]


def unbalanced_tasks(M1: int) -> list[PairTask]:
    """M1 tasks that violate the even-coverage rule of Lemma 1: (0, j) for j = 1..M1-1 plus (1, 0),
    so mu_0 is labelled +1 in M1 - 1 tasks and -1 in only one."""
    M1 = chk.positive_int("M1", M1, minimum=3)
    return [PairTask(0, j) for j in range(1, M1)] + [PairTask(1, 0)]


def task_set(name: str, M1: int) -> list[PairTask]:
    chk.one_of("task_set", name, TASK_SETS)
    return cyclic_pair_tasks(M1) if name == "cyclic" else all_pair_tasks(M1)


def pattern_coverage(tasks: Sequence[PairTask], M1: int) -> torch.Tensor:
    """(M1, 2) how often each pattern is labelled +1 (column 0) and -1 (column 1) over the tasks."""
    cov = torch.zeros(M1, 2, dtype=torch.long)
    for t in tasks:
        cov[t.a, 0] += 1
        cov[t.b, 1] += 1
    return cov


def is_balanced(tasks: Sequence[PairTask], M1: int) -> bool:
    """Lemma 1's rule: every pattern is +1 and -1 equally often, and at least once."""
    cov = pattern_coverage(tasks, M1)
    return bool((cov[:, 0] == cov[:, 1]).all() and (cov >= 1).all())


class SelectorsSampler(PairClassificationSampler):
    """:class:`~icl_lab.data.PairClassificationSampler` that builds the inputs in float32, with the
    isotropic noise directions drawn as float32 normals.  Same law and the same order of draws as
    the parent class; building (and casting) float64 inputs cost more than the training step itself
    (the model trains in float32 anyway).  Labels and ids are unchanged."""

    def _inputs(self, pat: torch.Tensor, g) -> torch.Tensor:
        shape = (pat.shape[0] // rnd.runs(g), *pat.shape[1:])  # per-run shape
        lo, hi = self.lambda_range
        lam = lo + (hi - lo) * rnd.rand(g, shape)
        kap = self.kappa_max * (2 * rnd.rand(g, shape) - 1)
        irr = rnd.randint(g, 0, self.nu.shape[0], shape)
        if not hasattr(self, "_mu32"):
            self._mu32, self._nu32 = self.mu.float(), self.nu.float()
        x = self._mu32[pat] * lam.float()[..., None]
        x.addcmul_(self._nu32[irr], kap.float()[..., None])
        if self.tau > 0:
            if self.noise_in_span:
                z = rnd.randn(g, (*shape, self.M1)).float() @ self._mu32
                x.addcmul_(z, (self.tau / z.norm(dim=-1, keepdim=True)))
            else:
                z = rnd._draw(g, lambda gen: torch.randn((*shape, self.mu.shape[1]), generator=gen, dtype=torch.float32))
                r = self.tau * rnd.rand(g, (*shape, 1))
                x.addcmul_(z, r.float() / z.norm(dim=-1, keepdim=True))
        return x


class GroupedSampler:
    """Runs in consecutive groups, each group drawing from its own sampler: ``groups`` is a list of
    ``(sampler, n_runs)``.  Run r of a group gets exactly what ``sampler.sample_runs`` gives it alone
    (so the batched training equals separate trainings), while all runs train in one model."""

    def __init__(self, groups: Sequence[tuple], dtype: torch.dtype = torch.float32):
        self.groups = [(s, chk.positive_int("n_runs", n)) for s, n in groups]
        self.dtype = dtype  # what sample_runs returns by default (the trainer casts to the model's dtype)
        if not self.groups:
            raise chk.ConfigError("groups must be non-empty")

    @property
    def runs(self) -> int:
        return sum(n for _, n in self.groups)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype=None) -> PromptBatch:
        dtype = self.dtype if dtype is None else dtype
        if len(generators) != self.runs:
            raise chk.ConfigError(f"generators must have one entry per run ({self.runs}); got {len(generators)}")
        parts, i = [], 0
        for s, n in self.groups:
            parts.append(s.sample_runs(batch, generators[i:i + n], dtype))
            i += n
        return concat_runs(parts)


def concat_runs(parts: Sequence[PromptBatch]) -> PromptBatch:
    """Concatenate batches with a run dimension along it (label embeddings must agree)."""
    first = parts[0]
    out = {}
    for name in ("x", "y", "x_query", "y_query", "ids", "query_ids", "task_ids"):
        vals = [getattr(p, name) for p in parts]
        out[name] = None if vals[0] is None else torch.cat(vals)
    return PromptBatch(**out, K=first.K, label_embedding=first.label_embedding)


def expand_runs(batch: PromptBatch, runs: int) -> PromptBatch:
    """A batch without run dimension repeated for ``runs`` runs (a view, no copy)."""
    return batch._map(lambda t: t.unsqueeze(0).expand(runs, *t.shape))


# ============================================================================ configs
@dataclass(frozen=True)
class SelectorsConfig(ScaledConfig):
    """The common setting (spec §9 'small'; the paper gives none of these numbers).

    Patterns are scaled standard-basis vectors: mu_j = beta e_j (j < M1), nu_k = beta e_{M1+k},
    and ``d_extra`` further directions stay free for the out-of-domain controls (A1).  ``l_tr = 0``
    means ceil(2 ln M / alpha), eq. (5) with constant 1 (A14).  W_Q, W_K have m_a = d_x + d_y rows
    (extra rows start at zero and get zero gradient, so they are inert, spec A5); W_V and W_O use
    m_b = d_x + d_y + m_b_extra.
    """

    M1: int = 8
    M2: int = 56
    d_extra: int = 8
    d_y: int = 2
    beta: float = 5.0
    delta: float = 0.1
    xi: float = 0.01
    m: int = 200
    m_b_extra: int = 8
    eta: float = 1.0
    batch: int = 64
    steps: int = 1000
    alpha: float = 0.6
    l_tr: int = 0
    lambda_min: float = 0.6
    lambda_max: float = 1.0
    kappa_max: float = 0.5
    tau: float = 0.25
    noise_in_span: bool = False
    task_set: str = "all_pairs"
    seeds: int = 3
    seed: int = 0  # run r of every group uses seed + r (common random numbers across swept values)
    test_prompts: int = 1000
    eval_every: int = 25
    hit_acc: float = 0.95
    test_seed: int = 10_000

    def validate(self):
        chk.positive_int("M1", self.M1, minimum=3)
        chk.positive_int("M2", self.M2)
        chk.positive_int("d_extra", self.d_extra, minimum=0)
        chk.positive_int("d_y", self.d_y, minimum=2)  # the q' perpendicular-to-q control needs a second coordinate
        for name in ("beta", "delta", "xi", "eta", "lambda_min", "lambda_max"):
            chk.positive(name, getattr(self, name))
        if self.delta >= 1:
            raise chk.ConfigError(f"delta must be small (the paper: delta in (0, 0.1)); got {self.delta}")
        if self.lambda_min > self.lambda_max:
            raise chk.ConfigError(f"lambda_min must be <= lambda_max (got {self.lambda_min} > {self.lambda_max})")
        chk.positive("kappa_max", self.kappa_max, allow_zero=True)
        if self.kappa_max > 1:
            raise chk.ConfigError(f"kappa_max must be <= 1 (the paper: |kappa| <= 1); got {self.kappa_max}")
        chk.positive("tau", self.tau, allow_zero=True)
        chk.positive_int("m", self.m)
        chk.positive_int("m_b_extra", self.m_b_extra, minimum=0)
        chk.positive_int("batch", self.batch)
        chk.positive_int("steps", self.steps)
        a = chk.probability("alpha", self.alpha)
        if a == 0:
            raise chk.ConfigError("alpha must be in (0, 1]")
        chk.positive_int("l_tr", self.l_tr, minimum=0)
        chk.one_of("task_set", self.task_set, TASK_SETS)
        chk.positive_int("seeds", self.seeds)
        chk.positive_int("seed", self.seed, minimum=0)
        chk.positive_int("test_prompts", self.test_prompts)
        chk.positive_int("eval_every", self.eval_every)
        if not 0 < self.hit_acc <= 1:
            raise chk.ConfigError(f"hit_acc must lie in (0, 1] (got {self.hit_acc})")
        chk.positive_int("test_seed", self.test_seed, minimum=0)

    @property
    def M(self) -> int:
        return self.M1 + self.M2

    @property
    def d_x(self) -> int:
        return self.M1 + self.M2 + self.d_extra

    @property
    def D(self) -> int:
        return self.d_x + self.d_y

    @property
    def l(self) -> int:
        return self.l_tr if self.l_tr else prompt_length_bound(self.M, self.alpha)

    def basis(self) -> torch.Tensor:
        return self.beta * torch.eye(self.d_x, dtype=torch.float64)

    def patterns(self, M2: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(mu (M1, d_x), nu (M2, d_x)): scaled standard-basis vectors."""
        E = self.basis()
        M2 = self.M2 if M2 is None else M2
        return E[: self.M1], E[self.M1 : self.M1 + M2]

    def q(self) -> torch.Tensor:
        q = torch.zeros(self.d_y, dtype=torch.float64)
        q[0] = self.beta
        return q

    def sampler(self, *, tasks=None, alpha=None, l=None, tau=None, lambda_range=None, mu=None, nu=None, q=None,
                kappa_max=None, noise_in_span=None) -> SelectorsSampler:
        mu0, nu0 = self.patterns()
        return SelectorsSampler(
            mu0 if mu is None else mu, nu0 if nu is None else nu,
            task_set(self.task_set, self.M1) if tasks is None else tasks,
            l=self.l if l is None else l, alpha=self.alpha if alpha is None else alpha,
            q=self.q() if q is None else q, tau=self.tau if tau is None else tau,
            lambda_range=(self.lambda_min, self.lambda_max) if lambda_range is None else lambda_range,
            kappa_max=self.kappa_max if kappa_max is None else kappa_max,
            noise_in_span=self.noise_in_span if noise_in_span is None else noise_in_span)

    def model(self, seeds: Sequence[int]) -> AttentionMLP:
        """The paper's model (eq. 2, its initialisation), one run per seed (the library's
        :class:`~icl_lab.models.AttentionMLP` computes it with the products reordered)."""
        return AttentionMLP(self.d_x, self.d_y, self.m, seeds=list(seeds), m_a=self.D,
                            m_b=self.D + self.m_b_extra, delta=self.delta, xi=self.xi)


# ============================================================================ measurements
def evaluate(model: AttentionMLP, batch: PromptBatch, tasks: Sequence[PairTask] | None = None,
             patterns: tuple[torch.Tensor, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    """Per-run measurements on a batch of prompts (shared by all runs, or with a run dimension).

    Always: ``acc`` (0-1 accuracy), ``hinge``, ``mass`` (attention on N_*, the demonstrations that
    share the query's relevant pattern; ``mass_present`` the same over prompts with N_* non-empty), ``partner_mass`` (attention on the demonstrations of the
    task's other pattern; needs ``tasks``), ``margin`` (mean y F).  With ``patterns = (mu, nu)`` also
    the mechanism of Props. 1-2 and Lemma 7:

    * ``WQ_mu``, ``WK_mu``, ``WQ_nu``, ``WK_nu``: mean over patterns of ||W_{.,1:d_x} mu_j|| (Fig. 1a);
    * Figure 1(b), the pre-ReLU output h = W_O sa split two ways (spec A8), mean |.| over prompts
      and neurons: input-part split ``lab_in`` = W_O W_V[:, label] ybar, ``feat_in`` =
      W_O W_V[:, input] xbar (ybar, xbar the attention-weighted label / input parts of the tokens;
      the two sum to h exactly); literal coordinate split of eq. (10) ``lab_lit`` =
      W_O[:, label] sa[label], ``feat_lit`` = W_O[:, input] sa[input], ``rest_lit`` (coordinates
      beyond d_x + d_y);
    * ``label_dominant``: fraction of neurons whose mean |lab_in| exceeds their mean |feat_in|;
      ``h_abs`` the mean |h_i| over all neurons, ``h_abs_other`` over the other neurons (Prop. 2's
      "for other i, O(xi)");
    * ``lucky_W``, ``lucky_U``: |W(t)|/m, |U(t)|/m with W(t) = {i: a_i > 0, W_O(i) W_V (0, q) > 0},
      U(t) = {i: a_i < 0, W_O(i) W_V (0, q) < 0} (spec A9; the paper never defines them).
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


def gradients_closed_form(model: AttentionMLP, batch: PromptBatch, r: int = 0) -> dict[str, torch.Tensor]:
    """The batch-mean hinge-loss gradients of run ``r`` in closed form (spec §4.4: eqs. (72), (131),
    (82), (121) with the hinge factor -y 1[yF < 1] that the paper's versions omit, A20).

    With sigma_s the softmax weights, pbar = sum_s sigma_s p_s, sa = W_V pbar, h = W_O sa and
    g_i = a_i 1[h_i >= 0]:  dF/dW_O = g sa^T;  dF/dW_V = (W_O^T g) pbar^T;
    dF/dW_Q = sum_s sigma_s w_s W_K (p_s - pbar) p_q^T;  dF/dW_K = sum_s sigma_s w_s W_Q p_q (p_s - pbar)^T,
    w_s = g^T W_O W_V p_s (the softmax Jacobian sigma_s (delta_sr - sigma_r) gives the p_s - pbar)."""
    b = batch.run(r) if batch.has_runs else batch
    WQ, WK, WV, WO, a = (t[r].detach() for t in (model.W_Q, model.W_K, model.W_V, model.W_O, model.a))
    E = b.embedding().to(WQ.dtype)
    ps, pq = E[:, : b.N], E[:, b.N]
    sig = torch.softmax(torch.einsum("bsk,bk->bs", ps @ WK.T, pq @ WQ.T), -1)
    pbar = torch.einsum("bs,bsd->bd", sig, ps)
    sa = pbar @ WV.T
    h = sa @ WO.T
    g = a * (h >= 0).to(h.dtype)
    F = (a * torch.relu(h)).sum(-1)
    y = b.y_query[:, 0].to(h.dtype)
    c = -y * (y * F < 1).to(h.dtype) / len(y)  # d mean hinge / dF per prompt
    u = g @ WO  # (B, m_b): sum_i g_i W_O(i)
    w = torch.einsum("bj,bsj->bs", u, ps @ WV.T)  # w_s
    coef = c[:, None] * sig * w
    dev = ps - pbar[:, None]
    return {"W_O": torch.einsum("bm,bj->mj", c[:, None] * g, sa),
            "W_V": torch.einsum("bj,bd->jd", c[:, None] * u, pbar),
            "W_Q": torch.einsum("bs,bsk,bd->kd", coef, dev @ WK.T, pq),
            "W_K": torch.einsum("bs,bk,bsd->kd", coef, pq @ WQ.T, dev)}


def first_hit(acc: torch.Tensor, steps: Sequence[int], level: float) -> torch.Tensor:
    """(R,) first recorded step with accuracy >= level (NaN where never reached); acc (n_rec, R)."""
    hit = acc >= level
    st = torch.as_tensor(list(steps), dtype=torch.float64)
    out = torch.full((acc.shape[1],), float("nan"), dtype=torch.float64)
    for r in range(acc.shape[1]):
        idx = torch.nonzero(hit[:, r])
        if len(idx):
            out[r] = st[int(idx[0])]
    return out


@dataclass
class Group:
    """Runs that share a data law (one swept value): ``cfg.seeds`` of them."""

    label: str
    value: float
    sampler: SelectorsSampler
    lr: float
    tasks: list = field(default_factory=list)


@dataclass
class TrainResult:
    """One batched training of ``len(labels) = G`` groups x ``S`` seeds (run r = g * S + s).

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

    def grid(self, x: torch.Tensor) -> torch.Tensor:
        """(R, ...) -> (G, S, ...)."""
        return x.reshape(len(self.labels), self.S, *x.shape[1:])

    def final(self, name: str) -> torch.Tensor:
        """(G, S) last recorded value of a measurement."""
        return self.grid(self.curves[name][-1])

    def hits(self) -> torch.Tensor:
        return self.grid(self.t_hit)

    def summary(self) -> dict:
        return {"labels": list(map(str, self.labels)), "values": [float(v) for v in self.values],
                "t_hit": _nan_none(self.hits().tolist()), "final_acc": self.final("acc").tolist(),
                "final_mass": self.final("mass").tolist(), "seconds": self.seconds, "cpu_seconds": self.cpu_seconds}


def _nan_none(x):
    if isinstance(x, list):
        return [_nan_none(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


def train_groups(cfg: SelectorsConfig, groups: Sequence[Group], *, mechanism: bool = False,
                 patterns=None, device=None) -> TrainResult:
    """Train ``cfg.seeds`` runs per group, all groups together (one model with R = G x S runs)."""
    t0, c0 = time.perf_counter(), time.process_time()
    torch.set_flush_denormal(True)  # softmax of large logits produces denormals (spec A24)
    S = cfg.seeds
    seeds = [cfg.seed + s for _ in groups for s in range(S)]
    R = len(seeds)
    model = cfg.model(seeds)
    data = GroupedSampler([(g.sampler, S) for g in groups])
    tests = [expand_runs(g.sampler.sample(cfg.test_prompts, make_generator(cfg.test_seed)), S) for g in groups]
    test = concat_runs(tests)
    tasks_all = None
    if all(g.tasks for g in groups):
        # task ids index each group's own task list: remap to one list for the partner measurement
        tasks_all, offs = [], []
        for g in groups:
            offs.append(len(tasks_all))
            tasks_all.extend(g.tasks)
        off = torch.tensor([o for o in offs for _ in range(S)])[:, None]
        test = replace(test, task_ids=test.task_ids + off)
    pats = (patterns if patterns is not None else cfg.patterns()) if mechanism else None
    cache: dict = {}
    test_dev: dict = {}

    def measure(m, step):
        if cache.get("step") != step:
            dev = m.W_Q.device
            if dev not in test_dev:
                test_dev.clear()
                test_dev[dev] = test.to(dev, m.W_Q.dtype)
            cache["step"] = step
            cache["vals"] = evaluate(m, test_dev[dev], tasks_all, pats)
        return cache["vals"]

    probe = evaluate(cfg.model(seeds[:1]), test.run(0), tasks_all, pats)
    record = {k: (lambda m, s, k=k: measure(m, s)[k]) for k in probe}
    lr = [g.lr for g in groups for _ in range(S)]
    hist = train(model, data, steps=cfg.steps, optimizer="sgd", lr=lr, loss="hinge", batch_size=cfg.batch,
                 record=record, record_every=cfg.eval_every, device=device)
    curves = {k: v.to(torch.float64) for k, v in hist.records.items()}
    t_hit = first_hit(curves["acc"], hist.record_steps, cfg.hit_acc)
    return TrainResult(labels=[g.label for g in groups], values=[g.value for g in groups], seeds=seeds,
                       steps=list(hist.record_steps), curves=curves, t_hit=t_hit, train_loss=hist.loss,
                       model=model.to("cpu", torch.float32), seconds=time.perf_counter() - t0,
                       cpu_seconds=time.process_time() - c0)


# ============================================================================ theory
def prompt_length_bound(M: int, alpha: float) -> int:
    """ceil(2 ln M / alpha): eq. (5) read with constant 1 (eq. (38) has ln M1 instead of ln M)."""
    return int(math.ceil(2 * math.log(M) / alpha))


def oracle_accuracy(alpha, l):
    """Accuracy of the ideal selector that reads the label of any demonstration sharing the query's
    pattern and guesses when there is none: 1 - 1/2 (1 - alpha/2)^l (exact under the data model)."""
    a = np.asarray(alpha, dtype=float)
    return 1 - 0.5 * (1 - a / 2) ** np.asarray(l, dtype=float)


def chernoff_tail(alpha: float, l: int, c: float) -> float:
    """The bound (37): P(#{mu_a demonstrations}/l <= (1 - c) alpha/2) <= exp(-l c^2 alpha / 2) -- as
    printed; Lemma 2's (14) with mean p = alpha/2 gives the sharper exp(-l c^2 alpha / 4)."""
    return math.exp(-l * c * c * alpha / 2)


def binomial_lower_tail(alpha: float, l: int, c: float) -> float:
    """Exact P(Bin(l, alpha/2) <= (1 - c) l alpha/2), the quantity (37) bounds."""
    p = alpha / 2
    k_max = math.floor((1 - c) * l * p + 1e-12)
    return float(sum(math.comb(l, k) * p**k * (1 - p) ** (l - k) for k in range(0, k_max + 1)))


def collapse_recursion(alpha: float, steps: int, eta: float = 0.1, a: float = 1.0, M1: int = 8) -> np.ndarray:
    """Iterate eq. (46): gamma_T = min(1, (1-alpha)/alpha * exp(-(eta^2/M1^2) (sum_{b<T} eta^2 b^2 gamma_b / a)^2)).

    gamma_t is the attention mass *outside* N_*.  The constants are free in the paper (spec §5.8
    check (i)); the recursion shows the plateau-then-collapse shape, not the alpha trend."""
    g = np.empty(steps + 1)
    pre = (1 - alpha) / alpha
    s = 0.0
    for t in range(steps + 1):
        g[t] = min(1.0, pre * math.exp(-(eta**2 / M1**2) * s**2))
        s += eta**2 * t**2 * g[t] / a
    return g


def collapse_times(gamma: np.ndarray, steps=None, levels=(0.9, 0.5, 0.1)) -> list:
    """Steps at which gamma first falls below level x gamma[0] (linear interpolation), per level."""
    steps = np.arange(len(gamma)) if steps is None else np.asarray(steps, dtype=float)
    out = []
    for lev in levels:
        thr = lev * gamma[0]
        idx = np.nonzero(gamma < thr)[0]
        if not len(idx):
            out.append(float("nan"))
            continue
        i = idx[0]
        if i == 0:
            out.append(float(steps[0]))
            continue
        f = (gamma[i - 1] - thr) / (gamma[i - 1] - gamma[i])
        out.append(float(steps[i - 1] + f * (steps[i] - steps[i - 1])))
    return out


def collapse_sharpness(gamma: np.ndarray, steps=None) -> float:
    """(t_10% - t_90%) / t_50%: the width of the collapse relative to its onset.  Scale-free: for
    the recursion (46) it does not depend on eta, a or M1 (they only rescale time)."""
    t90, t50, t10 = collapse_times(gamma, steps)
    return (t10 - t90) / t50


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (finite, positive entries only)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def fit_alpha_law(alpha, t_hit) -> tuple[float, float, float]:
    """Fit T = A / (C - 1/alpha) (Thm 1's factor (C - alpha^{-1})^{-1}) by least squares in log T
    over a grid of C > max 1/alpha.  Returns (A, C, rms log error)."""
    alpha, t = np.asarray(alpha, dtype=float), np.asarray(t_hit, dtype=float)
    ok = np.isfinite(t) & (t > 0)
    alpha, t = alpha[ok], t[ok]
    if len(t) < 2:
        return float("nan"), float("nan"), float("nan")
    inv = 1 / alpha
    best = (float("inf"), float("nan"), float("nan"))
    for C in np.concatenate([inv.max() + np.geomspace(1e-3, 100, 400)]):
        logA = np.mean(np.log(t) + np.log(C - inv))
        err = np.sqrt(np.mean((np.log(t) - (logA - np.log(C - inv))) ** 2))
        if err < best[0]:
            best = (err, float(np.exp(logA)), float(C))
    return best[1], best[2], best[0]


def group_hits(res: TrainResult, how: str = "median") -> np.ndarray:
    """(G,) iterations to ``hit_acc`` per swept value: the median over seeds (a seed that never got
    there counts as later than every seed that did: +inf) or the fastest seed (``how='min'``)."""
    h = res.hits().numpy().copy()
    h[np.isnan(h)] = np.inf
    return np.median(h, axis=1) if how == "median" else h.min(axis=1)


def output_layer_split(cfg: SelectorsConfig, res: TrainResult) -> torch.Tensor:
    """Lemma 3: (G, S, 2) mean over lucky neurons (spec A9, at the end of training) of the norm of
    the accumulated W_O update on the feature coordinates 1..d_x (column 0) and on the label
    coordinates d_x+1..d_x+d_y (column 1).  The initial W_O is rebuilt from the seeds."""
    init = cfg.model(res.seeds).W_O.detach().float()
    WO = res.model.W_O.detach()
    dW = WO - init
    dx, D = cfg.d_x, cfg.D
    q_tok = torch.zeros(D)
    q_tok[dx:] = cfg.q().float()
    read = torch.einsum("rmj,rjd,d->rm", WO, res.model.W_V.detach(), q_tok)
    a = res.model.a.float()
    lucky = (((a > 0) & (read > 0)) | ((a < 0) & (read < 0))).float()
    feat = (dW[..., :dx].norm(dim=-1) * lucky).sum(-1) / lucky.sum(-1).clamp_min(1)
    lab = (dW[..., dx:D].norm(dim=-1) * lucky).sum(-1) / lucky.sum(-1).clamp_min(1)
    return res.grid(torch.stack([feat, lab], -1).double())


# ============================================================================ experiments
@dataclass(frozen=True)
class SeedSweepConfig(SelectorsConfig):
    """E1 (Figure 1, Props. 1-2, Lemma 7) over many seeds, for the cyclic and the all-pairs task
    sets trained together: the selectors paper's seed sweep (the benchmarked workload)."""

    task_sets: tuple = ("cyclic", "all_pairs")
    seeds: int = 8
    steps: int = 1500
    eval_every: int = 10  # resolves the attention collapse (it takes a few dozen steps)
    CI = dict(seeds=4, steps=500, test_prompts=500)

    def validate(self):
        super().validate()
        if not self.task_sets:
            raise chk.ConfigError("task_sets must be non-empty")
        for t in self.task_sets:
            chk.one_of("task_sets", t, TASK_SETS)


def run_seed_sweep(cfg: SeedSweepConfig, device=None) -> TrainResult:
    groups = []
    for name in cfg.task_sets:
        tasks = task_set(name, cfg.M1)
        groups.append(Group(name, float(len(tasks)), cfg.sampler(tasks=tasks), cfg.eta, tasks))
    return train_groups(cfg, groups, mechanism=True, device=device)


def summarize_seed_sweep(res: TrainResult) -> dict:
    out = res.summary()
    for k in ("WQ_mu", "WK_mu", "WQ_nu", "WK_nu", "lab_in", "feat_in", "lab_lit", "feat_lit", "partner_mass"):
        out[f"final_{k}"] = res.final(k).tolist()
    return out


@dataclass(frozen=True)
class AlphaSweepConfig(SelectorsConfig):
    """E2: iterations to 95% test accuracy against alpha, at a fixed training prompt length."""

    alphas: tuple = (0.3, 0.45, 0.6, 0.8, 1.0)
    l_tr: int = 14
    steps: int = 1200
    CI = dict(alphas=(0.45, 0.6, 1.0), seeds=2, steps=400, test_prompts=300)

    def validate(self):
        super().validate()
        for a in self.alphas:
            if not 0 < a <= 1:
                raise chk.ConfigError(f"alphas must lie in (0, 1] (got {a})")


def run_alpha_sweep(cfg: AlphaSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = [Group(f"alpha={a:g}", a, cfg.sampler(alpha=a), cfg.eta, tasks) for a in cfg.alphas]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class NoiseSweepConfig(SelectorsConfig):
    """E3: noise of norm exactly tau inside span{mu} (A10: isotropic noise barely changes inner
    products), against the iterations and the final accuracy."""

    taus: tuple = (0.0, 1.0, 2.0, 2.5, 3.0, 4.0)
    noise_in_span: bool = True
    CI = dict(taus=(0.0, 2.0, 4.0), seeds=2, steps=350, test_prompts=300)

    def validate(self):
        super().validate()
        for t in self.taus:
            chk.positive("taus", t, allow_zero=True)


def run_noise_sweep(cfg: NoiseSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = [Group(f"tau={t:g}", t, cfg.sampler(tau=t), cfg.eta, tasks) for t in cfg.taus]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class LambdaSweepConfig(SelectorsConfig):
    """E4: every token's relevant coefficient fixed to lambda = lambda_* (no noise)."""

    lambdas: tuple = (0.3, 0.5, 0.7, 0.9)
    tau: float = 0.0
    steps: int = 1500
    CI = dict(lambdas=(0.5, 0.9), seeds=2, steps=600, test_prompts=300)

    def validate(self):
        super().validate()
        for v in self.lambdas:
            chk.positive("lambdas", v)


def run_lambda_sweep(cfg: LambdaSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = [Group(f"lambda*={v:g}", v, cfg.sampler(lambda_range=(v, v)), cfg.eta, tasks) for v in cfg.lambdas]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class EtaSweepConfig(SelectorsConfig):
    """E5: the step size eta (per-run learning rates, same data streams for every eta)."""

    etas: tuple = (0.25, 0.5, 1.0)
    steps: int = 2400
    CI = dict(etas=(0.5, 1.0), seeds=2, steps=450, test_prompts=300)

    def validate(self):
        super().validate()
        for v in self.etas:
            chk.positive("etas", v)


def run_eta_sweep(cfg: EtaSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    s = cfg.sampler(tasks=tasks)
    groups = [Group(f"eta={v:g}", v, s, v, tasks) for v in cfg.etas]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class PatternCountConfig(SelectorsConfig):
    """Thm 1's sqrt(M): vary the number M2 of irrelevant patterns (d_x fixed at M1 + max M2 +
    d_extra so that all runs share one model shape; unused directions carry no pattern)."""

    M2s: tuple = (24, 56, 120)
    M2: int = 120
    CI = dict(M2s=(24, 120), seeds=1, steps=300, test_prompts=300)

    def validate(self):
        super().validate()
        for v in self.M2s:
            chk.positive_int("M2s", v)
            if v > self.M2:
                raise chk.ConfigError(f"every entry of M2s must be <= M2={self.M2} (the model width)")


def run_pattern_count(cfg: PatternCountConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = []
    for M2 in cfg.M2s:
        mu, nu = cfg.patterns(M2)
        groups.append(Group(f"M={cfg.M1 + M2}", cfg.M1 + M2, cfg.sampler(nu=nu), cfg.eta, tasks))
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class PromptLengthConfig(SelectorsConfig):
    """E6: final accuracy against the training prompt length l_tr for several alpha (one batched
    training per length, the alphas x seeds inside it), against the oracle 1 - 1/2 (1 - alpha/2)^l."""

    alphas: tuple = (0.3, 0.5, 0.8)
    lengths: tuple = (2, 4, 8, 16, 32)
    seeds: int = 2
    steps: int = 800
    CI = dict(alphas=(0.3, 0.8), lengths=(2, 4, 8, 16), seeds=1, steps=400, test_prompts=300)

    def validate(self):
        super().validate()
        for a in self.alphas:
            if not 0 < a <= 1:
                raise chk.ConfigError(f"alphas must lie in (0, 1] (got {a})")
        for v in self.lengths:
            chk.positive_int("lengths", v)


@dataclass
class PromptLengthResult:
    config: PromptLengthConfig
    acc: torch.Tensor  # (L, A, S) final test accuracy
    mass: torch.Tensor  # (L, A, S)
    oracle: np.ndarray  # (L, A)
    runs: list  # per length: TrainResult
    seconds: float


def run_prompt_length(cfg: PromptLengthConfig, device=None) -> PromptLengthResult:
    t0 = time.perf_counter()
    tasks = task_set(cfg.task_set, cfg.M1)
    runs = []
    for l in cfg.lengths:
        groups = [Group(f"alpha={a:g}", a, cfg.sampler(alpha=a, l=l), cfg.eta, tasks) for a in cfg.alphas]
        runs.append(train_groups(cfg, groups, device=device))
    acc = torch.stack([r.final("acc") for r in runs])
    mass = torch.stack([r.final("mass") for r in runs])
    oracle = oracle_accuracy(np.asarray(cfg.alphas)[None, :], np.asarray(cfg.lengths)[:, None])
    return PromptLengthResult(cfg, acc, mass, oracle, runs, time.perf_counter() - t0)


def summarize_prompt_length(res: PromptLengthResult) -> dict:
    return {"alphas": list(res.config.alphas), "lengths": list(res.config.lengths), "acc": res.acc.tolist(),
            "mass": res.mass.tolist(), "oracle": res.oracle.tolist(), "seconds": res.seconds}


@dataclass(frozen=True)
class TaskCountConfig(SelectorsConfig):
    """E7 (Lemma 1): train on the first n tasks of the cyclic set, on an unbalanced set of M1
    tasks and on all pairs; test on the training tasks and on every ordered pair."""

    n_tasks: tuple = (1, 2, 4, 6, 8)
    extra_sets: tuple = ("unbalanced", "all_pairs")
    CI = dict(n_tasks=(2, 4, 8), extra_sets=("unbalanced",), seeds=2, steps=400, test_prompts=300)

    def validate(self):
        super().validate()
        for n in self.n_tasks:
            chk.positive_int("n_tasks", n)
            if n > self.M1:
                raise chk.ConfigError(f"n_tasks entries must be <= M1={self.M1} (got {n})")
        for s in self.extra_sets:
            chk.one_of("extra_sets", s, ("unbalanced", "all_pairs"))


@dataclass
class TaskCountResult:
    train: TrainResult
    balanced: list  # per group: does the task set meet Lemma 1's rule?
    all_pairs_acc: torch.Tensor  # (G, S)
    all_pairs_mass: torch.Tensor  # (G, S)
    shortcut_acc: torch.Tensor  # (G,) accuracy on the training tasks of the rule 'query pattern -> label'
    train_acc: torch.Tensor  # (G, S) final accuracy on the group's own training tasks


def shortcut_accuracy(tasks: Sequence[PairTask], M1: int, eval_tasks: Sequence[PairTask] | None = None) -> float:
    """Expected accuracy of the in-weights shortcut 'pattern -> label' fitted to the training
    ``tasks`` (+1 where a pattern is labelled +1 more often than -1 in training, a coin flip where
    it is balanced), on the queries of ``eval_tasks`` (default: the training tasks; on all ordered
    pairs any such rule scores exactly 1/2)."""
    cov = pattern_coverage(tasks, M1).to(torch.float64)
    guess = torch.sign(cov[:, 0] - cov[:, 1])  # 0 when balanced: a coin flip
    acc = []
    for t in (tasks if eval_tasks is None else eval_tasks):
        for pat, y in ((t.a, 1.0), (t.b, -1.0)):
            g = float(guess[pat])
            acc.append(0.5 if g == 0 else float(g == y))
    return float(np.mean(acc))


def run_task_count(cfg: TaskCountConfig, device=None) -> TaskCountResult:
    sets = [(f"cyclic[:{n}]", cyclic_pair_tasks(cfg.M1)[:n]) for n in cfg.n_tasks]
    if "unbalanced" in cfg.extra_sets:
        sets.append(("unbalanced", unbalanced_tasks(cfg.M1)))
    if "all_pairs" in cfg.extra_sets:
        sets.append(("all_pairs", all_pair_tasks(cfg.M1)))
    groups = [Group(name, float(len(t)), cfg.sampler(tasks=t), cfg.eta, t) for name, t in sets]
    res = train_groups(cfg, groups, device=device)
    allp = all_pair_tasks(cfg.M1)
    test = cfg.sampler(tasks=allp).sample(cfg.test_prompts, make_generator(cfg.test_seed + 1)).to(dtype=torch.float32)
    ev = evaluate(res.model, test, allp)
    return TaskCountResult(train=res, balanced=[is_balanced(t, cfg.M1) for _, t in sets],
                           all_pairs_acc=res.grid(ev["acc"].to(torch.float64)),
                           all_pairs_mass=res.grid(ev["mass"].to(torch.float64)),
                           shortcut_acc=torch.tensor([shortcut_accuracy(t, cfg.M1) for _, t in sets]),
                           train_acc=res.final("acc"))


def summarize_task_count(res: TaskCountResult) -> dict:
    out = res.train.summary()
    out.update(balanced=res.balanced, all_pairs_acc=res.all_pairs_acc.tolist(),
               all_pairs_mass=res.all_pairs_mass.tolist(), shortcut_acc=res.shortcut_acc.tolist())
    return out


# ---------------------------------------------------------------------------- out of domain
@dataclass(frozen=True)
class OODConfig(SeedSweepConfig):
    """E8-E9 (Thm 2, Cor. 1, Remark 1): a model trained on the cyclic task set (so some pairs are
    unseen), tested on shifted patterns and on controls that break one condition each."""

    task_sets: tuple = ("cyclic",)
    alpha_test: float = 0.6
    l_ts: int = 16
    l_ts_grid: tuple = (1, 2, 4, 8, 16, 32, 64)
    alpha_primes: tuple = (0.2, 0.6)
    ood_prompts: int = 2000
    CI = dict(seeds=4, steps=500, test_prompts=500, ood_prompts=1000, l_ts_grid=(1, 2, 4, 8, 16, 32))

    def validate(self):
        super().validate()
        if self.d_extra < self.M1:
            raise chk.ConfigError(f"d_extra must be >= M1={self.M1}: the controls need fresh directions")
        if self.M1 % 2 or self.M1 < 6:
            raise chk.ConfigError("M1 must be even and >= 6: the shifted patterns pair mu_{2j-1} with mu_{2j}, "
                                  "and alpha' < 1 needs at least 3 of them")
        if not 0 < self.alpha_test <= 1:
            raise chk.ConfigError(f"alpha_test must lie in (0, 1] (got {self.alpha_test})")
        chk.positive_int("l_ts", self.l_ts)
        chk.positive_int("ood_prompts", self.ood_prompts)
        for v in self.l_ts_grid:
            chk.positive_int("l_ts_grid", v)
        for a in self.alpha_primes:
            if not 0 < a <= 1:
                raise chk.ConfigError(f"alpha_primes must lie in (0, 1] (got {a})")


@dataclass(frozen=True)
class Condition:
    name: str
    covered: bool  # does Theorem 2 cover this test distribution?
    violates: str  # which condition of Thm 2 / Remark 1 it breaks ('' when covered)
    mu: torch.Tensor
    nu: torch.Tensor
    q: torch.Tensor
    tasks: tuple
    kappa_max: float


def ood_conditions(cfg: OODConfig, train_tasks: Sequence[PairTask]) -> list[Condition]:
    """The test distributions of E8 (spec §5.9): which Thm 2 covers and which break a condition."""
    E = cfg.basis()
    M1, M2 = cfg.M1, cfg.M2
    mu, nu = E[:M1], E[M1:M1 + M2]
    fresh = E[M1 + M2:]
    h = M1 // 2
    r2 = math.sqrt(2.0)
    cone = (mu[0::2] + mu[1::2]) / r2  # disjoint supports, non-negative coefficients, norm beta
    neg = (mu[0::2] - mu[1::2]) / r2  # disjoint supports, one negative coefficient each
    pm = torch.stack([v for j in range(h) for v in ((mu[2 * j] + mu[2 * j + 1]) / r2, (mu[2 * j] - mu[2 * j + 1]) / r2)])
    q = cfg.q()
    q_perp = torch.zeros_like(q)
    q_perp[1] = cfg.beta
    seen = {(t.a, t.b) for t in train_tasks}
    unseen = tuple(t for t in all_pair_tasks(M1) if (t.a, t.b) not in seen)
    allh, allM = tuple(all_pair_tasks(h)), tuple(all_pair_tasks(M1))
    k = cfg.kappa_max
    conds = [Condition("training tasks (in domain)", True, "", mu, nu, q, tuple(train_tasks), k)]
    if unseen:
        conds.append(Condition("unseen pairs of training patterns", True, "", mu, nu, q, unseen, k))
    conds += [
        Condition("cone mu' = (mu_2j-1 + mu_2j)/sqrt2, nu' = nu", True, "", cone, nu, q, allh, k),
        Condition("cone mu', fresh nu' (outside span{mu, nu})", True, "", cone, fresh[h:], q, allh, k),
        Condition("cone mu', nu' = nu, |kappa| <= 1", True, "", cone, nu, q, allh, 1.0),
        Condition("negative coefficients (mu_2j-1 - mu_2j)/sqrt2", False, "non-negative coefficients", neg, nu, q, allh, k),
        Condition("(mu_1 + mu_2)/sqrt2 vs (mu_1 - mu_2)/sqrt2, shared support", False, "non-negative coefficients",
                  pm, nu, q, allM, k),
        Condition("fresh mu' outside span{mu}", False, "mu' in the cone of {mu}", fresh[:h], nu, q, allh, k),
        Condition("nu' inside span{mu} (nu' = mu'), |kappa| <= 1", False, "nu' outside span{mu}", cone,
                  torch.cat([cone, cone]), q, allh, 1.0),
        Condition("Remark 1 as printed: mu' = (nu_2j-1 + nu_2j)/sqrt2", False, "mu' in the cone of {mu}",
                  (nu[0:2 * h:2] + nu[1:2 * h:2]) / r2, nu[2 * h:], q, allh, k),
        Condition("label embedding q' perpendicular to q", False, "same label embeddings +-q", mu, nu, q_perp,
                  tuple(train_tasks), k),
        Condition("label embeddings flipped (-q for +1)", False, "same label embeddings +-q", mu, nu, -q,
                  tuple(train_tasks), k),
    ]
    return conds


@dataclass
class OODResult:
    config: OODConfig
    train: TrainResult
    conditions: list  # Condition
    acc: torch.Tensor  # (C, S)
    mass: torch.Tensor  # (C, S)
    l_grid: list
    grid_acc: torch.Tensor  # (A', L, S) cone mu' at alpha' and l_ts
    grid_mass: torch.Tensor
    oracle: np.ndarray  # (A', L)


def evaluate_ood(cfg: OODConfig, train_res: TrainResult, group: int = 0) -> OODResult:
    """Evaluate group ``group`` of a training (its seeds) on every condition and on the l_ts grid."""
    S = train_res.S
    model = train_res.model.select_runs(list(range(group * S, (group + 1) * S)))
    train_tasks = task_set(train_res.labels[group], cfg.M1)
    conds = ood_conditions(cfg, train_tasks)
    accs, masses = [], []
    for i, c in enumerate(conds):
        s = SelectorsSampler(c.mu, c.nu, list(c.tasks), l=cfg.l_ts, alpha=cfg.alpha_test, q=c.q, tau=cfg.tau,
                             lambda_range=(cfg.lambda_min, cfg.lambda_max), kappa_max=c.kappa_max)
        b = s.sample(cfg.ood_prompts, make_generator(cfg.test_seed + 100 + i)).to(dtype=torch.float32)
        ev = evaluate(model, b)
        accs.append(ev["acc"])
        masses.append(ev["mass"])
    cone = next(c for c in conds if c.name.startswith("cone mu' = "))
    gacc, gmass = [], []
    for a in cfg.alpha_primes:
        ra, rm = [], []
        for j, l in enumerate(cfg.l_ts_grid):
            s = SelectorsSampler(cone.mu, cone.nu, list(cone.tasks), l=l, alpha=a, q=cone.q, tau=cfg.tau,
                                 lambda_range=(cfg.lambda_min, cfg.lambda_max), kappa_max=cfg.kappa_max)
            b = s.sample(cfg.ood_prompts, make_generator(cfg.test_seed + 1000 + j)).to(dtype=torch.float32)
            ev = evaluate(model, b)
            ra.append(ev["acc"])
            rm.append(ev["mass"])
        gacc.append(torch.stack(ra))
        gmass.append(torch.stack(rm))
    oracle = oracle_accuracy(np.asarray(cfg.alpha_primes)[:, None], np.asarray(cfg.l_ts_grid)[None, :])
    return OODResult(cfg, train_res, conds, torch.stack(accs).double(), torch.stack(masses).double(),
                     list(cfg.l_ts_grid), torch.stack(gacc).double(), torch.stack(gmass).double(), oracle)


def run_ood(cfg: OODConfig, device=None) -> OODResult:
    return evaluate_ood(cfg, run_seed_sweep(cfg, device=device))


def summarize_ood(res: OODResult) -> dict:
    return {"conditions": [c.name for c in res.conditions], "covered": [c.covered for c in res.conditions],
            "acc": res.acc.tolist(), "mass": res.mass.tolist(), "l_grid": res.l_grid,
            "alpha_primes": list(res.config.alpha_primes), "grid_acc": res.grid_acc.tolist(),
            "oracle": res.oracle.tolist(), "train_final_acc": res.train.final("acc").tolist()}


# ============================================================================ interaction
def quick_train(alpha: float = 0.6, tau: float = 0.25, lambda_star: float = 0.6, l_tr: int = 14,
                task_set_name: str = "all_pairs", steps: int = 300, seed: int = 0, **kw) -> TrainResult:
    """One small run (the ci-scale setting) with the mechanism logged, for the live widgets."""
    cfg = SelectorsConfig.for_scale("ci", alpha=alpha, tau=tau, lambda_min=lambda_star, l_tr=l_tr,
                                    task_set=task_set_name, steps=steps, seeds=1, seed=seed, test_prompts=300,
                                    eval_every=10, **kw)
    tasks = task_set(cfg.task_set, cfg.M1)
    return train_groups(cfg, [Group("live", alpha, cfg.sampler(tasks=tasks), cfg.eta, tasks)], mechanism=True)


def plot_mechanism(res: TrainResult, group: int = 0, title: str = ""):
    """Figure 1 (a), (b) and the accuracy / attention mass of one group of a training (mean +- std
    over its seeds); returns the figure."""
    import matplotlib.pyplot as plt

    from ... import plotting

    st = np.asarray(res.steps)

    def c(name):
        return res.grid(res.curves[name].T)[group]

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
    for key, lab, col in (("WQ_mu", r"$\|W_Q\mu\|$", 0), ("WK_mu", r"$\|W_K\mu\|$", 1),
                          ("WQ_nu", r"$\|W_Q\nu\|$", 2), ("WK_nu", r"$\|W_K\nu\|$", 3)):
        plotting.band(axes[0], st, c(key), label=lab, color=plotting.COLORS[col])
    plotting.label(axes[0], "iteration t", "mean norm", "(a) relevant vs irrelevant")
    axes[0].legend(fontsize=7)
    plotting.band(axes[1], st, c("feat_in"), label="feature embeddings", color=plotting.COLORS[0])
    plotting.band(axes[1], st, c("lab_in"), label="label embeddings", color=plotting.COLORS[1])
    plotting.label(axes[1], "iteration t", "mean |contribution| to h", "(b) MLP input before ReLU")
    axes[1].legend(fontsize=7)
    plotting.band(axes[2], st, c("acc"), label="test accuracy", color=plotting.COLORS[2])
    plotting.band(axes[2], st, c("mass"), label=r"attention on $\mathcal{N}_*$", color=plotting.COLORS[4])
    axes[2].set_ylim(0, 1.02)
    plotting.label(axes[2], "iteration t", "held-out value", title or "accuracy and attention")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return fig


# ============================================================================ the chapter's ledger
def export_chapter_ledger(ledger, prefix: str, directory=None):
    """The chapter spans several notebooks that each declare claims with their own id ``prefix``:
    merge this notebook's claims into the chapter's exported ledger, keeping the other notebooks'
    claims from their last run at the same scale, and return the merged :class:`~icl_lab.Ledger`."""
    import json

    from ...claims import Claim, Ledger, claims_dir

    d = claims_dir() if directory is None else directory
    path = d / f"{ledger.paper}.json"
    merged = Ledger(ledger.paper)
    if path.exists():
        for c in json.loads(path.read_text())["claims"]:
            if not c["id"].startswith(prefix) and c["id"] not in ledger.claims:
                merged.claims[c["id"]] = Claim(**c)
    for c in ledger:
        merged.claims[c.id] = c
    merged.claims = dict(sorted(merged.claims.items(), key=lambda kv: (kv[0][0], int("".join(ch for ch in kv[0][1:] if ch.isdigit()) or 0), kv[0])))
    merged.export(d)
    return merged


def summarize_train(res: TrainResult) -> dict:
    return res.summary()


def live_mechanism() -> None:
    """Live controls (ipywidgets) for alpha, tau, lambda*, l_tr, the task set and the number of steps:
    each change retrains with :func:`quick_train` and redraws :func:`plot_mechanism` (both notebooks
    of the chapter show it; the static book hides it and uses kernel-free sliders instead)."""
    import ipywidgets
    import matplotlib.pyplot as plt

    from ... import widgets

    def _live(alpha=0.6, tau=0.25, lambda_star=0.6, l_tr=14, task_set="all_pairs", steps=300):
        res = quick_train(alpha=alpha, tau=tau, lambda_star=lambda_star, l_tr=l_tr, task_set_name=task_set, steps=steps)
        fig = plot_mechanism(res, title=f"alpha={alpha}, tau={tau}, lambda*={lambda_star}, l={l_tr}, {task_set}")
        plt.show()
        plt.close(fig)

    widgets.live(_live, alpha=ipywidgets.FloatSlider(value=0.6, min=0.2, max=1.0, step=0.05),
                 tau=ipywidgets.FloatSlider(value=0.25, min=0.0, max=4.0, step=0.25),
                 lambda_star=ipywidgets.FloatSlider(value=0.6, min=0.2, max=1.0, step=0.1),
                 l_tr=ipywidgets.IntSlider(value=14, min=2, max=32), task_set=["all_pairs", "cyclic"],
                 steps=ipywidgets.IntSlider(value=300, min=100, max=1000, step=100))


from ...registry import Experiment  # noqa: E402  (bottom: the registry imports this module lazily)

EXPERIMENTS = {
    "seed_sweep": Experiment(
        paper="selectors", location="Fig. 1, Prop. 1, Prop. 2, Lemma 7",
        description="Seeds x {cyclic, all-pairs} task sets trained together: W_Q/W_K norms on mu vs nu, "
                    "attention on same-pattern demonstrations, label vs feature part of the MLP input",
        config=SeedSweepConfig, run=run_seed_sweep, summary=summarize_seed_sweep, claims=("M1", "M2", "M3", "M4", "M5", "M6")),
    "alpha": Experiment(
        paper="selectors", location="Thm 1 eq. (6), alpha", description="iterations to 95% accuracy vs alpha",
        config=AlphaSweepConfig, run=run_alpha_sweep, summary=summarize_train, claims=("S1",)),
    "noise": Experiment(
        paper="selectors", location="Thm 1 eq. (6), tau", description="iterations and accuracy vs noise in span{mu}",
        config=NoiseSweepConfig, run=run_noise_sweep, summary=summarize_train, claims=("S2",)),
    "lambda_star": Experiment(
        paper="selectors", location="Thm 1 eq. (6), lambda_*", description="iterations vs fixed relevant coefficient",
        config=LambdaSweepConfig, run=run_lambda_sweep, summary=summarize_train, claims=("S3",)),
    "eta": Experiment(
        paper="selectors", location="Thm 1 eq. (6), eta", description="iterations vs step size",
        config=EtaSweepConfig, run=run_eta_sweep, summary=summarize_train, claims=("S4",)),
    "num_patterns": Experiment(
        paper="selectors", location="Thm 1 eq. (6), sqrt(M)", description="iterations vs number of patterns M",
        config=PatternCountConfig, run=run_pattern_count, summary=summarize_train, claims=("S5",)),
    "prompt_length": Experiment(
        paper="selectors", location="Thm 1 eq. (5), eq. (38)", description="accuracy vs training prompt length and alpha",
        config=PromptLengthConfig, run=run_prompt_length, summary=summarize_prompt_length, claims=("S6", "S7")),
    "task_count": Experiment(
        paper="selectors", location="Lemma 1, Sec. 3.3", description="number and balance of training tasks",
        config=TaskCountConfig, run=run_task_count, summary=summarize_task_count, claims=("S8", "S9")),
    "ood": Experiment(
        paper="selectors", location="Thm 2, Cor. 1, Remark 1", description="out-of-domain tests and controls",
        config=OODConfig, run=run_ood, summary=summarize_ood, claims=("O1", "O2", "O3", "O4", "O5")),
}
