"""icl_lab — the library behind the icl-lab book: samplers, models, one trainer, metrics, baselines,
and a claims ledger for reproducing four theory papers on in-context learning."""
from .params import ConfigError
from .claims import Claim, Ledger
from .config import (by_scale, configure_threads, default_device, get_scale, make_generator, make_generators,
                     ScaledConfig)
from .data import PromptBatch, PromptSampler
from .models import AttentionMLP, BilinearAttention, KernelAttention, OneBlockTransformer, QOnlyAttention
from .train import History, train

__version__ = "0.1.0"
__all__ = ["ConfigError", "Claim", "Ledger", "by_scale", "configure_threads", "default_device", "get_scale",
           "make_generator", "make_generators", "ScaledConfig", "PromptBatch", "PromptSampler", "AttentionMLP",
           "BilinearAttention", "KernelAttention", "OneBlockTransformer", "QOnlyAttention", "History", "train"]
