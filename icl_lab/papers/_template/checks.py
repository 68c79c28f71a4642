"""What the template chapter measures for each claim, handed to the ledger, which decides (the page
"How claims are judged"). A chapter calls it in one hidden cell."""
from __future__ import annotations

from . import conditions


def measure_t1(ledger, summary: dict, cfg) -> None:
    """Claim T1 from the ``training`` experiment's summary: each seed's held-out loss over the
    context average's expected loss, and whether Theorem 1's conditions held."""
    ratio = [loss / summary["average_theory"] for loss in summary["trained_loss"]]
    ledger["T1"].measure({"trained / average loss": ratio},
                         how=f"held-out loss after {cfg.steps} GD steps over 1/2 (1 - sum p_k^2)(1 + 1/N), "
                             f"N = {cfg.N}, K = {cfg.K}, {cfg.seeds} seeds",
                         hypotheses=conditions.holds(cfg))
