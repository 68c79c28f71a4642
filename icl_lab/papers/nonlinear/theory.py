"""Li, Duan, Liang (nonlinear regression): the Q-only model reduced to feature space, exactly.

When every token is one of K features v_1..v_K (rows of V, Gram matrix G = V V^T) and Q starts at
0, the gradient of the Q-only model is a combination of outer products v_m v_k^T (App. C; the chapter's D4-D5), so
gradient descent only ever moves the K x K *feature-pair weights*

    q[k, m] = v_m^T Q v_k         (query feature k, key feature m; the paper's q_{k,m}),

and a prompt enters only through its feature counts |V_m|, the task values f(v_m) and the query's
feature.  With Attn_m = |V_m| e^{q[k,m]} / sum_n |V_n| e^{q[k,n]} and y_hat = sum_m Attn_m f(v_m),
one full-batch GD step on L = 1/2 mean (y_hat - f(v_k))^2 is exactly (the Gram formula, the chapter's D5)

    q <- q - eta * G Gamma G,   Gamma[k, m] = mean_b 1{k_b = k} (y_hat_b - f_b(v_k)) Attn_bm (f_b(v_m) - y_hat_b).

For orthonormal features (G = I) this is the paper's Lemma 2 (App. C): g_{k,k'} = -Gamma[k, k'];
for orthogonal features of norm s it carries the factor s^4 (observation R3); for general features
the paper's formula is not exact, this one is.  :func:`feature_gd` runs it for R runs at once (per-run
learning rates and label scales), thousands of steps per second, and is checked against the full
d x d model trained with :func:`icl_lab.train.train` in the unit tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ... import params as chk
from .tasks import FeaturePrompts, cosine_sampler, make_features
from ...train import mse_loss
from ...models import QOnlyAttention, feature_softmax
from ...config import make_generator

F64 = torch.float64


# ============================================================================ reduced prompts
def _per_run(name: str, value, R: int) -> torch.Tensor:
    t = chk.positive_values(name, value)
    if t.ndim == 0:
        return t.expand(R).clone()
    if t.numel() != R:
        raise chk.ConfigError(f"{name} must be a number or have one entry per run (R={R}); got {t.numel()}")
    return t


def attention(q: torch.Tensor, counts: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
    """Feature attention Attn_bm of each prompt's query: q (R, K, K), counts (B, K), query (B,) -> (R, B, K)."""
    return feature_softmax(q[:, query, :], counts[None])  # (R, B, K): |V_m| e^{q[k_b, m]}, 0 where V_m is empty


def attention_map(q: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """(R, K, K) mean attention a query of feature k puts on feature m, over all contexts in ``counts``
    (contexts do not depend on the query's feature). Rows sum to one."""
    return feature_softmax(q[:, :, None, :], counts[None, None]).mean(2)  # (R, K, B, K) -> (R, K, K)


def forward(q: torch.Tensor, prompts: FeaturePrompts, scale: torch.Tensor):
    """Attention (R, B, K), prediction and target (R, B) for per-run label scales (R,)."""
    A = attention(q, prompts.counts, prompts.query)
    values = scale[:, None, None] * prompts.values[None]
    yhat = (A * values).sum(-1)
    target = scale[:, None] * prompts.target[None]
    return A, values, yhat, target


def gradient_coefficients(q: torch.Tensor, prompts: FeaturePrompts, scale: torch.Tensor, with_own: bool = False):
    """Loss (R,) and Gamma (R, K, K): grad_Q L = sum_{k,m} Gamma[k, m] v_m v_k^T (the chapter's D5).
    With ``with_own`` also the mean own-feature attention Attn_{k_b} over the prompts (R,)."""
    A, values, yhat, target = forward(q, prompts, scale)
    res = yhat - target  # (R, B)
    loss = 0.5 * (res**2).mean(-1)
    onehot = torch.nn.functional.one_hot(prompts.query, prompts.K).to(q.dtype)  # (B, K)
    inner = res[..., None] * A * (values - yhat[..., None])  # (R, B, K)
    gamma = torch.einsum("bk,rbm->rkm", onehot, inner) / prompts.B
    if with_own:
        return loss, gamma, (A * onehot[None]).sum(-1).mean(-1)
    return loss, gamma


def pair_gradients(q: torch.Tensor, prompts: FeaturePrompts, G: torch.Tensor, scale=1.0) -> torch.Tensor:
    """The paper's g_{k,k'} = (q^{(t+1)}_{k,k'} - q^{(t)}_{k,k'}) / eta = -(G Gamma G)[k, k'], (R, K, K)."""
    scale = _per_run("scale", scale, q.shape[0]).to(q)
    _, gamma = gradient_coefficients(q, prompts, scale)
    G = G.to(q)
    return -(G @ gamma @ G)


def lemma2_orthonormal(q: torch.Tensor, prompts: FeaturePrompts, scale=1.0) -> torch.Tensor:
    """The paper's App. C closed form (orthonormal features):
    g_{k,k'} = E[1{x_q = v_k} Attn_{k'} (f(v_k) - y_hat)(f(v_{k'}) - y_hat)], (R, K, K)."""
    scale = _per_run("scale", scale, q.shape[0]).to(q)
    A, values, yhat, target = forward(q, prompts, scale)
    onehot = torch.nn.functional.one_hot(prompts.query, prompts.K).to(q.dtype)
    term = (target - yhat)[..., None] * A * (values - yhat[..., None])
    return torch.einsum("bk,rbm->rkm", onehot, term) / prompts.B


# ============================================================================ exact GD
@dataclass
class FeatureTrajectory:
    """What :func:`feature_gd` recorded.  ``loss`` and ``own`` (steps + 1, R) at every step (index
    t = after t updates; ``own`` is the mean over the training prompts of the attention on the
    query's own feature, Attn_{k_b}); ``q`` and ``maps`` (n_records, R, K, K) at ``record_steps``;
    ``test_loss`` (n_records, R) on held-out prompts when given."""

    loss: torch.Tensor
    own: torch.Tensor
    record_steps: list
    q: torch.Tensor
    maps: torch.Tensor
    test_loss: torch.Tensor | None
    lr: torch.Tensor
    scale: torch.Tensor

    @property
    def map_own(self) -> torch.Tensor:
        """(n_records, R) mean over query features of the diagonal of the attention maps."""
        return torch.diagonal(self.maps, dim1=-2, dim2=-1).mean(-1)


def feature_gd(prompts: FeaturePrompts, G: torch.Tensor, *, steps: int, lr=1.0, scale=1.0, runs: int | None = None,
               q0: torch.Tensor | None = None, record_every: int = 1, test: FeaturePrompts | None = None,
               with_maps: bool = True) -> FeatureTrajectory:
    """Exact full-batch GD of the Q-only model from Q = 0 (or feature weights ``q0``), in feature space.

    prompts : the fixed training set (all runs share its contexts; labels are scaled per run by ``scale``,
        the Lipschitz constant L for the families f = L g).
    G : (K, K) Gram matrix of the features.  lr, scale : a number or one per run.  runs : R (default: from lr/scale).
    record_every : record q, attention maps and the held-out loss every so many steps (and at the end).
    with_maps : compute the (R, K, K) attention maps at the records (``maps`` is empty otherwise).
    """
    steps = chk.positive_int("steps", steps)
    record_every = chk.positive_int("record_every", record_every)
    sizes = [torch.as_tensor(v).numel() for v in (lr, scale)] + ([runs] if runs else [])
    R = max(sizes)
    lr_t = _per_run("lr", lr, R)
    sc = _per_run("scale", scale, R)
    G = torch.as_tensor(G, dtype=F64)
    K = prompts.K
    chk.shape("G", G, (K, K))
    q = torch.zeros(R, K, K, dtype=F64) if q0 is None else q0.to(F64).clone().expand(R, K, K).clone()
    rec = sorted(set(range(0, steps, record_every)) | {steps})
    rec_set = set(rec)
    losses = torch.empty(steps + 1, R, dtype=F64)
    owns = torch.empty(steps + 1, R, dtype=F64)
    qs, maps, tl = [], [], []
    for t in range(steps + 1):
        loss, gamma, own = gradient_coefficients(q, prompts, sc, with_own=True)
        losses[t] = loss
        owns[t] = own
        if t in rec_set:
            qs.append(q.clone())
            if with_maps:
                maps.append(attention_map(q, prompts.counts))
            if test is not None:
                tl.append(gradient_coefficients(q, test, sc)[0])
        if t < steps:
            q = q - lr_t[:, None, None] * (G @ gamma @ G)
    return FeatureTrajectory(loss=losses, own=owns, record_steps=rec, q=torch.stack(qs),
                             maps=torch.stack(maps) if with_maps else torch.empty(0),
                             test_loss=torch.stack(tl) if test is not None else None, lr=lr_t, scale=sc)


def q_from_Q(Q: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Feature-pair weights of a full (R, d, d) matrix Q: q[k, m] = v_m^T Q v_k = (V Q^T V^T)[k, m]."""
    V = V.to(Q)
    return V @ Q.transpose(-1, -2) @ V.T


# ============================================================================ paper quantities
def lemma1_terms(q: torch.Tensor, prompts: FeaturePrompts, scale=1.0):
    """Per-prompt quantities of Lemma 1 (R, B): squared error (y_hat - f(v_k))^2, 1 - Attn_k, and the
    exact envelope (1 - Attn_k)^2 max_{n != k, |V_n| > 0} (f(v_n) - f(v_k))^2 (D3)."""
    sc = _per_run("scale", scale, q.shape[0]).to(q)
    A, values, yhat, target = forward(q, prompts, sc)
    own = A.gather(-1, prompts.query[None, :, None].expand(A.shape[0], -1, 1))[..., 0]
    gap = (values - target[..., None]) ** 2
    present = (prompts.counts > 0)[None].expand_as(gap)
    gap = torch.where(present, gap, torch.zeros_like(gap)).max(-1).values
    return (yhat - target) ** 2, 1 - own, (1 - own) ** 2 * gap


def paper_concentration_bound(delta, N: int) -> torch.Tensor:
    """The paper's (unproved) bound P(P_{1:N} in E*) >= 1 - 3 exp(-delta^2 N / 25) (after Eq. 9)."""
    return 1 - 3 * torch.exp(-torch.as_tensor(delta, dtype=F64) ** 2 * N / 25)


def hoeffding_union_bound(delta, N: int, K: int) -> torch.Tensor:
    """P(E*) >= 1 - 2 K exp(-2 N delta^2): Hoeffding for each count |V_k| ~ Bin(N, p_k), union over k (D12)."""
    return 1 - 2 * K * torch.exp(-2 * N * torch.as_tensor(delta, dtype=F64) ** 2)


def concentration_probability(p, N: int, deltas, n_mc: int, generator: torch.Generator) -> torch.Tensor:
    """Monte-Carlo P(|V_k| in [(p_k - delta) N, (p_k + delta) N] for all k) for each delta, with
    multinomial counts drawn as a chain of conditional binomials (exact, O(K) per prompt)."""
    p = chk.probabilities("p", p)
    N = chk.positive_int("N", N)
    n_mc = chk.positive_int("n_mc", n_mc)
    counts = torch.empty(n_mc, p.numel(), dtype=F64)
    left = torch.full((n_mc,), float(N), dtype=F64)
    rest = 1.0
    for k in range(p.numel()):
        if k == p.numel() - 1:
            c = left.clone()
        else:
            prob = torch.full((n_mc,), min(1.0, float(p[k]) / rest), dtype=F64)
            c = torch.binomial(left, prob, generator=generator)
        counts[:, k] = c
        left = left - c
        rest -= float(p[k])
    deltas = torch.as_tensor(deltas, dtype=F64).reshape(-1)
    dev = (counts / N - p[None]).abs().max(-1).values  # (n_mc,)
    return (dev[None, :] <= deltas[:, None] + 1e-12).to(F64).mean(-1)


def late_phase_loss(t, lr: float, s4: float, K: int) -> torch.Tensor:
    """Observation R2 (continuous time, orthogonal features of norm s): for large t the total loss
    approaches (K - 1) / (4 eta s^4 t), whatever L, the task law, the counts or the p_k.  The K - 1
    (not K) comes from the rows of q summing to zero: the cross weights fall at q_k'/(K - 1), so the
    logit gap grows K/(K - 1) times faster than q_k (the chapter's D10)."""
    return (K - 1) / (4 * lr * s4 * torch.as_tensor(t, dtype=F64))


def late_constant(loss: torch.Tensor, t1: int, t2: int, lr: float, s4: float) -> torch.Tensor:
    """The constant C of a late phase L(t) ~ C / (4 eta s^4 t), from the growth of 1/L between
    steps t1 < t2: C = 4 eta s^4 (t2 - t1) / (1/L(t2) - 1/L(t1)).  Unlike L(t) t it is free of the
    offset the early phases leave in 1/L.  ``loss`` (steps + 1, R) -> (R,)."""
    return 4 * lr * s4 * (t2 - t1) / (1 / loss[t2] - 1 / loss[t1])


def lemma2_theta(q: torch.Tensor, prompts: FeaturePrompts, G: torch.Tensor, scale=1.0) -> dict:
    """Lemma 2 read as a Theta-statement for general features: the true gradients -(G Gamma G)
    against App. C's orthonormal formula times s^4 (s^2 = mean squared feature norm), at the weights
    q (R, K, K).  Returns the smallest true g_k, the range of the ratios true g_k / App. C g_k, and
    the share of off-diagonal g_{k,k'} whose sign App. C gets right."""
    G = G.to(q)
    s4 = float(torch.diagonal(G).mean()) ** 2
    true = pair_gradients(q, prompts, G, scale)
    paper = s4 * lemma2_orthonormal(q, prompts, scale)
    dt, dp = torch.diagonal(true, dim1=-2, dim2=-1), torch.diagonal(paper, dim1=-2, dim2=-1)
    ratio = dt / dp
    K = q.shape[-1]
    off = ~torch.eye(K, dtype=torch.bool).expand_as(true)
    signs = (torch.sign(true[off]) == torch.sign(paper[off])).to(F64).mean()
    return {"min_gk": float(dt.min()), "min_gk_paper": float(dp.min()), "ratio_lo": float(ratio.min()),
            "ratio_hi": float(ratio.max()), "sign_agree": float(signs)}


def own_by_feature(q: torch.Tensor, prompts: FeaturePrompts) -> torch.Tensor:
    """(R, K) mean own-feature attention Attn_k over the prompts whose query is feature k."""
    A = attention(q, prompts.counts, prompts.query)  # (R, B, K)
    own = A.gather(-1, prompts.query[None, :, None].expand(A.shape[0], -1, 1))[..., 0]  # (R, B)
    onehot = torch.nn.functional.one_hot(prompts.query, prompts.K).to(q.dtype)  # (B, K)
    return (own @ onehot) / onehot.sum(0).clamp_min(1)


def threshold_scale(K: int, N: int, delta_feat: float) -> dict:
    """The paper's numbers for a configuration: delta_min = sqrt(20K/N), L* ~ 1/(Delta delta_min),
    the Phase-I end level 1/(1 + delta_min), and whether delta_min < 1/K (needs N > 20 K^3)."""
    dmin = math.sqrt(20 * K / N)
    return {"delta_min": dmin, "L_star": 1 / (delta_feat * dmin), "phase1_level": 1 / (1 + dmin),
            "delta_below_pk": dmin < 1 / K, "bound_at_delta_min": 1 - 3 * math.exp(-dmin**2 * N / 25)}


def lemma2_errors(kind: str, K: int = 4, d: int = 15, delta: float = 3.0, N: int = 100, c: float = 0.5,
                  prompts: int = 300, seed: int = 2) -> tuple[float, float, float, float]:
    """Lemma 2's gradient formulas against autograd at a random Q (float64) for features of kind
    ``kind`` ("unit", "orth" or "gaussian"): relative max errors of the exact Gram formula
    (:func:`pair_gradients`), of App. C's orthonormal formula (:func:`lemma2_orthonormal`) and of that
    formula times s^4 (s = the feature norm), and s^4 itself."""

    V = make_features(kind, K, d, delta)
    batch = cosine_sampler(V, N, c).sample(prompts, make_generator(seed))
    fp = FeaturePrompts.from_batch(batch)
    model = QOnlyAttention(d, runs=1, init="normal", init_std=0.1).to(dtype=F64)
    (grad,) = torch.autograd.grad(mse_loss(model(batch), batch).sum(), model.Q)
    g_auto = -(V @ grad[0].T @ V.T)  # -v_k'^T grad v_k at [k, k']
    q = q_from_Q(model.Q.detach(), V)
    scale = float(g_auto.abs().max())
    gram = float((pair_gradients(q, fp, V @ V.T)[0] - g_auto).abs().max()) / scale
    paper = float((lemma2_orthonormal(q, fp)[0] - g_auto).abs().max()) / scale
    s4 = float((V[0] @ V[0]) ** 2)
    paper_s4 = float((s4 * lemma2_orthonormal(q, fp)[0] - g_auto).abs().max()) / scale
    return gram, paper, paper_s4, s4
