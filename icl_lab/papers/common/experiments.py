"""Chapter 1 (the common setup): Q-only softmax attention on linear tasks with orthonormal
features, against baselines, as the context length N grows."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ... import params as chk
from ... import baselines, metrics
from ...config import ScaledConfig, make_generator
from ...params import LR, SEED, SIZE, STEPS, Int, Real, TupleOf
from ...data import LinearTask, PromptSampler, standard_basis
from ...models import KernelAttention, QOnlyAttention
from ...registry import Registry, returns
from ...train import mse_loss, train

EXPERIMENTS = Registry("common")


@dataclass(frozen=True)
class ContextLengthConfig(ScaledConfig):
    """Train Q-only attention (Q = 0 at start, full-batch GD on fresh prompts) for each N.

    The convergence paper gives no learning rate; eta = 30 is our choice: GD on this loss is slow
    at small eta because the gradient carries the factor p_k / N-scale attention products.
    """

    d: int = 16
    K: int = 4
    N_values: tuple = (2, 4, 8, 16, 32, 64)
    seeds: int = 5
    seed: int = 0  # run r uses seed + r (registry convention: seeds split across tasks give the same runs)
    steps: int = 400
    lr: float = 30.0
    batch: int = 256
    test_prompts: int = 4000
    linear_fit_prompts: int = 40_000  # the linear-attention optimum has d^2 coefficients: fit on many prompts
    nw_bandwidths: tuple = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
    test_seed: int = 10_000
    CI = dict(N_values=(2, 4, 8, 16, 32), seeds=3, steps=250, batch=128, test_prompts=2000, linear_fit_prompts=20_000)
    PARAMS = dict(d=SIZE, K=Int(2, 4096), N_values=TupleOf(Int(1, 100_000), max_len=64), seeds=Int(1, 1000), seed=SEED,
                  steps=STEPS, lr=LR, batch=Int(1, 100_000), test_prompts=Int(1, 200_000),
                  linear_fit_prompts=Int(1, 1_000_000), nw_bandwidths=TupleOf(Real(1e-6, 1e6), max_len=64),
                  test_seed=SEED)

    def validate(self):
        chk.features_fit(self.K, self.d)


@dataclass
class ContextLengthResult:
    config: ContextLengthConfig
    N: list
    trained_loss: torch.Tensor  # (len(N), R) test loss of the trained attention
    train_curves: list  # per N: (steps, R) training loss
    own_attention: torch.Tensor  # (len(N), R) mean Attn_k over queries whose feature is in context
    uniform_loss: torch.Tensor  # (len(N),) Q = 0: the average of the context labels
    bayes_risk: torch.Tensor  # (len(N),) exact risk 1/2 sum_k p_k (1 - p_k)^N of the Bayes predictor
    ls_bayes_gap: torch.Tensor  # (len(N),) max |least-squares prediction - Bayes prediction| on the test set
    knn1_loss: torch.Tensor  # (len(N),)
    nw_loss: torch.Tensor  # (len(N),) Nadaraya-Watson at the best bandwidth of the grid
    linear_attention_loss: torch.Tensor  # (len(N),) closed-form linear-attention optimum (test loss)
    linear_attention_se: torch.Tensor  # (len(N),) standard error of that test loss (over test prompts)
    lower_bound: torch.Tensor  # (len(N),) the convergence paper's L^low for attention
    models: list  # per N: the trained QOnlyAttention (R runs)
    seconds: float


def attention_lower_bound(p: torch.Tensor, N: int) -> float:
    """L^low = 1/2 (1 + 1/(K-1)) sum_k p_k P(|V_k| = 0) (convergence paper, eqs. 8-9): the loss any
    softmax attention must pay on prompts whose query feature is absent from the context."""
    K = p.numel()
    return float(0.5 * K / (K - 1) * (p * (1 - p) ** N).sum())


def _half_mse(pred, target):
    return float(0.5 * ((pred - target) ** 2).mean())


@returns("N", "trained_loss", "own_attention", "uniform_loss", "bayes_risk", "knn1_loss", "nw_loss",
         "linear_attention_loss", "lower_bound", "seconds", per_seed={"trained_loss": 1, "own_attention": 1},
         timings=("seconds",))
def summarize_context_length(res: ContextLengthResult) -> dict:
    """JSON-serialisable summary (per-seed values as lists in seed order) for the results store."""
    return {
        "N": res.N,
        "trained_loss": res.trained_loss.tolist(),  # [len(N)][seeds]
        "own_attention": res.own_attention.tolist(),
        "uniform_loss": res.uniform_loss.tolist(),
        "bayes_risk": res.bayes_risk.tolist(),
        "knn1_loss": res.knn1_loss.tolist(),
        "nw_loss": res.nw_loss.tolist(),
        "linear_attention_loss": res.linear_attention_loss.tolist(),
        "lower_bound": res.lower_bound.tolist(),
        "seconds": res.seconds,
    }


def _context_length_prompts(cfg: ContextLengthConfig):
    """Per N its sampler and held-out prompts; a ConfigError when a held-out set leaves a feature with no
    query (the attention per feature is read on them). Also called before a sweep computes anything."""
    V = standard_basis(cfg.K, cfg.d)
    p = torch.full((cfg.K,), 1.0 / cfg.K, dtype=torch.float64)
    samplers = {N: PromptSampler.from_features(V, LinearTask(cfg.d), N=N, p=p) for N in cfg.N_values}
    tests = {N: samplers[N].sample(cfg.test_prompts, make_generator(cfg.test_seed + N)) for N in cfg.N_values}
    for test in tests.values():
        chk.every_feature_queried(test.query_ids, cfg.K, "test_prompts", cfg.test_prompts)
    return p, samplers, tests


@EXPERIMENTS.register("context_length", config=ContextLengthConfig, summary=summarize_context_length,
                      location="Chapter 1, Sec. 5",
                      description="Q-only softmax attention trained on linear "
                                  "tasks vs baselines as the context length N grows",
                      claims=("S4", "S5", "S6"), check=_context_length_prompts)
def run_context_length(cfg: ContextLengthConfig, device=None) -> ContextLengthResult:
    import time

    t0 = time.perf_counter()
    seeds = list(range(cfg.seed, cfg.seed + cfg.seeds))
    rows = {k: [] for k in ("trained", "own", "uniform", "risk", "gap", "knn", "nw", "lin", "lin_se", "low")}
    curves, models = [], []
    p, samplers, tests = _context_length_prompts(cfg)
    for N in cfg.N_values:
        sampler, test = samplers[N], tests[N]
        model = QOnlyAttention(cfg.d, seeds=seeds)
        hist = train(model, sampler, steps=cfg.steps, optimizer="gd", lr=cfg.lr, batch_size=cfg.batch,
                     device=device)
        model = model.to("cpu", torch.float64)
        out = model(test)
        rows["trained"].append(mse_loss(out, test).detach())
        mass = metrics.attention_by_feature(out.attn, test.ids, cfg.K)  # (R, B, 1, K)
        own = torch.gather(mass, -1, test.query_ids.unsqueeze(0).unsqueeze(-1).expand(mass.shape[0], -1, -1, 1))[..., 0]
        present = (test.counts.gather(-1, test.query_ids) > 0)  # (B, 1)
        rows["own"].append((own * present).sum(dim=(1, 2)) / present.sum())
        x, y, xq, yq = test.x, test.y, test.x_query, test.y_query
        rows["uniform"].append(_half_mse(baselines.context_average(x, y, xq), yq))
        bayes_pred = baselines.bayes_linear_feature_predictor(test)
        ls_pred = baselines.least_squares(x, y, xq)
        rows["risk"].append(float(0.5 * (p * (1 - p) ** N).sum()))
        rows["gap"].append(float((ls_pred - bayes_pred).abs().max()))
        rows["knn"].append(_half_mse(baselines.knn(x, y, xq, 1), yq))
        rows["nw"].append(min(_half_mse(baselines.nadaraya_watson(x, y, xq, h), yq) for h in cfg.nw_bandwidths))
        fit = sampler.sample(cfg.linear_fit_prompts, make_generator(cfg.test_seed + 7919 + N))
        M_lin, _ = baselines.linear_attention_optimum(fit)
        lin = KernelAttention(cfg.d, runs=1, activation="linear", tied=False).to(dtype=torch.float64)
        with torch.no_grad():
            lin.M_K.copy_(torch.eye(cfg.d, dtype=torch.float64)[None])
            lin.M_Q.copy_(M_lin[None])
        with torch.no_grad():
            per_prompt = 0.5 * (lin(test).pred[0] - test.y_query) ** 2  # (B, 1)
        rows["lin"].append(float(per_prompt.mean()))
        rows["lin_se"].append(float(per_prompt.std() / per_prompt.numel() ** 0.5))
        rows["low"].append(attention_lower_bound(p, N))
        curves.append(hist.loss)
        models.append(model)
    t = lambda k: torch.as_tensor(rows[k], dtype=torch.float64)  # noqa: E731
    return ContextLengthResult(
        config=cfg, N=list(cfg.N_values), trained_loss=torch.stack(rows["trained"]), train_curves=curves,
        own_attention=torch.stack(rows["own"]).detach(), uniform_loss=t("uniform"), bayes_risk=t("risk"), ls_bayes_gap=t("gap"),
        knn1_loss=t("knn"), nw_loss=t("nw"), linear_attention_loss=t("lin"), linear_attention_se=t("lin_se"),
        lower_bound=t("low"), models=models, seconds=time.perf_counter() - t0)
