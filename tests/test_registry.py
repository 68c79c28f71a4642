"""The experiment registry's decorator, the ledger's claim cards and the chapters' opening helper."""
from __future__ import annotations

import math

import pytest
import torch

import icl_lab
import icl_lab.notebook
from icl_lab.registry import Experiment, Registry, all_experiments


def test_register_stores_the_experiment_and_returns_the_function_unchanged():
    reg = Registry("toy")

    def summary(res):
        return {"x": res}

    @reg.register("double", config=dict, summary=summary, location="Eq. 1", description="doubles", claims=("T1",))
    def run(cfg):
        return 2 * cfg

    assert run(3) == 6 and isinstance(reg, dict)
    assert reg["double"] == Experiment(paper="toy", location="Eq. 1", description="doubles", config=dict,
                                       run=run, summary=summary, claims=("T1",))
    with pytest.raises(ValueError, match="toy.double is registered twice"):
        reg.register("double", config=dict, summary=summary, location="", description="")(run)


def test_a_registry_gathers_the_registries_of_its_own_paper_only():
    a, b = Registry("toy"), Registry("other")
    a.register("one", config=dict, summary=dict, location="", description="")(len)
    gathered = Registry("toy", a)
    gathered.register("two", config=dict, summary=dict, location="", description="")(abs)
    assert list(gathered) == ["one", "two"] and gathered["one"].paper == "toy"
    with pytest.raises(ValueError, match="'toy' registries"):
        Registry("toy", b)
    with pytest.raises(ValueError, match="registered twice"):
        Registry("toy", a, a)


def test_every_paper_registers_through_a_registry_of_its_own_key():
    from importlib import import_module

    from icl_lab.papers import PAPERS

    exps = all_experiments()
    for key in PAPERS:
        reg = import_module(f"icl_lab.papers.{key}.experiments").EXPERIMENTS
        assert isinstance(reg, Registry) and reg.paper == key
        assert all(exps[f"{key}.{name}"] is e and e.paper == key for name, e in reg.items())


@pytest.mark.declarations
def test_ledger_cards_display_each_claim(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    ledger = icl_lab.Ledger("selectors", part="sample_complexity")
    ledger.cards("S1", "S2")
    assert [c.id for c in shown] == ["S1", "S2"]
    with pytest.raises(icl_lab.ConfigError, match="not declared"):
        ledger.cards("no-such-claim")


@pytest.mark.declarations
def test_chapter_gives_the_scale_and_the_papers_ledger(monkeypatch, capsys):
    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    scale, ledger = icl_lab.notebook.chapter("window", part="smoother")
    assert scale == "ci" and ledger.paper == "window" and ledger.part == "smoother"
    assert capsys.readouterr().out.startswith(f"This page ran at the ci scale ({icl_lab.notebook.WHAT['ci']}) on ")


def test_hit_sweep_reads_median_fastest_and_unreached_seeds():
    from icl_lab.papers.selectors import HitSweep, TrainResult

    res = TrainResult(labels=["a", "b", "c"], values=[0.5, 1.0, 2.0], seeds=[0, 1] * 3, steps=[], curves={},
                      t_hit=torch.tensor([10.0, float("nan"), 4.0, 8.0, 2.0, 4.0], dtype=torch.float64),
                      train_loss=None, model=None, seconds=1.0, cpu_seconds=2.0)
    h = HitSweep.of(res)
    assert h.median.tolist() == [math.inf, 6.0, 3.0] and h.fastest.tolist() == [10.0, 4.0, 2.0]
    assert h.medians() == {0.5: None, 1.0: 6, 2.0: 3}
    assert h.slope() == pytest.approx(math.log(3 / 6) / math.log(2))  # the unreached value is left out
    assert h.slope(inverse=True, fastest=True) == pytest.approx(math.log(10 / 2) / math.log(4))
    assert h.report("x").startswith("6 runs in 1.0 s wall (2.0 s CPU)\nx: (0.5, 1.0, 2.0)")


def test_every_summary_declares_its_keys():
    """The results store checks a stored summary's shape against these declarations."""
    from icl_lab.registry import all_experiments, returns

    undeclared = [n for n, e in all_experiments().items() if e.summary_keys is None]
    assert not undeclared, f"summary functions without @returns(...): {undeclared}"
    for bad in ((), ("a", "a"), ("",)):
        with pytest.raises(ValueError):
            returns(*bad)
