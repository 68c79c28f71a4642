"""The chapter's reference records: the ``selectors.theorem1`` runs (a setting that meets Theorem 1's
conditions, see :class:`~icl_lab.papers.selectors.experiments.Theorem1Config`) stored by
``icl-lab run selectors.theorem1 --scale paper --seeds-per-task 4 --results results/reference``."""
from __future__ import annotations

import numpy as np
import torch

from ...paths import REFERENCE
from ...records import config_to_json
from ...store import ResultsStore
from .experiments import EXPERIMENTS, PromptLengthConfig, PromptLengthResult, Theorem1Config


def theorem1_records(root=None) -> dict | None:
    """The stored ``selectors.theorem1`` runs at paper scale, merged over their tasks: per seed the
    final accuracy, attention mass on N_* and first-hit step; with the config, the commit(s) and the
    CPU seconds. ``None`` when no record is stored."""
    store = ResultsStore(REFERENCE if root is None else root)
    recs = [r for _, r, err in store.records("selectors.theorem1", {"selectors.theorem1": EXPERIMENTS["theorem1"]})
            if r is not None and r.get("scale") == "paper"]
    if not recs:
        return None
    paper = Theorem1Config()
    seeds, acc, mass, hit, cpu, commits = [], [], [], [], 0.0, set()
    for r in sorted(recs, key=lambda r: r["seeds"][0]):
        s = r["summary"]
        seeds += list(r["seeds"])
        acc += s["final_acc"][0]
        mass += s["final_mass_present"][0]
        hit += [np.nan if v is None else v for v in s["t_hit"][0]]
        cpu += float(r["meta"]["cpu_seconds"])
        commits.add(r["meta"]["code"]["git_commit"][:10])
    return {"seeds": seeds, "acc": np.asarray(acc), "mass": np.asarray(mass), "t_hit": np.asarray(hit, dtype=float),
            "cpu_seconds": cpu, "commits": sorted(commits), "config": paper,
            "config_matches": all(_without_seeds(r["config"]) == _without_seeds(config_to_json(paper)) for r in recs)
            and sorted(seeds) == list(range(paper.seed, paper.seed + paper.seeds))}


def _without_seeds(cfg_json: dict) -> dict:
    """A stored config without its seed split (tasks hold a slice of the seeds)."""
    return {k: v for k, v in cfg_json.items() if k not in ("seeds", "seed")}


def prompt_length_from_summary(cfg: PromptLengthConfig, summary: dict) -> PromptLengthResult:
    """The :class:`PromptLengthResult` of a stored ``selectors.prompt_length`` summary (without the
    per-length training histories, which the summary does not keep)."""
    return PromptLengthResult(cfg, torch.tensor(summary["acc"]), torch.tensor(summary["mass"]),
                              np.asarray(summary["oracle"], dtype=float), [], float(summary.get("seconds", 0.0)))
