"""The template Theorem 1's conditions as the claims record them (``hypotheses = 'THM1'`` in
``claims.toml``), and whether a configuration meets them."""
from __future__ import annotations

#: Theorem 1's conditions, in words (each claim that cites it records whether each held)
CONTEXT = "N >= K (a context long enough to hold every feature)"
THM1 = (CONTEXT,)


def holds(cfg) -> dict:
    """``{condition: held}`` for the run configured by ``cfg`` (any config with fields ``N`` and ``K``)."""
    return {CONTEXT: cfg.N >= cfg.K}
