"""The tasks and prompt sets of the nonlinear chapter (Li, Duan, Liang, Sec. 6 and App. A).

* features: K points at pairwise distance Delta (the paper's Sec. 6 setting: v_k = Delta/sqrt2 e_k),
  with random-orthonormal and non-orthogonal variants;
* the cosine tasks f(x) = (L/c) cos(c w^T x + phi) over those features (Sec. 6), the quadratic tasks
  of App. A, and a random ReLU network (one of the paper's named Lipschitz examples, Sec. 3);
* :class:`ScaledPromptSet`: one fixed training set per seed, served to many runs that differ only in
  the label scale L (the family is f = L g with g independent of L).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ... import params as chk
from ...config import make_generator
from ...data import (CosineFeatureTask, PromptBatch, PromptSampler, QuadraticTask, TaskFamily, gaussian, separated,
                    standard_basis)
from ...data import _random as rnd
from ...data.inputs import sphere

FEATURE_KINDS = ("orth", "random", "gaussian", "unit")
FLAT = (0.1, 0.2, 0.4)
SHARP = (1.0, 1.5, 2.0)


# ============================================================================ data helpers
@dataclass
class FeaturePrompts:
    """Prompts as the Q-only model sees them: (B, K) counts |V_m|, (B, K) values f_b(v_m) (0 where a
    feature is absent: it gets no attention), (B,) query feature ids and (B,) targets f_b(v_{k_b})."""

    counts: torch.Tensor
    values: torch.Tensor
    query: torch.Tensor
    target: torch.Tensor

    @property
    def K(self) -> int:
        return self.counts.shape[-1]

    @property
    def B(self) -> int:
        return self.counts.shape[0]

    @classmethod
    def from_batch(cls, batch: PromptBatch) -> "FeaturePrompts":
        """Reduce a feature-token :class:`PromptBatch` (no run dimension, one query, noiseless labels)."""
        if batch.has_runs or batch.num_queries != 1 or batch.ids is None or batch.K is None:
            raise chk.ConfigError("batch must be feature prompts without run dimension and with one query")
        K = batch.K
        onehot = torch.nn.functional.one_hot(batch.ids, K).to(torch.float64)  # (B, N, K)
        counts = onehot.sum(1)
        sums = torch.einsum("bnk,bn->bk", onehot, batch.y.to(torch.float64))
        values = torch.where(counts > 0, sums / counts.clamp_min(1), torch.zeros_like(sums))
        return cls(counts=counts, values=values, query=batch.query_ids[:, 0].clone(), target=batch.y_query[:, 0].to(torch.float64))

    def scaled(self, scale: float) -> "FeaturePrompts":
        return FeaturePrompts(self.counts, scale * self.values, self.query, scale * self.target)


def make_features(kind: str, K: int, d: int, delta: float, seed: int = 1234) -> torch.Tensor:
    """(K, d) features: ``orth`` v_k = Delta/sqrt2 e_k; ``random`` random orthonormal
    directions of the same norm; ``gaussian`` Gaussian directions of that norm (not orthogonal);
    ``unit`` v_k = e_k (the regime where App. C's formulas are exact; Delta = sqrt 2)."""
    chk.one_of("features", kind, FEATURE_KINDS)
    if kind == "unit":
        return standard_basis(K, d)
    gen = None if kind == "orth" else make_generator(seed)
    return separated(K, d, delta, kind=kind, generator=gen)


def cosine_sampler(V: torch.Tensor, N: int, c: float, L: float = 1.0) -> PromptSampler:
    return PromptSampler.from_features(V, CosineFeatureTask(V.shape[1], L, c), N=N)


class RandomReLUNetTask(TaskFamily):
    """A small random network f(x) = sum_j a_j relu(w_j^T x + b_j), ||w_j|| = 1, a_j = +-L/width,
    b_j ~ U[-1, 1]: L-Lipschitz (|grad f| <= sum |a_j| = L) -- one of the paper's named examples of
    the non-degenerate Lipschitz class, used to test Proposition 1 on functions never trained on."""

    name = "relu_net"

    def __init__(self, d: int, L: float, width: int = 8):
        self.d = chk.positive_int("d", d)
        self.L = chk.positive("L", L)
        self.width = chk.positive_int("width", width)
        self.lipschitz = self.L

    def sample(self, n, generator):
        n = chk.positive_int("n", n)
        w = sphere((n, self.width), self.d, generator)
        b = 2 * rnd.rand(generator, (n, self.width)) - 1
        a = (self.L / self.width) * (2 * rnd.randint(generator, 0, 2, (n, self.width)) - 1).to(torch.float64)
        return {"w": w, "b": b, "a": a}

    def evaluate(self, params, x):
        self._check_x(x)
        n = x.shape[0]
        flat = x.reshape(n, -1, self.d)
        h = torch.relu(torch.einsum("npd,njd->npj", flat, params["w"]) + params["b"][:, None, :])
        return (h * params["a"][:, None, :]).sum(-1).reshape(x.shape[:-1])


class ScaledPromptSet:
    """A fixed training set per group of runs with per-run label scales, served in mini-batches.

    ``base`` holds S prompt sets (S, M, ...); run r trains on set ``group[r]`` with labels times
    ``scale[r]``, reshuffled every epoch with run r's generator (as the trainer does for a fixed
    :class:`PromptBatch`).  Only the current mini-batch is materialised for all R runs, so 30 seeds x
    6 values of L need the memory of 30 prompt sets, not 180."""

    def __init__(self, base: PromptBatch, group, scale):
        if not base.has_runs:
            raise chk.ConfigError("base must have a leading set dimension (S, M, ...)")
        self.base = base
        self.group = torch.as_tensor(list(group), dtype=torch.long)
        self.scale = torch.as_tensor(list(scale), dtype=torch.float64)
        if self.group.numel() != self.scale.numel() or self.group.numel() == 0:
            raise chk.ConfigError("group and scale must have one entry per run")
        if int(self.group.max()) >= base.num_runs or int(self.group.min()) < 0:
            raise chk.ConfigError(f"group entries must index the {base.num_runs} prompt sets")
        self.perm = None
        self.pos = 0

    def __len__(self):
        return self.group.numel()

    @property
    def M(self) -> int:
        return self.base.batch_size

    def take(self, idx: torch.Tensor) -> PromptBatch:
        """Prompts ``idx`` (R, b) of every run, labels scaled: a (R, b, ...) batch."""
        g = self.group[:, None]
        sc = self.scale.to(self.base.y.dtype)
        b = self.base
        return PromptBatch(x=b.x[g, idx], y=b.y[g, idx] * sc[:, None, None], x_query=b.x_query[g, idx],
                           y_query=b.y_query[g, idx] * sc[:, None, None],
                           ids=None if b.ids is None else b.ids[g, idx],
                           query_ids=None if b.query_ids is None else b.query_ids[g, idx], K=b.K)

    def first(self, n: int) -> PromptBatch:
        return self.take(torch.arange(min(n, self.M)).expand(len(self), -1))

    def sample_runs(self, batch: int, generators) -> PromptBatch:
        if len(generators) != len(self):
            raise chk.ConfigError(f"generators must have one entry per run ({len(self)})")
        if batch > self.M:
            raise chk.ConfigError(f"batch={batch} exceeds the {self.M} prompts of each set")
        if self.perm is None or self.pos + batch > self.M:
            self.perm = torch.stack([torch.randperm(self.M, generator=g) for g in generators])
            self.pos = 0
        idx = self.perm[:, self.pos : self.pos + batch]
        self.pos += batch
        return self.take(idx)


def multinomial_counts(p: torch.Tensor, N: int, n: int, generator: torch.Generator) -> torch.Tensor:
    """(n, K) feature counts of n prompts of N tokens, each token feature k with probability p_k,
    drawn as a chain of conditional binomials (exact, O(K) per prompt, whatever N)."""
    K = p.numel()
    counts = torch.empty(n, K, dtype=torch.float64)
    left = torch.full((n,), float(N), dtype=torch.float64)
    rest = 1.0
    for k in range(K):
        if k == K - 1:
            c = left.clone()
        else:
            prob = torch.full((n,), min(1.0, float(p[k]) / rest), dtype=torch.float64)
            c = torch.binomial(left, prob, generator=generator)
        counts[:, k] = c
        left = left - c
        rest -= float(p[k])
    return counts


def cosine_feature_prompts(V: torch.Tensor, N: int, M: int, c: float, generator: torch.Generator, p=None):
    """M prompts of the Sec. 6 cosine tasks (L = 1) directly as the theory model sees them
    (:class:`FeaturePrompts`): counts ~ Multinomial(N, p) (uniform p by
    default), query feature ~ p, f(v_m) = cos(c w^T v_m + phi)/c with w uniform on the sphere and phi
    uniform.  Same law as reducing :func:`cosine_sampler` prompts, without materialising the N tokens, so
    N = 2 K^3 = 65536 at K = 32 costs nothing."""

    K, d = V.shape
    p = torch.full((K,), 1.0 / K, dtype=torch.float64) if p is None else torch.as_tensor(p, dtype=torch.float64)
    counts = multinomial_counts(p, N, M, generator)
    w = sphere(M, d, generator).to(torch.float64)
    phi = 2 * torch.pi * rnd.rand(generator, (M,)).to(torch.float64)
    f = torch.cos(c * (w @ V.to(torch.float64).T) + phi[:, None]) / c  # (M, K)
    query = torch.multinomial(p, M, replacement=True, generator=generator)
    values = torch.where(counts > 0, f, torch.zeros_like(f))
    return FeaturePrompts(counts=counts, values=values, query=query, target=f[torch.arange(M), query])


def polynomial_sampler(d: int, N: int, L: float = 1.0) -> PromptSampler:
    """App. A: x ~ N(0, I_d), f(x) = x^T A x + b^T x with A_ij, b_i ~ N(0, (L/d)^2)."""
    return PromptSampler.from_inputs(lambda s, g: gaussian(s, d, g), QuadraticTask(d, L), N=N)


# ============================================================================ declared parameters

from ...config import ScaledConfig  # noqa: E402
from ...params import SEED, SIZE, Int, OneOf, Real, TupleOf  # noqa: E402

POSITIVE = Real(0, 1e3, closed="right")  # Delta, a Lipschitz constant L
#: the frequency c of the tasks (L/c) cos(c w^T x + phi): their values reach L/c, whose square must stay finite
#: in the float32 training (below c = 1e-6 the training would start from values of order 1e9 and more)
FREQUENCY = Real(1e-6, 1e3)
L_TUPLE = TupleOf(POSITIVE, max_len=64)
#: the Sec. 6 setting shared by every cosine-task config (features, context, prompts)
SETTING_PARAMS = dict(d=SIZE, K=Int(2, 4096), N=Int(1, 100_000), c=FREQUENCY, delta=POSITIVE,
                      features=OneOf(*FEATURE_KINDS), M=Int(1, 100_000))
# the runs of a figure: swept L values, training seeds, held-out prompts from their own seed
RUN_PARAMS = dict(L_values=L_TUPLE, seeds=Int(1, 1000), seed=SEED, test_prompts=Int(1, 200_000), test_seed=SEED)


@dataclass(frozen=True)
class Sec6Setting(ScaledConfig):
    """The Sec. 6 setting every cosine-task config starts from: K = 4 features in R^15 separated by
    Delta = 3 (orthogonal unless ``features`` says otherwise), N = 100 tokens a prompt, M = 300 prompts,
    tasks (L/c) cos(c w^T x + phi) with c = 0.5."""

    d: int = 15
    K: int = 4
    N: int = 100
    c: float = 0.5
    delta: float = 3.0
    features: str = "orth"
    M: int = 300
    PARAMS = SETTING_PARAMS

    def validate(self):
        """K orthogonal features need K <= d (every cosine-task config; extend with super().validate())."""
        if self.features != "gaussian":
            chk.features_fit(self.K, self.d, "orthogonal features")


@dataclass(frozen=True)
class Sec6Runs(Sec6Setting):
    """The Sec. 6 setting with the runs of the figures: the six L values (three flat, three sharp),
    seeds of the training runs, and a held-out prompt set drawn from its own seed."""

    L_values: tuple = FLAT + SHARP
    seeds: int = 6  # the paper gives none; 6 is the fewest an interval over seeds decides on
    seed: int = 0
    test_prompts: int = 1000
    test_seed: int = 50_000
    PARAMS = RUN_PARAMS
