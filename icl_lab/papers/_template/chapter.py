# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: kernelspec,jupytext,mystnb
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Template — one claim, checked
#
# The chapter stub of the template paper (copy it to `chapters/<key>/<name>.py`; CONTRIBUTING.md gives
# the whole path). This page trains the Q-only attention of the common setup from $Q = 0$ and checks
# one statement, the template's Theorem 1: training lowers the held-out loss below that of the model it
# starts from, the average of the context labels. A real chapter opens with what it will show, sets the
# paper up in its own notation, works the derivations, runs one experiment per claim, and ends with a
# summary, exercises with solutions and its ledger.
#
# `tools/check_notebooks.py --first-cell` inserts the setup cell (Colab install, scale choice, run
# times) above the first code cell below.

# %%
from icl_lab import notebook, plotting
from icl_lab.memo import full
from icl_lab.papers._template import checks
from icl_lab.papers._template import figures as TF
from icl_lab.papers._template.experiments import TrainingConfig, run_training

SCALE, ledger = notebook.chapter("_template")

# %% [markdown]
# ## The experiment
#
# With $Q = 0$ every demonstration gets the weight $1/N$, and on linear tasks with $K$ orthonormal
# features drawn with probabilities $p_k$ the expected loss of that average is
# $\tfrac12\big(1 - \sum_k p_k^2\big)\big(1 + \tfrac1N\big)$. The configuration below is the paper's
# setting at the `paper` scale; `full` reads its stored result (here its summary) when the code that computes
# it is unchanged, and otherwise computes it.

# %%
cfg = TrainingConfig.for_scale(SCALE)
summary = full(run_training, cfg, _summary=True)

# %% tags=["remove-input"] mystnb={"figure": {"caption": "Training loss of Q-only attention on fresh prompts (mean \u00b1 std over seeds) against the expected loss of the context average it starts from (dashed).", "name": "fig-template-training"}, "image": {"alt": "Log-scale training curves falling from the dashed level of the context average."}}
plotting.finish(TF.draw_training(summary, cfg))

# %% tags=["remove-cell"]
checks.measure_t1(ledger, summary, cfg)
# the measured behaviour, so that a regression fails the tests (the ledger decides the verdict)
assert max(summary["trained_loss"]) < summary["average_loss"]

# %% tags=["remove-input"]
ledger.cards("T1")

# %% [markdown]
# ## Exercises
#
# ````{exercise}
# :label: ex-template-average
#
# Derive the expected loss of the context average, $\tfrac12\big(1 - \sum_k p_k^2\big)\big(1 + \tfrac1N\big)$.
# ````
#
# ````{solution} ex-template-average
# :class: dropdown
#
# The prediction is $\sum_k (c_k/N) w_k$ with multinomial counts $c_k$, and the target is $w_q$. With
# $w \sim \mathcal N(0, I)$ the loss is $\tfrac12 E \sum_k (c_k/N - 1_{k=q})^2$; use
# $E c_k^2 / N^2 = p_k(1-p_k)/N + p_k^2$ and $E c_q / N = \sum_k p_k^2$.
# ````
#
# ## Claims ledger of this chapter

# %% tags=["remove-input"]
ledger.export()
ledger.show()
