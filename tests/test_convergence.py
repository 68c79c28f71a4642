"""Unit tests for the convergence chapter's library code: icl_lab.dynamics and
icl_lab.papers.convergence.experiments (gradients vs autograd, reduced vs full dynamics, validation)."""
import math

import numpy as np
import pytest
import torch

import icl_lab
from icl_lab.data import LinearTask, PromptSampler, random_orthonormal
from icl_lab.papers.convergence import (CountLaw, SymmetricColumn, feature_losses, gradient, initial_gradient_mean_field,
                              loss_floor, phase_times, population_gd, total_loss)
from icl_lab.papers.convergence.phases import last_holding
from icl_lab.papers.convergence import experiments as cv

D = torch.float64


def _batch(K=4, d=6, N=12, B=300, seed=0, p=None):
    g = icl_lab.make_generator(seed)
    V = random_orthonormal(K, d, g)
    return V, PromptSampler.from_features(V, LinearTask(d), N=N, p=p).sample(B, g)


def test_exact_law_is_a_multinomial():
    p = torch.tensor([0.5, 0.3, 0.2], dtype=D)
    law = CountLaw.exact(7, p)
    assert law.size == math.comb(9, 2)
    assert torch.allclose(law.weights.sum(), torch.tensor(1.0, dtype=D))
    assert torch.allclose((law.counts * law.weights[:, None]).sum(0), 7 * p)
    assert torch.allclose(law.zero_count_probability(), (1 - p) ** 7)


def test_monte_carlo_counts_sum_to_N_and_are_seeded():
    p = torch.tensor([0.6, 0.3, 0.1], dtype=D)
    a = CountLaw.monte_carlo(50, p, 400, icl_lab.make_generator(3))
    b = CountLaw.monte_carlo(50, p, 400, icl_lab.make_generator(3))
    assert torch.equal(a.counts, b.counts)
    assert (a.counts.sum(1) == 50).all()
    assert torch.allclose(a.counts.mean(0) / 50, p, atol=0.02)


def test_gradient_matches_autograd_of_marginalized_loss():
    V, batch = _batch()
    model = icl_lab.QOnlyAttention(6, runs=1, init="normal", init_std=0.4).to(dtype=D)
    (auto,) = torch.autograd.grad(cv.marginalized_loss(model(batch), batch).sum(), model.Q)
    S = V @ model.Q.detach()[0] @ V.T
    law = CountLaw.empirical(batch.counts, batch.query_ids[:, 0], 4)
    G = gradient(S, law)
    assert torch.allclose(-(V @ auto[0] @ V.T), G, atol=1e-13)
    # loss agrees as well (Lemma C.6 per prompt)
    with torch.no_grad():
        Lm = cv.marginalized_loss(model(batch), batch)[0]
    assert torch.allclose(Lm, (feature_losses(S, law) * law.p).sum(), atol=1e-13)


def test_mean_field_initial_gradient_closed_forms():
    for K in (5, 40):
        G = gradient(torch.zeros(K, K), CountLaw.mean_field(torch.full((K,), 1.0 / K, dtype=D)))
        assert math.isclose(float(G[0, 0]), (K - 1) / K**3, rel_tol=1e-12)
        assert math.isclose(float(G[1, 0]), -1 / K**3, rel_tol=1e-12)
    p = torch.tensor([0.8, 0.1, 0.1], dtype=D)
    G = gradient(torch.zeros(3, 3), CountLaw.mean_field(p))
    assert torch.allclose(G, initial_gradient_mean_field(p)["G"], atol=1e-15)
    assert abs(float(G[1, 1]) - 0.0146) < 1e-4 and abs(float(G[0, 1]) + 0.0192) < 1e-4 and float(G[2, 1]) > 0


def test_column_decoupling_and_alpha_nonnegative():
    p = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=D)
    law = CountLaw.exact(10, p)
    S = torch.randn(4, 4, generator=icl_lab.make_generator(1), dtype=D)
    S2 = S.clone()
    S2[:, 2] += torch.tensor([1.0, -0.5, 0.3, 0.0], dtype=D)  # a constant shift would not change the softmax
    dG = gradient(S2, law) - gradient(S, law)
    assert float(dG[:, [0, 1, 3]].abs().max()) == 0.0
    assert float(dG[:, 2].abs().max()) > 1e-4
    assert (torch.diagonal(gradient(S, law)) >= 0).all()


def test_loss_floor_formula_and_total_loss():
    p = torch.tensor([0.8, 0.1, 0.1], dtype=D)
    fl = loss_floor(60, p)
    assert math.isclose(float(fl[1]), 0.75 * 0.9**60, rel_tol=1e-12)
    assert float(loss_floor(math.inf, p).abs().max()) == 0.0
    law = CountLaw.exact(60, p)
    assert torch.allclose(total_loss(torch.zeros(3, 3), law), (feature_losses(torch.zeros(3, 3), law) * p).sum())


def test_full_model_gd_equals_reduced_gd_float64():
    res = cv.run_full_vs_reduced(cv.FullVsReducedConfig(K=3, d=5, N=10, prompts=128, steps=20, eta=2.0))
    assert res.max_diff_marginalized < 1e-12
    assert res.off_span < 1e-12
    assert res.min_alpha >= 0


def test_symmetric_column_equals_full_S_dynamics():
    col = SymmetricColumn.under_represented(8, 0.5)
    tr = col.gd(2.0, 200.0, record_every=1)
    full = population_gd(CountLaw.mean_field(torch.as_tensor(col.p)), eta=2.0, steps=100, record_every=100)
    assert np.allclose(full.S[-1][:, 1].numpy(), col.full_S_column(tr.s[-1]), atol=1e-12)
    # Monte-Carlo columns average the same way: compare against the exact enumeration for K = 3
    p = torch.tensor([0.6, 0.2, 0.2], dtype=D)
    law = CountLaw.exact(15, p)
    colx = SymmetricColumn(p, 1, {"target": [1], "dominant": [0], "others": [2]}, law=law)
    trx = colx.gd(1.0, 30.0, record_every=30)
    fullx = population_gd(law, eta=1.0, steps=30, record_every=30)
    assert np.allclose(fullx.S[-1][:, 1].numpy(), colx.full_S_column(trx.s[-1]), atol=1e-12)
    assert np.isclose(float(fullx.losses[-1][1]), trx.loss[-1], atol=1e-12)


def test_flow_matches_gd_at_small_eta_and_phase_order():
    col = SymmetricColumn.under_represented(20, 0.5)
    flow = col.flow(5000.0, stop_gap=0.01 * 0.999)
    gd = col.gd(1.0, 1e9, stop_gap=0.01 * 0.999)
    tf, tg = phase_times(flow, 0.01), phase_times(gd, 0.01)
    assert tf["T1"] < tf["T2"] < tf["T3"] < tf["T4"]
    for key in ("T1", "T2", "T3", "T4"):
        assert abs(tf[key] - tg[key]) / tf[key] < 0.01
    assert abs(tf["T1"] - 816.3) < 1.0  # a pilot value (mean field, K = 20, p1 = 0.5)


def test_dormand_prince_tableau_meets_its_order_conditions():
    from icl_lab.papers.convergence.reduced import DORMAND_PRINCE as dp

    c = np.asarray(dp.c)
    for i, row in enumerate(dp.A):  # consistency: each stage's weights sum to its node
        assert sum(row) == pytest.approx(c[i], abs=1e-14)
    assert len(dp.b) == len(dp.b_star) == len(c) == len(dp.A) + 1
    # quadrature conditions sum_i b_i c_i^q = 1/(q+1): up to q = 4 for b (order 5), q = 3 for b_star
    assert [np.dot(dp.b, c**q) for q in range(5)] == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5], abs=1e-14)
    assert [np.dot(dp.b_star, c**q) for q in range(4)] == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4], abs=1e-14)
    assert abs(np.dot(dp.b_star, c**4) - 1 / 5) > 1e-6  # the embedded solution is one order lower
    assert sum(dp.error) == pytest.approx(0, abs=1e-15)


def test_phase_helpers():
    tau = np.arange(5.0)
    assert last_holding(tau, np.array([-1, -1, 1, -1, 1.0])) == pytest.approx(3.5)
    assert math.isnan(last_holding(tau, np.array([1, 1, 1, 1, -1.0])))


@pytest.mark.parametrize("cls, bad", [
    (cv.IdentitiesConfig, dict(K=20, d=8)),
    (cv.FullVsReducedConfig, dict(eta=-1.0)),
    (cv.TheoryModelConfig, dict(p1=1.2)),
    (cv.ReplicaConfig, dict(snapshots=(500,))),
    (cv.SweepConfig, dict(p1_main=0.4)),
    (cv.PortraitConfig, dict(K=2)),
    (cv.FiniteNConfig, dict(N_values=(0,))),
    (cv.EtaCheckConfig, dict(etas=(0.0,))),
    (cv.UnseenWConfig, dict(steps=(0,))),
])
def test_configs_validate(cls, bad):
    with pytest.raises(icl_lab.ConfigError):
        cls(**bad)


def test_law_validation():
    with pytest.raises(icl_lab.ConfigError, match="count vectors"):
        CountLaw.exact(1000, torch.full((10,), 0.1, dtype=D))
    with pytest.raises(icl_lab.ConfigError, match="p"):
        CountLaw.mean_field([0.5, 0.6])
    with pytest.raises(icl_lab.ConfigError, match="generator"):
        SymmetricColumn.balanced(5, N=100)
    with pytest.raises(icl_lab.ConfigError, match="S"):
        gradient(torch.zeros(3, 4), CountLaw.mean_field([0.5, 0.5]))


def test_registry_lists_convergence_experiments():
    from icl_lab.registry import all_experiments

    names = [n for n in all_experiments() if n.startswith("convergence.")]
    assert {"convergence.identities", "convergence.sweep", "convergence.replica"} <= set(names)


def test_too_few_prompts_for_every_feature_are_refused_before_training():
    """The per-feature losses average over the prompts whose query has that feature: with a single
    prompt the other features would be NaN, which the store would take for a diverged run."""
    from icl_lab.params import ConfigError
    from icl_lab.papers.convergence.experiments import ReplicaConfig, run_replica

    for field in ("train_prompts", "test_prompts"):
        with pytest.raises(ConfigError, match=f"^{field} must be >= K=3: each prompt queries one feature"):
            ReplicaConfig.for_scale("ci", **{field: 1})  # fewer prompts than features: refused when built
        with pytest.raises(ConfigError, match=f"^{field}=3 leaves feature"):  # a draw that misses one
            run_replica(ReplicaConfig.for_scale("ci", **{field: 3}))


def test_the_adam_box_optimum():
    from icl_lab.papers.convergence import theory as th

    law = CountLaw.exact(20, th.p_for("imbalanced", 3, 0.8))
    box = th.best_box_column(law, bound=0.8, points=9)
    assert box["L2"] == min(box["losses"]) and -0.8 <= box["b23"] <= 0.8
    S, L = th.box_column_loss(box["b23"], law)
    assert float(S[1, 1]) == 0.8 and float(S[0, 1]) == -0.8 and L == box["L2"]
