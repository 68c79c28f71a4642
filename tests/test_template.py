"""The template paper (``icl_lab/papers/_template``) walks the path CONTRIBUTING.md gives for adding a
paper: its key added to ``PAPERS`` registers its experiment, ``icl-lab run`` computes and stores it at ci
scale, the chapter stub reads it back through the store, measures its claim, which the library decides
from ``claims.toml``, exports the ledger and draws the figure. Outside these tests the template is
nowhere: not in the book, the command line's list, the synthesis or the shipped ledgers."""
from __future__ import annotations

import json
import runpy
from pathlib import Path

import matplotlib
import pytest
import torch

import icl_lab.papers
from icl_lab import cli, registry
from icl_lab import claims as claims_mod
from icl_lab.config import make_generator
from icl_lab.data import LinearTask, PromptSampler, standard_basis
from icl_lab.models import QOnlyAttention
from icl_lab.papers import PAPERS
from icl_lab.papers._template import checks, conditions, theory
from icl_lab.papers._template import figures as TF
from icl_lab.memo import full
from icl_lab.papers._template.experiments import TrainingConfig, run_training
from icl_lab.params import ConfigError

matplotlib.use("Agg")
pytestmark = pytest.mark.declarations  # the template's claims.toml is read, not hidden
ROOT = Path(__file__).resolve().parents[1]
KEY, NAME = "_template", "_template.training"
HERE = ROOT / "icl_lab" / "papers" / KEY


@pytest.fixture
def as_a_paper(monkeypatch, tmp_path):
    """The template's key in ``PAPERS`` (step 2 of CONTRIBUTING.md, for this test only), with a private
    results folder and ledger folder at ci scale."""
    papers = PAPERS + (KEY,)
    for module in (icl_lab.papers, registry, claims_mod, cli):
        monkeypatch.setattr(module, "PAPERS", papers)
    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    monkeypatch.setenv("ICL_LAB_PROGRESS", "0")
    monkeypatch.setenv("ICL_LAB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("ICL_LAB_CLAIMS_DIR", str(tmp_path / "claims"))
    return tmp_path


def test_the_template_is_outside_the_book():
    assert KEY not in PAPERS
    assert not any(name.startswith(KEY) for name in registry.experiments())
    assert KEY not in (ROOT / "_toc.yml").read_text()
    shipped = [p for p in (ROOT / "results" / "reference").glob("claims/*/*.json") if KEY in p.read_text()]
    assert not shipped and not (ROOT / "results" / "reference" / NAME).exists()
    with pytest.raises(ConfigError, match="paper must be one of"):
        claims_mod.Ledger(KEY)


def test_registered_run_by_the_command_line_and_judged_by_the_chapter(as_a_paper, capsys):
    assert NAME in registry.experiments()
    results = as_a_paper / "results"
    assert cli.main(["run", NAME, "--scale", "ci", "--results", str(results), "--no-progress"]) == 0
    (record,) = (results / NAME).glob("*.json")
    stored = json.loads(record.read_text())["summary"]
    cfg = TrainingConfig.for_scale("ci")
    assert full(run_training, cfg, _summary=True) == stored  # read from the store, as the chapter reads it

    # the chapter stub, as a notebook runs it: it reads the record, measures T1, draws, exports its ledger
    runpy.run_path(str(HERE / "chapter.py"), run_name="__main__")
    assert list((results / NAME).glob("*.json")) == [record]  # nothing computed a second time
    table = claims_mod.ClaimsTable.load(as_a_paper / "claims")
    assert [(c.paper, c.id, c.kind, c.status) for c in table.claims] == [(KEY, "T1", "paper", "reproduced")]
    assert table.claims[0].hypotheses == {conditions.CONTEXT: True}

    fig = TF.draw_training(stored, cfg)
    (ax,) = fig.axes
    assert len(ax.lines) == 2 and ax.get_yscale() == "log" and ax.get_legend() is not None
    assert ax.lines[0].get_xdata().shape == (cfg.steps,)
    matplotlib.pyplot.close(fig)


def test_the_claim_can_fail_and_respects_its_hypotheses(as_a_paper):
    """T1's declared test decides: a trained loss above the average's fails it; where Theorem 1's condition
    N >= K does not hold, a failure is inconclusive."""
    above = {"trained_loss": [0.5, 0.52, 0.49, 0.51, 0.5, 0.5], "average_theory": 0.4}
    ledger = claims_mod.Ledger(KEY)
    checks.measure_t1(ledger, above, TrainingConfig.for_scale("ci"))
    assert ledger["T1"].status == "not reproduced"
    checks.measure_t1(ledger, above, TrainingConfig.for_scale("ci", N=2))
    assert ledger["T1"].status == "inconclusive"
    astride = {"trained_loss": [0.2, 0.6, 0.3, 0.5, 0.25, 0.55], "average_theory": 0.4}  # the mean's interval contains 1
    checks.measure_t1(ledger, astride, TrainingConfig.for_scale("ci"))
    assert ledger["T1"].status == "inconclusive"


def test_the_average_loss_matches_its_closed_form():
    """theory.average_loss against the Q = 0 model on many prompts, within four standard errors."""
    K, d, N = 4, 8, 16
    p = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64)
    test = PromptSampler.from_features(standard_basis(K, d), LinearTask(d), N=N, p=p).sample(
        40_000, make_generator(3))
    with torch.no_grad():
        per_prompt = 0.5 * (QOnlyAttention(d, runs=1).to(dtype=torch.float64)(test).pred[0] - test.y_query) ** 2
    measured, se = float(per_prompt.mean()), float(per_prompt.std() / per_prompt.numel() ** 0.5)
    assert abs(measured - theory.average_loss(p, N)) < 4 * se
