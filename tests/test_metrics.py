"""Metrics on attention and on trained score matrices."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icl_lab import QOnlyAttention, metrics
from icl_lab.data import random_orthonormal, random_subspace
from icl_lab.data.inputs import orthogonal_complement
from icl_lab.metrics import (accuracy, attention_by_feature, feature_attention_map, feature_space_weights,
                             mean_std, own_feature_attention, per_feature_loss, projection_energy, spectral_norm,
                             subspace_alignment)

from _helpers import F64, assert_close, gen, gens, linear_feature_sampler, randomize_


@pytest.mark.parametrize("with_runs", [False, True])
def test_attention_by_feature_sums_to_one_and_matches_a_loop(with_runs):
    K = 3
    sampler = linear_feature_sampler(K=K, d=4, N=6, num_queries=2)
    batch = sampler.sample_runs(5, gens([0, 1])) if with_runs else sampler.sample(5, gen(0))
    model = randomize_(QOnlyAttention(4, runs=2), 3)
    out = model(batch)
    mass = attention_by_feature(out.attn, batch.ids, K)
    assert mass.shape == (2, 5, 2, K)
    assert_close(mass.sum(-1), torch.ones(2, 5, 2, dtype=F64), atol=1e-12)
    ids = batch.ids if with_runs else batch.ids.expand(2, *batch.ids.shape)
    for r in range(2):
        for b in range(5):
            for j in range(2):
                for k in range(K):
                    expected = sum(out.attn[r, b, j, i] for i in range(6) if ids[r, b, i] == k)
                    assert_close(mass[r, b, j, k], torch.as_tensor(expected, dtype=F64).detach(), atol=1e-12)


def test_feature_attention_map_on_a_hand_built_example():
    ids = torch.tensor([[0, 0, 1], [0, 1, 1], [1, 1, 0]])
    query_ids = torch.tensor([[0], [0], [1]])
    attn = torch.tensor([[[[0.5, 0.3, 0.2]], [[0.1, 0.6, 0.3]], [[0.25, 0.25, 0.5]]]], dtype=F64)  # (1, 3, 1, 3)
    # prompt 0 (query 0): mass (0.8, 0.2); prompt 1 (query 0): (0.1, 0.9); prompt 2 (query 1): (0.5, 0.5)
    expected = torch.tensor([[[0.45, 0.55], [0.5, 0.5]]], dtype=F64)
    assert_close(feature_attention_map(attn, ids, query_ids, 2), expected, atol=1e-15)
    assert_close(own_feature_attention(attn, ids, query_ids, 2), torch.tensor([[0.45, 0.5]], dtype=F64), atol=1e-15)
    # a third feature never queried: its row is NaN; it receives no mass
    m3 = feature_attention_map(attn, ids, query_ids, 3)
    assert torch.isnan(m3[0, 2]).all()
    assert_close(m3[0, :2, :2], expected[0], atol=1e-15)
    assert (m3[0, :2, 2] == 0).all()


def test_per_feature_loss_matches_a_loop():
    K, R, B, m = 3, 2, 40, 2
    g = gen(5)
    pred = torch.randn(R, B, m, generator=g, dtype=F64)
    target = torch.randn(B, m, generator=g, dtype=F64)
    qids = torch.randint(0, K, (B, m), generator=g)
    got = per_feature_loss(pred, target, qids, K)
    assert got.shape == (R, K)
    for r in range(R):
        for k in range(K):
            errs = [0.5 * (pred[r, b, j] - target[b, j]) ** 2 for b in range(B) for j in range(m) if qids[b, j] == k]
            assert_close(got[r, k], torch.stack(errs).mean(), atol=1e-12)
    # the query-weighted average of L_k is the overall loss
    freq = torch.bincount(qids.reshape(-1), minlength=K).to(F64) / (B * m)
    assert_close((got * freq).sum(-1), (0.5 * (pred - target) ** 2).mean(dim=(1, 2)), atol=1e-12)


def test_feature_space_weights_entries_are_v_n_M_v_k():
    K, d = 3, 5
    V = random_orthonormal(K, d, gen(6))
    M = torch.randn(2, d, d, generator=gen(7), dtype=F64)
    S = feature_space_weights(M, V)
    assert S.shape == (2, K, K)
    for r in range(2):
        for n in range(K):
            for k in range(K):
                assert_close(S[r, n, k], V[n] @ M[r] @ V[k], atol=1e-12)


def test_subspace_alignment_and_projection_energy():
    d, k = 6, 2
    B = random_subspace(d, k, gen(8))
    P = B @ B.T
    assert_close(subspace_alignment(3.0 * P, B), torch.tensor(0.0, dtype=F64), atol=1e-12)
    assert_close(subspace_alignment(torch.eye(d, dtype=F64), B), torch.tensor(1.0, dtype=F64), atol=1e-12)
    # M = B diag(2, 4) B^T + 0.5 B_perp B_perp^T: rho = 0.5 / sigma_min(diag(2, 4)) = 0.25
    Bp = orthogonal_complement(B)
    M = B @ torch.diag(torch.tensor([2.0, 4.0], dtype=F64)) @ B.T + 0.5 * Bp @ Bp.T
    assert_close(subspace_alignment(M, B), torch.tensor(0.25, dtype=F64), atol=1e-12)
    batch = torch.stack([3.0 * P, torch.eye(d, dtype=F64), M])
    assert_close(subspace_alignment(batch, B), torch.tensor([0.0, 1.0, 0.25], dtype=F64), atol=1e-12)
    assert_close(projection_energy(3.0 * P, B), torch.tensor(1.0, dtype=F64), atol=1e-12)
    assert_close(projection_energy(torch.eye(d, dtype=F64), B), torch.tensor(math.sqrt(k / d), dtype=F64), atol=1e-12)


def test_spectral_norm_is_the_largest_singular_value():
    M = torch.randn(4, 5, 5, generator=gen(9), dtype=F64)
    assert_close(spectral_norm(M), torch.linalg.svdvals(M)[..., 0], atol=1e-12)
    assert_close(spectral_norm(torch.diag(torch.tensor([1.0, -3.0, 2.0], dtype=F64))),
                 torch.tensor(3.0, dtype=F64), atol=1e-12)


def test_accuracy_and_mean_std():
    pred = torch.tensor([[[0.3], [-2.0], [0.1], [-0.1]]], dtype=F64)
    target = torch.tensor([[1.0], [-1.0], [-1.0], [-1.0]], dtype=F64)
    assert_close(accuracy(pred, target), torch.tensor([0.75], dtype=F64))
    m, s = mean_std(torch.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=F64))
    assert_close(m, torch.tensor([2.0, 4.0], dtype=F64))
    assert_close(s, torch.tensor([1.0, 2.0], dtype=F64))


def test_first_crossing_conventions():
    """One first-crossing for every caller: index or time of the first record at the level, from below or above,
    per run; NaN (or the caller's ``never``) where it is never reached; optional interpolation and ``after``."""
    s = torch.tensor([[0.1, 0.0], [0.4, 0.2], [0.9, 0.3]], dtype=torch.float64)
    t = metrics.first_crossing(s, 0.35)
    assert t.dtype == torch.float64 and t[0] == 1 and math.isnan(float(t[1]))
    acc = torch.tensor([[0.5, 0.5], [0.96, 0.5], [0.97, 0.6]])
    h = metrics.first_crossing(acc, 0.95, times=[0, 10, 20])
    assert h[0] == 10 and math.isnan(float(h[1]))
    assert float(metrics.first_crossing(np.array([3.0, 2.0, 0.5, 0.1]), 0.5, below=True, times=[0, 10, 20, 30])) == 20.0
    assert float(metrics.first_crossing(np.array([3.0, 2.0]), 0.5, below=True, times=[0, 10], never=math.inf)) == math.inf
    tau = np.arange(5.0)
    f = np.array([-2, -1, 1, 2, 3.0])
    assert float(metrics.first_crossing(f, 0.0, times=tau, interpolate=True)) == 1.5  # (-1 -> 1 between tau 1 and 2)
    assert float(metrics.first_crossing(np.array([1.0, 2.0]), 0.0, times=[3.0, 4.0], interpolate=True)) == 3.0
    assert math.isnan(float(metrics.first_crossing(-np.ones(5), 0.0, times=tau, interpolate=True)))
    g = np.array([1.0, -1.0, -1.0, 1.0, 1.0])  # reached at tau 0, then again from tau 3 on
    assert float(metrics.first_crossing(g, 0.0, times=tau, interpolate=True, after=0.5)) == 2.5
    assert float(metrics.first_crossing(g, 0.0, times=tau, interpolate=True, after=2.5)) == 3.0  # no line before `after`
    # float32 series are compared in float32: 0.1 (float32) counts as reaching the Python float 0.1
    assert float(metrics.first_crossing(torch.tensor([0.0, 0.1]), 0.1)) == 1.0
    with pytest.raises(ValueError, match="one entry per record"):
        metrics.first_crossing(s, 0.35, times=[0, 1])
