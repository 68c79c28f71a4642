"""The window paper (Collins et al., *Softmax attention adapts to function Lipschitzness*):
population-level theory (:mod:`.theory`: signal/noise curves, optimal windows, linear-attention
and low-rank checks), the experiments by job (:mod:`.population`, :mod:`.trained`, :mod:`.lowrank`,
gathered in :mod:`.experiments`; protocol in :mod:`.training`, data in :mod:`.data`), figures
(:mod:`.figures`) and claims (``claims.toml``)."""
from .data import PrefetchSampler
from .theory import (WindowCurves, hard_window_loss, linear_attention_loss, lowrank_landscape, optimal_window,
                     softmax_weights, window_curves)

__all__ = ["PrefetchSampler", "WindowCurves", "hard_window_loss", "linear_attention_loss", "lowrank_landscape",
           "optimal_window", "softmax_weights", "window_curves"]
