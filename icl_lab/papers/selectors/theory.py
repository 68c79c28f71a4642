"""Closed forms and bounds of *Transformers as Multi-Task Feature Selectors* (H. Li, M. Wang et al.):
the prompt-length bound of Thm 1 (eq. (5)), the accuracy of the ideal selector, the Chernoff bound
(37) against the exact binomial tail, the attention-collapse recursion (46) of the proof of Thm 1,
the iteration law of eq. (6) in alpha, and the closed-form hinge-loss gradients of App. B."""
from __future__ import annotations

import math

import numpy as np
import torch

from ...data.prompts import PromptBatch
from ...models import AttentionMLP


def prompt_length_bound(M: int, alpha: float) -> int:
    """ceil(2 ln M / alpha): eq. (5) read with constant 1 (eq. (38) has ln M1 instead of ln M)."""
    return int(math.ceil(2 * math.log(M) / alpha))


def oracle_accuracy(alpha, l):
    """Accuracy of the ideal selector that reads the label of any demonstration sharing the query's
    pattern and guesses when there is none: 1 - 1/2 (1 - alpha/2)^l (exact under the data model)."""
    a = np.asarray(alpha, dtype=float)
    return 1 - 0.5 * (1 - a / 2) ** np.asarray(l, dtype=float)


def chernoff_tail(alpha: float, l: int, c: float) -> float:
    """The bound (37): P(#{mu_a demonstrations}/l <= (1 - c) alpha/2) <= exp(-l c^2 alpha / 2) -- as
    printed; Lemma 2's (14) with mean p = alpha/2 gives the sharper exp(-l c^2 alpha / 4)."""
    return math.exp(-l * c * c * alpha / 2)


def binomial_lower_tail(alpha: float, l: int, c: float) -> float:
    """Exact P(Bin(l, alpha/2) <= (1 - c) l alpha/2), the quantity (37) bounds."""
    p = alpha / 2
    k_max = math.floor((1 - c) * l * p + 1e-12)
    return float(sum(math.comb(l, k) * p**k * (1 - p) ** (l - k) for k in range(0, k_max + 1)))


def collapse_recursion(alpha: float, steps: int, eta: float = 0.1, a: float = 1.0, M1: int = 8) -> np.ndarray:
    """Iterate eq. (46): gamma_T = min(1, (1-alpha)/alpha * exp(-(eta^2/M1^2) (sum_{b<T} eta^2 b^2 gamma_b / a)^2)).

    gamma_t is the attention mass *outside* N_*.  The paper leaves the constants free; the
    recursion shows the plateau-then-collapse shape, not the alpha trend."""
    g = np.empty(steps + 1)
    pre = (1 - alpha) / alpha
    s = 0.0
    for t in range(steps + 1):
        g[t] = min(1.0, pre * math.exp(-(eta**2 / M1**2) * s**2))
        s += eta**2 * t**2 * g[t] / a
    return g


def collapse_times(gamma: np.ndarray, steps=None, levels=(0.9, 0.5, 0.1)) -> list:
    """Steps at which gamma first falls below level x gamma[0] (linear interpolation), per level."""
    steps = np.arange(len(gamma)) if steps is None else np.asarray(steps, dtype=float)
    out = []
    for lev in levels:
        thr = lev * gamma[0]
        idx = np.nonzero(gamma < thr)[0]
        if not len(idx):
            out.append(float("nan"))
            continue
        i = idx[0]
        if i == 0:
            out.append(float(steps[0]))
            continue
        f = (gamma[i - 1] - thr) / (gamma[i - 1] - gamma[i])
        out.append(float(steps[i - 1] + f * (steps[i] - steps[i - 1])))
    return out


def collapse_sharpness(gamma: np.ndarray, steps=None) -> float:
    """(t_10% - t_90%) / t_50%: the width of the collapse relative to its onset.  Scale-free: for
    the recursion (46) it does not depend on eta, a or M1 (they only rescale time)."""
    t90, t50, t10 = collapse_times(gamma, steps)
    return (t10 - t90) / t50



def fit_alpha_law(alpha, t_hit) -> tuple[float, float, float]:
    """Fit T = A / (C - 1/alpha) (Thm 1's factor (C - alpha^{-1})^{-1}) by least squares in log T
    over a grid of C > max 1/alpha.  Returns (A, C, rms log error)."""
    alpha, t = np.asarray(alpha, dtype=float), np.asarray(t_hit, dtype=float)
    ok = np.isfinite(t) & (t > 0)
    alpha, t = alpha[ok], t[ok]
    if len(t) < 2:
        return float("nan"), float("nan"), float("nan")
    inv = 1 / alpha
    best = (float("inf"), float("nan"), float("nan"))
    for C in np.concatenate([inv.max() + np.geomspace(1e-3, 100, 400)]):
        logA = np.mean(np.log(t) + np.log(C - inv))
        err = np.sqrt(np.mean((np.log(t) - (logA - np.log(C - inv))) ** 2))
        if err < best[0]:
            best = (err, float(np.exp(logA)), float(C))
    return best[1], best[2], best[0]




def gradients_closed_form(model: AttentionMLP, batch: PromptBatch, r: int = 0) -> dict[str, torch.Tensor]:
    """The batch-mean hinge-loss gradients of run ``r`` in closed form (App. B, eqs. (72), (131),
    (82), (121), with the hinge factor -y 1[yF < 1] that the paper's versions omit).

    With sigma_s the softmax weights, pbar = sum_s sigma_s p_s, sa = W_V pbar, h = W_O sa and
    g_i = a_i 1[h_i >= 0]:  dF/dW_O = g sa^T;  dF/dW_V = (W_O^T g) pbar^T;
    dF/dW_Q = sum_s sigma_s w_s W_K (p_s - pbar) p_q^T;  dF/dW_K = sum_s sigma_s w_s W_Q p_q (p_s - pbar)^T,
    w_s = g^T W_O W_V p_s (the softmax Jacobian sigma_s (delta_sr - sigma_r) gives the p_s - pbar)."""
    b = batch.run(r) if batch.has_runs else batch
    WQ, WK, WV, WO, a = (t[r].detach() for t in (model.W_Q, model.W_K, model.W_V, model.W_O, model.a))
    E = b.embedding().to(WQ.dtype)
    ps, pq = E[:, : b.N], E[:, b.N]
    sig = torch.softmax(torch.einsum("bsk,bk->bs", ps @ WK.T, pq @ WQ.T), -1)
    pbar = torch.einsum("bs,bsd->bd", sig, ps)
    sa = pbar @ WV.T
    h = sa @ WO.T
    g = a * (h >= 0).to(h.dtype)
    F = (a * torch.relu(h)).sum(-1)
    y = b.y_query[:, 0].to(h.dtype)
    c = -y * (y * F < 1).to(h.dtype) / len(y)  # d mean hinge / dF per prompt
    u = g @ WO  # (B, m_b): sum_i g_i W_O(i)
    w = torch.einsum("bj,bsj->bs", u, ps @ WV.T)  # w_s
    coef = c[:, None] * sig * w
    dev = ps - pbar[:, None]
    return {"W_O": torch.einsum("bm,bj->mj", c[:, None] * g, sa),
            "W_V": torch.einsum("bj,bd->jd", c[:, None] * u, pbar),
            "W_Q": torch.einsum("bs,bsk,bd->kd", coef, dev @ WK.T, pq),
            "W_K": torch.einsum("bs,bk,bsd->kd", coef, pq @ WQ.T, dev)}




EPS_M = 0.49  # epsilon_m in (0, 1/2): the largest value, so the weakest width condition
WIDTH = "width (35): m >= eps_m^-2 M1^2 log N"
BATCH = "batch (39): B >= M1 log M1"
BATCH6 = "batch (Lemma 6): B >= lambda_*^-4"
LENGTH = "prompt length (5): l >= 2 log M / alpha"
NOISE = "noise: tau <= O(1/M1), 1 - eps_m - tau M1 > 0"
PATTERNS = "patterns: M >= M1^2"
SCALE = "scale: beta = Theta(log log M1)"
INIT = "initialisation: delta in (0, 0.1)"
INIT6 = "Lemma 6 (B.4): log M1 >= delta^2 beta^2"
THM1 = (WIDTH, BATCH, BATCH6, LENGTH, NOISE, PATTERNS, SCALE, INIT, INIT6)
# Props. 1-2 and Lemmas 3-7 are steps of Theorem 1's proof and share its conditions; Lemma 7 needs two.
LEMMA7 = (WIDTH, NOISE)
# Theorem 2 (and Cor. 1) speak of the model Theorem 1 returns, so they carry Theorem 1's conditions and
# add four on the test distribution.
TEST_MU = "test-relevant patterns: mu'_j = sum_i k_i mu_i with k_i >= 0, M1' <= M1"
TEST_NU = "test-irrelevant patterns: nu'_j outside span{mu}"
TEST_Q = "label embeddings: +-q, the training ones"
TEST_L = "test prompt length: l_ts >= 2/alpha'"
THM2_TEST = (TEST_MU, TEST_NU, TEST_Q, TEST_L)
THM2 = THM1 + THM2_TEST


def theorem1_conditions(*, M1: int, M: int, m: int, B: int, T: int, beta: float, delta: float, tau: float,
                        lambda_star: float, alpha: float, l: int, eps_m: float = EPS_M) -> dict:
    """Thm 1's hypotheses (and those its proof adds) for one setting, read with constant 1 where the
    paper writes Omega, O or Theta: ``{condition: (what is required, what we have, holds)}``.

    * width (35) m >= eps_m^-2 M1^2 log N with N = BT samples;
    * batch (39) B >= M1 log M1 and, for the proof of Lemma 6 (B.4), B >= lambda_*^-4;
    * prompt length (5) l >= 2 log M / alpha;
    * noise tau <= O(1/M1), read as 1 - eps_m - tau M1 > 0 so that the factor of eq. (6) exists;
    * patterns M >= M1^2 (Sec. 3.1); scale beta = Theta(log log M1): at one M1 a Theta fixes no value (any
      beta is c log log M1 for some constant c), so it holds; the required column gives c;
    * initialisation delta in (0, 0.1) (Sec. 3.1), and log M1 >= delta^2 beta^2 (proof of Lemma 6, B.4)."""
    N = B * T
    ll = math.log(math.log(M1)) if M1 > 2 else float("nan")
    width = eps_m**-2 * M1**2 * math.log(N)
    conds = {
        WIDTH: (f">= {width:.0f}", f"{m}", m >= width),
        BATCH: (f">= {M1 * math.log(M1):.1f}", f"{B}", B >= M1 * math.log(M1)),
        BATCH6: (f">= {lambda_star ** -4:.1f}", f"{B}", B >= lambda_star**-4),
        LENGTH: (f">= {2 * math.log(M) / alpha:.1f}", f"{l}",
                                                    l >= 2 * math.log(M) / alpha),
        NOISE: (f"< {(1 - eps_m) / M1:.3f}", f"{tau:g}",
                                                         1 - eps_m - tau * M1 > 0),
        PATTERNS: (f">= {M1 ** 2}", f"{M}", M >= M1**2),
        SCALE: (f"c log log M1, any c (c = {beta / ll:.1f} here)", f"{beta:g}", beta > 0),
        INIT: ("in (0, 0.1)", f"{delta:g}", 0 < delta < 0.1),
        INIT6: (f"<= {math.log(M1):.2f}", f"{delta**2 * beta**2:.3g}",
                                                   math.log(M1) >= delta**2 * beta**2),
    }
    return conds


def holds(conds: dict, names=THM1) -> dict:
    """``{condition: holds}`` for the claims' hypotheses (a subset ``names`` of the conditions)."""
    return {k: bool(conds[k][2]) for k in names}


def holds_all(conds_list, names=THM1) -> dict:
    """``{condition: holds at every setting of a sweep}``."""
    return {k: all(bool(c[k][2]) for c in conds_list) for k in names}


def violated(conds: dict, names=THM1) -> str:
    """The violated conditions with the required and the actual value, for a caveat."""
    return "; ".join(f"{k} (needs {conds[k][0]}, have {conds[k][1]})" for k in names if not conds[k][2])


def upper_bound_check(slope: float, rate: float, name: str, tolerance: float = 0.4) -> tuple[bool, str | None]:
    """Eq. (6) is an iteration count after which zero error is guaranteed: an upper bound with hidden
    constants. It is contradicted only by iterations that grow faster than the bound's ``rate``
    (log-log ``slope`` above it by more than ``tolerance``); a slope below ``rate - tolerance`` means
    "bound not tight", returned as a caveat. Returns (passed, caveat or None)."""
    passed = bool(np.isfinite(slope) and slope <= rate + tolerance)
    caveat = (f"bound not tight in {name}: measured slope {slope:.2f} against {rate:g}"
              if passed and slope < rate - tolerance else None)
    return passed, caveat


def query_coverage(M1: int, B: int) -> float:
    """Probability that B queries uniform over the M1 relevant patterns show every pattern (the
    coupon collector of eq. (39)), by inclusion-exclusion: sum_k (-1)^k C(M1, k) (1 - k/M1)^B."""
    return sum((-1) ** k * math.comb(M1, k) * (1 - k / M1) ** B for k in range(M1 + 1))
