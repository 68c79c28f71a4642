"""The selectors chapter's common setting (:class:`SelectorsConfig`, the book's reference setting:
the paper gives no parameters) and the seed sweep that Fig. 1, the mechanism claims, the
out-of-domain tests and the Theorem 1 reference run share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from ...params import ConfigError
from ...config import ScaledConfig
from ...data.prompts import PairClassificationSampler
from ...models import AttentionMLP
from ...params import PROB, PROMPTS, Bool, Int, OneOf, Real, TupleOf
from ...registry import Registry, returns
from .data import TASK_SETS, task_set
from .theory import prompt_length_bound, theorem1_conditions
from .training import TRAIN_SUMMARY, Group, TrainResult, train_groups

EXPERIMENTS = Registry("selectors")

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


#: the mechanism's measurements (Fig. 1, Props. 1-2, Lemma 7) whose final values the summary keeps
MECHANISM = ("WQ_mu", "WK_mu", "WQ_nu", "WK_nu", "lab_in", "feat_in", "lab_lit", "feat_lit", "partner_mass")


@returns(*TRAIN_SUMMARY, *(f"final_{k}" for k in MECHANISM), per_seed={"final_WK_mu": 1, "final_WK_nu": 1,
         "final_WQ_mu": 1, "final_WQ_nu": 1, "final_acc": 1, "final_feat_in": 1, "final_feat_lit": 1, "final_lab_in":
         1, "final_lab_lit": 1, "final_mass": 1, "final_partner_mass": 1, "t_hit": 1}, timings=("cpu_seconds",
         "seconds"), text=("labels",))
def summarize_seed_sweep(res: TrainResult, finals: Sequence[str] = MECHANISM) -> dict:
    """The training summary plus the final value (``final_<name>``) of each measurement in ``finals``."""
    out = res.summary()
    for k in finals:
        out[f"final_{k}"] = res.final(k).tolist()
    return out


@EXPERIMENTS.register("seed_sweep", config=SeedSweepConfig, summary=summarize_seed_sweep,
                      location="Fig. 1, Prop. 1, Prop. 2, Lemma 7",
                      description="Seeds x {cyclic, all-pairs} task sets trained together: "
                                  "W_Q/W_K norms on mu vs nu, attention on same-pattern "
                                  "demonstrations, label vs feature part of the MLP input",
                      claims=("M1", "M2", "M3", "M4", "M5", "M6"))
def run_seed_sweep(cfg: SeedSweepConfig, device=None) -> TrainResult:
    groups = []
    for name in cfg.task_sets:
        tasks = task_set(name, cfg.M1)
        groups.append(Group(name, float(len(tasks)), cfg.sampler(tasks=tasks), cfg.eta, tasks))
    return train_groups(cfg, groups, mechanism=True, device=device)
