"""The window chapter's library: population curves, optimal windows, the hills task, the
prefetching sampler, the batched trainer's run grid, the part-wise ledger and config validation."""
from __future__ import annotations

import math

import pytest
import torch

from icl_lab import ConfigError, Ledger, make_generator
from icl_lab.data import AffineTask, PromptSampler, StackedSampler, TwoReLUTask, sphere
from icl_lab.papers.window import data as wdata, experiments, lowrank, population, trained as wtrained, training as wtraining
from icl_lab.models import KernelAttention
from icl_lab.data import HillsTask
from icl_lab.metrics import loglog_slope
from icl_lab.papers.window import (linear_attention_loss, lowrank_landscape, optimal_window, softmax_weights,
                                   window_curves)
from icl_lab.train import RunGrid
from icl_lab.papers.window.theory import WindowCurves, _hard_weights

from _helpers import F64, assert_close


def _inp(d):
    return lambda s, g: sphere(s, d, g)


def test_hills_shapes():
    x = sphere(200, 2, make_generator(0))[None]
    assert_close(HillsTask(0.0, "freq").evaluate({"b": torch.tensor([0.3], dtype=F64)}, x), torch.ones(1, 200, dtype=F64))
    for shape in ("freq", "bump"):
        task = HillsTask(1.5, shape)
        # continuous across the wrap point and equal to 1 at the centre b
        b = torch.tensor([0.5], dtype=F64)
        eps = 1e-7
        pts = torch.tensor([[[math.cos(0.5 + math.pi - eps), math.sin(0.5 + math.pi - eps)],
                             [math.cos(0.5 + math.pi + eps), math.sin(0.5 + math.pi + eps)],
                             [math.cos(0.5), math.sin(0.5)]]], dtype=F64)
        y = task.evaluate({"b": b}, pts)[0]
        assert abs(float(y[0] - y[1])) < 1e-5 and abs(float(y[2]) - 1) < 1e-12
    with pytest.raises(ConfigError, match="shape"):
        HillsTask(1.0, "wave")
    # the paper's literal formula: nu cos(theta - b), linear in x on the circle, 0 at nu = 0
    b = torch.tensor([0.3], dtype=F64)
    assert_close(HillsTask(1.5).evaluate({"b": b}, x), 1.5 * (x @ torch.tensor([math.cos(0.3), math.sin(0.3)], dtype=F64)))
    assert_close(HillsTask(0.0, "amp").evaluate({"b": b}, x), torch.zeros(1, 200, dtype=F64))


def test_window_curves_identities():
    c = torch.tensor([0.0, 1.0, 5.0, 50.0], dtype=F64)
    n, d = 10, 3
    cur = window_curves(TwoReLUTask(d, 1.0), _inp(d), n, c, tasks=200, generator=make_generator(1), chunk=64)
    assert abs(float(cur.noise[0]) - 1 / n) < 1e-12  # uniform window
    assert bool((cur.noise[1:] >= cur.noise[:-1]).all())  # Lemma D.2 on common draws
    assert bool((cur.signal <= 4).all())  # Lemma C.2
    # homogeneity: the L = 2 class is exactly 2x the L = 1 class on the same draws
    cur2 = window_curves(TwoReLUTask(d, 2.0), _inp(d), n, c, tasks=200, generator=make_generator(1), chunk=64)
    assert_close(cur2.signal, 4 * cur.signal, atol=1e-12)
    # chunking does not change the draws' statistics beyond their identity: same chunk -> same result
    again = window_curves(TwoReLUTask(d, 1.0), _inp(d), n, c, tasks=200, generator=make_generator(1), chunk=64)
    assert_close(again.signal, cur.signal)
    assert_close(cur.subset(slice(1, 3)).noise, cur.noise[1:3])


def test_softmax_weights_and_hard_window():
    x = sphere((4, 9), 3, make_generator(2))
    xq = sphere((4, 2), 3, make_generator(3))
    a = softmax_weights(x, xq, 3.0)
    assert_close(a.sum(-1), torch.ones(4, 2, dtype=F64))
    s = xq @ x.transpose(-1, -2)
    h = _hard_weights(s, 0.5)  # squared radius 2: the cap of x^T x_q >= 0
    assert_close(h.sum(-1), torch.ones(4, 2, dtype=F64))
    inside = s >= 0
    assert bool(((h > 0) == inside).all() | (~inside.any(-1, keepdim=True)).all())


def test_optimal_window_finds_parabola_minimum():
    c = torch.logspace(-1, 2, 31, dtype=F64)
    t = torch.log(c)
    loss = (t - math.log(3.0)) ** 2 + 1.0
    cur = WindowCurves(c=c, signal=loss, noise=torch.zeros_like(c), spread=loss, signal_se=loss, noise_se=loss,
                       radial=loss, n=5, d=2, tasks=1)
    cs, lmin, interior = optimal_window(cur, 1.0, 0.0)
    assert interior and abs(cs - 3.0) < 1e-9 and abs(lmin - 1.0) < 1e-12
    edge = WindowCurves(c=c, signal=-t, noise=torch.zeros_like(c), spread=t, signal_se=t, noise_se=t, radial=t, n=5,
                        d=2, tasks=1)
    assert optimal_window(edge)[2] is False
    assert abs(loglog_slope(c, 2 * c**1.5) - 1.5) < 1e-12


def test_linear_attention_loss_matches_its_prediction():
    samp = PromptSampler.from_inputs(_inp(3), AffineTask(3, 1.0), N=8, num_queries=2, sigma=0.0)
    M, ins, held, se = linear_attention_loss(samp, 600, make_generator(4), make_generator(5))
    batch = samp.sample(600, make_generator(4))
    pred = torch.einsum("bn,bnd,de,bme->bm", batch.y, batch.x, M, batch.x_query)
    assert abs(float(((pred - batch.y_query) ** 2).mean()) - ins) < 1e-10
    assert held is not None and se > 0 and ins > 0


def test_lowrank_landscape_at_zero_is_the_context_average():
    d, k, n = 5, 2, 6
    loss = lowrank_landscape(d, k, n, 0.0, [0.0], [0.0], tasks=300, generator=make_generator(6))
    # recompute by hand with the same draws: M = 0 averages the labels
    g = make_generator(6)
    a = sphere(300, k, g)
    u = sphere((300, n + 4), k, g)
    sphere((300, n + 4), d - k, g)
    f = (u * a[:, None, :]).sum(-1)
    ref = ((f[:, :n].mean(-1, keepdim=True) - f[:, n:]) ** 2).mean()
    assert abs(float(loss[0, 0]) - float(ref)) < 1e-12
    with pytest.raises(ConfigError, match="k"):
        lowrank_landscape(3, 3, n, 0.0, [0.0], [0.0], tasks=10, generator=make_generator(0))


def test_icl_error_and_anisotropy():
    samp = PromptSampler.from_inputs(_inp(3), TwoReLUTask(3, 1.0), N=8, num_queries=3, sigma=0.1)
    batch = samp.sample(50, make_generator(7))
    model = KernelAttention(3, runs=2, init=1.5).to(dtype=F64)  # M = 1.5^2 I
    err = wtraining.icl_error(model, batch)
    pred = (softmax_weights(batch.x, batch.x_query, 2.25) * batch.y[:, None, :]).sum(-1)
    assert_close(err, ((pred - batch.y_query) ** 2).mean().expand(2))
    assert float(wtraining.anisotropy(3 * torch.eye(4, dtype=F64))) < 1e-15
    assert float(wtraining.anisotropy(torch.diag(torch.tensor([1.0, 2.0], dtype=F64)))) > 0.1


@pytest.mark.declarations
def test_claims_are_declared_in_the_parts_of_its_six_pages():
    parts = ("smoother", "bounds", "rates", "lipschitz", "noise_transfer", "lowrank")
    ledgers = [Ledger("window", part=p) for p in parts]
    ids = [c.id for lg in ledgers for c in lg]
    assert all(len(list(lg)) > 0 for lg in ledgers) and len(ids) == len(set(ids))
    assert sorted(ids) == sorted(c.id for c in Ledger("window"))  # every claim on exactly one page
    assert all(i.startswith(("T-", "E-")) for i in ids) and all(c.statement for lg in ledgers for c in lg)
    with pytest.raises(ConfigError, match="part"):
        Ledger("window", part="theory")  # the two pages before the split are gone


def test_train_window_maps_runs_with_the_grid():
    a = PromptSampler.from_inputs(_inp(3), TwoReLUTask(3, 1.0), N=5, num_queries=2, sigma=0.1)
    b = PromptSampler.from_inputs(_inp(3), TwoReLUTask(3, 3.0), N=5, num_queries=2, sigma=0.1)
    grid = RunGrid(setting=["a", "b"], trial=range(2))
    model, hist = wtraining.train_window(grid, lambda r: {"a": a, "b": b}[r["setting"]], 3, 7, steps=5, lr=0.01, lr_decay=1.0,
                                 record=lambda m, s: {"twice": 2 * torch.ones(2 * 2)}, record_every=5)
    assert hist["norm"].shape == (2, 4) and hist["mean_eig"].shape == (2, 4) and hist["twice"].shape == (2, 4)
    # run (b, trial 1) equals a single-run training of b with seed 7 + 1
    alone, _ = wtraining.train_window(RunGrid(setting=["b"], trial=[1]), lambda r: b, 3, 7, steps=5, lr=0.01, lr_decay=1.0)
    assert_close(model.M.detach()[grid.index(setting="b", trial=1)[0]], alone.M.detach()[0])


@pytest.mark.parametrize("cls, kw, name", [
    (population.ScalingConfig, dict(dims=(1,)), "dims"),
    (wtrained.HillsConfig, dict(hills_mode="wave"), "hills_mode"),
    (lowrank.LowRankTrainingConfig, dict(k=10), "k"),
    (wtrained.NormVsLConfig, dict(panels=("relu-sideways",)), "panels"),
    (wtrained.TransferTrainingConfig, dict(pretrain_classes=("poly",)), "pretrain_classes"),
    (wtrained.TransferTrainingConfig, dict(pretrain_L=(1.0,)), "pretrain_L"),
    (population.PowerLawConfig, dict(c_max=0.01), "c_max"),
    (wtrained.NormVsSigmaNConfig, dict(seeds=0), "seeds"),
    (wtrained.IsotropyConfig, dict(init_std=-1.0), "init_std"),
    (population.LinearAttentionConfig, dict(n_values=(0,)), "n_values"),
    (population.BiasVarianceConfig, dict(sigma=0.0), "sigma"),
    (population.TransferConfig, dict(test_L=(-1.0,)), "test_L"),
    (population.LowRankLandscapeConfig, dict(grid=2), "grid"),
])
def test_configs_validate(cls, kw, name):
    with pytest.raises(ConfigError, match=name):
        cls.for_scale("ci", **kw)


def test_registered_experiments_build_at_both_scales():
    for exp in experiments.EXPERIMENTS.values():
        for scale in ("ci", "book", "paper"):
            exp.config.for_scale(scale)


def test_prefetch_sampler_serves_the_big_draw_step_by_step():
    from icl_lab.papers.window import PrefetchSampler

    a = PromptSampler.from_inputs(_inp(3), TwoReLUTask(3, 1.0), N=5, num_queries=2, sigma=0.1)
    seeds = [1, 2]
    pre = PrefetchSampler(StackedSampler([a, a]), steps_per_draw=4)
    gens = [make_generator(s) for s in seeds]
    steps = [pre.sample_runs(2, gens) for _ in range(6)]  # crosses a refill
    big = a.sample_runs(8, [make_generator(s) for s in seeds])
    for t in range(4):
        assert_close(steps[t].x, big.x[:, 2 * t:2 * t + 2])
    # run 1 alone sees the same prompts as in the batched draw
    alone = PrefetchSampler(StackedSampler([a]), steps_per_draw=4)
    g1 = [make_generator(2)]
    for t in range(6):
        assert_close(alone.sample_runs(2, g1).y[0], steps[t].y[1])


def test_hard_window_optimum_minimises_the_hard_window_loss():
    from icl_lab.papers.window.theory import hard_window_optimum

    L, sigma, n, m = 1.0, 0.1, 100, 2
    w = hard_window_optimum(L, sigma, n, m)
    loss = lambda v: L**2 / v + sigma**2 * v ** (m / 2) / n  # noqa: E731
    assert loss(w) < loss(0.99 * w) and loss(w) < loss(1.01 * w)


def test_attention_head_of_eq4_equals_kernel_attention():
    from icl_lab.models import KernelAttention
    from icl_lab.papers.window.theory import attention_head, value_leak_loss

    d, n = 3, 6
    g = make_generator(0)
    batch = PromptSampler.from_inputs(wdata.sphere_inputs(d), TwoReLUTask(d, 1.0), N=n, num_queries=1).sample(50, g)
    Mk, Mq = torch.randn(d, d, generator=g, dtype=torch.float64), torch.randn(d, d, generator=g, dtype=torch.float64)
    Z = batch.embedding().transpose(-1, -2)
    WK, WQ, WV = (torch.zeros(d + 1, d + 1, dtype=torch.float64) for _ in range(3))
    WK[:d, :d], WQ[:d, :d], WV[d, d] = Mk, Mq, 1.0
    model = KernelAttention(d, runs=1, tied=False).to(dtype=torch.float64)
    with torch.no_grad():
        model.M_K.copy_(Mk[None])
        model.M_Q.copy_(Mq[None])
        lib = model(batch).pred[0, :, 0]
    assert float((attention_head(Z, WK, WQ, WV)[:, d] - lib).abs().max()) < 1e-12
    y = batch.y_query[:, 0]
    assert math.isclose(value_leak_loss(Z, WK, WQ, WV, torch.zeros(d), y), float(((lib - y) ** 2).mean()), rel_tol=1e-12)


def test_per_task_j_draws_a_covariance_for_each_task_and_batches_runs_as_alone():
    from icl_lab.data import _random as rnd
    from icl_lab.papers.window import lowrank

    draw = lowrank._per_task_j(4)
    x = draw((3, 50), make_generator(0))
    assert x.shape == (3, 50, 4) and torch.allclose(x.norm(dim=-1), torch.ones(3, 50, dtype=torch.float64))
    cov = torch.einsum("bni,bnj->bij", x, x) / 50  # each task's second moment: its own J~, so they differ
    assert (cov[0] - cov[1]).abs().max() > 0.05
    both = draw((3, 50), rnd.Streams([make_generator(0), make_generator(1)]))
    assert torch.equal(both[:3], x) and torch.equal(both[3:], draw((3, 50), make_generator(1)))
    cfg = lowrank.LowRankTrainingConfig.for_scale("ci", covariates="J-per-task")
    assert cfg.covariates == "J-per-task"
    with pytest.raises(ConfigError, match="covariates"):
        lowrank.LowRankTrainingConfig.for_scale("ci", covariates="J-per-trial")
