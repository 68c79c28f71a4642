"""Models: one family of one-layer attention read-outs (see :mod:`icl_lab.models.attention`)."""
from .attention import (AttentionOutput, BilinearAttention, KernelAttention, QOnlyAttention, RunModule,
                        attend, feature_softmax)
from .transformer import AttentionMLP, OneBlockTransformer

__all__ = ["AttentionOutput", "BilinearAttention", "KernelAttention", "QOnlyAttention", "RunModule", "attend", "feature_softmax",
           "AttentionMLP", "OneBlockTransformer"]
