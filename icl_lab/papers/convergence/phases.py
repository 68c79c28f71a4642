"""Phase detection on recorded trajectories of one query column.

Paper thresholds (App. D, E), for an under-represented column k >= 2:

* T_1 = max{tau : B_{k,1} >= -0.49 log K}             (phase I: the dominant key is suppressed)
* T_2 = max{tau > T_1 : A_k - B_{k,1} <= 1.01 log K}   (phase II: the leading influence switches)
* T_3 = max{tau > T_2 : A_k <= log K}                  (phase III: the target weight grows)
* T_4 = min{tau : L_k - L_k^low <= eps}               (phase IV: convergence; the paper's threshold
  has unspecified constants, so the loss criterion of Lemma C.10 replaces it)

Balanced column: T_1 = max{tau : A_k <= log K}, T_2 = the eps criterion.  Dominant column: only the
eps criterion.  The constant-free *mechanistic markers* proposed by the chapter (claim U2m):

* tau_sw: first tau with alpha_k >= |beta_{k,1}| (the switch of the leading influence);
* tau_AB: first tau with A_k >= -B_{k,1};  tau_logK: first tau with A_k >= log K;  tau_eps.

Times are read off the recorded points by linear interpolation; NaN when not reached in the run
(a "max" condition still true at the end of the run counts as not reached).
"""
from __future__ import annotations

import math

import numpy as np

from ... import metrics
from ... import params as chk
from .reduced import ColumnTrajectory

PAPER_THRESHOLDS = {"T1": -0.49, "T2": 1.01, "T3": 1.0}


def last_holding(tau: np.ndarray, f: np.ndarray, after: float = -np.inf) -> float:
    """max{tau > after : f(tau) <= 0} as the crossing time after the last point where f <= 0;
    NaN if f <= 0 still holds at the end of the run (the phase has not ended)."""
    tau, f = np.asarray(tau, float), np.asarray(f, float)
    sel = tau > after
    if not sel.any() or f[-1] <= 0:
        return math.nan
    holds = np.where(sel & (f <= 0))[0]
    if holds.size == 0:
        return math.nan if not np.isfinite(after) else float(after)
    i = int(holds[-1])
    f0, f1 = f[i], f[i + 1]
    return float(tau[i] + (tau[i + 1] - tau[i]) * (-f0) / (f1 - f0))


def _after_dip(tau, f) -> float:
    """First tau where f returns to >= 0 after having been < 0 (f = A_k + B_{k,1} starts at 0)."""
    neg = np.where(np.asarray(f) < 0)[0]
    if neg.size == 0:
        return math.nan
    return float(metrics.first_crossing(f, 0.0, times=tau, interpolate=True, after=float(tau[neg[0]]) - 1e-300))


def convergence_time(traj: ColumnTrajectory, eps: float) -> float:
    """tau_eps = first tau with L_k - L_k^low <= eps (interpolated in log of the gap)."""
    eps = chk.positive("eps", eps)
    g = np.maximum(traj.gap, 1e-300)
    return float(metrics.first_crossing(np.log(eps) - np.log(g), 0.0, times=traj.tau, interpolate=True))


def phase_times(traj: ColumnTrajectory, eps: float, kind: str | None = None) -> dict:
    """Phase boundaries (paper thresholds) and mechanistic markers of one column.

    kind: 'under' (column with a dominant key class), 'balanced' or 'dominant' (default: from the
    column's classes: 'under' if it has a 'dominant' class, else 'balanced').
    Returns a dict of floats (tau units; NaN = not reached)."""
    col = traj.column
    if kind is None:
        kind = "under" if "dominant" in col.class_index else "balanced"
    chk.one_of("kind", kind, ("under", "balanced", "dominant"))
    logK = col.logK
    tau, A = traj.tau, traj.series("A")
    out = {"tau_eps": convergence_time(traj, eps), "tau_logK": float(metrics.first_crossing(A - logK, 0.0, times=tau, interpolate=True))}
    if kind == "under":
        B1, alpha, beta1 = traj.series("B1"), traj.series("alpha"), traj.series("beta1")
        T1 = last_holding(tau, PAPER_THRESHOLDS["T1"] * logK - B1)
        T2 = last_holding(tau, (A - B1) - PAPER_THRESHOLDS["T2"] * logK, after=T1) if np.isfinite(T1) else math.nan
        T3 = last_holding(tau, A - PAPER_THRESHOLDS["T3"] * logK, after=T2) if np.isfinite(T2) else math.nan
        out.update(T1=T1, T2=T2, T3=T3, T4=out["tau_eps"],
                   tau_sw=float(metrics.first_crossing(alpha - np.abs(beta1), 0.0, times=tau, interpolate=True)),
                   tau_AB=_after_dip(tau, A + B1))
    elif kind == "balanced":
        out.update(T1=last_holding(tau, A - logK), T2=out["tau_eps"])
    else:
        out.update(T1=out["tau_eps"])
    return out


def value_at(traj_tau: np.ndarray, series: np.ndarray, tau: float) -> float:
    """Linear interpolation of a recorded series at tau (NaN outside the run)."""
    if not np.isfinite(tau) or tau < traj_tau[0] or tau > traj_tau[-1]:
        return math.nan
    return float(np.interp(tau, traj_tau, series))


def window(traj: ColumnTrajectory, start: float, stop: float) -> np.ndarray:
    """Boolean mask of recorded points with start < tau <= stop (a phase window)."""
    return (traj.tau > start) & (traj.tau <= stop)
