"""Symmetry reductions of the population dynamics: one query column, 2-3 unknowns.

Column decoupling (Lemma 4.1): alpha_k and beta_{k,.} depend only on column k of S, and column k
is driven at rate p_k.  From S = 0, key features that the data treat alike keep equal weights, so a
column is described by one value per *class* of key features:

* balanced (p_k = 1/K): column k has classes {target k} and {the K-1 others}: (A, B);
* imbalanced, dominant column 1: {target 1}, {the K-1 others}: (A_1, B_{1,.});
* imbalanced, under-represented column k >= 2: {target k}, {dominant 1}, {the K-2 others}:
  (A_k, B_{k,1}, B_{k,o}).

In the mean-field limit the right-hand side costs O(number of classes); with a finite context N it
is a Monte-Carlo average over fixed count vectors (common random numbers), O(M K).  Time is
tau = eta t.  Two integrators share the right-hand side: discrete GD (the paper's algorithm) and
an adaptive Dormand-Prince 5(4) solver for the gradient flow (the limit eta -> 0, used for the
wide K sweeps; numpy only, no scipy).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ... import params as chk
from ...models import feature_softmax
from .population import CountLaw, loss_floor


@dataclass
class ColumnTrajectory:
    """A recorded run of one reduced query column.

    tau (T,); s (T, J) class weights (s[:, 0] = A_k, the target); G (T, J) their gradients
    (G[:, 0] = alpha_k, G[:, j] = beta_{k,n} for a key n in class j); attn (T, J) attention *per key*
    of each class (Attn_m for one feature m of the class); loss (T,) the conditional error L_k;
    floor: L_k^low.
    """

    tau: np.ndarray
    s: np.ndarray
    G: np.ndarray
    attn: np.ndarray
    loss: np.ndarray
    floor: float
    column: "SymmetricColumn"
    method: str
    eta: float | None = None

    @property
    def gap(self) -> np.ndarray:
        """L_k - L_k^low (the convergence criterion's left side)."""
        return self.loss - self.floor

    def series(self, name: str) -> np.ndarray:
        """A named series: 'A', 'B1' (dominant key), 'Bo' (other keys), 'alpha', 'beta1', 'betao',
        'Attn_k', 'Attn_1', 'Attn_o' (per key)."""
        table = {"A": ("s", "target"), "B1": ("s", "dominant"), "Bo": ("s", "others"),
                 "alpha": ("G", "target"), "beta1": ("G", "dominant"), "betao": ("G", "others"),
                 "Attn_k": ("attn", "target"), "Attn_1": ("attn", "dominant"), "Attn_o": ("attn", "others")}
        if name not in table:
            raise chk.ConfigError(f"name must be one of {sorted(table)} (got {name!r})")
        arr, cls = table[name]
        idx = self.column.class_index.get(cls)
        if idx is None:
            raise chk.ConfigError(f"this column has no class {cls!r} for {name!r}")
        return getattr(self, arr)[:, idx]


class SymmetricColumn:
    """One query column of the population dynamics, reduced by symmetry.

    Parameters
    ----------
    p : (K,) feature probabilities.
    k : the query feature (0-based).
    classes : dict name -> list of key features; must contain 'target': [k]; every other feature
        in exactly one class, with equal p inside a class (checked).
    N : context length (``math.inf``: mean-field limit).
    M, generator : Monte-Carlo count sample for finite N (drawn once).
    law : alternatively a :class:`~icl_lab.papers.convergence.CountLaw` over the same p (e.g. the exact
        enumeration for K = 3); its count vectors and weights define the expectation.
    """

    def __init__(self, p, k: int, classes: dict, N: float = math.inf, M: int = 2000,
                 generator: torch.Generator | None = None, law=None):
        self.p = chk.probabilities("p", p).numpy()
        K = self.K = self.p.size
        self.k = chk.positive_int("k", k, minimum=0)
        if k >= K:
            raise chk.ConfigError(f"k must be < K={K} (got {k})")
        names = list(classes)
        if names[0] != "target" or list(classes["target"]) != [k]:
            raise chk.ConfigError("classes must start with 'target': [k]")
        members = [list(classes[n]) for n in names]
        flat = sorted(m for ms in members for m in ms)
        if flat != list(range(K)):
            raise chk.ConfigError("classes must partition the K key features")
        for n, ms in zip(names, members):
            if not ms:
                raise chk.ConfigError(f"class {n!r} is empty")
            if np.ptp(self.p[ms]) > 1e-12:
                raise chk.ConfigError(f"class {n!r} mixes features with different p")
        self.names = names
        self.class_index = {n: i for i, n in enumerate(names)}
        self.members = members
        self.mult = np.array([len(ms) for ms in members], dtype=float)
        self.q = np.array([self.p[ms[0]] for ms in members])
        self.pk = float(self.p[k])
        self.key_class = np.empty(K, dtype=int)
        for j, ms in enumerate(members):
            self.key_class[ms] = j
        if law is not None:
            if law.query is not None or law.K != K or not torch.allclose(law.p, torch.as_tensor(self.p)):
                raise chk.ConfigError("law must be a population CountLaw over the same p")
            self.N = law.N
            self.counts = None if math.isinf(law.N) else law.counts.numpy()
            self.weights = law.weights.numpy()
            if self.counts is not None:
                with np.errstate(divide="ignore"):
                    self.logc = np.log(self.counts)
        elif N is None or (isinstance(N, float) and math.isinf(N)):
            self.N = math.inf
            self.counts = None
        else:
            self.N = chk.positive_int("N", N)
            if generator is None:
                raise chk.ConfigError("a finite N needs a generator for the Monte-Carlo count sample")
            mc = CountLaw.monte_carlo(self.N, torch.as_tensor(self.p), M, generator)
            self.counts = mc.counts.numpy()
            self.weights = mc.weights.numpy()
            with np.errstate(divide="ignore"):
                self.logc = np.log(self.counts)
        if self.counts is None:
            self.floor = float(loss_floor(self.N, torch.as_tensor(self.p))[k])
        else:
            # L_k^low of the count law actually used (for a Monte-Carlo sample: its own share of
            # prompts without feature k; for the exact law this equals eq. (12))
            self.floor = float(0.5 * K / (K - 1) * (self.weights * (self.counts[:, k] == 0)).sum())
        self.logK = math.log(K)

    # ------------------------------------------------------------------ named constructors
    @classmethod
    def balanced(cls, K: int, **kw) -> "SymmetricColumn":
        K = chk.positive_int("K", K, minimum=2)
        return cls(np.full(K, 1.0 / K), 0, {"target": [0], "others": list(range(1, K))}, **kw)

    @staticmethod
    def imbalanced_p(K: int, p1: float) -> np.ndarray:
        K = chk.positive_int("K", K, minimum=3)
        p1 = chk.probability("p1", p1, open_interval=True)
        return np.array([p1] + [(1 - p1) / (K - 1)] * (K - 1))

    @classmethod
    def under_represented(cls, K: int, p1: float, **kw) -> "SymmetricColumn":
        """Column k = 2 (0-based 1) with v_1 dominant (p_1), p_m = (1 - p_1)/(K - 1) otherwise."""
        p = cls.imbalanced_p(K, p1)
        return cls(p, 1, {"target": [1], "dominant": [0], "others": list(range(2, K))}, **kw)

    @classmethod
    def dominant(cls, K: int, p1: float, **kw) -> "SymmetricColumn":
        p = cls.imbalanced_p(K, p1)
        return cls(p, 0, {"target": [0], "others": list(range(1, K))}, **kw)

    # ------------------------------------------------------------------ the right-hand side
    def state(self, s) -> tuple[np.ndarray, np.ndarray, float]:
        """(G (J,), attention per key (J,), loss L_k) at class weights s (J,)."""
        s = np.asarray(s, dtype=float)
        if self.counts is None:
            z = self.q * np.exp(s - s.max())
            a = z / float((self.mult * z).sum())  # attention on one key of each class
            sq = float((self.mult * a * a).sum())
            at = a[0]
            inner = sq - at - a  # (e_k - a)^T(e_n - a) for n outside the target: -a_n - a_t + ||a||^2
            inner[0] = 1.0 - at - at + sq
            G = self.pk * a * inner
            loss = 0.5 * ((1 - at) ** 2 + sq - at * at)
            return G, a, loss
        col = s[self.key_class]  # (K,)
        a = feature_softmax(col[None], log_counts=self.logc)  # (M, K)
        sq = (a * a).sum(1, keepdims=True)
        at = a[:, self.k : self.k + 1]
        inner = sq - at - a
        inner[:, self.k] = (1 - 2 * at + sq)[:, 0]
        w = self.weights
        g = w @ (a * inner)  # (K,)
        abar = w @ a
        loss = 0.5 * float(w @ ((1 - at[:, 0]) ** 2 + sq[:, 0] - at[:, 0] ** 2))
        G = self.pk * np.bincount(self.key_class, weights=g, minlength=len(self.names)) / self.mult
        A = np.bincount(self.key_class, weights=abar, minlength=len(self.names)) / self.mult
        return G, A, loss

    def rhs(self, s) -> np.ndarray:
        return self.state(s)[0]

    # ------------------------------------------------------------------ integrators
    def gd(self, eta: float, tau_end: float, record_every: int | None = None, s0=None,
           stop_gap: float | None = None) -> ColumnTrajectory:
        """Discrete GD s <- s + eta G(s) until tau = eta t >= tau_end (the paper's algorithm), or
        until L_k - L_k^low <= ``stop_gap``."""
        eta = chk.positive("eta", eta)
        tau_end = chk.positive("tau_end", tau_end)
        steps = int(math.ceil(tau_end / eta))
        if record_every is None:  # every step early, then about 1000 records per decade of t
            def keep(t):
                return t < 1000 or t % max(1, t // 1000) == 0
        else:
            every = chk.positive_int("record_every", record_every)

            def keep(t):
                return t % every == 0
        s = np.zeros(len(self.names)) if s0 is None else np.array(s0, dtype=float)
        rec = []
        for t in range(steps + 1):
            G, a, loss = self.state(s)
            done = stop_gap is not None and loss - self.floor <= stop_gap
            if keep(t) or t == steps or done:
                rec.append((eta * t, s.copy(), G, a, loss))
            if done:
                break
            s = s + eta * G
        return self._pack(rec, "gd", eta)

    def flow(self, tau_end: float, rtol: float = 1e-8, atol: float = 1e-12, max_step_frac: float = 0.02,
             s0=None, stop_gap: float | None = None) -> ColumnTrajectory:
        """Gradient flow ds/dtau = G(s) by adaptive Dormand-Prince 5(4) up to tau_end (or until
        L_k - L_k^low <= ``stop_gap``).

        Steps are limited to ``max_step_frac * (tau + 1)`` so that phase times read off the
        recorded points by linear interpolation are accurate to about that fraction."""
        tau_end = chk.positive("tau_end", tau_end)
        y = np.zeros(len(self.names)) if s0 is None else np.array(s0, dtype=float)
        t = 0.0
        G, a, loss = self.state(y)
        rec = [(0.0, y.copy(), G, a, loss)]
        h = min(1.0, tau_end)
        k1 = G
        dp = DORMAND_PRINCE
        while t < tau_end:
            h = min(h, tau_end - t, max_step_frac * (t + 1.0))
            ks = [k1]
            for row in dp.A[1:]:
                ks.append(self.rhs(y + h * _combine(row, ks)))
            y5 = y + h * _combine(dp.b, ks)
            G5, a5, loss5 = self.state(y5)
            err = h * _combine(dp.error, ks + [G5])
            scale = atol + rtol * np.maximum(np.abs(y), np.abs(y5))
            en = float(np.sqrt(np.mean((err / scale) ** 2)))
            if not math.isfinite(en):
                raise FloatingPointError(f"gradient flow produced a non-finite state at tau = {t:.4g}")
            if en <= 1.0:
                t += h
                y = y5
                k1 = G5
                rec.append((t, y.copy(), G5, a5, loss5))
                if stop_gap is not None and loss5 - self.floor <= stop_gap:
                    break
            h = h * min(5.0, max(0.2, 0.9 * (en + 1e-300) ** -0.2))
        return self._pack(rec, "flow", None)

    def _pack(self, rec, method, eta) -> ColumnTrajectory:
        tau = np.array([r[0] for r in rec])
        return ColumnTrajectory(tau=tau, s=np.stack([r[1] for r in rec]), G=np.stack([r[2] for r in rec]),
                                attn=np.stack([r[3] for r in rec]), loss=np.array([r[4] for r in rec]),
                                floor=self.floor, column=self, method=method, eta=eta)

    def full_S_column(self, s) -> np.ndarray:
        """(K,) the column S[:, k] that the class weights s stand for."""
        return np.asarray(s, dtype=float)[self.key_class]


@dataclass(frozen=True)
class ButcherTableau:
    """An explicit embedded Runge-Kutta pair: stage ``i`` evaluates the field at
    ``y + h * sum_j A[i][j] k_j``; ``b`` gives the step, ``b_star`` the embedded lower-order
    solution, whose difference ``error`` estimates the local error; ``c`` are the nodes (the time
    offsets of the stages, unused by an autonomous field)."""

    A: tuple  # lower triangular: row i holds the weights of k_1 .. k_i (row 0 is empty)
    b: tuple
    b_star: tuple
    c: tuple

    @property
    def error(self) -> tuple:
        return tuple(x - y for x, y in zip(self.b, self.b_star))


def _combine(weights, ks):
    """sum_j weights[j] ks[j], in order, over the nonzero weights."""
    terms = [w * k for w, k in zip(weights, ks) if w != 0]
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


#: Dormand-Prince 5(4) (Dormand & Prince, 1980). Its 7th stage is the field at the 5th-order step
#: (the row of A it would have equals b: "first same as last"), which the stepper reuses as the next
#: step's first stage, so A lists stages 1-6; only the error weights use the 7th.
DORMAND_PRINCE = ButcherTableau(
    A=((),
       (1 / 5,),
       (3 / 40, 9 / 40),
       (44 / 45, -56 / 15, 32 / 9),
       (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
       (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656)),
    b=(35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
    b_star=(5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40),
    c=(0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1))
