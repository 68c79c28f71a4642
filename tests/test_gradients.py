"""Closed-form gradients vs autograd, in float64 (spec convergence §4.3, window §3, selectors §4.4).

Each check gives every run of a model its own prompt (data of shape (R, 1, ...)), so the gradient
of run r is the per-prompt gradient of prompt r: the loss is summed over runs and runs share no
parameters."""
from __future__ import annotations

import pytest
import torch

from icl_lab import AttentionMLP, BilinearAttention, QOnlyAttention
from icl_lab.data import LinearTask, PromptBatch, PromptSampler, random_orthonormal
from icl_lab.train import hinge_loss, mse_loss

from _helpers import F64, assert_close, gen, gens, pair_sampler, randomize_, sphere_linear_sampler

P = 6  # prompts (= runs)


def _one_prompt_per_run(sampler, n=P, seed0=100):
    return sampler.sample_runs(1, gens(range(seed0, seed0 + n)))


def _closed_form_grad_M(batch, M, activation="softmax"):
    """d/dM of 1/2 (y_hat - y_q)^2 for y_hat = sum_i a_i y_i, score_i = x_i^T M x_q, one query:

    softmax: (y_hat - y_q) sum_i a_i y_i (x_i - xbar) x_q^T,  xbar = sum_j a_j x_j
    linear : (y_hat - y_q) sum_i y_i x_i x_q^T."""
    x, y = batch.x[:, 0], batch.y[:, 0]  # (P, N, d), (P, N)
    xq, yq = batch.x_query[:, 0, 0], batch.y_query[:, 0, 0]  # (P, d), (P,)
    s = torch.einsum("pnd,pde,pe->pn", x, M, xq)
    if activation == "softmax":
        a = torch.softmax(s, -1)
        yhat = (a * y).sum(-1)
        xbar = torch.einsum("pn,pnd->pd", a, x)
        inner = torch.einsum("pn,pn,pnd->pd", a, y, x - xbar[:, None])
    else:
        yhat = (s * y).sum(-1)
        inner = torch.einsum("pn,pnd->pd", y, x)
    return (yhat - yq)[:, None, None] * torch.einsum("pd,pe->pde", inner, xq)


def _autograd(model, batch, loss=mse_loss):
    model.zero_grad()
    per_run = loss(model(batch), batch)
    assert per_run.shape == (model.runs,)
    per_run.sum().backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}


# ============================================================================ (a) Q-only
def _qonly_setup(K=4, d=6, N=9):
    V = random_orthonormal(K, d, gen(0))
    sampler = PromptSampler.from_features(V, LinearTask(d), N)
    model = randomize_(QOnlyAttention(d, runs=P), 1, std=0.7)  # away from Q = 0, where many terms vanish
    return V, sampler, model


def test_qonly_per_prompt_gradient_matches_closed_form():
    V, sampler, model = _qonly_setup()
    batch = _one_prompt_per_run(sampler)
    grad = _autograd(model, batch)["Q"]
    expected = _closed_form_grad_M(batch, model.Q.detach())
    assert expected.abs().max() > 1e-3  # a non-trivial gradient
    assert_close(grad, expected)


def test_qonly_gradient_matches_lemma_c1_double_sum():
    """Lemma C.1: (y_hat - y_q) sum_{i,j} a_i a_j (x_i - x_j) x_q^T y_i."""
    V, sampler, model = _qonly_setup()
    batch = _one_prompt_per_run(sampler, seed0=200)
    grad = _autograd(model, batch)["Q"]
    Q = model.Q.detach()
    for p in range(P):
        x, y, xq, yq = batch.x[p, 0], batch.y[p, 0], batch.x_query[p, 0, 0], batch.y_query[p, 0, 0]
        a = torch.softmax(x @ Q[p] @ xq, 0)
        yhat = (a * y).sum()
        G = torch.zeros_like(Q[p])
        for i in range(len(y)):
            for j in range(len(y)):
                G += a[i] * a[j] * y[i] * torch.outer(x[i] - x[j], xq)
        assert_close(grad[p], (yhat - yq) * G)


def test_qonly_gradient_stays_in_the_feature_span():
    V, sampler, model = _qonly_setup()
    batch = _one_prompt_per_run(sampler, seed0=300)
    grad = _autograd(model, batch)["Q"]
    Pv = V.T @ V  # projector onto span{v_k}
    assert_close(grad - Pv @ grad @ Pv, torch.zeros_like(grad))


def test_qonly_feature_space_gradient_is_the_compact_form_g():
    """Lemma 4.1 per prompt, with the w-marginalised loss 1/2 ||x_q - sum_i a_i x_i||^2
    (= E_w of 1/2 (y_hat - <w, x_q>)^2 for E[w w^T] = I, i.e. the sum of the losses with w = e_1..e_d):
    -v_n^T grad_Q v_k = g_{n,k} = a_n (e_k - a)^T (e_n - a) for the query feature k, 0 in other columns,
    with a_m = c_m e^{S_mk} / sum_j c_j e^{S_jk} from the counts and S = V Q V^T."""
    K, d, N = 4, 6, 9
    V, sampler, model = _qonly_setup(K, d, N)
    batch = _one_prompt_per_run(sampler, seed0=400)
    model.zero_grad()
    for j in range(d):  # labels of the task w = e_j
        bj = PromptBatch(**{**batch.__dict__, "y": batch.x[..., j], "y_query": batch.x_query[..., j]})
        mse_loss(model(bj), bj).sum().backward()
    grad_S = -V @ model.Q.grad @ V.T  # (P, K, K): [n, k] = -v_n^T grad v_k
    S = V @ model.Q.detach() @ V.T
    counts = batch.counts[:, 0].to(F64)  # (P, K)
    for p in range(P):
        k = int(batch.query_ids[p, 0, 0])
        w = counts[p] * torch.exp(S[p, :, k])
        a = w / w.sum()
        e = torch.eye(K, dtype=F64)
        g = torch.stack([a[n] * (e[k] - a) @ (e[n] - a) for n in range(K)])
        expected = torch.zeros(K, K, dtype=F64)
        expected[:, k] = g
        assert_close(grad_S[p], expected)
        assert g[k] >= 0  # alpha_k >= 0 (remark after Lemma 4.1)


# ============================================================================ (b) kernel parametrisations
@pytest.mark.parametrize("activation", ["softmax", "linear"])
def test_direct_gradient_on_sphere_inputs(activation):
    d = 3
    model = BilinearAttention(d, runs=P, activation=activation, init="normal", init_std=0.8)
    batch = _one_prompt_per_run(sphere_linear_sampler(d=d, N=7))
    grad = _autograd(model, batch)["Q"]
    assert_close(grad, _closed_form_grad_M(batch, model.Q.detach(), activation))


@pytest.mark.parametrize("activation", ["softmax", "linear"])
def test_tied_gradient_is_W_times_G_plus_G_transpose(activation):
    """M = W^T W: d/dW <G, W^T W> = W (G + G^T) with G = dL/dM."""
    d = 3
    model = BilinearAttention(d, runs=P, parametrization="tied", activation=activation, init="normal", init_std=0.8)
    batch = _one_prompt_per_run(sphere_linear_sampler(d=d, N=7), seed0=500)
    grad = _autograd(model, batch)["W"]
    W = model.W.detach()
    G = _closed_form_grad_M(batch, W.mT @ W, activation)
    assert G.abs().max() > 1e-3
    assert_close(grad, W @ (G + G.mT))


def test_untied_gradients_by_chain_rule():
    """M = M_K^T M_Q: dL/dM_K = M_Q G^T and dL/dM_Q = M_K G."""
    d = 3
    model = BilinearAttention(d, runs=P, parametrization="untied", init="normal", init_std=0.8)
    batch = _one_prompt_per_run(sphere_linear_sampler(d=d, N=7), seed0=600)
    grads = _autograd(model, batch)
    MK, MQ = model.M_K.detach(), model.M_Q.detach()
    G = _closed_form_grad_M(batch, MK.mT @ MQ)
    assert_close(grads["M_K"], MQ @ G.mT)
    assert_close(grads["M_Q"], MK @ G)


# ============================================================================ (c) AttentionMLP
def _mlp_setup(include_query=False):
    model = AttentionMLP(6, 2, m=8, runs=P, m_a=9, m_b=10, include_query_in_attention=include_query)
    randomize_(model, 7, std=0.6)  # W_Q, W_K, W_V, W_O all generic (a is a buffer: unchanged)
    batch = _one_prompt_per_run(pair_sampler(l=5), seed0=700)
    return model, batch


def _mlp_closed_forms(model, batch, r):
    """Selectors spec §4.4, eqs. (72)/(151), (131), (82), (121), for run r's single prompt."""
    WQ, WK, WV, WO, a = (t[r].detach() for t in (model.W_Q, model.W_K, model.W_V, model.W_O, model.a))
    E = batch.run(r).embedding()[0]  # (l + 1, D)
    ps, pq = E[:-1], E[-1]
    sig = torch.softmax(torch.stack([(WK @ p) @ (WQ @ pq) for p in ps]), 0)
    pbar = (sig[:, None] * ps).sum(0)
    sa = WV @ pbar
    h = WO @ sa
    act = a * (h >= 0).to(F64)  # a_i 1[h_i >= 0]
    g_O = torch.outer(act, sa)  # (72)
    g_V = sum(act[i] * torch.outer(WO[i], pbar) for i in range(len(a)))  # (131)
    g_Q = torch.zeros_like(WQ)
    g_K = torch.zeros_like(WK)
    for i in range(len(a)):
        for s, p in enumerate(ps):
            c = act[i] * sig[s] * (WO[i] @ (WV @ p))
            g_Q += c * torch.outer(WK @ (p - pbar), pq)  # (82)
            g_K += c * torch.outer(WQ @ pq, p - pbar)  # (121)
    F = (a * torch.relu(h)).sum()
    return {"W_O": g_O, "W_V": g_V, "W_Q": g_Q, "W_K": g_K}, F


def test_attention_mlp_gradients_of_F_match_eqs_72_82_121_131():
    model, batch = _mlp_setup()
    out = model(batch)
    model.zero_grad()
    out.pred.sum().backward()
    for r in range(P):
        expected, F = _mlp_closed_forms(model, batch, r)
        assert_close(out.pred[r, 0, 0].detach(), F)
        for name, g in expected.items():
            assert_close(getattr(model, name).grad[r], g, atol=1e-10)
        # the query's label slot is zero, so the label columns of W_Q get no gradient (eqs. 108, 113)
        assert (model.W_Q.grad[r][:, 6:] == 0).all()
    assert (model.W_O.grad != 0).any() and (model.W_O.grad == 0).any()  # both ReLU branches occur


def test_attention_mlp_hinge_gradient_is_minus_y_times_dF_when_active():
    model, batch = _mlp_setup()
    grads = _autograd(model, batch, hinge_loss)
    out = model(batch)
    for r in range(P):
        expected, F = _mlp_closed_forms(model, batch, r)
        y = batch.y_query[r, 0, 0]
        factor = -y * float(y * F < 1)  # d max(0, 1 - y F) / dF
        for name, g in expected.items():
            assert_close(grads[name][r], factor * g)
    assert (batch.y_query * out.pred.detach() < 1).any()
