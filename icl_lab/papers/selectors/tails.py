"""Binomial tails against the bound (37) of the proof of Theorem 1, for every prompt length.

(37) bounds ``P(#{mu_a demonstrations}/l <= (1 - c) alpha/2)`` by ``exp(-l c^2 alpha/2)``. A grid of
prompt lengths cannot show that a bound holds for *every* l; the Chernoff-Hoeffding inequality can:
for ``a < p``, ``P(Bin(l, p) <= l a) <= exp(-l KL(a || p))`` at every l (KL: the relative entropy of
two Bernoulli laws). So (37) holds at c for every l as soon as ``KL((1 - c) p || p) >= c^2 alpha/2``
with ``p = alpha/2`` (:func:`certified`), and it fails for l large enough when the inequality is
strict the other way: the exact tail decays like ``exp(-l KL) / sqrt(l)``, slower than the bound.
"""

from __future__ import annotations

import itertools
import math

__all__ = ["kl_bernoulli", "certified", "smallest_certified_c", "log_lower_tail", "lower_tails"]


def kl_bernoulli(a: float, p: float) -> float:
    """Relative entropy KL(Bernoulli(a) || Bernoulli(p)), for 0 <= a <= 1 and 0 < p < 1."""
    out = 0.0 if a == 0 else a * math.log(a / p)
    return out + (0.0 if a == 1 else (1 - a) * math.log((1 - a) / (1 - p)))


def certified(alpha: float, c: float) -> bool:
    """Whether the Chernoff-Hoeffding inequality proves (37) at ``c`` for every prompt length l:
    ``KL((1 - c) alpha/2 || alpha/2) >= c^2 alpha/2``."""
    p = alpha / 2
    return kl_bernoulli((1 - c) * p, p) >= c * c * alpha / 2


def smallest_certified_c(alpha: float, step: float = 1e-3) -> float | None:
    """The smallest c on a grid of ``step`` in (0, 1) from which on every grid value is certified
    (:func:`certified`); None when c = 1 - step is not."""
    n = round(1 / step)
    grid = [k * step for k in range(1, n)]
    ok = [certified(alpha, c) for c in grid]
    if not ok[-1]:
        return None
    first = len(ok) - 1
    while first > 0 and ok[first - 1]:
        first -= 1
    return grid[first]


def log_lower_tail(alpha: float, l: int, c: float) -> float:
    """log P(Bin(l, alpha/2) <= (1 - c) l alpha/2), exactly summed in log space (safe for large l)."""
    p = alpha / 2
    k_max = math.floor((1 - c) * l * p + 1e-12)
    terms = [math.lgamma(l + 1) - math.lgamma(k + 1) - math.lgamma(l - k + 1) + k * math.log(p) + (l - k) * math.log1p(-p)
             for k in range(k_max + 1)]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


def lower_tails(alpha: float, l: int, cs) -> list[float]:
    """:func:`~icl_lab.papers.selectors.theory.binomial_lower_tail` at every c of ``cs`` from one pass over
    the binomial terms: the same terms added in the same order, so the same floats, for a grid of c at
    the cost of one."""
    p = alpha / 2
    k_max = [math.floor((1 - c) * l * p + 1e-12) for c in cs]
    partial = list(itertools.accumulate(math.comb(l, k) * p**k * (1 - p) ** (l - k) for k in range(max(k_max) + 1)))
    return [float(partial[k]) if k >= 0 else 0.0 for k in k_max]
