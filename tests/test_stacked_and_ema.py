"""StackedSampler (a different data law per run) and the EMA smoother."""
from __future__ import annotations

import pytest
import torch

from icl_lab import ConfigError, QOnlyAttention, train
from icl_lab.data import CosineFeatureTask, PromptSampler, StackedSampler, separated
from icl_lab.metrics import ema

from _helpers import F64, assert_close


def _samplers(Ls):
    V = separated(3, 5, 3.0)
    return [PromptSampler.from_features(V, CosineFeatureTask(5, L), N=10) for L in Ls]


def test_stacked_sampler_runs_equal_runs_trained_alone():
    Ls, seeds = [0.1, 1.0, 2.0], [3, 4, 5]
    model = QOnlyAttention(5, seeds=seeds)
    hist = train(model, StackedSampler(_samplers(Ls)), steps=8, optimizer="gd", lr=0.5, batch_size=12,
                 dtype=F64, device="cpu", progress=False)
    for r, (L, s) in enumerate(zip(Ls, seeds)):
        alone = QOnlyAttention(5, seeds=[s])
        h = train(alone, _samplers([L])[0], steps=8, optimizer="gd", lr=0.5, batch_size=12,
                  dtype=F64, device="cpu", progress=False)
        assert_close(hist.loss[:, r], h.loss[:, 0])
        assert_close(model.Q[r], alone.Q[0])
    # the laws really differ: label scale grows with L
    assert hist.loss[0, 0] < hist.loss[0, 2]


def test_stacked_sampler_rejects_mismatched_shapes_and_generators():
    V = separated(3, 5, 3.0)
    a = PromptSampler.from_features(V, CosineFeatureTask(5, 1.0), N=10)
    b = PromptSampler.from_features(V, CosineFeatureTask(5, 1.0), N=11)
    with pytest.raises(ConfigError, match="samplers"):
        StackedSampler([a, b])
    with pytest.raises(ConfigError, match="generators"):
        StackedSampler([a, a]).sample_runs(4, [torch.Generator()])


def test_ema_matches_recursion_and_validates_rate():
    v = torch.tensor([[1.0, 0.0], [0.0, 2.0], [4.0, 2.0]], dtype=F64)
    out = ema(v, rate=0.5)
    assert_close(out, torch.tensor([[1.0, 0.0], [0.5, 1.0], [2.25, 1.5]], dtype=F64))
    assert_close(ema(v.T, rate=0.5, dim=1), out.T)
    with pytest.raises(ConfigError, match="rate"):
        ema(v, rate=0.0)


def _equal_batches(a, b):
    for name in ("x", "y", "x_query", "y_query", "ids", "query_ids", "task_ids"):
        ta, tb = getattr(a, name), getattr(b, name)
        assert (ta is None) == (tb is None), name
        if ta is not None:
            assert torch.equal(ta, tb), name


@pytest.mark.parametrize("kind", ["features", "sphere-noisy-multiquery", "pairs"])
def test_sample_runs_gives_each_run_exactly_its_own_prompts(kind):
    from icl_lab import make_generator
    from icl_lab.data import (AffineTask, LinearTask, PairClassificationSampler, cyclic_pair_tasks,
                              relevant_irrelevant_patterns, sphere, standard_basis)

    if kind == "features":
        s = PromptSampler.from_features(standard_basis(3, 5), LinearTask(5), N=7, p=[0.6, 0.3, 0.1])
    elif kind == "sphere-noisy-multiquery":
        s = PromptSampler.from_inputs(lambda sh, g: sphere(sh, 4, g), AffineTask(4, 2.0), N=9, num_queries=3, sigma=0.1)
    else:
        mu, nu = relevant_irrelevant_patterns(4, 3, 9, beta=2.0)
        s = PairClassificationSampler(mu, nu, cyclic_pair_tasks(4), l=6, alpha=0.6, q=torch.tensor([2.0, 0.0]), tau=0.3)
    seeds = [11, 12, 13]
    batched = s.sample_runs(5, [make_generator(x) for x in seeds])
    assert batched.has_runs and batched.num_runs == 3 and batched.batch_size == 5
    for r, seed in enumerate(seeds):
        _equal_batches(batched.run(r), s.sample(5, make_generator(seed)))
    assert not torch.equal(batched.y[0], batched.y[1])


def test_stacked_sampler_groups_shared_samplers_without_changing_any_run():
    """Runs sharing a sampler object are drawn in one sample_runs call; every run must still be
    exactly sample(batch, generator_r) of its own sampler, whatever the interleaving."""
    a, b = _samplers([0.5, 2.0])
    order = [a, b, a, a, b]
    stacked = StackedSampler(order).sample_runs(6, [torch.Generator().manual_seed(10 + r) for r in range(5)])
    for r, smp in enumerate(order):
        alone = smp.sample(6, torch.Generator().manual_seed(10 + r))
        assert torch.equal(stacked.x[r], alone.x) and torch.equal(stacked.y[r], alone.y)
        assert torch.equal(stacked.y_query[r], alone.y_query) and torch.equal(stacked.ids[r], alone.ids)
