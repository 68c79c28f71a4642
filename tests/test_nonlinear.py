"""Nonlinear-regression chapter (Li, Duan, Liang): exact feature-space dynamics against the full
Q-only model and autograd, the L-eta rescaling, the data helpers and config validation."""
from __future__ import annotations

import math

import pytest
import torch

from icl_lab import ConfigError, QOnlyAttention, make_generator, metrics
from icl_lab.data import PromptBatch, estimate_lipschitz, standard_basis
from icl_lab.papers.nonlinear import experiments as nl
from icl_lab.papers.nonlinear import theory as th
from icl_lab.train import mse_loss, train

from _helpers import F64, assert_close


def _prompts(V, N=12, B=40, L=1.0, seed=0):
    samp = nl.cosine_sampler(V, N, 0.5, L)
    batch = samp.sample(B, make_generator(seed))
    return batch, th.FeaturePrompts.from_batch(batch)


@pytest.mark.parametrize("kind", ["orth", "gaussian"])
def test_feature_gd_equals_full_model(kind):
    """The reduced K x K dynamics (Gram formula) reproduce full-batch GD of the d x d Q-only model."""
    V = nl.make_features(kind, 4, 6, 3.0)
    batch, fp = _prompts(V)
    L = torch.tensor([0.3, 1.0, 2.0], dtype=F64)
    lr = torch.tensor([5.0, 1.0, 0.5], dtype=F64)
    traj = th.feature_gd(fp, V @ V.T, steps=15, lr=lr, scale=L, record_every=15)
    runs = PromptBatch.stack([batch] * 3)
    runs.y = runs.y * L[:, None, None]
    runs.y_query = runs.y_query * L[:, None, None]
    model = QOnlyAttention(6, runs=3)
    hist = train(model, runs, steps=15, optimizer="gd", lr=lr, dtype=F64)
    assert_close(hist.loss, traj.loss[:15], atol=1e-13)
    assert_close(th.q_from_Q(model.Q.detach(), V), traj.q[-1], atol=1e-11)


def test_gram_formula_vs_autograd_and_lemma2():
    """-(G Gamma G) is the exact q-gradient for any features; the paper's App. C formula is exact for
    unit features, off by ||v||^4 for orthogonal ones and wrong for non-orthogonal ones."""
    for kind, expect in [("unit", "exact"), ("orth", "s4"), ("gaussian", "differs")]:
        V = nl.make_features(kind, 3, 5, 3.0)
        batch, fp = _prompts(V, B=30)
        Q = (0.3 * torch.randn(5, 5, generator=make_generator(3), dtype=F64)).requires_grad_(True)
        model = QOnlyAttention(5, runs=1).to(dtype=F64)
        with torch.no_grad():
            model.Q.copy_(Q[None])
        (grad,) = torch.autograd.grad(mse_loss(model(batch), batch).sum(), model.Q)
        g_auto = -(V @ grad[0].T @ V.T)  # -v_{k'}^T grad v_k at [k, k']
        q = th.q_from_Q(model.Q.detach(), V)
        g_gram = th.pair_gradients(q, fp, V @ V.T)[0]
        assert_close(g_gram, g_auto, atol=1e-12)
        g_paper = th.lemma2_orthonormal(q, fp)[0]
        s4 = float((V[0] @ V[0]) ** 2)
        if expect == "exact":
            assert_close(g_paper, g_auto, atol=1e-12)
        elif expect == "s4":
            assert_close(s4 * g_paper, g_auto, atol=1e-11)
        else:
            assert float((s4 * g_paper - g_auto).abs().max()) > 1e-3 * float(g_auto.abs().max())


def test_eq10_and_init():
    """At Q = 0 attention is 1/N per token, Attn_k = |V_k| / N, and y_hat = sum_k Attn_k f(v_k) (Eq. 10)."""
    V = nl.make_features("orth", 4, 6, 3.0)
    batch, fp = _prompts(V)
    model = QOnlyAttention(6, runs=1).to(dtype=F64)
    out = model(batch)
    assert_close(out.attn, torch.full_like(out.attn, 1 / batch.N), atol=1e-15)
    A, _, yhat, _ = th.forward(torch.zeros(1, 4, 4, dtype=F64), fp, torch.ones(1, dtype=F64))
    assert_close(A[0], fp.counts / batch.N, atol=1e-15)
    assert_close(yhat[0], out.pred[0, :, 0], atol=1e-13)


def test_L_eta_rescaling_is_exact():
    """Observation R1: GD with (eta, L) visits the same Q as GD with (eta L^2, 1)."""
    V = nl.make_features("orth", 4, 6, 3.0)
    _, fp = _prompts(V)
    a = th.feature_gd(fp, V @ V.T, steps=30, lr=0.7, scale=0.3, record_every=1, with_maps=False)
    b = th.feature_gd(fp, V @ V.T, steps=30, lr=0.7 * 0.09, scale=1.0, record_every=1, with_maps=False)
    assert_close(a.q, b.q, atol=1e-12)
    assert_close(a.loss / 0.09, b.loss, atol=1e-14)


def test_feature_norm_factor():
    """Observation R3: orthogonal features of norm s act like unit ones with step eta s^4."""
    Vu = standard_basis(3, 5)
    Vs = 2.0 * Vu
    _, fp = _prompts(Vu)
    a = th.feature_gd(fp, Vs @ Vs.T, steps=20, lr=0.5, record_every=20, with_maps=False)
    b = th.feature_gd(fp, Vu @ Vu.T, steps=20, lr=0.5 * 16, record_every=20, with_maps=False)
    assert_close(a.q, b.q, atol=1e-12)


def test_attention_map_rows_sum_to_one_and_lemma1_envelope():
    V = nl.make_features("orth", 4, 6, 3.0)
    _, fp = _prompts(V)
    traj = th.feature_gd(fp, V @ V.T, steps=20, lr=10.0, scale=1.0, record_every=5)
    assert_close(traj.maps.sum(-1), torch.ones_like(traj.maps.sum(-1)), atol=1e-12)
    err, gap, env = th.lemma1_terms(traj.q[:, 0], fp)
    assert bool((err <= env + 1e-15).all())
    assert float(traj.own[-1, 0]) > float(traj.own[0, 0])


def test_concentration_probability_matches_binomial():
    """K = 2: P(|V_1/N - 1/2| <= delta) from the exact binomial sum."""
    N, n = 40, 40_000
    deltas = torch.tensor([0.05, 0.1, 0.2], dtype=F64)
    est = th.concentration_probability([0.5, 0.5], N, deltas, n, make_generator(0))
    for dl, e in zip(deltas.tolist(), est.tolist()):
        exact = sum(math.comb(N, k) for k in range(N + 1) if abs(k / N - 0.5) <= dl + 1e-12) / 2**N
        assert abs(e - exact) < 4 * math.sqrt(exact * (1 - exact) / n) + 1e-3
    assert float(th.paper_concentration_bound(0.0, 100)) == -2.0


def test_scaled_prompt_set_batches_and_epochs():
    V = nl.make_features("orth", 3, 5, 3.0)
    samp = nl.cosine_sampler(V, 6, 0.5)
    base = PromptBatch.stack([samp.sample(10, make_generator(s)) for s in range(2)])
    data = nl.ScaledPromptSet(base, group=[0, 1, 0], scale=[0.5, 1.0, 2.0])
    gens = [make_generator(s) for s in (7, 8, 9)]
    seen = [set() for _ in range(3)]
    for _ in range(2):  # one epoch of 2 batches of 5
        b = data.sample_runs(5, gens)
        assert b.x.shape == (3, 5, 6, 5)
        for r in range(3):
            for i in range(5):
                j = int((base.x[data.group[r]] == b.x[r, i]).all(-1).all(-1).nonzero()[0])
                seen[r].add(j)
                assert_close(b.y[r, i], base.y[data.group[r], j] * data.scale[r], atol=1e-14)
    assert all(len(s) == 10 for s in seen)
    with pytest.raises(ConfigError, match="group"):
        nl.ScaledPromptSet(base, group=[0, 2], scale=[1.0, 1.0])


def test_relu_net_task_is_L_lipschitz():
    task = nl.RandomReLUNetTask(4, L=0.7)
    x = torch.randn(60, 4, generator=make_generator(1), dtype=F64)
    est = estimate_lipschitz(task, x, make_generator(2), n_tasks=16)
    assert float(est.max()) <= 0.7 + 1e-12


def test_loglog_slope():
    x = torch.tensor([1.0, 2.0, 4.0])
    assert abs(metrics.loglog_slope(x, 3 * x**-2) + 2) < 1e-12


@pytest.mark.parametrize("cls,bad,match", [
    (nl.TheoryConfig, dict(K=20), "K must be <= d"),
    (nl.TheoryConfig, dict(features="simplex"), "features"),
    (nl.SweepConfig, dict(K_grid=(1, 4)), "K_grid"),
    (nl.NonUniformConfig, dict(p=(0.5, 0.5, 0.5, 0.5)), "p must"),
    (nl.DeltaConfig, dict(eps=1.5), "eps"),
    (nl.BlockConfig, dict(optimizer="lbfgs"), "optimizer"),
    (nl.LateConfig, dict(eps_grid=(0.5, 1.5)), "eps_grid"),
    (nl.BlockConfig, dict(batch=1000), "batch"),
    (nl.PolynomialConfig, dict(seeds=0), "seeds"),
    (nl.GeneralizationConfig, dict(snapshots=(0, 10_000)), "snapshots"),
    (nl.ConcentrationConfig, dict(n_mc=0), "n_mc"),
])
def test_config_validation(cls, bad, match):
    with pytest.raises(ConfigError, match=match):
        cls.for_scale("ci", **bad)


def test_block_ci_smoke():
    """A tiny block training runs every (L, seed) together and records maps that are distributions."""
    cfg = nl.BlockConfig.for_scale("ci", N=12, M=20, epochs=2, batch=10, test_prompts=60, L_values=(0.1, 1.0),
                                   record_epochs=1, width=8, ffn=8)
    res = nl.run_block(cfg)
    assert res.train_loss.shape == (3, 2, 1)
    rows = res.maps.sum(-1)
    assert bool(torch.isfinite(rows).all())
    assert_close(rows, torch.ones_like(rows), atol=1e-5)


def test_registry_summaries_are_json():
    import json

    from icl_lab.registry import all_experiments

    exps = {k: v for k, v in all_experiments().items() if k.startswith("nonlinear.")}
    assert len(exps) == 11 and all(e.seed_splittable for e in exps.values() if e.config is not nl.ConcentrationConfig
                                  and e.config is not nl.SweepConfig and e.config is not nl.LateConfig
                                  and e.config is not nl.GeneralizationConfig and e.config is not nl.DeltaConfig
                                  and e.config is not nl.NonUniformConfig)
    small = {"theory_figures": dict(M=20, steps=5, seeds=1, test_prompts=10),
             "concentration": dict(n_mc=100, N_values=(50,)),
             "late_phase": dict(M=20, steps=200),
             "generalization": dict(M=20, steps=10, test_prompts=20, snapshots=(0, 10)),
             "delta": dict(M=20, steps=50, N_grid=(100, 400)),
             "nonuniform": dict(M=40, steps=50),
             "polynomial_adam": dict(d=4, N=12, M=10, batch=5, epochs=2, L_values=(0.1, 1.0), test_prompts=8, eval_train=8)}
    for name, over in small.items():
        exp = exps[f"nonlinear.{name}"]
        json.dumps(exp.summary(exp.run(exp.config.for_scale("ci", **over))))


def test_late_constant_and_prediction():
    """R2: an exact (K - 1) / (4 eta s^4 t) tail (plus an offset in 1/L) gives back C = K - 1."""
    t = torch.arange(0, 2001, dtype=F64)
    K, lr, s4 = 4, 0.1, 20.25
    loss = 1 / (4 * lr * s4 * t / (K - 1) + 7.0)
    assert abs(float(th.late_constant(loss[:, None], 1000, 2000, lr, s4)[0]) - (K - 1)) < 1e-9
    assert_close(th.late_phase_loss(t[1:], lr, s4, K), (K - 1) / (4 * lr * s4 * t[1:]), atol=1e-15)


def test_ordering_with_censoring():
    inf = float("inf")
    assert nl.ordering([30.0, 20.0, 10.0]) == "yes"
    assert nl.ordering([inf, 20.0, 10.0]) == "yes"
    assert nl.ordering([inf, inf, 10.0]) == "undecided"
    assert nl.ordering([10.0, 20.0, inf]) == "no"
    assert float(nl.censored_mean(torch.tensor([[1.0, float("nan")]]))[0]) == inf


def test_lemma2_theta_exact_for_orthonormal_features():
    """For unit features the App. C formula is the true gradient: ratios 1 and all signs agree."""
    V = nl.make_features("unit", 4, 6, 3.0)
    _, fp = _prompts(V)
    q = 0.3 * torch.randn(2, 4, 4, generator=make_generator(5), dtype=F64)
    r = th.lemma2_theta(q, fp, V @ V.T)
    assert abs(r["ratio_lo"] - 1) < 1e-10 and abs(r["ratio_hi"] - 1) < 1e-10 and r["sign_agree"] == 1.0


def test_cosine_feature_prompts_match_the_sampler_law():
    """The count-level sampler has the law of reducing token prompts: mean counts N p, f values of
    the same scale, query frequencies p."""
    V = nl.make_features("orth", 3, 5, 3.0)
    p = (0.5, 0.3, 0.2)
    fp = nl.cosine_feature_prompts(V, 200, 4000, 0.5, make_generator(0), p=p)
    assert_close(fp.counts.sum(1), torch.full((4000,), 200.0, dtype=F64), atol=0)
    assert_close(fp.counts.mean(0) / 200, torch.tensor(p, dtype=F64), atol=0.01)
    assert_close(torch.bincount(fp.query, minlength=3).to(F64) / 4000, torch.tensor(p, dtype=F64), atol=0.03)
    ref = th.FeaturePrompts.from_batch(nl.cosine_sampler(V, 200, 0.5).sample(4000, make_generator(1)))
    assert abs(float(fp.target.pow(2).mean()) - float(ref.target.pow(2).mean())) < 0.1


def test_every_cosine_feature_config_refuses_more_features_than_dimensions():
    """K orthogonal features need K <= d: refused when the config is built, before anything runs."""
    from icl_lab.params import ConfigError
    from icl_lab.registry import all_experiments

    for name, exp in all_experiments().items():
        fields = exp.config.__dataclass_fields__
        if name.startswith("nonlinear.") and {"K", "d", "features"} <= set(fields):
            with pytest.raises(ConfigError, match="K must be <= d"):
                exp.config.for_scale("ci", d=1)
