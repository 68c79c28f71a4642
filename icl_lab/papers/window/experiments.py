"""Experiments of the window chapter (Collins et al., *Softmax Attention Adapts to Function
Lipschitzness*, NeurIPS 2024), registered as ``window.<name>``.

* population experiments, no training (:mod:`.population`): signal and noise curves, optimal
  windows, the linear-attention optimum, the low-rank landscape, Fig. 2 from simulation;
* trained experiments (:mod:`.trained`: Figs 1, 3, 4, 5 and Lemma B.5; :mod:`.lowrank`: Fig. 9 and
  Thm 4.4), with the protocol of App. J (:mod:`.training`).
"""
from __future__ import annotations

from ...registry import Registry
from .data import CLASSES, F64, ConstantTask, input_law, log_grid, make_task, queries_for, sphere_inputs  # noqa: F401
from .population import (BiasVarianceConfig, LinearAttentionConfig, LowRankLandscapeConfig, PowerLawConfig,  # noqa: F401
                         ScalingConfig, TransferConfig, admissible, brackets, case_titles, population_c_star,
                         run_bias_variance, run_linear_attention, run_lowrank_landscape, run_power_laws, run_scaling,
                         run_transfer, summarize_bias_variance, summarize_linear_attention, summarize_lowrank_landscape,
                         summarize_power_laws, summarize_scaling, summarize_transfer)
from .lowrank import LowRankTrainingConfig, run_covariate_laws, run_lowrank_training, summarize_lowrank_training  # noqa: F401
from .trained import (HillsConfig, IsotropyConfig, NormVsLConfig, NormVsSigmaNConfig, TransferTrainingConfig,  # noqa: F401
                      run_hills, run_isotropy, run_norm_vs_L, run_norm_vs_sigma_n, run_transfer_training, summarize_hills,
                      summarize_isotropy, summarize_norms, summarize_transfer_training)
from .training import anisotropy, error_drops, final_norms, icl_error, ordering, train_window, unresolved_caveat  # noqa: F401
from . import lowrank, population, trained

EXPERIMENTS = Registry("window", population.EXPERIMENTS, trained.EXPERIMENTS, lowrank.EXPERIMENTS)
