"""Baseline in-context predictors."""
from __future__ import annotations

import pytest
import torch

from icl_lab import BilinearAttention, ConfigError, QOnlyAttention
from icl_lab.baselines import (bayes_linear_feature_predictor, context_average, knn, least_squares,
                               linear_attention_optimum, nadaraya_watson, ridge)
from icl_lab.train import mse_loss, per_run_loss

from _helpers import F64, assert_close, gen, linear_feature_sampler, sphere_linear_sampler


def test_nadaraya_watson_is_softmax_attention_with_M_2_over_h():
    """On the unit sphere x_i^T x_q = 1 - ||x_i - x_q||^2 / 2, so exp(-||.||^2 / h) ∝ exp((2/h) x_i^T x_q)."""
    d = 3
    batch = sphere_linear_sampler(d=d, N=10, num_queries=3).sample(6, gen(0))
    for h in (0.1, 0.5, 2.0):
        model = QOnlyAttention(d, runs=1)
        with torch.no_grad():
            model.Q.copy_(2.0 / h * torch.eye(d, dtype=F64))
        nw = nadaraya_watson(batch.x, batch.y, batch.x_query, h)
        assert nw.shape == (6, 3)
        assert_close(nw, model(batch).pred[0], atol=1e-12)
    # other bandwidths give other predictions (the convention is not vacuous)
    assert not torch.allclose(nadaraya_watson(batch.x, batch.y, batch.x_query, 0.1),
                              nadaraya_watson(batch.x, batch.y, batch.x_query, 2.0))


def test_knn_with_k1_returns_the_nearest_label_and_k_N_the_average():
    g = gen(1)
    x = torch.randn(4, 9, 2, generator=g, dtype=F64)
    y = torch.randn(4, 9, generator=g, dtype=F64)
    xq = torch.randn(4, 3, 2, generator=g, dtype=F64)
    pred = knn(x, y, xq, 1)
    for b in range(4):
        for j in range(3):
            nearest = min(range(9), key=lambda i: float(((x[b, i] - xq[b, j]) ** 2).sum()))
            assert pred[b, j] == y[b, nearest]
    assert_close(knn(x, y, xq, 9), context_average(x, y, xq), atol=1e-12)
    # k = 2: the mean of the two nearest labels
    d = torch.cdist(xq, x)
    idx = d.argsort(-1)[..., :2]
    assert_close(knn(x, y, xq, 2), torch.gather(y.unsqueeze(1).expand(4, 3, 9), -1, idx).mean(-1), atol=1e-12)


def test_ridge_and_least_squares_recover_noiseless_linear_tasks():
    g = gen(2)
    B, N, d = 5, 8, 4  # N >= d: the design has full column rank
    x = torch.randn(B, N, d, generator=g, dtype=F64)
    w = torch.randn(B, d, generator=g, dtype=F64)
    xq = torch.randn(B, 2, d, generator=g, dtype=F64)
    y = torch.einsum("bnd,bd->bn", x, w)
    truth = torch.einsum("bmd,bd->bm", xq, w)
    assert_close(least_squares(x, y, xq), truth, atol=1e-10)
    assert_close(ridge(x, y, xq, 0.0), truth, atol=1e-10)
    # affine tasks with an intercept
    c = torch.randn(B, 1, generator=g, dtype=F64)
    assert_close(ridge(x, y + c, xq, 0.0, fit_intercept=True), truth + c, atol=1e-10)
    # lam > 0: the textbook formula (X^T X + lam I)^{-1} X^T y, which shrinks towards 0
    lam = 3.0
    wl = torch.stack([torch.linalg.solve(x[b].T @ x[b] + lam * torch.eye(d, dtype=F64), x[b].T @ y[b])
                      for b in range(B)])
    assert_close(ridge(x, y, xq, lam), torch.einsum("bmd,bd->bm", xq, wl), atol=1e-10)
    assert (wl.norm(dim=-1) < w.norm(dim=-1)).all()


def test_linear_attention_optimum_beats_other_M_and_is_stationary():
    d = 3
    batch = sphere_linear_sampler(d=d, N=8, num_queries=2).sample(300, gen(3))
    M_star, loss_star = linear_attention_optimum(batch)
    assert M_star.shape == (d, d)

    def loss_at(M):
        model = BilinearAttention(d, runs=1, activation="linear", init="zero")
        with torch.no_grad():
            model.Q.copy_(M)
        model.zero_grad()
        loss = mse_loss(model(batch), batch)[0]
        loss.backward()
        return loss.detach(), model.Q.grad[0]

    l_star, g_star = loss_at(M_star)
    assert_close(l_star, loss_star, atol=1e-12)  # the returned loss is the model's loss at M*
    l_zero, g_zero = loss_at(torch.zeros(d, d, dtype=F64))
    assert l_star <= l_zero
    for seed in range(3):
        l_rand, _ = loss_at(M_star + 0.1 * torch.randn(d, d, generator=gen(10 + seed), dtype=F64))
        assert l_star <= l_rand
    # the gradient of the empirical loss vanishes at the least-squares solution (to rounding)
    assert g_star.abs().max() <= 1e-10 * g_zero.abs().max()


def test_linear_attention_optimum_rejects_run_batches():
    batch = sphere_linear_sampler(d=3).sample_runs(4, [gen(0), gen(1)])
    with pytest.raises(ConfigError, match="run"):
        linear_attention_optimum(batch)


def test_bayes_predictor_is_exact_when_the_query_feature_is_in_context():
    K = 4
    batch = linear_feature_sampler(K=K, d=K, N=5).sample(400, gen(4))  # P(feature absent) = (3/4)^5
    pred = bayes_linear_feature_predictor(batch)
    assert pred.shape == (400, 1)
    present = (batch.ids == batch.query_ids).any(-1)  # (B, 1)
    assert present.any() and (~present).any()
    assert_close(pred[present], batch.y_query[present], atol=1e-14)
    assert (pred[~present] == 0).all()
    # it is the best predictor: no worse than attention at uniform weights
    base = per_run_loss(QOnlyAttention(K, runs=1), batch)[0]
    bayes = 0.5 * ((pred - batch.y_query) ** 2).mean()
    assert bayes < base
