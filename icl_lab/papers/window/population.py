"""Population-level experiments of the window paper (no training): Monte-Carlo signal and noise
curves S_n(c), N_n(c) on a grid of window scales c (M = c I), from which the optimal window
c*(L, sigma, n) follows for every (L, sigma) (Thm 3.4, 3.5; Lemmas C.4, C.8, D.1, D.2), the exact
linear-attention optimum (Thm 3.6), the low-rank (c1, c2) landscape (Thm 4.4) and Fig. 2 drawn
from simulation."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from ... import params as chk
from ...config import ScaledConfig, make_generator
from ...data import AffineTask, HillsTask, PromptSampler, TwoReLUTask, sphere
from ...metrics import loglog_slope
from ...params import PROMPTS, SEED, Int, Real, TupleOf
from ...registry import Registry, returns
from .data import F64, log_grid, make_task, sphere_inputs
from .theory import linear_attention_loss, lowrank_landscape, optimal_window, window_curves

EXPERIMENTS = Registry("window")

POS_C = Real(0, 1e7, closed="right")  # a positive window scale


def population_c_star(cls, d, n, L, sigma, tasks, seed):
    """The grid optimum c*(L, sigma) of class ``cls`` with n demonstrations, isotropic inputs."""
    c = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.02, 500.0, 50)])
    cur = window_curves(make_task(cls, d, L), sphere_inputs(d), n, c, tasks=tasks, generator=make_generator(seed),
                        chunk=max(1, 400_000 // n))
    return optimal_window(cur, 1.0, sigma)[0]


@dataclass(frozen=True)
class PowerLawConfig(ScaledConfig):
    """Signal and noise terms against c at large n (App. C, D): affine and 2-ReLU
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
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(n="n = 3000 already separates the exponents (d-1)/2 and d/2; the cost grows like n", tasks="Monte-Carlo tasks per curve: 120 keep the fitted slopes within a few hundredths", points="28 grid points still resolve both power laws", fit_signal="the signal fit range ends at c = 200 where n = 3000 still resolves the bias")
    PARAMS = dict(d=Int(2, 64), n=Int(2, 10**6), tasks=PROMPTS, c_min=Real(0, 1e6, closed="right"),
                  c_max=Real(0, 1e7, closed="right"), points=Int(5, 10_000), fit_signal=TupleOf(POS_C, min_len=2, max_len=2, increasing=True),
                  noise_band=TupleOf(Real(0, 1e6, closed="right"), min_len=2, max_len=2), seed=SEED)

    def validate(self):
        if self.c_max <= self.c_min:
            raise chk.ConfigError(f"c_max must exceed c_min (got {self.c_max} <= {self.c_min})")



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


@returns("slope_affine_signal", "slope_relu_signal", "slope_noise", "noise_fit_range", "exponent_d_minus_1",
         "exponent_d", "seconds", timings=("seconds",))
def summarize_power_laws(res: PowerLawResult) -> dict:
    return {"slope_affine_signal": res.slope_affine, "slope_relu_signal": res.slope_relu,
            "slope_noise": res.slope_noise, "noise_fit_range": list(res.noise_fit_range),
            "exponent_d_minus_1": (res.config.d - 1) / 2, "exponent_d": res.config.d / 2, "seconds": res.seconds}


@EXPERIMENTS.register("power_laws", config=PowerLawConfig, summary=summarize_power_laws,
                      location="App. C, D (Lemmas C.4, C.8, D.1)",
                      description="signal and noise terms against c at large n",
                      claims=("T-C2", "T-C4", "T-C8", "T-D1", "T-D2"))
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
    s_aff = loglog_slope(c[sel], aff.signal[sel])
    s_relu = loglog_slope(c[sel], relu.signal[sel])
    nlo, nhi = cfg.noise_band[0] / cfg.n, cfg.noise_band[1]
    seln = (aff.noise >= nlo) & (aff.noise <= nhi) & (c >= cfg.d)
    s_noise = loglog_slope(c[seln], aff.noise[seln])
    rng = (float(c[seln].min()), float(c[seln].max())) if seln.any() else (float("nan"), float("nan"))
    return PowerLawResult(cfg, aff, relu, s_aff, s_relu, s_noise, rng, time.perf_counter() - t0)


# ---------------------------------------------------------------- population: Thm 3.4
@dataclass(frozen=True)
class ScalingConfig(ScaledConfig):
    """Optimal window c*(Lambda) for the affine and 2-ReLU classes (Thm 3.4), sweeping sigma at
    L = 1 for each (d, n); the fit uses only the reconstructed admissible regime
    n^(-2/d) <= sigma^2/L^2 <= n with d + sqrt(d) <= c* <= 2 n^(2/d) (w = c/2 in Lemmas C.4, D.1).
    The fit is repeated with Lemma D.1's stricter floor w >= d + sqrt(d), i.e. c* >= 2 (d + sqrt(d)).
    ``sat_sigmas`` (far below the regime) locate where c* stops depending on Lambda (saturation)."""

    dims: tuple = (2, 3)
    n_values: tuple = (250, 1000)
    # 29 noise levels (every 8th of a decade): d = 3, n = 250 has only 5 inside the admissible regime, and its
    # fitted exponent needs them; 6000 tasks per curve make the exponent the same to 0.01 of the bracket between seeds
    sigmas: tuple = tuple(float(s) for s in torch.logspace(-3, 0.5, 29).tolist())
    tasks: int = 6000
    points: int = 80
    c_max: float = 30000.0
    sat_sigmas: tuple = (1e-4, 1e-5, 1e-6)
    seed: int = 0
    CI = dict(dims=(2,), n_values=(250,), sigmas=tuple(float(s) for s in torch.logspace(-3, 0.5, 15).tolist()),
              tasks=400, points=60)
    BOOK = dict(dims=(2,), n_values=(250,), sigmas=tuple(float(s) for s in torch.logspace(-3, 0.5, 15).tolist()),
                tasks=400, points=60)
    BOOK_WHY = dict(dims="d = 2 only: d = 3 doubles the cost and shows the same ordering", n_values="n = 250 only (n = 1000 saturates later, see the text)", sigmas="15 noise levels instead of 29", tasks="400 Monte-Carlo tasks per curve instead of 6000", points="60 grid points of c")
    PARAMS = dict(dims=TupleOf(Int(2, 64), max_len=16), n_values=TupleOf(Int(2, 10**6), max_len=16),
                  sigmas=TupleOf(Real(0, 1e3, closed="right"), max_len=200), tasks=PROMPTS, points=Int(5, 10_000),
                  c_max=POS_C, sat_sigmas=TupleOf(Real(0, 1e3, closed="right"), max_len=16), seed=SEED)

def brackets(d: int, dim: float | None = None) -> dict:
    """Thm 3.4's exponent brackets (reconstructed from the inversions of App. E) for c* ~ Lambda^slope; ``dim`` replaces
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
    slopes_strict: dict = None  # the same fit with c* >= 2 (d + sqrt d) (Lemma D.1's floor w >= d + sqrt d)
    sat_rows: list = None  # rows at sat_sigmas (far below the regime)
    sat_slopes: dict = None  # (d, n, cls) -> local slope of log c* in log Lambda at the two smallest sigmas


def admissible(d: int, n: int, sigma: float, L: float, c_star: float, floor: float = 1.0) -> bool:
    """sigma^2 / L^2 in [n^(-2/d), n] and c* in [floor (d + sqrt d), 2 n^(2/d)] (floor 2: Lemma D.1's
    w >= d + sqrt d instead of Lemma C.4's)."""
    r = sigma**2 / L**2
    return (n ** (-2 / d) <= r <= n) and (floor * (d + math.sqrt(d)) <= c_star <= 2 * n ** (2 / d))


@returns("slopes", "rows", "seconds", timings=("seconds",), text=("rows",))
def summarize_scaling(res: ScalingResult) -> dict:
    return {"slopes": {f"d={d},n={n},{c}": v for (d, n, c), v in res.slopes.items()},
            "rows": res.rows, "seconds": res.seconds}


@EXPERIMENTS.register("scaling", config=ScalingConfig, summary=summarize_scaling, location="Thm 3.4",
                      description="optimal window c* against Lambda = n L^2 / sigma^2 (population)",
                      claims=("T-34-affine", "T-34-relu", "T-34-mono", "T-34-sat"))
def run_scaling(cfg: ScalingConfig) -> ScalingResult:
    t0 = time.perf_counter()
    rows, slopes, curves, strict, sat_rows, sat = [], {}, {}, {}, [], {}
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
                slopes[(d, n, cls)] = loglog_slope(lam, cs) if len(lam) >= 3 else float("nan")
                pts = [(r["Lambda"], r["c_star"]) for r in rows[-len(cfg.sigmas):]
                       if r["interior"] and admissible(d, n, r["sigma"], 1.0, r["c_star"], floor=2.0)]
                strict[(d, n, cls)] = loglog_slope(*zip(*pts)) if len(pts) >= 3 else float("nan")
                extra = []
                for s in cfg.sat_sigmas:
                    cstar, loss, interior = optimal_window(cur, 1.0, s)
                    extra.append(dict(d=d, n=n, cls=cls, sigma=s, Lambda=n / s**2, c_star=cstar, loss=loss,
                                      interior=interior, admissible=False))
                sat_rows += extra
                low = sorted([r for r in rows[-len(cfg.sigmas):] + extra if r["interior"]], key=lambda r: r["sigma"])[:2]
                sat[(d, n, cls)] = loglog_slope([r["Lambda"] for r in low], [r["c_star"] for r in low])
    return ScalingResult(cfg, rows, slopes, curves, time.perf_counter() - t0, strict, sat_rows, sat)


# ---------------------------------------------------------------- population: Thm 3.5
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
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(tasks="500 Monte-Carlo tasks per curve", points="50 grid points of c")
    PARAMS = dict(d=Int(2, 64), n=Int(2, 10**6), sigma=Real(0, 1e3, closed="right"), L=Real(0, 1e4, closed="right"),
                  test_L=TupleOf(Real(0, 1e4, closed="right"), max_len=200), tasks=PROMPTS, points=Int(5, 10_000), seed=SEED)



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


@returns("c_pre", "test_L", "pretrained_loss", "matched_loss", "other_classes", "seconds", timings=("seconds",))
def summarize_transfer(res: TransferResult) -> dict:
    return {"c_pre": res.c_pre, "test_L": res.test_L.tolist(), "pretrained_loss": res.pretrained_loss.tolist(),
            "matched_loss": res.matched_loss.tolist(), "other_classes": res.other_classes, "seconds": res.seconds}


@EXPERIMENTS.register("transfer", config=TransferConfig, summary=summarize_transfer, location="Thm 3.5",
                      description="pretrain at L, test at L' and on other L-Lipschitz classes",
                      claims=("T-35-up", "T-35-low"))
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


# ---------------------------------------------------------------- population: Thm 3.6
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
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(n_values="two context lengths show the floor L^2/3 and the softmax decrease", prompts="3000 prompts fit the d^2 = 25 coefficients of M", tasks_softmax="400 Monte-Carlo tasks per softmax curve")
    PARAMS = dict(d=Int(2, 64), L=Real(0, 1e4, closed="right"), sigma=Real(0, 1e3),
                  n_values=TupleOf(Int(1, 10**5), max_len=32), prompts=Int(2, 10**6), queries=Int(1, 1000), tasks_softmax=PROMPTS,
                  seed=SEED)



@dataclass
class LinearAttentionResult:
    config: LinearAttentionConfig
    n: list
    linear: dict  # cls -> (in-sample min, held-out, held-out se) per n
    softmax: dict  # cls -> min_c loss per n
    diag_scaled: dict  # cls -> mean diag(M*) * n / d per n
    seconds: float


@returns("n", "linear", "softmax", "diag_scaled", "bound", "seconds", timings=("seconds",))
def summarize_linear_attention(res: LinearAttentionResult) -> dict:
    return {"n": res.n, "linear": res.linear, "softmax": res.softmax, "diag_scaled": res.diag_scaled,
            "bound": res.config.L**2 / 3, "seconds": res.seconds}


@EXPERIMENTS.register("linear_attention", config=LinearAttentionConfig, summary=summarize_linear_attention,
                      location="Thm 3.6", description="exact linear-attention optimum vs L^2/3 and softmax",
                      claims=("T-36",))
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


# ---------------------------------------------------------------- population: Thm 4.4
@dataclass(frozen=True)
class LowRankLandscapeConfig(ScaledConfig):
    """ICL loss on the (c1, c2) plane, M = c1 B B^T + c2 B_perp B_perp^T (Thm 4.4): Case 1
    (sigma = 0, n = 20), Case 2 (n = 2, sigma = 0.1) and a general case outside the theorem."""

    d: int = 10
    k: int = 2
    c_v: float = 1.0
    case_n: tuple = (20, 2, 20)  # Case 1, Case 2, a general case outside the theorem
    case_sigma: tuple = (0.0, 0.1, 0.1)
    case_c1_max: tuple = (2.0, 1.0, 40.0)  # c1 range: the theorem's C_n in its cases; wide enough to hold the optimum else
    grid: int = 25
    c2_range: float = 2.0
    tasks: int = 4000
    seed: int = 3
    CI = dict(grid=13, tasks=1500)
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(grid="13 x 13 grid (steps 0.17 / 0.33 in c1 / c2)", tasks="1500 Monte-Carlo tasks per grid point")
    PARAMS = dict(d=Int(2, 256), k=Int(1, 256), c_v=Real(0, 1e3, closed="right"),
                  case_n=TupleOf(Int(2, 10**4), max_len=8), case_sigma=TupleOf(Real(0, 1e3), max_len=8),
                  case_c1_max=TupleOf(Real(0, 1e4, closed="right"), max_len=8), grid=Int(3, 1000),
                  c2_range=Real(0, 1e3, closed="right"), tasks=PROMPTS, seed=SEED)

    def validate(self):
        if self.k >= self.d:
            raise chk.ConfigError(f"k must be < d (got k={self.k}, d={self.d})")
        if not len(self.case_n) == len(self.case_sigma) == len(self.case_c1_max):
            raise chk.ConfigError("case_n, case_sigma and case_c1_max must have the same length")



def case_titles(cfg) -> list:
    """'Case 1: ...', 'Case 2: ...', then 'general: ...' for the cases Thm 4.4 does not cover."""
    out = []
    for n, s in zip(cfg.case_n, cfg.case_sigma):
        head = "Case 1" if s == 0 else "Case 2" if n == 2 else "general"
        out.append(f"{head}: n = {n}, sigma = {s:g}")
    return out


@dataclass
class LowRankLandscapeResult:
    config: LowRankLandscapeConfig
    c1: list  # per case: grid
    c2: torch.Tensor
    loss: list  # per case: (G1, G2)
    argmin: list  # per case: (c1*, c2*)
    slope_at_zero: list  # per case: dJ/dc1 at c1 = 0 (c2 = 0), finite difference
    seconds: float
    interior: list = None  # per case: (c1 minimiser inside its grid, c2 minimiser inside its grid)


@returns("cases", "argmin", "slope_at_zero", "seconds", timings=("seconds",), text=("cases",))
def summarize_lowrank_landscape(res: LowRankLandscapeResult) -> dict:
    return {"cases": case_titles(res.config), "argmin": res.argmin, "slope_at_zero": res.slope_at_zero,
            "seconds": res.seconds}


@EXPERIMENTS.register("lowrank_landscape", config=LowRankLandscapeConfig, summary=summarize_lowrank_landscape,
                      location="Thm 4.4", description="(c1, c2) loss landscape for low-rank linear tasks",
                      claims=("T-44", "T-44-gen", "T-H1"))
def run_lowrank_landscape(cfg: LowRankLandscapeConfig) -> LowRankLandscapeResult:
    t0 = time.perf_counter()
    c2 = torch.linspace(-cfg.c2_range, cfg.c2_range, 2 * (cfg.grid // 2) + 1, dtype=F64)  # contains 0
    c1s, losses, argmins, slopes, interior = [], [], [], [], []
    for i, (n, sigma, Cn) in enumerate(zip(cfg.case_n, cfg.case_sigma, cfg.case_c1_max)):
        c1 = torch.linspace(0.0, Cn, cfg.grid, dtype=F64)
        loss = lowrank_landscape(cfg.d, cfg.k, n, sigma, c1, c2, tasks=cfg.tasks, c_v=cfg.c_v,
                                 generator=make_generator(cfg.seed + i))
        j = int(torch.argmin(loss))
        argmins.append((float(c1[j // c2.numel()]), float(c2[j % c2.numel()])))
        interior.append((0 < j // c2.numel() < c1.numel() - 1, 0 < j % c2.numel() < c2.numel() - 1))
        h = 1e-3
        pair = lowrank_landscape(cfg.d, cfg.k, n, sigma, torch.tensor([0.0, h], dtype=F64), torch.zeros(1, dtype=F64),
                                 tasks=cfg.tasks, c_v=cfg.c_v, generator=make_generator(cfg.seed + i))
        slopes.append(float((pair[1, 0] - pair[0, 0]) / h))
        c1s.append(c1)
        losses.append(loss)
    return LowRankLandscapeResult(cfg, c1s, c2, losses, argmins, slopes, time.perf_counter() - t0, interior)


# ---------------------------------------------------------------- Fig. 2 (simulation)
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
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(contexts="1500 noisy contexts resolve bias and variance to a few thousandths")
    PARAMS = dict(nu=Real(0, 1e3), n=Int(1, 10**5), sigma=Real(0, 1e3, closed="right"),
                  c_values=TupleOf(Real(0, 1e6), max_len=16), c_grid_points=Int(3, 10_000), contexts=Int(2, 10**6),
                  b=Real(-10, 10), theta_query=Real(-10, 10), seed=SEED)



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


@returns("c", "bias2", "var", "seconds", timings=("seconds",))
def summarize_bias_variance(res: BiasVarianceResult) -> dict:
    k = len(res.config.c_values)
    return {"c": res.c_grid[:k].tolist(), "bias2": res.bias2[:k].tolist(), "var": res.var[:k].tolist(),
            "seconds": res.seconds}


@EXPERIMENTS.register("fig2_bias_variance", config=BiasVarianceConfig, summary=summarize_bias_variance,
                      location="Fig. 2", description="bias and variance of the softmax estimate vs window",
                      claims=("T-F2",))
def run_bias_variance(cfg: BiasVarianceConfig) -> BiasVarianceResult:
    t0 = time.perf_counter()
    g = make_generator(cfg.seed)
    task = HillsTask(cfg.nu, "freq")
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
