"""The papers' checks (``icl_lab/papers/<key>/checks.py``): what decides each claim lives in the library,
hands over exactly the quantities its claim's tests read, and is tested on small results."""
from __future__ import annotations

import ast
import re
import math
from pathlib import Path

import pytest
import torch

from icl_lab import make_generator
from icl_lab.claims import Ledger, Measurement, declared, parse_declarations, quantities_read
from icl_lab.data import LinearTask, PromptSampler, random_orthonormal
from icl_lab.models import QOnlyAttention
from icl_lab.params import ConfigError
from icl_lab.papers import PAPERS
from icl_lab.papers.common import checks
from icl_lab.papers.common.experiments import ContextLengthConfig, ContextLengthResult
from icl_lab.papers.common.theory import q_only_gradient_closed_form
from icl_lab.train import mse_loss

LIB = Path(__file__).resolve().parents[1] / "icl_lab"
WITH_CHECKS = [p for p in PAPERS if (LIB / "papers" / p / "checks.py").is_file()]


def _literal_keys(node, where: str) -> set[str]:
    if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                 for k in node.keys):
        raise AssertionError(f"{where}: write the quantities as a dict literal with string keys")
    return {k.value for k in node.keys}


def handed_over(path: Path) -> dict[str, set[str]]:
    """Per claim id, the quantity names the ``Measurement(...)`` calls of a checks module hand over
    (read from its source: the ids and the quantities' keys are literals)."""
    out: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name != "Measurement":
            continue
        where = f"{path.name}:{node.lineno}"
        kw = {k.arg: k.value for k in node.keywords}
        claim = node.args[0] if node.args else kw.get("claim")
        quantities = node.args[1] if len(node.args) > 1 else kw.get("quantities")
        assert isinstance(claim, ast.Constant) and isinstance(claim.value, str), f"{where}: the claim id must be a literal"
        names = _literal_keys(quantities, where)
        if "under" in kw:
            under = kw["under"]
            assert isinstance(under, ast.Dict), f"{where}: under must be a dict literal"
            for v in under.values:
                names |= _literal_keys(v, where)
        out.setdefault(claim.value, set()).update(names)
    return out


def test_a_paper_has_checks():
    assert "common" in WITH_CHECKS


@pytest.mark.declarations
@pytest.mark.parametrize("paper", WITH_CHECKS)
def test_checks_hand_over_exactly_the_quantities_claims_toml_tests_read(paper):
    """For every paper with a checks module: the claims it judges are the paper's checkable claims, and
    for each claim the quantity names it hands over are the names its declared tests read."""
    got = handed_over(LIB / "papers" / paper / "checks.py")
    want = {d.id: set(quantities_read(d)) for d in declared(paper).values() if d.tests}
    assert set(got) == set(want), f"{paper}: claims judged {sorted(got)}, claims with tests {sorted(want)}"
    wrong = {c: (sorted(got[c] - want[c]), sorted(want[c] - got[c])) for c in want if got[c] != want[c]}
    assert not wrong, f"{paper}: quantities handed over but not read, and read but not handed over: {wrong}"


def test_quantities_read_include_named_thresholds_and_note_fields():
    decl = parse_declarations("""
[[claim]]
id = 'X1'
location = 'Sec. 2'
statement = 's'
caveat = 'measured at {n} points; braces {{kept}}'
[[claim.test]]
quantity = 'slope'
is = 'below'
than = 'bound'
source = 'paper: eq. (3)'
[[claim.test]]
quantity = 'err'
is = 'below'
than = 0.1
source = 'ours: a cut'
fails = 'caveat'
note = 'the error is {err:.2f}, e^{{-x}}'
""", "common")
    assert quantities_read(decl["X1"]) == {"slope", "bound", "err", "n"}


@pytest.mark.declarations
def test_judge_refuses_a_misspelt_or_missing_quantity_before_deciding():
    ledger = Ledger("common")
    with pytest.raises(ConfigError, match=r"not read: \['max diff'\]; missing: \['max difference'\]"):
        ledger.judge(Measurement("S1", {"max diff": 1e-15}), show=False)
    with pytest.raises(ConfigError, match=r"missing: \['loss / uniform at the longest context'\]"):
        ledger.judge([Measurement("S5", {"mean loss over N": [0.5, 0.1]})], show=False)
    with pytest.raises(ConfigError, match="Measurement objects"):
        ledger.judge([{"claim": "S1"}], show=False)
    with pytest.raises(ConfigError, match="'S9' is not declared"):
        ledger.judge(Measurement("S9", {}), show=False)
    assert ledger.pending() == [c.id for c in ledger]  # nothing was decided


# ------------------------------------------------------------------------ the common chapter's checks
@pytest.mark.declarations
def test_kernel_smoother_decides_s1_on_the_predictions():
    a = torch.linspace(0, 1, 12, dtype=torch.float64).reshape(3, 4)
    ledger = Ledger("common")
    (c,) = ledger.judge(checks.kernel_smoother(a, a + 2.0**-52), show=False)
    assert c.status == "reproduced" and c.measured == r"max difference = $2.22\times10^{-16}$"
    (c,) = ledger.judge(checks.kernel_smoother(a, a.flip(0)), show=False)
    assert c.status == "not reproduced"


@pytest.mark.declarations
def test_gradient_decides_s2_and_s3_on_a_small_model():
    V = random_orthonormal(2, 4, make_generator(0))
    batch = PromptSampler.from_features(V, LinearTask(4), N=5).sample(16, make_generator(1))
    model = QOnlyAttention(4, runs=1, init="normal", init_std=0.5).to(dtype=torch.float64)
    (auto,) = torch.autograd.grad(mse_loss(model(batch), batch).sum(), model.Q)
    closed = q_only_gradient_closed_form(model.Q.detach()[0], batch)
    ledger = Ledger("common")
    s2, s3 = ledger.judge(checks.gradient(auto[0], closed, V), show=False)
    assert (s2.id, s2.status, s3.id, s3.status) == ("S2", "reproduced", "S3", "reproduced")
    off_span = auto[0] + 1e-3 * torch.eye(4, dtype=torch.float64)  # leaves span{v_n v_k^T} (K = 2 < d = 4)
    s2, s3 = ledger.judge(checks.gradient(off_span, closed, V), show=False)
    assert s2.status == s3.status == "not reproduced"
    with pytest.raises(ConfigError, match="autograd"):
        checks.gradient(auto, closed, V)  # the run dimension left on


def _result(trained, own, *, K=2, d=4, lin_excess_se=1.0) -> ContextLengthResult:
    """A hand-made context-length result over N = (2, 4, 8): ``trained`` (3, seeds) held-out losses,
    ``own`` (seeds,) own-feature attention at the longest N; the best linear attention lies
    ``lin_excess_se`` standard errors above Exercise 2's formula."""
    cfg = ContextLengthConfig(d=d, K=K, N_values=(2, 4, 8), seeds=len(own), linear_fit_prompts=1000)
    f64 = dict(dtype=torch.float64)
    trained = torch.tensor(trained, **f64)
    se = torch.full((3,), 1e-3, **f64)
    lin = checks.linear_optimum_loss(cfg.N_values, 1 / K) * (1 + d**2 / 1000) + lin_excess_se * se
    zeros = torch.zeros(3, **f64)
    return ContextLengthResult(
        config=cfg, N=[2, 4, 8], trained_loss=trained, train_curves=[], own_attention=torch.tensor([own] * 3, **f64),
        uniform_loss=torch.tensor([0.6, 0.5, 0.5], **f64), bayes_risk=zeros, ls_bayes_gap=torch.full((3,), 1e-12, **f64),
        knn1_loss=zeros, nw_loss=zeros, linear_attention_loss=lin, linear_attention_se=se, lower_bound=zeros,
        models=[], seconds=0.0)


@pytest.mark.declarations
def test_context_length_decides_s4_s5_s6_s8_on_a_small_result():
    res = _result([[0.4, 0.4], [0.1, 0.1], [0.01, 0.02]], [0.95, 0.97])
    ms = {m.claim: m for m in checks.context_length(res)}
    assert list(ms) == ["S4", "S5", "S6", "S8"]
    assert ms["S5"].quantities["loss / uniform at the longest context"] == pytest.approx(0.015 / 0.5)
    assert ms["S6"].quantities["softmax / linear-optimum loss at the longest context"] == pytest.approx(
        0.015 / float(res.linear_attention_loss[-1]))
    assert ms["S4"].hypotheses["N >= 20 K^3 (N >= poly(K); Lemma C.4)"] is False  # 8 < 20 * 2^3
    ledger = Ledger("common")
    statuses = {c.id: c.status for c in ledger.judge(list(ms.values()), show=False)}
    assert statuses == {"S4": "reproduced with caveat", "S5": "reproduced", "S6": "reproduced with caveat",
                        "S8": "reproduced"}
    assert "2 seeds" in ledger["S4"].how and "N = [2, 4, 8]" in ledger["S5"].how
    flat = _result([[0.4, 0.4], [0.1, 0.1], [0.2, 0.2]], [0.5, 0.6])  # the loss rises again; attention spread
    statuses = {c.id: c.status for c in ledger.judge(checks.context_length(flat), show=False)}
    assert statuses["S5"] == "not reproduced"
    assert statuses["S4"] == "inconclusive"  # a failure where N >= 20 K^3 does not hold


def test_linear_optimum_loss_is_the_best_constant_over_the_binomial_count():
    """Exercise 2: min over c of 1/2 E(c X - 1)^2 with X ~ Bin(N, p), from the pmf."""
    for N, p in ((1, 0.5), (6, 0.25), (40, 0.1)):
        pmf = torch.tensor([math.comb(N, k) * p**k * (1 - p) ** (N - k) for k in range(N + 1)], dtype=torch.float64)
        k = torch.arange(N + 1, dtype=torch.float64)
        c = float((pmf * k).sum() / (pmf * k**2).sum())  # the minimiser of a quadratic in c
        best = float(0.5 * (pmf * (c * k - 1) ** 2).sum())
        assert float(checks.linear_optimum_loss([N], p)[0]) == pytest.approx(best, rel=1e-12)
    with pytest.raises(ConfigError, match="p must lie"):
        checks.linear_optimum_loss([4], 1.0)


@pytest.mark.declarations
def test_linear_rate_decides_s7_in_standard_errors():
    ledger = Ledger("common")
    (c,) = ledger.judge(checks.linear_rate(_result([[0.4], [0.1], [0.01]], [0.95], lin_excess_se=2.0)), show=False)
    assert c.status == "reproduced" and c.measured == "largest deviation in standard errors = 2"
    (c,) = ledger.judge(checks.linear_rate(_result([[0.4], [0.1], [0.01]], [0.95], lin_excess_se=-6.0)), show=False)
    assert c.status == "not reproduced"


# ------------------------------------------------------------------------ the pages of such a paper
ROOT = LIB.parent
HIDDEN = {"remove-cell", "remove-input", "hide-input"}


def _pages_of(paper: str) -> list[Path]:
    """The chapter pages (py:percent sources) that build the ledger of ``paper``."""
    pages = sorted((ROOT / "chapters").rglob("*.py")) + sorted((ROOT / "synthesis").glob("*.py"))
    return [p for p in pages if f'notebook.chapter("{paper}"' in p.read_text()]


def _code_cells(page: Path) -> list[tuple[bool, list[str]]]:
    """(visible, non-blank lines) of each code cell: a cell is hidden when tagged remove-cell,
    remove-input or hide-input."""
    import jupytext

    nb = jupytext.read(page)
    return [(not HIDDEN & set(c.metadata.get("tags", [])), [ln for ln in c.source.splitlines() if ln.strip()])
            for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("paper", WITH_CHECKS)
def test_a_page_whose_paper_has_checks_teaches_the_code(paper):
    """A page of a paper with checks.py judges through them and shows its science: no function defined
    in the page, no quantity typed into a measure call, no number carried into prose by
    ``display(Markdown(...))`` (glue it), at least a third of its code lines visible, no visible cell
    over 25 lines and no visible noqa or import-only cell after the first visible code cell."""
    pages = _pages_of(paper)
    assert pages, f"no chapter page builds the {paper} ledger"
    for page in pages:
        cells = _code_cells(page)
        code = [ln for _, lines in cells for ln in lines]
        where = page.relative_to(ROOT)
        assert not [ln for ln in code if re.match(r"\s*(async\s+)?def\s|.*\blambda\b", ln)], f"{where} defines a function"
        assert not [ln for ln in code if re.search(r"\.measure\(|\.check\(", ln)], f"{where} measures by hand: use checks"
        assert "display(Markdown(" not in page.read_text(), f"{where} carries numbers into prose: glue them"
        visible = [lines for shown, lines in cells if shown]
        n_visible, n_total = sum(map(len, visible)), len(code)
        assert 3 * n_visible >= n_total, f"{where}: {n_visible} of {n_total} code lines visible (< a third)"
        assert max(map(len, visible)) <= 25, f"{where}: a visible cell over 25 lines"
        for lines in visible[1:]:
            assert not any("noqa" in ln for ln in lines), f"{where}: a visible noqa"
            assert not all(re.match(r"(import|from)\s", ln) for ln in lines), f"{where}: an import-only cell mid-page"
