"""The window paper (Collins et al., *Softmax attention adapts to function Lipschitzness*):
population-level theory (:mod:`.theory`: signal/noise curves, optimal windows, linear-attention
and low-rank checks) and the pieces its experiments need beyond the shared library
(:mod:`.data`: the Fig. 1 hills task, a grouped sampler)."""
from .data import GroupedSampler, PrefetchSampler, WrappedCosineHills
from .ledger import export_part, merged_ledger
from .theory import (WindowCurves, fit_slope, hard_window_loss, linear_attention_loss, lowrank_landscape,
                     optimal_window, softmax_weights, window_curves)

__all__ = ["export_part", "merged_ledger", "GroupedSampler", "PrefetchSampler", "WrappedCosineHills", "WindowCurves", "fit_slope", "hard_window_loss",
           "linear_attention_loss", "lowrank_landscape", "optimal_window", "softmax_weights", "window_curves"]
