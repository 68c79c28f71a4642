"""The convergence chapter's mean-field experiments (Huang, Cheng, Liang): sweeps of the reduced
columns' gradient flow over K, p_1 and eps; the four-phase portrait (Fig. 1); finite context lengths;
GD at several eta against the flow. Configs, run functions and summaries; registered here and
gathered by :mod:`.experiments`."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ... import params as chk
from ...config import ScaledConfig, make_generator
from ...params import Int, Real, TupleOf
from ...registry import Registry, returns
from .theory import SymmetricColumn, convergence_time, phase_times, tail_fractions

EXPERIMENTS = Registry("convergence")

# declared parameter ranges shared by the chapter's configs; the upper bounds protect the machine
K3 = Int(3, 10**5)
NCTX = Int(1, 10**6)
PROMPTS = Int(1, 10**6)
SEED = Int(0, 2**31 - 1)
PROB = Real(0, 1, closed="neither")
POS = Real(0, 1e6, closed="right")


# ====================================================================== sweeps (mean-field flow)
@dataclass(frozen=True)
class SweepConfig(ScaledConfig):
    """Mean-field gradient flow of the reduced columns.

    Balanced (p_k = 1/K) and imbalanced (p_1, p_k = (1 - p_1)/(K - 1)) columns for every K in
    ``K_values`` and every p_1 in ``p1_values``; convergence at ``eps`` (and the eps ladder for the
    scaling in eps at ``K_eps``); the late-time law at ``K_late`` up to ``tau_late``."""

    K_values: tuple = (10, 20, 50, 100, 200, 500, 1000, 2000)
    p1_values: tuple = (0.3, 0.5, 0.8)
    p1_main: float = 0.5
    eps: float = 1e-3
    eps_values: tuple = (3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)
    K_eps: int = 50
    dominant_K: tuple = (10, 50, 100, 1000)
    dominant_eps: tuple = (1e-2, 1e-3, 1e-4)
    K_late: tuple = (20, 50, 200)
    tau_late: float = 1e8
    rtol: float = 1e-8
    CI = dict(K_values=(10, 20, 50, 100, 200), eps=1e-2, eps_values=(1e-1, 3e-2, 1e-2, 3e-3), K_eps=20,
              dominant_K=(10, 50, 100), dominant_eps=(1e-2, 1e-3), K_late=(20,), tau_late=1e7, rtol=1e-7)
    PARAMS = dict(K_values=TupleOf(K3, max_len=32), p1_values=TupleOf(PROB, max_len=16), p1_main=PROB, eps=PROB,
                  eps_values=TupleOf(PROB, max_len=32), K_eps=K3, dominant_K=TupleOf(K3, max_len=32),
                  dominant_eps=TupleOf(PROB, max_len=16), K_late=TupleOf(K3, max_len=16),
                  tau_late=Real(0, 1e12, closed='right'), rtol=Real(0, 1e-2, closed='right'))

    def validate(self):
        if self.p1_main not in self.p1_values:
            raise chk.ConfigError(f"p1_main must be one of p1_values={self.p1_values} (got {self.p1_main})")



@dataclass
class SweepResult:
    config: SweepConfig
    balanced: dict  # K -> {'times': phase_times, 'traj': ColumnTrajectory}
    under: dict  # (p1, K) -> {'times', 'traj'}
    dominant: dict  # (p1, K) -> {'times', 'traj'}
    eps_balanced: dict  # eps -> tau_eps (balanced, K_eps)
    eps_under: dict  # eps -> tau_eps (under-represented, K_eps, p1_main)
    dominant_times: dict  # (K, eps) -> tau_eps of the dominant column (p1_main)
    late: dict  # K -> {'tau', 'ratio'} 4 p_k tau L_k for the under-represented column (p1_main)
    late_balanced: dict  # K -> {'tau', 'ratio'} the same for the balanced column
    seconds: float


def _flow_until(col: SymmetricColumn, eps: float, rtol: float, tau_cap: float = 1e11):
    return col.flow(tau_cap, rtol=rtol, stop_gap=eps * 0.999)


def _times_json(t: dict) -> dict:
    return {k: (None if not np.isfinite(v) else float(v)) for k, v in t.items()}


@returns("balanced", "under", "dominant_times", "seconds", timings=("seconds",))
def summarize_sweep(res: SweepResult) -> dict:
    return {"balanced": {str(K): _times_json(v["times"]) for K, v in res.balanced.items()},
            "under": {f"p1={p1},K={K}": _times_json(v["times"]) for (p1, K), v in res.under.items()},
            "dominant_times": {f"K={K},eps={e}": t for (K, e), t in res.dominant_times.items()},
            "seconds": res.seconds}


@EXPERIMENTS.register("sweep", config=SweepConfig, summary=summarize_sweep, location="Thms 3.1, 3.2; Lemmas 4.2-4.6",
                      description="mean-field flow sweeps over K, p_1, eps",
                      claims=("B2", "B3", "B4", "D2", "D3", "U2", "U3", "U4", "U5", "J1"))
def run_sweep(cfg: SweepConfig) -> SweepResult:
    t0 = time.perf_counter()
    eps_min = min(cfg.eps, *cfg.eps_values)
    bal, und, dom = {}, {}, {}
    for K in cfg.K_values:
        col = SymmetricColumn.balanced(K)
        tr = _flow_until(col, cfg.eps if K != cfg.K_eps else eps_min, cfg.rtol)
        bal[K] = {"times": phase_times(tr, cfg.eps, "balanced"), "traj": tr}
        for p1 in cfg.p1_values:
            e = eps_min if (K == cfg.K_eps and p1 == cfg.p1_main) else cfg.eps
            tr = _flow_until(SymmetricColumn.under_represented(K, p1), e, cfg.rtol)
            und[(p1, K)] = {"times": phase_times(tr, cfg.eps, "under"), "traj": tr}
            tr = _flow_until(SymmetricColumn.dominant(K, p1), cfg.eps, cfg.rtol)
            dom[(p1, K)] = {"times": phase_times(tr, cfg.eps, "dominant"), "traj": tr}
    if cfg.K_eps not in cfg.K_values:
        tr = _flow_until(SymmetricColumn.balanced(cfg.K_eps), eps_min, cfg.rtol)
        bal[cfg.K_eps] = {"times": phase_times(tr, cfg.eps, "balanced"), "traj": tr}
        tr = _flow_until(SymmetricColumn.under_represented(cfg.K_eps, cfg.p1_main), eps_min, cfg.rtol)
        und[(cfg.p1_main, cfg.K_eps)] = {"times": phase_times(tr, cfg.eps, "under"), "traj": tr}
    eps_bal = {e: convergence_time(bal[cfg.K_eps]["traj"], e) for e in cfg.eps_values}
    eps_und = {e: convergence_time(und[(cfg.p1_main, cfg.K_eps)]["traj"], e) for e in cfg.eps_values}
    dom_t = {}
    for K in cfg.dominant_K:
        tr = _flow_until(SymmetricColumn.dominant(K, cfg.p1_main), min(cfg.dominant_eps), cfg.rtol)
        for e in cfg.dominant_eps:
            dom_t[(K, e)] = convergence_time(tr, e)
    late, late_bal = {}, {}
    for K in cfg.K_late:
        col = SymmetricColumn.under_represented(K, cfg.p1_main)
        tr = col.flow(cfg.tau_late, rtol=cfg.rtol, max_step_frac=0.05)
        late[K] = {"tau": tr.tau, "ratio": 4 * col.pk * tr.tau * tr.loss, "pk": col.pk}
        bcol = SymmetricColumn.balanced(K)
        btr = bcol.flow(cfg.tau_late, rtol=cfg.rtol, max_step_frac=0.05)
        late_bal[K] = {"tau": btr.tau, "ratio": 4 * bcol.pk * btr.tau * btr.loss, "pk": bcol.pk}
    return SweepResult(config=cfg, balanced=bal, under=und, dominant=dom, eps_balanced=eps_bal, eps_under=eps_und,
                       dominant_times=dom_t, late=late, late_balanced=late_bal, seconds=time.perf_counter() - t0)


# ====================================================================== portrait
@dataclass(frozen=True)
class PortraitConfig(ScaledConfig):
    """The four phases of one under-represented column (data-driven Figure 1): mean-field
    flow at K, p_1, plus GD with eta on a Monte-Carlo count law (N, M) as a finite-N overlay."""

    K: int = 50
    p1: float = 0.5
    eps: float = 1e-3
    N: int = 10_000
    M: int = 2000
    eta: float = 20.0
    seed: int = 0
    CI = dict(K=20, eps=1e-2, N=1000, M=500, eta=5.0)
    PARAMS = dict(K=K3, p1=PROB, eps=PROB, N=NCTX, M=PROMPTS, eta=POS, seed=SEED)



@dataclass
class PortraitResult:
    config: PortraitConfig
    flow: object  # ColumnTrajectory (mean field)
    times: dict
    finite: object  # ColumnTrajectory (GD on the MC law)
    finite_times: dict
    dominant: object
    dominant_times: dict
    seconds: float


@returns("times", "finite_times", "seconds", timings=("seconds",))
def summarize_portrait(res: PortraitResult) -> dict:
    return {"times": _times_json(res.times), "finite_times": _times_json(res.finite_times), "seconds": res.seconds}


@EXPERIMENTS.register("portrait", config=PortraitConfig, summary=summarize_portrait, location="Fig. 1, Section 4.1",
                      description="four phases of an under-represented column", claims=("U1", "D1"))
def run_portrait(cfg: PortraitConfig) -> PortraitResult:
    t0 = time.perf_counter()
    col = SymmetricColumn.under_represented(cfg.K, cfg.p1)
    tr = _flow_until(col, cfg.eps, 1e-8)
    times = phase_times(tr, cfg.eps, "under")
    colN = SymmetricColumn.under_represented(cfg.K, cfg.p1, N=cfg.N, M=cfg.M, generator=make_generator(cfg.seed))
    trN = colN.gd(cfg.eta, 2 * tr.tau[-1], stop_gap=cfg.eps * 0.999)
    dcol = SymmetricColumn.dominant(cfg.K, cfg.p1)
    trd = dcol.flow(tr.tau[-1], rtol=1e-8)
    return PortraitResult(config=cfg, flow=tr, times=times, finite=trN, finite_times=phase_times(trN, cfg.eps, "under"),
                          dominant=trd, dominant_times=phase_times(trd, cfg.eps, "dominant"),
                          seconds=time.perf_counter() - t0)


# ====================================================================== finite N
@dataclass(frozen=True)
class FiniteNConfig(ScaledConfig):
    """Phase times and convergence for finite context lengths N (Monte Carlo over M count
    vectors, fixed across steps), against the mean field; B5: fraction of fresh prompts with
    (1 - Attn_k)^2 > C eps at the convergence time."""

    K: int = 50
    p1: float = 0.5
    N_values: tuple = (200, 1000, 10_000, 100_000)
    M: int = 1000
    eps: float = 1e-3
    fresh_prompts: int = 100_000
    seed: int = 0
    CI = dict(K=20, N_values=(100, 1000, 10_000), M=500, eps=1e-2, fresh_prompts=20_000)
    PARAMS = dict(K=K3, p1=PROB, N_values=TupleOf(NCTX, max_len=16), M=PROMPTS, eps=PROB, fresh_prompts=PROMPTS,
                  seed=SEED)



@dataclass
class FiniteNResult:
    config: FiniteNConfig
    N: list  # finite values, then math.inf
    times: list  # phase_times per N
    floor: list  # L_k^low per N (of the Monte-Carlo count sample used)
    absent: list  # P(|V_k| = 0) per N
    tail: dict  # N -> {C: fraction of fresh prompts with (1 - Attn_k)^2 > C eps}
    balanced_tail: dict  # same for the balanced column (B5)
    seconds: float


@returns("N", "times", "floor", "tail", "seconds", timings=("seconds",))
def summarize_finite_n(res: FiniteNResult) -> dict:
    return {"N": [str(n) for n in res.N], "times": [_times_json(t) for t in res.times], "floor": res.floor,
            "tail": {str(k): v for k, v in res.tail.items()}, "seconds": res.seconds}


@EXPERIMENTS.register("finite_n", config=FiniteNConfig, summary=summarize_finite_n,
                      location="Thm 3.1/3.2 premise N >= poly(K)",
                      description="finite context lengths, concentration of attention", claims=("G1", "B5"))
def run_finite_n(cfg: FiniteNConfig) -> FiniteNResult:
    t0 = time.perf_counter()
    Ns, times, floors, absent, tail, btail = [], [], [], [], {}, {}
    for i, N in enumerate(list(cfg.N_values) + [math.inf]):
        kw = {} if math.isinf(N) else dict(N=N, M=cfg.M, generator=make_generator(cfg.seed + i))
        col = SymmetricColumn.under_represented(cfg.K, cfg.p1, **kw)
        tr = col.flow(1e11, rtol=1e-5 if kw else 1e-8, max_step_frac=0.05 if kw else 0.02, stop_gap=cfg.eps * 0.999)
        t = phase_times(tr, cfg.eps, "under")
        Ns.append(N)
        times.append(t)
        floors.append(col.floor)
        absent.append(float((1 - col.p[col.k]) ** N) if kw else 0.0)
        if kw and np.isfinite(t["tau_eps"]):
            tail[N] = tail_fractions(col, tr.s[-1], cfg.eps, cfg.fresh_prompts, make_generator(cfg.seed + 100 + i))
            bcol = SymmetricColumn.balanced(cfg.K, **dict(kw, generator=make_generator(cfg.seed + 200 + i)))
            btr = bcol.flow(1e11, rtol=1e-5, max_step_frac=0.05, stop_gap=cfg.eps * 0.999)
            btail[N] = tail_fractions(bcol, btr.s[-1], cfg.eps, cfg.fresh_prompts, make_generator(cfg.seed + 300 + i))
    return FiniteNResult(config=cfg, N=Ns, times=times, floor=floors, absent=absent, tail=tail, balanced_tail=btail,
                         seconds=time.perf_counter() - t0)


# ====================================================================== eta invariance
@dataclass(frozen=True)
class EtaCheckConfig(ScaledConfig):
    """Discrete GD at several eta against the gradient flow (phase times in tau = eta t)."""

    K_values: tuple = (20, 50)
    p1: float = 0.5
    etas: tuple = (1.0, 20.0)
    eps: float = 1e-3
    CI = dict(K_values=(20,), eps=1e-2)
    PARAMS = dict(K_values=TupleOf(K3, max_len=16), p1=PROB, etas=TupleOf(POS, max_len=16), eps=PROB)



@dataclass
class EtaCheckResult:
    config: EtaCheckConfig
    times: dict  # (K, eta or 'flow') -> phase_times
    max_rel_diff: float
    seconds: float


@returns("max_rel_diff", "seconds", timings=("seconds",))
def summarize_eta_check(res: EtaCheckResult) -> dict:
    return {"max_rel_diff": res.max_rel_diff, "seconds": res.seconds}


@EXPERIMENTS.register("eta_check", config=EtaCheckConfig, summary=summarize_eta_check,
                      location="all time bounds ~ 1/eta", description="GD at several eta vs the gradient flow",
                      claims=("E1",))
def run_eta_check(cfg: EtaCheckConfig) -> EtaCheckResult:
    t0 = time.perf_counter()
    times = {}
    worst = 0.0
    for K in cfg.K_values:
        col = SymmetricColumn.under_represented(K, cfg.p1)
        ref = phase_times(_flow_until(col, cfg.eps, 1e-8), cfg.eps, "under")
        times[(K, "flow")] = ref
        for eta in cfg.etas:
            t = phase_times(col.gd(eta, 1e12, stop_gap=cfg.eps * 0.999), cfg.eps, "under")
            times[(K, eta)] = t
            for key in ("T1", "T2", "T3", "T4"):
                worst = max(worst, abs(t[key] - ref[key]) / ref[key])
    return EtaCheckResult(config=cfg, times=times, max_rel_diff=worst, seconds=time.perf_counter() - t0)
