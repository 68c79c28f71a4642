"""The window chapter's registry of experiments (Collins et al., *Softmax Attention Adapts to Function
Lipschitzness*, NeurIPS 2024), as ``window.<name>``. The experiments live by job:

* :mod:`.population` — population experiments, no training: signal and noise curves, optimal
  windows, the linear-attention optimum, the low-rank landscape, Fig. 2 from simulation;
* :mod:`.trained` — trained models: Figs 1, 3, 4, 5 and Lemma B.5; :mod:`.lowrank` — Fig. 9 and
  Thm 4.4; both with the protocol of App. J (:mod:`.training`) on the data of :mod:`.data`.
"""
from __future__ import annotations

from ...registry import Registry
from . import lowrank, population, trained

EXPERIMENTS = Registry("window", population.EXPERIMENTS, trained.EXPERIMENTS, lowrank.EXPERIMENTS)
