"""The convergence paper's theory (Huang, Cheng, Liang, "In-Context Convergence of Transformers"):
the entry point to the reduced feature-space dynamics of the analysed model (3).

* :mod:`.population` — the count law (exact enumeration, Monte Carlo, mean field, empirical), the
  population gradient G = -V grad_Q L V^T (alpha_k, beta_{k,n}; Lemma 4.1 / C.2), the losses L_k and
  the floor L_k^low (eq. (12)), GD on S = V Q V^T;
* :mod:`.reduced` — symmetric 2-3 variable reductions of one query column (balanced, dominant,
  under-represented), discrete GD and an adaptive gradient-flow solver for wide K sweeps;
* :mod:`.phases` — the paper's phase boundaries T_1..T_4 (App. D, E), the chapter's mechanistic
  markers, convergence times;
* here: the paper's feature probabilities, the w-marginalised loss (Lemma C.6), population GD of all
  K columns, phase durations, per-phase gradient ratios (App. E) and attention concentration over
  fresh prompts (Thm 3.1(2), 3.2(3)).

Time is tau = eta t throughout (every bound of the paper is proportional to 1/eta).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ... import params as chk
from ...data import PromptBatch
from ...models import feature_softmax
from .phases import (convergence_time, last_holding, phase_times, value_at,  # noqa: F401
                     window)
from .population import (CountLaw, Trajectory, feature_attention, feature_losses, gradient,  # noqa: F401
                         initial_gradient_mean_field, loss_floor, population_gd, total_loss)
from .reduced import ColumnTrajectory, SymmetricColumn  # noqa: F401

IMBALANCED_P = (0.8, 0.1, 0.1)  # App. A
BALANCED_P = (1 / 3, 1 / 3, 1 / 3)


def p_for(setting: str, K: int = 3, p1: float = 0.8) -> torch.Tensor:
    """Feature probabilities: ``'balanced'`` p_k = 1/K, else (p_1, (1 - p_1)/(K - 1), ...)."""
    if setting == "balanced":
        return torch.full((K,), 1.0 / K, dtype=torch.float64)
    return torch.tensor([p1] + [(1 - p1) / (K - 1)] * (K - 1), dtype=torch.float64)


def marginalized_loss(out, batch: PromptBatch) -> torch.Tensor:
    """Per-run loss 1/2 mean ||x_q - sum_i a_i x_i||^2: the squared error averaged over w with
    E[w w^T] = I (Lemma C.6 per prompt), so its gradient is the exact w-average."""
    x = batch.x if batch.has_runs else batch.x.unsqueeze(0)
    xq = batch.x_query if batch.has_runs else batch.x_query.unsqueeze(0)
    xbar = torch.einsum("rbmn,rbnd->rbmd", out.attn, x.expand(out.attn.shape[0], *x.shape[1:]))
    return 0.5 * ((xq - xbar) ** 2).sum(-1).mean(dim=(-2, -1))


@dataclass
class PopulationRun:
    """Population GD of all K columns (exact count law): tau (T,), S (T, K, K), losses (T, K),
    attention maps (T, K, K) (row = query feature, column = key feature), G (T, K, K)."""

    p: torch.Tensor
    tau: np.ndarray
    S: np.ndarray
    losses: np.ndarray
    attn: np.ndarray
    G: np.ndarray
    floor: np.ndarray


def population_columns(p, N: float, eta: float, steps: int, record_every: int = 1) -> PopulationRun:
    """Population GD on every column of S (exact enumeration for finite N, mean field for N = inf),
    running each distinct column once (columns with the same probabilities are identical)."""
    p = chk.probabilities("p", p)
    K = p.numel()
    law = CountLaw.mean_field(p) if math.isinf(N) else CountLaw.exact(int(N), p)
    done = {}
    cols = []
    for k in range(K):
        others = [m for m in range(K) if m != k]
        key = (round(float(p[k]), 12), tuple(round(float(p[m]), 12) for m in others))
        if key not in done:
            classes = {"target": [k], **{f"key{m}": [m] for m in others}}
            col = SymmetricColumn(p, k, classes, law=law)
            done[key] = col.gd(eta, eta * steps, record_every=record_every)
        cols.append((k, others, done[key]))
    tr0 = cols[0][2]
    T = tr0.tau.size
    S = np.zeros((T, K, K))
    G = np.zeros((T, K, K))
    A = np.zeros((T, K, K))
    L = np.zeros((T, K))
    for k, others, tr in cols:
        order = [k] + others
        S[:, order, k] = tr.s
        G[:, order, k] = tr.G
        A[:, k, order] = tr.attn
        L[:, k] = tr.loss
    return PopulationRun(p=p, tau=tr0.tau, S=S, losses=L, attn=A, G=G,
                         floor=loss_floor(N, p).numpy() if not math.isinf(N) else np.zeros(K))


def durations(times: dict) -> dict:
    """Phase durations of an under-represented column: I = T1, II = T2 - T1, III = T3 - T2, IV = T4 - T3."""
    return {"I": times["T1"], "II": times["T2"] - times["T1"], "III": times["T3"] - times["T2"],
            "IV": times["T4"] - times["T3"]}


def gradient_ratios(entry: dict, eps: float) -> dict:
    """Normalised gradient ratios of an under-represented column per phase window: the per-phase
    gradient bounds of Lemmas E.3-E.5, E.9-E.11, E.15-E.17, E.21-E.23 divided by their K-scaling."""
    tr, t = entry["traj"], entry["times"]
    K = tr.column.K
    a, b1, bo = tr.series("alpha"), np.abs(tr.series("beta1")), np.abs(tr.series("betao"))
    out = {}
    wins = {"I": (-1.0, t["T1"]), "II": (t["T1"], t["T2"]), "III": (t["T2"], t["T3"]), "IV": (t["T3"], t["T4"])}
    for ph, (lo, hi) in wins.items():
        m = window(tr, lo, hi)
        if not np.isfinite(hi) or m.sum() < 2:
            continue
        if ph == "I":
            m = m & (tr.tau > 0)
            out["I: alpha K^2 (min)"] = float(a[m].min() * K**2)
            out["I: alpha K^2 (max)"] = float(a[m].max() * K**2)
            out["I: |beta_k1| K^1.98 (min)"] = float(b1[m].min() * K**1.98)
            out["I: |beta_kn| K/(alpha+|beta_k1|) (max)"] = float((bo[m] * K / (a[m] + b1[m])).max())
        elif ph == "II":
            out["II: alpha K^2 (min)"] = float(a[m].min() * K**2)
            out["II: |beta_k1| K^2.02 (min)"] = float(b1[m].min() * K**2.02)
            out["II: |beta_k1| K^1.97 (max)"] = float(b1[m].max() * K**1.97)
        elif ph == "III":
            out["III: alpha K^1.5 (min)"] = float(a[m].min() * K**1.5)
            out["III: |beta_k1| K^0.48/alpha (max)"] = float((b1[m] * K**0.48 / a[m]).max())
        else:
            out["IV: alpha K/eps (min)"] = float(a[m].min() * K / eps)
            out["IV: |beta_k1| K^0.49/alpha (max)"] = float((b1[m] * K**0.49 / a[m]).max())
            out["IV: |beta_kn| K/alpha (max)"] = float((bo[m] * K / a[m]).max())
            out["IV: max beta"] = float(max(tr.series("beta1")[m].max(), tr.series("betao")[m].max()))
    return out


#: the constants C of (1 - Attn_k)^2 <= C eps (B5) at which :func:`tail_fractions` counts the prompts above
TAIL_C = (1.0, 2.5, 3.0, 4.0)


def tail_fractions(col: SymmetricColumn, s, eps: float, prompts: int, g) -> dict:
    """Fraction of fresh prompts (counts drawn for ``prompts`` contexts) whose query error
    (1 - Attn_k)^2 exceeds C eps, C in :data:`TAIL_C`, at the column ``s``; and the fraction with c_k = 0."""
    law = CountLaw.monte_carlo(int(col.N), torch.as_tensor(col.p), prompts, g)
    c = law.counts.numpy()
    a = feature_softmax(col.full_S_column(s)[None], c)[:, col.k]
    err = (1 - a) ** 2
    return {C: float((err > C * eps).mean()) for C in TAIL_C} | {"absent": float((c[:, col.k] == 0).mean())}


def floor_split(S, law: CountLaw, k: int) -> dict:
    """L_k at the weights S split into the prompts whose context lacks feature k (c_k = 0) and the rest,
    against the floor L_k^low (eq. (12)): the c_k = 0 part equals the floor only when the attention of
    those prompts is uniform over the other features, so any gap there is the price of unequal B_{k,n}."""
    S = torch.as_tensor(S, dtype=torch.float64)
    absent = law.counts[:, k] == 0

    def part(mask):
        sub = CountLaw(counts=law.counts[mask], weights=law.weights[mask], p=law.p, N=law.N, kind=law.kind)
        return float(feature_losses(S, sub)[k]) if bool(mask.any()) else 0.0

    return {"total": float(feature_losses(S, law)[k]), "absent": part(absent), "present": part(~absent),
            "floor": float(loss_floor(law.N, law.p)[k])}


def box_column_loss(b23: float, law: CountLaw, bound: float = 0.8):
    """Column 2 of a K = 3 weight matrix S at the corner of the box |S| <= ``bound`` that the Adam
    exercise argues for (B_21 = -bound, A_2 = +bound) with B_23 = ``b23``; returns (S, L_2)."""
    S = torch.zeros(3, 3, dtype=torch.float64)
    S[0, 1], S[1, 1], S[2, 1] = -bound, bound, b23  # column 2: (B_21, A_2, B_23)
    return S, float(feature_losses(S, law)[1])


def best_box_column(law: CountLaw, bound: float = 0.8, points: int = 33) -> dict:
    """The best L_2 reachable with every entry of S in [-bound, bound] (K = 3): A_2 = bound and
    B_21 = -bound, B_23 searched on a grid of ``points``. Returns the grid's losses, the best B_23,
    its S and L_2, and the gradient G (= -dL/dS up to p_2) of column 2 there: (beta_21, alpha_2, beta_23)."""
    grid = np.linspace(-bound, bound, points)
    losses = [box_column_loss(b, law, bound)[1] for b in grid]
    b_best = float(grid[int(np.argmin(losses))])
    S_best, L_best = box_column_loss(b_best, law, bound)
    return {"grid": grid, "losses": losses, "b23": b_best, "S": S_best, "L2": L_best,
            "G": gradient(S_best, law)[:, 1]}
