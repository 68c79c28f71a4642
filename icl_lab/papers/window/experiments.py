"""Chapter "window": Collins et al., *Softmax Attention Adapts to Function Lipschitzness*.

Two kinds of experiments:

* **population** (no training): Monte-Carlo signal/noise curves S_n(c), N_n(c) on a grid of window
  scales c (M = c I), from which the optimal window c*(L, sigma, n) follows for every (L, sigma)
  (Thm 3.4, 3.5, power laws of App. C/D), the exact linear-attention optimum (Thm 3.6) and the
  low-rank (c1, c2) landscape (Thm 4.4);
* **trained** (the paper's figures): the tied attention M = W^T W (W = 0.001 I at start), Adam, one
  task per iteration with N = ceil(sqrt(n)) queries, trials and L/sigma/class values batched as runs
  of one training (Figs 1, 3, 4, 5, 9; Lemma B.5; Thm 4.4 by gradient training).

Losses follow the paper's convention E(y_hat - f(x_q))^2 (no factor 1/2); the trainer's 1/2 is a
constant factor Adam does not see.  Seeds: trial t of every configuration uses ``seed + t`` (runs
that differ only in L, sigma or class see the same random stream: common random numbers).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from ... import _checks as chk
from ...config import ScaledConfig, make_generator
from ...data import (AffineTask, CosineTask, LowRankTask, PromptBatch, PromptSampler, TwoReLUTask, anisotropic_sphere,
                    low_rank_covariates, random_subspace, sphere, transformed_sphere)
from ...data.tasks import HillsTask
from ...metrics import spectral_norm
from ...models import KernelAttention
from ...train import train
from . import (GroupedSampler, PrefetchSampler, WrappedCosineHills, fit_slope, linear_attention_loss, lowrank_landscape,
                      optimal_window, window_curves)

F64 = torch.float64
CLASSES = ("affine", "relu", "cos")


# ============================================================================ helpers
def make_task(kind: str, d: int, L: float):
    """The paper's task classes: 'affine' (Def. 3.2), 'relu' (2-ReLU, Def. 3.2), 'cos' (cos(L w^T x))."""
    chk.one_of("task class", kind, CLASSES)
    return {"affine": AffineTask, "relu": TwoReLUTask, "cos": CosineTask}[kind](d, L)


def sphere_inputs(d: int):
    return lambda s, g: sphere(s, d, g)


def input_law(name: str, d: int):
    """'iso' = U^d (uniform on the sphere), 'aniso' = U^d_psi (S_d = diag(1..d), Sec. 3.2)."""
    chk.one_of("inputs", name, ("iso", "aniso"))
    return sphere_inputs(d) if name == "iso" else (lambda s, g: anisotropic_sphere(s, d, g))


def queries_for(n: int) -> int:
    """N = ceil(sqrt(n)) queries per task (App. J; spec A3)."""
    return math.ceil(math.sqrt(n))


def log_grid(lo: float, hi: float, points: int) -> torch.Tensor:
    return torch.logspace(math.log10(lo), math.log10(hi), points, dtype=F64)


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


def _train_window(samplers, d: int, seeds, *, steps: int, lr, lr_decay: float, activation: str = "softmax",
                  record=None, record_every: int | None = None, record_at=None, init=0.001, tied: bool = True,
                  init_std: float = 0.01, device=None):
    """Adam on one task per iteration for runs whose data laws are ``samplers`` (one per run)."""
    model = KernelAttention(d, seeds=list(seeds), activation=activation, tied=tied, init=init, init_std=init_std)
    rec = {"norm": lambda m, s: spectral_norm(m.M),
           "mean_eig": lambda m, s: torch.diagonal(m.M, dim1=-2, dim2=-1).mean(-1)}
    rec.update(record or {})
    data = PrefetchSampler(GroupedSampler(samplers), steps_per_draw=min(steps, 500))
    hist = train(model, data, steps=steps, optimizer="adam", lr=lr, lr_decay=lr_decay,
                 batch_size=1, record=rec, record_every=record_every, record_at=record_at, device=device)
    return model.to("cpu"), hist


def _check_common(cfg):
    chk.positive_int("seeds", cfg.seeds)
    chk.positive_int("seed", cfg.seed, minimum=0)


# ============================================================================ population: power laws
@dataclass(frozen=True)
class PowerLawConfig(ScaledConfig):
    """Signal and noise terms against c at large n (App. C, D; spec §5.2-5.3): affine and 2-ReLU
    signal at L = 1, noise N_n(c).  d = 3 separates the exponents (d-1)/2 = 1 and d/2 = 1.5."""

    d: int = 3
    n: int = 10_000
    tasks: int = 400
    c_min: float = 0.05
    c_max: float = 2000.0
    points: int = 40
    fit_signal: tuple = (20.0, 400.0)  # c-range of the signal fits (window well inside, many points)
    noise_band: tuple = (20.0, 0.05)  # fit the noise where 20/n <= N_n(c) <= 0.05 and c >= d
    seed: int = 0
    CI = dict(n=3000, tasks=120, points=28, fit_signal=(20.0, 200.0))

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("n", self.n, minimum=2)
        chk.positive_int("tasks", self.tasks)
        chk.positive("c_min", self.c_min)
        if self.c_max <= self.c_min:
            raise chk.ConfigError(f"c_max must exceed c_min (got {self.c_max} <= {self.c_min})")
        chk.positive_int("points", self.points, minimum=5)
        chk.positive_int("seed", self.seed, minimum=0)


@dataclass
class PowerLawResult:
    config: PowerLawConfig
    affine: object  # WindowCurves
    relu: object
    slope_affine: float
    slope_relu: float
    slope_noise: float
    noise_fit_range: tuple
    seconds: float


def run_power_laws(cfg: PowerLawConfig) -> PowerLawResult:
    t0 = time.perf_counter()
    c = torch.cat([torch.zeros(1, dtype=F64), log_grid(cfg.c_min, cfg.c_max, cfg.points)])
    inp = sphere_inputs(cfg.d)
    aff = window_curves(AffineTask(cfg.d, 1.0), inp, cfg.n, c, tasks=cfg.tasks, queries=2,
                        generator=make_generator(cfg.seed), chunk=max(1, 2_000_000 // (cfg.n * 2) // 4))
    relu = window_curves(TwoReLUTask(cfg.d, 1.0), inp, cfg.n, c, tasks=cfg.tasks, queries=2,
                         generator=make_generator(cfg.seed), chunk=max(1, 2_000_000 // (cfg.n * 2) // 4))
    lo, hi = cfg.fit_signal
    sel = (c >= lo) & (c <= hi)
    s_aff = fit_slope(c[sel], aff.signal[sel])
    s_relu = fit_slope(c[sel], relu.signal[sel])
    nlo, nhi = cfg.noise_band[0] / cfg.n, cfg.noise_band[1]
    seln = (aff.noise >= nlo) & (aff.noise <= nhi) & (c >= cfg.d)
    s_noise = fit_slope(c[seln], aff.noise[seln])
    rng = (float(c[seln].min()), float(c[seln].max())) if seln.any() else (float("nan"), float("nan"))
    return PowerLawResult(cfg, aff, relu, s_aff, s_relu, s_noise, rng, time.perf_counter() - t0)


def summarize_power_laws(res: PowerLawResult) -> dict:
    return {"slope_affine_signal": res.slope_affine, "slope_relu_signal": res.slope_relu,
            "slope_noise": res.slope_noise, "noise_fit_range": list(res.noise_fit_range),
            "exponent_d_minus_1": (res.config.d - 1) / 2, "exponent_d": res.config.d / 2, "seconds": res.seconds}


# ============================================================================ population: Thm 3.4
@dataclass(frozen=True)
class ScalingConfig(ScaledConfig):
    """Optimal window c*(Lambda) for the affine and 2-ReLU classes (Thm 3.4), sweeping sigma at
    L = 1 for each (d, n); the fit uses only the reconstructed admissible regime
    n^(-2/d) <= sigma^2/L^2 <= n with d + sqrt(d) <= c* <= 2 n^(2/d) (w = c/2 in Lemmas C.4, D.1)."""

    dims: tuple = (2, 3)
    n_values: tuple = (250, 1000)
    sigmas: tuple = tuple(float(s) for s in torch.logspace(-3, 0.5, 15).tolist())
    tasks: int = 1500
    points: int = 80
    c_max: float = 30000.0
    seed: int = 0
    CI = dict(dims=(2,), n_values=(250,), sigmas=tuple(float(s) for s in torch.logspace(-3, 0.5, 10).tolist()),
              tasks=400, points=60)

    def validate(self):
        for d in self.dims:
            chk.positive_int("dims", d, minimum=2)
        for n in self.n_values:
            chk.positive_int("n_values", n, minimum=2)
        for s in self.sigmas:
            chk.positive("sigmas", s)
        chk.positive_int("tasks", self.tasks)
        chk.positive_int("points", self.points, minimum=5)
        chk.positive("c_max", self.c_max)
        chk.positive_int("seed", self.seed, minimum=0)


def brackets(d: int, dim: float | None = None) -> dict:
    """Thm 3.4's exponent brackets (reconstructed, spec §5.5) for c* ~ Lambda^slope; ``dim`` replaces
    d by another dimension convention (d - 1 for the sphere's intrinsic dimension)."""
    m = d if dim is None else dim
    return {"relu": (1 / (m + 2), 2 / (m + 2)), "affine": (1 / (m + 4), 2 * (m + 2) / (m * (m + 4)))}


@dataclass
class ScalingResult:
    config: ScalingConfig
    rows: list  # dicts: d, n, cls, sigma, Lambda, c_star, interior, admissible
    slopes: dict  # (d, n, cls) -> fitted slope in the admissible regime (nan if < 3 points)
    curves: dict  # (d, n, cls) -> WindowCurves
    seconds: float


def admissible(d: int, n: int, sigma: float, L: float, c_star: float) -> bool:
    r = sigma**2 / L**2
    return (n ** (-2 / d) <= r <= n) and (d + math.sqrt(d) <= c_star <= 2 * n ** (2 / d))


def run_scaling(cfg: ScalingConfig) -> ScalingResult:
    t0 = time.perf_counter()
    rows, slopes, curves = [], {}, {}
    for d in cfg.dims:
        for n in cfg.n_values:
            c = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.05, cfg.c_max, cfg.points)])
            for cls in ("affine", "relu"):
                cur = window_curves(make_task(cls, d, 1.0), sphere_inputs(d), n, c, tasks=cfg.tasks, queries=4,
                                    generator=make_generator(cfg.seed + 17 * d + n), chunk=max(1, 400_000 // n))
                curves[(d, n, cls)] = cur
                lam, cs = [], []
                for s in cfg.sigmas:
                    cstar, loss, interior = optimal_window(cur, 1.0, s)
                    ok = interior and admissible(d, n, s, 1.0, cstar)
                    rows.append(dict(d=d, n=n, cls=cls, sigma=s, Lambda=n / s**2, c_star=cstar, loss=loss,
                                     interior=interior, admissible=ok))
                    if ok:
                        lam.append(n / s**2)
                        cs.append(cstar)
                slopes[(d, n, cls)] = fit_slope(lam, cs) if len(lam) >= 3 else float("nan")
    return ScalingResult(cfg, rows, slopes, curves, time.perf_counter() - t0)


def summarize_scaling(res: ScalingResult) -> dict:
    return {"slopes": {f"d={d},n={n},{c}": v for (d, n, c), v in res.slopes.items()},
            "rows": res.rows, "seconds": res.seconds}


# ============================================================================ population: Thm 3.5
@dataclass(frozen=True)
class TransferConfig(ScaledConfig):
    """Pretrain on 2-ReLU at L (population optimum c*(L)), test at L' (Thm 3.5), and on other
    L-Lipschitz classes (affine, cosine)."""

    d: int = 2
    n: int = 500
    sigma: float = 0.1
    L: float = 1.0
    test_L: tuple = tuple(float(v) for v in torch.logspace(-3, 2, 21).tolist())
    tasks: int = 2000
    points: int = 70
    seed: int = 1
    CI = dict(tasks=500, points=50)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("n", self.n, minimum=2)
        chk.positive("sigma", self.sigma)
        chk.positive("L", self.L)
        for v in self.test_L:
            chk.positive("test_L", v)
        chk.positive_int("tasks", self.tasks)
        chk.positive_int("points", self.points, minimum=5)
        chk.positive_int("seed", self.seed, minimum=0)


@dataclass
class TransferResult:
    config: TransferConfig
    c_pre: float
    test_L: torch.Tensor
    pretrained_loss: torch.Tensor  # loss of c_pre at each L'
    matched_loss: torch.Tensor  # min_c loss at each L'
    matched_c: torch.Tensor
    other_classes: dict  # class -> (loss at c_pre, min_c loss, c*)
    seconds: float
    noise_at_pre: float = float("nan")  # N_n(c_pre) = E sum_i a_i^2 at the pretrained window


def run_transfer(cfg: TransferConfig) -> TransferResult:
    t0 = time.perf_counter()
    c = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.05, 5000.0, cfg.points)])
    inp = sphere_inputs(cfg.d)
    chunk = max(1, 400_000 // cfg.n)
    relu = window_curves(TwoReLUTask(cfg.d, 1.0), inp, cfg.n, c, tasks=cfg.tasks, generator=make_generator(cfg.seed),
                         chunk=chunk)
    c_pre, _, _ = optimal_window(relu, cfg.L, cfg.sigma)
    # the same draws (same seed and chunking) evaluated exactly at c_pre
    at = window_curves(TwoReLUTask(cfg.d, 1.0), inp, cfg.n, [c_pre], tasks=cfg.tasks, generator=make_generator(cfg.seed),
                       chunk=chunk)
    Ls = torch.as_tensor(cfg.test_L, dtype=F64)
    pre = Ls**2 * at.signal[0] + cfg.sigma**2 * at.noise[0]
    matched = [optimal_window(relu, float(Lp), cfg.sigma) for Lp in Ls]
    others = {}
    for cls in ("affine", "cos"):
        cur = window_curves(make_task(cls, cfg.d, cfg.L), inp, cfg.n, torch.cat([c, torch.tensor([c_pre], dtype=F64)]),
                            tasks=cfg.tasks, generator=make_generator(cfg.seed + 1), chunk=chunk)
        cs, lmin, _ = optimal_window(cur.subset(slice(0, -1)), 1.0, cfg.sigma)
        others[cls] = (float(cur.signal[-1] + cfg.sigma**2 * cur.noise[-1]), lmin, cs)
    return TransferResult(cfg, c_pre, Ls, pre, torch.tensor([m[1] for m in matched], dtype=F64),
                          torch.tensor([m[0] for m in matched], dtype=F64), others, time.perf_counter() - t0,
                          float(at.noise[0]))


def summarize_transfer(res: TransferResult) -> dict:
    return {"c_pre": res.c_pre, "test_L": res.test_L.tolist(), "pretrained_loss": res.pretrained_loss.tolist(),
            "matched_loss": res.matched_loss.tolist(), "other_classes": res.other_classes, "seconds": res.seconds}


# ============================================================================ population: Thm 3.6
@dataclass(frozen=True)
class LinearAttentionConfig(ScaledConfig):
    """Exact least-squares optimum of linear attention vs n (Thm 3.6), next to L^2/3 and the softmax optimum."""

    d: int = 5
    L: float = 1.0
    sigma: float = 0.01
    n_values: tuple = (10, 20, 50, 200, 1000)
    prompts: int = 8000
    queries: int = 8
    tasks_softmax: int = 1500
    seed: int = 2
    CI = dict(n_values=(20, 200), prompts=3000, tasks_softmax=400)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive("L", self.L)
        chk.positive("sigma", self.sigma, allow_zero=True)
        for n in self.n_values:
            chk.positive_int("n_values", n)
        chk.positive_int("prompts", self.prompts)
        chk.positive_int("queries", self.queries)
        chk.positive_int("tasks_softmax", self.tasks_softmax)
        chk.positive_int("seed", self.seed, minimum=0)


@dataclass
class LinearAttentionResult:
    config: LinearAttentionConfig
    n: list
    linear: dict  # cls -> (in-sample min, held-out, held-out se) per n
    softmax: dict  # cls -> min_c loss per n
    diag_scaled: dict  # cls -> mean diag(M*) * n / d per n
    seconds: float


def run_linear_attention(cfg: LinearAttentionConfig) -> LinearAttentionResult:
    t0 = time.perf_counter()
    lin, soft, diag = {}, {}, {}
    inp = sphere_inputs(cfg.d)
    for cls in ("affine", "relu"):
        lin[cls], soft[cls], diag[cls] = [], [], []
        for n in cfg.n_values:
            samp = PromptSampler.from_inputs(inp, make_task(cls, cfg.d, cfg.L), N=n, num_queries=cfg.queries, sigma=cfg.sigma)
            M, ins, held, se = linear_attention_loss(samp, cfg.prompts, make_generator(cfg.seed + n),
                                                     make_generator(cfg.seed + 7919 + n))
            lin[cls].append((ins, held, se))
            diag[cls].append(float(torch.diagonal(M).mean() * n / cfg.d))
            c = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.05, 3000.0, 50)])
            cur = window_curves(make_task(cls, cfg.d, 1.0), inp, n, c, tasks=cfg.tasks_softmax,
                                generator=make_generator(cfg.seed + 3 * n), chunk=max(1, 400_000 // n))
            soft[cls].append(optimal_window(cur, cfg.L, cfg.sigma)[1])
    return LinearAttentionResult(cfg, list(cfg.n_values), lin, soft, diag, time.perf_counter() - t0)


def summarize_linear_attention(res: LinearAttentionResult) -> dict:
    return {"n": res.n, "linear": res.linear, "softmax": res.softmax, "diag_scaled": res.diag_scaled,
            "bound": res.config.L**2 / 3, "seconds": res.seconds}


# ============================================================================ population: Thm 4.4
@dataclass(frozen=True)
class LowRankLandscapeConfig(ScaledConfig):
    """ICL loss on the (c1, c2) plane, M = c1 B B^T + c2 B_perp B_perp^T (Thm 4.4): Case 1
    (sigma = 0, n = 20), Case 2 (n = 2, sigma = 0.1) and a general case outside the theorem."""

    d: int = 10
    k: int = 2
    c_v: float = 1.0
    cases: tuple = (("Case 1: sigma = 0, n = 20", 20, 0.0, 2.0), ("Case 2: n = 2, sigma = 0.1", 2, 0.1, 1.0),
                    ("general: n = 20, sigma = 0.1", 20, 0.1, 2.0))  # (title, n, sigma, C_n)
    grid: int = 25
    c2_range: float = 2.0
    tasks: int = 4000
    seed: int = 3
    CI = dict(grid=13, tasks=1500)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("k", self.k)
        if self.k >= self.d:
            raise chk.ConfigError(f"k must be < d (got k={self.k}, d={self.d})")
        chk.positive_int("grid", self.grid, minimum=3)
        chk.positive("c2_range", self.c2_range)
        chk.positive_int("tasks", self.tasks)
        chk.positive_int("seed", self.seed, minimum=0)


@dataclass
class LowRankLandscapeResult:
    config: LowRankLandscapeConfig
    c1: list  # per case: grid
    c2: torch.Tensor
    loss: list  # per case: (G1, G2)
    argmin: list  # per case: (c1*, c2*)
    slope_at_zero: list  # per case: dJ/dc1 at c1 = 0 (c2 = 0), finite difference
    seconds: float


def run_lowrank_landscape(cfg: LowRankLandscapeConfig) -> LowRankLandscapeResult:
    t0 = time.perf_counter()
    c2 = torch.linspace(-cfg.c2_range, cfg.c2_range, 2 * (cfg.grid // 2) + 1, dtype=F64)  # contains 0
    c1s, losses, argmins, slopes = [], [], [], []
    for i, (_, n, sigma, Cn) in enumerate(cfg.cases):
        c1 = torch.linspace(0.0, Cn, cfg.grid, dtype=F64)
        loss = lowrank_landscape(cfg.d, cfg.k, n, sigma, c1, c2, tasks=cfg.tasks, c_v=cfg.c_v,
                                 generator=make_generator(cfg.seed + i))
        j = int(torch.argmin(loss))
        argmins.append((float(c1[j // c2.numel()]), float(c2[j % c2.numel()])))
        h = 1e-3
        pair = lowrank_landscape(cfg.d, cfg.k, n, sigma, torch.tensor([0.0, h], dtype=F64), torch.zeros(1, dtype=F64),
                                 tasks=cfg.tasks, c_v=cfg.c_v, generator=make_generator(cfg.seed + i))
        slopes.append(float((pair[1, 0] - pair[0, 0]) / h))
        c1s.append(c1)
        losses.append(loss)
    return LowRankLandscapeResult(cfg, c1s, c2, losses, argmins, slopes, time.perf_counter() - t0)


def summarize_lowrank_landscape(res: LowRankLandscapeResult) -> dict:
    return {"cases": [c[0] for c in res.config.cases], "argmin": res.argmin, "slope_at_zero": res.slope_at_zero,
            "seconds": res.seconds}


# ============================================================================ trained: Fig. 3 / 4
@dataclass(frozen=True)
class NormVsLConfig(ScaledConfig):
    """Fig. 3: ||M||_2 during pretraining for several L, ReLU/cos x isotropic/anisotropic inputs.

    Two L grids are trained together: ``paper_L`` around the paper's default L = 1 (at sigma = 0.01
    the optimal window is flat in L there, spec §6) and ``visible_L`` reaching small L where the
    population optimum c*(L) still moves."""

    d: int = 5
    n: int = 20
    sigma: float = 0.01
    paper_L: tuple = (0.5, 1.0, 2.0, 4.0)
    visible_L: tuple = (("relu", (0.01, 0.03, 0.1, 1.0)), ("cos", (0.1, 0.3, 0.5, 1.0)))  # spec §6 recommendation
    panels: tuple = (("relu", "iso"), ("relu", "aniso"), ("cos", "iso"), ("cos", "aniso"))
    steps: int = 2000
    lr: float = 0.1
    lr_decay: float = 0.999
    seeds: int = 10
    seed: int = 0
    population_tasks: int = 3000
    CI = dict(steps=1000, seeds=3, population_tasks=800, panels=(("relu", "iso"), ("cos", "iso")))

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("n", self.n)
        chk.positive("sigma", self.sigma)
        for L in self.paper_L:
            chk.positive("paper_L", L)
        for cls, Ls in self.visible_L:
            chk.one_of("visible_L task class", cls, CLASSES)
            for L in Ls:
                chk.positive("visible_L", L)
        for cls, inp in self.panels:
            chk.one_of("panel task class", cls, CLASSES)
            chk.one_of("panel inputs", inp, ("iso", "aniso"))
        chk.positive_int("steps", self.steps)
        chk.positive("lr", self.lr)
        chk.positive("lr_decay", self.lr_decay)
        chk.positive_int("population_tasks", self.population_tasks)
        _check_common(self)


@dataclass
class NormResult:
    """Norm trajectories of a batch of trainings: ``norm[key]`` (records, trials), ``c_star[key]``
    the population optimum (isotropic inputs only, else nan)."""

    config: object
    keys: list
    steps: list
    norm: dict
    c_star: dict
    final_M: dict  # key -> (trials, d, d)
    mean_eig: dict = field(default_factory=dict)  # key -> (records, trials) tr(M)/d
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def _population_c_star(cls, d, n, L, sigma, tasks, seed):
    c = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.02, 500.0, 50)])
    cur = window_curves(make_task(cls, d, L), sphere_inputs(d), n, c, tasks=tasks, generator=make_generator(seed),
                        chunk=max(1, 400_000 // n))
    return optimal_window(cur, 1.0, sigma)[0]


def run_norm_vs_L(cfg: NormVsLConfig, device=None) -> NormResult:
    t0 = time.perf_counter()
    Q = queries_for(cfg.n)
    keys, samplers, seeds = [], [], []
    visible = dict(cfg.visible_L)
    for grid_name in ("paper", "visible"):
        for cls, inp in cfg.panels:
            for L in (cfg.paper_L if grid_name == "paper" else visible[cls]):
                s = PromptSampler.from_inputs(input_law(inp, cfg.d), make_task(cls, cfg.d, L), N=cfg.n, num_queries=Q,
                                              sigma=cfg.sigma)
                keys.append((grid_name, cls, inp, float(L)))
                samplers += [s] * cfg.seeds
                seeds += [cfg.seed + t for t in range(cfg.seeds)]
    model, hist = _train_window(samplers, cfg.d, seeds, steps=cfg.steps, lr=cfg.lr, lr_decay=cfg.lr_decay,
                                record_every=max(1, cfg.steps // 100), device=device)
    norm = {k: hist["norm"][:, i * cfg.seeds:(i + 1) * cfg.seeds] for i, k in enumerate(keys)}
    meig = {k: hist["mean_eig"][:, i * cfg.seeds:(i + 1) * cfg.seeds] for i, k in enumerate(keys)}
    final = {k: model.M.detach()[i * cfg.seeds:(i + 1) * cfg.seeds] for i, k in enumerate(keys)}
    cstar = {}
    for k in keys:
        _, cls, inp, L = k
        if inp == "iso" and (cls, L) not in cstar:
            cstar[(cls, L)] = _population_c_star(cls, cfg.d, cfg.n, L, cfg.sigma, cfg.population_tasks, cfg.seed + 99)
    cs = {k: cstar.get((k[1], k[3]), float("nan")) if k[2] == "iso" else float("nan") for k in keys}
    return NormResult(cfg, keys, hist.record_steps, norm, cs, final, meig, time.perf_counter() - t0)


def summarize_norms(res: NormResult) -> dict:
    return {"keys": [list(map(str, k)) for k in res.keys], "steps": res.steps,
            "final_norm": [res.norm[k][-1].tolist() for k in res.keys],
            "c_star": [res.c_star[k] for k in res.keys], "seconds": res.seconds}


@dataclass(frozen=True)
class NormVsSigmaNConfig(ScaledConfig):
    """Fig. 4: ||M||_2 during pretraining for several sigma (N = ceil(sqrt n) queries) and several
    n (N = 1 query), ReLU and cosine tasks at L = 1, isotropic inputs, initial LR 0.01."""

    d: int = 5
    n: int = 20
    L: float = 1.0
    sigma: float = 0.01
    sigmas: tuple = (0.01, 0.1, 0.3, 1.0)
    n_values: tuple = (5, 20, 50, 200)
    classes: tuple = ("relu", "cos")
    steps: int = 2000
    lr: float = 0.01
    lr_decay: float = 0.999
    seeds: int = 10
    seed: int = 0
    population_tasks: int = 3000
    CI = dict(steps=800, seeds=3, n_values=(5, 20, 100), population_tasks=600)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("n", self.n)
        chk.positive("L", self.L)
        chk.positive("sigma", self.sigma)
        for s in self.sigmas:
            chk.positive("sigmas", s)
        for n in self.n_values:
            chk.positive_int("n_values", n)
        for c in self.classes:
            chk.one_of("classes", c, CLASSES)
        chk.positive_int("steps", self.steps)
        chk.positive("lr", self.lr)
        chk.positive_int("population_tasks", self.population_tasks)
        _check_common(self)


def run_norm_vs_sigma_n(cfg: NormVsSigmaNConfig, device=None) -> NormResult:
    t0 = time.perf_counter()
    keys, norm, final, cs, meig, steps = [], {}, {}, {}, {}, None
    # sigma ablation: one training
    samplers, seeds, ks = [], [], []
    for cls in cfg.classes:
        for s in cfg.sigmas:
            samp = PromptSampler.from_inputs(sphere_inputs(cfg.d), make_task(cls, cfg.d, cfg.L), N=cfg.n,
                                             num_queries=queries_for(cfg.n), sigma=s)
            ks.append(("sigma", cls, float(s)))
            samplers += [samp] * cfg.seeds
            seeds += [cfg.seed + t for t in range(cfg.seeds)]
    model, hist = _train_window(samplers, cfg.d, seeds, steps=cfg.steps, lr=cfg.lr, lr_decay=cfg.lr_decay,
                                record_every=max(1, cfg.steps // 100), device=device)
    steps = hist.record_steps
    for i, k in enumerate(ks):
        norm[k] = hist["norm"][:, i * cfg.seeds:(i + 1) * cfg.seeds]
        meig[k] = hist["mean_eig"][:, i * cfg.seeds:(i + 1) * cfg.seeds]
        final[k] = model.M.detach()[i * cfg.seeds:(i + 1) * cfg.seeds]
        cs[k] = _population_c_star(k[1], cfg.d, cfg.n, cfg.L, k[2], cfg.population_tasks, cfg.seed + 99)
    keys += ks
    # n ablation: one training per n (prompt shapes differ), N = 1 query
    for n in cfg.n_values:
        samplers, seeds, ks = [], [], []
        for cls in cfg.classes:
            samp = PromptSampler.from_inputs(sphere_inputs(cfg.d), make_task(cls, cfg.d, cfg.L), N=n, num_queries=1,
                                             sigma=cfg.sigma)
            ks.append(("n", cls, int(n)))
            samplers += [samp] * cfg.seeds
            seeds += [cfg.seed + t for t in range(cfg.seeds)]
        model, hist = _train_window(samplers, cfg.d, seeds, steps=cfg.steps, lr=cfg.lr, lr_decay=cfg.lr_decay,
                                    record_every=max(1, cfg.steps // 100), device=device)
        for i, k in enumerate(ks):
            norm[k] = hist["norm"][:, i * cfg.seeds:(i + 1) * cfg.seeds]
            meig[k] = hist["mean_eig"][:, i * cfg.seeds:(i + 1) * cfg.seeds]
            final[k] = model.M.detach()[i * cfg.seeds:(i + 1) * cfg.seeds]
            cs[k] = _population_c_star(k[1], cfg.d, n, cfg.L, cfg.sigma, cfg.population_tasks, cfg.seed + 99)
        keys += ks
    return NormResult(cfg, keys, steps, norm, cs, final, meig, time.perf_counter() - t0)


# ============================================================================ trained: Lemma B.5
@dataclass(frozen=True)
class IsotropyConfig(ScaledConfig):
    """Lemma B.5: train M from a random anisotropic start (tied W, N(0, init_std^2) entries, and
    untied M_K, M_Q) on 2-ReLU tasks with isotropic inputs, and with U^d_psi inputs for contrast."""

    d: int = 5
    n: int = 20
    L: float = 1.0
    sigma: float = 0.1
    init_std: float = 0.3
    steps: int = 3000
    lr: float = 0.01
    lr_decay: float = 0.999
    seeds: int = 10
    seed: int = 0
    CI = dict(steps=1200, seeds=3)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("n", self.n)
        chk.positive("L", self.L)
        chk.positive("sigma", self.sigma)
        chk.positive("init_std", self.init_std)
        chk.positive_int("steps", self.steps)
        chk.positive("lr", self.lr)
        _check_common(self)


@dataclass
class IsotropyResult:
    config: IsotropyConfig
    steps: list
    anisotropy: dict  # (param, inputs) -> (records, trials)
    norm: dict
    final_M: dict
    c_star: float
    seconds: float


def run_isotropy(cfg: IsotropyConfig, device=None) -> IsotropyResult:
    t0 = time.perf_counter()
    seeds = [cfg.seed + t for t in range(cfg.seeds)]
    an, nm, fm = {}, {}, {}
    steps = None
    for tied in (True, False):
        samplers, keys = [], []
        for inp in ("iso", "aniso"):
            s = PromptSampler.from_inputs(input_law(inp, cfg.d), TwoReLUTask(cfg.d, cfg.L), N=cfg.n,
                                          num_queries=queries_for(cfg.n), sigma=cfg.sigma)
            samplers += [s] * cfg.seeds
            keys.append(("tied" if tied else "untied", inp))
        model, hist = _train_window(samplers, cfg.d, seeds * 2, steps=cfg.steps, lr=cfg.lr, lr_decay=cfg.lr_decay,
                                    init="normal", init_std=cfg.init_std, tied=tied,
                                    record={"aniso": lambda m, s: anisotropy(0.5 * (m.M + m.M.transpose(-1, -2)))},
                                    record_every=max(1, cfg.steps // 60), device=device)
        steps = hist.record_steps
        for i, k in enumerate(keys):
            sl = slice(i * cfg.seeds, (i + 1) * cfg.seeds)
            an[k], nm[k], fm[k] = hist["aniso"][:, sl], hist["norm"][:, sl], model.M.detach()[sl]
    cstar = _population_c_star("relu", cfg.d, cfg.n, cfg.L, cfg.sigma, 2000, cfg.seed + 5)
    return IsotropyResult(cfg, steps, an, nm, fm, cstar, time.perf_counter() - t0)


def summarize_isotropy(res: IsotropyResult) -> dict:
    return {str(k): {"anisotropy_start": v[0].tolist(), "anisotropy_end": v[-1].tolist(),
                     "norm_end": res.norm[k][-1].tolist()} for k, v in res.anisotropy.items()} | {
        "c_star": res.c_star, "seconds": res.seconds}


# ============================================================================ trained: Fig. 5
@dataclass(frozen=True)
class TransferTrainingConfig(ScaledConfig):
    """Fig. 5: test ICL error during pretraining.  Units pretrained on affine / ReLU / cos (all
    L = 1) and on cos with a mismatched L; every ``eval_every`` steps each is evaluated on a fixed
    set of ``test_tasks`` tasks of each 1-Lipschitz test class (spec A12: a fixed test set replaces
    the paper's 5 fresh tasks + EMA(0.01), for smoother curves)."""

    d: int = 5
    n: int = 200
    sigma: float = 0.01
    pretrain: tuple = (("affine", 1.0), ("relu", 1.0), ("cos", 1.0), ("cos", 0.1), ("cos", 10.0))
    test_classes: tuple = ("affine", "relu", "cos")
    steps: int = 2000
    lr: float = 0.1
    lr_decay: float = 0.999
    eval_every: int = 40
    test_tasks: int = 100
    seeds: int = 10
    seed: int = 0
    test_seed: int = 50_000
    CI = dict(steps=600, seeds=3, eval_every=30, test_tasks=60, n=100)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("n", self.n)
        chk.positive("sigma", self.sigma)
        for cls, L in self.pretrain:
            chk.one_of("pretrain class", cls, CLASSES)
            chk.positive("pretrain L", L)
        for c in self.test_classes:
            chk.one_of("test_classes", c, CLASSES)
        chk.positive_int("steps", self.steps)
        chk.positive("lr", self.lr)
        chk.positive_int("eval_every", self.eval_every)
        chk.positive_int("test_tasks", self.test_tasks)
        _check_common(self)


@dataclass
class TransferTrainingResult:
    config: TransferTrainingConfig
    steps: list
    error: dict  # (pretrain cls, L, test cls) -> (records, trials)
    norm: dict  # (pretrain cls, L) -> (records, trials)
    seconds: float


def run_transfer_training(cfg: TransferTrainingConfig, device=None) -> TransferTrainingResult:
    t0 = time.perf_counter()
    Q = queries_for(cfg.n)
    inp = sphere_inputs(cfg.d)
    samplers, seeds = [], []
    for cls, L in cfg.pretrain:
        s = PromptSampler.from_inputs(inp, make_task(cls, cfg.d, L), N=cfg.n, num_queries=Q, sigma=cfg.sigma)
        samplers += [s] * cfg.seeds
        seeds += [cfg.seed + t for t in range(cfg.seeds)]
    tests = {c: PromptSampler.from_inputs(inp, make_task(c, cfg.d, 1.0), N=cfg.n, num_queries=Q, sigma=cfg.sigma)
             .sample(cfg.test_tasks, make_generator(cfg.test_seed + i)) for i, c in enumerate(cfg.test_classes)}
    dev_tests = {}

    def rec_for(c):
        def fn(m, step):
            p = next(m.parameters())
            if c not in dev_tests:
                dev_tests[c] = tests[c].to(p.device, p.dtype)
            return icl_error(m, dev_tests[c])
        return fn

    model, hist = _train_window(samplers, cfg.d, seeds, steps=cfg.steps, lr=cfg.lr, lr_decay=cfg.lr_decay,
                                record={f"err_{c}": rec_for(c) for c in cfg.test_classes},
                                record_every=cfg.eval_every, device=device)
    err, norm = {}, {}
    for i, (cls, L) in enumerate(cfg.pretrain):
        sl = slice(i * cfg.seeds, (i + 1) * cfg.seeds)
        norm[(cls, L)] = hist["norm"][:, sl]
        for c in cfg.test_classes:
            err[(cls, L, c)] = hist[f"err_{c}"][:, sl]
    return TransferTrainingResult(cfg, hist.record_steps, err, norm, time.perf_counter() - t0)


def summarize_transfer_training(res: TransferTrainingResult) -> dict:
    return {"final_error": {f"{a}{b:g}->{c}": v[-1].tolist() for (a, b, c), v in res.error.items()},
            "final_norm": {f"{a}{b:g}": v[-1].tolist() for (a, b), v in res.norm.items()}, "seconds": res.seconds}


# ============================================================================ trained: Fig. 1
@dataclass(frozen=True)
class HillsConfig(ScaledConfig):
    """Fig. 1: d = 2, tasks from the hills class for nu in ``nus``, softmax and linear attention
    trained (Adam, LR 1e-2, one task per iteration, one query) for each n, plus the population
    optima (grid search over c for softmax, least squares for linear).  ``hills_mode``: 'bump' =
    one hill cos(min(nu |wrap(theta - b)|, pi)) (default), 'freq' = cos(nu wrap(theta - b))
    (spec A6), 'amp' = nu cos(theta - b) (the literal OCR, linear in x on the circle)."""

    nus: tuple = (0.0, 1.5, 6.0)
    n_values: tuple = (4, 16, 64, 256)  # powers of 4 (the spec's powers of 2 would double the 15000-step trainings)
    sigma: float = 0.1
    hills_mode: str = "bump"
    steps: int = 15000
    lr: float = 1e-2
    lr_linear: float = 1e-2
    seeds: int = 5
    seed: int = 0
    test_tasks: int = 2000
    population_tasks: int = 3000
    linear_prompts: int = 6000
    test_seed: int = 60_000
    CI = dict(n_values=(4, 16, 64), steps=1500, seeds=2, test_tasks=500, population_tasks=600, linear_prompts=2000)

    def validate(self):
        for nu in self.nus:
            chk.positive("nus", nu, allow_zero=True)
        for n in self.n_values:
            chk.positive_int("n_values", n, minimum=2)
        chk.positive("sigma", self.sigma, allow_zero=True)
        chk.one_of("hills_mode", self.hills_mode, ("bump", "freq", "amp"))
        chk.positive_int("steps", self.steps)
        chk.positive("lr", self.lr)
        chk.positive("lr_linear", self.lr_linear)
        chk.positive_int("test_tasks", self.test_tasks)
        chk.positive_int("population_tasks", self.population_tasks)
        chk.positive_int("linear_prompts", self.linear_prompts)
        _check_common(self)

    def task(self, nu: float):
        return HillsTask(nu) if self.hills_mode == "amp" else WrappedCosineHills(nu, self.hills_mode)


@dataclass
class HillsResult:
    config: HillsConfig
    n: list
    trained: dict  # (activation, nu) -> (len(n), trials) test ICL error
    optimum: dict  # (activation, nu) -> (len(n),) population optimum loss
    c_trained: dict  # nu -> (len(n), trials) ||M|| of trained softmax
    c_opt: dict  # nu -> (len(n),) optimal c
    M_linear: dict  # nu -> (len(n), trials, 2, 2) trained linear-attention M
    M_linear_opt: dict  # nu -> (len(n), 2, 2) least-squares optimum
    seconds: float


def run_hills(cfg: HillsConfig, device=None) -> HillsResult:
    t0 = time.perf_counter()
    inp = sphere_inputs(2)
    trained = {(a, nu): [] for a in ("softmax", "linear") for nu in cfg.nus}
    optimum = {(a, nu): [] for a in ("softmax", "linear") for nu in cfg.nus}
    c_tr = {nu: [] for nu in cfg.nus}
    c_opt = {nu: [] for nu in cfg.nus}
    M_lin = {nu: [] for nu in cfg.nus}
    M_lin_opt = {nu: [] for nu in cfg.nus}
    seeds = [cfg.seed + t for t in range(cfg.seeds)]
    c_grid = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.05, 5000.0, 60)])
    for n in cfg.n_values:
        samplers = {nu: PromptSampler.from_inputs(inp, cfg.task(nu), N=n, num_queries=1, sigma=cfg.sigma) for nu in cfg.nus}
        tests = PromptBatch.stack([samplers[nu].sample(cfg.test_tasks, make_generator(cfg.test_seed + n))
                                   for nu in cfg.nus for _ in seeds])
        for act, lr in (("softmax", cfg.lr), ("linear", cfg.lr_linear)):
            runs = [samplers[nu] for nu in cfg.nus for _ in seeds]
            model, _ = _train_window(runs, 2, seeds * len(cfg.nus), steps=cfg.steps, lr=lr, lr_decay=1.0,
                                     activation=act, record_at=[cfg.steps], device=device)
            err = icl_error(model, tests)
            M = model.M.detach()
            for i, nu in enumerate(cfg.nus):
                sl = slice(i * len(seeds), (i + 1) * len(seeds))
                trained[(act, nu)].append(err[sl])
                if act == "softmax":
                    c_tr[nu].append(spectral_norm(M[sl]))
                else:
                    M_lin[nu].append(M[sl])
        for nu in cfg.nus:
            cur = window_curves(cfg.task(nu), inp, n, c_grid, tasks=cfg.population_tasks, queries=4,
                                generator=make_generator(cfg.seed + 11 * n), chunk=max(1, 400_000 // n))
            cs, loss, _ = optimal_window(cur, 1.0, cfg.sigma)
            optimum[("softmax", nu)].append(loss)
            c_opt[nu].append(cs)
            Mopt, ins, held, _ = linear_attention_loss(
                PromptSampler.from_inputs(inp, cfg.task(nu), N=n, num_queries=4, sigma=cfg.sigma), cfg.linear_prompts,
                make_generator(cfg.seed + 13 * n), make_generator(cfg.seed + 17 * n))
            optimum[("linear", nu)].append(held)
            M_lin_opt[nu].append(Mopt)
    stack = lambda dct: {k: torch.stack(v) if isinstance(v[0], torch.Tensor) else torch.tensor(v, dtype=F64)  # noqa: E731
                         for k, v in dct.items()}
    return HillsResult(cfg, list(cfg.n_values), stack(trained), stack(optimum), stack(c_tr), stack(c_opt),
                       stack(M_lin), stack(M_lin_opt), time.perf_counter() - t0)


def summarize_hills(res: HillsResult) -> dict:
    return {"n": res.n, "trained": {f"{a},{nu:g}": v.tolist() for (a, nu), v in res.trained.items()},
            "optimum": {f"{a},{nu:g}": v.tolist() for (a, nu), v in res.optimum.items()},
            "c_opt": {f"{nu:g}": v.tolist() for nu, v in res.c_opt.items()}, "seconds": res.seconds}


# ============================================================================ trained: Fig. 9 / Thm 4.4
@dataclass(frozen=True)
class LowRankTrainingConfig(ScaledConfig):
    """Fig. 9 (App. J.1): d = 10, k = 2, n = 50, sigma = 0.01, J~-covariates (J drawn once per trial,
    spec A10) and B drawn per trial; affine (+2), quadratic and cos(4 .) low-rank classes; softmax
    and linear attention (tied) trained with Adam.  The paper tunes the learning rate in
    {1e-3, 1e-2, 1e-1} separately for softmax and linear attention: every value of ``lrs`` is
    trained (as runs of the same training) and, per class and activation, the one with the lowest
    final test error is reported.  ``covariates='assumption43'`` uses Assumption 4.3
    (x = c_u B u + c_v B_perp v) with the low-rank *linear* class: the setting of Thm 4.4."""

    d: int = 10
    k: int = 2
    n: int = 50
    sigma: float = 0.01
    kinds: tuple = ("affine", "quadratic", "cosine")
    covariates: str = "J"
    c_v: float = 1.0
    steps: int = 5000
    lrs: tuple = (1e-3, 1e-2, 1e-1)
    lr_decay: float = 1.0
    queries: int = 8
    seeds: int = 5
    seed: int = 0
    test_tasks: int = 500
    records: int = 26
    CI = dict(steps=1200, seeds=2, test_tasks=100, records=13)

    def validate(self):
        chk.positive_int("d", self.d, minimum=2)
        chk.positive_int("k", self.k)
        if self.k >= self.d:
            raise chk.ConfigError(f"k must be < d (got k={self.k}, d={self.d})")
        chk.positive_int("n", self.n)
        chk.positive("sigma", self.sigma, allow_zero=True)
        for kd in self.kinds:
            chk.one_of("kinds", kd, LowRankTask.KINDS)
        chk.one_of("covariates", self.covariates, ("J", "assumption43"))
        chk.positive_int("steps", self.steps)
        if not self.lrs:
            raise chk.ConfigError("lrs must list at least one learning rate")
        for lr in self.lrs:
            chk.positive("lrs", lr)
        chk.positive_int("queries", self.queries)
        chk.positive_int("test_tasks", self.test_tasks)
        chk.positive_int("records", self.records, minimum=2)
        _check_common(self)


@dataclass
class LowRankTrainingResult:
    config: LowRankTrainingConfig
    steps: list
    rho: dict  # (activation, kind) -> (records, trials) at the selected learning rate
    cross: dict  # (activation, kind) -> (records, trials) ||B^T M B_perp||_2 / ||M||_2
    error: dict  # (activation, kind) -> (records, trials)
    final_M: dict
    B: list  # per trial
    seconds: float
    lr: dict = field(default_factory=dict)  # (activation, kind) -> selected learning rate
    final_by_lr: dict = field(default_factory=dict)  # (activation, kind, lr) -> (final rho, final error) means


def run_lowrank_training(cfg: LowRankTrainingConfig, device=None) -> LowRankTrainingResult:
    from ...data.inputs import orthogonal_complement

    t0 = time.perf_counter()
    Bs, samplers = [], {}
    for t in range(cfg.seeds):
        g = make_generator(cfg.seed + 1000 + t)
        B = random_subspace(cfg.d, cfg.k, g)  # QR of a Gaussian matrix
        Bs.append(B)
        if cfg.covariates == "J":
            J = torch.randn(cfg.d, cfg.d, generator=g, dtype=F64)
            evals, evecs = torch.linalg.eigh(J.T @ J)
            Jt = evecs @ torch.diag(evals.clamp_min(0).sqrt()) @ evecs.T  # (J^T J)^{1/2}
            inp = (lambda A: (lambda s, gg: transformed_sphere(s, A, gg)))(Jt)
        else:
            inp = (lambda Bm: (lambda s, gg: low_rank_covariates(s, Bm, gg, c_u=1.0, c_v=cfg.c_v)))(B)
        for kind in cfg.kinds:
            samplers[(kind, t)] = PromptSampler.from_inputs(inp, LowRankTask(B, kind), N=cfg.n, num_queries=cfg.queries,
                                                            sigma=cfg.sigma)
    # run index: learning rates, then classes, then trials (trial t of every class uses seed + t)
    runs = [(lr, kind, t) for lr in cfg.lrs for kind in cfg.kinds for t in range(cfg.seeds)]
    run_samplers = [samplers[(kind, t)] for _, kind, t in runs]
    seeds = [cfg.seed + t for _, _, t in runs]
    lrs = [lr for lr, _, _ in runs]
    tests = {key: s.sample(cfg.test_tasks, make_generator(cfg.seed + 5000 + i)) for i, (key, s) in enumerate(samplers.items())}
    test_batch = PromptBatch.stack([tests[(kind, t)] for _, kind, t in runs])
    Bstack = torch.stack([Bs[t] for _, _, t in runs])  # (R, d, k)
    Pstack = torch.stack([orthogonal_complement(Bs[t]) for _, _, t in runs])
    dev_test = {}

    def rho_fn(m, step):
        M = m.M.detach().to("cpu", F64)
        inner = Bstack.transpose(-1, -2) @ M @ Bstack
        outer = Pstack.transpose(-1, -2) @ M @ Pstack
        return torch.linalg.matrix_norm(outer, ord=2) / torch.linalg.svdvals(inner)[..., -1]

    def cross_fn(m, step):
        M = m.M.detach().to("cpu", F64)
        return torch.linalg.matrix_norm(Bstack.transpose(-1, -2) @ M @ Pstack, ord=2) / torch.linalg.matrix_norm(M, ord=2)

    def err_fn(m, step):
        p = next(m.parameters())
        if "b" not in dev_test:
            dev_test["b"] = test_batch.to(p.device, p.dtype)
        return icl_error(m, dev_test["b"])

    rec_at = sorted({int(round(v)) for v in torch.linspace(0, cfg.steps, cfg.records).tolist()})
    rho, cross, err, fin, chosen, by_lr = {}, {}, {}, {}, {}, {}
    for act in ("softmax", "linear"):
        model, hist = _train_window(run_samplers, cfg.d, seeds, steps=cfg.steps, lr=lrs, lr_decay=cfg.lr_decay,
                                    activation=act, record={"rho": rho_fn, "cross": cross_fn, "err": err_fn},
                                    record_at=rec_at, device=device)
        for kind in cfg.kinds:
            best = None
            for lr in cfg.lrs:
                idx = [i for i, (l_, k_, _) in enumerate(runs) if l_ == lr and k_ == kind]
                e_final = float(hist["err"][-1, idx].mean())
                by_lr[(act, kind, lr)] = (float(hist["rho"][-1, idx].mean()), e_final)
                if math.isfinite(e_final) and (best is None or e_final < best[0]):
                    best = (e_final, lr, idx)
            _, lr, idx = best
            chosen[(act, kind)] = lr
            rho[(act, kind)] = hist["rho"][:, idx]
            cross[(act, kind)] = hist["cross"][:, idx]
            err[(act, kind)] = hist["err"][:, idx]
            fin[(act, kind)] = model.M.detach()[idx]
    return LowRankTrainingResult(cfg, rec_at, rho, cross, err, fin, Bs, time.perf_counter() - t0, chosen, by_lr)


def summarize_lowrank_training(res: LowRankTrainingResult) -> dict:
    return {"steps": res.steps,
            "rho_final": {f"{a},{k}": v[-1].tolist() for (a, k), v in res.rho.items()},
            "error_final": {f"{a},{k}": v[-1].tolist() for (a, k), v in res.error.items()},
            "lr": {f"{a},{k}": v for (a, k), v in res.lr.items()},
            "by_lr": {f"{a},{k},{lr:g}": list(v) for (a, k, lr), v in res.final_by_lr.items()}, "seconds": res.seconds}


# ============================================================================ Fig. 2 (simulation)
@dataclass(frozen=True)
class BiasVarianceConfig(ScaledConfig):
    """Fig. 2 drawn from simulation: one fixed task and query on the circle, many noisy contexts;
    the softmax estimate's mean (bias) and spread (variance) for several window scales c."""

    nu: float = 3.0
    n: int = 24
    sigma: float = 0.3
    c_values: tuple = (1.0, 6.0, 40.0)
    c_grid_points: int = 40
    contexts: int = 4000
    b: float = 0.4  # the task's phase
    theta_query: float = 0.0
    seed: int = 4
    CI = dict(contexts=1500)

    def validate(self):
        chk.positive("nu", self.nu, allow_zero=True)
        chk.positive_int("n", self.n)
        chk.positive("sigma", self.sigma)
        for c in self.c_values:
            chk.positive("c_values", c, allow_zero=True)
        chk.positive_int("contexts", self.contexts)
        chk.positive_int("c_grid_points", self.c_grid_points, minimum=3)
        chk.positive_int("seed", self.seed, minimum=0)


@dataclass
class BiasVarianceResult:
    config: BiasVarianceConfig
    target: float
    c_grid: torch.Tensor
    mean: torch.Tensor  # (G,) mean estimate over contexts
    std: torch.Tensor  # (G,) std of the estimate
    bias2: torch.Tensor
    var: torch.Tensor
    example: dict  # one context for drawing: x angles, labels
    seconds: float


def run_bias_variance(cfg: BiasVarianceConfig) -> BiasVarianceResult:
    t0 = time.perf_counter()
    g = make_generator(cfg.seed)
    task = WrappedCosineHills(cfg.nu)
    params = {"b": torch.full((cfg.contexts,), cfg.b, dtype=F64)}
    x = sphere((cfg.contexts, cfg.n), 2, g)
    y = task.evaluate(params, x) + cfg.sigma * torch.randn(cfg.contexts, cfg.n, generator=g, dtype=F64)
    xq = torch.tensor([math.cos(cfg.theta_query), math.sin(cfg.theta_query)], dtype=F64)
    target = float(task.evaluate({"b": torch.tensor([cfg.b], dtype=F64)}, xq[None, None])[0, 0])
    grid = torch.cat([torch.tensor(cfg.c_values, dtype=F64), log_grid(0.1, 2000.0, cfg.c_grid_points)])
    est = torch.stack([(torch.softmax(c * (x @ xq), -1) * y).sum(-1) for c in grid])  # (G, contexts)
    mean, std = est.mean(1), est.std(1)
    theta = torch.atan2(x[0, :, 1], x[0, :, 0])
    return BiasVarianceResult(cfg, target, grid, mean, std, (mean - target) ** 2, std**2,
                              {"theta": theta, "y": y[0]}, time.perf_counter() - t0)


def summarize_bias_variance(res: BiasVarianceResult) -> dict:
    k = len(res.config.c_values)
    return {"c": res.c_grid[:k].tolist(), "bias2": res.bias2[:k].tolist(), "var": res.var[:k].tolist(),
            "seconds": res.seconds}


# ============================================================================ registry
from ...registry import Experiment  # noqa: E402

EXPERIMENTS = {
    "power_laws": Experiment("window", "App. C, D (Lemmas C.4, C.8, D.1)", "signal and noise terms against c at large n",
                             PowerLawConfig, run_power_laws, summarize_power_laws, ("T-C2", "T-C4", "T-C8", "T-D1", "T-D2")),
    "scaling": Experiment("window", "Thm 3.4", "optimal window c* against Lambda = n L^2 / sigma^2 (population)",
                          ScalingConfig, run_scaling, summarize_scaling, ("T-34-affine", "T-34-relu", "T-34-mono", "T-34-sat")),
    "transfer": Experiment("window", "Thm 3.5", "pretrain at L, test at L' and on other L-Lipschitz classes",
                           TransferConfig, run_transfer, summarize_transfer, ("T-35-up", "T-35-low")),
    "linear_attention": Experiment("window", "Thm 3.6", "exact linear-attention optimum vs L^2/3 and softmax",
                                   LinearAttentionConfig, run_linear_attention, summarize_linear_attention, ("T-36",)),
    "lowrank_landscape": Experiment("window", "Thm 4.4", "(c1, c2) loss landscape for low-rank linear tasks",
                                    LowRankLandscapeConfig, run_lowrank_landscape, summarize_lowrank_landscape,
                                    ("T-44", "T-44-gen", "T-H1")),
    "isotropy": Experiment("window", "Lemma B.5", "trained M becomes a multiple of I from an anisotropic start",
                           IsotropyConfig, run_isotropy, summarize_isotropy, ("E-B5",)),
    "fig1_hills": Experiment("window", "Fig. 1", "hills on the circle: softmax vs linear, error vs n",
                             HillsConfig, run_hills, summarize_hills, ("E-F1a", "E-F1b")),
    "fig2_bias_variance": Experiment("window", "Fig. 2", "bias and variance of the softmax estimate vs window",
                                     BiasVarianceConfig, run_bias_variance, summarize_bias_variance, ("T-F2",)),
    "fig3_norm_vs_L": Experiment("window", "Fig. 3", "||M|| during pretraining for several L",
                                 NormVsLConfig, run_norm_vs_L, summarize_norms, ("E-F3", "E-34-trained")),
    "fig4_norm_vs_sigma_n": Experiment("window", "Fig. 4", "||M|| during pretraining for several sigma and n",
                                       NormVsSigmaNConfig, run_norm_vs_sigma_n, summarize_norms, ("E-F4-sigma", "E-F4-n")),
    "fig5_transfer": Experiment("window", "Fig. 5", "test ICL error during pretraining, cross-class transfer",
                                TransferTrainingConfig, run_transfer_training, summarize_transfer_training,
                                ("E-F5-same", "E-F5-mismatch")),
    "fig9_lowrank": Experiment("window", "Fig. 9 / Thm 4.4", "low-rank tasks: subspace alignment and test error",
                               LowRankTrainingConfig, run_lowrank_training, summarize_lowrank_training,
                               ("E-F9-affine", "E-F9-quadratic", "E-F9-cosine", "E-T44")),
}
