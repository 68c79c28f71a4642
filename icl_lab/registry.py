"""The registry of runnable experiments: one :class:`Experiment` per figure or claim group.

Each paper's ``icl_lab/papers/<key>/experiments.py`` fills a :class:`Registry` ``EXPERIMENTS`` with
``@EXPERIMENTS.register(name, config=..., summary=..., ...)`` above each run function;
:func:`all_experiments` collects them as ``"<key>.<name>"`` for the notebooks, the benchmarks, the command
line and the store. So that sweeps can split seeds: a config with fields ``seed`` and ``seeds`` runs seed
``seed + r`` as run ``r``, and running seeds ``[s, s+k)`` as a config ``seed=s, seeds=k`` gives the same
per-seed numbers; ``summary(result)`` returns JSON values, per-seed values as lists in seed order.
"""
from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from .papers import PAPERS
from .params import ConfigError
from .records import fingerprint, leaves

_fingerprint = functools.lru_cache(maxsize=None)(fingerprint)
PLUGINS_ENV = "ICL_LAB_EXPERIMENTS"


@dataclass(frozen=True)
class Experiment:
    """A runnable experiment of one paper: its config class, run function and summary."""

    paper: str  # ledger key: common, convergence, nonlinear, window, selectors
    location: str  # where in the paper, e.g. "Fig. 2", "Thm 3.4"
    description: str
    config: type  # a ScaledConfig subclass
    run: Callable[[Any], Any]  # cfg -> result
    summary: Callable[[Any], dict]  # result -> JSON-serialisable dict
    claims: tuple = field(default=())  # ledger ids the experiment measures
    #: optional ``cfg -> None``: a cheap check of what a run would draw (e.g. that its prompts query every
    #: feature), raising ConfigError; the sweep and the results function call it for every task before computing any
    check: Callable[[Any], None] | None = None
    #: optional ``(cfg, summary) -> result``: the run's result rebuilt from a stored summary, for an experiment
    #: whose paper-scale runs are shipped as records (:func:`icl_lab.memo.full` then reads them)
    from_summary: Callable[[Any, dict], Any] | None = None

    @property
    def seed_splittable(self) -> bool:
        names = getattr(self.config, "__dataclass_fields__", {})
        return "seeds" in names and "seed" in names

    @property
    def fingerprint(self) -> str:
        """The fingerprint of the code that computes this experiment (:func:`icl_lab.records.fingerprint`)."""
        return _fingerprint(self.run.__module__)

    @property
    def summary_keys(self) -> "Returns | None":
        """What its summary function declares with :func:`returns` (None: not declared)."""
        return getattr(self.summary, "summary_keys", None)

    def summary_problem(self, summary: dict) -> str | None:
        """Why ``summary`` does not have this experiment's declared keys, or None."""
        want = self.summary_keys
        if want is None or not isinstance(summary, dict):
            return None
        missing, extra = sorted(want.keys - set(summary)), sorted(set(summary) - want.keys)
        wrong = [f"{w} {', '.join(ks[:5])}" for w, ks in (("missing", missing), ("unexpected", extra)) if ks]
        if wrong:
            return f"the summary does not have the experiment's keys ({'; '.join(wrong)})"
        for key in sorted(want.keys - set(want.text)):
            bad = next((f"{p} = {str(v)[:40]!r}" for p, v in leaves(summary[key], key)
                        if not (v is None or isinstance(v, (int, float)))), None)
            if bad:  # text where the experiment declares numbers (bools and null are numbers here)
                return f"the summary holds {bad} where the experiment declares numbers"
        return None


@dataclass(frozen=True)
class Returns:
    """A summary's declared shape: its keys, the seed axis of each per-seed entry, its timings."""

    keys: frozenset
    per_seed: dict  # key -> nesting depth of the seed axis (in a dict-valued entry: of each value)
    timings: tuple  # keys holding run times: summed over seed chunks, ignored when runs are compared
    text: tuple = ()  # keys that may hold text (labels, names); every other key holds numbers only


def returns(*keys: str, per_seed: dict | tuple = (), timings: tuple = (), text: tuple = ()):
    """Declare the keys a summary function returns; a stored or computed summary with other keys is
    unusable. ``per_seed``: entries with one value per seed (a tuple: seed axis first; a dict:
    ``{key: depth}``), concatenated when seed chunks merge; ``timings``: run times, summed; ``text``:
    entries that may hold text (every other entry holds numbers)::

        @returns("losses", "N_grid", "seconds", per_seed={"losses": 1}, timings=("seconds",))
    """
    if not keys or not all(isinstance(k, str) and k for k in keys) or len(set(keys)) != len(keys):
        raise ValueError(f"returns() takes distinct non-empty key names (got {keys!r})")
    depths = dict(per_seed) if isinstance(per_seed, dict) else dict.fromkeys(per_seed, 0)
    unknown = (set(depths) | set(timings) | set(text)) - set(keys)
    if unknown:
        raise ValueError(f"returns(): per_seed/timings/text name keys that are not returned: {sorted(unknown)}")

    def mark(fn):
        fn.summary_keys = Returns(frozenset(keys), depths, tuple(timings), tuple(text))
        return fn
    return mark


class Registry(dict):
    """One paper's experiments, ``{name: Experiment}``, filled by :meth:`register`.
    ``Registry(paper, *parts)`` starts with the experiments of the paper's other registries."""

    def __init__(self, paper: str, *parts: "Registry"):
        super().__init__()
        self.paper = paper
        for part in parts:
            if getattr(part, "paper", None) != paper:
                raise ValueError(f"a {paper!r} registry can only gather {paper!r} registries "
                                 f"(got {getattr(part, 'paper', type(part).__name__)!r})")
            for name, exp in part.items():
                self._add(name, exp)

    def _add(self, name: str, exp: Experiment) -> None:
        if name in self:
            raise ValueError(f"experiment {self.paper}.{name} is registered twice")
        self[name] = exp

    def register(self, name: str, **fields):
        """A decorator registering the run function below it as experiment ``name`` (returned unchanged);
        ``fields``: the :class:`Experiment`'s (config, summary, location, description, claims, ...)."""
        def decorate(run: Callable[[Any], Any]) -> Callable[[Any], Any]:
            claims = tuple(fields.get("claims", ()))
            self._add(name, Experiment(paper=self.paper, run=run, **{**fields, "claims": claims}))
            return run
        return decorate


def _experiments_of(module, prefix: str) -> dict[str, Experiment]:
    """A module's ``EXPERIMENTS`` dict as ``{"<prefix>.<name>": Experiment}``."""
    exps = getattr(module, "EXPERIMENTS", None)
    if not isinstance(exps, dict) or not all(isinstance(n, str) and isinstance(e, Experiment) for n, e in exps.items()):
        raise ConfigError(f"{module.__name__}.EXPERIMENTS must be a dict of name -> Experiment")
    return {f"{prefix}.{name}": exp for name, exp in exps.items()}


def all_experiments() -> dict[str, Experiment]:
    """Every registered experiment, as ``{"<paper>.<name>": Experiment}``."""
    out: dict[str, Experiment] = {}
    for paper in PAPERS:
        try:
            out.update(_experiments_of(importlib.import_module(f"{__package__}.papers.{paper}.experiments"), paper))
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.papers.{paper}.experiments":
                raise  # else: the chapter is not written yet
    return out


def plugin_names() -> list[str]:
    names = [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]
    for m in names:
        if not all(part.isidentifier() for part in m.split(".")):
            raise ConfigError(f"{PLUGINS_ENV} must list importable module names such as my_pkg.my_exps (got {m!r})")
    return names


def experiments() -> dict[str, Experiment]:
    """The registry's experiments plus those of the (trusted: importing runs them) modules named in
    ``$ICL_LAB_EXPERIMENTS``, as ``<module>.<name>`` from each module's ``EXPERIMENTS`` dict."""
    out = dict(all_experiments())
    for name in plugin_names():
        try:
            module = importlib.import_module(name)
        except (Exception, SystemExit) as e:  # ImportError, any error of the module's own code, or sys.exit()
            why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
            raise ConfigError(f"{PLUGINS_ENV} names the module {name!r}, which cannot be imported ({why})") from None
        out.update(_experiments_of(module, name))
    return out


def resolve_experiment(name: str, registry: dict | None = None) -> Experiment:
    """The experiment called ``name``, or a ConfigError listing the known ones."""
    exps = experiments() if registry is None else registry
    if not isinstance(name, str) or name not in exps:
        raise ConfigError(f"experiment must be one of {sorted(exps)} (got {name!r})")
    return exps[name]
