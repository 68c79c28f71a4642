"""Experiments of *Transformers as Multi-Task Feature Selectors* (H. Li, M. Wang, et al., NeurIPS 2023
M3L): configurations per scale, run functions and their summaries.

The paper gives no experimental parameters. The defaults below are the book's reference setting
(the ``paper`` scale), chosen for these reasons: M1 = 8 relevant patterns keeps the cyclic task set
of Lemma 1 small while alpha < 1 still has other patterns to draw; M = 64 patterns and
standard-basis patterns scaled by beta = 5 make the margin of Thm 1 visible; the paper's
initialisation scales delta and xi; width m = 200 and batch B = 64 let every sweep train all its
seeds at once on a CPU. Thm 1's own width, batch, beta and noise conditions are far larger: the
chapter states, claim by claim, which of them hold. The model is :class:`~icl_lab.models.AttentionMLP`
(eq. 2 with the paper's initialisation), the prompts come from
:class:`~icl_lab.data.PairClassificationSampler` (inputs built in float32), the loss is the hinge
loss and the optimiser plain online SGD (fresh prompts every step, ``N = BT``).

Every experiment trains all its runs -- seeds x swept values -- in one batched training
(:func:`~icl_lab.papers.selectors.training.train_groups`). Evaluation prompts come from separate
generators, so the logging interval does not change training.

Experiments: ``seed_sweep`` (Fig. 1, Prop. 1-2, Lemma 7, the cyclic vs all-pairs task sets),
``alpha``, ``noise``, ``lambda_star``, ``eta`` and ``num_patterns`` (the factors of eq. (6)),
``prompt_length`` (eq. (5)), ``task_count`` (Lemma 1), ``ood`` (Thm 2 / Cor. 1 / Remark 1); the
attention-collapse recursion (46) is in :mod:`~icl_lab.papers.selectors.theory`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from ...config import ScaledConfig, make_generator
from ...data.prompts import PairClassificationSampler
from ...data.tasks import PairTask, cyclic_pair_tasks
from ..._checks import ConfigError
from ...models import AttentionMLP
from ...params import PROB, PROMPTS, Bool, Int, OneOf, Real, TupleOf
from .data import TASK_SETS, all_pair_tasks, is_balanced, shortcut_accuracy, task_set, unbalanced_tasks
from .theory import oracle_accuracy, prompt_length_bound, theorem1_conditions
from .training import Group, TrainResult, evaluate, train_groups

SEED = Int(0, 2**31 - 1)
POS = Real(0, 1e3, closed="right")  # a positive scale (beta, xi, lambda, eta, ...)
ALPHA = Real(0, 1, closed="right")


# ============================================================================ configs
@dataclass(frozen=True)
class SelectorsConfig(ScaledConfig):
    """The common setting (the book's reference setting: the paper gives none of these numbers).

    Patterns are scaled standard-basis vectors: mu_j = beta e_j (j < M1), nu_k = beta e_{M1+k},
    and ``d_extra`` further directions stay free for the out-of-domain controls.  ``l_tr = 0``
    means ceil(2 ln M / alpha), eq. (5) with constant 1.  W_Q, W_K have m_a = d_x + d_y rows
    (extra rows start at zero and get zero gradient, so they are inert); W_V and W_O use
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

    PARAMS = dict(
        M1=Int(3, 256), M2=Int(1, 4096), d_extra=Int(0, 4096),
        d_y=Int(2, 64),  # the q' perpendicular-to-q control needs a second coordinate
        beta=POS, delta=Real(0, 1, closed="neither"),  # the paper: delta in (0, 0.1)
        xi=POS, m=Int(1, 20_000), m_b_extra=Int(0, 4096), eta=POS, batch=Int(1, 10**5),
        steps=Int(1, 10**6), alpha=ALPHA, l_tr=Int(0, 10**4), lambda_min=POS, lambda_max=POS,
        kappa_max=PROB,  # the paper: |kappa| <= 1
        tau=Real(0, 1e3), noise_in_span=Bool(), task_set=OneOf(*TASK_SETS), seeds=Int(1, 1000), seed=SEED,
        test_prompts=PROMPTS, eval_every=Int(1, 10**6), hit_acc=ALPHA, test_seed=SEED)

    def validate(self):
        if self.lambda_min > self.lambda_max:
            raise ConfigError(f"lambda_min must be <= lambda_max (got {self.lambda_min} > {self.lambda_max})")

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
                kappa_max=None, noise_in_span=None) -> PairClassificationSampler:
        mu0, nu0 = self.patterns()
        return PairClassificationSampler(
            mu0 if mu is None else mu, nu0 if nu is None else nu,
            task_set(self.task_set, self.M1) if tasks is None else tasks,
            l=self.l if l is None else l, alpha=self.alpha if alpha is None else alpha,
            q=self.q() if q is None else q, tau=self.tau if tau is None else tau,
            lambda_range=(self.lambda_min, self.lambda_max) if lambda_range is None else lambda_range,
            kappa_max=self.kappa_max if kappa_max is None else kappa_max,
            noise_in_span=self.noise_in_span if noise_in_span is None else noise_in_span, dtype=torch.float32)

    def model(self, seeds: Sequence[int]) -> AttentionMLP:
        """The paper's model (eq. 2, its initialisation), one run per seed (the library's
        :class:`~icl_lab.models.AttentionMLP` computes it with the products reordered)."""
        return AttentionMLP(self.d_x, self.d_y, self.m, seeds=list(seeds), m_a=self.D,
                            m_b=self.D + self.m_b_extra, delta=self.delta, xi=self.xi)

    def theorem1(self, lambda_star: float | None = None, tau: float | None = None) -> dict:
        """Which of Thm 1's conditions this setting meets (:func:`~.theory.theorem1_conditions`)."""
        return theorem1_conditions(M1=self.M1, M=self.M, m=self.m, B=self.batch, T=self.steps, beta=self.beta,
                                   delta=self.delta, tau=self.tau if tau is None else tau,
                                   lambda_star=self.lambda_min if lambda_star is None else lambda_star,
                                   alpha=self.alpha, l=self.l)



# ============================================================================ experiments
@dataclass(frozen=True)
class SeedSweepConfig(SelectorsConfig):
    """Figure 1, Props. 1-2 and Lemma 7 over many seeds, for the cyclic and the all-pairs task
    sets trained together: the selectors paper's seed sweep (the benchmarked workload)."""

    task_sets: tuple = ("cyclic", "all_pairs")
    seeds: int = 8
    steps: int = 1500
    eval_every: int = 10  # resolves the attention collapse (it takes a few dozen steps)
    CI = dict(seeds=4, steps=500, test_prompts=500)
    BOOK = dict(seeds=6, steps=1000)
    BOOK_WHY = dict(seeds="6 seeds per task set keep the seed statistics; 8 cost a third more",
                    steps="the attention collapses within 300 steps; 1000 leave a long converged tail")

    PARAMS = dict(task_sets=TupleOf(OneOf(*TASK_SETS), max_len=2, distinct=True))


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
    """Iterations to 95% test accuracy against alpha, at a fixed training prompt length."""

    alphas: tuple = (0.3, 0.45, 0.6, 0.8, 1.0)
    l_tr: int = 14
    steps: int = 1200
    CI = dict(alphas=(0.45, 0.6, 1.0), seeds=2, steps=400, test_prompts=300)
    BOOK = dict(steps=800)
    BOOK_WHY = dict(steps="the reference's 1200 steps only extend the tail after every reachable hit")

    PARAMS = dict(alphas=TupleOf(ALPHA, max_len=32))


def run_alpha_sweep(cfg: AlphaSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = [Group(f"alpha={a:g}", a, cfg.sampler(alpha=a), cfg.eta, tasks) for a in cfg.alphas]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class NoiseSweepConfig(SelectorsConfig):
    """Noise of norm exactly tau inside span{mu} (isotropic noise barely changes the inner
    products), against the iterations and the final accuracy."""

    taus: tuple = (0.0, 1.0, 2.0, 2.5, 3.0, 4.0)
    noise_in_span: bool = True
    CI = dict(taus=(0.0, 2.0, 4.0), seeds=2, steps=350, test_prompts=300)
    BOOK = dict(steps=600)
    BOOK_WHY = dict(steps="hits come within about 350 steps; 600 still separate slow from failing")

    PARAMS = dict(taus=TupleOf(Real(0, 1e3), max_len=32))


def run_noise_sweep(cfg: NoiseSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = [Group(f"tau={t:g}", t, cfg.sampler(tau=t), cfg.eta, tasks) for t in cfg.taus]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class LambdaSweepConfig(SelectorsConfig):
    """Every token's relevant coefficient fixed to lambda = lambda_* (no noise)."""

    lambdas: tuple = (0.3, 0.5, 0.7, 0.9)
    tau: float = 0.0
    steps: int = 1500
    CI = dict(lambdas=(0.5, 0.9), seeds=2, steps=600, test_prompts=300)

    PARAMS = dict(lambdas=TupleOf(POS, max_len=32))


def run_lambda_sweep(cfg: LambdaSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = [Group(f"lambda*={v:g}", v, cfg.sampler(lambda_range=(v, v)), cfg.eta, tasks) for v in cfg.lambdas]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class EtaSweepConfig(SelectorsConfig):
    """The step size eta (per-run learning rates, same data streams for every eta)."""

    etas: tuple = (0.25, 0.5, 1.0)
    steps: int = 2400
    CI = dict(etas=(0.5, 1.0), seeds=2, steps=450, test_prompts=300)
    BOOK = dict(steps=1000)
    BOOK_WHY = dict(steps="eta = 0.25 hits at about 650 steps; 1000 suffice")

    PARAMS = dict(etas=TupleOf(POS, max_len=32))


def run_eta_sweep(cfg: EtaSweepConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    s = cfg.sampler(tasks=tasks)
    groups = [Group(f"eta={v:g}", v, s, v, tasks) for v in cfg.etas]
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class PatternCountConfig(SelectorsConfig):
    """Thm 1's sqrt(M): vary the number M2 of irrelevant patterns (d_x fixed at M1 + max M2 +
    d_extra so that all runs share one model shape; unused directions carry no pattern)."""

    M2s: tuple = (56, 120, 248)  # M = 64, 128, 256 >= M1^2 (Sec. 3.1)
    M2: int = 248
    CI = dict(M2s=(56, 248), seeds=2, steps=300, test_prompts=300)
    BOOK = dict(M2s=(56, 248), seeds=2, steps=400)
    BOOK_WHY = dict(M2s="the two ends of the M range (64 and 256) give the slope; the middle adds 40% of the cost",
                    seeds="the hits do not vary with M for a given seed", steps="every hit comes before 200 steps")

    PARAMS = dict(M2s=TupleOf(Int(1, 4096), max_len=32))

    def validate(self):
        super().validate()
        if max(self.M2s) > self.M2:
            raise ConfigError(f"every entry of M2s must be <= M2={self.M2} (the model width)")


def run_pattern_count(cfg: PatternCountConfig, device=None) -> TrainResult:
    tasks = task_set(cfg.task_set, cfg.M1)
    groups = []
    for M2 in cfg.M2s:
        mu, nu = cfg.patterns(M2)
        groups.append(Group(f"M={cfg.M1 + M2}", cfg.M1 + M2, cfg.sampler(nu=nu), cfg.eta, tasks))
    return train_groups(cfg, groups, device=device)


@dataclass(frozen=True)
class PromptLengthConfig(SelectorsConfig):
    """Final accuracy against the training prompt length l_tr for several alpha (one batched
    training per length, the alphas x seeds inside it), against the oracle 1 - 1/2 (1 - alpha/2)^l."""

    alphas: tuple = (0.3, 0.5, 0.8)
    lengths: tuple = (2, 4, 8, 16, 32)
    seeds: int = 2
    steps: int = 800
    CI = dict(alphas=(0.3, 0.8), lengths=(2, 4, 8, 16), seeds=1, steps=400, test_prompts=300)
    BOOK = dict(steps=400)
    BOOK_WHY = dict(steps="final accuracies settle within 400 steps except at the longest prompts with small alpha")

    PARAMS = dict(alphas=TupleOf(ALPHA, max_len=32), lengths=TupleOf(Int(1, 4096), max_len=32))


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
    """Lemma 1: train on the first n tasks of the cyclic set, on an unbalanced set of M1
    tasks and on all pairs; test on the training tasks and on every ordered pair."""

    n_tasks: tuple = (1, 2, 4, 6, 8)
    extra_sets: tuple = ("unbalanced", "all_pairs")
    CI = dict(n_tasks=(2, 4, 8), extra_sets=("unbalanced",), seeds=2, steps=400, test_prompts=300)
    BOOK = dict(seeds=2, steps=600)
    BOOK_WHY = dict(seeds="the task-count effect is a gap of 0.4 in accuracy, far above the seed spread",
                    steps="the solvable sets converge within 400 steps")

    PARAMS = dict(n_tasks=TupleOf(Int(1, 256), max_len=32),
                  extra_sets=TupleOf(OneOf("unbalanced", "all_pairs"), min_len=0, max_len=2, distinct=True))

    def validate(self):
        super().validate()
        if max(self.n_tasks) > self.M1:
            raise ConfigError(f"n_tasks entries must be <= M1={self.M1} (got {max(self.n_tasks)})")


@dataclass
class TaskCountResult:
    train: TrainResult
    balanced: list  # per group: does the task set meet Lemma 1's rule?
    all_pairs_acc: torch.Tensor  # (G, S)
    all_pairs_mass: torch.Tensor  # (G, S)
    shortcut_acc: torch.Tensor  # (G,) accuracy on the training tasks of the rule 'query pattern -> label'
    train_acc: torch.Tensor  # (G, S) final accuracy on the group's own training tasks


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
    """Thm 2, Cor. 1, Remark 1: a model trained on the cyclic task set (so some pairs are
    unseen), tested on shifted patterns and on controls that break one condition each."""

    task_sets: tuple = ("cyclic",)
    alpha_test: float = 0.6
    l_ts: int = 16
    l_ts_grid: tuple = (1, 2, 4, 8, 16, 32, 64)
    alpha_primes: tuple = (0.2, 0.6)
    ood_prompts: int = 2000
    CI = dict(seeds=4, steps=500, test_prompts=500, ood_prompts=1000, l_ts_grid=(1, 2, 4, 8, 16, 32))

    PARAMS = dict(alpha_test=ALPHA, l_ts=Int(1, 4096), l_ts_grid=TupleOf(Int(1, 4096), max_len=32),
                  alpha_primes=TupleOf(ALPHA, max_len=32), ood_prompts=PROMPTS)

    def validate(self):
        super().validate()
        if self.d_extra < self.M1:
            raise ConfigError(f"d_extra must be >= M1={self.M1}: the controls need fresh directions")
        if self.M1 % 2 or self.M1 < 6:
            raise ConfigError("M1 must be even and >= 6: the shifted patterns pair mu_{2j-1} with mu_{2j}, "
                                  "and alpha' < 1 needs at least 3 of them")


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
    """The out-of-domain test distributions: which Thm 2 covers and which break a condition."""
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
        s = PairClassificationSampler(c.mu, c.nu, list(c.tasks), l=cfg.l_ts, alpha=cfg.alpha_test, q=c.q,
                                      tau=cfg.tau, lambda_range=(cfg.lambda_min, cfg.lambda_max),
                                      kappa_max=c.kappa_max, dtype=torch.float32)
        b = s.sample(cfg.ood_prompts, make_generator(cfg.test_seed + 100 + i)).to(dtype=torch.float32)
        ev = evaluate(model, b)
        accs.append(ev["acc"])
        masses.append(ev["mass"])
    cone = next(c for c in conds if c.name.startswith("cone mu' = "))
    gacc, gmass = [], []
    for a in cfg.alpha_primes:
        ra, rm = [], []
        for j, l in enumerate(cfg.l_ts_grid):
            s = PairClassificationSampler(cone.mu, cone.nu, list(cone.tasks), l=l, alpha=a, q=cone.q,
                                          tau=cfg.tau, lambda_range=(cfg.lambda_min, cfg.lambda_max),
                                          kappa_max=cfg.kappa_max, dtype=torch.float32)
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


# ---------------------------------------------------------------------------- Theorem 1's regime
@dataclass(frozen=True)
class Theorem1Config(SeedSweepConfig):
    """A setting that meets Theorem 1's conditions as far as one machine allows (the reference run
    of the chapter; the paper gives no setting). Read with constant 1, epsilon_m = 0.49:

    * training on the M1 required tasks (the cyclic set of Lemma 1): holds;
    * patterns M = M1 + M2 = 64 >= M1^2 = 64: holds;
    * width (35) m >= eps_m^-2 M1^2 log N, N = BT = 128 x 2000: m = 3400 >= 3319, holds;
    * batch (39) B = 128 >= M1 log M1 = 16.6, and B >= lambda_*^-4 = 7.7 (lambda_* = 0.6): holds;
    * prompt length (5) l = ceil(2 ln M / alpha) = 14: holds;
    * noise tau = 0.05 with 1 - eps_m - tau M1 = 0.11 > 0: holds;
    * initialisation delta = 0.09 in (0, 0.1), and log M1 >= delta^2 beta^2 = 0.20 (B.4): hold (the
      other experiments use the boundary delta = 0.1);
    * scale beta = 5 against Theta(log log M1) = 0.73: NOT met (6.8 times; the Theta leaves the
      constant free, and with beta <= 2 the model does not learn within thousands of steps).
    :meth:`SelectorsConfig.theorem1` recomputes the list from the fields.
    """

    task_sets: tuple = ("cyclic",)
    m: int = 3400
    batch: int = 128
    steps: int = 2000
    tau: float = 0.05
    delta: float = 0.09
    seeds: int = 16
    eval_every: int = 25
    CI = dict(m=200, batch=64, steps=300, seeds=2, test_prompts=300)
    BOOK = {}  # not run by the book: the chapter reads the stored paper-scale records


def run_theorem1(cfg: Theorem1Config, device=None) -> TrainResult:
    return run_seed_sweep(cfg, device=device)


def summarize_theorem1(res: TrainResult) -> dict:
    out = summarize_seed_sweep(res)
    out["final_hinge"] = res.final("hinge").tolist()
    out["final_mass_present"] = res.final("mass_present").tolist()
    return out


def summarize_train(res: TrainResult) -> dict:
    return res.summary()


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
    "theorem1": Experiment(
        paper="selectors", location="Thm 1 (in its own regime)",
        description="the cyclic task set in a setting that meets Theorem 1's width, batch, length, noise and "
                    "pattern-count conditions: accuracy, attention mass and Fig. 1's mechanism over seeds",
        config=Theorem1Config, run=run_theorem1, summary=summarize_theorem1, claims=("M18",)),
    "ood": Experiment(
        paper="selectors", location="Thm 2, Cor. 1, Remark 1", description="out-of-domain tests and controls",
        config=OODConfig, run=run_ood, summary=summarize_ood, claims=("O1", "O2", "O3", "O4", "O5")),
}
