"""Scales, scaled configurations, generators, devices."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

import icl_lab
from icl_lab import ConfigError, ScaledConfig, by_scale, get_scale


def test_by_scale_follows_ICL_LAB_SCALE(monkeypatch):
    monkeypatch.delenv("ICL_LAB_SCALE", raising=False)
    assert get_scale() == "book" and by_scale(ci=1, paper=2) == 2  # default: what a reader gets (book = paper here)
    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    assert get_scale() == "ci" and by_scale(ci=1, paper=2) == 1
    monkeypatch.setenv("ICL_LAB_SCALE", " paper ")
    assert by_scale(ci=1, paper=2) == 2
    monkeypatch.setenv("ICL_LAB_SCALE", "")
    assert get_scale() == "book"
    assert by_scale("book", ci=1, book=3, paper=2) == 3
    assert by_scale("ci", ci="small", paper="big") == "small"  # an explicit scale wins over the environment


def test_by_scale_needs_every_scale_and_no_other():
    with pytest.raises(ConfigError, match="missing"):
        by_scale("ci", ci=1)
    with pytest.raises(ConfigError, match="scale"):
        by_scale("ci", ci=1, paper=2, huge=3)


@dataclass(frozen=True)
class _Fig(ScaledConfig):
    N: int = 100
    epochs: int = 400
    lr: float = 0.1
    CI = dict(epochs=20, N=10)

    def validate(self):
        if self.N <= 0:
            raise ConfigError(f"N must be positive (got {self.N})")


def test_scaled_config_for_scale(monkeypatch):
    monkeypatch.delenv("ICL_LAB_SCALE", raising=False)
    assert _Fig.for_scale() == _Fig(N=100, epochs=400, lr=0.1)
    assert _Fig.for_scale("ci") == _Fig(N=10, epochs=20, lr=0.1)
    assert _Fig.for_scale("ci", N=50) == _Fig(N=50, epochs=20, lr=0.1)  # overrides beat the CI values
    assert _Fig.for_scale("paper", lr=0.5) == _Fig(N=100, epochs=400, lr=0.5)
    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    assert _Fig.for_scale().epochs == 20
    assert _Fig.for_scale().replace(epochs=3).epochs == 3


def test_scaled_config_rejects_unknown_keys_and_validates():
    with pytest.raises(ConfigError, match="steps is not a parameter of _Fig"):
        _Fig.for_scale("ci", steps=5)
    with pytest.raises(ConfigError, match="^N must be positive"):
        _Fig.for_scale("paper", N=0)
    with pytest.raises(ConfigError, match="^N must be positive"):
        _Fig(N=-1)


def test_generators_are_seeded_and_independent():
    a = torch.rand(5, generator=icl_lab.make_generator(3))
    b = torch.rand(5, generator=icl_lab.make_generator(3))
    c = torch.rand(5, generator=icl_lab.make_generator(4))
    assert torch.equal(a, b) and not torch.equal(a, c)
    gs = icl_lab.make_generators(range(3))
    assert len(gs) == 3
    assert torch.equal(torch.rand(2, generator=gs[2]), torch.rand(2, generator=icl_lab.make_generator(2)))


def test_default_device_honours_environment(monkeypatch):
    monkeypatch.setenv("ICL_LAB_DEVICE", "cpu")
    assert icl_lab.default_device() == torch.device("cpu")
    assert icl_lab.default_device("cpu") == torch.device("cpu")
    monkeypatch.setenv("ICL_LAB_DEVICE", "not-a-device")
    with pytest.raises(ConfigError, match="device"):
        icl_lab.default_device()


def test_tune_allocator_is_idempotent_and_can_be_disabled(monkeypatch):
    import sys

    from icl_lab import config

    first = config.tune_allocator()
    assert config.tune_allocator() == first  # a second call changes nothing
    if sys.platform.startswith("linux"):
        assert first is True  # glibc accepts the thresholds
    monkeypatch.setattr(config, "_allocator_tuned", False)
    monkeypatch.setenv("ICL_LAB_MALLOC", "0")
    assert config.tune_allocator() is False
