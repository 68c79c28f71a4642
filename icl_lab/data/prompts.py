"""One prompt type for all four papers, and the samplers that build it.

A prompt holds N labelled demonstrations (x_i, y_i) and m >= 1 queries (the window paper trains on
several queries per context; the others use m = 1).  The *standard embedding* of the papers stacks
each input over its label, with the query's label slot zero::

    E = [ x_1 ... x_N  x_q ]
        [ y_1 ... y_N   0  ]        (tokens are columns in the papers; rows here)

:meth:`PromptBatch.embedding` returns it; the attention models read ``x``/``y`` directly, which is
equivalent under the papers' reparametrisations.  Shapes (``R`` runs, optional; ``B`` prompts)::

    x        (R, B, N, d)    y        (R, B, N)      context inputs and (noisy) labels
    x_query  (R, B, m, d)    y_query  (R, B, m)      queries and their noiseless targets
    ids      (R, B, N)       query_ids (R, B, m)     feature / pattern index of each token (or None)

A batch without the leading run dimension is shared by all runs of a model.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable, Sequence

import torch

from .. import params as chk
from . import _random as rnd
from .tasks import PairTask, TaskFamily


@dataclass
class PromptBatch:
    x: torch.Tensor
    y: torch.Tensor
    x_query: torch.Tensor
    y_query: torch.Tensor
    ids: torch.Tensor | None = None
    query_ids: torch.Tensor | None = None
    K: int | None = None
    label_embedding: torch.Tensor | None = None  # (d_y,): token label part = y * q (selectors paper)
    task_ids: torch.Tensor | None = None  # (R?, B): which task of a finite task set (selectors paper)

    # ----------------------------------------------------------------- shape helpers
    @property
    def has_runs(self) -> bool:
        return self.x.ndim == 4

    @property
    def num_runs(self) -> int | None:
        return self.x.shape[0] if self.has_runs else None

    @property
    def batch_size(self) -> int:
        return self.x.shape[-3]

    @property
    def N(self) -> int:
        return self.x.shape[-2]

    @property
    def d(self) -> int:
        return self.x.shape[-1]

    @property
    def num_queries(self) -> int:
        return self.x_query.shape[-2]

    def _map(self, fn: Callable[[torch.Tensor], torch.Tensor], include_embedding: bool = False) -> "PromptBatch":
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor) and (f.name != "label_embedding" or include_embedding):
                v = fn(v)
            out[f.name] = v
        return PromptBatch(**out)

    def to(self, device=None, dtype: torch.dtype | None = None) -> "PromptBatch":
        """Move to a device; cast floating tensors to ``dtype`` (index tensors stay long)."""

        def mv(t):
            if dtype is not None and t.is_floating_point():
                return t.to(device=device, dtype=dtype)
            return t.to(device=device)

        return self._map(mv, include_embedding=True)

    def run(self, r: int) -> "PromptBatch":
        """The batch of run ``r`` (without run dimension)."""
        if not self.has_runs:
            return self
        return self._map(lambda t: t[r])

    def slice(self, start: int, stop: int) -> "PromptBatch":
        """Prompts ``start:stop`` along the batch dimension."""
        if self.has_runs:
            return self._map(lambda t: t[:, start:stop])
        return self._map(lambda t: t[start:stop])

    @staticmethod
    def stack(batches: Sequence["PromptBatch"]) -> "PromptBatch":
        """Stack per-run batches along a new leading run dimension."""
        if not batches:
            raise chk.ConfigError("batches must be a non-empty sequence")
        first = batches[0]
        out = {}
        for f in fields(first):
            v = getattr(first, f.name)
            if isinstance(v, torch.Tensor) and f.name != "label_embedding":
                v = torch.stack([getattr(b, f.name) for b in batches])
            out[f.name] = v
        return PromptBatch(**out)

    # ----------------------------------------------------------------- analysis helpers
    @property
    def counts(self) -> torch.Tensor:
        """(…, B, K) number of demonstrations carrying each feature, |V_k|."""
        if self.ids is None or self.K is None:
            raise chk.ConfigError("counts need feature ids: build the batch from a feature dictionary")
        return torch.nn.functional.one_hot(self.ids, self.K).sum(-2)

    def embedding(self) -> torch.Tensor:
        """(…, B, N + m, d + d_y) tokens: inputs over labels, the queries' label slots zero."""
        q = self.label_embedding
        if q is None:
            lab_ctx, lab_q = self.y.unsqueeze(-1), torch.zeros_like(self.y_query).unsqueeze(-1)
        else:
            q = q.to(self.y.dtype)
            lab_ctx = self.y.unsqueeze(-1) * q
            lab_q = torch.zeros(*self.y_query.shape, q.numel(), dtype=self.y.dtype, device=self.y.device)
        ctx = torch.cat([self.x, lab_ctx], dim=-1)
        qry = torch.cat([self.x_query, lab_q], dim=-1)
        return torch.cat([ctx, qry], dim=-2)


# ===================================================================== regression prompts
class PromptSampler:
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
    def from_features(cls, features, task: TaskFamily, N: int, p=None, **kw) -> "PromptSampler":
        return cls(task, N, features=features, p=p, **kw)

    @classmethod
    def from_inputs(cls, inputs: Callable, task: TaskFamily, N: int, **kw) -> "PromptSampler":
        """``inputs(shape, generator)`` returns ``(*shape, d)`` inputs, e.g. ``lambda s, g: sphere(s, d, g)``."""
        return cls(task, N, inputs=inputs, **kw)

    @property
    def K(self) -> int | None:
        return None if self.features is None else self.features.shape[0]

    def sample(self, batch: int, generator: torch.Generator, dtype: torch.dtype = torch.float64) -> PromptBatch:
        """``batch`` independent prompts (each with its own task) from ``generator``."""
        B = chk.positive_int("batch", batch)
        return self._draw(B, chk.generator("generator", generator), dtype).to(dtype=dtype)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype: torch.dtype = torch.float64) -> PromptBatch:
        """One batch per run, each from its own generator, stacked: (R, B, ...).  Run r's prompts
        equal ``sample(batch, generators[r])``; the work is done once for all runs."""
        B = chk.positive_int("batch", batch)
        streams = rnd.Streams(generators)
        return _split_runs(self._draw(B, streams, dtype), streams.runs).to(dtype=dtype)

    def _tables(self, dtype: torch.dtype):
        """The features in ``dtype`` and the inverse-CDF tables of p and query_p, built once."""
        cache = self.__dict__.setdefault("_cache", {})
        if dtype not in cache:
            cdfs = []
            for p in (self.p, self.query_p):
                cdf = torch.cumsum(p, 0)
                cdf[-1] = 1.0 + 1e-12
                cdfs.append(cdf)
            cache[dtype] = (self.features.to(dtype), *cdfs)
        return cache[dtype]

    def _draw(self, B: int, source, dtype: torch.dtype = torch.float64) -> PromptBatch:
        """Prompts for every run of ``source`` flattened to (runs * B, ...); inputs drawn from the
        feature dictionary come in ``dtype`` (the other fields in float64)."""
        m = self.num_queries
        ids = qids = None
        if self.features is not None:
            # the demonstrations' and the queries' uniforms are one draw per run (the same values as
            # two: a generator gives n1 + n2 values in one call as in two), looked up in the CDFs
            gens = rnd.generators_of(source)
            n, nd = len(gens) * B, B * self.N
            u = rnd.draw_sequence(gens, [[("u", "rand", nd + B * m, torch.float64)]] * len(gens))["u"]
            feats, cdf, qcdf = self._tables(dtype)
            K = feats.shape[0]
            if qcdf is cdf or torch.equal(qcdf, cdf):
                allids = _lookup(cdf, u).reshape(len(gens), -1)
                ids, qids = allids[:, :nd].reshape(n, self.N), allids[:, nd:].reshape(n, m)
            else:
                ids = _lookup(cdf, u[:, :nd]).reshape(n, self.N)
                qids = _lookup(qcdf, u[:, nd:]).reshape(n, m)
            allids = torch.cat([ids, qids], dim=1)
            allx = feats.index_select(0, allids.reshape(-1)).reshape(n, self.N + m, self.task.d)
            params = self.task.sample(B, source)
            if getattr(self.task, "tokenwise", False):
                # a label depends on its own input only: evaluate the K features once per prompt
                table = self.task.evaluate(params, self.features.expand(n, K, self.task.d))
                ally = table.gather(1, allids)
            else:
                ally = self.task.evaluate(params, self.features[allids])
        else:
            allx = self.inputs((B, self.N + m), source)
            expect = (rnd.runs(source) * B, self.N + m, self.task.d)
            if tuple(allx.shape) != expect:
                raise chk.ConfigError(f"inputs returned shape {tuple(allx.shape)}, expected {expect}")
            allx = allx.to(torch.float64)
            params = self.task.sample(B, source)
            ally = self.task.evaluate(params, allx)  # one call for demonstrations and queries
        x, xq = allx[:, : self.N], allx[:, self.N :]
        y, yq = ally[:, : self.N], ally[:, self.N :]
        if self.sigma > 0:
            y = y + self.sigma * rnd.randn(source, (B, self.N))
        return PromptBatch(x=x, y=y, x_query=xq, y_query=yq, ids=ids, query_ids=qids, K=self.K)


def _lookup(cdf: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF indices of uniforms ``u`` in [0, 1): ``searchsorted(cdf, u, right=True)`` clamped to
    K - 1 (:func:`~icl_lab.data.inputs.categorical`); for a few features as a count of the CDF entries
    <= u, the same integers (the CDF is non-decreasing) for a fraction of the cost.  A last entry above
    1 is never <= u, and the count then never needs the clamp."""
    K = cdf.numel()
    if K > 16:
        return torch.searchsorted(cdf, u.reshape(-1), right=True).clamp_max(K - 1).reshape(u.shape)
    bounds = cdf.tolist()
    if K == 1:
        return torch.zeros(u.shape, dtype=torch.long)
    above = bounds[-1] > 1.0
    count = (u >= bounds[0]).to(torch.uint8)
    for c in bounds[1 : K - 1 if above else K]:
        count += u >= c
    return count.long() if above else count.long().clamp_max(K - 1)


def _split_runs(batch: PromptBatch, R: int) -> PromptBatch:
    """(R * B, ...) -> (R, B, ...)."""
    return batch._map(lambda t: t.reshape(R, t.shape[0] // R, *t.shape[1:]))


# ===================================================================== classification prompts
class PairClassificationSampler:
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

    def _plan(self, B: int, rows: int, prefix: str) -> list[tuple]:
        """The draws of the inputs of ``rows`` tokens per prompt, in the order they are taken."""
        n = B * rows
        plan = [(prefix + "lamkap", "rand", 2 * n, torch.float64),  # lambda, then kappa
                (prefix + "irr", "randint", n, (0, self.nu.shape[0]))]
        if self.tau > 0:
            if self.noise_in_span:
                plan.append((prefix + "z", "randn", n * self.M1, torch.float64))
            else:
                plan += [(prefix + "z", "randn", n * self.mu.shape[1], self.dtype), (prefix + "r", "rand", n, torch.float64)]
        return plan

    def draw_plan(self, B: int) -> list[tuple]:
        """One run's draws for ``B`` prompts (:func:`~icl_lab.data._random.draw_sequence`): task, the
        demonstrations' pattern choice, the other pattern, coins and query positions, then the inputs
        of the demonstrations and of the query.  Adjacent draws of one kind are one call (a generator
        gives the same values to one call of n1 + n2 as to two calls of n1 and n2)."""
        M1, l = self.M1, self.l
        plan = [("task", "randint", B, (0, len(self.tasks))), ("u", "rand", B * l, torch.float64)]
        if M1 > 2:
            plan.append(("other", "randint", B * l, (0, M1 - 2)))
        plan.append(("coinq", "randint", B * l + B, (0, 2)))  # the coins, then the query positions
        return plan + self._plan(B, l, "x_") + self._plan(B, 1, "q_")

    def batch_key(self) -> tuple:
        """Samplers with equal keys draw their runs together (:meth:`draw_runs`): same patterns,
        label embedding, prompt length, noise law and precision; the task set, alpha, the ranges of
        lambda and kappa and tau may differ."""
        if getattr(self, "_key", None) is None:
            self._key = (type(self), self.l, self.noise_in_span, self.dtype, tuple(self.mu.shape), tuple(self.nu.shape),
                         tuple(self.q.shape), self.mu.numpy().tobytes(), self.nu.numpy().tobytes(),
                         self.q.numpy().tobytes())
        return self._key

    def _axes(self):
        """Where every pattern is a multiple of a coordinate axis, each its own: ((column, value) of
        mu's rows, (column, value) of nu's rows) in the working precision; None otherwise."""
        if getattr(self, "_axes_cache", None) is None:
            mu, nu = self._tables()
            both = torch.cat([mu, nu])
            nonzero = both != 0
            cols = nonzero.to(torch.int64).argmax(1)
            ok = bool((nonzero.sum(1) == 1).all()) and cols.unique().numel() == both.shape[0]
            vals = both.gather(1, cols[:, None])[:, 0]
            M1 = mu.shape[0]
            self._axes_cache = (((cols[:M1], vals[:M1]), (cols[M1:], vals[M1:])),) if ok else (None,)
        return self._axes_cache[0]

    def _tables(self):
        """The patterns in the working precision and the tasks' (a, b) index tables, built once."""
        if getattr(self, "_cast", None) is None:
            self._cast = (self.mu.to(self.dtype), self.nu.to(self.dtype))
            self._ab = torch.tensor([[t.a for t in self.tasks], [t.b for t in self.tasks]])
        return self._cast

    def sample(self, batch: int, generator: torch.Generator, dtype: torch.dtype = torch.float64) -> PromptBatch:
        B = chk.positive_int("batch", batch)
        return self._draw(B, chk.generator("generator", generator)).to(dtype=dtype)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype=torch.float64) -> PromptBatch:
        """One batch per run from its own generator, (R, B, ...); run r equals ``sample(batch, generators[r])``."""
        B = chk.positive_int("batch", batch)
        streams = rnd.Streams(generators)
        return _split_runs(self._draw(B, streams), streams.runs).to(dtype=dtype)

    def _draw(self, B: int, g) -> PromptBatch:
        gens = rnd.generators_of(g)
        return self.draw_runs([self] * len(gens), B, gens)

    @staticmethod
    def draw_runs(samplers: Sequence["PairClassificationSampler"], B: int, generators) -> PromptBatch:
        """Run r's ``B`` prompts from ``samplers[r]`` with ``generators[r]``, flattened to (R * B, ...):
        the very prompts ``samplers[r].sample(B, generators[r])`` gives, with one Python loop over the
        runs for the random draws and every other operation done once for all runs.  The samplers must
        share a :meth:`batch_key`."""
        s0 = samplers[0]
        if any(s.batch_key() != s0.batch_key() for s in samplers[1:]):
            raise chk.ConfigError("samplers drawn together must share patterns, l, noise law and dtype")
        R, M1, l, dt = len(samplers), s0.M1, s0.l, s0.dtype
        n = R * B
        mu, nu = s0._tables()
        d = rnd.draw_sequence(generators, [s.draw_plan(B) for s in samplers])
        task_idx = d["task"].reshape(n)
        if all(s is s0 for s in samplers):
            a, b = s0._ab[:, task_idx]
        else:  # each run indexes its own task list
            for s in samplers:
                s._tables()
            tabs = [s._ab for s in samplers]
            width = max(t.shape[1] for t in tabs)
            ab = torch.zeros(R, 2, width, dtype=torch.long)
            for r, t in enumerate(tabs):
                ab[r, :, : t.shape[1]] = t
            a, b = ab[torch.arange(R).repeat_interleave(B), :, task_idx].T
        u = d["u"].reshape(n, l)
        other = d["other"].reshape(n, l) if M1 > 2 else torch.zeros(n, l, dtype=torch.long)
        lo_ab, hi_ab = torch.minimum(a, b)[:, None], torch.maximum(a, b)[:, None]
        other = other + (other >= lo_ab).long()
        other = other + (other >= hi_ab).long()  # skip a and b: uniform over the remaining M1 - 2
        half, alpha = _per_run([s.alpha / 2 for s in samplers], B), _per_run([s.alpha for s in samplers], B)
        pat = torch.where(u < half, a[:, None], torch.where(u < alpha, b[:, None], other))
        coinq = d["coinq"]
        coin = coinq[:, : B * l].reshape(n, l) * 2 - 1
        y = torch.where(pat == a[:, None], 1, torch.where(pat == b[:, None], -1, coin)).to(torch.float64)
        qpos = coinq[:, B * l :].reshape(n, 1)
        qpat = torch.where(qpos == 0, a[:, None], b[:, None])
        yq = (1 - 2 * qpos).to(torch.float64)
        x = _pair_inputs(samplers, B, pat, d, "x_", mu, nu, dt)
        xq = _pair_inputs(samplers, B, qpat, d, "q_", mu, nu, dt)
        return PromptBatch(x=x, y=y, x_query=xq, y_query=yq, ids=pat, query_ids=qpat, K=M1,
                           label_embedding=s0.q, task_ids=task_idx)


def _per_run(values: list, B: int, dtype=torch.float64):
    """A per-run constant for (R * B, ...) rows: the Python number itself when every run shares it
    (the arithmetic is then exactly the single-run one), else a (R * B, 1) tensor."""
    if all(v == values[0] for v in values):
        return values[0]
    return torch.tensor(values, dtype=dtype).repeat_interleave(B)[:, None]


def _pair_inputs(samplers, B: int, pat: torch.Tensor, d: dict, prefix: str, mu, nu, dt) -> torch.Tensor:
    """x = lambda mu_pat + kappa nu_irr + noise for (R * B, rows) patterns ``pat``, the draws in ``d``."""
    n, rows = pat.shape
    R = len(samplers)
    lamkap = d[prefix + "lamkap"]
    lo = _per_run([s.lambda_range[0] for s in samplers], B)
    width = _per_run([s.lambda_range[1] - s.lambda_range[0] for s in samplers], B)
    lam = lo + width * lamkap[:, : B * rows].reshape(n, rows)
    kap = _per_run([s.kappa_max for s in samplers], B) * (2 * lamkap[:, B * rows :].reshape(n, rows) - 1)
    irr = d[prefix + "irr"].reshape(n, rows)
    dx = mu.shape[1]
    axes = samplers[0]._axes()
    if axes is None:
        x = mu.index_select(0, pat.reshape(-1)).reshape(n, rows, dx)
        x.mul_(lam.to(dt)[..., None])
        x.addcmul_(nu.index_select(0, irr.reshape(-1)).reshape(n, rows, dx), kap.to(dt)[..., None])
    else:
        # patterns on distinct coordinate axes (scaled basis vectors): lambda mu_j + kappa nu_k has two
        # non-zero coordinates, lambda c_j and kappa c_k, and the zeros of 0 * lambda + 0 * kappa are +0:
        # adding the two products to zeros gives the very floats of the dense sum, without it
        (mu_col, mu_val), (nu_col, nu_val) = axes
        x = torch.zeros(n, rows, dx, dtype=dt)
        x.scatter_add_(2, mu_col[pat][..., None], (mu_val[pat] * lam.to(dt))[..., None])
        x.scatter_add_(2, nu_col[irr][..., None], (nu_val[irr] * kap.to(dt))[..., None])
    noisy = [r for r, s in enumerate(samplers) if s.tau > 0]
    if not noisy:
        return x
    sub = [samplers[r] for r in noisy]
    Rn = len(noisy)
    xs = x if Rn == R else x.view(R, B, rows, dx)[torch.tensor(noisy)].reshape(Rn * B, rows, dx)
    if samplers[0].noise_in_span:
        z = d[prefix + "z"].reshape(Rn * B, rows, mu.shape[0]).to(dt) @ mu
        taus = [s.tau for s in sub]
        if all(t == taus[0] for t in taus):
            scale = taus[0] / z.norm(dim=-1, keepdim=True)
        else:  # tau / t is computed by torch as reciprocal(t) * tau, in the working precision
            scale = z.norm(dim=-1, keepdim=True).reciprocal() * _per_run(taus, B, dt)[..., None]
        xs.addcmul_(z, scale)
    else:
        z = d[prefix + "z"].reshape(Rn * B, rows, dx)
        r = _per_run([s.tau for s in sub], B)
        r = (r[..., None] if isinstance(r, torch.Tensor) else r) * d[prefix + "r"].reshape(Rn * B, rows, 1)
        xs.addcmul_(z, r.to(dt) / z.norm(dim=-1, keepdim=True))
    if Rn < R:
        x.view(R, B, rows, dx)[torch.tensor(noisy)] = xs.view(Rn, B, rows, dx)
    return x


class StackedSampler:
    """One sampler per run, so runs of one batched training can differ in their data law
    (e.g. 30 seeds x 6 Lipschitz constants trained as 180 runs at once).

    ``sample_runs(batch, generators)`` draws run r's prompts from ``samplers[r]`` with
    ``generators[r]``: run r sees exactly the data it would see trained alone on its sampler.
    All samplers must produce prompts of the same shape (N, d, number of queries)."""

    def __init__(self, samplers: Sequence):
        self.samplers = list(samplers)
        if not self.samplers:
            raise chk.ConfigError("samplers must be non-empty")
        for i, s in enumerate(self.samplers):
            if not hasattr(s, "sample"):
                raise chk.ConfigError(f"samplers[{i}] has no sample(batch, generator) method")
        shapes = {(getattr(s, "N", None), getattr(getattr(s, "task", None), "d", None), getattr(s, "num_queries", None))
                  for s in self.samplers}
        if len(shapes) > 1:
            raise chk.ConfigError(f"samplers must share N, d and num_queries (got {sorted(shapes, key=str)})")

    def __len__(self) -> int:
        return len(self.samplers)

    def sample_runs(self, batch: int, generators: Sequence[torch.Generator], dtype=torch.float64) -> PromptBatch:
        if len(generators) != len(self.samplers):
            raise chk.ConfigError(f"generators must have one entry per sampler ({len(self.samplers)}); got {len(generators)}")
        # Runs whose samplers can be drawn together are (only the random draws loop over their
        # generators): runs sharing a sampler object, with its sample_runs (160 runs over 16 laws cost
        # 16 draws, not 160), and runs of samplers with equal ``batch_key()``, with ``draw_runs``
        # (the selectors paper's groups: one draw for all). Each run still gets exactly
        # sample(batch, generators[r]) from its own sampler.
        B = chk.positive_int("batch", batch)
        groups: dict = {}
        for r, smp in enumerate(self.samplers):
            key = smp.batch_key() if hasattr(smp, "batch_key") and hasattr(smp, "draw_runs") else id(smp)
            groups.setdefault(key, []).append(r)
        parts, order = [], []
        for key, runs in groups.items():
            smp = self.samplers[runs[0]]
            gens = [generators[r] for r in runs]
            if not isinstance(key, int):
                drawn = _split_runs(smp.draw_runs([self.samplers[r] for r in runs], B, gens), len(runs)).to(dtype=dtype)
            elif len(runs) > 1 and hasattr(smp, "sample_runs"):
                drawn = smp.sample_runs(B, gens, dtype)
            else:
                drawn = PromptBatch.stack([smp.sample(B, generators[r], dtype) for r in runs])
            parts.append(drawn)
            order += runs
        if len(parts) == 1 and order == sorted(order):
            return parts[0]
        out = _cat_runs(parts)
        if order == sorted(order):
            return out
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        return out._map(lambda t: t[inverse])


def _cat_runs(parts: Sequence[PromptBatch]) -> PromptBatch:
    """Concatenate batches with a run dimension along it (the label embedding is the first's)."""
    first = parts[0]
    out = {}
    for f in fields(first):
        v = getattr(first, f.name)
        if isinstance(v, torch.Tensor) and f.name != "label_embedding":
            v = torch.cat([getattr(p, f.name) for p in parts])
        out[f.name] = v
    return PromptBatch(**out)
