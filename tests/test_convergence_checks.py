"""The convergence chapter's checks (``icl_lab/papers/convergence/checks.py``): each decides its claims on a
small result, and on the ci-scale runs the statuses are those of the ledger shipped for ci."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import icl_lab
from icl_lab.claims import Ledger, shipped_statuses
from icl_lab.memo import full
from icl_lab.papers.convergence import CountLaw, checks
from icl_lab.papers.convergence import experiments as cv
from icl_lab.params import ConfigError

pytestmark = pytest.mark.declarations


def _statuses(ms, part=None):
    ledger = Ledger("convergence", part=part)  # None: every page's claims
    return {c.id: c.status for c in ledger.judge(ms, show=False)}


def test_thm_hyp_reads_theta_within_a_factor_ten_and_polylog_as_log_squared():
    h = checks.thm_hyp([(20, 1e-3), (200, 1e-3)], 0.5)
    assert h == {"p_1 = Theta(1), p_k = Theta(1/K)": True, "N >= poly(K) (mean field)": True,
                 "polylog(K) >> log(1/eps)": True}
    assert checks.thm_hyp([(3, 1e-3)], None)["polylog(K) >> log(1/eps)"] is False  # log(1000) > log(3)^2
    assert checks.thm_hyp([(50, 1e-3)], 0.05)["p_1 = Theta(1), p_k = Theta(1/K)"] is False
    assert "polylog(K) >> log(1/eps)" not in checks.thm_hyp([(50, None)], 0.5, eps=False)


def _ids(rel=1e-14):
    errors = {"I1": rel, "I2": rel, "I3_formula": rel, "I3_z": 0.5, "I6_span": 1e-16, "I6_columns": 1e-17}
    floor = {"rel_err": rel, "closed": [1.0, 1.35e-3, 1.35e-3]}
    return SimpleNamespace(errors=errors, floors={"imbalanced": floor, "balanced": floor})


def test_identities_full_vs_reduced_and_floors_decide_on_small_results():
    cfg = SimpleNamespace(prompts=10, K=3, d=4, N=6, steps=5)
    hres = SimpleNamespace(max_diff_marginalized=1e-15, max_diff_sampled=0.01, mc_spread=0.02, off_span=1e-16)
    ms = checks.identities(_ids(), cfg) + checks.full_vs_reduced(hres, cfg, _ids()) + [checks.floors(_ids())]
    st = _statuses(ms)
    assert st == {"I1": "reproduced", "I2": "reproduced", "I3": "reproduced", "I4": "reproduced with caveat",
                  "I6": "reproduced", "I7": "reproduced"}  # I4 always carries its caveat on the sampled w
    ledger = Ledger("convergence", part="setup")
    (i4,) = ledger.judge([ms[3]], show=False)
    assert i4.measured.startswith(r"largest difference (marginalised $w$) = $10^{-15}$; RMS deviation (sampled $w$) = 0.01; $w$-spread = 0.02")
    assert "10 prompts" in i4.how
    st = _statuses(checks.identities(_ids(rel=0.1), cfg) + [checks.floors(_ids(rel=0.1))])
    assert st["I1"] == st["I2"] == st["I7"] == "not reproduced"
    far = SimpleNamespace(**{**vars(hres), "max_diff_sampled": 0.1})  # 5 w-spreads: beyond every alternative
    assert _statuses(checks.full_vs_reduced(far, cfg, _ids()))["I4"] == "not reproduced"


def test_initial_gradients_decide_g0_and_need_the_closed_form_to_agree():
    st = _statuses(checks.initial_gradients(0.0))
    assert st["G0-bal"] == "reproduced" and st["G0-fig3"] == "reproduced"
    assert _statuses(checks.initial_gradients(0.5))["G0-bal"] == "not reproduced"


def test_deviation_decides_c3_on_multinomial_draws():
    K, N = 5, 2000
    eps = math.sqrt(20 * K / N)
    p = torch.tensor([0.4, 0.3, 0.15, 0.1, 0.05], dtype=torch.float64)
    X = CountLaw.monte_carlo(N, p, 20_000, icl_lab.make_generator(11)).counts
    m = checks.deviation(X, N, p, eps)
    assert m.hypotheses == {"0 < eps < 1": True, "K/N <= eps^2/20": True}
    assert _statuses(m)["C3"] == "reproduced"
    far = X.clone()
    far[:, 0] += N // 2  # every draw far from its mean
    assert _statuses(checks.deviation(far, N, p, eps))["C3"] == "not reproduced"


def test_count_event_helpers_and_c45():
    X = torch.tensor([[10.0, 10.0], [15.0, 5.0]], dtype=torch.float64)
    assert checks.in_event(X, 20, torch.tensor([0.5, 0.5], dtype=torch.float64), 2.0) == 1
    assert checks.count_bound(5, 5000, 1.0) == pytest.approx(1 - 3 * math.exp(-5000 / 625))
    h = checks.count_hypotheses(100, 10**8, torch.tensor([0.5] + [0.5 / 99] * 99, dtype=torch.float64), 0.45, True)
    assert h == {"p_k = Theta(1/K) (k >= 2 for E*_imbal, with p_1 = Theta(1))": True, "N >= 20 K^3": True,
                 "L_k = p_k K - c > 0 (k >= 2 for E*_imbal)": True}
    m = checks.count_events(draws=4000)
    assert m.quantities["$\\log P(\\text{not } E^*_{\\mathrm{imbal}})$, Chernoff upper bound, $K = 100$"] < m.quantities["$\\log(3 e^{-c^2 N/(25 K^2)})$, $K = 100$"]
    assert "4000 draws" in m.measured
    assert _statuses(m, "beyond")["C45"] in {"reproduced", "reproduced with caveat"}


def test_step_size_and_unseen_decide_on_small_results():
    flow = {"T1": 10.0, "T2": 20.0, "T3": 30.0, "T4": 40.0}
    eres = SimpleNamespace(times={(20, "flow"): flow, (20, 1.0): {k: v * 1.001 for k, v in flow.items()},
                                  (20, 10.0): {k: v * 1.01 for k, v in flow.items()}}, max_rel_diff=0.01)
    cfg = SimpleNamespace(etas=(1.0, 10.0), K_values=(20,))
    assert checks.eta_deviation(eres, cfg) == {1.0: pytest.approx(0.001), 10.0: pytest.approx(0.01)}
    assert _statuses(checks.step_size(eres, cfg))["E1"] == "reproduced"
    uw = SimpleNamespace(median_rel_err={"w = 10 1": [0.0, 0.0], "uniform": [1.0, 0.01], "cauchy": [1.0, 0.02]},
                         median_one_minus_attn=[0.5, 0.005], steps=[1, 100], bound_violation=-1e-3)
    assert checks.unseen_tracks(uw)
    small = SimpleNamespace(prompts=10, N=60, K=3)  # the paper's imbalanced setting: outside Theorem 3.1's conditions
    st = _statuses(checks.unseen(uw, small), "beyond")
    assert st == {"I-w": "reproduced with caveat", "I-w-bound": "reproduced"}
    flat = SimpleNamespace(**{**vars(uw), "median_rel_err": {"uniform": [1.0, 0.9]}})
    assert not checks.unseen_tracks(flat)
    # a failure outside the theorem's conditions does not contradict it
    assert _statuses(checks.unseen(flat, small), "beyond")["I-w"] == "inconclusive"


def test_beyond_sweep_needs_p1_03():
    with pytest.raises(ConfigError, match="p1_values"):
        checks.beyond_sweep(SimpleNamespace(balanced={}), SimpleNamespace(p1_values=(0.5,), K_values=()))


# ------------------------------------------------------------------ on the ci runs (read from the shipped results)
@pytest.fixture(scope="module")
def ci_runs():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ICL_LAB_SCALE", "ci")
        sw_cfg = cv.SweepConfig.for_scale("ci")
        return SimpleNamespace(sw_cfg=sw_cfg, sw=full(cv.run_sweep, sw_cfg),
                               po_cfg=cv.PortraitConfig.for_scale("ci"), h_cfg=cv.FullVsReducedConfig.for_scale("ci"),
                               fn_cfg=cv.FiniteNConfig.for_scale("ci"), eta_cfg=cv.EtaCheckConfig.for_scale("ci"))


def test_the_sweep_checks_give_the_shipped_ci_statuses(ci_runs, monkeypatch):
    r = ci_runs
    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    if True:
        po = full(cv.run_portrait, r.po_cfg)
        hres = full(cv.run_full_vs_reduced, r.h_cfg)
        fn = full(cv.run_finite_n, r.fn_cfg)
        eres = full(cv.run_eta_check, r.eta_cfg)
        ms = (checks.balanced_column(r.sw, r.sw_cfg), *checks.balanced_scaling(r.sw, r.sw_cfg), *checks.dominant(r.sw, r.sw_cfg),
              *checks.portrait(po, r.po_cfg, hres, r.sw), *checks.phase_order(r.sw, r.sw_cfg, checks.beyond_sweep(r.sw, r.sw_cfg)),
              *checks.phase_durations(r.sw, r.sw_cfg), checks.late_law(r.sw, r.sw_cfg), checks.eps_scaling(r.sw, r.sw_cfg),
              checks.switch(r.sw, r.sw_cfg), *checks.finite_n(fn, r.fn_cfg, at_lemma=checks.lemma_tails(r.fn_cfg)),
              checks.step_size(eres, r.eta_cfg))
        got = _statuses(list(ms))
    shipped = shipped_statuses()
    want = {i: shipped[("ci", "convergence", i)] for i in got if ("ci", "convergence", i) in shipped}
    assert want and got == {**got, **want}
    assert checks.late_law_holds(r.sw, r.sw_cfg)
    assert checks.sweep_K(r.sw, r.sw_cfg) == sorted(checks.sweep_K(r.sw, r.sw_cfg))
    assert set(checks.switch_positions(r.sw, r.sw_cfg)) == {(p1, K) for p1 in r.sw_cfg.p1_values
                                                            for K in checks.sweep_K(r.sw, r.sw_cfg)}
    assert all(np.isfinite(v) for v in checks.duration_slopes(r.sw, r.sw_cfg)["I"])
    assert {"U2", "U2-p03", "U2m"} <= set(got)
    without = checks.phase_order(r.sw, r.sw_cfg, None)  # a sweep without p1 = 0.3: U2-p03 is left to another run
    assert [m.claim for m in without] == ["U2", "U2m"]
    u3 = next(m for m in ms if m.claim == "U3")
    assert u3.why if max(checks.fit_K(r.sw, r.sw_cfg)) < 10 * min(checks.fit_K(r.sw, r.sw_cfg)) else not u3.why


def _replica(epochs=tuple(range(0, 401, 10))):
    """A hand-made replica result: settings (imbalanced, balanced) x 6 seeds (the fewest an interval decision
    takes) on ``epochs``. Imbalanced: L_1
    falls 4 times faster than L_2 = L_3; query v_2's attention leaves v_1 while its attention on v_3 first
    rises (peak at epoch 30). Balanced: the three errors fall together. Every map ends near the identity."""
    from icl_lab.train import RunGrid

    grid = RunGrid(setting=["imbalanced", "balanced"], seed=list(range(6)))
    e = torch.tensor(epochs, dtype=torch.float64)
    E = len(epochs)
    loss = torch.empty(E, 12, 3, dtype=torch.float64)
    t = 1 - torch.exp(-e / 30)
    maps = ((1 - t)[:, None, None] / 3 + t[:, None, None] * torch.eye(3, dtype=torch.float64)).repeat(1, 12, 1, 1).reshape(E, 12, 3, 3)
    a1, a3 = 0.6 * torch.exp(-e / 30), 0.2 * torch.exp(-e / 100) + 0.15 * (e / 40) * torch.exp(1 - e / 40)
    for r in grid.index(setting="imbalanced"):
        loss[:, r] = torch.stack([0.5 * torch.exp(-e / 10), 0.5 * torch.exp(-e / 40), 0.5 * torch.exp(-e / 40)], -1)
        maps[:, r, 1] = torch.stack([a1, 1 - a1 - a3, a3], -1)
    for r in grid.index(setting="balanced"):
        loss[:, r] = (0.5 * torch.exp(-e / 20))[:, None]
    runs = SimpleNamespace(epochs=list(epochs), test_loss=loss, test_map=maps, grid=grid)
    cfg = SimpleNamespace(snapshots=(0, 10, 100, 400), lr=0.002, epochs=epochs[-1], seeds=6, record_every=epochs[1] - epochs[0])
    return SimpleNamespace(runs=runs), cfg


def test_replica_decides_figure_2_and_3_claims_on_a_small_result():
    rp, cfg = _replica()
    assert checks.replica_crossings(rp) == {"imbalanced": [30.0, 100.0, 100.0], "balanced": [50.0, 50.0, 50.0]}
    win = checks.replica_window(rp)
    assert win["epoch"] == 30 and win["start"] == pytest.approx(0.2) and win["fall1"] > 0.3
    ms = checks.replica(rp, cfg)
    st = _statuses(ms, "experiments")
    assert st["F2a"].startswith("reproduced") and st["F2b"].startswith("reproduced") and st["F3a"] == "reproduced with caveat"  # the architecture, run one way, is said
    assert st["F3b"] == "reproduced with caveat"  # the attention on v_3 has fallen back by epoch 100: the literal window fails
    assert "(the grid allows [" + ", ".join(["(3.0, 5.0)"] * 6) + "])" in ms[0].measured
    balanced = list(rp.runs.grid.index(setting="balanced"))
    together = SimpleNamespace(runs=SimpleNamespace(**{**vars(rp.runs), "test_loss": rp.runs.test_loss[:, balanced * 2]}))
    assert _statuses(checks.replica(together, cfg), "experiments")["F2a"] == "not reproduced"  # L_1 no longer first


def test_largest_rise_is_cumulative_and_does_not_shrink_with_finer_records():
    slow = np.linspace(0.0, 0.01, 21)[:, None, None]  # one entry rising by 0.01 over 20 records, 5e-4 a record
    series = np.concatenate([slow, np.zeros_like(slow)], axis=2).repeat(2, axis=1)  # 2 seeds, 2 entries
    series[:, 1] = 0.3 - series[:, 1]  # the second seed's entry falls: it never rises
    assert checks._largest_rise(series) == pytest.approx([0.01, 0.0])
    assert checks._largest_rise(series[::10]) == pytest.approx([0.01, 0.0])  # the same on a coarser grid
    dip = np.array([0.5, 0.2, 0.4, 0.1, 0.15])[:, None, None]  # a fall, then a rise of 0.2 above the running minimum
    assert checks._largest_rise(dip) == pytest.approx([0.2])


def test_replica_reads_crossings_on_every_recorded_epoch():
    rp, cfg = _replica(epochs=tuple(range(0, 401)))
    cfg.record_every = 1
    (f2a, *_) = checks.replica(rp, cfg)
    # L_1 = 0.5 exp(-e/10) <= 0.05 first at e = 24 (10 ln 10 = 23.03), L_2 at 93 (40 ln 10 = 92.1)
    assert checks.replica_crossings(rp)["imbalanced"] == [24.0, 93.0, 93.0]
    assert f2a.quantities["first crossing of $\\mathcal{L}_2, \\mathcal{L}_3$ over that of $\\mathcal{L}_1$"].value == pytest.approx(93 / 24)
    assert "every epoch is recorded" in f2a.how


def _theory_model(fast_first=True):
    """A hand-made theory-model result on App. A's setting: exact population GD (the library's, 3000 steps),
    and Adam runs (settings x learning rates x 6 seeds) whose slow runs barely move and whose fast imbalanced
    runs bring L_1 down first (``fast_first``) or last. Six seeds: the fewest an interval decision takes."""
    from icl_lab.papers.convergence import theory as th
    from icl_lab.train import RunGrid

    cfg = SimpleNamespace(K=3, N=60, eta=1.0, gd_steps=3000, epochs=400, seeds=6, adam_lrs=(0.002, 0.02))
    pops = {s: th.population_columns(th.p_for(s, 3, 0.8), 60, 1.0, cfg.gd_steps, record_every=100)
            for s in ("imbalanced", "balanced")}
    grid = RunGrid(setting=["imbalanced", "balanced"], lr=[0.002, 0.02], seed=list(range(6)))
    epochs = list(range(0, 401, 10))
    e = torch.tensor(epochs, dtype=torch.float64)
    floor = torch.as_tensor(pops["imbalanced"].floor, dtype=torch.float64)
    loss = torch.full((len(epochs), 24, 3), 0.3, dtype=torch.float64)
    maps = torch.full((len(epochs), 24, 3, 3), 1 / 3, dtype=torch.float64)
    fast_r, slow_r = (20, 60) if fast_first else (60, 20)
    for r in grid.index(lr=0.02):
        loss[:, r] = floor + torch.stack([0.03 * torch.exp(-e / fast_r), 0.3 * torch.exp(-e / slow_r), 0.3 * torch.exp(-e / slow_r)], -1)
        maps[-1, r] = 0.025 + 0.925 * torch.eye(3, dtype=torch.float64)  # Attn_k = 0.95 at the end
    final_S = torch.zeros(24, 3, 3, dtype=torch.float64)
    final_S[grid.index(lr=0.002)] = 0.5 * torch.eye(3, dtype=torch.float64)
    adam = SimpleNamespace(epochs=epochs, test_loss=loss, test_map=maps, final_S=final_S, grid=grid, labels=grid.runs)
    rp, _ = _replica()
    return SimpleNamespace(population=pops, adam=adam), cfg, rp, SimpleNamespace(K=3, p1=0.8, N=60)


def test_theory_model_decides_the_analysed_models_claims_on_a_small_result():
    tm, cfg, rp, rp_cfg = _theory_model()
    ms = checks.theory_model(tm, cfg, rp, rp_cfg)
    assert [m.claim for m in ms] == ["A'1", "C7", "C9", "R1", "A'2", "A'3"]
    assert ms[2].hypotheses == {"N >> K^3 (read N >= 20 K^3, as in Lemma C.5)": False,  # 60 < 540
                                "GD run long enough: eta t >= 1/(4 p_2 L_2^low)": True}  # 3000 >= 1/(4 0.1 1.35e-3)
    st = _statuses(ms, "analysed")
    assert st["C7"] == "reproduced" and st["C9"] == "inconclusive"  # App. A has one K
    assert st["A'2"].startswith("reproduced") and st["A'3"].startswith("reproduced")
    late, *_ = _theory_model(fast_first=False)
    ms = checks.theory_model(late, cfg, rp, rp_cfg)
    assert ms[-1].quantities["$\\mathcal{L}_1$ first at 1/10 of the start"] is False
    assert _statuses(ms, "analysed")["A'3"] in {"not reproduced", "inconclusive"}  # the 1/100 test fails inconclusive


def test_b5_decides_under_c3_and_names_the_constants_that_differ():
    times = {"T1": 1.0, "T2": 2.0, "T3": 3.0, "tau_eps": 4.0}
    tail = {100: {1.0: 0.5, 2.5: 0.3, 3.0: 0.2, 4.0: 0.1}, 1000: {1.0: 0.3, 2.5: 0.02, 3.0: 0.0, 4.0: 0.0}}
    fn = SimpleNamespace(N=[100, 1000, 10**9], times=[times] * 3, tail=tail, balanced_tail=tail)
    cfg = SimpleNamespace(fresh_prompts=1000, K=3, M=10, p1=0.8, eps=1e-3)
    at_lemma = {"N": 20 * 3**3, "tau_eps": 4.0, "tau_eps_balanced": 4.0, "under": tail[1000], "balanced": tail[1000]}
    g1, b5 = checks.finite_n(fn, cfg, at_lemma=at_lemma)
    assert set(b5.under) == {"C = 3", "C = 2.5", "C = 4"}
    assert b5.under["C = 2.5"]["under-represented: share at the largest $N$"].value == pytest.approx(0.02)
    (c,) = Ledger("convergence", part="beyond").judge(b5, show=False)
    assert c.status == "reproduced with caveat" and "under C = 2.5: not reproduced" in c.caveat
    assert "constant C of O(eps)" in " ".join(c.depends)


def _bumped(rp, epochs, height):
    """``rp`` with a bump of ``height`` centred on epoch 30 added to the imbalanced L_2 and L_3 (before they reach 0.05)."""
    loss = rp.runs.test_loss.clone()
    bump = height * torch.exp(-((torch.tensor(epochs, dtype=torch.float64) - 30) / 8) ** 2)
    for r in rp.runs.grid.index(setting="imbalanced"):
        loss[:, r, 1:] += bump[:, None]
    return SimpleNamespace(runs=SimpleNamespace(**{**vars(rp.runs), "test_loss": loss}))


def test_replica_fluctuation_needs_the_rare_errors_to_climb_back_before_they_converge():
    epochs = tuple(range(0, 401))
    rp, _ = _replica(epochs)
    smooth = checks.replica_fluctuation(rp)  # every error falls monotonically: nothing fluctuates
    assert smooth.quantities["smaller rise of $\\mathcal{L}_2, \\mathcal{L}_3$ before their first crossing, per seed"].value == 0
    assert _statuses([smooth], "experiments")["F2a-fl"] == "not reproduced"
    bumped = checks.replica_fluctuation(_bumped(rp, epochs, 0.3))
    rise = bumped.quantities["smaller rise of $\\mathcal{L}_2, \\mathcal{L}_3$ before their first crossing, per seed"]
    assert 0.15 < rise.lo <= rise.hi < 0.3 and rise.n == 6
    assert _statuses([bumped], "experiments")["F2a-fl"] == "reproduced with caveat"  # the architecture is our choice
    # a rise after the first crossing (epoch 93 for L_2, L_3) is not 'initial': it does not count
    late = _bumped(rp, epochs, 0.0)
    late.runs.test_loss[200:, :, 1:] += 0.2
    assert checks.replica_fluctuation(late).quantities[
        "smaller rise of $\\mathcal{L}_2, \\mathcal{L}_3$ before their first crossing, per seed"].value == 0


def test_replica_second_stage_follows_query_v2_from_the_peak_of_attn3():
    rp, _ = _replica(tuple(range(0, 401)))
    m = checks.replica_second_stage(rp)
    assert set(m.under) == {f"Attn_2 >= {lvl:g}" for lvl in checks.STAGE2_END}
    assert checks._second_stage(rp, 0.9)["wiggle"] == [0.0] * 6  # Attn_1 and Attn_3 fall together throughout
    q = m.under["Attn_2 >= 0.9"]["largest rise of $\\mathrm{Attn}_1$ or $\\mathrm{Attn}_3$ inside the second stage"]
    assert q.value == 0 and q.n == 6  # the test: no rise inside the stage
    assert all(v > 0.05 for v in checks._second_stage(rp, 0.9)["up2"])  # context: set by where the stage ends
    assert _statuses([m], "experiments")["F3d"] == "reproduced with caveat"  # the stage placed by events, not epochs
    # Attn_3 climbing again after its early peak: it no longer falls over the second stage
    e = torch.arange(0, 401, dtype=torch.float64)
    maps = rp.runs.test_map.clone()
    for r in rp.runs.grid.index(setting="imbalanced"):
        a1, a3 = maps[:, r, 1, 0], maps[:, r, 1, 2] + 0.4 * e / 400
        maps[:, r, 1] = torch.stack([a1, 1 - a1 - a3, a3], -1)
    rising = SimpleNamespace(runs=SimpleNamespace(**{**vars(rp.runs), "test_map": maps}))
    assert _statuses([checks.replica_second_stage(rising)], "experiments")["F3d"] == "not reproduced"


def test_phase_one_end_needs_a_p1_whose_phase_one_ends():
    sw = SimpleNamespace(balanced={100: None, 200: None},
                         under={(0.5, K): {"times": {"T1": math.nan}} for K in (100, 200)})
    with pytest.raises(ConfigError, match="phase I must end"):
        checks.phase_one_end(sw, SimpleNamespace(K_values=(100, 200), p1_values=(0.5,)))


def test_phase_one_end_reads_the_ci_sweep(ci_runs, monkeypatch):
    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    m = checks.phase_one_end(ci_runs.sw, ci_runs.sw_cfg)
    q = m.quantities
    assert q["$\\mathrm{Attn}_1$ falls through phase I"] is True
    n = len(q["exponent of $K^{0.98} \\mathrm{Attn}_1^2$ at $T_1$ in $K$, per $p_1$"])
    assert len(q["$K \\mathrm{Attn}_n$ over phase I, lowest and highest, per $p_1$"]) == 2 * n
    assert all(abs(v) < 1e-3 for v in q["exponent of $K^{0.98} \\mathrm{Attn}_1^2$ at $T_1$ in $K$, per $p_1$"])  # a limit
    assert all(0.015 < v < 0.025 for v in q["exponent of $|\\beta_{k1}|/\\alpha_k$ at $T_1$ in $K$, per $p_1$"])  # K^0.02
    assert "p1 = 0.3: phase I does not end" in m.measured  # p1 = 0.3 is left to claim U2-p03
    assert _statuses([m], "phases")["U2-att"] == "reproduced with caveat"  # |beta_k1|/alpha_k grows as K^0.02


def test_far_end_of_phase_one_tends_to_the_limit():
    """At T_1 the reduction's K^0.98 Attn_1^2 tends to (p1/(1 - p1))^2 and |beta_k1|/alpha_k grows as K^0.02."""
    for p1 in (0.5, 0.8):
        r = checks._far(1e100, p1)
        assert r.attn1_sq_at_cross == pytest.approx((p1 / (1 - p1)) ** 2, rel=1e-3)
        assert r.beta_ratio_at_cross / 1e100 ** 0.02 == pytest.approx((p1 / (1 - p1)) ** 2, rel=1e-2)


def _far_stub(b1_of_K):
    """A stand-in for ``checks._far``: B_k1/log K where A_k reaches 0.5 log K given as a function of K."""
    return lambda K, p1: SimpleNamespace(B1_at_A_half=b1_of_K(K), Bo_at_A_half=0.0)


@pytest.mark.parametrize("b1, status", [
    (lambda K: -0.5 - 0.35 / math.log(K), "reproduced with caveat"),  # a fixed offset: the band from K ~ 1e15
    (lambda K: -0.5 - 3.5 / math.log(K), "not reproduced"),  # approached, but not reached by 1e100 (K >= 1e30 held)
    (lambda K: -0.505, "not reproduced"),  # inside the band, but not approaching -0.5 as K grows: the distance must shrink
])
def test_phase_two_end_decides_on_the_far_states(monkeypatch, b1, status):
    from icl_lab.papers.convergence import experiments_flow as cvf
    cfg = cvf.SweepConfig.for_scale("ci")
    sw = cvf.run_sweep(cfg)
    monkeypatch.setattr(checks, "_far", _far_stub(b1))
    m = checks.phase_two_end(sw, cfg)
    assert m.hypotheses["K sufficiently large (App. D)"] is True
    assert _statuses([m], "phases")["U2-end"] == status


def _dom_tails(small, large):
    """A hand-made result of ``dominant_tails``: the shares (C = 1, 2.5, 3, 4) at N = 100 and at N = 20 K^3 (K = 5)."""
    return {N: {"tau_eps": 600.0, "floor": 0.0, "tail": {1.0: 1.0, 2.5: s, 3.0: s / 2, 4.0: s / 10, "absent": 0.0}}
            for N, s in ((100, small), (2500, large))}


def test_dominant_concentration_decides_under_c3_and_records_lemma_c5():
    cfg = SimpleNamespace(K=5, p1=0.5, fresh_prompts=10_000, M=1000, eps=1e-3)
    m = checks.dominant_concentration(_dom_tails(0.2, 0.0), cfg)
    assert m.hypotheses == {"p_1 = Theta(1), p_k = Theta(1/K)": True, "N >= 20 K^3 (Lemma C.5)": True}
    assert m.under["C = 3"]["dominant: share at the largest $N$"].hi < 1e-3  # 0 of 10000: a Wilson interval
    assert _statuses([m], "beyond")["B5-dom"] == "reproduced with caveat"  # the constant C is ours
    assert _statuses([checks.dominant_concentration(_dom_tails(0.2, 0.1), cfg)], "beyond")["B5-dom"] == "not reproduced"
    short = checks.dominant_concentration({N: v for N, v in _dom_tails(0.2, 0.0).items() if N == 100} | {
        1000: _dom_tails(0.2, 0.0)[2500]}, cfg)  # largest N = 1000 < 20 K^3 = 2500
    assert short.hypotheses["N >= 20 K^3 (Lemma C.5)"] is False


def test_dominant_tails_runs_the_dominant_column_up_to_20_k_cubed():
    cfg = SimpleNamespace(K=5, p1=0.5, N_values=(50, 500), M=200, eps=1e-2, fresh_prompts=2000, seed=0)
    dt = checks.dominant_tails(cfg)
    assert list(dt) == [50, 500, 2500]
    assert all(np.isfinite(d["tau_eps"]) and set(d["tail"]) >= {1.0, 2.5, 3.0, 4.0} for d in dt.values())
    assert dt[2500]["tail"][3.0] <= dt[50]["tail"][3.0]


def test_phase_two_end_reads_lemma_43_at_the_end_of_phase_two():
    """U2-end: the reduction's state where A_k reaches 0.5 log K, from K = 1e3 to 1e100 (the sweep shown beside it)."""
    from icl_lab.papers.convergence import experiments_flow as cvf
    cfg = cvf.SweepConfig.for_scale("ci")
    sw = cvf.run_sweep(cfg)
    m = checks.phase_two_end(sw, cfg)
    q = m.quantities
    dist = q["distance of $B_{k1}/\\log K$ from $-0.5$ where $A_k$ reaches $0.5 \\log K$, per $K$"]
    assert len(dist) == len([K for K in checks.END_K if K >= 1e3]) and dist[-1] < 0.01 < dist[0]
    assert 0.3 < q["offset"] < 0.4  # B_k1 = -0.5 log K - 0.35 at practical K
    assert "on the sweep at the end of phase II" in m.measured
    assert _statuses([m], "phases")["U2-end"] == "reproduced with caveat"
