"""The batched trainer: R runs at once equal R separate runs; seeds, learning-rate schedules, records."""
from __future__ import annotations

import pytest
import torch

from icl_lab import BilinearAttention, OneBlockTransformer, QOnlyAttention, train
from icl_lab.data import LinearTask, PromptSampler, gaussian
from icl_lab.train import mse_loss, per_run_loss
from icl_lab.params import ConfigError

from _helpers import F64, assert_close, gen, gens, linear_feature_sampler, sphere_linear_sampler

SEEDS = [0, 1, 2]
LRS = [0.1, 0.2, 0.4]
COMMON = dict(dtype=F64, device="cpu", progress=False)


def _fixed(runs: bool = False):
    s = linear_feature_sampler(K=3, d=4, N=8, p=[0.5, 0.3, 0.2])
    return s.sample_runs(24, gens([7, 8, 9])) if runs else s.sample(24, gen(7))


# (model factory, data factory, train kwargs, learning rates)
CASES = [
    pytest.param(lambda s: QOnlyAttention(4, seeds=s), lambda: linear_feature_sampler(K=3, d=4, N=8),
                 dict(optimizer="sgd", batch_size=16), LRS, id="qonly-fresh-sgd"),
    pytest.param(lambda s: QOnlyAttention(4, seeds=s), lambda: linear_feature_sampler(K=3, d=4, N=8),
                 dict(optimizer="adam", batch_size=16), [0.01, 0.02, 0.04], id="qonly-fresh-adam"),
    pytest.param(lambda s: QOnlyAttention(4, seeds=s), _fixed,
                 dict(optimizer="sgd", batch_size=5), LRS, id="qonly-fixed-minibatch-sgd"),
    pytest.param(lambda s: QOnlyAttention(4, seeds=s), _fixed,
                 dict(optimizer="sgd", batch_size=5, momentum=0.9, lr_decay=0.95), LRS, id="qonly-fixed-sgd-momentum"),
    pytest.param(lambda s: QOnlyAttention(4, seeds=s), _fixed,
                 dict(optimizer="gd"), LRS, id="qonly-fixed-gd"),
    pytest.param(lambda s: OneBlockTransformer(5, seeds=s, width=8, ffn=16), _fixed,
                 dict(optimizer="adam"), [1e-3, 2e-3, 4e-3], id="one-block-fixed-adam"),
    pytest.param(lambda s: OneBlockTransformer(5, seeds=s, width=8, ffn=16),
                 lambda: linear_feature_sampler(K=3, d=4, N=8),
                 dict(optimizer="adam", batch_size=8), [1e-3, 2e-3, 4e-3], id="one-block-fresh-adam"),
]


@pytest.mark.parametrize("make_model,make_data,kw,lrs", CASES)
def test_batched_runs_equal_separate_runs(make_model, make_data, kw, lrs):
    steps = 12
    data = make_data()
    model = make_model(SEEDS)
    hist = train(model, data, steps=steps, lr=lrs, seeds=SEEDS, **kw, **COMMON)
    assert hist.loss.shape == (steps, len(SEEDS))
    finals = []
    for r, (s, lr) in enumerate(zip(SEEDS, lrs)):
        alone = make_model([s])
        h = train(alone, data, steps=steps, lr=[lr], seeds=[s], **kw, **COMMON)
        assert_close(hist.loss[:, r], h.loss[:, 0])
        for (name, p), (_, q) in zip(model.named_parameters(), alone.named_parameters()):
            assert_close(p[r], q[0], msg=name)
        finals.append(h.loss[-1, 0])
    assert len(set(float(f) for f in finals)) == len(SEEDS)  # the runs really are different


def test_batched_runs_equal_separate_runs_with_per_run_data():
    data = _fixed(runs=True)
    model = QOnlyAttention(4, seeds=SEEDS)
    hist = train(model, data, steps=10, optimizer="sgd", batch_size=6, lr=LRS, seeds=SEEDS, **COMMON)
    for r, (s, lr) in enumerate(zip(SEEDS, LRS)):
        alone = QOnlyAttention(4, seeds=[s])
        h = train(alone, data.run(r), steps=10, optimizer="sgd", batch_size=6, lr=lr, seeds=[s], **COMMON)
        assert_close(hist.loss[:, r], h.loss[:, 0])
        assert_close(model.Q[r], alone.Q[0])


def _one_block_run(model_seeds, data_seeds):
    model = OneBlockTransformer(5, seeds=model_seeds, width=8, ffn=16)
    h = train(model, linear_feature_sampler(K=3, d=4, N=8), steps=5, optimizer="adam", lr=1e-2, batch_size=8,
              seeds=data_seeds, **COMMON)
    return model, h


def test_same_seed_is_bitwise_reproducible_and_other_seeds_differ():
    m1, h1 = _one_block_run([0, 1], [0, 1])
    m2, h2 = _one_block_run([0, 1], [0, 1])
    assert torch.equal(h1.loss, h2.loss)
    for p, q in zip(m1.parameters(), m2.parameters()):
        assert torch.equal(p, q)
    _, h3 = _one_block_run([0, 1], [5, 6])  # same initialisation, other data
    assert not torch.equal(h1.loss[1:], h3.loss[1:])
    m4, _ = _one_block_run([5, 6], [0, 1])  # other initialisation, same data
    assert not torch.equal(m1.W_embed, m4.W_embed)


def test_float32_default_and_same_seed_reproducible():
    def run():
        model = QOnlyAttention(4, runs=2)
        return train(model, linear_feature_sampler(), steps=5, optimizer="sgd", lr=0.5, batch_size=8,
                     device="cpu", progress=False), model
    (h1, m1), (h2, m2) = run(), run()
    assert m1.Q.dtype == torch.float32
    assert torch.equal(h1.loss, h2.loss) and torch.equal(m1.Q, m2.Q)


def test_gd_decreases_the_loss_monotonically():
    """Full-batch GD with a small step on a smooth loss: each step lowers the loss (descent lemma)."""
    data = linear_feature_sampler(K=4, d=4, N=10).sample(256, gen(11))
    model = QOnlyAttention(4, runs=1)
    before = per_run_loss(model, data)
    hist = train(model, data, steps=40, optimizer="gd", lr=0.2, **COMMON)
    after = per_run_loss(model, data)
    assert_close(hist.loss[0], before)  # the history holds the loss before each update
    diffs = hist.loss[1:, 0] - hist.loss[:-1, 0]
    assert (diffs < 0).all(), diffs
    assert after[0] < hist.loss[-1, 0] < before[0]
    # the learned attention prefers the query's own feature: A_k = v_k^T Q v_k > B_{k,n}
    S = model.Q[0].detach()
    assert (S.diagonal() > S.sum(0) / 4).all()


def test_lr_decay_one_parameter_gd_matches_closed_form():
    """Linear attention with d = 1: y_hat = Q s, s = sum_i y_i x_i x_q, so the loss is
    1/2 mean (Q s - y_q)^2 = 1/2 a Q^2 - b Q + c.  GD with lr_t = lr * decay^t from Q_0 = 0 gives
    Q_T = Q* (1 - prod_{t<T} (1 - lr_t a)),  Q* = b / a."""
    data = PromptSampler.from_inputs(lambda s, g: gaussian(s, 1, g), LinearTask(1), 5).sample(20, gen(12))
    s = (data.y * data.x[..., 0]).sum(-1) * data.x_query[:, 0, 0]
    yq = data.y_query[:, 0]
    a, b = (s * s).mean(), (s * yq).mean()
    lrs, decay, T = torch.tensor([0.5, 1.5], dtype=F64) / a, 0.8, 6
    model = BilinearAttention(1, runs=2, activation="linear", init="zero")
    hist = train(model, data, steps=T, optimizer="gd", lr=lrs.tolist(), lr_decay=decay,
                 record=lambda m, t: {"Q": m.Q[:, 0, 0].clone()}, record_every=1, **COMMON)
    Qstar = b / a
    for t in range(T + 1):
        factor = torch.ones(2, dtype=F64)
        for u in range(t):
            factor = factor * (1 - lrs * decay**u * a)
        expected = Qstar * (1 - factor)
        assert_close(hist["Q"][t], expected, atol=1e-12)
        if t < T:
            assert_close(hist.loss[t], 0.5 * ((expected[:, None] * s - yq) ** 2).mean(-1), atol=1e-12)
    # the first step uses the undecayed rate: Q_1 = lr * b
    assert_close(hist["Q"][1], lrs * b, atol=1e-12)


def test_records_have_shape_n_records_R_and_include_first_and_last_step():
    sampler = linear_feature_sampler(K=3, d=4, N=8)
    model = QOnlyAttention(4, seeds=SEEDS)
    def record(m, t):
        return {"Q": m.Q.detach().clone(), "step": torch.full((m.runs,), t)}

    hist = train(model, sampler, steps=10, optimizer="sgd", lr=LRS, batch_size=8, record=record,
                 record_every=3, **COMMON)
    assert hist.record_steps == [0, 3, 6, 9, 10]
    assert hist["Q"].shape == (5, 3, 4, 4)
    assert hist["step"].tolist() == [[t] * 3 for t in [0, 3, 6, 9, 10]]
    assert torch.equal(hist["Q"][0], torch.zeros(3, 4, 4, dtype=F64))
    assert torch.equal(hist["Q"][-1], model.Q.detach())
    # the record at step 3 is the state after 3 updates
    short = QOnlyAttention(4, seeds=SEEDS)
    train(short, sampler, steps=3, optimizer="sgd", lr=LRS, batch_size=8, **COMMON)
    assert_close(hist["Q"][1], short.Q.detach())


def test_default_and_explicit_record_schedules():
    model = QOnlyAttention(4, runs=2)
    def rec(m, t):
        return {"Q": m.Q.detach().clone()}

    h = train(model, linear_feature_sampler(), steps=7, optimizer="adam", lr=0.01, batch_size=4, record=rec,
              **COMMON)
    assert h.record_steps == list(range(8)) and h["Q"].shape == (8, 2, 4, 4)
    h = train(QOnlyAttention(4, runs=2), linear_feature_sampler(), steps=120, optimizer="adam", lr=0.01,
              batch_size=4, record=rec, **COMMON)
    assert h.record_steps[0] == 0 and h.record_steps[-1] == 120
    assert h["Q"].shape == (len(h.record_steps), 2, 4, 4)
    h = train(QOnlyAttention(4, runs=2), linear_feature_sampler(), steps=5, optimizer="adam", lr=0.01,
              batch_size=4, record=rec, record_at=[5, 0, 2], **COMMON)
    assert h.record_steps == [0, 2, 5] and h["Q"].shape == (3, 2, 4, 4)


def test_hinge_loss_and_custom_loss():
    model = QOnlyAttention(4, runs=2)
    data = sphere_linear_sampler(d=4).sample(8, gen(0))
    h = train(model, data, steps=2, optimizer="gd", lr=0.1, loss="hinge", **COMMON)
    assert h.loss.shape == (2, 2)
    custom = lambda out, batch: (out.pred**2).mean(dim=(-2, -1))  # noqa: E731
    h = train(QOnlyAttention(4, runs=2), data, steps=2, optimizer="gd", lr=0.1, loss=custom, **COMMON)
    assert h.loss.shape == (2, 2)


@pytest.mark.parametrize("optimizer,kw", [
    ("adam", dict(betas=(0.9, 0.99), eps=1e-8)),
    ("adam", dict(weight_decay=0.1)),
    ("sgd", dict(momentum=0.9)),
    ("sgd", dict(weight_decay=0.05, lr_decay=0.9)),
])
def test_update_rules_match_torch_optim(optimizer, kw):
    """A single run against torch.optim on the same full batch (torch.optim is the reference)."""
    data = linear_feature_sampler(K=3, d=4, N=8).sample(32, gen(13))
    model = BilinearAttention(4, seeds=[0], init="normal", init_std=0.3)
    ref = BilinearAttention(4, seeds=[0], init="normal", init_std=0.3)
    lr, steps = 0.05, 8
    hist = train(model, data, steps=steps, optimizer=optimizer, lr=lr, **kw, **COMMON)
    decay = kw.get("lr_decay", 1.0)
    if optimizer == "adam":
        opt = torch.optim.Adam(ref.parameters(), lr=lr, betas=kw.get("betas", (0.9, 0.999)), eps=kw.get("eps", 1e-8),
                               weight_decay=kw.get("weight_decay", 0.0))
    else:
        opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=kw.get("momentum", 0.0),
                              weight_decay=kw.get("weight_decay", 0.0))
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=decay)
    for t in range(steps):
        opt.zero_grad()
        loss = mse_loss(ref(data), data)
        assert_close(hist.loss[t], loss.detach())
        loss.sum().backward()
        opt.step()
        sched.step()
    assert_close(model.Q, ref.Q.detach())


def test_record_must_be_one_callable():
    model = QOnlyAttention(4, runs=2)
    with pytest.raises(ConfigError, match="record must be callable"):
        train(model, linear_feature_sampler(), steps=2, optimizer="sgd", lr=0.01, batch_size=4,
              record={"Q": lambda m, t: m.Q}, **COMMON)
