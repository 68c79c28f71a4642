"""``icl-lab``: list the experiments and claims, run experiments and sweeps, report results.

Installed with the package (``python -m icl_lab.cli`` works too). Every bad input exits with status 2
and one line ``icl-lab: error: <field> must be ... (got ...)``; a sweep in which a task failed exits with 1.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import warnings
from pathlib import Path

from . import claims, params, paths, sweep
from .claims import PAPERS, ClaimsTable
from .config import DEFAULT_SCALE, SCALES, get_scale
from .params import ConfigError, describe
from .registry import experiments, resolve_experiment
from .render import md_table
from .reports import differences_markdown, point_text, seed_ranges, stored_results, stored_results_markdown
from .store import ResultsStore, check_root
from .runner import check_environment

EPILOG_MAIN = """\
examples:
  icl-lab list                          what can I run, and which claims does it measure?
  icl-lab show common.context_length    its parameters, with their values at each scale
  icl-lab run common.context_length --scale paper --seeds 30 --grid lr=10,30,100 --executor dask
  icl-lab report                        the claims ledger and what is stored

Results go to results/ (--results DIR, $ICL_LAB_RESULTS), one JSON file per completed task; running
the same command again skips what is stored, so an interrupted sweep just continues.
"""

EPILOG_RUN = """\
A sweep is every combination of the --grid values (a grid point) times --seeds seeds (run r uses
seed + r); a task trains up to --seeds-per-task of a point's seeds together. Values are parsed to the
parameter's type (100, 1e4, 3e-2, inf, true, text; lists 2,4,8 in --set, [2,4],[8,16] in --grid)
and everything is checked before anything runs.

examples:
  icl-lab run common.context_length --scale ci --set steps=100 --dry-run
  icl-lab run common.context_length --scale paper --seeds 30 --seeds-per-task 6 --grid K=2,4,8 \\
          --executor dask --workers 16
  icl-lab run common.context_length --executor dask --address tcp://10.0.0.5:8786
          (a running scheduler, e.g. started by dask-jobqueue on Slurm/PBS; see the README)
"""


def _checked(constraint: params.Constraint):
    """An argparse type: the text parsed and checked by a declared constraint (:mod:`icl_lab.params`)."""
    def parse(text: str):
        try:
            return constraint.parse("value", text)
        except ConfigError:
            raise argparse.ArgumentTypeError(f"must be {constraint.describe()} (got {text!r})") from None
    return parse


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line plus the usage, exit status 2
        self.print_usage(sys.stderr)
        self.exit(2, f"icl-lab: error: {message}\n")


def _claims_dir(scale: str, base: str | None) -> Path:
    return Path(base) / scale if base is not None else paths.claims_dir(scale)


def _ledgers(directory) -> ClaimsTable:
    """The ledgers exported in ``directory``, none where it is not a folder (one line naming the folder
    when one cannot be read)."""
    try:
        return ClaimsTable.load(directory) if Path(directory).is_dir() else ClaimsTable([])
    except (OSError, ValueError, KeyError, TypeError) as e:  # ValueError: JSONDecodeError
        raise ConfigError(f"claims: the ledgers in {str(directory)!r} cannot be read ({type(e).__name__}: "
                          f"{str(e)[:120]})") from None


def cmd_list(args) -> int:
    exps, rows = experiments(), {}

    def row(paper, cid, kind="", location="", statement=""):
        return rows.setdefault((paper, cid), {"paper": paper, "id": cid, "kind": kind, "location": location,
                                              "statement": statement, "experiments": [], "status": {}})
    for paper in PAPERS:  # every claim's statement, from the library's declarations
        for d in claims.declared(paper).values():
            row(paper, d.id, d.kind, d.location, d.statement)
    missing = [s for s in SCALES if not _claims_dir(s, args.claims).is_dir()]
    for scale in SCALES:
        for c in _ledgers(_claims_dir(scale, args.claims)).claims:
            row(c.paper, c.id, c.kind, c.location, c.statement)["status"][scale] = (
                c.status + (f" ({c.caveat})" if c.caveat else ""))
    for name, e in exps.items():
        for cid in e.claims:
            row(e.paper, cid)["experiments"].append(name)
    if args.format == "json":
        print(json.dumps({"experiments": [{"name": n, "paper": e.paper, "location": e.location,
                                           "description": e.description, "claims": list(e.claims),
                                           "config": e.config.__name__, "seeds": e.seed_splittable}
                                          for n, e in exps.items()],
                          "claims": list(rows.values())}, indent=2))
        return 0
    print(f"## Experiments ({len(exps)})\n")
    print(md_table(["experiment", "paper", "location", "claims", "seeds", "description"],
                   [[n, e.paper, e.location, ", ".join(e.claims) or "—", "yes" if e.seed_splittable else "no",
                     e.description] for n, e in exps.items()]))
    print(f"\n## Claims ({len(rows)})\n")
    print(md_table(["paper", "id", "kind", "location", "statement", "measured by", *[f"status ({s})" for s in SCALES]],
                   [[c["paper"], c["id"], c["kind"] or "—", c["location"] or "—", c["statement"] or "(not declared)",
                     ", ".join(c["experiments"]) or "—", *[c["status"].get(s, "—") for s in SCALES]]
                    for c in rows.values()]))
    if missing:
        print(f"\nNo exported ledger at scale {', '.join(missing)}: build the book (make book / make book-ci) "
              "to see the statuses measured there.")
    return 0


def cmd_show(args) -> int:
    e = resolve_experiment(args.experiment)
    kinds, cfgs = describe(e.config), [e.config.for_scale(s) for s in SCALES]
    print(f"{args.experiment}: {e.description}\npaper: {e.paper}, {e.location}; "
          f"claims: {', '.join(e.claims) or '—'}\n")
    print(md_table(["parameter", "allowed values", *SCALES], [[f.name, kinds[f.name], *(
        getattr(c, f.name) for c in cfgs)] for f in dataclasses.fields(e.config)]))
    if e.config.__doc__:
        print("\n" + " ".join(e.config.__doc__.split()))
    return 0


def cmd_run(args) -> int:
    sweep.check_executor(args.executor, args.address, args.workers, args.device, flag="--")
    store = ResultsStore(None if args.results is None else check_root(args.results, "--results"))  # creates nothing
    plan = sweep.plan(args.experiment, args.scale, sets=args.set, grid=args.grid, seeds=args.seeds,
                      seeds_per_task=args.seeds_per_task, max_memory=args.max_memory)
    done = sweep.load_plan_records(plan, store)
    print(f"{plan.describe()}; {len(done)} already stored in {store.root}", file=sys.stderr)
    n_todo, n_workers = len(plan.tasks) - len(done), args.workers or os.cpu_count() or 1
    if (args.executor == "dask" and args.address is None and n_todo < n_workers and plan.exp.seed_splittable
            and args.seeds_per_task is None):
        print(f"note: {n_todo} task(s) for {n_workers} workers; --seeds-per-task K splits "
              "each grid point's seeds into more tasks", file=sys.stderr)
    if args.dry_run:
        print(md_table(["task", "grid point", "seeds", "key", "state"],
                       [[i, point_text(t.point), seed_ranges(t.seeds), t.key, "stored" if t.key in done else "to run"]
                        for i, t in enumerate(plan.tasks)]))
        return 0
    try:
        res = sweep.run(plan, executor=args.executor, address=args.address, workers=args.workers,
                        results_dir=args.results, progress=args.progress, device=args.device,
                        recompute=args.recompute)
    except KeyboardInterrupt:
        n = len(sweep.load_plan_records(plan, store))
        print(f"\ninterrupted: {n} of {len(plan.tasks)} tasks are stored; run the same command again to finish",
              file=sys.stderr)
        return 130
    points = res.point_summaries()
    if args.json:  # strict JSON: an undefined value (NaN, inf) is written as null, and said so
        nonfinite = []
        out = json.loads(json.dumps({"experiment": plan.experiment, "scale": plan.scale, "results": str(res.root),
                                     "points": points, "failed": res.failed}), parse_constant=nonfinite.append)
        print(json.dumps(out, indent=1, allow_nan=False))
        if nonfinite:
            print(f"note: {len(nonfinite)} non-finite value(s) (NaN or infinity) written as null", file=sys.stderr)
    else:
        rows = []
        for pt in points:
            tasks = [t for t in plan.tasks if dict(t.point) == pt["point"]]
            wall = sum(res.records[t.key]["meta"]["wall_seconds"] for t in tasks if t.key in res.records)
            state = "ok" if pt.get("summary") is not None else "chunks" if "chunks" in pt else "missing"
            rows.append([point_text(pt["point"]), seed_ranges(pt["seeds"]), len(tasks),
                         sum(t.key in res.computed for t in tasks), f"{wall:.1f}", state])
        print(md_table(["grid point", "seeds", "tasks", "computed now", "compute s", "summary"], rows))
    print(f"{len(res.computed)} task(s) computed, {len(res.skipped)} from the store, {len(res.failed)} failed "
          f"in {res.seconds:.1f} s; results in {res.root}", file=sys.stderr)
    for key, err in res.failed.items():
        print(f"failed {key}: {err}", file=sys.stderr)
    return 1 if res.failed else 0


def _compare(a: str, b: str) -> int:
    ta, tb = _ledgers(a), _ledgers(b)
    for d, t in ((a, ta), (b, tb)):
        if not t.claims:
            raise ConfigError(f"--compare: {d} is not a folder of exported ledgers (no claims found there)")
    table, n = differences_markdown(ta, tb, a, b)
    print(f"{table}\n\n{n} claims differ." if n else
          f"All {len(tb.claims)} claims have the same status in {a} and {b}.")
    return 1 if n else 0


def cmd_report(args) -> int:
    if args.compare:
        return _compare(*args.compare)
    scale = get_scale(args.scale)
    cdir = _claims_dir(scale, args.claims)
    table, (groups, corrupt) = _ledgers(cdir), stored_results(args.results)
    root = ResultsStore(args.results).root
    if args.format == "json":
        print(json.dumps({"scale": scale, "claims_dir": str(cdir), "claims": json.loads(table.to_json()),
                          "missing_ledgers": table.missing(), "results_dir": str(root), "results": groups,
                          "corrupt": corrupt}, indent=2))
        return 0
    print(f"# Claims ledger, {scale} scale\n")
    if table.claims:
        print(f"From {cdir}.\n\n{table.counts_markdown()}\n\n{table.to_markdown()}")
        if table.missing():
            print(f"\nNot exported at this scale: {', '.join(table.missing())}.")
    else:
        print(f"No exported ledgers in {cdir}: build the book at this scale "
              f"({'make book' if scale == 'paper' else 'make book-ci'}) to export them.")
    print(f"\n# Stored results ({root})\n")
    print(stored_results_markdown(groups) if groups else
          "Nothing stored yet (icl-lab run EXPERIMENT stores its results here).")
    if corrupt:
        print(f"\n{len(corrupt)} unusable file(s) (they are recomputed by the next run that needs them):")
        for c in corrupt:
            print(f"- {c['error']}")
    return 0


EXPERIMENT = {"experiment": dict(metavar="EXPERIMENT", help="e.g. common.context_length (see icl-lab list)")}
RESULTS = {"--results": dict(metavar="DIR", help="results folder (default: $ICL_LAB_RESULTS, else results/ at the "
                             "book's root)")}
LEDGERS = {"--format": dict(choices=("markdown", "json"), default="markdown", help="output format (default markdown)"),
           "--claims": dict(metavar="DIR", help="folder holding <scale>/<paper>.json ledgers (default: _build/claims "
                            "of the book)")}
SCALE = f"(default: $ICL_LAB_SCALE, else {DEFAULT_SCALE})"
COUNT = _checked(params.COUNT)  # --seeds, --seeds-per-task: the library's bound on a count of seeds
#: name: (function, what it does, its arguments, epilog)
COMMANDS = {
    "list": (cmd_list, "every experiment (paper, location) and every claim (statement, status at each scale where "
             "the book was built: make book / make book-ci)", LEDGERS, None),
    "show": (cmd_show, "an experiment's parameters (what --set and --grid accept), their types and values at each "
             "scale", EXPERIMENT, None),
    "run": (cmd_run, "run an experiment, or a sweep over a grid of parameters and seeds, storing every completed "
            "task in the results folder", {
                **EXPERIMENT,
                "--scale": dict(choices=SCALES, help="ci: small and fast; book: the book's laptop setting; paper: the "
                                f"paper's settings {SCALE}"), **RESULTS,
                "--seeds": dict(type=COUNT, metavar="N", help="seeds per grid point (default: the scale's)"),
                "--seeds-per-task": dict(type=COUNT, metavar="K", help="at most K seeds trained together in one "
                                         "task (default: all of a grid point's seeds)"),
                "--set": dict(action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                              help="fix a parameter, e.g. --set steps=200 lr=3 (see icl-lab show EXPERIMENT)"),
                "--grid": dict(action="extend", nargs="+", default=[], metavar="KEY=V1,V2", help="sweep a parameter "
                               "over values, e.g. --grid lr=1,3,10; several --grid form a product"),
                "--executor": dict(choices=sweep.EXECUTORS, default="local", help="local: tasks one after another "
                                   "in this process; dask: on Dask distributed (default local)"),
                "--address": dict(metavar="SCHEDULER", help="with --executor dask: connect to this running scheduler "
                                  "(tcp://host:8786) instead of starting a LocalCluster"),
                "--workers": dict(type=_checked(params.Int(1, 4 * (os.cpu_count() or 1))), metavar="N",
                                  help="with --executor dask and no --address: worker processes of the LocalCluster "
                                  "(one thread each; default: one per core; at most 4 per core)"),
                "--max-memory": dict(metavar="SIZE", help="refuse a task whose estimated memory exceeds SIZE (e.g. "
                                     "8G; none: no check; default: $ICL_LAB_MAX_MEMORY, else the machine's memory)"),
                "--device": dict(help="torch device, e.g. cpu or cuda (default: CUDA when available)"),
                "--dry-run": dict(action="store_true", help="check everything and show the tasks, run nothing"),
                "--recompute": dict(action="store_true", help="ignore stored results of these tasks and overwrite "
                                    "them (e.g. after changing the code)"),
                "--json": dict(action="store_true", help="print the grid points' merged summaries as JSON"),
                "--progress": dict(action=argparse.BooleanOptionalAction, help="show a progress bar (default: only "
                                   "on a terminal, and not when $CI is set)")}, EPILOG_RUN),
    "report": (cmd_report, "the claims ledger exported by the book at a scale, and a summary of every result "
               "stored in the results folder (unusable files are listed)", {
                   **LEDGERS, "--scale": dict(choices=SCALES, help=f"whose ledger {SCALE}"), **RESULTS,
                   "--compare": dict(nargs=2, metavar=("A", "B"), help="list the claims whose status differs between "
                                     "two exported ledger folders (two builds, scales or machines); exit status 1 if "
                                     "any does")}, None),
}


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog="icl-lab", formatter_class=fmt, epilog=EPILOG_MAIN,
                description="Run the experiments of the icl-lab book (in-context learning in one-layer transformers) "
                            "from a terminal: one configuration, a sweep over a grid, on one core or a Dask cluster.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_, what, arguments, epilog) in COMMANDS.items():
        cmd = sub.add_parser(name, help=what, description=what[0].upper() + what[1:] + ".", formatter_class=fmt,
                             epilog=epilog)
        for flag, kw in arguments.items():
            cmd.add_argument(flag, **kw)
    return p


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line ``icl-lab: warning: ...``, without the source line Python would print."""
    text = " ".join(str(message).split())
    print(f"icl-lab: warning: {text}", file=sys.stderr if file is None else file, flush=True)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            check_environment()  # every ICL_LAB_* variable, before anything else
            return COMMANDS[args.command][0](args)
    except ConfigError as e:
        print(f"icl-lab: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. icl-lab list | head
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
