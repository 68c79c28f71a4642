"""The one-layer attention read-out shared by all four papers.

Every model in this book predicts a query's label as

    y_hat(x_q) = sum_i a_i(x_q) * value_i,      a_i = act(score_i),   score_i = key_i . query

and the papers differ only in how the scores are parametrised, which activation ``act`` is used
(softmax, or identity for linear attention) and what reads the output.  :func:`attend` is that
read-out; :class:`BilinearAttention` is the family whose scores are a bilinear form
``x_i^T M x_q`` (key on the left, query on the right, as in the convergence paper's Def. 3.1):

* ``parametrization='direct'``: M = Q is the parameter (convergence and nonlinear papers; Q-only,
  value copies the label, zero initialisation) -> :func:`QOnlyAttention`;
* ``'tied'``: M = W^T W (window paper, M_K = M_Q = W tied "to speed up training");
* ``'untied'``: M = M_K^T M_Q.

All models carry a leading *run* dimension R on every parameter, so R independent models train
together in one optimizer step (see :mod:`icl_lab.train`).  Their ``forward`` takes a
:class:`~icl_lab.data.PromptBatch` with or without a run dimension and returns an
:class:`AttentionOutput` whose ``pred`` is (R, B, m) and ``attn`` is (R, B, m, N).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import nn

from .. import params as chk
from ..config import make_generator
from ..data.prompts import PromptBatch

ACTIVATIONS = ("softmax", "linear")


@dataclass
class AttentionOutput:
    pred: torch.Tensor  # (R, B, m) predicted labels (or classifier outputs) of the queries
    attn: torch.Tensor  # (R, B, m, N) attention weights of each query over the demonstrations
    extras: dict = field(default_factory=dict)  # model-specific intermediate tensors


def attend(scores: torch.Tensor, values: torch.Tensor, activation: str = "softmax",
           self_score: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The read-out ``sum_i act(scores)_i * values_i``.

    scores: (..., m, N) one row of logits per query; values: (..., N) scalar values or (..., N, dv).
    ``activation='softmax'`` normalises each row; ``'linear'`` uses the scores as weights.
    ``self_score`` (..., m): the query attending to itself with value 0 (included in the softmax's
    normalisation only; the convergence and nonlinear papers' Eq. (5) variant).
    Returns (output (..., m) or (..., m, dv), weights (..., m, N)).
    """
    chk.one_of("activation", activation, ACTIVATIONS)
    if activation == "softmax":
        if self_score is not None:
            full = torch.softmax(torch.cat([scores, self_score.unsqueeze(-1)], dim=-1), dim=-1)
            weights = full[..., :-1]
        else:
            weights = torch.softmax(scores, dim=-1)
    else:
        weights = scores
    if values.ndim == scores.ndim - 1:  # scalar value per token: (..., N)
        out = (weights * values.unsqueeze(-2)).sum(-1)
    else:  # vector values (..., N, dv)
        out = weights @ values
    return out, weights


def feature_softmax(scores, counts=None, *, log_counts=None, dim: int = -1):
    """Softmax attention summed by feature: a prompt holding ``counts[m]`` demonstrations of feature m, each
    scored ``scores[m]``, puts on feature m the mass

        a_m = c_m e^{s_m} / sum_j c_j e^{s_j}  =  softmax(s + log c)_m,

    exactly 0 on a feature absent from the prompt (log 0 = -inf). The reduced dynamics of the convergence and
    nonlinear papers run on these masses instead of on N demonstrations. ``log_counts`` may be given instead
    of ``counts`` (a caller that evaluates many scores on one set of prompts). Tensors use ``torch.softmax``;
    arrays are computed in numpy (shift by the maximum, exponentiate, normalise). Shapes broadcast."""
    if (counts is None) == (log_counts is None):
        raise ValueError("give counts or log_counts")
    if isinstance(scores, torch.Tensor):
        logc = torch.log(counts) if log_counts is None else log_counts
        return torch.softmax(scores + logc, dim=dim)
    if log_counts is None:
        with np.errstate(divide="ignore"):
            log_counts = np.log(counts)
    logits = log_counts + scores
    logits = logits - logits.max(dim, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(dim, keepdims=True)


def run_linear(h: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """Apply per-run matrices W (R, i, o) to inputs h (B, T, i), (1, B, T, i) or (R, B, T, i).

    Returns (R, B, T, o).  For inputs shared by all runs this is one GEMM, (B*T, i) @ (i, R*o),
    instead of a broadcast batched matmul that would first copy h R times (measured 9x faster
    forward+backward for R = 30 runs of the Q-only model).
    """
    if h.ndim == 3 or (h.shape[0] == 1 and W.shape[0] != 1):
        return torch.einsum("bti,rio->rbto", h if h.ndim == 3 else h[0], W)
    return torch.einsum("rbti,rio->rbto", h, W)


def _shared(t: torch.Tensor, ndim: int) -> torch.Tensor | None:
    """``t`` without its run dimension if it has none or a singleton one, else None."""
    if t.ndim == ndim - 1:
        return t
    return t[0] if t.shape[0] == 1 else None


class RunModule(nn.Module):
    """Base class of models with a leading run dimension on every trainable parameter.

    ``seeds`` (length R) seed each run's initialisation separately, so run r of a model built with
    seeds ``s`` equals the single-run model built with ``seeds=[s[r]]``.
    """

    def __init__(self, runs: int | None = None, seeds: Sequence[int] | None = None):
        super().__init__()
        if seeds is None:
            runs = 1 if runs is None else chk.positive_int("runs", runs)
            seeds = list(range(runs))
        else:
            seeds = [int(s) for s in seeds]
            if not seeds:
                raise chk.ConfigError("seeds must be non-empty")
            if runs is not None and chk.positive_int("runs", runs) != len(seeds):
                raise chk.ConfigError(f"runs={runs} does not match len(seeds)={len(seeds)}")
        self.seeds = seeds
        self.runs = len(seeds)

    def _generators(self):
        return [make_generator(s) for s in self.seeds]

    def _per_run(self, fn) -> torch.Tensor:
        """Stack ``fn(generator)`` over runs (float64 draws, so float32 and float64 models agree)."""
        return torch.stack([fn(g) for g in self._generators()])

    @staticmethod
    def _with_runs(t: torch.Tensor, ndim: int) -> torch.Tensor:
        """Add a leading singleton run dimension to shared data."""
        return t.unsqueeze(0) if t.ndim == ndim - 1 else t

    def select_runs(self, index) -> "RunModule":
        """A copy holding only the runs ``index`` (list of ints or slice)."""
        import copy

        new = copy.deepcopy(self)
        idx = torch.as_tensor(range(self.runs)[index] if isinstance(index, slice) else index)
        for name, p in list(new.named_parameters()) + list(new.named_buffers()):
            p.data = p.data[idx].clone()
        new.seeds = [self.seeds[i] for i in idx.tolist()]
        new.runs = len(new.seeds)
        return new


class BilinearAttention(RunModule):
    """Attention with scores x_i^T M x_q and values y_i (the label row), for R runs at once.

    Parameters
    ----------
    d : input dimension.
    parametrization : ``'direct'`` (M is the parameter Q), ``'tied'`` (M = W^T W) or ``'untied'``
        (M = M_K^T M_Q).
    activation : ``'softmax'`` or ``'linear'``.
    init : ``'zero'`` (Q = 0; convergence/nonlinear papers), a float c (every factor = c I; the
        window paper uses c = 0.001 so that M = 1e-6 I), or ``'normal'`` (N(0, init_std^2) entries).
    query_as_key : include the query itself as a key with value 0 (softmax only; the Eq. (5) variant).
    """

    def __init__(self, d: int, runs: int | None = None, seeds: Sequence[int] | None = None, *,
                 parametrization: str = "direct", activation: str = "softmax", init="zero",
                 init_std: float = 0.01, query_as_key: bool = False):
        super().__init__(runs, seeds)
        self.d = chk.positive_int("d", d)
        self.parametrization = chk.one_of("parametrization", parametrization, ("direct", "tied", "untied"))
        self.activation = chk.one_of("activation", activation, ACTIVATIONS)
        self.query_as_key = bool(query_as_key)
        if self.query_as_key and activation != "softmax":
            raise chk.ConfigError("query_as_key only applies to softmax attention")
        names = {"direct": ["Q"], "tied": ["W"], "untied": ["M_K", "M_Q"]}[self.parametrization]
        for name in names:
            self.register_parameter(name, nn.Parameter(self._init(init, init_std)))

    def _init(self, init, std) -> torch.Tensor:
        d, R = self.d, self.runs
        if isinstance(init, str):
            chk.one_of("init", init, ("zero", "normal"))
            if init == "zero":
                if self.parametrization != "direct":
                    raise chk.ConfigError("init='zero' is a stationary point of a factored M; use a small scale like 0.001")
                return torch.zeros(R, d, d, dtype=torch.float64)
            std = chk.positive("init_std", std)
            return self._per_run(lambda g: std * torch.randn(d, d, generator=g, dtype=torch.float64))
        c = float(init)
        return c * torch.eye(d, dtype=torch.float64).expand(R, d, d).clone()

    @property
    def M(self) -> torch.Tensor:
        """(R, d, d) the score matrix: score_i = x_i^T M x_q."""
        if self.parametrization == "direct":
            return self.Q
        if self.parametrization == "tied":
            return self.W.transpose(-1, -2) @ self.W
        return self.M_K.transpose(-1, -2) @ self.M_Q

    def scores(self, x: torch.Tensor, x_query: torch.Tensor) -> torch.Tensor:
        """(R, B, m, N) logits x_i^T M x_q for inputs x (R?, B, N, d) and queries (R?, B, m, d)."""
        u = run_linear(x_query, self.M.transpose(-1, -2))  # (R, B, m, d): M x_q
        xs = _shared(x, 4)
        if xs is not None:
            return torch.einsum("rbmd,bnd->rbmn", u, xs)
        return torch.einsum("rbmd,rbnd->rbmn", u, x)

    def forward(self, batch: PromptBatch) -> AttentionOutput:
        if batch.d != self.d:
            raise chk.ConfigError(f"batch inputs have d={batch.d}, model has d={self.d}")
        s = self.scores(batch.x, batch.x_query)
        self_score = None
        if self.query_as_key:
            u = run_linear(batch.x_query, self.M.transpose(-1, -2))
            self_score = (u * self._with_runs(batch.x_query, 4)).sum(-1)
        pred, w = attend(s, self._with_runs(batch.y, 3), self.activation, self_score)
        return AttentionOutput(pred=pred, attn=w)


def QOnlyAttention(d: int, runs: int | None = None, seeds=None, **kw) -> BilinearAttention:
    """The convergence and nonlinear papers' model: softmax(x_i^T Q x_q) over the N
    demonstrations, value = label, only Q trained, Q^(0) = 0."""
    kw.setdefault("init", "zero")
    return BilinearAttention(d, runs, seeds, parametrization="direct", activation="softmax", **kw)


def KernelAttention(d: int, runs: int | None = None, seeds=None, *, tied: bool = True,
                    activation: str = "softmax", init=0.001, **kw) -> BilinearAttention:
    """The window paper's model: M = M_K^T M_Q (tied: M = W^T W), softmax or linear activation,
    M_K = M_Q = 0.001 I at initialisation."""
    return BilinearAttention(d, runs, seeds, parametrization="tied" if tied else "untied",
                             activation=activation, init=init, **kw)
