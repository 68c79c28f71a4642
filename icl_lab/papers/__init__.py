"""One package per paper, each with the same files.

* ``theory.py`` — exact and reduced dynamics, closed forms and bounds of that paper;
* ``experiments.py`` — configurations per scale and the run functions, each registered in the
  paper's ``EXPERIMENTS`` (an :class:`icl_lab.registry.Registry`) by a decorator above it;
* ``figures.py`` — that chapter's plots and live widgets;
* ``claims.toml`` — that paper's claims, one table each: id, location, statement, kind, hypotheses.

``common`` is the book's first chapter (the setup the four papers share) and ``synthesis`` its last.
"""
PAPERS = ("common", "convergence", "nonlinear", "window", "selectors", "synthesis")
