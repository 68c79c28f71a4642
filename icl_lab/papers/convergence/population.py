"""Population gradient descent of the Q-only model in feature space (convergence paper, Lemma 4.1).

With orthonormal features v_1..v_K and Q^(0) = 0 only the K x K block

    S = V Q V^T,   S[n, k] = v_n^T Q v_k   (row n = key feature, column k = query feature),

matters (S[k, k] = A_k, S[n, k] = B_{k,n}).  A prompt whose query is v_k and whose context holds
c_m = |V_m| copies of v_m attends to feature m with

    Attn_m = c_m e^{S[m,k]} / sum_j c_j e^{S[j,k]}                     (Def. 3.1 grouped by feature)

and, after averaging over w (E[w w^T] = I), its loss is 1/2 ||e_k - Attn||^2 (Lemma C.6).  The
population gradient (Lemma 4.1 / C.2) in compact form is

    G[n, k] := -(V grad_Q L V^T)[n, k] = p_k E_c[ a_n (e_k - a)^T (e_n - a) ],   a = Attn(c, S[:, k]),

so G[k, k] = alpha_k and G[n, k] = beta_{k,n}; GD on Q from 0 is exactly S <- S + eta G.
Everything is an expectation over the count vector c ~ Multinomial(N, p) only.  A
:class:`CountLaw` holds that law as weighted count vectors:

* :meth:`CountLaw.exact` enumerates all C(N+K-1, K-1) count vectors (1891 for K=3, N=60);
* :meth:`CountLaw.monte_carlo` draws M count vectors once (common random numbers across steps);
* :meth:`CountLaw.mean_field` is the N -> infinity limit c/N -> p (one "count vector" p);
* :meth:`CountLaw.empirical` is the law of a fixed set of prompts (counts and query features), so
  GD on the reduced model reproduces GD on the full d x d model on those prompts.

All functions are float64 torch on the CPU.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ... import params as chk
from ...models import feature_softmax

DTYPE = torch.float64


@dataclass
class CountLaw:
    """A distribution over count vectors: ``counts`` (M, K) with probabilities ``weights`` (M,).

    ``query`` (M,) optional: the query feature of each sample (an empirical joint law of prompts);
    without it the query is independent of the counts with law ``p`` (the population case).
    ``N`` is the context length (``math.inf`` for the mean-field law).
    """

    counts: torch.Tensor
    weights: torch.Tensor
    p: torch.Tensor
    N: float
    query: torch.Tensor | None = None
    kind: str = "exact"

    @property
    def K(self) -> int:
        return self.counts.shape[1]

    @property
    def size(self) -> int:
        return self.counts.shape[0]

    # ------------------------------------------------------------------ constructors
    @classmethod
    def exact(cls, N: int, p, max_vectors: int = 2_000_000) -> "CountLaw":
        """Every count vector with its multinomial probability (exact population expectation)."""
        N = chk.positive_int("N", N)
        p = chk.probabilities("p", p)
        K = p.numel()
        n_vec = math.comb(N + K - 1, K - 1)
        if n_vec > max_vectors:
            raise chk.ConfigError(f"N={N}, K={K} has {n_vec} count vectors (> max_vectors={max_vectors}); "
                                  "use CountLaw.monte_carlo or CountLaw.mean_field")
        counts = _compositions(N, K)
        logw = (math.lgamma(N + 1) - torch.lgamma(counts + 1).sum(1)
                + (counts * torch.log(p)[None]).sum(1))
        w = torch.exp(logw)
        return cls(counts=counts, weights=w / w.sum(), p=p, N=N, kind="exact")

    @classmethod
    def monte_carlo(cls, N: int, p, M: int, generator: torch.Generator) -> "CountLaw":
        """M count vectors drawn once from Multinomial(N, p) (cost independent of N)."""
        N = chk.positive_int("N", N)
        p = chk.probabilities("p", p)
        M = chk.positive_int("M", M)
        chk.generator("generator", generator)
        counts = _multinomial(N, p, M, generator)
        return cls(counts=counts, weights=torch.full((M,), 1.0 / M, dtype=DTYPE), p=p, N=N, kind="mc")

    @classmethod
    def mean_field(cls, p) -> "CountLaw":
        """The N -> infinity limit: Attn_m = p_m e^{S[m,k]} / sum_j p_j e^{S[j,k]}."""
        p = chk.probabilities("p", p)
        return cls(counts=p[None].clone(), weights=torch.ones(1, dtype=DTYPE), p=p, N=math.inf, kind="mean-field")

    @classmethod
    def empirical(cls, counts: torch.Tensor, query: torch.Tensor, K: int) -> "CountLaw":
        """The joint law of a fixed set of B prompts: counts (B, K) and query features (B,)."""
        counts = torch.as_tensor(counts, dtype=DTYPE)
        query = torch.as_tensor(query, dtype=torch.long).reshape(-1)
        chk.shape("counts", counts, (None, K))
        if query.numel() != counts.shape[0]:
            raise chk.ConfigError(f"query must have one entry per prompt ({counts.shape[0]}); got {query.numel()}")
        B = counts.shape[0]
        freq = torch.bincount(query, minlength=K).to(DTYPE) / B
        return cls(counts=counts, weights=torch.full((B,), 1.0 / B, dtype=DTYPE), p=freq,
                   N=float(counts[0].sum()), query=query, kind="empirical")

    def zero_count_probability(self) -> torch.Tensor:
        """(K,) P(|V_k| = 0) under this law (0 for the mean-field law)."""
        return ((self.counts == 0).to(DTYPE) * self.weights[:, None]).sum(0)


def _compositions(N: int, K: int) -> torch.Tensor:
    """All vectors of K non-negative integers summing to N, (C(N+K-1, K-1), K), float64."""
    if K == 1:
        return torch.tensor([[float(N)]], dtype=DTYPE)
    # stars and bars: choose K-1 bar positions among N+K-1 slots
    bars = torch.combinations(torch.arange(N + K - 1), K - 1)
    if bars.ndim == 1:
        bars = bars[:, None]
    left = torch.cat([torch.full((bars.shape[0], 1), -1), bars], 1)
    right = torch.cat([bars, torch.full((bars.shape[0], 1), N + K - 1)], 1)
    return (right - left - 1).to(DTYPE)


def _multinomial(N: int, p: torch.Tensor, M: int, g: torch.Generator) -> torch.Tensor:
    """(M, K) Multinomial(N, p) draws by sequential binomials (exact, O(M K), any N)."""
    K = p.numel()
    out = torch.zeros(M, K, dtype=DTYPE)
    rest = torch.full((M,), float(N), dtype=DTYPE)
    mass = 1.0
    for k in range(K - 1):
        q = float(min(1.0, max(0.0, p[k] / mass))) if mass > 0 else 0.0
        draw = torch.binomial(rest, torch.full((M,), q, dtype=DTYPE), generator=g)
        out[:, k] = draw
        rest = rest - draw
        mass -= float(p[k])
    out[:, K - 1] = rest
    return out


# ---------------------------------------------------------------------- attention and gradients
def _as_S(S) -> torch.Tensor:
    S = torch.as_tensor(S, dtype=DTYPE)
    if S.ndim < 2 or S.shape[-1] != S.shape[-2]:
        raise chk.ConfigError(f"S must be a (..., K, K) matrix (got shape {tuple(S.shape)})")
    return S


def feature_attention(S, law: CountLaw) -> torch.Tensor:
    """(..., M, K_query, K_key) Attn_m of a prompt with counts c (row of ``law``) and query v_k.

    a[b, k, m] = c_m e^{S[m,k]} / sum_j c_j e^{S[j,k]}; a feature absent from the context gets 0.
    """
    S = _as_S(S)
    if S.shape[-1] != law.K:
        raise chk.ConfigError(f"S is {S.shape[-1]} x {S.shape[-1]} but the count law has K={law.K}")
    return feature_softmax(S.transpose(-1, -2).unsqueeze(-3), law.counts[:, None, :])  # (..., M, k, m)


def _per_sample_terms(a: torch.Tensor):
    """g[.., b, k, n] = a_n (e_k - a)^T (e_n - a) and err[.., b, k] = ||e_k - a||^2 for attention a (.., M, K, K)."""
    r = torch.eye(a.shape[-1], dtype=a.dtype) - a  # r[b, k, :] = e_k - a
    ar = (a * r).sum(-1, keepdim=True)  # a . (e_k - a)
    # (e_k - a)^T (e_n - a) = r_n - a . r
    g = a * (r - ar)
    err = (r * r).sum(-1)
    return g, err


def gradient(S, law: CountLaw) -> torch.Tensor:
    """G = -V grad_Q L V^T (..., K, K): G[k, k] = alpha_k, G[n, k] = beta_{k,n} (Lemma 4.1).

    GD on Q from 0 is S <- S + eta * G.
    """
    a = feature_attention(S, law)  # (..., M, k, m)
    g, _ = _per_sample_terms(a)  # (..., M, k, n)
    if law.query is None:
        Gt = torch.einsum("b,...bkn->...kn", law.weights, g) * law.p[:, None]
    else:
        sel = torch.nn.functional.one_hot(law.query, law.K).to(DTYPE) * law.weights[:, None]  # (M, k)
        Gt = torch.einsum("bk,...bkn->...kn", sel, g)
    return Gt.transpose(-1, -2)  # [n, k]


def feature_losses(S, law: CountLaw) -> torch.Tensor:
    """(..., K) conditional prediction errors L_k = 1/2 E[||e_k - Attn||^2 | x_query = v_k] (eq. 6).

    For an empirical law, the mean over the prompts whose query is v_k (NaN if there is none)."""
    a = feature_attention(S, law)
    _, err = _per_sample_terms(a)  # (..., M, k)
    if law.query is None:
        return 0.5 * torch.einsum("b,...bk->...k", law.weights, err)
    sel = torch.nn.functional.one_hot(law.query, law.K).to(DTYPE) * law.weights[:, None]
    return 0.5 * torch.einsum("bk,...bk->...k", sel, err) / sel.sum(0)


def total_loss(S, law: CountLaw) -> torch.Tensor:
    """L = sum_k p_k L_k (eq. 4 after averaging over w)."""
    return (feature_losses(S, law) * law.p).sum(-1)


def loss_floor(N: float, p) -> torch.Tensor:
    """(K,) L_k^low = 1/2 K/(K-1) (1 - p_k)^N (eq. 12): attention's unavoidable error when the
    query's feature is absent from the context (0 in the mean-field limit N = inf)."""
    p = chk.probabilities("p", p)
    K = p.numel()
    if K < 2:
        raise chk.ConfigError("K must be >= 2 for the loss floor")
    if math.isinf(N):
        return torch.zeros(K, dtype=DTYPE)
    return 0.5 * K / (K - 1) * (1 - p) ** N


def initial_gradient_mean_field(p) -> dict:
    """Closed forms at S = 0 in the mean-field limit (a = p) (derived in the chapter, "Initial gradients"):
    alpha_k = p_k^2 [(1-p_k)^2 + sum_{m!=k} p_m^2],
    beta_{k,n} = p_k p_n [sum_{m!=k} p_m^2 - p_k (1 - p_k) - p_n]."""
    p = chk.probabilities("p", p)
    s2 = (p * p).sum()
    others = s2 - p * p  # sum_{m != k} p_m^2
    alpha = p**2 * ((1 - p) ** 2 + others)
    beta = p[None, :] * p[:, None] * (others[None, :] - (p * (1 - p))[None, :] - p[:, None])  # [n, k]
    G = beta.clone()
    G.diagonal().copy_(alpha)
    return {"alpha": alpha, "G": G}


# ---------------------------------------------------------------------- GD on S
@dataclass
class Trajectory:
    """A recorded population GD run: S (T, K, K), losses L_k (T, K), gradients G (T, K, K) at
    GD steps ``steps`` (T,); tau = eta * step."""

    steps: torch.Tensor
    tau: torch.Tensor
    S: torch.Tensor
    losses: torch.Tensor
    G: torch.Tensor
    eta: float


def population_gd(law: CountLaw, *, eta: float, steps: int, S0=None, record_every: int = 1,
                  record_at=None) -> Trajectory:
    """GD S <- S + eta G(S) for ``steps`` steps from ``S0`` (default 0: Q^(0) = 0).

    Records S, L_k and G every ``record_every`` steps (or at ``record_at``) and at the end."""
    eta = chk.positive("eta", eta)
    steps = chk.positive_int("steps", steps, minimum=0)
    K = law.K
    S = torch.zeros(K, K, dtype=DTYPE) if S0 is None else _as_S(S0).clone()
    at = set(range(0, steps + 1, chk.positive_int("record_every", record_every))) if record_at is None else {int(s) for s in record_at}
    at.add(steps)
    rec_s, rec_S, rec_L, rec_G = [], [], [], []
    for t in range(steps + 1):
        G = gradient(S, law)
        if t in at:
            rec_s.append(t)
            rec_S.append(S.clone())
            rec_L.append(feature_losses(S, law))
            rec_G.append(G)
        if t < steps:
            S = S + eta * G
    st = torch.tensor(rec_s, dtype=DTYPE)
    return Trajectory(steps=st, tau=eta * st, S=torch.stack(rec_S), losses=torch.stack(rec_L),
                      G=torch.stack(rec_G), eta=eta)
