"""What decides the claims of the selectors chapter (``claims.toml``, whose ``part`` field names the chapter's
page that checks each claim): one function per claim or claim group. Each takes what the page computed
with the library (the sweeps' results and the few numbers read off them) and returns
:class:`~icl_lab.claims.Measurement` objects, the quantities under the names the claim's tests read, with the
hypotheses where the claim declares them. The page judges in one line, ``ledger.judge(checks.ood(...))``; the
tests in ``claims.toml`` decide. ``shown`` keeps the context a card lists beside the tested quantities, in the
order the card gives them.

The quantities are written as literal dicts: ``tests/test_checks.py`` reads them from this file and compares
them with the names ``claims.toml``'s tests read, for every paper.
"""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import torch

from ... import criteria, metrics
from ... import params as chk
from ...claims import Measurement, declared
from ...claims import _quantities as claims_quantities
from .conditions import both_hold, theorem2_holds
from .data import task_set
from .ood import OODResult, ood_conditions
from .theory import TEST_MU, TEST_NU, THM2_TEST, oracle_accuracy
from .training import HitSweep


def rate_decidable(k: int, n: int, p: float = 0.9) -> tuple[bool, int, object]:
    """'With high probability' read as a rate of ``k`` successes in ``n`` seeds: whether ``n`` seeds can decide
    a rate of ``p`` (all ``n`` succeeding would put the Wilson interval above it, or ``k`` puts it below), the
    seed count, and the best Wilson lower bound ``n`` seeds allow."""
    if not 0 <= k <= n or n < 1:
        raise chk.ConfigError(f"k must lie in [0, n] with n >= 1 (got k = {k}, n = {n})")
    return bool(criteria.rate_of(n, n).lo >= p or criteria.rate_of(k, n).hi < p), n, criteria.rate_of(n, n).lo


# ------------------------------------------------------------------------------------------ Part I: mechanism
def gradients(autograd: dict, closed: dict, d_x: int) -> list[Measurement]:
    """M1 and M2: the closed-form gradients of the lemma against autograd (``{name: (runs, ...) tensor}`` and
    ``{name: tensor}`` of one run), and the largest gradient on the label columns of ``W_Q``."""
    rel_err = max(float((autograd[k][0] - closed[k]).abs().max() / closed[k].abs().max()) for k in closed)
    wq_label_cols = float(autograd["W_Q"][0][:, d_x:].abs().max())
    return [Measurement("M1", {"relative error": rel_err}),
            Measurement("M2", {r"largest $\lvert\nabla\rvert$ on the label columns of $W_Q$": wq_label_cols})]


def initial_attention(formula: torch.Tensor, measured: torch.Tensor) -> Measurement:
    """M3: the initial attention against ``softmax(delta^2 x_s^T x_q)`` (eq. 83), on the same prompts."""
    return Measurement("M3", {r"largest gap between the initial attention and $\mathrm{softmax}(\delta^2 x_s^\top x_q)$": float((formula - measured).abs().max())})


def pattern_norms(W: torch.Tensor, P: torch.Tensor, runs) -> torch.Tensor:
    """``||W p||`` for each pattern ``p`` (rows of ``P``) and each run of ``runs`` (an index or slice of the
    first axis of ``W``, a batched ``W_Q`` or ``W_K`` whose first ``P.shape[1]`` columns read the input): (runs, patterns)."""
    return (W.detach()[runs][..., : P.shape[1]].to(P.dtype) @ P.T).norm(dim=-2)


def prop1(mu_min, nu_max, mu_seed, nu_seed, cfg, hypotheses: dict) -> list[Measurement]:
    """M4 and M5 (Prop. 1): per all-pairs seed the smallest relevant-pattern norm ``min(||W_Q mu||, ||W_K mu||)``
    and the largest irrelevant one (``mu_min``, ``nu_max``), and the same averaged over the patterns
    (``mu_seed``, ``nu_seed``, shown)."""
    db = cfg.delta * cfg.beta
    return [
        Measurement("M4", {r"final $\min(\lVert W_Q\mu\rVert, \lVert W_K\mu\rVert)$": criteria.median_of(mu_min),
                           r"$\sqrt{\ln M}$": math.sqrt(math.log(cfg.M)),
                           r"growth over the initial $\delta\beta$": criteria.median_of(mu_min / db)},
                    shown={r"final $\min(\lVert W_Q\mu\rVert, \lVert W_K\mu\rVert)$": None, r"$\sqrt{\ln M}$": None,
                           r"growth over the initial $\delta\beta$": None,
                           "mean over the patterns (shown)": float(mu_seed.median())},
                    hypotheses=hypotheses,
                    how=f"the smallest over the $M_1$ patterns (the statement is for every $j$), per seed; median over "
                        f"{cfg.seeds} all-pairs seeds with its order-statistic 95% interval, {cfg.steps} SGD steps"),
        Measurement("M5", {r"final $\max(\lVert W_Q\nu\rVert, \lVert W_K\nu\rVert)$ over its initial value": criteria.median_of(nu_max / db),
                           "relevant growth / irrelevant growth": criteria.median_of(mu_min / nu_max)},
                    shown={r"final $\max(\lVert W_Q\nu\rVert, \lVert W_K\nu\rVert)$ over its initial value": None,
                           "relevant growth / irrelevant growth": None,
                           "mean over the patterns, over its initial value (shown)": float((nu_seed / db).median())},
                    hypotheses=hypotheses,
                    how="the largest over the $M_2$ irrelevant patterns (the statement is for every $l$), against the "
                        "smallest relevant one, per seed; median over the all-pairs seeds with its order-statistic 95% interval"),
    ]


def proposition2(fin: dict, dom_lit, h_other10, cfg, hypotheses: dict) -> list[Measurement]:
    """M6 and M7 (Prop. 2) under both readings of the label/feature split: the token-part split (``fin``: the
    sweep's final all-pairs values) and eq. (10)'s coordinate split (``dom_lit``: the fraction of label-dominant
    neurons per seed, ``h_other10``: the mean ``|h_i|`` of the other neurons per seed)."""
    has_other = fin["label_dominant"] < 1  # seeds where every neuron is label-dominant have no "other" neuron
    other_vals = fin["h_abs_other"][has_other]
    has_other10 = dom_lit < 1
    coord, token = "coordinate split of eq. (10)", "token-part split of Fig. 1(b)'s caption"
    m7 = {coord: (criteria.median_of(h_other10[has_other10] / cfg.xi) if bool(has_other10.any()) else 0.0),
          token: (criteria.median_of(other_vals / cfg.xi) if len(other_vals) else 0.0)}
    return [
        Measurement("M6", {}, hypotheses=hypotheses, under={
            coord: {"label / feature contribution": criteria.median_of(fin["lab_lit"] / fin["feat_lit"]),
                    "fraction of label-dominant neurons": criteria.median_of(dom_lit)},
            token: {"label / feature contribution": criteria.median_of(fin["lab_in"] / fin["feat_in"]),
                    "fraction of label-dominant neurons": criteria.median_of(fin["label_dominant"])}}),
        Measurement("M7", {}, hypotheses=hypotheses, under={
            coord: {r"mean $\lvert h_i\rvert$ of the other neurons over $\xi$": m7[coord]}, token: {r"mean $\lvert h_i\rvert$ of the other neurons over $\xi$": m7[token]}},
            measured=choice_text("M7", {
                coord: {r"mean $\lvert h_i\rvert$ of the other neurons over $\xi$": m7[coord],
                        "seeds with such neurons": f"{int(has_other10.sum())} of {len(has_other10)}"},
                token: {r"mean $\lvert h_i\rvert$ of the other neurons over $\xi$": m7[token],
                        "seeds with such neurons": f"{len(other_vals)} of {len(has_other)}"}})),
    ]


def choice_text(claim: str, under: dict) -> str:
    """The measured line of a claim with an open choice whose options carry context beside the tested
    quantities (``under``: each option's quantities, tested and shown), as the ledger writes it."""
    d = declared("selectors")[claim]
    return "; ".join(f"{o}: {claims_quantities(under[o], d.tests)}" for o in d.choice["options"])


def attention_mass(fin: dict, gam: np.ndarray, steps: np.ndarray, cfg, hypotheses: dict) -> list[Measurement]:
    """M8 and M9 (Prop. 1, eq. 9): the final ``gamma = 1 - mass on N_*`` per all-pairs seed against ``1/M``, and
    ``O(1/T)`` read as an upper bound: ``t gamma_t`` per seed along the trajectory (``gam``: (seeds, records)
    at ``steps``) or at the final step only."""
    i_half = int(np.searchsorted(steps, steps[-1] / 2))
    g_half, g_end = float(np.median(gam[:, i_half])), float(np.median(gam[:, -1]))
    T_end = int(steps[-1])
    t_gam = steps[None, :] * np.maximum(gam, 0.0)  # t gamma_t along each seed's trajectory (a mass rounded to 1: 0)
    gamma = np.asarray(1 - fin["mass_present"], dtype=float)
    return [
        Measurement("M8", {r"final $\gamma$, one minus the mass on $\mathcal N_*$": criteria.median_of(gamma), "$1/M$": 1 / cfg.M},
                    shown={r"final $\gamma$, one minus the mass on $\mathcal N_*$": None, "$1/M$": None,
                           r"seeds with $\gamma$ above $1/M$": f"{int((gamma > 1 / cfg.M).sum())} of {len(gamma)}"},
                    hypotheses=hypotheses, note=one_seed_decides(gamma, r"$\gamma$")),
        Measurement("M9", {r"peak of $t\gamma_t$": float(np.median(t_gam.max(1))),
                           "$t$ at the peak": float(np.median(steps[t_gam.argmax(1)])),
                           r"$\gamma_T$": g_end, "T": T_end, "$1/T$": 1 / T_end},
                    shown={r"peak of $t\gamma_t$": None, "$t$ at the peak": None, r"$\gamma$ at $T/2$": g_half, r"$\gamma_T$": None,
                           "T": None, "$1/T$": None},
                    hypotheses=hypotheses,
                    under={r"the trajectory: $t\gamma_t$ below $c$ at every recorded $t$": {r"$T\gamma_T$": criteria.median_of(t_gam.max(1))},
                           "the final step $T$ only": {r"$T\gamma_T$": criteria.median_of(T_end * np.maximum(gam[:, -1], 0.0))}}),
    ]


def one_seed_decides(values, name: str) -> str:
    """The sentence a card adds where the interval of the median of ``values`` (one per seed) is the range of the
    seeds (up to 8 seeds, :func:`~icl_lab.criteria.median_of`): its ends are the smallest and the largest seed, so
    one seed decides; empty where the interval leaves the extreme seeds out."""
    v = np.asarray(values, dtype=float)
    if criteria.order_statistic_rank(len(v)) != 1:
        return ""
    return (f"one seed decides: with {len(v)} seeds the 95% interval of the median of {name} is the range of the "
            f"seeds, so its ends are the smallest and the largest seed's values ({float(v.min()):.3g} and "
            f"{float(v.max()):.3g})")


def selector_cross_terms(blocks, nu_diagonal: float, hypotheses: dict) -> Measurement:
    """M14 (Lemma 4): ``blocks`` the trained ``mu_l^T W_K^T W_Q mu_j`` of each all-pairs seed (``M1 x M1``);
    ``M1`` times the largest cross term of a column against its diagonal, per seed, and the mean cross term
    (``-1/(M1-1)`` of the diagonal by the softmax's shift invariance, shown)."""
    lemma4, mean_cross = [], []
    for b_ in blocks:
        M1 = b_.shape[0]
        d_ = b_.diagonal()
        lemma4.append(M1 * float(((b_ - torch.diag(d_)).abs().max(0).values / d_.clamp_min(1e-9)).max()))
        mean_cross.append(M1 * float((b_.sum() - d_.sum()).abs() / (M1 * (M1 - 1)) / d_.mean()))
    return Measurement("M14", {"$M_1$ times the largest cross term over its diagonal, per seed": np.asarray(lemma4)},
                       shown={"$M_1$ times the largest cross term over its diagonal, per seed": None,
                              "$M_1$ times the mean cross term over the mean diagonal ($M_1/(M_1-1)$ by the softmax's shift invariance)":
                                  criteria.median_of(mean_cross), r"$\nu$ diagonal": nu_diagonal},
                       hypotheses=hypotheses)


def label_columns(chg_mass, chg_acc, solved, share, wk_label_ratio: float, hypotheses: dict) -> Measurement:
    """M15: how much zeroing the label columns of ``W_K`` changes the attention mass on ``N_*`` and the accuracy,
    over the runs with the full solution (``solved``), beside the label part's share of the trained scores."""
    return Measurement("M15", {r"absolute change of the attention mass on $\mathcal N_*$": criteria.median_of(chg_mass[solved]),
                               "absolute change of the accuracy": criteria.median_of(chg_acc[solved])},
                       shown={r"absolute change of the attention mass on $\mathcal N_*$": None, "absolute change of the accuracy": None,
                              "label part / input part of the trained scores (median over runs)": float(np.median(share)),
                              "label over input gradient of $W_K$ at initialisation": wk_label_ratio},
                       hypotheses=hypotheses)


def collapse(times: np.ndarray, gam: np.ndarray, sharp_meas, sharp_rec: float, sharp_other: float, cfg,
             hypotheses: dict) -> Measurement:
    """M10 (the recursion (46)): the plateau before ``gamma`` falls by 10% in measurement intervals and the final
    ``gamma M``, per seed (``times``: (seeds, 3) of t90, t50, t10), and the scale-free collapse width measured and
    from the recursion at two sets of constants."""
    return Measurement("M10", {
        r"plateau before $\gamma$ falls by 10%, in measurement intervals, per seed": criteria.median_of(times[:, 0] / cfg.eval_every),
        r"final $\gamma M$, per seed": criteria.median_of(gam[:, -1] * cfg.M),
        "collapse width (t10-t90)/t50, measured (median)": float(np.median(sharp_meas)),
        "the same, recursion (46)": sharp_rec, "the same, recursion (46), other constants": sharp_other},
        shown={r"plateau before $\gamma$ falls by 10%, in measurement intervals, per seed": None,
               r"final $\gamma M$, per seed": None, r"plateau to $t_{90}$ (median, steps)": float(np.median(times[:, 0])),
               "collapse width (t10-t90)/t50, measured (median)": None, "the same, recursion (46)": None,
               "the same, recursion (46), other constants": None},
        hypotheses=hypotheses, note=one_seed_decides(gam[:, -1] * cfg.M, "the final gamma times M"))


def success_rates(final_acc_all, solved_cyclic, solved_all, cfg, oracle_l: float, hypotheses: dict) -> list[Measurement]:
    """M11 and M12 (Thm 1, 'with high probability'): the rate of all-pairs seeds reaching the hit accuracy
    (``final_acc_all``: per seed) and of cyclic seeds with the full solution (``solved_cyclic``: per seed),
    each with whether its seed count can decide a rate of 0.9."""
    reach = int((final_acc_all >= cfg.hit_acc).sum())
    k = int(solved_cyclic.sum())
    rate12 = criteria.rate_of(k, cfg.seeds)
    dec11, n11, lo11 = rate_decidable(reach, cfg.seeds)
    dec12, n12, lo12 = rate_decidable(k, cfg.seeds)
    return [
        Measurement("M11", {"rate of all-pairs seeds reaching accuracy 0.95": criteria.rate_of(reach, cfg.seeds),
                            "the seed count can decide a rate of 0.9": dec11, "seeds": n11, "best Wilson lower bound": lo11},
                    shown={"rate of all-pairs seeds reaching accuracy 0.95": None,
                           "the seed count can decide a rate of 0.9": None, "seeds": None, "best Wilson lower bound": None,
                           "final accuracy (median)": criteria.median_of(final_acc_all),
                           f"oracle ceiling at $l = {cfg.l}$": oracle_l},
                    hypotheses=hypotheses),
        Measurement("M12", {"rate of seeds with the full solution (cyclic set)": rate12,
                            "the seed count can decide a rate of 0.9": dec12, "seeds": n12, "best Wilson lower bound": lo12},
                    shown={"rate of seeds with the full solution (cyclic set)": None,
                           "the seed count can decide a rate of 0.9": None, "seeds": None, "best Wilson lower bound": None,
                           "all-pairs seeds with the full solution": f"{int(solved_all.sum())} of {cfg.seeds}"},
                    hypotheses=hypotheses, note=below_outside("M12", M12_RATE, rate12, hypotheses)),
    ]


M12_RATE = "rate of seeds with the full solution (cyclic set)"


def below_outside(claim: str, quantity: str, rate, hypotheses: dict) -> str:
    """Where ``claim``'s declared test of ``quantity`` fails for the whole interval of ``rate`` and some of
    ``hypotheses`` do not hold: the sentence that says so and names them (empty otherwise)."""
    violated = [k for k, v in hypotheses.items() if not v]
    if not violated or outcome(claim, quantity, rate) != criteria.FAILS_:
        return ""
    t = next(t for t in declared("selectors")[claim].tests if t["quantity"] == quantity)
    return (f"the whole Wilson interval [{rate.lo:.3g}, {rate.hi:.3g}] lies below the declared {t['than']:g}, a failure "
            "measured where these conditions of Theorem 1 do not hold: " + "; ".join(violated))


def reference_run(ref_solved, ref_acc, oracle: float, hypotheses: dict) -> Measurement:
    """M18: Theorem 1 at the stored reference run whose setting meets its conditions: the rate of seeds with
    the full solution (``ref_solved``: per seed), with the lowest final accuracy and the oracle beside it."""
    k, n = int(ref_solved.sum()), len(ref_solved)
    dec, n_, lo = rate_decidable(k, n)
    return Measurement("M18", {"rate of seeds with the full solution": criteria.rate_of(k, n),
                               "the seed count can decide a rate of 0.9": dec, "seeds": n_, "best Wilson lower bound": lo},
                       shown={"rate of seeds with the full solution": None, "the seed count can decide a rate of 0.9": None,
                              "seeds": None, "best Wilson lower bound": None, "lowest final accuracy": float(ref_acc.min()),
                              "oracle": oracle},
                       hypotheses=hypotheses)


def margin(ref_hinge, l: int, alpha: float, hypotheses: dict) -> Measurement:
    """M19 (Thm 1's proof, eqs. (52)-(58)): the mean hinge loss per seed of the stored reference run at the end
    of training (``ref_hinge``), with the share of prompts of length ``l`` whose ``N_*`` is empty beside it."""
    return Measurement("M19", {"mean hinge loss at the end of training": criteria.median_of(ref_hinge),
                               r"expected share of prompts with an empty $\mathcal N_*$": (1 - alpha / 2) ** l},
                       shown={"mean hinge loss at the end of training": None,
                              "largest over the seeds": float(np.max(ref_hinge)),
                              r"expected share of prompts with an empty $\mathcal N_*$": None},
                       hypotheses=hypotheses)


def kendall_tau(curves: np.ndarray) -> np.ndarray:
    """Kendall's tau-a of each row of ``curves`` (seeds, records) against the record index, over every pair of
    records."""
    c = np.asarray(curves, dtype=float)
    i_, j_ = np.triu_indices(c.shape[1], 1)
    return np.sign(c[:, j_] - c[:, i_]).mean(1)


def fig1_trends(curves: dict, hypotheses: dict) -> Measurement:
    """M20 (Fig. 1 over training): from the recorded curves ``curves[name]`` (seeds, records) of ``WQ_mu``,
    ``WK_mu``, ``WQ_nu``, ``WK_nu``, ``lab_in``, ``feat_in``, per seed: Kendall's tau of the relevant norms
    (the smaller of W_Q, W_K) against the iteration, the irrelevant norms' growth over the relevant norms'
    (the larger of W_Q, W_K over the smaller), and the label minus the feature growth of the MLP input."""
    need = ("WQ_mu", "WK_mu", "WQ_nu", "WK_nu", "lab_in", "feat_in")
    missing = [k for k in need if k not in curves]
    if missing:
        raise chk.ConfigError(f"curves must hold {list(need)} (missing {missing})")
    c = {k: np.asarray(curves[k], dtype=float) for k in need}
    if len({v.shape for v in c.values()}) != 1 or c["WQ_mu"].ndim != 2 or c["WQ_mu"].shape[1] < 3:
        raise chk.ConfigError(f"curves must be (seeds, records) arrays of one shape with >= 3 records "
                              f"(got {[v.shape for v in c.values()]})")
    mu = np.minimum(c["WQ_mu"], c["WK_mu"])
    grow = {k: v[:, -1] - v[:, 0] for k, v in c.items()}
    ratio = np.maximum(grow["WQ_nu"], grow["WK_nu"]) / np.minimum(grow["WQ_mu"], grow["WK_mu"])
    ratio[np.minimum(grow["WQ_mu"], grow["WK_mu"]) <= 0] = np.inf  # relevant norms that did not grow: no contrast
    return Measurement("M20", {r"Kendall's $\tau$ of the relevant-pattern norms against the iteration": criteria.median_of(kendall_tau(mu)),
                               "irrelevant-norm growth / relevant-norm growth": criteria.median_of(ratio),
                               "label growth minus feature growth of the MLP input": criteria.median_of(grow["lab_in"] - grow["feat_in"])},
                       shown={r"Kendall's $\tau$ of the relevant-pattern norms against the iteration": None,
                              "irrelevant-norm growth / relevant-norm growth": None,
                              "label growth minus feature growth of the MLP input": None,
                              "records per seed": c["WQ_mu"].shape[1]},
                       hypotheses=hypotheses)


def lucky_at_init(lw0, lu0, m_needed: float, m: int, eps_m: float) -> Measurement:
    """M13 (Lemma 7, our definition of the lucky neurons): the smaller of ``|W(0)|/m`` and ``|U(0)|/m`` per seed."""
    return Measurement("M13", {r"$\min(\lvert\mathcal W(0)\rvert, \lvert\mathcal U(0)\rvert)/m$": torch.minimum(lw0, lu0), "width that (35) needs": m_needed,
                               "$m$": m, r"$\epsilon_m$": eps_m})


def value_update(cos_v, full_run, rand_cos: float, hypotheses: dict) -> Measurement:
    """M16 (Lemma 5): the cosine of ``Delta W_V (0, q)`` with the signed sum of the lucky rows of ``W_O``, over the
    runs with the full solution (``full_run``), beside random directions' typical cosine."""
    return Measurement("M16", {r"cosine of $\Delta W_V (0, q)$ with $\sum_{\mathcal W} W_{O(i)} - \sum_{\mathcal U} W_{O(i)}$": criteria.median_of(cos_v[full_run])},
                       shown={r"cosine of $\Delta W_V (0, q)$ with $\sum_{\mathcal W} W_{O(i)} - \sum_{\mathcal U} W_{O(i)}$": None,
                              "lowest cosine": float(cos_v[full_run].min()), "runs": f"{int(full_run.sum())} of {len(full_run)}",
                              "random directions": rand_cos},
                       hypotheses=hypotheses)


def output_rows(ratio, used, hypotheses: dict) -> Measurement:
    """M17 (Lemma 6): the growth of the lucky rows of ``W_O`` over the other rows', per run used (``used``: the
    runs with the full solution whose two neuron sets are non-empty)."""
    return Measurement("M17", {"growth of the lucky rows of $W_O$ over that of the other rows": criteria.median_of(ratio)},
                       shown={"growth of the lucky rows of $W_O$ over that of the other rows": None,
                              "runs used": f"{int(used.sum())} of {len(used)}"},
                       hypotheses=hypotheses)


# ------------------------------------------------------------------------------------------ Part I: out of domain
CONE = "cone mu' = (mu_2j-1 + mu_2j)/sqrt2, nu' = nu"
UNSEEN = "unseen pairs of training patterns"
FRESH = "fresh mu' outside span{mu}"
TYPO = "Remark 1 as printed: mu' = (nu_2j-1 + nu_2j)/sqrt2"
NU_IN = "nu' inside span{mu} (nu' = mu'), |kappa| <= 1"
CONE_K1 = "cone mu', nu' = nu, |kappa| <= 1"
Q_PERP = "label embedding q' perpendicular to q"
FLIP = "label embeddings flipped (-q for +1)"
NEG = "negative coefficients (mu_2j-1 - mu_2j)/sqrt2"
SHARED = "(mu_1 + mu_2)/sqrt2 vs (mu_1 - mu_2)/sqrt2, shared support"


def ood_from_summary(ocfg, summary: dict):
    """The out-of-domain result of ``ocfg`` rebuilt from its experiment's summary (a record's: accuracies and
    attention masses per test condition and seed, the test-length grid), with the test conditions rebuilt from
    ``ocfg`` (the same fixed patterns and tasks); it carries no trained model (``train`` is None). Refuses a
    summary whose conditions or seed count are not those of ``ocfg``."""
    conds = ood_conditions(ocfg, task_set(ocfg.task_sets[0], ocfg.M1))
    if [c.name for c in conds] != list(summary["conditions"]):
        raise chk.ConfigError(f"summary must hold the test conditions of ocfg (got {summary['conditions']})")
    acc, mass = torch.tensor(summary["acc"], dtype=torch.float64), torch.tensor(summary["mass"], dtype=torch.float64)
    if acc.shape != (len(conds), ocfg.seeds) or mass.shape != acc.shape:
        raise chk.ConfigError(f"summary must hold {len(conds)} conditions x {ocfg.seeds} seeds (got {tuple(acc.shape)})")
    return OODResult(ocfg, None, conds, acc, mass, list(summary["l_grid"]),
                     torch.tensor(summary["grid_acc"], dtype=torch.float64), None, np.asarray(summary["oracle"]))


def ood_solved(ood, summary: dict) -> np.ndarray:
    """Per seed of an out-of-domain run: the full in-domain solution (the model Theorem 1 returns), read as in the
    seed sweep: final in-domain accuracy at least ``hit_acc`` (the training run's own test prompts) and attention
    mass on ``N_*`` at least 0.9 on the in-domain test condition (which tells the partial 'partner' solution apart:
    its accuracy can pass while its mass stays near one half)."""
    final = np.asarray(summary["train_final_acc"], dtype=float).reshape(-1)
    mass = per_seed(ood, torch.ones(len(final), dtype=torch.bool), ood.conditions[0].name, ood.mass).numpy()
    return (final >= ood.config.hit_acc) & (mass >= 0.9)


def seeds_used(ood, solved) -> torch.Tensor:
    """The cyclic-trained seeds Theorem 2 speaks of: those with the full in-domain solution (the model Theorem 1
    returns; ``solved``: per seed), or every seed where none has it."""
    return torch.as_tensor(solved) if solved.any() else torch.ones(len(solved), dtype=torch.bool)


def per_seed(ood, used, name: str, table=None) -> torch.Tensor:
    """The accuracy (or ``table``, e.g. ``ood.mass``) under the test condition ``name``, one value per seed used."""
    C = {c.name: i for i, c in enumerate(ood.conditions)}
    if name not in C:
        raise chk.ConfigError(f"name must be one of the test conditions {sorted(C)} (got {name!r})")
    return (ood.acc if table is None else table)[C[name]][used].double()


def theorem2(ood, ocfg, name: str, l_ts=None, alpha_test=None) -> dict:
    """Theorem 2's conditions for the test condition ``name`` of ``ood`` (:func:`.conditions.theorem2_holds`), at
    the test prompt length and ``alpha'`` of ``ocfg`` unless given."""
    cond = {c.name: c for c in ood.conditions}
    return theorem2_holds(cond[name], ocfg.patterns()[0], ocfg.beta, ocfg.M1, ocfg.q(),
                          ocfg.l_ts if l_ts is None else l_ts, ocfg.alpha_test if alpha_test is None else alpha_test)


def ood(ood, ocfg, solved, n_empty: int, h1: dict) -> list[Measurement]:
    """O1-O6 (Thm 2, Cor. 1 and their controls) on the cyclic-trained seeds with the full in-domain solution:
    accuracies and attention masses per test condition; ``n_empty``: the cone's test prompts with an empty
    ``N_*``; ``h1``: Theorem 1's conditions (the model Theorem 2 speaks of is Theorem 1's)."""
    used = seeds_used(ood, solved)
    acc = functools.partial(per_seed, ood, used)
    how = (f"the {int(used.sum())} of {len(solved)} cyclic-trained seeds with the full in-domain solution (the model "
           rf"Theorem 1 returns), {ocfg.ood_prompts} prompts per condition, $l_\mathrm{{ts}} = {ocfg.l_ts}$, $\alpha' = {ocfg.alpha_test}$; "
           "median over seeds with its order-statistic 95% interval")
    oracle = float(oracle_accuracy(ocfg.alpha_test, ocfg.l_ts))
    largest = 1 - n_empty / ocfg.ood_prompts
    return [
        Measurement("O1", {"accuracy on unseen pairs": criteria.median_of(acc(UNSEEN)),
                           r"accuracy on the cone $\mu'$": criteria.median_of(acc(CONE))},
                    shown={"accuracy on unseen pairs": None, r"accuracy on the cone $\mu'$": None, "oracle": oracle}, how=how,
                    hypotheses={**h1, **both_hold(theorem2(ood, ocfg, UNSEEN), theorem2(ood, ocfg, CONE))}),
        Measurement("O2", {r"mass on $\mathcal N_*$ (cone $\mu'$, prompts with an empty $\mathcal N_*$ included)": criteria.median_of(acc(CONE, ood.mass)),
                           r"prompts with an empty $\mathcal N_*$ in the test set": f"{n_empty} of {ocfg.ood_prompts}",
                           "largest possible mean mass": largest,
                           "expected largest mean mass": 1 - (1 - ocfg.alpha_test / 2) ** ocfg.l_ts},
                    how=how + "; per seed the mean mass over the prompts", hypotheses={**h1, **theorem2(ood, ocfg, CONE)}),
        Measurement("O3", {r"accuracy with fresh $\mu'$": criteria.median_of(acc(FRESH)),
                           r"accuracy with Remark 1's printed $\mu'$ (combinations of $\nu$)": criteria.median_of(acc(TYPO))},
                    how=how, hypotheses={k: v for k, v in both_hold(theorem2(ood, ocfg, FRESH), theorem2(ood, ocfg, TYPO)).items()
                                         if k != TEST_MU}),
        Measurement("O4", {r"accuracy drop, $\nu' = \mu'$ against $\nu' = \nu$": criteria.median_of(acc(CONE_K1) - acc(NU_IN))},
                    shown={r"accuracy drop, $\nu' = \mu'$ against $\nu' = \nu$": None, r"accuracy, $\nu' = \mu'$": float(acc(NU_IN).median()),
                           r"mass, $\nu' = \mu'$": float(acc(NU_IN, ood.mass).median()),
                           r"accuracy, $\nu' = \nu$": float(acc(CONE_K1).median()),
                           r"mass, $\nu' = \nu$": float(acc(CONE_K1, ood.mass).median())},
                    how=how, hypotheses={k: v for k, v in both_hold(theorem2(ood, ocfg, NU_IN), theorem2(ood, ocfg, CONE_K1)).items()
                                         if k != TEST_NU}),
        Measurement("O5", {r"accuracy with $q' \perp q$": criteria.median_of(acc(Q_PERP)),
                           "accuracy with flipped labels ($-q$ for $+1$)": criteria.median_of(acc(FLIP))}, how=how),
        Measurement("O6", {"negative coefficients (disjoint supports) minus cone accuracy": criteria.median_of(acc(NEG) - acc(CONE)),
                           r"$(\mu_1 + \mu_2)/\sqrt 2$ and $(\mu_1 - \mu_2)/\sqrt 2$ minus cone accuracy": criteria.median_of(acc(SHARED) - acc(CONE))},
                    shown={"negative coefficients (disjoint supports) minus cone accuracy": None,
                           r"$(\mu_1 + \mu_2)/\sqrt 2$ and $(\mu_1 - \mu_2)/\sqrt 2$ minus cone accuracy": None,
                           "accuracy, cone": float(acc(CONE).median())}, how=how),
    ]


def at_length_bound(ood, ocfg) -> list[tuple]:
    """For each ``alpha'`` of the test-length grid: ``(alpha', l, accuracies per seed, oracle)`` at the shortest
    grid length with ``l_ts >= 2/alpha'``."""
    L = np.asarray(ood.l_grid)
    out = []
    for i, ap in enumerate(ocfg.alpha_primes):
        j = int(np.nonzero(L >= 2 / ap - 1e-9)[0][0])
        out.append((ap, int(L[j]), ood.grid_acc[i, j].double(), float(ood.oracle[i, j])))
    return out


def test_length(ood, ocfg, solved, h1: dict) -> Measurement:
    """O7 (Thm 2's ``l_ts >= 2/alpha'``): the accuracy of the seeds used (see :func:`seeds_used`) at the shortest grid
    length meeting the condition, for ``alpha'`` = 0.2 and 0.6, against the same-pattern selectors' cap."""
    if tuple(ocfg.alpha_primes) != (0.2, 0.6):
        raise chk.ConfigError(f"alpha_primes must be (0.2, 0.6), the two claims.toml names (got {ocfg.alpha_primes})")
    used = seeds_used(ood, solved)
    (a2, l2, m2, o2), (a6, l6, m6, o6) = at_length_bound(ood, ocfg)
    holds = {k: all(theorem2(ood, ocfg, CONE, l_, a)[k] for a, l_ in ((a2, l2), (a6, l6))) for k in THM2_TEST}
    return Measurement("O7", {r"accuracy at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.2$)": criteria.median_of(m2[used]),
                              r"accuracy at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.6$)": criteria.median_of(m6[used]),
                              r"same-pattern selector cap at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.6$)": o6},
                       shown={r"accuracy at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.2$)": None, r"accuracy at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.6$)": None,
                              r"same-pattern selector cap at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.2$)": o2,
                              r"same-pattern selector cap at $l_\mathrm{ts} \ge 2/\alpha'$ ($\alpha' = 0.6$)": None,
                              r"$l_\mathrm{ts}$ and oracle ($\alpha' = 0.2$)": f"{l2}, {o2:.3f}", r"$l_\mathrm{ts}$ and oracle ($\alpha' = 0.6$)": f"{l6}, {o6:.3f}"},
                       hypotheses={**h1, **holds})


# ------------------------------------------------------------------------------------------ Part II: sample complexity
def chernoff(worst: dict, where: dict, first_fail, some_c: dict, below: dict) -> Measurement:
    """S11 (eq. 37): the largest ratio of the exact binomial tail to the printed bound (37) and to the bound (14)
    gives (``worst``, at ``where``; ``first_fail``: the first (alpha, l, c) where (37) fails), and for each
    alpha the smallest c the Chernoff-Hoeffding inequality certifies with the largest ratio at it (``some_c``:
    ``{alpha: (ratio, c)}``; ``below``: the ratio 0.1 below it)."""
    if first_fail is None:
        raise chk.ConfigError("first_fail must be the (alpha, l, c) at which (37) first fails (got None)")
    return Measurement(
        "S11", {"first_fail_alpha": first_fail[0], "first_fail_l": first_fail[1], "first_fail_c": first_fail[2],
                "worst_printed": worst["printed (37)"], "worst_from_14": worst["from (14)"],
                "worst_alpha": where["alpha"], "worst_l": where["l"], "worst_c": where["c"],
                "c_star": ", ".join(f"{c:.3f}" for _, c in some_c.values()),
                "some_c_ratio": max(v[0] for v in some_c.values()),
                "below_c_star": ", ".join(f"{r:.3g}" for r in below.values())},
        shown={r"the same for the bound from Lemma 2's (14), $e^{-l c^2\alpha/4}$": worst["from (14)"]},
        under={r"every $c \in (0, 1)$ (the Chernoff bound (37) is derived from)":
               {"largest exact tail / printed bound (37)": worst["printed (37)"]},
               r"some $c \in (0, 1)$ for each $\alpha$ (the words after (37))":
               {"largest exact tail / printed bound (37)": max(v[0] for v in some_c.values())}},
        measured=f"every $c$: largest exact tail / printed bound (37) = {worst['printed (37)']:.4g} (at $\\alpha$ = "
                 f"{where['alpha']}, $l$ = {where['l']}, $c$ = {where['c']}); first failure of (37) at "
                 f"$(\\alpha, l, c)$ = {first_fail}; the same for the bound from Lemma 2's (14), "
                 f"$e^{{-l c^2\\alpha/4}}$ = {worst['from (14)']:.4g}; some $c$ per $\\alpha$: the smallest $c$ that the "
                 "Chernoff-Hoeffding inequality certifies for every $l$, and the largest ratio at it over $l$ up to $10^5$: "
                 + ", ".join(f"$\\alpha = {a:g}$: $c$ = {c:.3f}, {r:.3g}" for a, (r, c) in some_c.items()))


def kendall_per_seed(T_seed: np.ndarray) -> np.ndarray:
    """Kendall's tau-a of ``-T_hit`` against alpha, per seed (``T_seed``: (alphas, seeds) in increasing alpha,
    ``inf`` where a seed never reached the accuracy), over every pair of alphas."""
    i_, j_ = np.triu_indices(T_seed.shape[0], 1)
    return ((T_seed[j_] < T_seed[i_]).astype(float) - (T_seed[j_] > T_seed[i_])).mean(0)


def alpha_sweep(a_sweep, acfg, Cfit: float, err: float, hypotheses: dict) -> Measurement:
    """S1 (eq. 6's alpha): per seed Kendall's tau of ``-T_hit`` against alpha, and whether the median seed reached
    the accuracy at the largest alpha, with the fit ``A/(C - 1/alpha)`` beside it."""
    T_seed = np.nan_to_num(np.asarray(a_sweep.res.hits(), dtype=float), nan=np.inf)  # never reached: +inf
    return Measurement("S1", {r"Kendall's $\tau$ between $-T_\mathrm{hit}$ and $\alpha$, per seed": kendall_per_seed(T_seed),
                              r"reached at the largest $\alpha$": bool(np.isfinite(a_sweep.median)[-1])},
                       shown={r"Kendall's $\tau$ between $-T_\mathrm{hit}$ and $\alpha$, per seed": None, r"reached at the largest $\alpha$": None,
                              r"median $T_\mathrm{hit}$": a_sweep.medians(), "fitted $C$": Cfit, "rms log error of the fit": err},
                       hypotheses=hypotheses,
                       how=f"first step with held-out accuracy at least {acfg.hit_acc}, {acfg.seeds} seeds per $\\alpha$, $l_\\mathrm{{tr}}$ = "
                           f"{acfg.l}; per seed Kendall's $\\tau_a$ of $-T_\\mathrm{{hit}}$ against $\\alpha$ over every pair of values; median "
                           "over seeds, order-statistic 95% interval")


def noise(n_sweep, ncfg, n_acc, eps_m: float, hypotheses: dict) -> Measurement:
    """S2 (eq. 6's noise factor): inside Theorem 1's noise condition ``tau M1 < 1 - eps_m``, the slowdown over
    ``tau = 0`` against the factor ``((1-eps_m)/(1-eps_m-tau M1))^(1/2)``; outside it, where training first fails."""
    first_fail = next((t for t, v in zip(ncfg.taus, n_sweep.median) if not np.isfinite(v)), None)
    tau_max = (1 - eps_m) / ncfg.M1
    inside = [i for i, t in enumerate(ncfg.taus) if 0 < t < tau_max]
    if not inside:
        raise chk.ConfigError(f"ncfg.taus must hold a tau in (0, {tau_max:.3g}) (got {ncfg.taus})")
    factor = {i: math.sqrt((1 - eps_m) / (1 - eps_m - ncfg.taus[i] * ncfg.M1)) for i in inside}
    slow = {i: float(n_sweep.median[i] / n_sweep.median[0]) for i in inside}  # inf where the median seed never got there
    h = np.asarray(n_sweep.res.hits(), dtype=float)  # (taus, seeds), NaN where never reached
    slowed = int((~(h[inside[-1]] <= h[0])).sum())  # seeds slower (or never there) at the largest tau inside than at 0
    return Measurement("S2", {
        r"reached at every $\tau$ inside the noise condition": bool(np.isfinite(n_sweep.median[[0] + inside]).all()),
        r"$T_\mathrm{hit}(\tau)/T_\mathrm{hit}(0)$ over the factor of eq. (6), per $\tau$ inside the condition": [slow[i] / factor[i] for i in inside],
        r"slowdown at the largest $\tau$ inside the condition": slow[inside[-1]], r"largest $\tau$ inside": ncfg.taus[inside[-1]],
        r"factor at the largest $\tau$ inside": factor[inside[-1]],
        r"first failing $\tau/\beta$": first_fail / ncfg.beta if first_fail else float("nan"), "$1/M_1$": 1 / ncfg.M1,
        r"seeds slower at the largest $\tau$ inside than at $\tau = 0$": f"{slowed} of {h.shape[1]}"},
        shown={r"reached at every $\tau$ inside the noise condition": None,
               r"$T_\mathrm{hit}(\tau)/T_\mathrm{hit}(0)$ over the factor of eq. (6), per $\tau$ inside the condition": None,
               r"slowdown at the largest $\tau$ inside the condition": None, r"largest $\tau$ inside": None,
               r"factor at the largest $\tau$ inside": None, r"median $T_\mathrm{hit}$": n_sweep.medians(),
               "final accuracy (median)": [round(float(v), 3) for v in n_acc], r"first failing $\tau/\beta$": None,
               "$1/M_1$": None, r"largest $\tau$ meeting the noise condition": tau_max,
               r"seeds slower at the largest $\tau$ inside than at $\tau = 0$": None},
        hypotheses=hypotheses)


def per_seed_slopes(sweep, inverse: bool = False) -> np.ndarray:
    """(S,) the log-log slope of each seed's ``T_hit`` against the swept values of ``sweep`` (a
    :class:`~.training.HitSweep`), or against their inverses: seed ``s`` is the same initialisation at every value.
    A seed that never reached ``hit_acc`` at some value has no finite slope and counts as the steepest (+inf), as
    a hit never reached counts later than every reached one."""
    h = np.asarray(sweep.res.hits(), dtype=float)  # (G, S), NaN where never reached
    x = 1 / sweep.values if inverse else sweep.values
    return np.asarray([metrics.loglog_slope(x, h[:, s]) if np.isfinite(h[:, s]).all() else np.inf
                       for s in range(h.shape[1])])


def slope_over_seeds(sweep, inverse: bool = False) -> criteria.Estimate:
    """The median of the per-seed slopes (:func:`per_seed_slopes`) with its distribution-free order-statistic 95%
    interval (:func:`~icl_lab.criteria.median_of`: none below the minimum seed count, which then decides nothing)."""
    return criteria.median_of(per_seed_slopes(sweep, inverse))


#: the attention mass on N_* of the full solution, the model Theorem 1 returns (as M12, M15-M17 and O1-O7 read it)
FULL_MASS = 0.9


def full_solution_sweep(sweep, cfg, mass: float = FULL_MASS) -> HitSweep:
    """``sweep`` (a :class:`~.training.HitSweep`) with each run's hit moved to the first recorded step at which it
    has the full solution, held-out accuracy at least ``cfg.hit_acc`` and attention mass on ``N_*`` (over the
    prompts whose ``N_*`` is non-empty) at least ``mass``, for a run that also ends training with it; NaN for a run
    that ends without it, as one that ends in the partial 'partner' solution (accuracy can pass while the mass stays
    near one half). A dip below ``mass`` between the two (SGD at the largest step sizes fluctuates) does not move
    the hit: the iterations needed to get there, not how steadily the run stays."""
    res = sweep.res
    ok = (res.curves["acc"] >= cfg.hit_acc) & (res.curves["mass_present"] >= mass)  # (records, runs)
    steps = torch.as_tensor(res.steps, dtype=torch.float64)
    t = torch.where(ok[-1], steps[ok.to(torch.int8).argmax(0)], torch.tensor(float("nan"), dtype=torch.float64))
    return HitSweep.of(dataclasses.replace(res, t_hit=t))


def rates(l_sweep, lcfg, e_sweep, ecfg, e2, m_sweep, mcfg, h_lambda: dict, h_eta: dict, h_m: dict) -> list[Measurement]:
    """S3, S4 and S5 (eq. 6's ``1/lambda_*``, ``1/eta`` and ``sqrt M``, read as upper bounds): per seed the log-log
    slope of ``T_hit`` (S4, S5: the iterations to the full solution, :func:`full_solution_sweep`), the median over
    seeds with its interval; at ``lambda_*`` also over the values with ``B >= lambda_*^-4`` only, at ``eta`` the run
    ``e2`` beyond the sweep (``eta = 2``)."""
    lam_ok = np.asarray([lcfg.batch >= v**-4 for v in lcfg.lambdas])  # B >= lambda_*^-4 per value
    slope_l_ok = (metrics.loglog_slope(1 / l_sweep.values[lam_ok], l_sweep.median[lam_ok]) if lam_ok.sum() >= 2
                  else float("nan"))
    return [
        Measurement("S3", {"slope": slope_over_seeds(l_sweep, inverse=True)},
                    shown={"slope": None, r"slope of the median $T_\mathrm{hit}$": l_sweep.slope(inverse=True),
                           r"slope with $B \ge \lambda_*^{-4}$ only": slope_l_ok, r"median $T_\mathrm{hit}$": l_sweep.medians()},
                    hypotheses=h_lambda,
                    how=rf"log-log slope of each seed's $T_\mathrm{{hit}}$ against $1/\lambda_*$ (a seed that never reached it: steepest), "
                        f"median over seeds with its order-statistic 95% interval; "
                        rf"$\lambda$ fixed for every token, $\tau = 0$, {lcfg.seeds} seeds per value, $m = {lcfg.m}$, "
                        rf"$B = {lcfg.batch}$, $\delta = {lcfg.delta:g}$, {lcfg.steps} steps; eq. (6) read as an upper bound"),
        Measurement("S4", {"slope": slope_over_seeds(e_sweep, inverse=True), r"$\eta$ range": f"[{min(ecfg.etas):g}, {max(ecfg.etas):g}]",
                           r"mass on $\mathcal N_*$ at $\eta = 2$": float(e2.final("mass_present").median()),
                           r"accuracy at $\eta = 2$": float(e2.final("acc").median()),
                           r"seeds reaching the hit accuracy at $\eta = 2$":
                               f"{int((e2.final('acc') >= ecfg.hit_acc).sum())} of {ecfg.seeds}"},
                    shown={"slope": None, r"slope of the median $T_\mathrm{hit}$": e_sweep.slope(inverse=True),
                           r"$\eta T_\mathrm{hit}$ (median)": (e_sweep.values * e_sweep.median).round(0).tolist()},
                    hypotheses=h_eta,
                    how=rf"$T_\mathrm{{hit}}$: {_FULL_HIT.format(every=ecfg.eval_every)}; log-log slope of each seed's $T_\mathrm{{hit}}$ against "
                        rf"$1/\eta$, median over {ecfg.seeds} seeds with its order-statistic 95% interval; per-run learning "
                        "rates in one batched training, same data streams; eq. (6) read as an upper bound"),
        Measurement("S5", {"slope": slope_over_seeds(m_sweep)},
                    shown={"slope": None, r"slope of the median $T_\mathrm{hit}$": m_sweep.slope(), r"median $T_\mathrm{hit}$": m_sweep.medians()},
                    hypotheses=h_m,
                    how=rf"$T_\mathrm{{hit}}$: {_FULL_HIT.format(every=mcfg.eval_every)}; log-log slope of each seed's $T_\mathrm{{hit}}$ against $M$, "
                        rf"median over {mcfg.seeds} seeds with its order-statistic 95% interval; $M_2$ in {list(mcfg.M2s)} "
                        r"($M \ge M_1^2$ throughout) at fixed $d_x$; eq. (6) read as an upper bound"),
    ]


#: how S4 and S5 read 'the iterations needed' (the T of eq. (6))
_FULL_HIT = ("the first step, logged every {every}, at which the run has the model Theorem 1 returns, the full "
             "solution (held-out accuracy at least 0.95 and attention mass on $\\mathcal N_*$ at least 0.9), in a run that ends training with "
             "it: eq. (6)'s T counts the iterations after which that model has zero error, so a run that ends in the "
             "partial 'partner' solution (attention mass near one half) has not reached it, even where its accuracy "
             "passes; a seed that does not reach it at some value has no finite slope and counts as the steepest")


def output_layer(ratios: dict, slopes: dict, readings: dict, lcfg, hypotheses: dict) -> Measurement:
    """S10 (Lemma 3): the log-log slope against ``lambda_*`` of the lucky neurons' feature/label ``W_O`` update ratio
    under both readings of the split (``ratios``, ``slopes``: per reading key; ``readings``: key -> option)."""
    if set(readings) != {"coordinates", "projections"}:
        raise chk.ConfigError(f"readings must name 'coordinates' and 'projections' (got {sorted(readings)})")
    shown = {readings[r]: {r"log-log slope of the ratio against $\lambda_*$": slopes[r],
                           "feature/label update ratio": dict(zip(lcfg.lambdas, ratios[r].round(2).tolist()))}
             for r in readings}
    return Measurement(
        "S10", {}, under={readings["coordinates"]: {r"log-log slope of the ratio against $\lambda_*$": slopes["coordinates"]},
                          readings["projections"]: {r"log-log slope of the ratio against $\lambda_*$": slopes["projections"]}},
        measured=choice_text("S10", shown), hypotheses=hypotheses,
        how=f"the accumulated $W_O$ update of each lucky neuron, feature part over label part, at the end of training, mean "
            rf"over lucky neurons, median over {lcfg.seeds} seeds, for each $\lambda_*$ of the sweep ($m = {lcfg.m}$, "
            rf"$B = {lcfg.batch}$, $\delta = {lcfg.delta:g}$, {lcfg.steps} steps); log-log slope against $\lambda_*$; the feature "
            r"part is the norm on coordinates $1, \dots, d_x$, or of the projection onto $\mathrm{span}\{\mu_1, \dots, \mu_{M_1}\}$; "
            r"the label part the norm on $d_x+1, \dots, d_x+d_y$, or the component along $q$")


def shortest_length(acc: np.ndarray, lengths, level: float = 0.9) -> list:
    """For each column of ``acc`` ((lengths, alphas)), the shortest length whose value reaches ``level`` (None: none)."""
    Ls = np.asarray(lengths)
    return [int(Ls[ok[0]]) if len(ok) else None for ok in (np.nonzero(acc[:, i] >= level)[0] for i in range(acc.shape[1]))]


def sufficient_cells(pcfg) -> list[tuple]:
    """The ``(alpha, l_tr)`` cells of the grid where eq. (5) holds with the constant 1, ``l_tr >= 2 ln M/alpha``, in
    the grid's order (alpha, then l_tr). Refuses a grid with no such cell."""
    cells = [(a, l) for a in pcfg.alphas for l in pcfg.lengths if l >= 2 * math.log(pcfg.M) / a]
    if not cells:
        raise chk.ConfigError(f"pcfg.lengths must reach 2 ln M/alpha at some alpha (got lengths {list(pcfg.lengths)}, "
                              f"alphas {list(pcfg.alphas)}, M = {pcfg.M})")
    return cells


def prompt_length(pres, pcfg, hypotheses: dict) -> list[Measurement]:
    """S6 and S7 (eq. 5): the accuracy at every grid cell where eq. (5) holds with the constant 1 (median over seeds
    with its interval), beside it per seed the shortest training prompt reaching accuracy 0.9 at the smallest alpha
    over the largest (a remark: (5) is sufficient, not necessary), and the largest excess of the median accuracy over
    the oracle."""
    Ls = np.asarray(pcfg.lengths)
    cells = sufficient_cells(pcfg)
    acc_med = pres.acc.median(-1).values.numpy()  # (L, A)
    needed = shortest_length(acc_med, pcfg.lengths)
    acc_s = pres.acc.numpy()  # (L, A, S); per seed the shortest l_tr reaching 0.9, twice the longest if none does
    need_s = np.where((acc_s >= 0.9).any(0), Ls[(acc_s >= 0.9).argmax(0)], 2 * Ls[-1])  # (A, S)
    oracle_need = shortest_length(np.asarray(pres.oracle), pcfg.lengths)  # where even the oracle reaches 0.9
    at_cells = [criteria.median_of(acc_s[list(pcfg.lengths).index(l), list(pcfg.alphas).index(a)]) for a, l in cells]
    return [
        Measurement("S6", {
            r"accuracy at every $(\alpha, l_\mathrm{tr})$ of the grid with $l_\mathrm{tr} \ge 2\ln M/\alpha$, median over seeds": at_cells,
            r"shortest $l_\mathrm{tr}$ reaching accuracy 0.9 at the smallest $\alpha$ over that at the largest, per seed": need_s[0] / need_s[-1],
            "shortest training length for the oracle": dict(zip(pcfg.alphas, oracle_need))},
            shown={r"cells $(\alpha, l_\mathrm{tr})$ with $l_\mathrm{tr} \ge 2\ln M/\alpha$": cells,
                   r"accuracy at every $(\alpha, l_\mathrm{tr})$ of the grid with $l_\mathrm{tr} \ge 2\ln M/\alpha$, median over seeds": None,
                   r"shortest $l_\mathrm{tr}$ reaching accuracy 0.9 at the smallest $\alpha$ over that at the largest, per seed": None,
                   r"shortest $l_\mathrm{tr}$ with median accuracy at least 0.9": dict(zip(pcfg.alphas, needed)),
                   "shortest training length for the oracle": None,
                   r"$2\ln M/\alpha$": {a: round(2 * math.log(pcfg.M) / a, 1) for a in pcfg.alphas}},
            hypotheses=hypotheses,
            how=rf"final accuracy after {pcfg.steps} steps on held-out prompts of the training length, grid $l_\mathrm{{tr}}$ in "
                rf"{list(pcfg.lengths)}, $\alpha$ in {list(pcfg.alphas)}, {pcfg.seeds} seeds; at each cell where (5) holds with "
                rf"the constant 1, $l_\mathrm{{tr}} \ge 2\ln M/\alpha$ ($M = {pcfg.M}$: {', '.join(f'({a:g}, {l})' for a, l in cells)}), "
                "the median accuracy over seeds with its order-statistic 95% interval; beside it, per seed the ratio of "
                "the shortest l_tr reaching 0.9 at the smallest and the largest alpha"),
        Measurement("S7", {"largest excess of median accuracy over the oracle": float((acc_med - pres.oracle).max())}),
    ]


def task_count(tres, tcfg) -> list[Measurement]:
    """S8, S8b and S9 (Lemma 1): which task sets are balanced, the all-pairs gain of the ``M1`` cyclic tasks over the
    best smaller set per seed, and the unbalanced set's all-pairs accuracy and its gap to its training tasks."""
    idx = {n: i for i, n in enumerate(tres.train.labels)}
    full_name = f"cyclic[:{tcfg.M1}]"
    few = [n for n in tres.train.labels if n.startswith("cyclic[:") and n != full_name]
    if full_name not in idx or not few or "unbalanced" not in idx:
        raise chk.ConfigError(f"tres must hold {full_name}, a smaller cyclic set and the unbalanced set (got {list(idx)})")
    allp_full = float(tres.all_pairs_acc[idx[full_name]].median())
    allp_few = max(float(tres.all_pairs_acc[idx[n]].median()) for n in few)
    gain_s = tres.all_pairs_acc[idx[full_name]] - torch.stack([tres.all_pairs_acc[idx[n]] for n in few]).max(0).values
    unb = idx["unbalanced"]
    return [
        Measurement("S8", {"every set of $n < M_1$ cyclic tasks is unbalanced": not any(tres.balanced[idx[n]] for n in few),
                           "the $M_1$ cyclic tasks are balanced": bool(tres.balanced[idx[full_name]])},
                    shown={"every set of $n < M_1$ cyclic tasks is unbalanced": None, "the $M_1$ cyclic tasks are balanced": None,
                           "balanced, per task set": ", ".join(f"{n}: {tres.balanced[idx[n]]}" for n in tres.train.labels)}),
        Measurement("S8b", {"all-pairs gain of the $M_1$ cyclic tasks over the best smaller set, per seed": gain_s},
                    shown={"all-pairs gain of the $M_1$ cyclic tasks over the best smaller set, per seed": None,
                           "all-pairs accuracy, best with $n < M_1$ cyclic tasks": allp_few,
                           "all-pairs accuracy, the $M_1$ cyclic tasks": allp_full},
                    how=f"train on the first $n$ cyclic tasks, $n$ in {list(tcfg.n_tasks)}; test on all $M_1(M_1-1)$ ordered pairs, "
                        f"per seed the gain over the best smaller set (same seeds); median over {tcfg.seeds} seeds, "
                        "order-statistic 95% interval"),
        Measurement("S9", {"unbalanced: all-pairs accuracy, per seed": tres.all_pairs_acc[unb],
                           "unbalanced: training-task minus all-pairs accuracy, per seed":
                               tres.train_acc[unb] - tres.all_pairs_acc[unb]},
                    shown={"unbalanced: all-pairs accuracy, per seed": None,
                           "unbalanced: training-task minus all-pairs accuracy, per seed": None,
                           "unbalanced: training-task accuracy": float(tres.train_acc[unb].median()),
                           "shortcut alone": float(tres.shortcut_acc[unb])}),
    ]


#: the two readings of the log in eq. (39), B >= M1 log M1 (claims.toml, S13's choice): option -> log M1
LOG_BASES = {r"natural log: $B = M_1\ln M_1$": math.log, r"base 2: $B = M_1\log_2 M_1 = 1.44\,M_1\ln M_1$": math.log2}
S13_P = "probability that the $B$ queries hold every pattern, at the statement's $B$ and the largest $M_1$"


def outcome(claim: str, quantity: str, value) -> str:
    """How ``claim``'s declared test of ``quantity`` judges ``value`` on its own (:meth:`~icl_lab.claims.Claim.outcome`)."""
    tests = [t for t in declared("selectors")[claim].tests if t["quantity"] == quantity]
    if not tests:
        raise chk.ConfigError(f"claim {claim} declares no test of {quantity!r}")
    return criteria.evaluate(tests[0], {quantity: value}, f"claim {claim}")


def batch(coverage, M1: int, B: int, c95: float, slots, fresh: bool, N_hit: float) -> list[Measurement]:
    """S13a and S13 (eq. 39) and S14: the probability that ``B`` uniform queries cover all ``M1`` patterns (``coverage``:
    :func:`.theory.query_coverage`) at our ``B``, at (39)'s ``B = ceil(M1 log M1)`` under each base of the log
    (:data:`LOG_BASES`) and at ``B = ceil(c M1 ln M1)`` for ``c`` = 1 and 2, as ``M1`` grows; whether the two bases
    reach the same outcome; whether two successive batches share a prompt (``fresh``), beside ``N = B T_hit``."""
    if M1 != 8:
        raise chk.ConfigError(f"M1 must be 8, the first of the sizes claims.toml names (got {M1})")
    M1s = (M1, 32, 128, 1024)  # ours, then growing: 'with high probability' as M1 grows
    P_c = {c: [coverage(n, math.ceil(c * n * math.log(n))) for n in M1s] for c in (1, 2)}  # at B = ceil(c M1 ln M1)
    P_b = {o: [coverage(n, math.ceil(n * log(n))) for n in M1s] for o, log in LOG_BASES.items()}  # B = ceil(M1 log M1)
    ln_, log2_ = LOG_BASES
    series = {o: {"$P$ at $M_1 = 8$ to $1024$": ", ".join(f"{v:.3f}" for v in P_b[o])} for o in LOG_BASES}
    return [
        Measurement("S13", {"our $B$": B, "$P$ at our $B$": coverage(M1, B),
                            "$P$ at $c = 1$, $M_1 = 8$ to $1024$": ", ".join(f"{v:.3f}" for v in P_c[1]),
                            "$P$ at $c = 2$, $M_1 = 8$ to $1024$": ", ".join(f"{v:.3f}" for v in P_c[2]),
                            r"$P$ at $B = M_1\ln M_1$, largest $M_1$": P_b[ln_][-1], r"$P$ at $B = M_1\log_2 M_1$, largest $M_1$": P_b[log2_][-1],
                            "the same outcome under both bases": len({outcome("S13", S13_P, P_b[o][-1]) for o in P_b}) == 1},
                    shown={"our $B$": None, "$P$ at our $B$": None, r"$B$ for 0.95, in units of $M_1\log M_1$": c95,
                           "the same outcome under both bases": None,
                           "$P$ at $c = 1$, $M_1 = 8$ to $1024$": None, "$P$ at $c = 2$, $M_1 = 8$ to $1024$": None},
                    under={ln_: {"probability that the $B$ queries hold every pattern, at the statement's $B$ and the largest $M_1$": P_b[ln_][-1]},
                           log2_: {"probability that the $B$ queries hold every pattern, at the statement's $B$ and the largest $M_1$": P_b[log2_][-1]}},
                    shown_under=series,
                    # evaluated at B = ceil(M1 log M1) >= M1 ln M1 under either base, so (39) holds by construction
                    hypotheses={"batch (39): B >= M1 log M1": True,
                                "queries uniform over the M1 relevant patterns (each in equally many task slots)":
                                    bool(slots.min() == slots.max())}),
        Measurement("S13a", {r"$P$ at $B = 2M_1\ln M_1$, largest $M_1$": P_c[2][-1],
                             r"$P$ at $B = 2M_1\ln M_1$ rises with $M_1$": bool(all(b > a for a, b in zip(P_c[2], P_c[2][1:]))),
                             "$P$ at $c = 1$, $M_1 = 8$ to $1024$": ", ".join(f"{v:.3f}" for v in P_c[1])},
                    shown={r"$P$ at $B = 2M_1\ln M_1$, largest $M_1$": None, r"$P$ at $B = 2M_1\ln M_1$ rises with $M_1$": None,
                           "$P$ at $c = 2$, $M_1 = 8$ to $1024$": ", ".join(f"{v:.3f}" for v in P_c[2]),
                           "$P$ at $c = 1$, $M_1 = 8$ to $1024$": None},
                    hypotheses={"queries uniform over the M1 relevant patterns (each in equally many task slots)":
                                    bool(slots.min() == slots.max())}),
        Measurement("S14", {"two successive batches share no prompt": fresh},
                    shown={"two successive batches share no prompt": None,
                           r"$N = BT_\mathrm{hit}$ at the median over the $\alpha$ sweep": round(N_hit)}),
    ]
