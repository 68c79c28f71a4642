"""Trained experiments of the window paper (App. J): the tied attention M = W^T W (W = 0.001 I at
start), Adam, one task per iteration with N = ceil(sqrt(n)) queries; trials and L / sigma / class
values that share a prompt shape are the runs of one batched training (Figs 1, 3, 4, 5, 9;
Lemma B.5; Thm 4.4 by gradient training).

Losses follow the paper's convention E(y_hat - f(x_q))^2 (no factor 1/2); the trainer's 1/2 is a
constant factor Adam does not see.  Seeds: trial t of every configuration uses ``seed + t`` (runs
that differ only in L, sigma or class see the same random stream: common random numbers)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ... import params as chk
from ...config import ScaledConfig, make_generator
from ...data import HillsTask, PromptBatch, PromptSampler, TwoReLUTask
from ...metrics import spectral_norm
from ...params import LR, PROMPTS, SEED, STEPS, Int, OneOf, Real, TupleOf
from ...registry import Registry, returns
from ...train import RunGrid
from .data import CLASSES, F64, input_law, log_grid, make_task, queries_for, sphere_inputs
from .population import population_c_star
from .theory import linear_attention_loss, optimal_window, window_curves
from .training import anisotropy, icl_error, train_window

EXPERIMENTS = Registry("window")

SEEDS = Int(1, 1000)
POS = Real(0, 1e4, closed="right")
DECAY = Real(0, 1, closed="right")
PANELS = ("relu-iso", "relu-aniso", "cos-iso", "cos-aniso")


def _split(grid: RunGrid, t: torch.Tensor, setting, dim: int = 0) -> torch.Tensor:
    """The runs of ``setting`` (all trials, in trial order) along dimension ``dim`` of ``t``."""
    return t.index_select(dim, torch.tensor(grid.index(setting=setting)))


# ---------------------------------------------------------------- Fig. 3 / 4
@dataclass(frozen=True)
class NormVsLConfig(ScaledConfig):
    """Fig. 3: ||M||_2 during pretraining for several L, ReLU/cos x isotropic/anisotropic inputs.

    Two L grids are trained together: ``paper_L`` around the paper's default L = 1 (at sigma = 0.01
    the optimal window is flat in L there: Thm 3.4 depends on L / sigma only) and ``visible_L_relu``
    / ``visible_L_cos`` reaching small L where the population optimum c*(L) still moves."""

    d: int = 5
    n: int = 20
    sigma: float = 0.01
    paper_L: tuple = (0.5, 1.0, 2.0, 4.0)
    visible_L_relu: tuple = (0.01, 0.03, 0.1, 1.0)
    visible_L_cos: tuple = (0.1, 0.3, 0.5, 1.0)
    panels: tuple = PANELS  # task class - inputs
    steps: int = 2000
    lr: float = 0.1
    lr_decay: float = 0.999
    seeds: int = 10
    seed: int = 0
    population_tasks: int = 3000
    CI = dict(steps=1000, seeds=6, population_tasks=800, panels=("relu-iso", "cos-iso"))
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(steps="1000 iterations: the norms have settled", seeds="6 trials instead of the paper's 10 (the ordering in L is decided on the trials' paired interval)", population_tasks="800 Monte-Carlo tasks for each c*", panels="isotropic inputs only (the non-isotropic panels have no population optimum to compare with)")
    PARAMS = dict(d=Int(2, 64), n=Int(1, 10**5), sigma=Real(0, 1e3, closed="right"), paper_L=TupleOf(POS, max_len=16),
                  visible_L_relu=TupleOf(POS, max_len=16), visible_L_cos=TupleOf(POS, max_len=16),
                  panels=TupleOf(OneOf(*PANELS), max_len=4, distinct=True), steps=STEPS, lr=LR, lr_decay=DECAY,
                  seeds=SEEDS, seed=SEED, population_tasks=PROMPTS)

    def panel_pairs(self) -> list:
        return [tuple(p.split("-")) for p in self.panels]

    def visible_L(self, cls: str) -> tuple:
        return self.visible_L_relu if cls == "relu" else self.visible_L_cos


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


@returns("keys", "steps", "final_norm", "c_star", "seconds", per_seed={"final_norm": 1}, timings=("seconds",),
         text=("keys",))
def summarize_norms(res: NormResult) -> dict:
    return {"keys": [list(map(str, k)) for k in res.keys], "steps": res.steps,
            "final_norm": [res.norm[k][-1].tolist() for k in res.keys],
            "c_star": [res.c_star[k] for k in res.keys], "seconds": res.seconds}


@EXPERIMENTS.register("fig3_norm_vs_L", config=NormVsLConfig, summary=summarize_norms, location="Fig. 3",
                      description="||M|| during pretraining for several L", claims=("E-F3", "E-34-trained"))
def run_norm_vs_L(cfg: NormVsLConfig, device=None) -> NormResult:
    t0 = time.perf_counter()
    Q = queries_for(cfg.n)
    keys, samplers = [], {}
    for grid_name in ("paper", "visible"):
        for cls, inp in cfg.panel_pairs():
            for L in (cfg.paper_L if grid_name == "paper" else cfg.visible_L(cls)):
                k = (grid_name, cls, inp, float(L))
                keys.append(k)
                samplers[k] = PromptSampler.from_inputs(input_law(inp, cfg.d), make_task(cls, cfg.d, L), N=cfg.n,
                                                        num_queries=Q, sigma=cfg.sigma)
    grid = RunGrid(setting=keys, trial=range(cfg.seeds))
    model, hist = train_window(grid, lambda r: samplers[r["setting"]], cfg.d, cfg.seed, steps=cfg.steps, lr=cfg.lr,
                               lr_decay=cfg.lr_decay, record_every=max(1, cfg.steps // 100), device=device)
    norm = {k: _split(grid, hist["norm"], k, 1) for k in keys}
    meig = {k: _split(grid, hist["mean_eig"], k, 1) for k in keys}
    final = {k: _split(grid, model.M.detach(), k) for k in keys}
    cstar = {}
    for k in keys:
        _, cls, inp, L = k
        if inp == "iso" and (cls, L) not in cstar:
            cstar[(cls, L)] = population_c_star(cls, cfg.d, cfg.n, L, cfg.sigma, cfg.population_tasks, cfg.seed + 99)
    cs = {k: cstar.get((k[1], k[3]), float("nan")) if k[2] == "iso" else float("nan") for k in keys}
    return NormResult(cfg, keys, hist.record_steps, norm, cs, final, meig, time.perf_counter() - t0)


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
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(steps="800 iterations show the ordering", seeds="3 trials instead of the paper's 10", n_values="three context lengths (one training each)", population_tasks="600 Monte-Carlo tasks for each c*")
    PARAMS = dict(d=Int(2, 64), n=Int(1, 10**5), L=POS, sigma=Real(0, 1e3, closed="right"),
                  sigmas=TupleOf(Real(0, 1e3, closed="right"), max_len=16), n_values=TupleOf(Int(1, 10**5), max_len=16),
                  classes=TupleOf(OneOf(*CLASSES), max_len=3, distinct=True), steps=STEPS, lr=LR, lr_decay=DECAY,
                  seeds=SEEDS, seed=SEED, population_tasks=PROMPTS)


@EXPERIMENTS.register("fig4_norm_vs_sigma_n", config=NormVsSigmaNConfig, summary=summarize_norms, location="Fig. 4",
                      description="||M|| during pretraining for several sigma and n", claims=("E-F4-sigma", "E-F4-n"))
def run_norm_vs_sigma_n(cfg: NormVsSigmaNConfig, device=None) -> NormResult:
    t0 = time.perf_counter()
    keys, norm, final, cs, meig, steps = [], {}, {}, {}, {}, None

    def one_training(ks, samplers):
        grid = RunGrid(setting=ks, trial=range(cfg.seeds))
        model, hist = train_window(grid, lambda r: samplers[r["setting"]], cfg.d, cfg.seed, steps=cfg.steps, lr=cfg.lr,
                                   lr_decay=cfg.lr_decay, record_every=max(1, cfg.steps // 100), device=device)
        for k in ks:
            norm[k] = _split(grid, hist["norm"], k, 1)
            meig[k] = _split(grid, hist["mean_eig"], k, 1)
            final[k] = _split(grid, model.M.detach(), k)
        return hist.record_steps

    # sigma ablation: one training
    samplers = {("sigma", cls, float(s)): PromptSampler.from_inputs(sphere_inputs(cfg.d), make_task(cls, cfg.d, cfg.L), N=cfg.n,
                                                                     num_queries=queries_for(cfg.n), sigma=s)
                for cls in cfg.classes for s in cfg.sigmas}
    ks = list(samplers)
    steps = one_training(ks, samplers)
    for k in ks:
        cs[k] = population_c_star(k[1], cfg.d, cfg.n, cfg.L, k[2], cfg.population_tasks, cfg.seed + 99)
    keys += ks
    # n ablation: one training per n (prompt shapes differ), N = 1 query
    for n in cfg.n_values:
        samplers = {("n", cls, int(n)): PromptSampler.from_inputs(sphere_inputs(cfg.d), make_task(cls, cfg.d, cfg.L), N=n,
                                                                  num_queries=1, sigma=cfg.sigma) for cls in cfg.classes}
        ks = list(samplers)
        one_training(ks, samplers)
        for k in ks:
            cs[k] = population_c_star(k[1], cfg.d, n, cfg.L, cfg.sigma, cfg.population_tasks, cfg.seed + 99)
        keys += ks
    return NormResult(cfg, keys, steps, norm, cs, final, meig, time.perf_counter() - t0)


# ---------------------------------------------------------------- Lemma B.5
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
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(steps="1200 iterations", seeds="3 trials")
    PARAMS = dict(d=Int(2, 64), n=Int(1, 10**5), L=POS, sigma=Real(0, 1e3, closed="right"),
                  init_std=Real(0, 100, closed="right"), steps=STEPS, lr=LR, lr_decay=DECAY, seeds=SEEDS, seed=SEED)


@dataclass
class IsotropyResult:
    config: IsotropyConfig
    steps: list
    anisotropy: dict  # (param, inputs) -> (records, trials)
    norm: dict
    final_M: dict
    c_star: float
    seconds: float


@returns("('tied', 'iso')", "('tied', 'aniso')", "('untied', 'iso')", "('untied', 'aniso')", "c_star", "seconds",
         per_seed=("('tied', 'iso')", "('tied', 'aniso')", "('untied', 'iso')", "('untied', 'aniso')"),
         timings=("seconds",))
def summarize_isotropy(res: IsotropyResult) -> dict:
    return {str(k): {"anisotropy_start": v[0].tolist(), "anisotropy_end": v[-1].tolist(),
                     "norm_end": res.norm[k][-1].tolist()} for k, v in res.anisotropy.items()} | {
        "c_star": res.c_star, "seconds": res.seconds}


@EXPERIMENTS.register("isotropy", config=IsotropyConfig, summary=summarize_isotropy, location="Lemma B.5",
                      description="trained M becomes a multiple of I from an anisotropic start", claims=("E-B5",))
def run_isotropy(cfg: IsotropyConfig, device=None) -> IsotropyResult:
    t0 = time.perf_counter()
    an, nm, fm = {}, {}, {}
    steps = None
    samplers = {inp: PromptSampler.from_inputs(input_law(inp, cfg.d), TwoReLUTask(cfg.d, cfg.L), N=cfg.n,
                                               num_queries=queries_for(cfg.n), sigma=cfg.sigma) for inp in ("iso", "aniso")}
    for tied in (True, False):
        grid = RunGrid(setting=["iso", "aniso"], trial=range(cfg.seeds))
        model, hist = train_window(grid, lambda r: samplers[r["setting"]], cfg.d, cfg.seed, steps=cfg.steps, lr=cfg.lr,
                                   lr_decay=cfg.lr_decay, init="normal", init_std=cfg.init_std, tied=tied,
                                   record=lambda m, s: {"aniso": anisotropy(0.5 * (m.M + m.M.transpose(-1, -2)))},
                                   record_every=max(1, cfg.steps // 60), device=device)
        steps = hist.record_steps
        for inp in ("iso", "aniso"):
            k = ("tied" if tied else "untied", inp)
            an[k], nm[k] = _split(grid, hist["aniso"], inp, 1), _split(grid, hist["norm"], inp, 1)
            fm[k] = _split(grid, model.M.detach(), inp)
    cstar = population_c_star("relu", cfg.d, cfg.n, cfg.L, cfg.sigma, 2000, cfg.seed + 5)
    return IsotropyResult(cfg, steps, an, nm, fm, cstar, time.perf_counter() - t0)


# ---------------------------------------------------------------- Fig. 5
@dataclass(frozen=True)
class TransferTrainingConfig(ScaledConfig):
    """Fig. 5: test ICL error during pretraining.  Units pretrained on affine / ReLU / cos (all
    L = 1) and on cos with a mismatched L; every ``eval_every`` steps each is evaluated on a fixed
    set of ``test_tasks`` tasks of each 1-Lipschitz test class (a fixed test set replaces the
    paper's 5 fresh tasks smoothed with rate 0.01, for smoother curves)."""

    d: int = 5
    n: int = 200
    sigma: float = 0.01
    pretrain_classes: tuple = ("affine", "relu", "cos", "cos", "cos")
    pretrain_L: tuple = (1.0, 1.0, 1.0, 0.1, 10.0)
    test_classes: tuple = ("affine", "relu", "cos")
    steps: int = 2000
    lr: float = 0.1
    lr_decay: float = 0.999
    eval_every: int = 40
    test_tasks: int = 100
    seeds: int = 10
    seed: int = 0
    test_seed: int = 50_000
    CI = dict(steps=600, seeds=6, eval_every=30, test_tasks=60, n=100)
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(steps="600 iterations: the errors have settled", seeds="6 trials instead of the paper's 10 (the error ratios are decided on the trials' interval)", eval_every="evaluation every 30 iterations", test_tasks="60 fixed test tasks per class", n="n = 100 instead of the paper's 200 (half the cost per step)")
    PARAMS = dict(d=Int(2, 64), n=Int(1, 10**5), sigma=Real(0, 1e3, closed="right"),
                  pretrain_classes=TupleOf(OneOf(*CLASSES), max_len=16), pretrain_L=TupleOf(POS, max_len=16),
                  test_classes=TupleOf(OneOf(*CLASSES), max_len=3, distinct=True), steps=STEPS, lr=LR, lr_decay=DECAY,
                  eval_every=Int(1, 10**6), test_tasks=PROMPTS, seeds=SEEDS, seed=SEED, test_seed=SEED)

    def validate(self):
        if len(self.pretrain_classes) != len(self.pretrain_L):
            raise chk.ConfigError("pretrain_classes and pretrain_L must have the same length")

    @property
    def pretrain(self) -> tuple:
        """(class, L) of every pretrained unit."""
        return tuple(zip(self.pretrain_classes, self.pretrain_L))


@dataclass
class TransferTrainingResult:
    config: TransferTrainingConfig
    steps: list
    error: dict  # (pretrain cls, L, test cls) -> (records, trials)
    norm: dict  # (pretrain cls, L) -> (records, trials)
    seconds: float


@returns("final_error", "final_norm", "seconds", per_seed=("final_error", "final_norm"), timings=("seconds",))
def summarize_transfer_training(res: TransferTrainingResult) -> dict:
    return {"final_error": {f"{a}{b:g}->{c}": v[-1].tolist() for (a, b, c), v in res.error.items()},
            "final_norm": {f"{a}{b:g}": v[-1].tolist() for (a, b), v in res.norm.items()}, "seconds": res.seconds}


@EXPERIMENTS.register("fig5_transfer", config=TransferTrainingConfig, summary=summarize_transfer_training,
                      location="Fig. 5", description="test ICL error during pretraining, cross-class transfer",
                      claims=("E-F5-same", "E-F5-mismatch"))
def run_transfer_training(cfg: TransferTrainingConfig, device=None) -> TransferTrainingResult:
    t0 = time.perf_counter()
    Q = queries_for(cfg.n)
    inp = sphere_inputs(cfg.d)
    samplers = {p: PromptSampler.from_inputs(inp, make_task(p[0], cfg.d, p[1]), N=cfg.n, num_queries=Q, sigma=cfg.sigma)
                for p in cfg.pretrain}
    tests = {c: PromptSampler.from_inputs(inp, make_task(c, cfg.d, 1.0), N=cfg.n, num_queries=Q, sigma=cfg.sigma)
             .sample(cfg.test_tasks, make_generator(cfg.test_seed + i)) for i, c in enumerate(cfg.test_classes)}
    dev_tests = {}

    def record(m, step):
        p = next(m.parameters())
        out = {}
        for c in cfg.test_classes:
            if c not in dev_tests:
                dev_tests[c] = tests[c].to(p.device, p.dtype)
            out[f"err_{c}"] = icl_error(m, dev_tests[c])
        return out

    grid = RunGrid(setting=list(cfg.pretrain), trial=range(cfg.seeds))
    model, hist = train_window(grid, lambda r: samplers[r["setting"]], cfg.d, cfg.seed, steps=cfg.steps, lr=cfg.lr,
                               lr_decay=cfg.lr_decay, record=record, record_every=cfg.eval_every, device=device)
    err, norm = {}, {}
    for cls, L in cfg.pretrain:
        norm[(cls, L)] = _split(grid, hist["norm"], (cls, L), 1)
        for c in cfg.test_classes:
            err[(cls, L, c)] = _split(grid, hist[f"err_{c}"], (cls, L), 1)
    return TransferTrainingResult(cfg, hist.record_steps, err, norm, time.perf_counter() - t0)


# ---------------------------------------------------------------- Fig. 1
@dataclass(frozen=True)
class HillsConfig(ScaledConfig):
    """Fig. 1: d = 2, tasks from the hills class for nu in ``nus``, softmax and linear attention
    trained (Adam, LR 1e-2, one task per iteration, one query) for each n, plus the population
    optima (grid search over c for softmax, least squares for linear).  ``hills_mode`` is the
    reading of the paper's task formula (:class:`~icl_lab.data.HillsTask`): 'amp' = nu cos(theta - b)
    (the formula as printed, linear in x on the circle), 'bump' = one hill
    cos(min(nu |wrap(theta - b)|, pi)), 'freq' = cos(nu wrap(theta - b))."""

    nus: tuple = (0.0, 1.5, 6.0)
    n_values: tuple = (4, 16, 64, 256)  # powers of 4: powers of 2 would double the 15000-step trainings
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
    CI = dict(n_values=(4, 16, 64), steps=1500, seeds=8, test_tasks=500, population_tasks=600, linear_prompts=2000)
    BOOK = CI  # the book runs the ci setting (BOOK_WHY says why it suffices)
    BOOK_WHY = dict(n_values="n up to 64 (n = 256 is the most expensive)", steps="1500 iterations instead of the paper's 15000: the windows are still opening (see the caveat of the window claim)", seeds="8 trials instead of the paper scale's 5: the shorter runs scatter more, and the ledger decides on the trials' interval (training them together costs little)", test_tasks="500 test tasks", population_tasks="600 Monte-Carlo tasks per optimum", linear_prompts="2000 prompts for the linear least squares")
    PARAMS = dict(nus=TupleOf(Real(0, 1e3), max_len=16), n_values=TupleOf(Int(2, 10**5), max_len=16), sigma=Real(0, 1e3),
                  hills_mode=OneOf(*HillsTask.SHAPES), steps=STEPS, lr=LR, lr_linear=LR, seeds=SEEDS, seed=SEED,
                  test_tasks=PROMPTS, population_tasks=PROMPTS, linear_prompts=PROMPTS, test_seed=SEED)

    def task(self, nu: float):
        return HillsTask(nu, self.hills_mode)


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


@returns("n", "trained", "optimum", "c_opt", "seconds", per_seed={"trained": 1}, timings=("seconds",))
def summarize_hills(res: HillsResult) -> dict:
    return {"n": res.n, "trained": {f"{a},{nu:g}": v.tolist() for (a, nu), v in res.trained.items()},
            "optimum": {f"{a},{nu:g}": v.tolist() for (a, nu), v in res.optimum.items()},
            "c_opt": {f"{nu:g}": v.tolist() for nu, v in res.c_opt.items()}, "seconds": res.seconds}


@EXPERIMENTS.register("fig1_hills", config=HillsConfig, summary=summarize_hills, location="Fig. 1",
                      description="hills on the circle: softmax vs linear, error vs n",
                      claims=("E-F1a", "E-F1a-lit", "E-F1b"))
def run_hills(cfg: HillsConfig, device=None) -> HillsResult:
    t0 = time.perf_counter()
    inp = sphere_inputs(2)
    trained = {(a, nu): [] for a in ("softmax", "linear") for nu in cfg.nus}
    optimum = {(a, nu): [] for a in ("softmax", "linear") for nu in cfg.nus}
    c_tr = {nu: [] for nu in cfg.nus}
    c_opt = {nu: [] for nu in cfg.nus}
    M_lin = {nu: [] for nu in cfg.nus}
    M_lin_opt = {nu: [] for nu in cfg.nus}
    grid = RunGrid(setting=list(cfg.nus), trial=range(cfg.seeds))
    c_grid = torch.cat([torch.zeros(1, dtype=F64), log_grid(0.05, 5000.0, 60)])
    for n in cfg.n_values:
        samplers = {nu: PromptSampler.from_inputs(inp, cfg.task(nu), N=n, num_queries=1, sigma=cfg.sigma) for nu in cfg.nus}
        tests = PromptBatch.stack([samplers[r["setting"]].sample(cfg.test_tasks, make_generator(cfg.test_seed + n))
                                   for r in grid.runs])
        for act, lr in (("softmax", cfg.lr), ("linear", cfg.lr_linear)):
            model, _ = train_window(grid, lambda r: samplers[r["setting"]], 2, cfg.seed, steps=cfg.steps, lr=lr,
                                    lr_decay=1.0, activation=act, record_at=[cfg.steps], device=device)
            err = icl_error(model, tests)
            M = model.M.detach()
            for nu in cfg.nus:
                trained[(act, nu)].append(_split(grid, err, nu))
                if act == "softmax":
                    c_tr[nu].append(spectral_norm(_split(grid, M, nu)))
                else:
                    M_lin[nu].append(_split(grid, M, nu))
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
