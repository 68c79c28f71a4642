"""Experiments of the window chapter (Collins et al., *Softmax Attention Adapts to Function
Lipschitzness*, NeurIPS 2024), registered as ``window.<name>``.

* population experiments, no training (:mod:`.population`): signal and noise curves, optimal
  windows, the linear-attention optimum, the low-rank landscape, Fig. 2 from simulation;
* trained experiments (:mod:`.trained`: Figs 1, 3, 4, 5 and Lemma B.5; :mod:`.lowrank`: Fig. 9 and
  Thm 4.4), with the protocol of App. J (:mod:`.training`).
"""
from __future__ import annotations

from ...registry import Experiment
from .data import CLASSES, F64, input_law, log_grid, make_task, queries_for, sphere_inputs  # noqa: F401
from .population import (BiasVarianceConfig, LinearAttentionConfig, LowRankLandscapeConfig, PowerLawConfig,  # noqa: F401
                         ScalingConfig, TransferConfig, admissible, brackets, case_titles, population_c_star,
                         run_bias_variance, run_linear_attention, run_lowrank_landscape, run_power_laws, run_scaling,
                         run_transfer, summarize_bias_variance, summarize_linear_attention, summarize_lowrank_landscape,
                         summarize_power_laws, summarize_scaling, summarize_transfer)
from .lowrank import LowRankTrainingConfig, run_covariate_laws, run_lowrank_training, summarize_lowrank_training  # noqa: F401
from .trained import (HillsConfig, IsotropyConfig, NormVsLConfig, NormVsSigmaNConfig, TransferTrainingConfig,  # noqa: F401
                      run_hills, run_isotropy, run_norm_vs_L, run_norm_vs_sigma_n, run_transfer_training, summarize_hills,
                      summarize_isotropy, summarize_norms, summarize_transfer_training)
from .training import anisotropy, icl_error, ordering, train_window  # noqa: F401

EXPERIMENTS = {
    "power_laws": Experiment("window", "App. C, D (Lemmas C.4, C.8, D.1)", "signal and noise terms against c at large n",
                             PowerLawConfig, run_power_laws, summarize_power_laws, ("T-C2", "T-C4", "T-C8", "T-D1", "T-D2")),
    "scaling": Experiment("window", "Thm 3.4", "optimal window c* against Lambda = n L^2 / sigma^2 (population)",
                          ScalingConfig, run_scaling, summarize_scaling, ("T-34-affine", "T-34-relu", "T-34-mono", "T-34-sat")),
    "transfer": Experiment("window", "Thm 3.5", "pretrain at L, test at L' and on other L-Lipschitz classes",
                           TransferConfig, run_transfer, summarize_transfer, ("T-35-up", "T-35-low")),
    "linear_attention": Experiment("window", "Thm 3.6", "exact linear-attention optimum vs L^2/3 and softmax",
                                   LinearAttentionConfig, run_linear_attention, summarize_linear_attention, ("T-36",)),
    "lowrank_landscape": Experiment("window", "Thm 4.4", "(c1, c2) loss landscape for low-rank linear tasks",
                                    LowRankLandscapeConfig, run_lowrank_landscape, summarize_lowrank_landscape,
                                    ("T-44", "T-44-gen", "T-H1")),
    "isotropy": Experiment("window", "Lemma B.5", "trained M becomes a multiple of I from an anisotropic start",
                           IsotropyConfig, run_isotropy, summarize_isotropy, ("E-B5",)),
    "fig1_hills": Experiment("window", "Fig. 1", "hills on the circle: softmax vs linear, error vs n",
                             HillsConfig, run_hills, summarize_hills, ("E-F1a", "E-F1a-lit", "E-F1b")),
    "fig2_bias_variance": Experiment("window", "Fig. 2", "bias and variance of the softmax estimate vs window",
                                     BiasVarianceConfig, run_bias_variance, summarize_bias_variance, ("T-F2",)),
    "fig3_norm_vs_L": Experiment("window", "Fig. 3", "||M|| during pretraining for several L",
                                 NormVsLConfig, run_norm_vs_L, summarize_norms, ("E-F3", "E-34-trained")),
    "fig4_norm_vs_sigma_n": Experiment("window", "Fig. 4", "||M|| during pretraining for several sigma and n",
                                       NormVsSigmaNConfig, run_norm_vs_sigma_n, summarize_norms, ("E-F4-sigma", "E-F4-n")),
    "fig5_transfer": Experiment("window", "Fig. 5", "test ICL error during pretraining, cross-class transfer",
                                TransferTrainingConfig, run_transfer_training, summarize_transfer_training,
                                ("E-F5-same", "E-F5-mismatch")),
    "fig9_lowrank": Experiment("window", "Fig. 9 / Thm 4.4", "low-rank tasks: subspace alignment and test error",
                               LowRankTrainingConfig, run_lowrank_training, summarize_lowrank_training,
                               ("E-F9-affine", "E-F9-quadratic", "E-F9-cosine", "E-T44", "E-F9-sphere")),
}
