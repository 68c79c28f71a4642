"""One package per paper. Each holds

* ``experiments.py`` — configurations per scale and the run functions, each registered in the
  paper's ``EXPERIMENTS`` (an :class:`icl_lab.registry.Registry`) by a decorator above it;
* ``figures.py`` — that chapter's plots and live widgets;
* ``claims.toml`` — that paper's claims, one table each: id, location, statement, kind, hypotheses;
* ``theory.py`` — closed forms, reduced dynamics and bounds (the four papers; ``common``, the book's
  first chapter, and ``synthesis``, its last, state no theory of their own).

A paper whose code outgrows one module per job keeps the rest beside them, named by job, and its
``__init__`` docstring lists them: convergence (population, reduced, phases, training,
experiments_flow), nonlinear (tasks, experiments_block), window (data, population, trained,
training, lowrank; its experiments.py only gathers their registries) and selectors (data, setting,
training, ood, reference, figures_sample_complexity).
"""
PAPERS = ("common", "convergence", "nonlinear", "window", "selectors", "synthesis")
