"""The synthesis chapter's library: the Nadaraya-Watson formula written out by hand, the checks that decide
X0-X2 on small hand-made results, and what the page reads from other chapters' ledgers."""
from __future__ import annotations

import math

import pytest
import torch

from icl_lab import make_generator
from icl_lab.claims import Claim, ClaimsTable, Ledger
from icl_lab.params import ConfigError
from icl_lab.papers.synthesis import checks
from icl_lab.papers.synthesis import figures as SF
from icl_lab.papers.synthesis.experiments import CrossPaperConfig, CrossPaperResult
from icl_lab.papers.synthesis.theory import nadaraya_watson_by_hand

f64 = torch.float64


def test_nadaraya_watson_by_hand_is_the_softmax_read_out():
    g = make_generator(3)
    x, y = torch.randn(5, 7, 3, generator=g, dtype=f64), torch.randn(5, 7, generator=g, dtype=f64)
    xq, M = torch.randn(5, 1, 3, generator=g, dtype=f64), torch.randn(3, 3, generator=g, dtype=f64)
    expected = (torch.softmax(x @ M @ xq[:, 0, :, None], 1)[..., 0] * y).sum(-1)
    assert torch.allclose(nadaraya_watson_by_hand(x, y, xq, M), expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(ConfigError, match="x_query"):
        nadaraya_watson_by_hand(x, y, xq[:, 0], M)


@pytest.mark.declarations
def test_one_family_decides_x0():
    y = torch.tensor([[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0]], dtype=f64)
    pred = torch.tensor([0.5, 0.2], dtype=f64)
    ledger = Ledger("synthesis")
    (c,) = ledger.judge(checks.one_family(pred, pred + 1e-16, pred, y), show=False)
    assert c.status == "reproduced" and c.measured.endswith("every prediction inside [min y, max y]: yes")
    (c,) = ledger.judge(checks.one_family(pred + torch.tensor([0.0, 1.5], dtype=f64), pred, pred, y), show=False)
    assert c.status == "not reproduced"  # 1.7 lies above the second prompt's largest label, 1
    with pytest.raises(ConfigError, match="q_only_pred"):
        checks.one_family(pred, pred, pred[:1], y)


def _result(linear_factor: float = 1.0, reached=(True, True, True)) -> CrossPaperResult:
    """A hand-made cross-paper result: the cosine laws' halfway times are exactly 10 / C (two seeds),
    the linear task's ``linear_factor`` times that law at C = 1; a cosine law not ``reached`` never crosses."""
    cfg = CrossPaperConfig(L_values=(1.0, 2.0, 4.0), seeds=2, record_every=5)
    C = torch.tensor([1.0, 0.07, 0.28, 1.1], dtype=f64)
    t = (10 / C)[:, None].repeat(1, 2)
    t[0] *= linear_factor
    for i, ok in enumerate(reached, start=1):
        if not ok:
            t[i] = math.nan
    return CrossPaperResult(config=cfg, laws=["linear", "cosine L=1", "cosine L=2", "cosine L=4"], contrast=C,
                            label_var=torch.ones(4, dtype=f64), steps=[0, 5], own_attention=torch.zeros(2, 4, 2, dtype=f64),
                            loss=torch.zeros(1, 4, 2, dtype=f64), t_half=t, seconds=0.0)


@pytest.mark.declarations
def test_contrast_law_decides_x1_and_x2_on_a_small_result():
    ledger = Ledger("synthesis")
    x1, x2 = ledger.judge(checks.contrast_law(_result()), show=False)
    assert (x1.status, x2.status) == ("reproduced", "reproduced")
    assert x1.measured == "slope = -1; values of L fitted = 3"
    assert x2.measured.startswith("t_half = 10; predicted = 10; relative error = ")  # shown beside the tested one
    assert "C = 1.000" in x2.how and "records 5 steps apart" in x2.how
    _, x2 = ledger.judge(checks.contrast_law(_result(linear_factor=2.0)), show=False)
    assert x2.status == "not reproduced"  # the linear task twice as slow as the law predicts
    x1, _ = ledger.judge(checks.contrast_law(_result(reached=(True, False, False))), show=False)
    assert x1.status == "inconclusive"  # one cosine law left: no slope to fit


def test_ordered_by_contrast():
    assert checks.ordered_by_contrast(_result())
    res = _result()
    res.t_half[1] = 1.0  # the lowest contrast concentrates first
    assert not checks.ordered_by_contrast(res)


def test_what_the_page_reads_from_the_ledgers():
    table = ClaimsTable([Claim("S3", "selectors", "Thm 1", "s", measured="slope = 2.152 [2.091, 2.222] (median)",
                               status="inconclusive", hypotheses={"width": True, "Lemma 4 (88)": False}),
                         Claim("S3", "common", "Lemma", "s", measured="largest entry = 2e-17", status="reproduced",
                               kind="consistency")])
    assert SF.measured_numbers(table, "selectors", "S3", r"slope = ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]") == [
        2.152, 2.091, 2.222]
    assert SF.claim_status(table, "selectors", "S3") == "inconclusive"
    assert SF.claim_status(table, "common", "S3") == "reproduced"
    assert SF.violated_hypotheses(table, "selectors", "S3") == ["Lemma 4 (88)"]
    assert SF.violated_hypotheses(table, "common", "S3") == []
    assert SF.status_total(table, "consistency") == "1 (1 reproduced)"
    with pytest.raises(ConfigError, match="not found"):
        SF.measured_numbers(table, "common", "S3", r"slope = ([0-9.]+)")
    # the ledger writes very large and small numbers as math; the page reads them back as numbers
    math = ClaimsTable([Claim("U2", "convergence", "Thm", "s", status="reproduced",
                              measured=r"reaches it: $5.6\times10^{21}$; at K = $10^{100}$: $-2.5\times10^{-3}$")])
    assert SF.measured_numbers(math, "convergence", "U2", r"reaches it: ([0-9.e+]+)") == [5.6e21]
    assert SF.measured_numbers(math, "convergence", "U2", r"K = ([0-9.e+]+): ([-0-9.e]+)") == [1e100, -2.5e-3]
    with pytest.raises(ConfigError, match="not in the claims table"):
        SF.claim_status(table, "selectors", "S4")
