"""Population-level quantities of the window paper, estimated by Monte Carlo.

With M = c I on the unit sphere the softmax read-out is a Nadaraya-Watson smoother with weights
a_i = exp(c x_i^T x) / sum_j exp(c x_j^T x) (bandwidth h = 2/c; the paper's w_KQ = c/2).  The
noise is independent of everything else, so (App. B.1)

    L(c; L, sigma) = L_signal(c) + L_noise(c),   L_noise(c) = sigma^2 E sum_i a_i^2 =: sigma^2 N_n(c),

and for the affine and 2-ReLU classes f = L f_1 in distribution, so L_signal(c) = L^2 S_n(c) with
S_n the signal term at L = 1: two curves, estimated once on a grid of c with common
random numbers, give the optimal window c*(L, sigma) for every (L, sigma).  All losses here follow
the paper's convention E(y_hat - f(x_q))^2 (no factor 1/2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from ... import params as chk
from ... import baselines
from ...data import _random as rnd
from ...data.inputs import sphere
from ...data.tasks import TaskFamily

F64 = torch.float64


def softmax_weights(x: torch.Tensor, x_query: torch.Tensor, c: float, metric: torch.Tensor | None = None) -> torch.Tensor:
    """Attention weights of M = c * metric (default c I): (..., m, n) for x (..., n, d), x_query (..., m, d)."""
    xq = x_query if metric is None else x_query @ metric.T.to(x_query.dtype)
    return torch.softmax(c * (xq @ x.transpose(-1, -2)), dim=-1)


def _hard_weights(s: torch.Tensor, w: float) -> torch.Tensor:
    """Uniform weights on the cap ||x_i - x||^2 = 2 - 2 s_i <= 1/w (hard window of radius w^-1/2,
    the paper's Sec. 3.1 modification); an empty cap falls back to the nearest demonstration."""
    inside = (2 - 2 * s) <= 1.0 / w
    nearest = torch.nn.functional.one_hot(s.argmax(-1), s.shape[-1]).bool()
    mask = torch.where(inside.any(-1, keepdim=True), inside, nearest).to(s.dtype)
    return mask / mask.sum(-1, keepdim=True)


@dataclass
class WindowCurves:
    """Monte-Carlo signal and noise curves on a grid of window scales c (M = c I).

    signal[g]  E (sum_i a_i f(x_i) - f(x_q))^2       (noiseless labels; the task's own L)
    noise[g]   E sum_i a_i^2                          (N_n(c); L_noise = sigma^2 * noise)
    spread[g]  E ||x_q - sum_i a_i x_i||^2             (affine reduction: S = spread / (3d) at L = 1)
    radial[g]  E (1 - x_q^T sum_i a_i x_i)^2           (the radial part of spread, eq. (10); the rest is tangential)
    *_se       standard errors over tasks.
    """

    c: torch.Tensor
    signal: torch.Tensor
    noise: torch.Tensor
    spread: torch.Tensor
    signal_se: torch.Tensor
    noise_se: torch.Tensor
    radial: torch.Tensor
    n: int
    d: int
    tasks: int
    kernel: str = "softmax"

    def subset(self, index) -> "WindowCurves":
        """The curves at grid entries ``index`` (a slice or index tensor)."""
        pick = lambda t: t[index]  # noqa: E731
        return WindowCurves(pick(self.c), pick(self.signal), pick(self.noise), pick(self.spread), pick(self.signal_se),
                            pick(self.noise_se), pick(self.radial), self.n, self.d, self.tasks, self.kernel)

    def loss(self, L: float = 1.0, sigma: float = 0.0) -> torch.Tensor:
        """L^2 S(c) + sigma^2 N(c) on the grid (``L`` rescales a homogeneous class's signal; use
        L = 1 for curves measured on a non-homogeneous class such as cosine at its own L)."""
        return L**2 * self.signal + sigma**2 * self.noise


def window_curves(task: TaskFamily, inputs: Callable, n: int, c_grid, *, tasks: int, queries: int = 4,
                  generator: torch.Generator, chunk: int = 500, metric: torch.Tensor | None = None,
                  kernel: str = "softmax") -> WindowCurves:
    """Estimate :class:`WindowCurves` for ``task`` with ``n`` demonstrations from ``inputs(shape, g)``.

    Every grid value sees the same tasks, inputs and queries (common random numbers), so the curves
    are smooth in c and their argmin is stable.  ``kernel='hard'`` uses the hard window of
    squared radius 1/c instead (c plays the role of w_KQ there).  ``metric``: M = c * metric."""
    n = chk.positive_int("n", n)
    tasks = chk.positive_int("tasks", tasks)
    queries = chk.positive_int("queries", queries)
    chunk = chk.positive_int("chunk", chunk)
    chk.one_of("kernel", kernel, ("softmax", "hard"))
    c = torch.as_tensor(c_grid, dtype=F64).flatten()
    if c.numel() == 0 or (c < 0).any() or not torch.isfinite(c).all():
        raise chk.ConfigError("c_grid must be a non-empty sequence of non-negative finite numbers")
    if kernel == "hard" and (c <= 0).any():
        raise chk.ConfigError("c_grid must be positive for the hard window")
    chk.generator("generator", generator)
    G = c.numel()
    acc = {k: torch.zeros(G, dtype=F64) for k in ("s", "s2", "v", "v2", "r", "rad")}
    done = 0
    while done < tasks:
        T = min(chunk, tasks - done)
        params = task.sample(T, generator)
        allx = inputs((T, n + queries), generator).to(F64)
        ally = task.evaluate(params, allx)
        x, xq, y, yq = allx[:, :n], allx[:, n:], ally[:, :n], ally[:, n:]
        s = xq @ (x if metric is None else x @ metric.to(F64)).transpose(-1, -2)  # (T, m, n): x_q^T M' x_i
        for g in range(G):
            a = torch.softmax(c[g] * s, -1) if kernel == "softmax" else _hard_weights(s, float(c[g]))
            err = ((a * y[:, None, :]).sum(-1) - yq) ** 2  # (T, m)
            e_t = err.mean(-1)
            v_t = (a**2).sum(-1).mean(-1)
            xhat = a @ x
            acc["s"][g] += e_t.sum()
            acc["s2"][g] += (e_t**2).sum()
            acc["v"][g] += v_t.sum()
            acc["v2"][g] += (v_t**2).sum()
            acc["r"][g] += ((xq - xhat) ** 2).sum(-1).mean(-1).sum()
            acc["rad"][g] += ((1 - (xq * xhat).sum(-1)) ** 2).mean(-1).sum()
        done += T
    mean = {k: acc[k] / tasks for k in acc}
    se = lambda m1, m2: ((m2 - m1**2).clamp_min(0) / max(tasks - 1, 1)).sqrt()  # noqa: E731
    return WindowCurves(c=c, signal=mean["s"], noise=mean["v"], spread=mean["r"], signal_se=se(mean["s"], mean["s2"]),
                        noise_se=se(mean["v"], mean["v2"]), radial=mean["rad"], n=n, d=task.d, tasks=tasks, kernel=kernel)


def optimal_window(curves: WindowCurves, L: float = 1.0, sigma: float = 0.0) -> tuple[float, float, bool]:
    """(c*, min loss, interior) for L(c) = L^2 S(c) + sigma^2 N(c) on the grid, refined by a parabola
    through the three grid points around the minimum (in log c when the grid is positive).
    ``interior`` is False when the minimum sits at an end of the grid (c* then is only a bound)."""
    loss = curves.loss(L, sigma)
    i = int(torch.argmin(loss))
    G = loss.numel()
    if i == 0 or i == G - 1:
        return float(curves.c[i]), float(loss[i]), False
    c = curves.c
    t = torch.log(c[i - 1 : i + 2]) if bool((c[i - 1 : i + 2] > 0).all()) else c[i - 1 : i + 2]
    y = loss[i - 1 : i + 2]
    denom = (t[0] - t[1]) * (t[0] - t[2]) * (t[1] - t[2])
    A = (t[2] * (y[1] - y[0]) + t[1] * (y[0] - y[2]) + t[0] * (y[2] - y[1])) / denom
    B = (t[2] ** 2 * (y[0] - y[1]) + t[1] ** 2 * (y[2] - y[0]) + t[0] ** 2 * (y[1] - y[2])) / denom
    if A <= 0:
        return float(c[i]), float(loss[i]), True
    tv = float((-B / (2 * A)).clamp(t[0], t[2]))
    cv = math.exp(tv) if bool((c[i - 1 : i + 2] > 0).all()) else tv
    Cc = float(y[1] - A * t[1] ** 2 - B * t[1])
    return cv, min(float(A * tv**2 + B * tv + Cc), float(loss[i])), True


def hard_window_loss(task, inputs, n, w_grid, **kw) -> WindowCurves:
    """:func:`window_curves` with the hard window (uniform average over the cap of squared radius 1/w)."""
    return window_curves(task, inputs, n, w_grid, kernel="hard", **kw)


def hard_window_optimum(L: float, sigma: float, n: int, m: int) -> float:
    """Minimiser w* = (2/m n L^2/sigma^2)^(2/(m+2)) of the hard-window loss L^2/w + sigma^2 w^(m/2)/n
    (bias L^2/w, variance sigma^2 w^(m/2)/n, m the dimension that counts the points in a cap)."""
    return (2 / m * n * L**2 / sigma**2) ** (2 / (m + 2))


def attention_head(Z: torch.Tensor, WK: torch.Tensor, WQ: torch.Tensor, WV: torch.Tensor) -> torch.Tensor:
    """(ATTN) of eq. (4) for the last token of the token matrix Z (B, d+1, n+1), tokens as columns:
    keys and values over the n labelled tokens; returns (B, d+1)."""
    keys, query = WK @ Z[:, :, :-1], WQ @ Z[:, :, -1:]
    a = torch.softmax((keys * query).sum(1), dim=-1)  # (B, n)
    return ((WV @ Z[:, :, :-1]) * a[:, None, :]).sum(-1)  # (B, d+1)


def value_leak_loss(Z: torch.Tensor, WK: torch.Tensor, WQ: torch.Tensor, WV: torch.Tensor, v, y: torch.Tensor) -> float:
    """Mean squared error of the label read-out of :func:`attention_head` against the labels ``y`` when
    the label output row of W_V also reads the inputs with weights ``v`` (a value leak, Lemma B.1)."""
    d = Z.shape[1] - 1
    WVv = WV.clone()
    WVv[:d, d] = 0.0
    WVv[d, :d] = torch.as_tensor(v, dtype=WV.dtype)  # the label output row reads the inputs: a value leak
    return float(((attention_head(Z, WK, WQ, WVv)[:, d] - y) ** 2).mean())


def linear_attention_loss(sampler, prompts: int, generator: torch.Generator, test_generator: torch.Generator | None = None):
    """Exact least-squares optimum of linear attention (h = sum_i y_i x_i^T M x_q) on ``prompts``
    prompts (Thm 3.6).  Returns (M*, in-sample loss, held-out loss or None, held-out standard error)
    in the paper's convention E(h - f(x_q))^2.  The in-sample minimum is biased low by about
    d^2 / (prompts * queries) relative to the population minimum, the held-out value biased high."""
    batch = sampler.sample(chk.positive_int("prompts", prompts), generator)
    M, half = baselines.linear_attention_optimum(batch)
    test = None
    se = None
    if test_generator is not None:
        tb = sampler.sample(prompts, test_generator)
        pred = torch.einsum("bn,bnd,de,bme->bm", tb.y, tb.x, M, tb.x_query)
        err = ((pred - tb.y_query) ** 2).mean(-1)
        test, se = float(err.mean()), float(err.std() / math.sqrt(err.numel()))
    return M, 2 * float(half), test, se


def lowrank_landscape(d: int, k: int, n: int, sigma: float, c1_grid, c2_grid, *, tasks: int, queries: int = 4,
                      c_u: float = 1.0, c_v: float = 1.0, generator: torch.Generator, chunk: int = 500) -> torch.Tensor:
    """ICL loss of M = c1 B B^T + c2 B_perp B_perp^T for low-rank linear tasks f(x) = a^T B^T x,
    a ~ U^k, and Assumption 4.3 covariates x = c_u B u + c_v B_perp v (Thm 4.4).  By rotational
    invariance B can be taken as the first k coordinates: the scores are
    c1 c_u^2 u_i^T u + c2 c_v^2 v_i^T v and the labels c_u a^T u_i + eps_i.
    Returns the (len(c1_grid), len(c2_grid)) loss grid (common random numbers)."""
    d, k, n = chk.positive_int("d", d), chk.positive_int("k", k), chk.positive_int("n", n)
    if k >= d:
        raise chk.ConfigError(f"k must be < d (got k={k}, d={d})")
    sigma = chk.positive("sigma", sigma, allow_zero=True)
    if c_u == 0:
        raise chk.ConfigError("c_u must be non-zero")
    c1 = torch.as_tensor(c1_grid, dtype=F64).flatten()
    c2 = torch.as_tensor(c2_grid, dtype=F64).flatten()
    tasks = chk.positive_int("tasks", tasks)
    out = torch.zeros(c1.numel(), c2.numel(), dtype=F64)
    done = 0
    while done < tasks:
        T = min(chunk, tasks - done)
        a = sphere(T, k, generator)
        u = sphere((T, n + queries), k, generator)
        v = sphere((T, n + queries), d - k, generator)
        eps = sigma * rnd.randn(generator, (T, n))
        f = c_u * (u * a[:, None, :]).sum(-1)
        y, yq = f[:, :n] + eps, f[:, n:]
        su = c_u**2 * u[:, n:] @ u[:, :n].transpose(-1, -2)
        sv = c_v**2 * v[:, n:] @ v[:, :n].transpose(-1, -2)
        for i in range(c1.numel()):
            for j in range(c2.numel()):
                w = torch.softmax(c1[i] * su + c2[j] * sv, -1)
                out[i, j] += (((w * y[:, None, :]).sum(-1) - yq) ** 2).mean(-1).sum()
        done += T
    return out / tasks
