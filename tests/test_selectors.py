"""Unit tests for the selectors chapter's library code (icl_lab.papers.selectors.experiments)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icl_lab import ConfigError, Ledger, make_generator, make_generators, paths
from icl_lab.data import PairClassificationSampler, StackedSampler
from icl_lab.metrics import loglog_slope
from icl_lab.papers import selectors as lib
from icl_lab.papers.selectors import experiments as sel
from icl_lab.registry import all_experiments
from icl_lab.train import hinge_loss

F64 = torch.float64


def small_cfg(**kw):
    base = dict(M1=4, M2=12, d_extra=4, m=16, m_b_extra=3, batch=16, steps=20, seeds=2, test_prompts=64,
                eval_every=5, l_tr=6)
    base.update(kw)
    return sel.SelectorsConfig.for_scale("ci", **base)


# ----------------------------------------------------------------------------- gradients
def test_closed_form_gradients_match_autograd_float64():
    cfg = small_cfg()
    model = cfg.model([0, 1]).double()
    g = make_generator(3)
    with torch.no_grad():
        for p in (model.W_Q, model.W_K, model.W_V):
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=F64))
        model.W_O.mul_(100)
    batch = cfg.sampler().sample(48, make_generator(1))
    loss = hinge_loss(model(batch), batch).sum()
    grads = torch.autograd.grad(loss, [model.W_Q, model.W_K, model.W_V, model.W_O])
    for r in range(2):
        closed = lib.gradients_closed_form(model, batch, r)
        for name, auto in zip(("W_Q", "W_K", "W_V", "W_O"), grads):
            torch.testing.assert_close(auto[r], closed[name], atol=1e-12, rtol=1e-9)
        assert (grads[0][r][:, cfg.d_x:] == 0).all()  # label columns of W_Q: zero gradient


def test_inert_rows_of_WQ_WK_get_no_gradient_at_init():
    cfg = small_cfg()
    model = cfg.model([0]).double()
    batch = cfg.sampler().sample(32, make_generator(2))
    gq, gk = torch.autograd.grad(hinge_loss(model(batch), batch).sum(), [model.W_Q, model.W_K])
    assert (gq[0][cfg.d_x:] == 0).all() and (gk[0][cfg.d_x:] == 0).all()


# ----------------------------------------------------------------------------- data
def test_pair_sampler_float32_same_law_as_float64():
    cfg = small_cfg(tau=0.0)
    mu, nu = cfg.patterns()
    args = (mu, nu, sel.all_pair_tasks(cfg.M1))
    kw = dict(l=7, alpha=0.6, q=cfg.q())
    a = PairClassificationSampler(*args, **kw, dtype=torch.float32).sample(50, make_generator(4))
    b = PairClassificationSampler(*args, **kw).sample(50, make_generator(4))
    for name in ("ids", "query_ids", "y", "y_query", "task_ids"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    torch.testing.assert_close(a.x, b.x, atol=1e-5, rtol=0)
    # with noise: the labels and ids are unchanged, the noise is bounded by tau
    na = PairClassificationSampler(*args, **kw, tau=0.7, dtype=torch.float32).sample(50, make_generator(4))
    assert torch.equal(na.ids, b.ids) and torch.equal(na.y, b.y)
    assert float((na.x - a.x).norm(dim=-1).max()) <= 0.7 + 1e-5
    sp = PairClassificationSampler(*args, **kw, tau=0.7, noise_in_span=True, dtype=torch.float32).sample(
        50, make_generator(4))
    d = sp.x - a.x
    torch.testing.assert_close(d.norm(dim=-1), torch.full(d.shape[:-1], 0.7, dtype=F64), atol=1e-5, rtol=0)
    assert float(d[..., cfg.M1:].abs().max()) < 1e-6  # inside span{mu}
    with pytest.raises(ConfigError, match="dtype"):
        PairClassificationSampler(*args, **kw, dtype=torch.int64)


def test_stacked_pair_samplers_equal_separate_draws():
    cfg = small_cfg()
    s1, s2 = cfg.sampler(alpha=0.4), cfg.sampler(alpha=0.9, tasks=sel.cyclic_pair_tasks(cfg.M1))
    stacked = StackedSampler([s1, s1, s2])
    seeds = [5, 6, 7]
    out = stacked.sample_runs(10, make_generators(seeds), dtype=F64)
    assert out.x.shape[0] == 3 and out.x.dtype == F64
    for r, (s, seed) in enumerate(((s1, 5), (s1, 6), (s2, 7))):
        alone = s.sample(10, make_generator(seed))
        assert torch.equal(out.run(r).ids, alone.ids) and torch.equal(out.run(r).y_query, alone.y_query)
        torch.testing.assert_close(out.run(r).x, alone.x)
    with pytest.raises(ConfigError):
        stacked.sample_runs(10, make_generators([1, 2]))


def test_task_sets_and_lemma1_helpers():
    M1 = 6
    assert sel.is_balanced(sel.cyclic_pair_tasks(M1), M1) and sel.is_balanced(sel.all_pair_tasks(M1), M1)
    assert not sel.is_balanced(sel.unbalanced_tasks(M1), M1)
    assert not sel.is_balanced(sel.cyclic_pair_tasks(M1)[: M1 - 1], M1)
    assert len(sel.all_pair_tasks(M1)) == M1 * (M1 - 1)
    for tasks in (sel.cyclic_pair_tasks(M1)[:2], sel.unbalanced_tasks(M1), sel.cyclic_pair_tasks(M1)):
        assert sel.shortcut_accuracy(tasks, M1, sel.all_pair_tasks(M1)) == 0.5
    assert sel.shortcut_accuracy(sel.cyclic_pair_tasks(M1), M1) == 0.5
    assert sel.shortcut_accuracy(sel.unbalanced_tasks(M1), M1) > 0.5


# ----------------------------------------------------------------------------- measurements
def test_evaluate_splits_agree_at_init_and_attention_mass():
    cfg = small_cfg()
    model = cfg.model([0, 1]).float()
    batch = cfg.sampler().sample(64, make_generator(8)).to(dtype=torch.float32)
    ev = sel.evaluate(model, batch, sel.all_pair_tasks(cfg.M1), cfg.patterns())
    # W_V = delta I at init: the coordinate split of eq. (10) equals the token-part split
    torch.testing.assert_close(ev["feat_in"], ev["feat_lit"], rtol=1e-4, atol=1e-7)
    torch.testing.assert_close(ev["lab_in"], ev["lab_lit"], rtol=1e-4, atol=1e-7)
    assert float(ev["rest_lit"].abs().max()) == 0.0
    torch.testing.assert_close(ev["WQ_mu"], torch.full((2,), cfg.delta * cfg.beta), rtol=1e-5, atol=0)
    # a strong selector on span{mu}: attention mass on N_* close to 1 where N_* is non-empty
    with torch.no_grad():
        for W in (model.W_Q, model.W_K):
            W[:, : cfg.M1, : cfg.M1] = 2.0 * torch.eye(cfg.M1)
    ev2 = sel.evaluate(model, batch, sel.all_pair_tasks(cfg.M1))
    assert float(ev2["mass_present"].min()) > 0.99
    assert float(ev2["partner_mass"].max()) < 0.05  # only prompts with an empty N_* spread their attention


def test_batched_training_equals_separate_trainings():
    cfg = small_cfg(seeds=1, steps=15)
    g1 = sel.Group("a", 0.6, cfg.sampler(alpha=0.6), 1.0, sel.all_pair_tasks(cfg.M1))
    g2 = sel.Group("b", 0.9, cfg.sampler(alpha=0.9), 0.5, sel.all_pair_tasks(cfg.M1))
    both = sel.train_groups(cfg, [g1, g2], device="cpu")
    for i, g in enumerate((g1, g2)):
        alone = sel.train_groups(cfg, [g], device="cpu")
        torch.testing.assert_close(both.model.W_Q[i], alone.model.W_Q[0], atol=2e-5, rtol=1e-4)
        torch.testing.assert_close(both.curves["acc"][:, i], alone.curves["acc"][:, 0], atol=0.02, rtol=0)
    assert both.curves["acc"].shape == (len(both.steps), 2)


def test_same_seed_same_result():
    cfg = small_cfg(seeds=1, steps=10)
    g = sel.Group("a", 0.6, cfg.sampler(), 1.0, sel.all_pair_tasks(cfg.M1))
    a, b = sel.train_groups(cfg, [g], device="cpu"), sel.train_groups(cfg, [g], device="cpu")
    assert torch.equal(a.model.W_O, b.model.W_O) and torch.equal(a.train_loss, b.train_loss)


# ----------------------------------------------------------------------------- theory
def test_oracle_and_binomial_tail():
    assert abs(float(sel.oracle_accuracy(0.6, 14)) - (1 - 0.5 * 0.7**14)) < 1e-15
    # exact tail by brute force
    alpha, l, c = 0.5, 9, 0.4
    p = alpha / 2
    brute = sum(math.comb(l, k) * p**k * (1 - p) ** (l - k) for k in range(l + 1) if k <= (1 - c) * l * p)
    assert abs(lib.binomial_lower_tail(alpha, l, c) - brute) < 1e-12
    assert lib.prompt_length_bound(64, 0.6) == 14


def test_the_tails_of_a_grid_of_c_are_the_single_tails_exactly():
    """tails.lower_tails reads every c from one pass over the terms: the same floats as one call per c,
    c = 1 (k_max = 0) and c > 1 (an empty sum) included."""
    from icl_lab.papers.selectors import tails

    cs = [0.05, 0.3, 0.5, 0.95, 1.0, 1.5]
    for alpha in (0.2, 0.6, 1.0):
        for l in (1, 2, 7, 40, 333):
            assert tails.lower_tails(alpha, l, cs) == [lib.binomial_lower_tail(alpha, l, c) for c in cs]


def test_chernoff_hoeffding_certificate_of_37():
    """(37) holds at every l where KL((1-c)p || p) >= c^2 alpha/2, and fails at large l where the inequality
    is strict the other way: the certificate and the exact tail agree."""
    from icl_lab.papers.selectors import tails

    assert abs(tails.log_lower_tail(0.5, 9, 0.4) - math.log(lib.binomial_lower_tail(0.5, 9, 0.4))) < 1e-12
    assert abs(tails.kl_bernoulli(0.25, 0.25)) < 1e-15 and tails.kl_bernoulli(0.0, 0.3) == pytest.approx(-math.log(0.7))
    # alpha = 1 (p = 1/2): Hoeffding's KL >= 2 (p - a)^2 = c^2 / 2 certifies every c
    assert tails.smallest_certified_c(1.0) == pytest.approx(1e-3)
    for alpha in (0.2, 0.6):
        c = tails.smallest_certified_c(alpha)
        assert 0.5 < c < 1 and tails.certified(alpha, c) and not tails.certified(alpha, c - 2e-3)
        bound = lambda l, cc: -l * cc * cc * alpha / 2  # noqa: E731  log of (37)
        # certified: below the bound at every l tried, long prompts included
        assert all(tails.log_lower_tail(alpha, l, c) <= bound(l, c) + 1e-9 for l in (1, 7, 50, 400, 3000, 20_000))
        # not certified (0.1 below): the exact tail overtakes the bound once l is long
        assert tails.log_lower_tail(alpha, 20_000, c - 0.1) > bound(20_000, c - 0.1) + 10


def test_lemma4_88_is_a_step_of_the_proof_not_a_hypothesis_of_theorem1():
    """(88) log M1 <= delta^2 beta^2 points against (155) log M1 >= delta^2 beta^2: the two hold together only at
    delta^2 beta^2 = log M1, so (88), which Theorem 1 does not state and its setting contradicts, is not among the
    hypotheses the claims record (a claim that declared both would be refused); where it holds is still reported."""
    from pathlib import Path

    from icl_lab.claims import parse_declarations
    from icl_lab.criteria import contradictions
    from icl_lab.papers.selectors import conditions, theory

    assert conditions.LEMMA4 not in conditions.THM1 and theory.INIT6 in conditions.THM1
    assert contradictions(conditions.THM1 + (conditions.LEMMA4,))  # the pair the ledger refuses
    with_88 = conditions.THM1 + (conditions.LEMMA4,)
    cfg = sel.Theorem1Config()
    h = conditions.holds(cfg.theorem1(), with_88)
    assert h[theory.INIT6] and not h[conditions.LEMMA4]  # the book's setting: (155) holds, (88) does not
    eq = cfg.replace(beta=math.sqrt(math.log(cfg.M1)) / cfg.delta)
    h_eq = conditions.holds(eq.theorem1(), with_88)
    assert h_eq[theory.INIT6] and h_eq[conditions.LEMMA4]
    h_big = conditions.holds(cfg.replace(beta=2 * eq.beta).theorem1(), with_88)
    assert h_big[conditions.LEMMA4] and not h_big[theory.INIT6]
    assert list(conditions.holds(cfg.theorem1())) == list(conditions.THM1)
    decl = parse_declarations(Path(conditions.__file__).with_name("claims.toml").read_text(), "selectors")
    assert all(conditions.LEMMA4 not in d.hypotheses for d in decl.values())
    assert decl["M18"].hypotheses == conditions.THM1 and theory.INIT6 in decl["S6"].hypotheses


def test_collapse_recursion_plateau_collapse_and_scale_free_width():
    g = lib.collapse_recursion(0.6, 400, eta=0.1, M1=8)
    assert abs(g[0] - 0.4 / 0.6) < 1e-12 and g[-1] < 1e-3
    t90, t50, t10 = lib.collapse_times(g)
    assert 0 < t90 < t50 < t10
    w1 = lib.collapse_sharpness(g)
    w2 = lib.collapse_sharpness(lib.collapse_recursion(0.6, 4000, eta=0.05, a=2.0, M1=8))
    assert abs(w1 - w2) < 0.05
    assert lib.collapse_recursion(0.3, 50)[0] == 1.0  # clipped: (1 - alpha)/alpha > 1


def test_fits_recover_synthetic_laws():
    x = np.array([1.0, 2.0, 4.0])
    assert abs(loglog_slope(x, 3 * x**1.5) - 1.5) < 1e-12
    alpha = np.array([0.3, 0.45, 0.6, 0.8, 1.0])
    A, C, err = lib.fit_alpha_law(alpha, 100 / (5.0 - 1 / alpha))
    assert abs(C - 5.0) < 0.1 and err < 0.01


# ----------------------------------------------------------------------------- configs and OOD
@pytest.mark.parametrize("cls, kw, name", [
    (sel.SelectorsConfig, dict(alpha=0.0), "alpha"),
    (sel.SelectorsConfig, dict(task_set="some"), "task_set"),
    (sel.SelectorsConfig, dict(lambda_min=0.9, lambda_max=0.5), "lambda_min"),
    (sel.SelectorsConfig, dict(M1=2), "M1"),
    (sel.SelectorsConfig, dict(kappa_max=1.5), "kappa_max"),
    (sel.SelectorsConfig, dict(d_y=1), "d_y"),
    (sel.AlphaSweepConfig, dict(alphas=(0.5, 1.2)), "alphas"),
    (sel.PatternCountConfig, dict(M2s=(24, 500)), "M2s"),
    (sel.TaskCountConfig, dict(n_tasks=(2, 20)), "n_tasks"),
    (sel.OODConfig, dict(d_extra=2), "d_extra"),
    (sel.OODConfig, dict(M1=4, d_extra=8), "M1"),
    (sel.SeedSweepConfig, dict(task_sets=("cyclic", "x")), "task_sets"),
])
def test_validation_names_the_parameter(cls, kw, name):
    with pytest.raises(ConfigError, match=name):
        cls.for_scale("ci", **kw)


def test_ood_conditions_geometry():
    cfg = sel.OODConfig.for_scale("ci")
    conds = {c.name: c for c in sel.ood_conditions(cfg, sel.cyclic_pair_tasks(cfg.M1))}
    cone = conds["cone mu' = (mu_2j-1 + mu_2j)/sqrt2, nu' = nu"]
    G = cone.mu @ cone.mu.T
    torch.testing.assert_close(G, cfg.beta**2 * torch.eye(cfg.M1 // 2, dtype=F64))
    assert (cone.mu >= 0).all() and cone.covered
    mu, _ = cfg.patterns()
    fresh = conds["fresh mu' outside span{mu}"]
    assert float((fresh.mu @ mu.T).abs().max()) == 0 and not fresh.covered
    assert "unseen pairs of training patterns" in conds


@pytest.mark.declarations
def test_ledger_parts_split_the_chapter():
    """Each notebook checks exactly its own part: the mechanism and its training (M), unseen tasks (O), the
    sample complexity and the training data (S)."""
    parts = {p: set(Ledger("selectors", part=p).claims) for p in (
        "mechanism", "selection", "training", "out_of_domain", "sample_complexity", "prompt_length")}
    assert all(parts.values()) and sum(map(len, parts.values())) == len(set().union(*parts.values()))
    assert all(i[0] == "M" for p in ("mechanism", "selection", "training") for i in parts[p])
    assert all(i[0] == "O" for i in parts["out_of_domain"])
    assert all(i[0] == "S" for p in ("sample_complexity", "prompt_length") for i in parts[p])
    assert set().union(*parts.values()) == set(Ledger("selectors").claims)


def test_registered_experiments_are_seed_splittable():
    exps = {k: v for k, v in all_experiments().items() if k.startswith("selectors.")}
    assert {"selectors.seed_sweep", "selectors.alpha", "selectors.ood", "selectors.task_count"} <= set(exps)
    for e in exps.values():
        assert e.seed_splittable and e.paper == "selectors"
        e.config.for_scale("ci")  # validates


def test_summaries_are_json_serialisable():
    import json

    tiny = dict(M1=4, M2=12, d_extra=4, m=16, m_b_extra=3, batch=16, steps=6, seeds=1, test_prompts=32,
                eval_every=3, l_tr=6)
    sweep_cfg = sel.OODConfig.for_scale("ci", **{**tiny, "M1": 6, "d_extra": 6}, ood_prompts=32, l_ts_grid=(2, 4))
    res = sel.run_ood(sweep_cfg)
    json.dumps(sel.summarize_ood(res))
    json.dumps(sel.summarize_seed_sweep(res.train))
    tc = sel.run_task_count(sel.TaskCountConfig.for_scale("ci", **tiny, n_tasks=(2, 4)))
    json.dumps(sel.summarize_task_count(tc))
    pl = sel.run_prompt_length(sel.PromptLengthConfig.for_scale("ci", **tiny, alphas=(0.5,), lengths=(2, 3)))
    json.dumps(sel.summarize_prompt_length(pl))
    assert res.acc.shape[1] == 1 and pl.acc.shape == (2, 1, 1)


@pytest.mark.parametrize("per_run", [False, True])
def test_factored_model_equals_attention_mlp(per_run):
    """AttentionMLP's factored forward (the products reordered) equals eq. (2) as written."""
    from icl_lab import AttentionMLP

    cfg = small_cfg()
    kw = dict(seeds=[0, 1, 2], m_a=cfg.D, m_b=cfg.D + 3, delta=cfg.delta, xi=cfg.xi)
    ref = AttentionMLP(cfg.d_x, cfg.d_y, cfg.m, **kw)
    fast = AttentionMLP(cfg.d_x, cfg.d_y, cfg.m, **kw)
    g = make_generator(9)
    with torch.no_grad():
        for p_ref, p_fast in zip(ref.parameters(), fast.parameters()):
            assert torch.equal(p_ref, p_fast)  # same initialisation
            noise = 0.3 * torch.randn(p_ref.shape, generator=g, dtype=F64)
            p_ref.add_(noise)
            p_fast.add_(noise)
    s = cfg.sampler()
    batch = s.sample_runs(20, make_generators([4, 5, 6]), dtype=F64) if per_run else s.sample(20, make_generator(4))
    o_ref, o_fast = ref.reference_forward(batch), fast(batch)
    torch.testing.assert_close(o_fast.pred, o_ref.pred, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(o_fast.attn, o_ref.attn, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(o_fast.extras["h"], o_ref.extras["h"], atol=1e-12, rtol=1e-10)
    g_ref = torch.autograd.grad(hinge_loss(o_ref, batch).sum(), list(ref.parameters()))
    g_fast = torch.autograd.grad(hinge_loss(o_fast, batch).sum(), list(fast.parameters()))
    for a, b in zip(g_ref, g_fast):
        torch.testing.assert_close(b, a, atol=1e-12, rtol=1e-9)


def test_reference_records_match_the_paper_config():
    """The shipped selectors.theorem1 records hold today's paper-scale config, every seed, current code:
    the chapter reads them through the one results function."""
    from icl_lab.memo import full

    if not (paths.REFERENCE / "selectors.theorem1").exists():
        pytest.skip("no reference records")
    ref = full(sel.run_theorem1, sel.Theorem1Config(), _summary=True, _if_stored=True)
    assert ref is not None, "re-run: icl-lab run selectors.theorem1 --scale paper"
    assert len(ref["final_acc"][0]) == sel.Theorem1Config().seeds


def test_theorem1_regime_configs_meet_the_conditions():
    """selectors.theorem1 and the paper-scale lambda_* sweep meet every condition of Theorem 1 read with
    constant 1 (the scale beta = Theta(log log M1) fixes no value at one M1); the common setting and the
    book's narrow lambda_* sweep violate the width condition, and at lambda_* = 0.3 the batch one."""
    conds = sel.Theorem1Config().theorem1()
    assert all(v[2] for v in conds.values()), {k: v for k, v in conds.items() if not v[2]}
    assert "c = 6.8" in conds[lib.theory.SCALE][0]
    assert not sel.SelectorsConfig().theorem1()[lib.theory.WIDTH][2]
    wide = sel.LambdaSweepConfig()
    for lam in wide.lambdas:
        assert all(v[2] for v in wide.theorem1(lambda_star=lam).values()), lam
    narrow = sel.LambdaSweepConfig.for_scale("book")
    assert not narrow.theorem1(lambda_star=0.5)[lib.theory.WIDTH][2]
    assert not narrow.theorem1(lambda_star=0.3)[lib.theory.BATCH6][2] and narrow.theorem1(lambda_star=0.5)[lib.theory.BATCH6][2]


def test_flushing_denormals_gives_the_process_its_setting_back():
    """Training flushes denormals for speed; the process's own setting (which other code, e.g.
    hypothesis's float strategies, relies on) is restored afterwards."""
    from icl_lab.papers.selectors.training import flushing_denormals

    flushes = lambda: float(torch.tensor(1e-300, dtype=torch.float64) * 1e-20) == 0.0  # noqa: E731
    assert not flushes()
    with flushing_denormals():
        assert flushes()
    assert not flushes()


def test_ood_refuses_too_few_irrelevant_patterns_before_training():
    """The Remark 1 control is built from the irrelevant patterns: too few is a one-line error, not a
    failure after training (tools/audit_minimums.py runs every experiment at such minimal values)."""
    from icl_lab.params import ConfigError
    from icl_lab.papers.selectors.ood import OODConfig

    with pytest.raises(ConfigError, match=r"^M2 must be >= M1 \+ 2"):
        OODConfig.for_scale("ci", M2=1)


def test_upper_bound_check_and_query_coverage():
    from icl_lab.papers.selectors.theory import query_coverage, upper_bound_check

    assert upper_bound_check(1.3, 1.0, "eta") == (True, None)
    assert upper_bound_check(1.5, 1.0, "eta")[0] is False
    assert upper_bound_check(float("nan"), 1.0, "eta")[0] is False
    ok, caveat = upper_bound_check(0.1, 1.0, "M")
    assert ok and "not tight in M" in caveat
    assert abs(query_coverage(3, 2)) < 1e-12 and query_coverage(1, 1) == 1.0  # 2 queries cannot show 3 patterns
    # two patterns, B queries: all present unless every query shows the same one
    assert math.isclose(query_coverage(2, 5), 1 - 2 * 0.5**5)


def test_output_layer_split_readings_and_slope_interval():
    cfg = sel.LambdaSweepConfig.for_scale("ci", M1=4, M2=12, d_extra=4, m=16, m_b_extra=3, batch=16, steps=40,
                                          seeds=3, test_prompts=64, eval_every=5, l_tr=6, lambdas=(0.5, 0.9))
    res = sel.run_lambda_sweep(cfg)
    coord = lib.output_layer_split(cfg, res, "coordinates")
    proj = lib.output_layer_split(cfg, res, "projections")
    assert coord.shape == proj.shape == (2, 3, 2)
    # a projection onto span{mu_l} (or onto q) cannot exceed the norm of the coordinates it projects
    assert bool((proj <= coord + 1e-6).all()) and bool((proj > 0).any())
    with pytest.raises(ConfigError, match="reading"):
        lib.output_layer_split(cfg, res, "tokens")
    hs = lib.HitSweep.of(res)
    est, again = hs.slope_estimate(inverse=True), hs.slope_estimate(inverse=True)
    assert repr(est) == repr(again) and est.n == 3
    if math.isfinite(est.value):
        assert est.lo <= est.value <= est.hi


def test_measurements_give_freed_heap_back():
    """The heap trim between records is what keeps a long training's memory flat: evaluating on a
    large held-out batch and keeping the small recorded values grows the C heap without it."""
    import os
    from icl_lab.papers.selectors import training as tr
    if tr._TRIM is None or not os.path.exists("/proc/self/statm"):
        pytest.skip("no glibc malloc_trim or /proc here")
    cfg = sel.LambdaSweepConfig.for_scale("ci", m=600, test_prompts=1000, lambdas=(0.5,), seeds=1)
    model = cfg.model([0]).to(dtype=torch.float32)
    test = cfg.sampler(lambda_range=(0.5, 0.5)).sample(1000, make_generator(0), dtype=torch.float32)
    pats = cfg.patterns()

    def rss() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    def grow(trim: bool) -> float:
        keep = [tr.evaluate(model, test, None, pats)]  # the recorded values stay alive, as in a training
        if trim:
            tr.release_freed_heap()
        start = rss()
        for _ in range(12):
            keep.append(tr.evaluate(model, test, None, pats))
            if trim:
                tr.release_freed_heap()
        return rss() - start

    grown = grow(True)
    assert grown < 40, f"{grown:.0f} MB grown over 12 measurements with the trim"


def test_experiments_decided_on_intervals_over_seeds_run_enough_seeds():
    """S1 (alpha), S3 (lambda_*), S6 (prompt length), S8b and S9 (task count) are decided on intervals over
    seeds: the reference (paper scale) runs at least the rules' minimum, and so does ci where it costs little."""
    from icl_lab.criteria import MIN_SEEDS

    for C in (sel.AlphaSweepConfig, sel.LambdaSweepConfig, sel.PromptLengthConfig, sel.TaskCountConfig):
        assert C.for_scale("paper").seeds >= MIN_SEEDS and C.for_scale("book").seeds >= MIN_SEEDS, C.__name__
    for C in (sel.AlphaSweepConfig, sel.PromptLengthConfig, sel.TaskCountConfig):
        assert C.for_scale("ci").seeds >= MIN_SEEDS, C.__name__


def test_the_equality_setting_meets_every_condition_of_theorem1_and_every_step_of_its_proof():
    """delta^2 beta^2 = log M1: Theorem 1's conditions, (155) and the proof's (88) all hold at the reference
    size of selectors.theorem1_equality (its ci size is narrow, as the reference's)."""
    from icl_lab.papers.selectors import conditions

    cfg = sel.Theorem1EqualityConfig.for_scale("paper")
    held = conditions.holds(cfg.theorem1(), conditions.THM1 + (conditions.LEMMA4,))
    assert all(held.values()), held
    assert abs(cfg.delta**2 * cfg.beta**2 - math.log(cfg.M1)) < 1e-3
    assert "selectors.theorem1_equality" in all_experiments()
