"""Attention blocks with learned key/query/value maps and a non-linear read-out.

* :class:`AttentionMLP` — the selectors paper's model, eq. (2):
  F = a^T ReLU(W_O sa),  sa = sum_i W_V p_i softmax_i((W_K p_i)^T W_Q p_q); a fixed in {+-1/m}.
* :class:`OneBlockTransformer` — the "practical" single block used in the experiments of the
  convergence and nonlinear papers (attention + feed-forward + LayerNorm + ReLU + linear read-out;
  architecture details as the book reads App. A of the nonlinear paper: Linear(d+1, width) embedding, pre-LN single-head
  scaled dot-product attention with the query's self-score masked, pre-LN FFN width -> ffn ->
  width, residuals, final LN, Linear(width, 1) read at the query position; PyTorch default init).

Both share :func:`~icl_lab.models.attention.attend` with the bilinear models and carry the leading
run dimension R on all parameters.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .. import params as chk
from ..data.prompts import PromptBatch
from .attention import AttentionOutput, RunModule, attend, run_linear


class AttentionMLP(RunModule):
    """Selectors paper, eq. (2), with its initialisation (spec selectors §4.2, A1-A5).

    W_Q, W_K (m_a x D), W_V (m_b x D), D = d_x + d_y: (non-square) diagonal, with delta on the
    first d_x diagonal entries of W_Q, W_K (label columns zero) and on all D of W_V; W_O (m x m_b)
    with N(0, xi^2) entries; a (m,) uniform in {+1/m, -1/m}, not trained.
    ``include_query_in_attention`` adds the query token as a key (the appendix's s in [l+1], A7).
    """

    def __init__(self, d_x: int, d_y: int, m: int, runs: int | None = None, seeds: Sequence[int] | None = None, *,
                 m_a: int | None = None, m_b: int | None = None, delta: float = 0.1, xi: float = 0.01,
                 include_query_in_attention: bool = False):
        super().__init__(runs, seeds)
        self.d_x = chk.positive_int("d_x", d_x)
        self.d_y = chk.positive_int("d_y", d_y)
        D = self.d_x + self.d_y
        self.m = chk.positive_int("m", m)
        self.m_a = D if m_a is None else chk.positive_int("m_a", m_a)
        self.m_b = D if m_b is None else chk.positive_int("m_b", m_b)
        if self.m_a < self.d_x or self.m_b < D:
            raise chk.ConfigError(f"m_a must be >= d_x={self.d_x} and m_b >= d_x + d_y={D} (got m_a={self.m_a}, m_b={self.m_b})")
        self.delta = chk.positive("delta", delta)
        self.xi = chk.positive("xi", xi)
        self.include_query_in_attention = bool(include_query_in_attention)
        R = self.runs
        wqk = torch.zeros(self.m_a, D, dtype=torch.float64)
        wqk[: self.d_x, : self.d_x] = self.delta * torch.eye(self.d_x, dtype=torch.float64)
        wv = torch.zeros(self.m_b, D, dtype=torch.float64)
        wv[:D, :D] = self.delta * torch.eye(D, dtype=torch.float64)
        self.W_Q = nn.Parameter(wqk.expand(R, -1, -1).clone())
        self.W_K = nn.Parameter(wqk.expand(R, -1, -1).clone())
        self.W_V = nn.Parameter(wv.expand(R, -1, -1).clone())
        gens = self._generators()
        self.W_O = nn.Parameter(torch.stack([self.xi * torch.randn(self.m, self.m_b, generator=g, dtype=torch.float64) for g in gens]))
        a = torch.stack([(torch.randint(0, 2, (self.m,), generator=g) * 2 - 1).to(torch.float64) / self.m for g in gens])
        self.register_buffer("a", a)

    def _tokens(self, batch: PromptBatch):
        tokens = self._with_runs(batch.embedding(), 4)  # (R?, B, l + m, D)
        if tokens.shape[-1] != self.d_x + self.d_y:
            raise chk.ConfigError(f"prompt tokens have width {tokens.shape[-1]}, model expects d_x + d_y = {self.d_x + self.d_y}")
        N = batch.N
        return tokens[..., :N, :], tokens[..., N:, :]

    def _read_out(self, sa, weights) -> AttentionOutput:
        h = torch.einsum("rbmj,rij->rbmi", sa, self.W_O)  # (R, B, m, neurons): W_O sa
        F = torch.relu(h) @ self.a[:, None, :, None]
        return AttentionOutput(pred=F.squeeze(-1), attn=weights, extras={"sa": sa, "h": h})

    def forward(self, batch: PromptBatch) -> AttentionOutput:
        """Eq. (2) with the products reordered by associativity (the selectors chapter's factored form):

            scores_s = p_s . (W_K^T (W_Q p_q)),   pbar = sum_s sigma_s p_s,   sa = W_V pbar,

        instead of projecting every demonstration through W_K and W_V: m_a (resp. m_b) times fewer
        multiply-adds per demonstration, about 2.7x faster forward+backward on a CPU. Equal to
        :meth:`reference_forward` up to rounding (tested in float64)."""
        if self.include_query_in_attention:
            return self.reference_forward(batch)
        ctx, qry = self._tokens(batch)
        if ctx.shape[0] == 1 and self.runs > 1:  # prompts shared by all runs
            qv = torch.einsum("bmd,rkd->rbmk", qry[0], self.W_Q)
            u = torch.einsum("rbmk,rkd->rbmd", qv, self.W_K)  # W_K^T W_Q p_q
            scores = torch.einsum("rbmd,bld->rbml", u, ctx[0])
            weights = torch.softmax(scores, -1)
            pbar = torch.einsum("rbml,bld->rbmd", weights, ctx[0])
        else:
            qv = torch.einsum("rbmd,rkd->rbmk", qry, self.W_Q)
            u = torch.einsum("rbmk,rkd->rbmd", qv, self.W_K)
            scores = torch.einsum("rbmd,rbld->rbml", u, ctx)
            weights = torch.softmax(scores, -1)
            pbar = weights @ ctx
        sa = torch.einsum("rbmd,rjd->rbmj", pbar, self.W_V)
        return self._read_out(sa, weights)

    def reference_forward(self, batch: PromptBatch) -> AttentionOutput:
        """Eq. (2) as written: keys W_K p_s, queries W_Q p_q and values W_V p_s for every token."""
        ctx, qry = self._tokens(batch)
        WQ, WK, WV = (w.transpose(-1, -2) for w in (self.W_Q, self.W_K, self.W_V))  # (R, D, .)
        keys = run_linear(ctx, WK)  # (R, B, l, m_a)
        queries = run_linear(qry, WQ)  # (R, B, m, m_a)
        values = run_linear(ctx, WV)  # (R, B, l, m_b)
        scores = queries @ keys.transpose(-1, -2)  # (R, B, m, l)
        if self.include_query_in_attention:
            # the appendix's variant: the query token is also a key (with its own value W_V p_q)
            self_score = (queries * run_linear(qry, WK)).sum(-1, keepdim=True)
            full = torch.softmax(torch.cat([scores, self_score], -1), -1)
            weights = full[..., :-1]
            sa = weights @ values + full[..., -1:] * run_linear(qry, WV)
        else:
            sa, weights = attend(scores, values, "softmax")
        return self._read_out(sa, weights)


def _uniform(g: torch.Generator, shape, bound: float) -> torch.Tensor:
    return bound * (2 * torch.rand(shape, generator=g, dtype=torch.float64) - 1)


def _layer_norm(h: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last dimension with per-run affine parameters (R, width).

    The normalisation is torch's fused kernel and the affine part one fused multiply-add: 2x faster
    forward+backward than the textbook mean/var formula for 30 runs of the practical block."""
    return torch.addcmul(bias[:, None, None, :], F.layer_norm(h, h.shape[-1:], eps=eps), weight[:, None, None, :])


class OneBlockTransformer(RunModule):
    """A single pre-LN transformer block with a linear read-out, trained end to end.

    tokens (d_in = d + 1: input over label) -> Linear(d_in, width) -> h
    h_q + Attn(LN1(h))  (single head, scaled dot product; the query attends to the N
    demonstrations only) -> h1;  h1 + FFN(LN2(h1)) (ReLU, width -> ffn -> width) -> h2;
    prediction = Linear(width, 1)(LN_f(h2)) at each query position.

    The attention weights returned are those of the query over the demonstrations, the quantity
    the papers' attention figures show.  Parameters use PyTorch's default Linear initialisation
    (U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases).
    """

    def __init__(self, d_in: int, runs: int | None = None, seeds: Sequence[int] | None = None, *,
                 width: int = 32, ffn: int = 64):
        super().__init__(runs, seeds)
        self.d_in = chk.positive_int("d_in", d_in)
        self.width = w = chk.positive_int("width", width)
        self.ffn = f = chk.positive_int("ffn", ffn)
        shapes = {  # name: (shape, fan_in)
            "W_embed": ((self.d_in, w), self.d_in), "b_embed": ((w,), self.d_in),
            "W_q": ((w, w), w), "b_q": ((w,), w), "W_k": ((w, w), w), "b_k": ((w,), w),
            "W_v": ((w, w), w), "b_v": ((w,), w), "W_o": ((w, w), w), "b_o": ((w,), w),
            "W_1": ((w, f), w), "b_1": ((f,), w), "W_2": ((f, w), f), "b_2": ((w,), f),
            "W_out": ((w, 1), w), "b_out": ((1,), w),
        }
        gens = self._generators()
        for name, (shape, fan_in) in shapes.items():
            bound = 1.0 / math.sqrt(fan_in)
            self.register_parameter(name, nn.Parameter(torch.stack([_uniform(g, shape, bound) for g in gens])))
        for ln in ("ln1", "ln2", "lnf"):
            self.register_parameter(f"{ln}_weight", nn.Parameter(torch.ones(self.runs, w, dtype=torch.float64)))
            self.register_parameter(f"{ln}_bias", nn.Parameter(torch.zeros(self.runs, w, dtype=torch.float64)))

    def _linear(self, h, W, b):
        """h (R?, B, T, i) @ W (R, i, o) + b (R, o); with a run dimension, one fused baddbmm."""
        R = W.shape[0]
        if h.ndim != 4 or h.shape[0] != R:
            return run_linear(h, W) + b[:, None, None, :]
        shape = h.shape
        return torch.baddbmm(b[:, None, :], h.reshape(R, -1, shape[-1]), W).reshape(*shape[:-1], W.shape[-1])

    def forward(self, batch: PromptBatch) -> AttentionOutput:
        tokens = self._with_runs(batch.embedding(), 4)
        if tokens.shape[-1] != self.d_in:
            raise chk.ConfigError(f"prompt tokens have width {tokens.shape[-1]}, model expects d_in={self.d_in}")
        N = batch.N
        h = self._linear(tokens, self.W_embed, self.b_embed)  # (R, B, N + m, w)
        a = _layer_norm(h, self.ln1_weight, self.ln1_bias)
        ctx, qry = a[..., :N, :], a[..., N:, :]
        q = self._linear(qry, self.W_q, self.b_q)
        k = self._linear(ctx, self.W_k, self.b_k)
        v = self._linear(ctx, self.W_v, self.b_v)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.width)
        att, weights = attend(scores, v, "softmax")
        h1 = h[..., N:, :] + self._linear(att, self.W_o, self.b_o)
        ff = torch.relu(self._linear(_layer_norm(h1, self.ln2_weight, self.ln2_bias), self.W_1, self.b_1))
        h2 = h1 + self._linear(ff, self.W_2, self.b_2)
        out = self._linear(_layer_norm(h2, self.lnf_weight, self.lnf_bias), self.W_out, self.b_out)
        return AttentionOutput(pred=out.squeeze(-1), attn=weights)
