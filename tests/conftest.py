"""Shared test fixtures."""
import pytest

from icl_lab import claims as claims_mod
from icl_lab import registry


@pytest.fixture(autouse=True)
def no_declarations(request, monkeypatch):
    """Most tests build ledgers by hand: hide the library's claim declarations unless a test is
    marked ``declarations``."""
    if "declarations" not in request.keywords:
        monkeypatch.setattr(claims_mod, "declared", lambda paper: {})


@pytest.fixture
def toy(monkeypatch):
    """The test-only experiment of ``_sweep_toy`` registered as ``toy.toy``; returns its name."""
    import _sweep_toy

    real = registry.all_experiments
    monkeypatch.setattr(registry, "all_experiments", lambda: {**real(), "toy.toy": _sweep_toy.TOY})
    _sweep_toy.CALLS.clear()
    return "toy.toy"
