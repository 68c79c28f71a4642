"""The prompt samplers as they were before the batched fast paths: the reference that the tests hold
the current samplers to, draw for draw and bit for bit (same seed -> same prompts)."""
from __future__ import annotations

from typing import Callable, Sequence

import torch

from icl_lab import params as chk
from icl_lab.data import _random as rnd
from icl_lab.data.inputs import _categorical
from icl_lab.data.prompts import PromptBatch, _split_runs
from icl_lab.data.tasks import PairTask, TaskFamily


class ReferencePromptSampler:
    """Regression prompts: inputs from a feature dictionary or a continuous law, labels from a task.

    Build with :meth:`from_features` (tokens are features v_k drawn with probabilities p; the
    convergence and nonlinear papers) or :meth:`from_inputs` (continuous inputs; the window paper
    and the nonlinear paper's polynomial tasks).  ``sigma`` adds N(0, sigma^2) noise to the
    demonstrations' labels only; the query target stays noiseless (window paper, eq. 3).
    """

    def __init__(self, task: TaskFamily, N: int, *, features: torch.Tensor | None = None, p=None,
                 query_p=None, inputs: Callable | None = None, num_queries: int = 1, sigma: float = 0.0):
        if not isinstance(task, TaskFamily):
            raise chk.ConfigError(f"task must be a TaskFamily (got {type(task).__name__})")
        self.task = task
        self.N = chk.positive_int("N", N)
        self.num_queries = chk.positive_int("num_queries", num_queries)
        self.sigma = chk.positive("sigma", sigma, allow_zero=True)
        if (features is None) == (inputs is None):
            raise chk.ConfigError("give exactly one of features (a (K, d) dictionary) or inputs (a sampler)")
        self.features = None
        self.inputs = inputs
        if features is not None:
            features = torch.as_tensor(features, dtype=torch.float64)
            if features.ndim != 2:
                raise chk.ConfigError(f"features must be a (K, d) matrix (got shape {tuple(features.shape)})")
            if features.shape[1] != task.d:
                raise chk.ConfigError(f"features must have d={task.d} columns to match the task (got {features.shape[1]})")
            K = features.shape[0]
            self.features = features
            self.p = chk.probabilities("p", torch.full((K,), 1.0 / K) if p is None else p, K)
            self.query_p = self.p if query_p is None else chk.probabilities("query_p", query_p, K)
        elif p is not None or query_p is not None:
            raise chk.ConfigError("p and query_p only apply with features")

    @classmethod
    def from_features(cls, features, task: TaskFamily, N: int, p=None, **kw) -> "ReferencePromptSampler":
        return cls(task, N, features=features, p=p, **kw)

    @classmethod
    def from_inputs(cls, inputs: Callable, task: TaskFamily, N: int, **kw) -> "ReferencePromptSampler":
        """``inputs(shape, generator)`` returns ``(*shape, d)`` inputs, e.g. ``lambda s, g: sphere(s, d, g)``."""
        return cls(task, N, inputs=inputs, **kw)

    @property
    def K(self) -> int | None:
        return None if self.features is None else self.features.shape[0]

    def sample(self, batch: int, generator: torch.Generator, dtype: torch.dtype = torch.float64) -> PromptBatch:
        """``batch`` independent prompts (each with its own task) from ``generator``."""
        B = chk.positive_int("batch", batch)
        return self._draw(B, chk.generator("generator", generator)).to(dtype=dtype)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype: torch.dtype = torch.float64) -> PromptBatch:
        """One batch per run, each from its own generator, stacked: (R, B, ...).  Run r's prompts
        equal ``sample(batch, generators[r])``; the work is done once for all runs."""
        B = chk.positive_int("batch", batch)
        streams = rnd.Streams(generators)
        return _split_runs(self._draw(B, streams), streams.runs).to(dtype=dtype)

    def _draw(self, B: int, source) -> PromptBatch:
        """Prompts for every run of ``source`` flattened to (runs * B, ...)."""
        m = self.num_queries
        ids = qids = None
        if self.features is not None:
            ids = _categorical(self.p, (B, self.N), source)
            qids = _categorical(self.query_p, (B, m), source)
            allx = self.features[torch.cat([ids, qids], dim=1)]
        else:
            allx = self.inputs((B, self.N + m), source)
            expect = (rnd.runs(source) * B, self.N + m, self.task.d)
            if tuple(allx.shape) != expect:
                raise chk.ConfigError(f"inputs returned shape {tuple(allx.shape)}, expected {expect}")
            allx = allx.to(torch.float64)
        x, xq = allx[:, : self.N], allx[:, self.N :]
        params = self.task.sample(B, source)
        ally = self.task.evaluate(params, allx)  # one call for demonstrations and queries
        y, yq = ally[:, : self.N], ally[:, self.N :]
        if self.sigma > 0:
            y = y + self.sigma * rnd.randn(source, (B, self.N))
        return PromptBatch(x=x, y=y, x_query=xq, y_query=yq, ids=ids, query_ids=qids, K=self.K)


class ReferencePairSampler:
    """The selectors paper's prompts (spec selectors §3, recommendations A10-A13).

    Each prompt draws a task (a, b) uniformly from ``tasks``; a demonstration carries relevant
    pattern mu_a or mu_b with probability alpha/2 each and any other relevant pattern uniformly with
    probability 1 - alpha (its label is then a fair coin); the query carries mu_a or mu_b with
    probability 1/2.  Inputs are x = lambda mu_j + kappa nu_k + noise with lambda ~ U[lambda_min,
    lambda_max], kappa ~ U[-kappa_max, kappa_max], nu_k uniform over the irrelevant patterns, and
    noise of uniform direction and radius tau * U[0, 1] (``noise_in_span=True`` keeps it inside
    span{mu} with norm exactly tau).  Labels are +-1 with embedding +-q.

    ``dtype`` is the precision in which the inputs are built (float64 by default; float32 is about
    twice as cheap, and the isotropic noise directions are then drawn as float32 normals, the other
    draws being the same in either precision).
    """

    def __init__(self, mu: torch.Tensor, nu: torch.Tensor, tasks: Sequence[PairTask], l: int, alpha: float,
                 q: torch.Tensor, tau: float = 0.0, lambda_range=(0.6, 1.0), kappa_max: float = 0.5,
                 noise_in_span: bool = False, dtype: torch.dtype = torch.float64):
        if dtype not in (torch.float32, torch.float64):
            raise chk.ConfigError(f"dtype must be torch.float32 or torch.float64 (got {dtype})")
        self.dtype = dtype
        self.mu = torch.as_tensor(mu, dtype=torch.float64)
        self.nu = torch.as_tensor(nu, dtype=torch.float64)
        if self.mu.ndim != 2 or self.nu.ndim != 2 or self.mu.shape[1] != self.nu.shape[1]:
            raise chk.ConfigError("mu and nu must be (M1, d_x) and (M2, d_x) matrices with the same d_x")
        M1 = self.mu.shape[0]
        if M1 < 2:
            raise chk.ConfigError(f"mu must hold at least 2 relevant patterns (got {M1})")
        self.tasks = list(tasks)
        if not self.tasks:
            raise chk.ConfigError("tasks must be non-empty")
        for t in self.tasks:
            if not (0 <= t.a < M1 and 0 <= t.b < M1 and t.a != t.b):
                raise chk.ConfigError(f"tasks must be pairs of distinct pattern indices in [0, {M1}) (got {t})")
        self.l = chk.positive_int("l", l)
        self.alpha = chk.probability("alpha", alpha, open_interval=False)
        if self.alpha == 0:
            raise chk.ConfigError("alpha must be in (0, 1]")
        if self.alpha < 1 and M1 < 3:
            raise chk.ConfigError("alpha < 1 needs at least 3 relevant patterns (other patterns carry mass 1 - alpha)")
        self.q = torch.as_tensor(q, dtype=torch.float64)
        self.tau = chk.positive("tau", tau, allow_zero=True)
        lo, hi = lambda_range
        if not (0 < lo <= hi):
            raise chk.ConfigError(f"lambda_range must satisfy 0 < low <= high (got {lambda_range})")
        self.lambda_range = (float(lo), float(hi))
        self.kappa_max = chk.positive("kappa_max", kappa_max, allow_zero=True)
        self.noise_in_span = bool(noise_in_span)

    @property
    def M1(self) -> int:
        return self.mu.shape[0]

    def _inputs(self, pat: torch.Tensor, g) -> torch.Tensor:
        shape = (pat.shape[0] // rnd.runs(g), *pat.shape[1:])  # per-run shape
        lo, hi = self.lambda_range
        lam = lo + (hi - lo) * rnd.rand(g, shape)
        kap = self.kappa_max * (2 * rnd.rand(g, shape) - 1)
        irr = rnd.randint(g, 0, self.nu.shape[0], shape)
        if getattr(self, "_cast", None) is None:  # the patterns in the working precision, cast once
            self._cast = (self.mu.to(self.dtype), self.nu.to(self.dtype))
        mu, nu = self._cast
        x = mu[pat] * lam.to(self.dtype)[..., None]
        x.addcmul_(nu[irr], kap.to(self.dtype)[..., None])
        if self.tau > 0:
            if self.noise_in_span:
                z = rnd.randn(g, (*shape, self.M1)).to(self.dtype) @ mu
                x.addcmul_(z, self.tau / z.norm(dim=-1, keepdim=True))
            else:
                dt = self.dtype
                z = rnd._draw(g, lambda gen: torch.randn((*shape, self.mu.shape[1]), generator=gen, dtype=dt))
                r = self.tau * rnd.rand(g, (*shape, 1))
                x.addcmul_(z, r.to(dt) / z.norm(dim=-1, keepdim=True))
        return x

    def sample(self, batch: int, generator: torch.Generator, dtype: torch.dtype = torch.float64) -> PromptBatch:
        B = chk.positive_int("batch", batch)
        return self._draw(B, chk.generator("generator", generator)).to(dtype=dtype)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype=torch.float64) -> PromptBatch:
        """One batch per run from its own generator, (R, B, ...); run r equals ``sample(batch, generators[r])``."""
        B = chk.positive_int("batch", batch)
        streams = rnd.Streams(generators)
        return _split_runs(self._draw(B, streams), streams.runs).to(dtype=dtype)

    def _draw(self, B: int, g) -> PromptBatch:
        M1, l = self.M1, self.l
        task_idx = rnd.randint(g, 0, len(self.tasks), (B,))
        a = torch.tensor([t.a for t in self.tasks])[task_idx]
        b = torch.tensor([t.b for t in self.tasks])[task_idx]
        n = a.shape[0]  # runs * B
        # demonstration patterns: a or b w.p. alpha/2 each, another pattern uniformly w.p. 1 - alpha
        u = rnd.rand(g, (B, l))
        other = rnd.randint(g, 0, M1 - 2, (B, l)) if M1 > 2 else torch.zeros(n, l, dtype=torch.long)
        lo_ab, hi_ab = torch.minimum(a, b)[:, None], torch.maximum(a, b)[:, None]
        other = other + (other >= lo_ab).long()
        other = other + (other >= hi_ab).long()  # skip a and b: uniform over the remaining M1 - 2
        pat = torch.where(u < self.alpha / 2, a[:, None], torch.where(u < self.alpha, b[:, None], other))
        coin = rnd.randint(g, 0, 2, (B, l)) * 2 - 1
        y = torch.where(pat == a[:, None], 1, torch.where(pat == b[:, None], -1, coin)).to(torch.float64)
        qpos = rnd.randint(g, 0, 2, (B, 1))
        qpat = torch.where(qpos == 0, a[:, None], b[:, None])
        yq = (1 - 2 * qpos).to(torch.float64)
        x = self._inputs(pat, g)
        xq = self._inputs(qpat, g)
        return PromptBatch(x=x, y=y, x_query=xq, y_query=yq, ids=pat, query_ids=qpat, K=M1,
                           label_embedding=self.q, task_ids=task_idx)
