"""Shared test fixtures."""
import pytest

from icl_lab import claims as claims_mod


@pytest.fixture(autouse=True)
def no_declarations(request, monkeypatch):
    """Most tests build ledgers by hand: hide the library's claim declarations unless a test is
    marked ``declarations``."""
    if "declarations" not in request.keywords:
        monkeypatch.setattr(claims_mod, "declared", lambda paper: {})
