"""What decides the claims of the common-setup chapter (``claims.toml``: S1-S8): one function per claim
or claim group. Each takes what the page computed with the library (a few tensors, or the
context-length run's result) and returns :class:`~icl_lab.claims.Measurement` objects, the quantities
under the names the claim's tests read, with the hypotheses where the claim declares them. The page
judges in one line, ``ledger.judge(checks.gradient(...))``; the tests in ``claims.toml`` decide.

The quantities are written as literal dicts: ``tests/test_checks.py`` reads them from this file and
compares them with the names ``claims.toml``'s tests read, for every paper.
"""
from __future__ import annotations

import torch

from ... import params as chk
from ...claims import Measurement
from .experiments import ContextLengthResult


def kernel_smoother(attention_pred: torch.Tensor, nw_pred: torch.Tensor) -> Measurement:
    """S1: softmax attention with ``M = (2/h) I`` against the Nadaraya-Watson estimator of bandwidth
    ``h`` on the same prompts (their predictions, any equal shapes)."""
    return Measurement("S1", {"max difference": float((attention_pred - nw_pred).abs().max())})


def gradient(autograd: torch.Tensor, closed_form: torch.Tensor, V: torch.Tensor) -> list[Measurement]:
    """S2 and S3: the Q-only model's gradient from autograd against the closed form of Lemma C.1
    (both ``d x d``), and how far it leaves the span of ``v_n v_k^T`` (``V``: the ``K x d``
    orthonormal features, rows)."""
    if autograd.shape != closed_form.shape or autograd.shape[-1] != V.shape[-1]:
        raise chk.ConfigError(f"autograd {tuple(autograd.shape)}, closed_form {tuple(closed_form.shape)} and "
                         f"V {tuple(V.shape)} must be d x d, d x d and K x d")
    relative = float((autograd - closed_form).abs().max() / closed_form.abs().max())
    P = V.T @ V  # the projector onto span{v_k}
    outside = float((autograd - P @ autograd @ P).abs().max())
    return [Measurement("S2", {"relative difference": relative}),
            Measurement("S3", {"largest entry outside the span": outside})]


def context_length(res: ContextLengthResult) -> list[Measurement]:
    """S4, S5, S6 and S8 on the context-length run: where trained attention looks at the longest
    context, how its held-out loss falls with N, how it compares with the best linear attention, and
    least squares against the Bayes predictor on every held-out prompt."""
    cfg = res.config
    mean_loss = res.trained_loss.mean(1)  # over seeds, one per N
    return [
        Measurement(
            "S4", {"own-feature attention": res.own_attention[-1].tolist()},
            how=f"own-feature attention on held-out prompts containing the query feature at N = {res.N[-1]}, "
                f"{cfg.seeds} seeds",
            # p_k = 1/K by construction: run_context_length draws the K features with equal probability
            hypotheses={"p_k = Theta(1/K)": True, "N >= 20 K^3 (N >= poly(K); Lemma C.4)": res.N[-1] >= 20 * cfg.K**3}),
        Measurement(
            "S5", {"mean loss over N": mean_loss.tolist(),
                   "loss / uniform at the longest context": float(mean_loss[-1] / res.uniform_loss[-1])},
            how=f"mean over {cfg.seeds} seeds of the held-out loss for each N = {res.N}"),
        Measurement(
            "S6", {"softmax / linear-optimum loss at the longest context":
                   float(mean_loss[-1] / res.linear_attention_loss[-1])},
            # not Thm 3.6's setting by construction: y = <w, x> (no offset) on K orthonormal features
            hypotheses={"tasks with a random offset b ~ U[-L, L] (D(F_L^+) or the affine class, Def. 3.2)": False,
                        "covariates uniform on the sphere (U^d)": False}),
        Measurement("S8", {"max |LS - Bayes prediction|": float(res.ls_bayes_gap.max())}),
    ]


def linear_optimum_loss(N_values, p: float) -> torch.Tensor:
    """Exercise 2's closed form: the loss of the best ``M = cI`` of linear attention,
    ``1/2 (1 - E[c]^2 / E[c^2])`` with the count ``c ~ Bin(N, p)``, for each N (float64)."""
    if not 0 < p < 1:
        raise chk.ConfigError(f"p must lie in (0, 1) (got {p})")
    return torch.tensor([0.5 * (1 - (N * p) ** 2 / (N * p * (1 - p) + (N * p) ** 2)) for N in N_values],
                        dtype=torch.float64)


def linear_optimum_deviation(res: ContextLengthResult) -> torch.Tensor:
    """How far the measured best linear attention lies from :func:`linear_optimum_loss`, in standard
    errors of its held-out loss, for each N. The fitted optimum has ``d^2`` coefficients, fitted on
    ``linear_fit_prompts`` prompts: that adds an excess loss of about ``d^2 / n_fit`` times the loss
    (the classical least-squares overfitting term), which the formula is scaled by."""
    cfg = res.config
    exact = linear_optimum_loss(res.N, 1.0 / cfg.K)
    return (res.linear_attention_loss - exact * (1 + cfg.d**2 / cfg.linear_fit_prompts)) / res.linear_attention_se


def linear_rate(res: ContextLengthResult) -> Measurement:
    """S7: the best linear attention's measured loss against Exercise 2's formula, at every N."""
    return Measurement("S7", {"largest deviation in standard errors": float(linear_optimum_deviation(res).abs().max())})
