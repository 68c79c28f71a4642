"""Invalid parameters raise ConfigError (a ValueError) naming the parameter, before any computation."""
from __future__ import annotations

import pytest
import torch

import icl_lab
from icl_lab import ConfigError, QOnlyAttention, train
from icl_lab.data import (CosineTask, LinearTask, PromptSampler, categorical, random_orthonormal, separated,
                          standard_basis)

from _helpers import F64, gen, linear_feature_sampler


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


@pytest.mark.parametrize("call", [
    lambda: standard_basis(5, 3),
    lambda: random_orthonormal(5, 3, gen(0)),
    lambda: separated(5, 3, 1.0, kind="orth"),
])
def test_K_greater_than_d_for_orthonormal_features(call):
    with pytest.raises(ConfigError, match=r"^K must be <= d.*K=5, d=3"):
        call()


@pytest.mark.parametrize("call", [
    lambda: categorical([0.5, 0.4], (3,), gen(0)),
    lambda: PromptSampler.from_features(standard_basis(3, 3), LinearTask(3), 4, p=[0.5, 0.3, 0.3]),
    lambda: categorical([1.2, -0.2], (3,), gen(0)),
])
def test_probabilities_not_summing_to_one(call):
    with pytest.raises(ConfigError, match=r"^p must"):
        call()


@pytest.mark.parametrize("N", [0, -3, 2.5])
def test_N_must_be_a_positive_integer(N):
    with pytest.raises(ConfigError, match=r"^N must be an integer >= 1"):
        PromptSampler.from_features(standard_basis(3, 3), LinearTask(3), N)


@pytest.mark.parametrize("L", [0, -1.0, float("nan"), float("inf")])
def test_L_must_be_positive(L):
    with pytest.raises(ConfigError, match=r"^L must be a positive"):
        CosineTask(3, L)


class _SpySampler:
    """A sampler that records whether training drew from it."""

    def __init__(self):
        self.inner = linear_feature_sampler()
        self.calls = 0

    def sample_runs(self, batch, generators, dtype=F64):
        self.calls += 1
        return self.inner.sample_runs(batch, generators, dtype)


@pytest.mark.parametrize("kw,pattern", [
    (dict(lr=0.0), r"^lr must be positive"),
    (dict(lr=-0.1), r"^lr must be positive"),
    (dict(lr=[0.1, 0.2]), r"^lr must be a number or have one entry per run \(R=3\); got 2"),
    (dict(lr=[0.1, 0.2, 0.3, 0.4]), r"^lr must .* per run"),
    (dict(optimizer="rmsprop"), r"^optimizer must be one of"),
    (dict(steps=0), r"^steps must"),
    (dict(batch_size=None), r"^batch_size is required"),
    (dict(lr_decay=1.5), r"^lr_decay must"),
    (dict(seeds=[0, 1]), r"^seeds must have one entry per run"),
    (dict(loss="l1"), r"^loss must be one of"),
    (dict(record=3), r"^record must be callable"),
    (dict(record_at=[0, 99]), r"^record_at must lie in"),
])
def test_train_validates_before_computing(kw, pattern):
    model = QOnlyAttention(4, runs=3)
    before = model.Q.detach().clone()
    spy = _SpySampler()
    args = dict(steps=3, optimizer="sgd", lr=0.1, batch_size=4, device="cpu", dtype=torch.float32, progress=False)
    args.update(kw)
    with pytest.raises(ConfigError, match=pattern):
        train(model, spy, **args)
    assert spy.calls == 0  # no prompt was drawn
    assert model.Q.dtype == F64 and torch.equal(model.Q.detach(), before)  # not even cast


def test_train_validates_fixed_data():
    model = QOnlyAttention(4, runs=3)
    data = linear_feature_sampler().sample(10, gen(0))
    with pytest.raises(ConfigError, match=r"^batch_size=11 exceeds"):
        train(model, data, steps=2, optimizer="sgd", lr=0.1, batch_size=11, device="cpu")
    with pytest.raises(ConfigError, match=r"^optimizer='gd' is full-batch"):
        train(model, data, steps=2, optimizer="gd", lr=0.1, batch_size=5, device="cpu")
    runs2 = linear_feature_sampler().sample_runs(10, [gen(0), gen(1)])
    with pytest.raises(ConfigError, match=r"^data has 2 runs, model has R=3"):
        train(model, runs2, steps=2, optimizer="gd", lr=0.1, device="cpu")
    with pytest.raises(ConfigError, match=r"^data must be"):
        train(model, [1, 2, 3], steps=2, lr=0.1, device="cpu")
    with pytest.raises(ConfigError, match=r"^model must be"):
        train(torch.nn.Linear(2, 2), data, steps=2, lr=0.1, device="cpu")


def test_unknown_scale_from_environment(monkeypatch):
    monkeypatch.setenv("ICL_LAB_SCALE", "huge")
    with pytest.raises(ConfigError, match=r"^ICL_LAB_SCALE must be one of \('ci', 'book', 'paper'\) \(got 'huge'\)"):
        icl_lab.get_scale()
    with pytest.raises(ConfigError, match="ICL_LAB_SCALE"):
        icl_lab.by_scale(ci=1, paper=2)


def test_unknown_scale_argument():
    with pytest.raises(ConfigError, match=r"^scale must be one of"):
        icl_lab.get_scale("medium")
    with pytest.raises(ConfigError, match=r"^scale must be one of"):
        icl_lab.by_scale("medium", ci=1, paper=2)


@pytest.mark.parametrize("call,pattern", [
    (lambda: QOnlyAttention(0), r"^d must"),
    (lambda: QOnlyAttention(3, runs=2, seeds=[0, 1, 2]), r"^runs=2 does not match"),
    (lambda: icl_lab.BilinearAttention(3, parametrization="diagonal"), r"^parametrization must be one of"),
    (lambda: icl_lab.BilinearAttention(3, activation="relu"), r"^activation must be one of"),
    (lambda: icl_lab.make_generator(1.5), r"^seed must be an int"),
    (lambda: linear_feature_sampler().sample(4, 0), r"^generator must be a torch.Generator"),
    (lambda: PromptSampler(LinearTask(3), 4), r"give exactly one of features"),
    (lambda: PromptSampler.from_features(standard_basis(2, 4), LinearTask(3), 4), r"^features must have d=3"),
    (lambda: separated(3, 4, 1.0, kind="random"), r"^generator is required"),
    (lambda: icl_lab.data.from_gram([[1.0, 2.0], [2.0, 1.0]]), r"^G must be positive semi-definite"),
])
def test_other_constructors_name_the_parameter(call, pattern):
    with pytest.raises(ConfigError, match=pattern):
        call()


def test_integer_parameters_accept_numpy_integers_but_not_bools():
    import numpy as np

    # sweeps written with numpy (np.arange, astype(int)) pass numpy integers
    s = PromptSampler.from_features(standard_basis(np.int64(3), np.int64(4)), LinearTask(np.int32(4)), np.int64(6))
    assert s.N == 6 and isinstance(s.N, int)
    assert s.sample(np.int64(2), gen(0)).x.shape == (2, 6, 4)
    assert QOnlyAttention(4, runs=np.int64(2)).runs == 2
    with pytest.raises(ConfigError, match=r"^N must be an integer"):
        PromptSampler.from_features(standard_basis(3, 3), LinearTask(3), True)
    with pytest.raises(ConfigError, match=r"^d must be an integer"):
        LinearTask("3")
