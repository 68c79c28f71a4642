"""Task sets of the selectors chapter: the cyclic set of Lemma 1 (from :mod:`icl_lab.data`), every
ordered pair, an unbalanced set, their coverage of the patterns, and the in-weights shortcut that an
unbalanced set leaves."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from ... import params as chk
from ...data.tasks import PairTask, cyclic_pair_tasks

TASK_SETS = ("cyclic", "all_pairs")


def all_pair_tasks(M1: int) -> list[PairTask]:
    """Every ordered pair (a, b), a != b: M1 (M1 - 1) tasks; covers every pattern evenly as +1 and
    -1 (a task set that meets Lemma 1's even coverage with room to spare)."""
    M1 = chk.positive_int("M1", M1, minimum=2)
    return [PairTask(a, b) for a in range(M1) for b in range(M1) if a != b]


def unbalanced_tasks(M1: int) -> list[PairTask]:
    """M1 tasks that violate the even-coverage rule of Lemma 1: (0, j) for j = 1..M1-1 plus (1, 0),
    so mu_0 is labelled +1 in M1 - 1 tasks and -1 in only one."""
    M1 = chk.positive_int("M1", M1, minimum=3)
    return [PairTask(0, j) for j in range(1, M1)] + [PairTask(1, 0)]


def task_set(name: str, M1: int) -> list[PairTask]:
    chk.one_of("task_set", name, TASK_SETS)
    return cyclic_pair_tasks(M1) if name == "cyclic" else all_pair_tasks(M1)


def pattern_coverage(tasks: Sequence[PairTask], M1: int) -> torch.Tensor:
    """(M1, 2) how often each pattern is labelled +1 (column 0) and -1 (column 1) over the tasks."""
    cov = torch.zeros(M1, 2, dtype=torch.long)
    for t in tasks:
        cov[t.a, 0] += 1
        cov[t.b, 1] += 1
    return cov


def is_balanced(tasks: Sequence[PairTask], M1: int) -> bool:
    """Lemma 1's rule: every pattern is +1 and -1 equally often, and at least once."""
    cov = pattern_coverage(tasks, M1)
    return bool((cov[:, 0] == cov[:, 1]).all() and (cov >= 1).all())



def shortcut_accuracy(tasks: Sequence[PairTask], M1: int, eval_tasks: Sequence[PairTask] | None = None) -> float:
    """Expected accuracy of the in-weights shortcut 'pattern -> label' fitted to the training
    ``tasks`` (+1 where a pattern is labelled +1 more often than -1 in training, a coin flip where
    it is balanced), on the queries of ``eval_tasks`` (default: the training tasks; on all ordered
    pairs any such rule scores exactly 1/2)."""
    cov = pattern_coverage(tasks, M1).to(torch.float64)
    guess = torch.sign(cov[:, 0] - cov[:, 1])  # 0 when balanced: a coin flip
    acc = []
    for t in (tasks if eval_tasks is None else eval_tasks):
        for pat, y in ((t.a, 1.0), (t.b, -1.0)):
            g = float(guess[pat])
            acc.append(0.5 if g == 0 else float(g == y))
    return float(np.mean(acc))


