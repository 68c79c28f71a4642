"""Theorem 1's conditions as the claims record them: those :mod:`.theory` checks, plus the one its
proof of Lemma 4 adds at eq. (88), "log M1 <= delta^2 beta^2".

The proof also uses the opposite inequality, "log M1 >= delta^2 beta^2" (eq. (155), Lemma 6, B.4;
:data:`~.theory.INIT6`): both hold together only at delta^2 beta^2 = log M1 exactly. A setting with
delta^2 beta^2 below log M1 (the book's: delta < 0.1 with beta a few units) meets (155) and violates
(88), and every claim that carries Theorem 1's conditions records which of the two held.

``claims.toml`` names :data:`THM1` here; the chapters record the conditions with :func:`holds` and
:func:`holds_all` (the same as :mod:`.theory`'s, with (88) added)."""
from __future__ import annotations

from . import theory

LEMMA4 = "Lemma 4 (88): log M1 <= delta^2 beta^2"
THM1 = theory.THM1 + (LEMMA4,)
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
    """``{condition: holds}`` for ``names`` (default :data:`THM1`, with (88))."""
    out = theory.holds(conds, tuple(n for n in names if n != LEMMA4))
    if LEMMA4 in names:
        out[LEMMA4] = lemma4_holds(conds)
    return {n: out[n] for n in names}


def holds_all(conds_list, names=THM1) -> dict:
    """``{condition: holds at every setting of a sweep}``."""
    rows = [holds(c, names) for c in conds_list]
    return {n: all(r[n] for r in rows) for n in names}
