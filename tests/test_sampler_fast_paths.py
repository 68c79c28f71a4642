"""The samplers' batched fast paths and the optimizer's in-place update give the very numbers of the
straightforward code (tests/_reference_samplers.py, the update formula below), bit for bit: same
seed -> same prompts, a run of a batched draw -> the prompts of that run drawn alone."""
from __future__ import annotations

from dataclasses import fields

import pytest
import torch

from _reference_samplers import ReferencePairSampler, ReferencePromptSampler
from icl_lab.data import (AffineTask, CosineFeatureTask, LinearTask, PairClassificationSampler, PromptBatch,
                          PromptSampler, QuadraticTask, StackedSampler, cyclic_pair_tasks, random_orthonormal,
                          separated, standard_basis)
from icl_lab.data import _random as rnd
from icl_lab.data.inputs import sphere
from icl_lab.params import ConfigError
from icl_lab.train import BatchedOptimizer

F32, F64 = torch.float32, torch.float64


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def gens(seeds) -> list[torch.Generator]:
    return [gen(s) for s in seeds]


BITS = {torch.float32: torch.int32, torch.float64: torch.int64}


def assert_same(a: PromptBatch, b: PromptBatch):
    """Every field equal bit for bit (torch.equal alone takes -0.0 for +0.0)."""
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, torch.Tensor):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            if x.dtype in BITS:
                x, y = x.view(BITS[x.dtype]), y.view(BITS[y.dtype])
            assert torch.equal(x, y), f.name
        else:
            assert x == y, f.name


def test_one_call_draws_what_several_calls_draw():
    a, b = gen(3), gen(3)
    merged = rnd.draw_sequence([a], [[("u", "rand", 5 + 7, F64), ("k", "randint", 9 + 2, (0, 2)),
                                      ("z", "randn", 40, F32)]])
    assert torch.equal(merged["u"][0], torch.cat([torch.rand(5, generator=b, dtype=F64),
                                                  torch.rand(7, generator=b, dtype=F64)]))
    assert torch.equal(merged["k"][0], torch.cat([torch.randint(0, 2, (9,), generator=b),
                                                  torch.randint(0, 2, (2,), generator=b)]))
    assert torch.equal(merged["z"][0], torch.randn(40, generator=b, dtype=F32))
    assert torch.equal(torch.rand(3, generator=a), torch.rand(3, generator=b))  # both streams left at the same place
    with pytest.raises(ValueError, match="differs between runs"):
        rnd.draw_sequence(gens([1, 2]), [[("u", "rand", 4, F64)], [("u", "rand", 5, F64)]])
    with pytest.raises(ValueError, match="one entry per generator"):
        rnd.draw_sequence(gens([1, 2]), [[("u", "rand", 4, F64)]])


FEATURES = [("basis", lambda K, d: standard_basis(K, d)), ("orth", lambda K, d: random_orthonormal(K, d, gen(1))),
            ("gauss", lambda K, d: separated(K, d, 0.7, "gaussian", gen(2)))]


@pytest.mark.parametrize("d,K", [(16, 4), (5, 5), (31, 20), (3, 2), (4, 1)])
@pytest.mark.parametrize("task", ["linear", "cosine_feature", "affine", "quadratic"])
@pytest.mark.parametrize("feat", [f for f, _ in FEATURES])
def test_feature_prompts_equal_the_reference_sampler(d, K, task, feat):
    V = dict(FEATURES)[feat](K, d)
    t = {"linear": LinearTask(d), "cosine_feature": CosineFeatureTask(d, 1.5), "affine": AffineTask(d, 0.7),
         "quadratic": QuadraticTask(d, 1.0)}[task]
    p = torch.linspace(1, 2, K)
    for kw in ({}, {"sigma": 0.1, "num_queries": 3}, {"p": p / p.sum(), "query_p": torch.ones(K) / K}):
        new, old = PromptSampler.from_features(V, t, N=20, **kw), ReferencePromptSampler.from_features(V, t, N=20, **kw)
        for dt in (F64, F32):
            assert_same(new.sample(7, gen(5), dt), old.sample(7, gen(5), dt))
            assert_same(new.sample_runs(6, gens(range(4)), dt), old.sample_runs(6, gens(range(4)), dt))


def test_input_prompts_equal_the_reference_sampler():
    kw = dict(N=9, sigma=0.2, num_queries=2)
    new = PromptSampler.from_inputs(lambda s, g: sphere(s, 6, g), AffineTask(6, 1.0), **kw)
    old = ReferencePromptSampler.from_inputs(lambda s, g: sphere(s, 6, g), AffineTask(6, 1.0), **kw)
    assert_same(new.sample_runs(6, gens(range(3)), F32), old.sample_runs(6, gens(range(3)), F32))


def test_feature_prompts_same_seed_same_data_and_runs_equal_single_draws():
    s = PromptSampler.from_features(standard_basis(4, 16), LinearTask(16), N=30, sigma=0.05)
    assert_same(s.sample(11, gen(9), F32), s.sample(11, gen(9), F32))
    batched = s.sample_runs(11, gens([4, 5, 6]), F32)
    for r, seed in enumerate([4, 5, 6]):
        assert_same(batched.run(r), s.sample(11, gen(seed), F32))


E = 5 * torch.eye(20, dtype=F64)
MU, NU, Q = E[:6], E[6:16], torch.tensor([5.0, 0.0])


def _pair(cls, **kw):
    kw = {"alpha": 0.6, "tau": 0.25, "tasks": cyclic_pair_tasks(6), "mu": MU, "nu": NU, **kw}
    return cls(kw.pop("mu"), kw.pop("nu"), kw.pop("tasks"), l=7, q=Q, **kw)


ROT = torch.linalg.qr(torch.randn(20, 20, generator=torch.Generator().manual_seed(0), dtype=F64))[0]


@pytest.mark.parametrize("kw", [dict(), dict(tau=0.0), dict(noise_in_span=True, tau=0.3), dict(dtype=F32),
                                dict(noise_in_span=True, tau=0.1, dtype=F32), dict(alpha=1.0),
                                dict(kappa_max=0.0, tau=0.0), dict(kappa_max=0.0, dtype=F32), dict(rotated=True),
                                dict(rotated=True, dtype=F32, noise_in_span=True)],
                         ids=["iso", "noiseless", "span", "iso32", "span32", "alpha1", "kappa0", "kappa0-32",
                              "rotated", "rotated-span32"])
def test_pair_prompts_equal_the_reference_sampler(kw):
    """Patterns on coordinate axes (the chapter's) take the sparse path, rotated ones the dense one."""
    kw = dict(kw)
    if kw.pop("rotated", False):
        kw.update(mu=MU @ ROT, nu=NU @ ROT)
    new, old = _pair(PairClassificationSampler, **kw), _pair(ReferencePairSampler, **kw)
    assert (new._axes() is None) == (new.mu.count_nonzero() > MU.count_nonzero())
    assert_same(new.sample(9, gen(3)), old.sample(9, gen(3)))
    assert_same(new.sample_runs(9, gens(range(4)), F32), old.sample_runs(9, gens(range(4)), F32))


@pytest.mark.parametrize("span", [False, True])
def test_stacked_pair_samplers_drawn_together_equal_each_run_alone(span):
    """Different task sets, alpha, lambda ranges and tau (0 among them) in one draw, runs out of order."""
    from icl_lab.papers.selectors.data import all_pair_tasks

    laws = [dict(tau=0.0, alpha=0.3, lambda_range=(0.6, 1.0), tasks=cyclic_pair_tasks(6)),
            dict(tau=0.3, alpha=0.6, lambda_range=(0.4, 1.0), tasks=all_pair_tasks(6)),
            dict(tau=0.02, alpha=1.0, lambda_range=(0.9, 1.0), tasks=cyclic_pair_tasks(6)),
            dict(tau=1.0, alpha=0.45, lambda_range=(0.5, 1.0), tasks=all_pair_tasks(6), kappa_max=0.2),
            dict(tau=0.5, alpha=0.6, lambda_range=(0.6, 1.0), tasks=cyclic_pair_tasks(6), kappa_max=0.0)]
    dt = F32 if span else F64
    new = [_pair(PairClassificationSampler, noise_in_span=span, dtype=dt, **law) for law in laws]
    old = [_pair(ReferencePairSampler, noise_in_span=span, dtype=dt, **law) for law in laws]
    order = [0, 1, 2, 3, 0, 4, 3, 1, 2, 3]
    seeds = [10 + r for r in range(len(order))]
    drawn = StackedSampler([new[i] for i in order]).sample_runs(8, gens(seeds), dtype=F32)
    assert_same(drawn, PromptBatch.stack([old[i].sample(8, gen(s), F32) for i, s in zip(order, seeds)]))
    assert_same(drawn, StackedSampler([new[i] for i in order]).sample_runs(8, gens(seeds), dtype=F32))


def test_pair_samplers_of_different_patterns_are_not_drawn_together():
    a = _pair(PairClassificationSampler)
    b = PairClassificationSampler(MU * 2, NU, cyclic_pair_tasks(6), l=7, alpha=0.6, q=Q, tau=0.25)
    assert a.batch_key() != b.batch_key()
    with pytest.raises(ConfigError, match="share patterns"):
        PairClassificationSampler.draw_runs([a, b], 4, gens([1, 2]))
    out = StackedSampler([a, b, a]).sample_runs(4, gens([1, 2, 3]))
    assert_same(out.run(1), b.sample(4, gen(2)))
    assert_same(out.run(2), a.sample(4, gen(3)))


def _reference_step(params, state, kind, lr, t, *, betas=(0.9, 0.999), eps=1e-8, momentum=0.0, lr_decay=1.0,
                    weight_decay=0.0):
    """The optimizer's update in its plain form (temporaries, no in-place arithmetic)."""
    with torch.no_grad():
        for p, st in zip(params, state):
            g = p.grad
            if weight_decay:
                g = g + weight_decay * p
            lr_p = (lr * lr_decay ** (t - 1)).to(p.dtype).reshape(-1, *([1] * (p.ndim - 1)))
            if kind in ("gd", "sgd"):
                if momentum:
                    buf = st.get("m")
                    buf = g.clone() if buf is None else buf.mul_(momentum).add_(g)
                    st["m"] = buf
                    g = buf
                p.sub_(lr_p * g)
            else:
                b1, b2 = betas
                m = st.setdefault("m", torch.zeros_like(p))
                v = st.setdefault("v", torch.zeros_like(p))
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                p.sub_(lr_p * (m / (1 - b1**t)) / ((v / (1 - b2**t)).sqrt() + eps))


@pytest.mark.parametrize("kind,kw", [("adam", {}), ("adam", dict(lr_decay=0.99, weight_decay=0.01)),
                                     ("sgd", dict(momentum=0.9)), ("gd", dict(lr_decay=0.999))])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_optimizer_update_is_the_plain_formula_bit_for_bit(kind, kw, dtype):
    torch.manual_seed(0)
    shapes = [(3, 4, 5), (3, 7), (3, 2, 2, 2)]
    ours = [torch.nn.Parameter(torch.randn(s, dtype=dtype)) for s in shapes]
    ref = [torch.nn.Parameter(p.detach().clone()) for p in ours]
    lr = torch.tensor([0.1, 0.01, 0.3], dtype=F64)
    opt = BatchedOptimizer(ours, kind, lr, **kw)
    state = [dict() for _ in ref]
    for t in range(1, 6):
        grads = [torch.randn(s, dtype=dtype) for s in shapes]
        for p, q, g in zip(ours, ref, grads):
            p.grad, q.grad = g.clone(), g.clone()
        opt.step()
        _reference_step(ref, state, kind, lr, t, **kw)
        for p, q in zip(ours, ref):
            assert torch.equal(p, q)
