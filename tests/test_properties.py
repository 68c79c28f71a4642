"""Property-based tests (hypothesis) over configs, parsing, the results store, and the samplers'
and models' invariants: softmax attention rows are probability vectors, softmax predictions are
convex combinations of the context labels, and seeds reproduce bit for bit on CPU.

Hypothesis runs derandomized (a fixed example sequence), so CI is reproducible."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from icl_lab import (ConfigError, KernelAttention, QOnlyAttention, make_generator, make_generators, store, sweep,
                     train)
from icl_lab import params, records, runner
from icl_lab.data import (LinearTask, PromptSampler, QuadraticTask, sphere, standard_basis)
from icl_lab.papers.common.experiments import ContextLengthConfig
from icl_lab.models.attention import attend

from _helpers import F64, randomize_
from _sweep_toy import TOY, ToyConfig

FAST = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

seeds = st.integers(min_value=0, max_value=2**31 - 1)


# ----------------------------------------------------------------------------- attention invariants
@FAST
@given(seed=seeds, R=st.integers(1, 3), B=st.integers(1, 4), m=st.integers(1, 3), N=st.integers(1, 12),
       logit_scale=st.sampled_from([1e-3, 1.0, 30.0, 300.0]))
def test_softmax_rows_sum_to_one_and_predictions_are_convex_combinations(seed, R, B, m, N, logit_scale):
    g = make_generator(seed)
    scores = logit_scale * torch.randn(R, B, m, N, generator=g, dtype=F64)
    y = torch.randn(R, B, N, generator=g, dtype=F64)
    out, w = attend(scores, y, "softmax")
    assert (w >= 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(R, B, m, dtype=F64), atol=1e-12, rtol=0)
    lo, hi = y.min(-1).values[..., None], y.max(-1).values[..., None]  # per prompt
    tol = 1e-12 * (1 + y.abs().max())
    assert (out >= lo - tol).all() and (out <= hi + tol).all()


@FAST
@given(seed=seeds, N=st.integers(1, 10), logit_scale=st.sampled_from([0.1, 1.0, 50.0]))
def test_query_as_key_weights_sum_below_one_predictions_between_labels_and_zero(seed, N, logit_scale):
    """The Eq. (5) variant: the query attends to itself with value 0, so the weights on the
    demonstrations sum to < 1 and the prediction is a convex combination of the labels and 0."""
    g = make_generator(seed)
    scores = logit_scale * torch.randn(2, 3, 1, N, generator=g, dtype=F64)
    self_score = logit_scale * torch.randn(2, 3, 1, generator=g, dtype=F64)
    y = torch.randn(2, 3, N, generator=g, dtype=F64)
    out, w = attend(scores, y, "softmax", self_score=self_score)
    assert (w >= 0).all() and (w.sum(-1) <= 1 + 1e-12).all()
    lo = torch.minimum(y.min(-1).values, torch.zeros(())).unsqueeze(-1)
    hi = torch.maximum(y.max(-1).values, torch.zeros(())).unsqueeze(-1)
    assert (out >= lo - 1e-12).all() and (out <= hi + 1e-12).all()


@FAST
@given(seed=seeds, d=st.integers(2, 6), N=st.integers(1, 10), runs=st.integers(1, 3),
       model=st.sampled_from(["qonly", "kernel", "kernel_untied"]), std=st.sampled_from([0.1, 1.0, 3.0]))
def test_models_attention_is_a_distribution_over_the_context(seed, d, N, runs, model, std):
    sampler = PromptSampler.from_inputs(lambda s, g: sphere(s, d, g), QuadraticTask(d, L=1.0), N, sigma=0.1)
    batch = sampler.sample(5, make_generator(seed))
    if model == "qonly":
        net = QOnlyAttention(d, runs=runs).to(F64)
    else:
        net = KernelAttention(d, runs=runs, tied=model == "kernel").to(F64)
    randomize_(net, seed + 1, std=std)
    out = net(batch)
    assert out.attn.shape == (runs, 5, 1, N) and (out.attn >= 0).all()
    torch.testing.assert_close(out.attn.sum(-1), torch.ones(runs, 5, 1, dtype=F64), atol=1e-12, rtol=0)
    lo, hi = batch.y.min(-1).values[:, None], batch.y.max(-1).values[:, None]  # (B, 1)
    assert (out.pred >= lo - 1e-12).all() and (out.pred <= hi + 1e-12).all()


# ----------------------------------------------------------------------------- seeds reproduce
@FAST
@given(seed=seeds, K=st.integers(1, 5), N=st.integers(1, 9), B=st.integers(1, 6), R=st.integers(1, 4))
def test_samplers_reproduce_bit_for_bit_and_runs_equal_single_draws(seed, K, N, B, R):
    sampler = PromptSampler.from_features(standard_basis(K, 6), LinearTask(6), N)
    a = sampler.sample(B, make_generator(seed))
    b = sampler.sample(B, make_generator(seed))
    for name in ("x", "y", "x_query", "y_query", "ids", "query_ids"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    runs = sampler.sample_runs(B, make_generators(range(seed, seed + R)))
    for r in range(R):
        single = sampler.sample(B, make_generator(seed + r))
        assert torch.equal(runs.run(r).x, single.x) and torch.equal(runs.run(r).y, single.y)


@settings(max_examples=8, deadline=None, derandomize=True, database=None)
@given(seed=st.integers(0, 10_000), lr=st.sampled_from([0.5, 3.0]), optimizer=st.sampled_from(["gd", "adam"]))
def test_training_reproduces_bit_for_bit(seed, lr, optimizer):
    sampler = PromptSampler.from_features(standard_basis(3, 4), LinearTask(4), 6)

    def once():
        model = QOnlyAttention(4, seeds=[seed, seed + 1])
        hist = train(model, sampler, steps=4, optimizer=optimizer, lr=lr, batch_size=8, progress=False)
        return model.Q.detach().clone(), hist.loss.clone()

    (q1, l1), (q2, l2) = once(), once()
    assert torch.equal(q1, q2) and torch.equal(l1, l2)


def test_experiment_summaries_reproduce_bit_for_bit():
    cfg = ContextLengthConfig.for_scale("ci", d=4, K=2, N_values=(2, 4), steps=3, batch=8, test_prompts=16,
                                        linear_fit_prompts=64, seeds=2)
    a = runner.run_and_record("common.context_length", cfg)
    b = runner.run_and_record("common.context_length", cfg)
    assert store.strip_timings(a["summary"]) == store.strip_timings(b["summary"])
    assert a["key"] == b["key"]


# ----------------------------------------------------------------------------- configs and parsing
valid_context_length = st.fixed_dictionaries({}, optional={
    "d": st.integers(4, 64),
    "K": st.integers(2, 4),  # K = 1 has no other feature: the attention floor divides by K - 1
    "N_values": st.lists(st.integers(1, 128), min_size=1, max_size=6).map(tuple),
    "seeds": st.integers(1, 40),
    "seed": st.integers(0, 10**6),
    "steps": st.integers(1, 10**5),
    "lr": st.floats(1e-6, 1e4, allow_nan=False, allow_infinity=False),
    "batch": st.integers(1, 4096),
    "nw_bandwidths": st.lists(st.floats(1e-4, 10.0), min_size=1, max_size=4).map(tuple),
    "test_seed": st.integers(0, 10**6),
})


def _as_text(value) -> str:
    """How a user would type the value after --set key=."""
    if isinstance(value, tuple):
        return ",".join(_as_text(v) for v in value)
    return repr(value)


@FAST
@given(overrides=valid_context_length, scale=st.sampled_from(["ci", "paper"]))
def test_valid_configs_build_roundtrip_and_parse_from_text(overrides, scale):
    cfg = ContextLengthConfig.for_scale(scale, **overrides)
    # JSON round trip (what the store does) rebuilds the same config and key
    again = records.config_from_json(ContextLengthConfig, records.config_to_json(cfg))
    assert again == cfg and records.config_key("x", again) == records.config_key("x", cfg)
    # typing each value as text on the command line gives the same config
    plan = sweep.plan("common.context_length", scale, sets=[f"{k}={_as_text(v)}" for k, v in overrides.items()],
                      max_memory="none")  # valid values; the memory guard is tested elsewhere
    assert plan.tasks[0].config == cfg


@FAST
@given(value=st.one_of(st.integers(1, 10**7), st.floats(min_value=0, max_value=1e6, exclude_min=True,
                                                        allow_subnormal=False)))
def test_numbers_parse_back_exactly(value):
    """Every value inside the declared range (steps in [1, 1e7], lr in (0, 1e6], not subnormal) parses
    back exactly."""
    if isinstance(value, int):
        assert params.coerce_value(ContextLengthConfig, "steps", str(value)) == value
    if value <= 1e6:
        assert params.coerce_value(ContextLengthConfig, "lr", repr(value)) == value


@FAST
@given(value=st.floats(min_value=5e-324, max_value=2.2e-308, allow_subnormal=True))
def test_subnormal_numbers_are_refused(value):
    """A subnormal lr (between 0 and 2.2e-308) cannot compute: refused with the field's name."""
    try:
        params.coerce_value(ContextLengthConfig, "lr", repr(value))
    except ConfigError as e:
        assert re.match(r"lr must be .*not subnormal", str(e)), str(e)
    else:
        raise AssertionError(f"lr={value!r} was accepted")


@FAST
@given(text=st.text(max_size=12))
def test_arbitrary_text_is_parsed_or_rejected_with_the_field_name(text):
    for field in ("steps", "lr", "N_values", "nw_bandwidths"):
        try:
            params.coerce_value(ContextLengthConfig, field, text)
        except ConfigError as e:
            assert re.match(rf"{field}(\[\d+\])? must be ", str(e)), str(e)  # the field, or its entry


# ----------------------------------------------------------------------------- the store
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                      st.floats(allow_nan=False), st.text(max_size=8))
json_values = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                              st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                           max_leaves=20)


@FAST
@given(summary=st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=5),
       where=st.floats(0, 1, exclude_max=True), byte=st.integers(0, 255))
def test_store_roundtrips_exactly_and_detects_any_damage(summary, where, byte):
    cfg = ToyConfig()
    rec = records.make_record("toy.toy", cfg, summary, started="t", wall=0.0, cpu=0.0, device="cpu")
    with tempfile.TemporaryDirectory() as d:
        stt = store.ResultsStore(d)
        path = stt.write(rec)
        back = stt.read(path, {"toy.toy": TOY})
        assert back["summary"] == summary
        data = bytearray(path.read_bytes())
        i = int(where * len(data))
        assume(data[i] != byte)
        data[i] = byte
        Path(path).write_bytes(bytes(data))
        try:
            damaged = stt.read(path, {"toy.toy": TOY})
        except records.StoreError:
            return
        # the only undetected changes are those that leave the record's content unchanged
        assert damaged == back


@FAST
@given(rows=st.integers(1, 4), sizes=st.lists(st.integers(1, 5), min_size=1, max_size=4), seed=seeds)
def test_merging_seed_chunks_restores_the_whole(rows, sizes, seed):
    total = sum(sizes)
    g = make_generator(seed)
    full = torch.randn(rows, total, generator=g, dtype=F64).tolist()  # [row][seed]
    per_seed = torch.randn(total, generator=g, dtype=F64).tolist()
    parts, start = [], 0
    for n in sizes:
        parts.append({"grid": list(range(rows)), "loss": [r[start:start + n] for r in full],
                      "final": per_seed[start:start + n], "seconds": 1.0})
        start += n
    merged = store.merge_chunks(parts, sizes, per_seed={"loss": 1, "final": 0}, timings=("seconds",))
    assert merged["seconds"] == len(sizes) and merged["loss"] == full and merged["final"] == per_seed and merged["grid"] == list(range(rows))


# ----------------------------------------------------------------------------- sweep plans
@FAST
@given(n_values=st.lists(st.integers(1, 50), min_size=1, max_size=3, unique=True),
       scales=st.lists(st.sampled_from([0.5, 1.0, 2.0, 4.0]), min_size=1, max_size=3, unique=True),
       seeds_count=st.integers(1, 12), per_task=st.integers(1, 12), first=st.integers(0, 1000))
def test_plans_cover_the_grid_and_tile_the_seeds(n_values, scales, seeds_count, per_task, first):
    reg = {"toy.toy": TOY}
    p = sweep.plan("toy.toy", "paper", sets=[f"seed={first}"], grid={"n": n_values, "scale": scales},
                   seeds=seeds_count, seeds_per_task=per_task, registry=reg)
    assert p.points == [{"n": n, "scale": s} for n in n_values for s in scales]
    for point in p.points:
        tasks = [t for t in p.tasks if dict(t.point) == point]
        sizes = [len(t.seeds) for t in tasks]
        assert [s for t in tasks for s in t.seeds] == list(range(first, first + seeds_count))
        assert max(sizes) <= per_task and max(sizes) - min(sizes) <= 1
        assert all(t.config.n == point["n"] and t.config.scale == point["scale"] for t in tasks)
    assert len({t.key for t in p.tasks}) == len(p.tasks)
