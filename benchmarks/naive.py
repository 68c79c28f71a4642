"""The naive way to train many small runs, for side-by-side comparison with icl_lab's batched trainer.

:func:`naive_train` takes exactly the arguments of :func:`icl_lab.train.train` and does what the
public ICL repositories do: for each run, one ``nn.Module`` and one ``torch.optim`` optimizer, trained
one run after another with a Python loop per step. It draws each run's data from the same seeded
stream as the batched trainer (fresh prompts: ``sample(batch, generator_r)``; fixed prompts: the same
per-epoch permutations), so the two give the same numbers up to float rounding — the benchmark checks
that, then compares wall times.
"""
from __future__ import annotations

import time

import torch

from icl_lab.config import default_device, ensure_threads, make_generator
from icl_lab.data import PromptBatch, StackedSampler
from icl_lab.train import LOSSES


def _single_sampler(data, r: int):
    return data.samplers[r] if isinstance(data, StackedSampler) else data


def naive_train(model, data, *, steps: int, optimizer: str = "adam", lr=1e-3, loss="mse", batch_size=None,
                seeds=None, lr_decay: float = 1.0, betas=(0.9, 0.999), eps: float = 1e-8, momentum: float = 0.0,
                weight_decay: float = 0.0, device=None, dtype=torch.float32, runs=None) -> dict:
    """Train runs ``runs`` (default all) of ``model`` one after another. Returns the per-run final-step
    training loss and the wall time; ``model`` itself is left untouched."""
    ensure_threads()
    dev = default_device(device)
    loss_fn = LOSSES[loss] if isinstance(loss, str) else loss
    R = model.runs
    runs = list(range(R)) if runs is None else list(runs)
    seeds = list(model.seeds if seeds is None else seeds)
    lrs = torch.as_tensor(lr, dtype=torch.float64).expand(R).tolist()
    fixed = isinstance(data, PromptBatch)
    finals = []
    t0 = time.perf_counter()
    for r in runs:
        net = model.select_runs([r]).to(device=dev, dtype=dtype)  # one nn.Module per run
        params = [p for p in net.parameters() if p.requires_grad]
        if optimizer == "adam":
            opt = torch.optim.Adam(params, lr=lrs[r], betas=betas, eps=eps, weight_decay=weight_decay)
        else:
            opt = torch.optim.SGD(params, lr=lrs[r], momentum=momentum, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=lr_decay) if lr_decay != 1.0 else None
        g = make_generator(int(seeds[r]))
        if fixed:
            mine = (data.run(r) if data.has_runs else data).to(dev, dtype)
            n = mine.batch_size
        else:
            sampler = _single_sampler(data, r)
        perm, pos = None, 0
        for _ in range(steps):
            if not fixed:
                batch = sampler.sample(batch_size, g).to(dev, dtype)
            elif batch_size is None or batch_size == n:
                batch = mine
            else:
                if perm is None or pos + batch_size > n:
                    perm, pos = torch.randperm(n, generator=g).to(dev), 0
                idx = perm[pos : pos + batch_size]
                pos += batch_size
                batch = mine._map(lambda t, idx=idx: t[idx])
            opt.zero_grad()
            value = loss_fn(net(batch), batch).sum()
            value.backward()
            opt.step()
            if sched is not None:
                sched.step()
        finals.append(value.item())
    return {"final_loss": finals, "seconds": time.perf_counter() - t0, "runs": runs}
