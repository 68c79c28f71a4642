"""Theory helpers of the nonlinear chapter that no stored experiment uses: correlated features and
Lemma 2's g_k along GD on them, Prop. 2's Phase-I duration and first-step rate in the population limit (the
expected loss of Eq. 7 with balanced counts), by the library's GD and by its two-weight symmetric reduction, and the
phase ends Props. 2-3 state (:func:`stated_ends`). They build on :mod:`~icl_lab.papers.nonlinear.theory` (the exact feature-space dynamics)
and live beside it rather than in it so that the stored results of the paper's experiments, whose
fingerprints cover ``theory.py``, stay current.
"""
from __future__ import annotations

import math

import torch

from ... import metrics
from ... import params as chk
from ...config import make_generator
from .tasks import FeaturePrompts, cosine_feature_prompts, cosine_sampler, make_features
from .theory import feature_gd, pair_gradients

F64 = torch.float64

def correlated_features(K: int, d: int, delta: float, cos: float) -> torch.Tensor:
    """Correlated features v_k = u + s e_k with s = delta/sqrt2 and u along e_K (K x d, float64): every
    pairwise distance is exactly ``delta`` (inside Eq. 4's hypotheses) while cos(v_k, v_m) = ``cos``."""
    if not 0 <= cos < 1:
        raise chk.ConfigError(f"cos must lie in [0, 1) (got {cos})")
    if not 0 < K < d:
        raise chk.ConfigError(f"K must lie in (0, d) (got K = {K}, d = {d})")
    s_ = delta / math.sqrt(2)
    V = torch.zeros(K, d, dtype=F64)
    V[:, :K] = s_ * torch.eye(K, dtype=F64)
    V[:, K] = math.sqrt(cos * s_**2 / (1 - cos))
    return V


def correlated_gk(cos: float, M: int, seed: int, K: int = 4, d: int = 15, delta: float = 3.0, N: int = 100,
                  c: float = 0.5, steps: int = 300) -> tuple[float, float, int]:
    """Lemma 2's g_k = (q_k(t+1) - q_k(t)) / eta along ``steps`` GD steps (eta = 1) from Q = 0 on ``M``
    cosine prompts over :func:`correlated_features` (the prompts reduced from tokens up to 1000 of them,
    else drawn directly as feature counts, the same law): the smallest g_k, the smallest at t = 0, and
    the number of steps where some q_k falls."""
    if M < 1:
        raise chk.ConfigError(f"M must be at least 1 (got {M})")
    Vc = correlated_features(K, d, delta, cos)
    fp_c = (FeaturePrompts.from_batch(cosine_sampler(Vc, N, c).sample(M, make_generator(seed))) if M <= 1000
            else cosine_feature_prompts(Vc, N, M, c, make_generator(seed)))
    qk = torch.diagonal(feature_gd(fp_c, Vc @ Vc.T, steps=steps, lr=1.0, record_every=1, with_maps=False).q[:, 0],
                        dim1=-2, dim2=-1)
    dq = qk[1:] - qk[:-1]
    return float(dq.min()), float(dq[0].min()), int((dq < -1e-12).any(-1).sum())


def lemma5_level(K: int) -> float:
    """The own-feature attention K / (2K - 1) at q_k - q_{k,m} = log K (balanced counts; Lemma 5)."""
    return K / (2 * K - 1)


def fixed_level(K: int) -> float:
    """A fixed own-feature attention level, 0.9, for every K."""
    return 0.9


#: the levels that end Phase I in the population sweep of Prop. 2's K-dependence (name -> level of K)
POPULATION_LEVELS = {"$\\mathrm{Attn} = K/(2K-1)$ (Lemma 5: $q_k - q_{k,m} = \\log K$)": lemma5_level,
                     "$\\mathrm{Attn} = 0.9$ (a fixed level)": fixed_level}


def _population_lr(K: int) -> float:
    return 2e-4 * K**2  # ~ T^1 / 300 (T^1 grows like K^2 here)


def _population_prompts(K: int, delta: float) -> tuple[FeaturePrompts, torch.Tensor]:
    """The expected loss (Eq. 7) with balanced counts at K orthogonal features of distance ``delta``: K prompts
    with query v_1 and values sqrt(K) e_j (only second moments of the task values enter the gradient), and the
    Gram matrix. A step on them divided by K is a step of the population loss (p_k = 1/K)."""
    if K < 2:
        raise chk.ConfigError(f"K must be at least 2 (got {K})")
    V, eye = make_features("orth", K, K, delta), torch.eye(K, dtype=F64)
    fp = FeaturePrompts(torch.ones(K, K, dtype=F64), math.sqrt(K) * eye, torch.zeros(K, dtype=torch.long),
                        math.sqrt(K) * eye[:, 0])
    return fp, V @ V.T


def population_first_step_rate(K: int, delta: float) -> float:
    """Prop. 2's Phase-I rate at its first step in the population limit: g_k(0) of the expected loss (Eq. 7) with
    balanced counts, per unit of eta (L = 1), from the library's gradient at Q = 0 on :func:`_population_prompts`.
    At Q = 0 every attention is 1/K, and it equals ||v||^4 (K - 1) / K^3."""
    fp, G = _population_prompts(K, delta)
    return float(pair_gradients(torch.zeros(1, K, K, dtype=F64), fp, G)[0, 0, 0]) / K


def population_phase1(K: int, delta: float, steps: int = 1500) -> list[float]:
    """Phase-I duration T^1 (in units of eta x steps) of the expected loss (Eq. 7) with balanced counts
    (N -> infinity), at each level of :data:`POPULATION_LEVELS`: only second moments of the task values
    enter the gradient, so K prompts with query v_1 and values sqrt(K) e_j represent it exactly (the
    other query features follow by symmetry; the step / K restores p_k = 1/K)."""
    fp, G = _population_prompts(K, delta)
    lr = _population_lr(K)
    own = feature_gd(fp, G, steps=steps, lr=lr / K, record_every=steps, with_maps=False).own
    return [float(metrics.first_crossing(own, lv(K))[0]) * lr for lv in POPULATION_LEVELS.values()]


def population_phase1_reduced(K: int, delta: float, steps: int = 1500) -> list[float]:
    """:func:`population_phase1` by symmetry: query v_1's own weight q_0 and one cross weight q_c (the
    K - 1 are equal), Gamma_(1,m) = A_m (A_m - 1{m = 1} - |A|^2 + A_1): the cost of any K is that of K = 2."""
    if K < 2:
        raise chk.ConfigError(f"K must be at least 2 (got {K})")
    s4, lr, q0, qc, own = (delta**2 / 2) ** 2, _population_lr(K), 0.0, 0.0, []
    for _ in range(steps + 1):
        a0, ac = 1 / (1 + (K - 1) * math.exp(qc - q0)), 1 / (math.exp(q0 - qc) + K - 1)
        own.append(a0)
        sq = a0**2 + (K - 1) * ac**2
        q0, qc = q0 - lr / K * s4 * a0 * (2 * a0 - 1 - sq), qc - lr / K * s4 * ac * (ac - sq + a0)
    own = torch.tensor(own, dtype=F64)[:, None]
    return [float(metrics.first_crossing(own, lv(K))[0]) * lr for lv in POPULATION_LEVELS.values()]


def stated_ends(cfg, N: int, Cs=(1.0, 0.5, 2.0), L: float = 0.5, eta: float = 4.0, chunk: int = 2000) -> dict:
    """The ends Props. 2-3 state, at delta = sqrt(20K/N), for each constant C of the Omega in ``Cs``: T^1 = first
    t with 1 - Attn <= C delta/(1+C delta), T* = first t with 1 - Attn <= C eps delta/(1+C eps delta), the mean
    rate of q_k between them, and the step's rate of q_k, (q_k(t+1) - q_k(t))/eta, at T^1 and at T*, on the
    prompts of the delta sweep ``cfg`` (a :class:`~icl_lab.papers.nonlinear.experiments.DeltaConfig`: its
    features, K, d, delta, M, c, eps and seed) drawn as counts at context length ``N``. eta = 4 at L = 0.5 is,
    by R1, the run of L = 1 at eta = 1 (flat: L* >= 1.49); GD runs in chunks until every C's T* (one
    trajectory: C only moves the ends read from it). Returns C -> (T^1, T*, rate, g(T^1), g(T*))."""
    if N < 1 or chunk < 1:
        raise chk.ConfigError(f"N and chunk must be at least 1 (got N = {N}, chunk = {chunk})")
    V, dl = make_features(cfg.features, cfg.K, cfg.d, cfg.delta), math.sqrt(20 * cfg.K / N)
    fp = cosine_feature_prompts(V, N, cfg.M, cfg.c, make_generator(cfg.seed))
    ends = {C: (C * dl / (1 + C * dl), C * cfg.eps * dl / (1 + C * cfg.eps * dl)) for C in Cs}
    hit, q0, off = {C: [] for C in Cs}, None, 0
    while any(len(h) < 2 for h in hit.values()) and off < 10**6:
        tr = feature_gd(fp, V @ V.T, steps=chunk, lr=eta, scale=L, q0=q0, record_every=1, with_maps=False)
        qk = torch.diagonal(tr.q[:, 0], dim1=-2, dim2=-1).mean(-1)
        for C, h in hit.items():
            for e in ends[C][len(h):]:
                t = metrics.first_crossing(1 - tr.own, e, below=True)[0]
                if not bool(torch.isfinite(t)):
                    break
                j = min(int(t) + 1, chunk)
                h.append((off + int(t), float(qk[int(t)]), float(qk[j] - qk[j - 1]) / eta))
        q0, off = tr.q[-1], off + chunk
    return {C: (t1, t2, (q2 - q1) / (eta * max(1, t2 - t1)), g1, g2) for C, ((t1, q1, g1), (t2, q2, g2)) in hit.items()}
