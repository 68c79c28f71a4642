"""Theorem 1's conditions as the claims record them (:data:`THM1`, those :mod:`.theory` checks), and the
inequality that its proof of Lemma 4 invokes at eq. (88), "log M1 <= delta^2 beta^2", which is not one of them.

(88) is a step of the proof, not a hypothesis of the theorem: Theorem 1 states its conditions (width,
batch, prompt length, noise) and the setting fixes delta in (0, 0.1) (Sec. 3.1) and beta = Theta(log log M1)
(Sec. 3.1's data model), so delta^2 beta^2 < 0.01 Theta(log log M1)^2, below log M1 once M1 is large; the
proof's other steps use that side, "log M2 >= delta^2 beta^2" (after (84)) and "log M1 >= delta^2 beta^2"
((155), Lemma 6, B.4: :data:`~.theory.INIT6`, recorded). Recorded beside (155), (88) would make the two hold
together only at delta^2 beta^2 = log M1, and every measurement fall outside the hypotheses: the ledger
refuses such a pair. :func:`lemma4_holds` still says where (88) would hold, for a chapter that reports
where the proof's step fails.

``claims.toml`` names :data:`THM1` here; the chapters record the conditions with :func:`holds` and
:func:`holds_all`."""
from __future__ import annotations

from . import theory

LEMMA4 = "Lemma 4 (88): log M1 <= delta^2 beta^2"  # a step of the proof that fails in the paper's setting
THM1 = theory.THM1
LEMMA7 = theory.LEMMA7
THM2 = THM1 + theory.THM2_TEST
# the value (88) is decided on: "<= log M1" (required) and delta^2 beta^2 (actual) of INIT6's entry, to
# the digits :func:`.theory.theorem1_conditions` prints them (2 and 3): equality within that rounding holds
ROUNDING = 5e-3


def lemma4_holds(conds: dict) -> bool:
    """Whether (88) holds at a setting whose :func:`~.theory.theorem1_conditions` are ``conds``."""
    required, actual, _ = conds[theory.INIT6]
    log_m1, d2b2 = float(str(required).split()[-1]), float(actual)
    return d2b2 >= log_m1 * (1 - ROUNDING)


def holds(conds: dict, names=THM1) -> dict:
    """``{condition: holds}`` for ``names`` (default :data:`THM1`; :data:`LEMMA4` may be named to report (88))."""
    out = theory.holds(conds, tuple(n for n in names if n != LEMMA4))
    if LEMMA4 in names:
        out[LEMMA4] = lemma4_holds(conds)
    return {n: out[n] for n in names}


def holds_all(conds_list, names=THM1) -> dict:
    """``{condition: holds at every setting of a sweep}``."""
    rows = [holds(c, names) for c in conds_list]
    return {n: all(r[n] for r in rows) for n in names}
