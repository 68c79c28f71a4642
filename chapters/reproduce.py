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
#   mystnb:
#     execution_mode: force
# ---

# %% [markdown]
# (reproduce)=
# # Reproducing every figure
#
# Every figure and every ledger entry in this book is computed by the notebooks when the book is
# built; nothing is pasted in. This page says how to recompute them — all at once, one chapter, or
# one experiment — at each of the three scales, where the book departs from the papers' settings,
# and how long it all takes.
#
# ## Three scales
#
# | scale | what it runs | used by |
# |---|---|---|
# | `paper` | exactly the papers' parameters (where a paper gives none, the book's documented reference setting); what takes long is read from the results shipped with the book | `make book`, reference results |
# | `book` | reduced wherever the papers' parameters do not fit a laptop's minutes; every reduction is listed below | notebooks by default, `make book-reduced` |
# | `ci` | smaller configurations that still show each effect the claims check | `make test`, CI |
#
# A notebook's first cell chooses the scale; from a terminal, `ICL_LAB_SCALE=paper` does the same.
#
# ```bash
# make book          # the whole book at paper scale, reading the shipped results -> _build/paper/_build/html
# make book-reduced  # the whole book at book scale, every experiment computed -> _build/book/_build/html
# .venv/bin/icl-lab list                                   # experiments and claims
# .venv/bin/icl-lab show window.fig3                       # a configuration's parameters at every scale
# .venv/bin/icl-lab run window.fig3 --scale paper          # one experiment, into the results store
# ```
#
# The README's section *Sweeps on many cores or a cluster* explains sweeps over parameters and seeds,
# on one machine or on a Dask cluster.

# %% tags=["remove-cell"]
# Setup cell, generated from _config.yml by tools/check_notebooks.py --first-cell.
# In Colab it installs the icl_lab library from the book's repository; elsewhere it installs nothing.
# Pick the scale of the experiments here: scale="ci" (fastest), "book" or "paper";
# None keeps $ICL_LAB_SCALE if set, else "book". The table it prints gives the run time of each.
import subprocess
import sys

if "google.colab" in sys.modules:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "icl_lab @ git+https://github.com/icl-lab/icl-lab.git@main"], check=True)
import icl_lab.notebook

icl_lab.notebook.setup(scale=None, minutes={"ci": 0.08, "book": 0.09, "paper": 0.08})

# %% tags=["remove-cell"]
from IPython.display import Markdown, display

from icl_lab import reports

# %% [markdown]
# ## Where the book departs from the papers
#
# At `book` scale these parameters differ from the papers' settings (at `paper` scale none does).
# When a page runs at `book` scale, it states its reductions above the figures they change; the captions
# describe the papers' setting, at which the book is built.

# %% tags=["remove-input"]
display(Markdown(reports.folded("The parameters that differ at book scale", reports.deviations_markdown())))

# %% [markdown]
# ## Reference results at the papers' full size
#
# The book is built at the papers' setting. What a laptop cannot recompute in minutes was computed once,
# on the machine each record names, and ships with the book in `results/reference/`; every page reads it
# from there and computes the rest itself. Two kinds of stored results do this.
#
# **Reference records** hold an experiment's summary, one record per chunk of seeds, made by
# `icl-lab run <experiment> --scale paper` (configuration, date, commit, machine kind, wall and CPU time,
# library versions). `tools/reference_runs.sh` regenerates them all (resumable: a finished seed chunk is
# stored at once and skipped on the next call; `tools/reference_runs.sh --list` names the experiments).
# A record may cover only part of an experiment's runs while a long run is still under way; the table
# says so and the chapters caption the figure with the runs it holds.

# %%
table = reports.reference_markdown()  # from the records in results/reference/
display(Markdown(reports.folded("The reference records", table)))

# %% [markdown]
# **Full results** hold everything a page draws from one computation at the papers' setting: training
# curves, attention maps, trained weights. `tools/reference_pages.sh` executes every chapter at `paper`
# scale and stores each run function's whole result as it is computed (`icl_lab.memo.full`).
#
# Both kinds are read only while they are *current*: the code that computes them is unchanged. Each
# stores a fingerprint of its experiment's code, the run function's module and every computing module it
# imports; plotting, widgets, the ledger, reports and the command line do not count, so changing a figure
# leaves them current while changing a training loop does not. CI checks every fingerprint and computes
# every reference record's cheapest seed chunk, and the quicker full results, again, bit for bit.

# %% tags=["remove-input"]
display(Markdown(reports.folded("The stored full results", reports.full_results_markdown())))

# %% [markdown]
# ## Claims whose status depends on the scale
#
# The ledgers of the last `ci` and `book` builds (and of a `paper` build, when one was made) ship in `results/reference/claims/`. These claims
# have a different status at the two scales; the cards on each claim's page give the measured values
# that show why (the `ci` configurations are smaller: fewer seeds, shorter ranges of $K$, $n$ or $M$;
# an interval decision needs six seeds, which most `ci` runs do not have).

# %% tags=["remove-input"]
display(Markdown(reports.folded("Claims whose status differs between ci and book scale", reports.scale_differences_markdown("ci", "book"))))

# %% [markdown]
# And between `book` and `paper` scale, when the ledgers of a `paper` build are shipped too:

# %% tags=["remove-input"]
display(Markdown(reports.folded("Claims whose status differs between book and paper scale", reports.scale_differences_markdown("book", "paper"))))

# %% [markdown]
# ## How long it takes
#
# `benchmarks/book.py` executes every notebook in a fresh kernel, one after the other, and records
# its wall and CPU time at `ci`, `book` and `paper` scale, with the machine and its load. At `paper`
# scale a page reads the stored results above and computes the rest: that is what `make book` runs.
# Recomputing everything at `paper` scale instead (`tools/reference_pages.sh` and
# `tools/reference_runs.sh`) takes hours; the tables above give each stored result's CPU time. The
# latest measurement:

# %% tags=["remove-input"]
display(Markdown(reports.timings_markdown()))

# %% [markdown]
# `make book` executes independent notebooks two at a time, so on two cores its wall time is below
# the sum above.
#
# ## On a GPU
#
# The same code runs on a GPU with no change: `icl_lab.default_device()` picks CUDA when it is
# available, `ICL_LAB_DEVICE=cpu` (or `cuda:1`) overrides it, and data are always drawn on the CPU
# from seeded generators, so a seed gives the same prompts on every device.
# `benchmarks/experiments.py --compare-devices` runs every experiment on both and reports the
# largest relative difference of the float32 summaries. It was measured once, on a lent NVIDIA H200
# (numbers in `benchmarks/results/gpu_h200.json`): the 18 experiments that take a device (the window
# and selectors trainings, the context-length and synthesis experiments) all run on CUDA; at `ci` scale
# the GPU is no faster than the CPU (the models are small), and at `paper` scale the $\lambda_*$ sweep
# took 84 s against 1088 s on the two CPU cores of the references (13x), the seed sweep 33 s against
# 361 s (11x), the $\alpha$ sweep 26 s against 115 s (4.4x). A GPU run is not bit-comparable with the
# CPU records the ledgers decide on, for the same reason two kinds of CPU are not. Theorem 1's
# 80-seed reference was not timed on the GPU. The convergence and nonlinear experiments run on the CPU
# only.
