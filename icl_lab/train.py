"""One trainer for every experiment: GD, SGD and Adam over R independent runs at once.

Every model parameter has a leading run dimension R.  One optimisation step updates all runs:
the loss is the **sum** of the per-run losses, so each run's gradient is exactly its own (runs
share no parameters), and the update rules are elementwise with a per-run learning rate.  Run r
of a batched training therefore equals training run r alone (tested in float64).

Data comes either as a fixed :class:`~icl_lab.data.PromptBatch` (full-batch GD, or mini-batches
reshuffled every epoch with a per-run generator), or as a sampler with
``sample_runs(batch, generators)`` (fresh prompts every step, one generator per run).

Example::

    model = QOnlyAttention(d=16, runs=5)
    hist = train(model, sampler, steps=500, optimizer="gd", lr=[0.1, 0.2, 0.4, 0.8, 1.6],
                 batch_size=256, seeds=range(5), record=lambda m, step: {"Q": m.Q.detach().clone()})
    hist.loss        # (steps, R) training loss
    hist["Q"]        # (n_records, R, d, d) at hist.record_steps
"""
from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import torch

from . import params as chk
from .config import default_device, ensure_threads, make_generator, progress_enabled
from .data.prompts import PromptBatch
from .models.attention import AttentionOutput, RunModule

OPTIMIZERS = ("gd", "sgd", "adam")


# ----------------------------------------------------------------------------- losses
def mse_loss(out: AttentionOutput, batch: PromptBatch) -> torch.Tensor:
    """Per-run squared loss 1/2 E[(y_hat - y_query)^2] (the papers' 1/2 convention): (R,)."""
    target = batch.y_query if batch.has_runs else batch.y_query.unsqueeze(0)
    return 0.5 * ((out.pred - target) ** 2).mean(dim=(-2, -1))


def hinge_loss(out: AttentionOutput, batch: PromptBatch) -> torch.Tensor:
    """Per-run hinge loss E[max(0, 1 - y F)] (selectors paper): (R,)."""
    target = batch.y_query if batch.has_runs else batch.y_query.unsqueeze(0)
    return torch.clamp(1 - target * out.pred, min=0).mean(dim=(-2, -1))


LOSSES = {"mse": mse_loss, "hinge": hinge_loss}


def per_run_loss(model: RunModule, batch: PromptBatch, loss: str | Callable = "mse") -> torch.Tensor:
    """Evaluate a model's per-run loss on a batch without tracking gradients: (R,)."""
    fn = LOSSES[chk.one_of("loss", loss, LOSSES)] if isinstance(loss, str) else loss
    with torch.no_grad():
        return fn(model(batch), batch)


# ----------------------------------------------------------------------------- optimisers
class BatchedOptimizer:
    """GD / SGD (with optional momentum) / Adam with a per-run learning rate (R,).

    The update of each parameter entry depends only on that entry's gradient history, so runs stay
    independent.  ``lr_decay`` multiplies the learning rate by that factor after every step
    (the window paper's exponential decay 0.999).
    """

    def __init__(self, params: Sequence[torch.nn.Parameter], kind: str, lr: torch.Tensor, *,
                 betas=(0.9, 0.999), eps: float = 1e-8, momentum: float = 0.0, lr_decay: float = 1.0,
                 weight_decay: float = 0.0):
        self.params = list(params)
        self.kind = chk.one_of("optimizer", kind, OPTIMIZERS)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.momentum = momentum
        self.lr_decay = lr_decay
        self.weight_decay = weight_decay
        self.t = 0
        self.state = [dict() for _ in self.params]

    @torch.no_grad()
    def step(self):
        self.t += 1
        lr_t = self.lr * self.lr_decay ** (self.t - 1) if self.lr_decay != 1 else self.lr
        shaped: dict = {}
        for p, st in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad
            if self.weight_decay:
                g = g + self.weight_decay * p
            key = (p.dtype, p.ndim)
            if key not in shaped:
                shaped[key] = lr_t.to(p.dtype).reshape(-1, *([1] * (p.ndim - 1)))
            lr = shaped[key]
            if self.kind in ("gd", "sgd"):
                if self.momentum:
                    buf = st.get("m")
                    buf = g.clone() if buf is None else buf.mul_(self.momentum).add_(g)
                    st["m"] = buf
                    g = buf
                p.sub_(lr * g)
            else:
                b1, b2 = self.betas
                m = st.setdefault("m", torch.zeros_like(p))
                v = st.setdefault("v", torch.zeros_like(p))
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                # lr * m_hat / (sqrt(v_hat) + eps), in place on the two temporaries (the same floats)
                denom = (v / (1 - b2**self.t)).sqrt_().add_(self.eps)
                p.sub_((m / (1 - b1**self.t)).mul_(lr).div_(denom))

    def zero_grad(self):
        for p in self.params:
            p.grad = None


# ----------------------------------------------------------------------------- history
@dataclass
class History:
    """What a training run recorded.

    ``loss`` (steps, R): training loss of each run at every step (before that step's update).
    ``records[name]`` (n_records, R, ...): callback values at ``record_steps``.
    """

    loss: torch.Tensor
    record_steps: list[int]
    records: dict[str, torch.Tensor] = field(default_factory=dict)
    seconds: float = 0.0
    lr: torch.Tensor | None = None

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.records[name]

    @property
    def steps(self) -> int:
        return self.loss.shape[0]


def _progress_enabled(progress, work: int) -> bool:
    return progress_enabled(progress) and (progress is not None or work >= 200_000)


def _record_schedule(steps: int, record_every: int | None, record_at) -> list[int]:
    if record_at is not None:
        at = sorted({int(s) for s in record_at})
        if any(s < 0 or s > steps for s in at):
            raise chk.ConfigError(f"record_at must lie in [0, steps={steps}] (got {at})")
        return at
    every = max(1, steps // 50) if record_every is None else chk.positive_int("record_every", record_every)
    at = list(range(0, steps, every))
    if at[-1] != steps:
        at.append(steps)
    return at


# ----------------------------------------------------------------------------- trainer
def train(model: RunModule, data, *, steps: int, optimizer: str = "adam", lr=1e-3,
          loss: str | Callable = "mse", batch_size: int | None = None, seeds: Sequence[int] | None = None,
          lr_decay: float = 1.0, betas=(0.9, 0.999), eps: float = 1e-8, momentum: float = 0.0,
          weight_decay: float = 0.0, record: Callable | None = None,
          record_every: int | None = None, record_at: Sequence[int] | None = None,
          device=None, dtype: torch.dtype = torch.float32, progress: bool | None = None) -> History:
    """Train the R runs of ``model`` in place and return a :class:`History`.

    Parameters
    ----------
    model : a :class:`~icl_lab.models.RunModule` (every parameter has leading dimension R).
    data : a fixed :class:`PromptBatch` ((B, ...) shared by all runs or (R, B, ...)), or a sampler
        with ``sample_runs(batch, generators)`` drawing fresh prompts every step.
    steps : number of optimisation steps (for a fixed set with mini-batches, steps, not epochs).
    optimizer : ``'gd'`` (full batch), ``'sgd'`` (mini-batches, optional momentum) or ``'adam'``.
    lr : a positive number or a sequence of R numbers (per-run learning rates).
    loss : ``'mse'`` (1/2 squared error), ``'hinge'``, or ``fn(output, batch) -> (R,)``.
    batch_size : prompts per step (required with a sampler; for a fixed set, default full batch).
    seeds : per-run seeds of the data streams (fresh prompts, mini-batch shuffling); default
        ``model.seeds``.  Seeds are the only source of randomness.
    lr_decay : learning-rate factor per step (1 = constant).
    record : ``fn(model, step) -> {name: tensor (R, ...)}``, evaluated without gradients at
        ``record_steps`` (every ``record_every`` steps, default steps // 50, plus the last; or at
        ``record_at``); ``History[name]`` stacks each name's values over the records (moved to
        the CPU).
    device : default :func:`~icl_lab.config.default_device`; dtype : float32 unless float64 is
        needed for identity checks.
    progress : show a tqdm bar (default: only for long runs in an interactive terminal, never in CI).
    """
    # ---- validate everything before any computation
    if not isinstance(model, RunModule):
        raise chk.ConfigError(f"model must be an icl_lab RunModule (got {type(model).__name__})")
    R = model.runs
    steps = chk.positive_int("steps", steps)
    chk.one_of("optimizer", optimizer, OPTIMIZERS)
    lr_t = chk.positive_values("lr", lr)
    if lr_t.ndim == 0:
        lr_t = lr_t.expand(R).clone()
    elif lr_t.numel() != R:
        raise chk.ConfigError(f"lr must be a number or have one entry per run (R={R}); got {lr_t.numel()}")
    lr_decay = chk.positive("lr_decay", lr_decay)
    if lr_decay > 1:
        raise chk.ConfigError(f"lr_decay must be in (0, 1] (got {lr_decay})")
    loss_fn = LOSSES[chk.one_of("loss", loss, LOSSES)] if isinstance(loss, str) else loss
    fixed = isinstance(data, PromptBatch)
    if not fixed and not hasattr(data, "sample_runs"):
        raise chk.ConfigError("data must be a PromptBatch or a sampler with sample_runs(batch, generators)")
    if fixed:
        if data.has_runs and data.num_runs != R:
            raise chk.ConfigError(f"data has {data.num_runs} runs, model has R={R}")
        n_prompts = data.batch_size
        if batch_size is not None:
            batch_size = chk.positive_int("batch_size", batch_size)
            if batch_size > n_prompts:
                raise chk.ConfigError(f"batch_size={batch_size} exceeds the {n_prompts} prompts in data")
        if optimizer == "gd" and batch_size not in (None, n_prompts):
            raise chk.ConfigError("optimizer='gd' is full-batch; use 'sgd' or 'adam' with batch_size")
    else:
        if batch_size is None:
            raise chk.ConfigError("batch_size is required when data is a sampler (fresh prompts per step)")
        batch_size = chk.positive_int("batch_size", batch_size)
    seeds = list(model.seeds if seeds is None else seeds)
    if len(seeds) != R:
        raise chk.ConfigError(f"seeds must have one entry per run (R={R}); got {len(seeds)}")
    schedule = _record_schedule(steps, record_every, record_at)
    if record is not None and not callable(record):
        raise chk.ConfigError("record must be callable: fn(model, step) -> {name: tensor}")

    # ---- set up
    ensure_threads()
    dev = default_device(device)
    model.to(device=dev, dtype=dtype)
    gens = [make_generator(int(s)) for s in seeds]
    if fixed:
        data_dev = data.to(dev, dtype)
    opt = BatchedOptimizer([p for p in model.parameters() if p.requires_grad], optimizer, lr_t.to(dev),
                           betas=betas, eps=eps, momentum=momentum, lr_decay=lr_decay, weight_decay=weight_decay)
    losses = torch.empty(steps, R, dtype=torch.float64, device=dev)  # copied to the CPU once, at the end
    recs: dict[str, list] = {}
    perm = None
    pos = 0
    in_dtype = not fixed and "dtype" in inspect.signature(data.sample_runs).parameters

    def next_batch() -> PromptBatch:
        nonlocal perm, pos
        if not fixed:  # drawn in the training precision where the sampler can (the same values)
            drawn = data.sample_runs(batch_size, gens, dtype=dtype) if in_dtype else data.sample_runs(batch_size, gens)
            return drawn.to(dev, dtype)
        if batch_size is None or batch_size == n_prompts:
            return data_dev
        if perm is None or pos + batch_size > n_prompts:
            perm = torch.stack([torch.randperm(n_prompts, generator=g) for g in gens]).to(dev)
            pos = 0
        idx = perm[:, pos : pos + batch_size]
        pos += batch_size
        ridx = torch.arange(R, device=dev)[:, None]
        def take(t):
            return t[ridx, idx] if data_dev.has_runs else t[idx]
        return data_dev._map(take)

    def do_record(step):
        if record is None:
            return
        with torch.no_grad():
            values = record(model, step)
        if not isinstance(values, Mapping):
            raise chk.ConfigError(f"record must return a dict of named tensors (got {type(values).__name__})")
        if recs and set(values) != set(recs):
            raise chk.ConfigError(f"record returned {sorted(values)} at step {step}, {sorted(recs)} before")
        for k, v in values.items():
            recs.setdefault(k, []).append(v.detach().to("cpu") if isinstance(v, torch.Tensor) else torch.as_tensor(v))

    bar = None
    if _progress_enabled(progress, steps * R):
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, desc=f"train {R} runs", leave=False)
    t0 = time.perf_counter()
    rec_set = set(schedule)
    for step in range(steps):
        if step in rec_set:
            do_record(step)
        batch = next_batch()
        opt.zero_grad()
        per_run = loss_fn(model(batch), batch)
        if per_run.shape != (R,):
            raise chk.ConfigError(f"loss must return one value per run, shape ({R},); got {tuple(per_run.shape)}")
        per_run.sum().backward()
        opt.step()
        losses[step] = per_run.detach()
        if bar is not None:
            bar.update(1)
    if steps in rec_set:
        do_record(steps)
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - t0
    out = {k: torch.stack(v) for k, v in recs.items()}
    return History(loss=losses.to("cpu"), record_steps=schedule, records=out, seconds=seconds, lr=lr_t)


# ----------------------------------------------------------------------------- run grids
class RunGrid:
    """The runs of one batched training as the product of named axes (the last axis varies
    fastest), and the way back from run index to swept values::

        grid = RunGrid(L=[1.0, 1.5, 2.0], seed=range(3))    # R = 9 runs
        grid["L"]                 # per-run values: [1.0, 1.0, 1.0, 1.5, ...]
        grid.index(L=1.5)         # the runs with L = 1.5: [3, 4, 5]
        grid.reshape(loss)        # (R, ...) -> (3, 3, ...); dim= picks the run dimension
        grid.runs                 # [{'L': 1.0, 'seed': 0}, ...]

    Every paper's batched experiments map runs to (swept values, seed) with it.
    """

    def __init__(self, **axes):
        if not axes:
            raise chk.ConfigError("a RunGrid needs at least one axis")
        self.axes = {}
        for name, values in axes.items():
            values = list(values)
            if not values:
                raise chk.ConfigError(f"RunGrid axis {name} must have at least one value")
            self.axes[name] = values

    @property
    def names(self) -> list[str]:
        return list(self.axes)

    @property
    def shape(self) -> tuple:
        return tuple(len(v) for v in self.axes.values())

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        return self.size

    @property
    def runs(self) -> list[dict]:
        import itertools

        return [dict(zip(self.axes, combo)) for combo in itertools.product(*self.axes.values())]

    def __getitem__(self, name: str) -> list:
        if name not in self.axes:
            raise chk.ConfigError(f"{name} is not an axis of this RunGrid (axes: {self.names})")
        i = self.names.index(name)
        inner = math.prod(self.shape[i + 1:])
        values = self.axes[name]
        return [values[(r // inner) % len(values)] for r in range(self.size)]

    def positions(self, name: str) -> list[int]:
        """Per run, the position of its value on axis ``name`` (e.g. to index a table of L)."""
        i = self.names.index(name)
        inner = math.prod(self.shape[i + 1:])
        return [(r // inner) % self.shape[i] for r in range(self.size)]

    def index(self, **fixed) -> list[int]:
        """The run indices whose values equal ``fixed`` (axes not named are free)."""
        for k in fixed:
            if k not in self.axes:
                raise chk.ConfigError(f"{k} is not an axis of this RunGrid (axes: {self.names})")
        return [r for r, run in enumerate(self.runs) if all(run[k] == v for k, v in fixed.items())]

    def reshape(self, t: torch.Tensor, dim: int = 0) -> torch.Tensor:
        """Split the run dimension ``dim`` of ``t`` (size R) into the grid's shape."""
        dim = dim % t.ndim
        if t.shape[dim] != self.size:
            raise chk.ConfigError(f"dimension {dim} has size {t.shape[dim]}, the grid has {self.size} runs")
        return t.reshape(*t.shape[:dim], *self.shape, *t.shape[dim + 1:])

    def __repr__(self) -> str:
        return "RunGrid(" + ", ".join(f"{k}={v}" for k, v in self.axes.items()) + ")"
