"""Samplers: input laws, feature dictionaries, task families and prompts.

Statistical checks compare empirical moments with their exact values within 5 standard errors
(computed from the law itself), with fixed seeds so the outcome is deterministic."""
from __future__ import annotations

import math

import pytest
import torch

from icl_lab.data import (AffineTask, CosineFeatureTask, CosineTask, HillsTask, LinearTask, PromptBatch,
                          PromptSampler, QuadraticTask, TwoReLUTask, anisotropic_sphere, categorical,
                          estimate_lipschitz, from_gram, gaussian, gram, low_rank_covariates, orthonormal_patterns,
                          random_orthonormal, random_subspace, separated, sphere, standard_basis)

from _helpers import (F64, assert_close, frequency_bound, gen, gens, linear_feature_sampler, mean_bound, pair_sampler,
                      std_bound)


# ============================================================================ input laws
def test_categorical_frequencies_match_imbalanced_p():
    p = torch.tensor([0.8, 0.1, 0.1], dtype=F64)
    n = 100_000
    ids = categorical(p, (n,), gen(0))
    assert ids.dtype == torch.long and ids.shape == (n,)
    assert int(ids.min()) >= 0 and int(ids.max()) <= 2
    freq = torch.bincount(ids, minlength=3).to(F64) / n
    assert ((freq - p).abs() <= frequency_bound(p, n)).all(), (freq, p)


def test_categorical_shape_and_zero_probability_category():
    ids = categorical([0.5, 0.0, 0.5], (200, 7), gen(1))
    assert ids.shape == (200, 7)
    assert not (ids == 1).any()  # a category of probability 0 is never drawn
    assert (ids == 0).any() and (ids == 2).any()


def test_categorical_is_deterministic_given_the_generator():
    a = categorical([0.2, 0.3, 0.5], (1000,), gen(3))
    b = categorical([0.2, 0.3, 0.5], (1000,), gen(3))
    c = categorical([0.2, 0.3, 0.5], (1000,), gen(4))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_sphere_samples_have_unit_norm_zero_mean_and_isotropic_second_moment():
    n, d = 50_000, 5
    x = sphere(n, d, gen(2))
    assert x.shape == (n, d) and x.dtype == F64
    assert_close(x.norm(dim=-1), torch.ones(n, dtype=F64), atol=1e-12)
    # each coordinate of a uniform point on S^{d-1}: mean 0, E x_j^2 = 1/d, E x_j^4 = 3/(d(d+2))
    assert (x.mean(0).abs() <= mean_bound(math.sqrt(1 / d), n)).all()
    sd_sq = math.sqrt(3 / (d * (d + 2)) - 1 / d**2)
    assert ((x**2).mean(0) - 1 / d).abs().max() <= mean_bound(sd_sq, n)


def test_sphere_accepts_multi_dimensional_shapes():
    x = sphere((4, 6), 3, gen(0))
    assert x.shape == (4, 6, 3)
    assert_close(x.norm(dim=-1), torch.ones(4, 6, dtype=F64), atol=1e-12)


def test_anisotropic_sphere_unit_norm_and_weighted_towards_last_axis():
    n, d = 20_000, 4
    x = anisotropic_sphere(n, d, gen(5))
    assert x.shape == (n, d)
    assert_close(x.norm(dim=-1), torch.ones(n, dtype=F64), atol=1e-12)
    # S_d = diag(1..d) stretches the last axis d times more than the first: E x_d^2 > E x_1^2
    x1, xd = x[:, 0] ** 2, x[:, -1] ** 2
    diff = xd - x1
    assert diff.mean() > mean_bound(float(diff.std()), n)


def test_low_rank_covariates_decomposition():
    d, k = 6, 2
    B = random_subspace(d, k, gen(7))
    assert_close(B.T @ B, torch.eye(k, dtype=F64), atol=1e-12)
    c_u, c_v = 0.5, 2.0
    x = low_rank_covariates(1000, B, gen(8), c_u=c_u, c_v=c_v)
    assert x.shape == (1000, d)
    in_B = x @ B  # B^T x
    off_B = x - in_B @ B.T  # the B_perp component, without relying on the library's B_perp
    assert_close(in_B.norm(dim=-1), torch.full((1000,), c_u, dtype=F64), atol=1e-12)
    assert_close(off_B.norm(dim=-1), torch.full((1000,), c_v, dtype=F64), atol=1e-12)
    # the directions vary (u ~ U^k): not a constant vector
    assert in_B.std(0).min() > 0.1


def test_gaussian_with_covariance():
    n = 40_000
    cov = torch.tensor([[2.0, 0.6], [0.6, 1.0]], dtype=F64)
    z = gaussian(n, 2, gen(9), cov=cov)
    emp = z.T @ z / n
    # Var(z_i z_j) = cov_ii cov_jj + cov_ij^2 for a centred Gaussian
    se = torch.sqrt((torch.outer(cov.diagonal(), cov.diagonal()) + cov**2) / n)
    assert ((emp - cov).abs() <= 5 * se).all(), emp


# ============================================================================ features
def test_standard_basis_and_random_orthonormal_are_orthonormal():
    V = standard_basis(3, 5)
    assert V.shape == (3, 5)
    assert torch.equal(V, torch.eye(5, dtype=F64)[:3])
    for seed in (0, 1):
        R = random_orthonormal(4, 7, gen(seed))
        assert R.shape == (4, 7)
        assert_close(R @ R.T, torch.eye(4, dtype=F64), atol=1e-12)
    assert torch.equal(random_orthonormal(4, 7, gen(3)), random_orthonormal(4, 7, gen(3)))
    assert not torch.allclose(random_orthonormal(4, 7, gen(3)), random_orthonormal(4, 7, gen(4)))
    assert_close(gram(standard_basis(3, 5, scale=2.0)), 4 * torch.eye(3, dtype=F64))


@pytest.mark.parametrize("kind", ["orth", "random"])
def test_separated_features_have_pairwise_distance_delta(kind):
    K, d, delta = 5, 8, 0.7
    V = separated(K, d, delta, kind=kind, generator=gen(11))
    dist = torch.cdist(V, V)
    off = ~torch.eye(K, dtype=torch.bool)
    assert_close(dist[off], torch.full((K * (K - 1),), delta, dtype=F64), atol=1e-12)
    assert_close(V.norm(dim=-1), torch.full((K,), delta / math.sqrt(2), dtype=F64), atol=1e-12)


def test_separated_gaussian_has_norm_delta_over_sqrt2():
    V = separated(5, 8, 0.7, kind="gaussian", generator=gen(12))
    assert_close(V.norm(dim=-1), torch.full((5,), 0.7 / math.sqrt(2), dtype=F64), atol=1e-12)


@pytest.mark.parametrize("d", [None, 7])
def test_from_gram_reproduces_G(d):
    A = torch.randn(4, 2, generator=gen(13), dtype=F64)
    G = A @ A.T + torch.diag(torch.tensor([0.0, 0.5, 0.0, 1.0], dtype=F64))  # PSD, partly degenerate
    V = from_gram(G, d)
    assert V.shape == (4, 4 if d is None else d)
    assert_close(gram(V), G, atol=1e-12)


def test_orthonormal_patterns_norm():
    P = orthonormal_patterns(3, 6, norm=2.0, generator=gen(0))
    assert_close(P @ P.T, 4 * torch.eye(3, dtype=F64), atol=1e-12)


# ============================================================================ tasks
def test_linear_task_weights_have_zero_mean_and_identity_covariance():
    d, n = 4, 20_000
    w = LinearTask(d).sample(n, gen(14))["w"]
    assert w.shape == (n, d)
    assert (w.mean(0).abs() <= mean_bound(1.0, n)).all()
    C = w.T @ w / n
    # Var(w_i w_j) = 1 off the diagonal and Var(w_i^2) = 2 on it
    se = torch.full((d, d), 1.0, dtype=F64) + torch.eye(d, dtype=F64)
    assert ((C - torch.eye(d, dtype=F64)).abs() <= 5 * torch.sqrt(se / n)).all(), C


def test_linear_task_evaluates_inner_product():
    task = LinearTask(3)
    params = task.sample(2, gen(0))
    x = torch.randn(2, 5, 3, generator=gen(1), dtype=F64)
    expected = torch.stack([x[i] @ params["w"][i] for i in range(2)])
    assert_close(task.evaluate(params, x), expected, atol=1e-12)


def _close_pairs(n: int, d: int, eps: float, g: torch.Generator) -> torch.Tensor:
    """n Gaussian base points, each with a partner at distance eps in a uniform random direction."""
    base = gaussian(n, d, g)
    return torch.cat([base, base + eps * sphere(n, d, g)])


# Families whose every member is exactly L-Lipschitz (the gradient attains norm L somewhere).
TIGHT_FAMILIES = [
    pytest.param(lambda: CosineFeatureTask(2, L=3.0), id="cosine_feature"),
    pytest.param(lambda: CosineTask(2, L=3.0), id="cosine"),
]
# Families whose members have slope |l| <= L with l ~ U[-L, L].
SLOPE_FAMILIES = [
    pytest.param(lambda: AffineTask(2, L=3.0), id="affine"),
    pytest.param(lambda: TwoReLUTask(2, L=3.0), id="two_relu"),
]


@pytest.mark.parametrize("make", TIGHT_FAMILIES + SLOPE_FAMILIES)
def test_empirical_lipschitz_never_exceeds_L(make):
    fam = make()
    x = _close_pairs(200, 2, 1e-3, gen(15))
    est = estimate_lipschitz(fam, x, gen(16), n_tasks=64)
    assert est.shape == (64,)
    # a difference quotient can exceed L only by rounding: |f| <= 6, eps = 1e-3 -> ~1e-12
    assert (est <= fam.lipschitz * (1 + 1e-9)).all(), est.max()


@pytest.mark.parametrize("make", TIGHT_FAMILIES)
def test_empirical_lipschitz_is_close_to_L_for_tight_families(make):
    """With 200 close pairs in random directions in d = 2, the chance that no pair has both
    |sin(.)| > 0.9 (prob ~0.29 for a spread phase) and |cos(angle to w)| > 0.9 (prob ~0.29) is about
    (1 - 0.08)^200 ~ 5e-8 per task, so every task's estimate is >= 0.81 L (we assert 0.8 L)."""
    fam = make()
    L = fam.lipschitz
    x = _close_pairs(200, 2, 1e-3, gen(17))
    est = estimate_lipschitz(fam, x, gen(18), n_tasks=64)
    assert est.min() >= 0.8 * L, est.min()


@pytest.mark.parametrize("make", SLOPE_FAMILIES)
def test_empirical_lipschitz_matches_each_tasks_slope(make):
    """Affine: Lipschitz constant |l|; two-ReLU: max(|l1|, |l2|).  The estimate is at most that and,
    with 200 random pair directions (probability ~0.1 each to lie within angle 0.32 rad of +-w on the
    steeper side), at least 0.95 of it except with probability ~0.9^200 ~ 1e-9 per task."""
    fam = make()
    x = _close_pairs(200, 2, 1e-3, gen(19))
    est = estimate_lipschitz(fam, x, gen(20), n_tasks=64)
    params = fam.sample(64, gen(20))  # the same draws estimate_lipschitz made
    if "l" in params:
        slope = params["l"].abs()
    else:
        slope = torch.maximum(params["l1"].abs(), params["l2"].abs())
    assert (est <= slope * (1 + 1e-9)).all()
    assert (est >= 0.95 * slope).all(), (est / slope).min()
    # over 64 tasks the largest |l| ~ U[0, L] exceeds 0.9 L except with probability 0.9^64 ~ 1e-3
    # (two_relu: 0.81^64): the family's constant L is approached
    assert est.max() >= 0.9 * 0.95 * fam.lipschitz


def test_quadratic_task_coefficients_have_std_L_over_d():
    d, L, n = 3, 1.5, 2000
    fam = QuadraticTask(d, L)
    assert fam.lipschitz is None
    params = fam.sample(n, gen(21))
    s = L / d
    for name, numel in (("A", n * d * d), ("b", n * d)):
        v = params[name].reshape(-1)
        assert v.numel() == numel
        assert abs(float(v.mean())) <= mean_bound(s, numel)
        assert abs(float(v.std()) - s) <= std_bound(s, numel), (name, float(v.std()))


def test_quadratic_task_evaluates_xAx_plus_bx():
    fam = QuadraticTask(3, 1.0)
    params = fam.sample(2, gen(0))
    x = torch.randn(2, 4, 3, generator=gen(1), dtype=F64)
    expected = torch.stack([torch.stack([x[i, j] @ params["A"][i] @ x[i, j] + params["b"][i] @ x[i, j]
                                         for j in range(4)]) for i in range(2)])
    assert_close(fam.evaluate(params, x), expected, atol=1e-12)


# ============================================================================ prompts
def test_counts_equal_one_hot_sums_and_sum_to_N():
    K, d, N, B = 4, 6, 9, 50
    V = standard_basis(K, d)
    sampler = PromptSampler.from_features(V, LinearTask(d), N, p=[0.4, 0.3, 0.2, 0.1])
    b = sampler.sample(B, gen(1))
    assert b.x.shape == (B, N, d) and b.x_query.shape == (B, 1, d) and b.y.shape == (B, N)
    assert torch.equal(b.x, V[b.ids]) and torch.equal(b.x_query, V[b.query_ids])
    manual = torch.stack([torch.bincount(b.ids[i], minlength=K) for i in range(B)])
    assert torch.equal(b.counts, manual)
    assert (b.counts.sum(-1) == N).all()
    runs = sampler.sample_runs(5, gens(range(3)))
    assert runs.counts.shape == (3, 5, K)
    assert (runs.counts.sum(-1) == N).all()
    for r in range(3):  # run r of sample_runs is what generator r alone draws
        assert torch.equal(runs.run(r).x, sampler.sample(5, gen(r)).x)


def test_feature_prompts_labels_follow_a_per_prompt_linear_task():
    sampler = linear_feature_sampler(K=4, d=4, N=12)  # features = the standard basis: y_i = w[ids_i]
    b = sampler.sample(30, gen(2))
    for i in range(30):
        # every label of a given feature in a prompt is the same number w_k (noiseless)
        for k in range(4):
            ys = b.y[i][b.ids[i] == k]
            if ys.numel() > 1:
                assert_close(ys, ys[:1].expand_as(ys), atol=0.0)
            if ys.numel() and int(b.query_ids[i, 0]) == k:
                assert_close(b.y_query[i, 0], ys[0], atol=0.0)


def test_label_noise_has_std_sigma_and_query_stays_noiseless():
    d, N, B, sigma = 3, 20, 5000, 0.3
    kw = dict(task=LinearTask(d), N=N, inputs=lambda s, g: sphere(s, d, g))
    noisy = PromptSampler(sigma=sigma, **kw).sample(B, gen(22))
    clean = PromptSampler(sigma=0.0, **kw).sample(B, gen(22))  # same stream up to the noise draw
    assert torch.equal(noisy.x, clean.x) and torch.equal(noisy.x_query, clean.x_query)
    assert torch.equal(noisy.y_query, clean.y_query)  # the target carries no noise
    e = (noisy.y - clean.y).reshape(-1)
    n = e.numel()
    assert abs(float(e.mean())) <= mean_bound(sigma, n)
    assert abs(float(e.std()) - sigma) <= std_bound(sigma, n), float(e.std())


def test_label_noise_with_a_single_feature_query_equals_clean_label():
    # K = 1: every token is v_1, so y_i - y_query is exactly the noise of demonstration i
    d, N, B, sigma = 3, 20, 5000, 0.5
    sampler = PromptSampler.from_features(standard_basis(1, d), LinearTask(d), N, sigma=sigma)
    b = sampler.sample(B, gen(23))
    e = (b.y - b.y_query).reshape(-1)
    n = e.numel()
    assert abs(float(e.mean())) <= mean_bound(sigma, n)
    assert abs(float(e.std()) - sigma) <= std_bound(sigma, n)
    clean = PromptSampler.from_features(standard_basis(1, d), LinearTask(d), N).sample(B, gen(23))
    assert torch.equal(clean.y, clean.y_query.expand_as(clean.y))


def test_hills_task_with_nu_zero_is_pure_noise():
    sampler = PromptSampler.from_inputs(lambda s, g: sphere(s, 2, g), HillsTask(0.0), 10, sigma=0.2)
    b = sampler.sample(3000, gen(24))
    assert torch.equal(b.y_query, torch.zeros_like(b.y_query))
    assert abs(float(b.y.std()) - 0.2) <= std_bound(0.2, b.y.numel())


def test_prompt_batch_embedding_standard():
    b = linear_feature_sampler(K=3, d=4, N=5, num_queries=2).sample(6, gen(25))
    E = b.embedding()
    assert E.shape == (6, 5 + 2, 4 + 1)
    assert torch.equal(E[:, :5, :4], b.x) and torch.equal(E[:, :5, 4], b.y)
    assert torch.equal(E[:, 5:, :4], b.x_query)
    assert (E[:, 5:, 4] == 0).all()


def test_prompt_batch_slice_run_stack_roundtrip():
    s = linear_feature_sampler()
    runs = s.sample_runs(6, gens([3, 4]))
    assert runs.has_runs and runs.num_runs == 2 and runs.batch_size == 6
    again = PromptBatch.stack([runs.run(0), runs.run(1)])
    assert torch.equal(again.x, runs.x) and torch.equal(again.ids, runs.ids)
    sl = runs.slice(2, 5)
    assert sl.batch_size == 3 and torch.equal(sl.y, runs.y[:, 2:5])
    f32 = runs.to(dtype=torch.float32)
    assert f32.x.dtype == torch.float32 and f32.ids.dtype == torch.long


# ---------------------------------------------------------------------------- classification prompts
def test_pair_sampler_pattern_frequencies_and_labels():
    alpha, l, B = 0.6, 20, 5000
    sampler = pair_sampler(alpha=alpha, l=l)
    b = sampler.sample(B, gen(26))
    assert b.x.shape == (B, l, 6) and b.y.shape == (B, l)
    assert b.x_query.shape == (B, 1, 6) and b.y_query.shape == (B, 1)
    tasks = sampler.tasks
    a = torch.tensor([tasks[i].a for i in b.task_ids])[:, None]
    bb = torch.tensor([tasks[i].b for i in b.task_ids])[:, None]
    n = B * l
    is_a, is_b = b.ids == a, b.ids == bb
    other = ~(is_a | is_b)
    freq = torch.stack([is_a.to(F64).mean(), is_b.to(F64).mean(), other.to(F64).mean()])
    p = torch.tensor([alpha / 2, alpha / 2, 1 - alpha], dtype=F64)
    assert ((freq - p).abs() <= frequency_bound(p, n)).all(), freq
    # the other patterns are uniform over the M1 - 2 = 2 remaining ones
    low = torch.tensor([min(set(range(4)) - {tasks[i].a, tasks[i].b}) for i in b.task_ids])[:, None]
    frac = (b.ids == low)[other].to(F64).mean()
    assert abs(float(frac) - 0.5) <= float(frequency_bound(0.5, int(other.sum())))
    # labels: +1 for a, -1 for b, a fair coin otherwise
    assert (b.y[is_a] == 1).all() and (b.y[is_b] == -1).all()
    assert set(b.y[other].unique().tolist()) == {-1.0, 1.0}
    pos = (b.y[other] == 1).to(F64).mean()
    assert abs(float(pos) - 0.5) <= float(frequency_bound(0.5, int(other.sum())))
    # queries carry a (label +1) or b (label -1), each with probability 1/2
    qa, qb = b.query_ids == a, b.query_ids == bb
    assert (qa | qb).all()
    assert (b.y_query[qa] == 1).all() and (b.y_query[qb] == -1).all()
    assert abs(float(qa.to(F64).mean()) - 0.5) <= float(frequency_bound(0.5, B))


def test_pair_sampler_inputs_carry_their_pattern():
    sampler = pair_sampler()
    b = sampler.sample(500, gen(27))
    for x, ids in ((b.x, b.ids), (b.x_query, b.query_ids)):
        proj = x @ sampler.mu.T  # tau = 0 and nu orthogonal to mu: proj = lambda e_pattern
        assert torch.equal(proj.abs().argmax(-1), ids)
        lam = proj.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        assert (lam >= 0.6 - 1e-12).all() and (lam <= 1.0 + 1e-12).all()
        kappa = x @ sampler.nu.T  # one irrelevant pattern with coefficient in [-kappa_max, kappa_max]
        assert ((kappa != 0).sum(-1) <= 1).all() and (kappa.abs() <= 0.5 + 1e-12).all()


def test_pair_sampler_noise_in_span_stays_in_span_with_norm_at_most_tau():
    tau = 0.2
    sampler = pair_sampler(tau=tau, noise_in_span=True, kappa_max=0.0)
    b = sampler.sample(200, gen(28))
    proj = b.x @ sampler.mu.T  # x = lambda mu_j + noise in span{mu}
    outside = (b.x - proj @ sampler.mu).norm(dim=-1)
    assert_close(outside, torch.zeros_like(outside), atol=1e-12)  # nothing outside span{mu}
    # the part off the token's own pattern is part of the noise: norm <= tau, and not always 0
    own = torch.nn.functional.one_hot(b.ids, sampler.M1).to(F64)
    off = (proj * (1 - own)).norm(dim=-1)
    assert (off <= tau + 1e-12).all() and off.max() > 0.5 * tau


def test_pair_sampler_embedding_label_part_is_y_times_q():
    sampler = pair_sampler(l=7)
    b = sampler.sample(40, gen(29))
    E = b.embedding()
    assert E.shape == (40, 8, 6 + 2)
    assert torch.equal(E[:, :7, :6], b.x) and torch.equal(E[:, 7:, :6], b.x_query)
    assert_close(E[:, :7, 6:], b.y.unsqueeze(-1) * sampler.q, atol=0.0)
    assert (E[:, 7:, 6:] == 0).all()


def test_hills_task_is_linear_on_the_circle_and_nu_lipschitz():
    """f(x) = nu cos(theta - b) = nu <(cos b, sin b), x> on the unit circle: exactly nu-Lipschitz."""
    nu = 2.5
    fam = HillsTask(nu)
    params = fam.sample(16, gen(30))
    x = sphere((16, 50), 2, gen(31))
    u = torch.stack([torch.cos(params["b"]), torch.sin(params["b"])], -1)
    assert_close(fam.evaluate(params, x), nu * (x * u[:, None]).sum(-1), atol=1e-12)
    base = sphere(200, 2, gen(32))
    partner = base + 1e-3 * sphere(200, 2, gen(33))
    pts = torch.cat([base, partner / partner.norm(dim=-1, keepdim=True)])  # close pairs on the circle
    est = estimate_lipschitz(fam, pts, gen(34), n_tasks=16)
    # a short chord is tangent to the circle; the slope along it is nu |sin(theta - b)|, which is >= 0.95
    # for a fraction ~0.2 of the 200 points: all miss with probability 0.8^200 ~ 4e-20 per task
    assert (est <= nu * (1 + 1e-9)).all() and (est >= 0.95 * nu).all()


def test_cosine_feature_task_without_phase():
    fam = CosineFeatureTask(3, L=2.0, c=0.5, random_phase=False)
    params = fam.sample(5, gen(35))
    assert (params["phi"] == 0).all()
    assert_close(fam.evaluate(params, torch.zeros(5, 1, 3, dtype=F64)), torch.full((5, 1), 4.0, dtype=F64))
