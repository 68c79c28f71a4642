"""The smallest complete paper: a copy-and-rename start for a new chapter, kept working by
``tests/test_template.py`` (see ``CONTRIBUTING.md``).

It has the modules every paper has, each with one job: :mod:`.theory` (a closed form),
:mod:`.conditions` (the theorem's hypotheses, as ``claims.toml`` names them), :mod:`.experiments`
(a config per scale and one registered run function), :mod:`.checks` (what a chapter measures for each
claim), :mod:`.figures` (one figure), ``claims.toml`` (one claim and its test) and ``chapter.py`` (a
py:percent chapter page that uses all of them). Its "Theorem 1" is a stand-in statement about the
book's Q-only model, not a result of a paper.

The leading underscore keeps it out of the book: its key is not in :data:`icl_lab.papers.PAPERS`, so
the registry, the command line, the ledgers and the synthesis do not see it, and ``chapter.py`` is not
in ``_toc.yml``. The test adds the key to ``PAPERS`` for its own duration, as a new paper does for good.
"""
