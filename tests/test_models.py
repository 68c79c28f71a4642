"""Model shapes, masking, and agreement with the attention formulas written out by hand."""
from __future__ import annotations

import pytest
import torch

from icl_lab import AttentionMLP, BilinearAttention, ConfigError, KernelAttention, OneBlockTransformer, QOnlyAttention
from icl_lab.data import PromptBatch

from _helpers import F64, assert_close, gen, linear_feature_sampler, pair_sampler, randomize_, sphere_linear_sampler

R, B, N, M_Q, D = 3, 5, 7, 2, 4  # runs, prompts, demonstrations, queries per prompt, input dimension


def _batch(seed=0, num_queries=M_Q):
    return sphere_linear_sampler(d=D, N=N, num_queries=num_queries).sample(B, gen(seed))


def _explicit_scores(batch, M):
    """x_i^T M_r x_q for every run r, prompt b, query j, demonstration i."""
    x, xq = batch.x, batch.x_query
    if not batch.has_runs:
        x, xq = x.expand(M.shape[0], *x.shape), xq.expand(M.shape[0], *xq.shape)
    return torch.einsum("rbid,rde,rbje->rbji", x, M, xq)


BILINEAR = [(p, a) for p in ("direct", "tied", "untied") for a in ("softmax", "linear")]


@pytest.mark.parametrize("parametrization,activation", BILINEAR)
def test_bilinear_attention_shapes_and_formula(parametrization, activation):
    model = BilinearAttention(D, seeds=[0, 1, 2], parametrization=parametrization, activation=activation,
                              init="normal", init_std=0.5)
    batch = _batch()
    out = model(batch)
    assert out.pred.shape == (R, B, M_Q)
    assert out.attn.shape == (R, B, M_Q, N)  # the query is not a key: N columns, not N + 1
    params = dict(model.named_parameters())
    expected_M = {"direct": lambda: params["Q"], "tied": lambda: params["W"].mT @ params["W"],
                  "untied": lambda: params["M_K"].mT @ params["M_Q"]}[parametrization]()
    assert_close(model.M, expected_M, atol=1e-12)
    s = _explicit_scores(batch, expected_M)
    w = torch.softmax(s, -1) if activation == "softmax" else s
    assert_close(out.attn, w, atol=1e-12)
    assert_close(out.pred, (w * batch.y[None, :, None, :]).sum(-1), atol=1e-12)
    if activation == "softmax":
        assert_close(out.attn.sum(-1), torch.ones(R, B, M_Q, dtype=F64), atol=1e-12)
        assert (out.attn > 0).all()


def test_query_label_and_query_token_do_not_enter_the_keys():
    model = QOnlyAttention(D, seeds=[0, 1, 2], init="normal", init_std=0.5)
    batch = _batch(1)
    out = model(batch)
    # the query's own label is not read (it is the target)...
    garbled = PromptBatch(**{**batch.__dict__, "y_query": batch.y_query + 100.0})
    assert torch.equal(model(garbled).pred, out.pred)
    # ... and a demonstration's attention does not depend on the other queries of the prompt
    single = PromptBatch(**{**batch.__dict__, "x_query": batch.x_query[:, :1], "y_query": batch.y_query[:, :1]})
    assert_close(model(single).attn[:, :, 0], out.attn[:, :, 0], atol=1e-14)
    # moving the query onto a demonstration does not add a column: still N keys, rows sum to 1
    moved = PromptBatch(**{**batch.__dict__, "x_query": batch.x[:, :M_Q].clone()})
    o2 = model(moved)
    assert o2.attn.shape == (R, B, M_Q, N)
    assert_close(o2.attn.sum(-1), torch.ones(R, B, M_Q, dtype=F64), atol=1e-12)


def test_query_as_key_normalises_over_N_plus_one_scores():
    model = QOnlyAttention(D, seeds=[0, 1, 2], init="normal", init_std=0.5, query_as_key=True)
    batch = _batch(2)
    out = model(batch)
    assert out.attn.shape == (R, B, M_Q, N)
    s = _explicit_scores(batch, model.Q)
    xq = batch.x_query.expand(R, *batch.x_query.shape)
    self_s = torch.einsum("rbjd,rde,rbje->rbj", xq, model.Q, xq)
    full = torch.softmax(torch.cat([s, self_s.unsqueeze(-1)], -1), -1)
    assert_close(out.attn, full[..., :N], atol=1e-12)
    assert (out.attn.sum(-1) < 1).all()
    assert_close(out.attn.sum(-1), 1 - full[..., N], atol=1e-12)
    # the query's value is 0: the prediction only sums the demonstrations
    assert_close(out.pred, (out.attn * batch.y[None, :, None, :]).sum(-1), atol=1e-12)


def test_query_as_key_rejected_for_linear_attention():
    with pytest.raises(ConfigError, match="query_as_key"):
        BilinearAttention(D, activation="linear", init="normal", query_as_key=True)


def test_qonly_and_kernel_attention_initialisation():
    q = QOnlyAttention(D, runs=2)
    assert torch.equal(q.Q, torch.zeros(2, D, D, dtype=F64))
    out = q(_batch(3))
    assert_close(out.attn, torch.full((2, B, M_Q, N), 1 / N, dtype=F64), atol=1e-15)  # uniform at Q = 0
    k = KernelAttention(D, runs=2)
    assert_close(k.M, 1e-6 * torch.eye(D, dtype=F64).expand(2, D, D), atol=1e-18)
    with pytest.raises(ConfigError, match="init"):
        KernelAttention(D, init="zero")


def _models():
    return [
        pytest.param(lambda: BilinearAttention(D, seeds=[0, 1, 2], parametrization="untied", init="normal",
                                               init_std=0.5), _batch, id="bilinear"),
        pytest.param(lambda: AttentionMLP(6, 2, m=8, seeds=[0, 1, 2]), lambda s: pair_sampler(l=N).sample(B, gen(s)),
                     id="attention_mlp"),
        pytest.param(lambda: AttentionMLP(D, 1, m=8, seeds=[0, 1, 2], include_query_in_attention=True), _batch,
                     id="attention_mlp_regression_query_key"),
        pytest.param(lambda: OneBlockTransformer(D + 1, seeds=[0, 1, 2], width=8, ffn=16), _batch,
                     id="one_block"),
    ]


@pytest.mark.parametrize("make_model,make_batch", _models())
def test_shared_batch_equals_the_same_batch_stacked_per_run(make_model, make_batch):
    model = make_model()
    batch = make_batch(4)
    out = model(batch)
    stacked = model(PromptBatch.stack([batch] * R))
    assert out.pred.shape == stacked.pred.shape == (R, B, batch.num_queries)
    assert out.attn.shape == (R, B, batch.num_queries, N)
    assert_close(stacked.pred, out.pred, atol=1e-12)
    assert_close(stacked.attn, out.attn, atol=1e-12)


@pytest.mark.parametrize("make_model,make_batch", _models())
def test_per_run_batches_reach_only_their_run(make_model, make_batch):
    model = make_model()
    batches = [make_batch(10 + r) for r in range(R)]
    out = model(PromptBatch.stack(batches))
    for r in range(R):
        alone = model(batches[r])
        assert_close(out.pred[r], alone.pred[r], atol=1e-12)
        assert_close(out.attn[r], alone.attn[r], atol=1e-12)


@pytest.mark.parametrize("make_model,make_batch", _models())
def test_run_r_equals_a_single_run_model_with_seed_r(make_model, make_batch):
    model = make_model()
    batch = make_batch(5)
    out = model(batch)
    for r in range(R):
        single = model.select_runs([r])
        assert single.runs == 1 and single.seeds == [r]
        assert_close(single(batch).pred[0], out.pred[r], atol=1e-12)
    # and runs differ from one another (different seeds draw different initialisations)
    assert not torch.allclose(out.pred[0], out.pred[1])


def test_initialisation_depends_only_on_each_runs_seed():
    for make in (lambda s: OneBlockTransformer(D + 1, seeds=s, width=8, ffn=16),
                 lambda s: AttentionMLP(6, 2, m=8, seeds=s),
                 lambda s: BilinearAttention(D, seeds=s, init="normal")):
        big = make([5, 6, 7])
        for r, s in enumerate([5, 6, 7]):
            small = make([s])
            for (name, p), (_, q) in zip(big.state_dict().items(), small.state_dict().items()):
                assert torch.equal(p[r], q[0]), name


@pytest.mark.parametrize("include_query", [False, True])
def test_attention_mlp_shapes_and_attention_rows(include_query):
    model = AttentionMLP(6, 2, m=8, seeds=[0, 1], m_a=9, m_b=10, include_query_in_attention=include_query)
    randomize_(model, 1)
    batch = pair_sampler(l=N).sample(B, gen(6))
    out = model(batch)
    assert out.pred.shape == (2, B, 1) and out.attn.shape == (2, B, 1, N)
    assert out.extras["sa"].shape == (2, B, 1, 10) and out.extras["h"].shape == (2, B, 1, 8)
    rows = out.attn.sum(-1)
    if include_query:
        assert (rows < 1).all() and (rows > 0).all()
    else:
        assert_close(rows, torch.ones(2, B, 1, dtype=F64), atol=1e-12)
    # F = a^T ReLU(h)
    assert_close(out.pred, (torch.relu(out.extras["h"]) * model.a[:, None, None, :]).sum(-1), atol=1e-12)


def test_attention_mlp_initialisation_matches_the_paper():
    d_x, d_y, m, delta = 6, 2, 50, 0.05
    model = AttentionMLP(d_x, d_y, m=m, m_a=9, m_b=10, seeds=[0], delta=delta, xi=0.01)
    expect_qk = torch.zeros(9, d_x + d_y, dtype=F64)
    expect_qk[:d_x, :d_x] = delta * torch.eye(d_x, dtype=F64)
    expect_v = torch.zeros(10, d_x + d_y, dtype=F64)
    expect_v[: d_x + d_y] = delta * torch.eye(d_x + d_y, dtype=F64)
    assert torch.equal(model.W_Q[0], expect_qk) and torch.equal(model.W_K[0], expect_qk)
    assert torch.equal(model.W_V[0], expect_v)
    assert set((model.a[0] * m).tolist()) <= {-1.0, 1.0}
    assert "a" not in dict(model.named_parameters())  # a is fixed, not trained
    assert model.W_O.shape == (1, m, 10)


def test_one_block_transformer_shapes():
    model = OneBlockTransformer(D + 1, seeds=[0, 1], width=8, ffn=16)
    batch = _batch(7)
    out = model(batch)
    assert out.pred.shape == (2, B, M_Q) and out.attn.shape == (2, B, M_Q, N)
    assert_close(out.attn.sum(-1), torch.ones(2, B, M_Q, dtype=F64), atol=1e-12)
    # the query's label slot is zero, so the query target never leaks into the prediction
    garbled = PromptBatch(**{**batch.__dict__, "y_query": batch.y_query + 100.0})
    assert torch.equal(model(garbled).pred, out.pred)
    with pytest.raises(ConfigError, match="d_in"):
        OneBlockTransformer(D + 2, width=8, ffn=16)(batch)


def test_models_reject_mismatched_dimension():
    batch = linear_feature_sampler(K=3, d=5).sample(2, gen(0))
    with pytest.raises(ConfigError, match="d"):
        QOnlyAttention(4)(batch)


@pytest.mark.parametrize("include_query", [False, True])
def test_attention_mlp_forward_matches_eq_2_written_out(include_query):
    """F = a^T ReLU(W_O sa), sa = sum_s W_V p_s softmax_s((W_K p_s)^T W_Q p_q); with
    include_query_in_attention the query token p_q is one more key, with its own value W_V p_q."""
    model = randomize_(AttentionMLP(6, 2, m=8, seeds=[0, 1], m_a=9, m_b=10,
                                    include_query_in_attention=include_query), 2)
    batch = pair_sampler(l=5).sample(3, gen(8))
    out = model(batch)
    E = batch.embedding()  # (B, l + 1, D)
    for r in range(2):
        WQ, WK, WV, WO, a = (t[r].detach() for t in (model.W_Q, model.W_K, model.W_V, model.W_O, model.a))
        for b in range(3):
            keys = E[b] if include_query else E[b, :-1]
            pq = E[b, -1]
            sig = torch.softmax(torch.stack([(WK @ p) @ (WQ @ pq) for p in keys]), 0)
            sa = sum(sig[s] * (WV @ keys[s]) for s in range(len(keys)))
            assert_close(out.attn[r, b, 0], sig[:5].detach(), atol=1e-12)
            assert_close(out.extras["sa"][r, b, 0], sa, atol=1e-12)
            assert_close(out.pred[r, b, 0], (a * torch.relu(WO @ sa)).sum(), atol=1e-12)


def test_one_block_transformer_matches_a_reference_forward():
    """Embed -> x + Attn(LN1 x) at the query (scaled dot product over the N demonstrations) ->
    + FFN(LN2) -> LN_f -> linear read-out, written with torch.nn.functional for each run."""
    import math

    import torch.nn.functional as Fn

    width = 8
    model = randomize_(OneBlockTransformer(D + 1, seeds=[0, 1], width=width, ffn=16), 3)
    batch = _batch(9)
    out = model(batch)
    E = batch.embedding()  # (B, N + m, D + 1)
    for r in range(2):
        p = {n: t[r].detach() for n, t in model.named_parameters()}

        def lin(h, name):
            return h @ p[f"W_{name}"] + p[f"b_{name}"]

        def ln(h, name):
            return Fn.layer_norm(h, (width,), p[f"{name}_weight"], p[f"{name}_bias"], eps=1e-5)

        h = lin(E, "embed")
        a = ln(h, "ln1")
        q, k, v = lin(a[:, N:], "q"), lin(a[:, :N], "k"), lin(a[:, :N], "v")
        w = torch.softmax(q @ k.mT / math.sqrt(width), -1)
        h1 = h[:, N:] + lin(w @ v, "o")
        h2 = h1 + lin(torch.relu(lin(ln(h1, "ln2"), "1")), "2")
        pred = lin(ln(h2, "lnf"), "out")[..., 0]
        assert_close(out.attn[r], w, atol=1e-12)
        assert_close(out.pred[r], pred, atol=1e-12)
