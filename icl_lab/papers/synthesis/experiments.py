"""Synthesis chapter: two papers' settings through the same code.

The convergence paper trains Q-only softmax attention on *linear* tasks y = <w, x>, w ~ N(0, I); the
nonlinear paper trains the same model on *L-Lipschitz* tasks y = (L/c) cos(c w^T x + phi) over the same
kind of feature dictionary. Both papers' first phase is the growth of the diagonal of S = V^T Q V, whose
initial speed is set (at Q = 0) by how much the labels of different features differ within a prompt.

This experiment trains both families side by side — one batched training, one model class, one
sampler type, one data law per run (:class:`~icl_lab.data.StackedSampler`) — and measures, for each law:

* the **label contrast** C = 1/2 E[(f(v_k) - f(v_j))^2] for k != j (by Monte Carlo over tasks); for the
  linear task C = 1 exactly (w_k, w_j independent N(0, 1)); for the cosine family C ~ L^2/d for small c;
* the **time t_half** at which the mean own-feature attention first reaches ``target`` (0.5 of the way
  from uniform 1/K to 1), and the loss curve normalised by the label variance.

The hypothesis that ties the two papers (ours, not stated by either): with the learning rate fixed, the
first phase lasts ~ 1/C, whatever the task family — the nonlinear paper's "L sets the speed" and the
convergence paper's linear tasks are two points on one curve.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from ... import params as chk
from ... import metrics
from ...config import ScaledConfig, make_generator
from ...params import LR, SEED, SIZE, STEPS, Int, Real, TupleOf
from ...data import CosineFeatureTask, LinearTask, PromptSampler, StackedSampler, standard_basis
from ...models import QOnlyAttention
from ...registry import Registry, returns
from ...train import train

EXPERIMENTS = Registry("synthesis")


@dataclass(frozen=True)
class CrossPaperConfig(ScaledConfig):
    """Q-only attention (Q = 0 at start), plain GD on fresh prompts, K orthonormal features in R^d,
    uniform p; one linear law (convergence paper) and one cosine law per L (nonlinear paper, c = 0.5)."""

    d: int = 15
    K: int = 4
    N: int = 40
    L_values: tuple = (0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0)
    c: float = 0.5
    seeds: int = 3
    seed: int = 0
    steps: int = 2500
    lr: float = 2.0
    batch: int = 128
    target: float = 0.5  # fraction of the way from uniform (1/K) to full own-feature attention
    record_every: int = 10
    contrast_tasks: int = 200_000
    eval_prompts: int = 512
    CI = dict(L_values=(1.0, 2.0, 4.0), seeds=2, steps=600, batch=64, record_every=5, contrast_tasks=50_000,
              eval_prompts=256)

    PARAMS = dict(d=SIZE, K=Int(2, 4096), N=Int(1, 100_000), L_values=TupleOf(Real(0, 1e3, closed="right"), max_len=64),
                  c=Real(1e-6, 1e3), seeds=Int(1, 1000), seed=SEED, steps=STEPS, lr=LR,
                  batch=Int(1, 100_000), target=Real(0, 1, closed="neither"), record_every=STEPS,
                  contrast_tasks=Int(100, 10**7), eval_prompts=Int(1, 10**6))

    def validate(self):
        chk.features_fit(self.K, self.d)


@dataclass
class CrossPaperResult:
    config: CrossPaperConfig
    laws: list  # names, e.g. ["linear", "cosine L=0.25", ...]
    contrast: torch.Tensor  # (laws,) label contrast C
    label_var: torch.Tensor  # (laws,) label variance Var f(x) (to normalise the loss)
    steps: list  # record steps
    own_attention: torch.Tensor  # (records, laws, seeds) mean own-feature attention on eval prompts
    loss: torch.Tensor  # (steps, laws, seeds) training loss
    t_half: torch.Tensor  # (laws, seeds) step where own attention crosses the target level (interpolated); nan if never
    seconds: float


def laws(cfg: CrossPaperConfig):
    """The task families compared: the convergence paper's linear task, then the nonlinear paper's
    cosine task for each L."""
    fams = [("linear", LinearTask(cfg.d))]
    fams += [(f"cosine L={L:g}", CosineFeatureTask(cfg.d, L, c=cfg.c)) for L in cfg.L_values]
    return fams


def label_contrast(task, V: torch.Tensor, n: int, generator: torch.Generator) -> tuple[float, float]:
    """(C, Var): C = 1/2 E[(f(v_0) - f(v_1))^2] over tasks, and the label variance over tasks and
    features (uniform over the K features)."""
    params = task.sample(n, generator)
    y = task.evaluate(params, V.unsqueeze(0).expand(n, -1, -1).contiguous())  # (n, K)
    C = 0.5 * float(((y[:, 0] - y[:, 1]) ** 2).mean())
    return C, float(y.var())


@returns("laws", "contrast", "label_var", "t_half", "fit_slope", "fit_intercept", "steps", "own_attention",
         "final_loss", "seconds", per_seed={"t_half": 1, "own_attention": 2, "final_loss": 1}, timings=("seconds",),
         text=("laws",))
def summarize_cross_paper(res: CrossPaperResult) -> dict:
    b, a = contrast_law_fit(res)
    return {"laws": res.laws, "contrast": res.contrast.tolist(), "label_var": res.label_var.tolist(),
            "t_half": res.t_half.tolist(), "fit_slope": b, "fit_intercept": a, "steps": res.steps,
            "own_attention": res.own_attention.tolist(),  # [records][laws][seeds]
            "final_loss": res.loss[-1].tolist(), "seconds": res.seconds}


def result_from_summary(cfg: CrossPaperConfig, s: dict) -> CrossPaperResult:
    """Rebuild the result (without the per-step loss) from a stored record's summary (what :func:`icl_lab.memo.full` reads at paper scale)."""
    t = lambda k: torch.as_tensor(s[k], dtype=torch.float64)  # noqa: E731
    return CrossPaperResult(config=cfg, laws=list(s["laws"]), contrast=t("contrast"), label_var=t("label_var"),
                            steps=list(s["steps"]), own_attention=t("own_attention"),
                            loss=t("final_loss")[None], t_half=t("t_half"), seconds=float(s["seconds"]))


@EXPERIMENTS.register("cross_paper", config=CrossPaperConfig, from_summary=result_from_summary,
                      summary=summarize_cross_paper,
                      location="Synthesis, Sec. 3",
                      description="Linear tasks (convergence paper) and cosine-L tasks (nonlinear paper) on "
                                  "one Q-only model: time to concentrate attention against the label contrast",
                      claims=("X1", "X2"))
def run_cross_paper(cfg: CrossPaperConfig, device=None) -> CrossPaperResult:
    t0 = time.perf_counter()
    V = standard_basis(cfg.K, cfg.d)
    fams = laws(cfg)
    names = [n for n, _ in fams]
    stats = [label_contrast(f, V, cfg.contrast_tasks, make_generator(cfg.seed + 9_000 + i)) for i, (_, f) in enumerate(fams)]
    samplers = [PromptSampler.from_features(V, f, N=cfg.N) for _, f in fams]
    # run r = law (r // seeds), seed (seed + r % seeds): all laws and seeds in one batched training
    seeds = [cfg.seed + s for _ in fams for s in range(cfg.seeds)]
    data_seeds = [1_000_003 * (i + 1) + s for i in range(len(fams)) for s in range(cfg.seed, cfg.seed + cfg.seeds)]
    stacked = StackedSampler([s for s in samplers for _ in range(cfg.seeds)])
    evals = [s.sample(cfg.eval_prompts, make_generator(cfg.seed + 77_000 + i)) for i, s in enumerate(samplers)]
    eval_batch = type(evals[0]).stack([e for e in evals for _ in range(cfg.seeds)])

    def own(model, step):
        out = model(eval_batch.to(model.Q.device, model.Q.dtype))
        own_k = metrics.own_feature_attention(out.attn, eval_batch.ids.to(out.attn.device),
                                              eval_batch.query_ids.to(out.attn.device), cfg.K)  # (R, K)
        return own_k.nanmean(-1)

    model = QOnlyAttention(cfg.d, seeds=seeds)
    hist = train(model, stacked, steps=cfg.steps, optimizer="gd", lr=cfg.lr, batch_size=cfg.batch,
                 seeds=data_seeds, record=lambda m, step: {"own": own(m, step)}, record_every=cfg.record_every, device=device)
    nl, ns = len(fams), cfg.seeds
    own_att = hist["own"].reshape(len(hist.record_steps), nl, ns)
    level = 1.0 / cfg.K + cfg.target * (1 - 1.0 / cfg.K)
    # the crossing time, linearly interpolated between the last record below the level and the first
    # at or above it (so the record spacing does not quantise t_half)
    t_half = metrics.first_crossing(own_att, level, times=hist.record_steps, interpolate=True)
    return CrossPaperResult(
        config=cfg, laws=names, contrast=torch.tensor([s[0] for s in stats], dtype=torch.float64),
        label_var=torch.tensor([s[1] for s in stats], dtype=torch.float64), steps=list(hist.record_steps),
        own_attention=own_att, loss=hist.loss.reshape(-1, nl, ns), t_half=t_half, seconds=time.perf_counter() - t0)


def contrast_law_fit(res: CrossPaperResult, include_linear: bool = False) -> tuple[float, float]:
    """Least-squares fit of log t_half = a + b log C over the cosine laws (seed means; laws whose runs
    never reached the target are left out). Returns (b, a)."""
    t = res.t_half.nanmean(-1)
    sel = [i for i, n in enumerate(res.laws) if (include_linear or n != "linear") and math.isfinite(float(t[i]))]
    if len(sel) < 2:
        return math.nan, math.nan
    x = res.contrast[sel].log()
    y = t[sel].log()
    X = torch.stack([torch.ones_like(x), x], 1)
    a, b = torch.linalg.lstsq(X, y[:, None]).solution[:, 0].tolist()
    return b, a


