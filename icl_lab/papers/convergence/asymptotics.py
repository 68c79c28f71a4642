"""An under-represented query column at astronomically large K (mean field).

:meth:`SymmetricColumn.under_represented` (module :mod:`.reduced`) already reduces column k >= 2 to
three class weights (A_k, B_{k,1}, B_{k,o}) -- the target, the dominant key and the K - 2 other
keys -- but it builds the K feature probabilities, so K is limited by memory and by the adaptive
solver's step bound (steps proportional to the time span in log tau).  Here the same mean-field
right-hand side (the ``counts is None`` branch of :meth:`SymmetricColumn.state`) is written for the
three classes alone, with the multiplicity K - 2 of the other keys as a number, so that K is any
real number: a run takes a number of adaptive steps proportional to log K (about 500 at K = 50,
25,000 at K = 1e100; about a second).

With q = (p_o, p_1, p_o), p_o = (1 - p_1)/(K - 1), multiplicities m = (1, 1, K - 2) and
a_j = q_j e^{s_j} / sum_i m_i q_i e^{s_i} (the attention on one key of class j), the field is
(Lemma 4.1 / C.2 in the mean field, as in :mod:`.reduced`)

    G_j = p_k a_j ((e_k - a) . (e_j - a)),   L_k = 1/2 ((1 - a_t)^2 + sum_{j != t} m_j a_j^2),

p_k = p_o.  The chapter checks this module against the library's own flow over the sweep's K.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ... import params as chk
from .reduced import DORMAND_PRINCE


def under_field(s, K: float, p1: float):
    """(G, attention per key, L_k) of the under-represented column at class weights s = (A, B1, Bo),
    for a real K >= 3 (the mean-field right-hand side of :class:`SymmetricColumn`, three classes)."""
    A, B1, Bo = s
    po = (1.0 - p1) / (K - 1.0)
    top = max(A, B1, Bo)
    zt, z1, zo = po * math.exp(A - top), p1 * math.exp(B1 - top), po * math.exp(Bo - top)
    Z = zt + z1 + (K - 2.0) * zo
    at, a1, ao = zt / Z, z1 / Z, zo / Z
    rest = a1 * a1 + (K - 2.0) * ao * ao  # sum over the non-target keys of a_m^2
    sq = at * at + rest
    G = (po * at * (1.0 - 2.0 * at + sq), po * a1 * (sq - at - a1), po * ao * (sq - at - ao))
    return G, (at, a1, ao), 0.5 * ((1.0 - at) ** 2 + rest)


@dataclass
class AsymptoticRun:
    """One run: K, p1; the lowest B_k1/log K over the run (until L_k <= eps, or u_max); the first
    time B_k1 <= threshold * log K (inf if never) with A_k/log K there; the first time A_k >= log K;
    and whether the run ended at L_k <= eps. At the threshold crossing also K^0.98 Attn_1^2 and
    |beta_k1|/alpha_k (``attn1_sq_at_cross``, ``beta_ratio_at_cross``); where A_k first reaches
    0.5 log K (Lemma 4.3's end of phase II), B_k1/log K and B_kn/log K (``B1_at_A_half``,
    ``Bo_at_A_half``); nan where never reached."""

    K: float
    p1: float
    lowest_ratio: float
    tau_cross: float
    A_at_cross: float  # A_k / log K at tau_cross (nan if never crossed)
    tau_A_logK: float
    converged: bool
    steps: int
    attn1_sq_at_cross: float = math.nan
    beta_ratio_at_cross: float = math.nan
    B1_at_A_half: float = math.nan
    Bo_at_A_half: float = math.nan


def run_under(K: float, p1: float, eps: float = 1e-3, threshold: float = -0.49, rtol: float = 1e-9,
              atol: float = 1e-12, max_step_frac: float = 0.02, max_steps: int = 1_000_000) -> AsymptoticRun:
    """The mean-field flow ds/dtau = G(s) from S = 0 until L_k <= eps (as the sweep's runs end), by
    adaptive Dormand-Prince 5(4) (the tableau of :mod:`.reduced`) on the autonomous field alone.

    Steps are limited to ``max_step_frac * (tau + 1)`` as in :meth:`SymmetricColumn.flow`, so a slow
    phase takes about 1/max_step_frac steps per e-fold of tau; in the fast phases (at large K the
    growth of A_k takes a time of order K^1.5 at tau of order K^2) the error control shortens them.
    The field does not depend on tau, so the rounding of tau itself (relative 1e-16) costs nothing."""
    K = float(chk.positive("K", K))
    if K < 3:
        raise chk.ConfigError(f"K must be >= 3 (got {K})")
    p1 = chk.probability("p1", p1, open_interval=True)
    logK = math.log(K)
    dp = DORMAND_PRINCE
    y = (0.0, 0.0, 0.0)
    G, _, loss = under_field(y, K, p1)
    tau, h, steps = 0.0, 1.0, 0
    lowest = 0.0
    tau_cross = tau_A = math.inf
    A_cross = attn1_sq = beta_ratio = B1_half = Bo_half = math.nan
    converged = loss <= eps

    def comb(w, ks):
        return tuple(sum(wi * k[j] for wi, k in zip(w, ks) if wi != 0) for j in range(3))

    while not converged and steps < max_steps:
        h = min(h, max_step_frac * (tau + 1.0))
        ks = [G]
        for row in dp.A[1:]:
            d = comb(row, ks)
            ks.append(under_field(tuple(a + h * b for a, b in zip(y, d)), K, p1)[0])
        d = comb(dp.b, ks)
        y5 = tuple(a + h * b for a, b in zip(y, d))
        G5, _, loss5 = under_field(y5, K, p1)
        err = comb(dp.error, ks + [G5])
        en = math.sqrt(sum((h * e / (atol + rtol * max(abs(a), abs(b)))) ** 2 for e, a, b in zip(err, y, y5)) / 3)
        if not math.isfinite(en):
            raise FloatingPointError(f"the flow produced a non-finite state at tau = {tau:.4g} (K = {K:.3g})")
        if en <= 1.0:
            prev, y, G, tau = y, y5, G5, tau + h
            steps += 1
            lowest = min(lowest, y[1] / logK)
            if math.isinf(tau_cross) and y[1] <= threshold * logK:  # linear interpolation inside the step
                w = (threshold * logK - prev[1]) / (y[1] - prev[1])
                tau_cross = tau - h + w * h
                A_cross = (prev[0] + w * (y[0] - prev[0])) / logK
                Gc, ac, _ = under_field(tuple(a + w * (b - a) for a, b in zip(prev, y)), K, p1)
                attn1_sq, beta_ratio = K ** 0.98 * ac[1] ** 2, abs(Gc[1]) / Gc[0]
            if math.isnan(B1_half) and y[0] >= 0.5 * logK:  # the end of phase II (Lemma 4.3), interpolated
                w = (0.5 * logK - prev[0]) / (y[0] - prev[0])
                B1_half, Bo_half = ((a + w * (b - a)) / logK for a, b in zip(prev[1:], y[1:]))
            if math.isinf(tau_A) and y[0] >= logK:
                tau_A = tau
            converged = loss5 <= eps
        h = h * min(5.0, max(0.2, 0.9 * (en + 1e-300) ** -0.2))
    return AsymptoticRun(K=K, p1=p1, lowest_ratio=lowest, tau_cross=tau_cross, A_at_cross=A_cross,
                         tau_A_logK=tau_A, converged=converged, steps=steps, attn1_sq_at_cross=attn1_sq,
                         beta_ratio_at_cross=beta_ratio, B1_at_A_half=B1_half, Bo_at_A_half=Bo_half)
