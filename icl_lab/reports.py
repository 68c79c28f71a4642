"""What the book and the command line report: the book's deviations from the papers' settings,
the measured time of every notebook, the stored and the shipped reference results, and the claims
whose status differs between scales."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from .chunks import merge_records
from .claims import ClaimsTable, compare
from .params import ConfigError
from .paths import REFERENCE, REPOSITORY
from .records import StoreError, config_to_json, seeds_of
from . import registry
from .render import md_table
from .store import ResultsStore

ROOT = REPOSITORY


def toc_notebooks() -> list[Path]:
    """The notebooks of the table of contents, in book order."""
    def files(entries):
        for e in entries or []:
            if "file" in e:
                yield e["file"]
            yield from files(e.get("sections"))
            for part in e.get("parts", []):
                yield from files(part.get("chapters"))

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    names = [toc.get("root", "")] + list(files(toc.get("chapters"))) + [
        f for part in toc.get("parts", []) for f in files(part.get("chapters"))]
    return [ROOT / f for f in names if f.endswith(".ipynb")]


def _short(v):
    """Numbers at 4 significant digits, so that a swept grid reads as its values."""
    if isinstance(v, float):
        return float(f"{v:.4g}")
    if isinstance(v, (tuple, list)):
        return [_short(x) for x in v]
    return v


def _cell(v, width: int = 60) -> str:
    s = str(_short(v))
    return s if len(s) <= width else s[:width - 3] + "..."


def deviation_rows() -> list[dict]:
    """Every reduction of the paper's setting at ``book`` scale, as declared next to each config."""
    rows, seen = [], set()
    for name, exp in sorted(registry.all_experiments().items()):
        cls = exp.config
        for dev in cls.deviations():
            key = (cls.__name__, dev["field"])
            if key in seen:
                continue
            seen.add(key)
            rows.append(dict(experiment=name, location=exp.location, **dev))
    return rows


def deviations_markdown() -> str:
    rows = deviation_rows()
    if not rows:
        return "At `book` scale every experiment runs with the paper's parameters."
    out, last = [], None
    for r in rows:  # the experiment is named on its first row only
        name = f"`{r['experiment']}` ({r['location']})" if r["experiment"] != last else ""
        last = r["experiment"]
        out.append([name, f"`{r['field']}`: {_cell(r['paper'], 40)} → {_cell(r['book'], 40)}", r["why"]])
    return md_table(["experiment (paper location)", "parameter: paper → book", "why"], out)


def timings_markdown(path: Path | None = None) -> str:
    path = path or ROOT / "benchmarks" / "results" / "book.json"
    if not path.exists():
        return "No timings recorded yet: run `benchmarks/book.py`."
    data = json.loads(path.read_text())
    m = data.get("machine", {})
    rows = {}
    for r in data.get("notebooks", []):
        rows.setdefault(r["notebook"], {})[r["scale"]] = r
    scales = sorted({r["scale"] for r in data.get("notebooks", [])}, key=["ci", "book", "paper"].index)
    out, tot = [], {s: [0.0, 0.0] for s in scales}
    for nb, per in rows.items():
        cells = []
        for s in scales:
            r = per.get(s)
            if r:
                tot[s][0] += r["wall_seconds"]
                tot[s][1] += r["cpu_seconds"]
            cells.append(f"{r['wall_seconds']:.0f} / {r['cpu_seconds']:.0f}" if r else "—")
        out.append([nb, *cells])
    out.append(["**all, one after the other**", *(f"**{tot[s][0]:.0f} / {tot[s][1]:.0f}**" for s in scales)])
    loads = [r["load_before"] for r in data.get("notebooks", [])]
    note = (f"\n\nMeasured on {m.get('cpus', '?')} cores ({m.get('cpu', '?')}), {m.get('threads', '?')} torch threads, "
            f"GPU: {m.get('gpu', 'none')}, commit {data.get('commit', '?')}, {data.get('date', '?')}; "
            f"load average before each notebook between {min(loads):.2f} and {max(loads):.2f}."
            if loads else "")
    return md_table(["notebook", *(f"`{s}` wall / CPU (s)" for s in scales)], out) + note


def reference_store(root: Path | None = None):
    """The results store of the shipped reference records (``results/reference``)."""
    return ResultsStore(root or REFERENCE)


def _without_seeds(config: dict) -> dict:
    return {k: v for k, v in config.items() if k not in ("seed", "seeds")}


def reference_check(rec: dict) -> str | None:
    """Why a reference record is not a record of its experiment's current ``paper`` configuration
    (None when it is): its config, seeds aside, must equal the paper config, and its seeds must lie
    within the paper's (a record may be one seed chunk of the paper run)."""
    exp = registry.all_experiments().get(rec.get("experiment"))
    if exp is None:
        return f"{rec.get('experiment')!r} is not a registered experiment"
    paper = config_to_json(exp.config.for_scale("paper"))
    if _without_seeds(rec["config"]) != _without_seeds(paper):
        diff = sorted(k for k in set(paper) | set(rec["config"])
                      if k not in ("seed", "seeds") and paper.get(k) != rec["config"].get(k))
        return f"config differs from the current paper config in {diff}"
    want = seeds_of(exp.config.for_scale("paper"))
    have = rec.get("seeds")
    if want is not None and (not have or not set(have) <= set(want)):
        return f"seeds {have} are not within the paper's {want[0]}..{want[-1]}"
    return None


def reference_records(experiment: str | None = None, root: Path | None = None) -> list[tuple]:
    """Every shipped reference record as ``(path, record or None, problem or None)``, read and
    checked (format, checksum, key) by the results store, then against the current paper config."""
    exps = registry.all_experiments()
    out = []
    for path, rec, err in reference_store(root).records(experiment, experiments=exps):
        if experiment is None and path.parent.name not in exps:
            continue  # e.g. results/reference/claims: not a record folder
        out.append((path, rec, err if rec is None else reference_check(rec)))
    return out


@dataclass
class Reference:
    """The paper-scale reference of one experiment, merged over its stored seed chunks."""

    experiment: str
    config: object  # the current paper config
    summary: dict | None  # merged over the chunks in seed order (None: no record)
    seeds: list  # the seeds the records cover
    wanted: int  # the seeds the paper config trains
    records: list  # the records, in seed order
    problem: str = ""  # why the summary is None although records exist

    @property
    def complete(self) -> bool:
        return len(self.seeds) == self.wanted

    @property
    def wall_seconds(self) -> float:
        return float(sum(r["meta"].get("wall_seconds") or 0.0 for r in self.records))

    @property
    def cpu_seconds(self) -> float:
        return float(sum(r["meta"].get("cpu_seconds") or 0.0 for r in self.records))

    def provenance(self) -> str:
        """One line: runs, commit(s), date(s), host(s), wall and CPU time, versions."""
        if not self.records:
            return "no reference record"
        meta = [r["meta"] for r in self.records]
        commits = sorted({str((m.get("code") or {}).get("git_commit") or "?")[:10] for m in meta})
        dates = sorted(str(m.get("finished") or m.get("started") or "?")[:10] for m in meta)
        hosts = sorted({str(m.get("host", "?")) for m in meta})
        v = meta[0].get("versions") or {}
        runs = f"{len(self.seeds)} of {self.wanted} seeds" if self.wanted else f"{len(self.records)} record(s)"
        return (f"{runs}; commit {', '.join(commits)}; {dates[0]}" + (f" to {dates[-1]}" if dates[-1] != dates[0] else "")
                + f"; host {', '.join(hosts)}; {self.wall_seconds / 60:.0f} min wall, {self.cpu_seconds / 60:.0f} min CPU; "
                + f"torch {v.get('torch', '?')}, Python {v.get('python', '?')}")


def load_reference(experiment: str, root: Path | None = None) -> Reference:
    """The shipped reference of ``experiment`` for its current ``paper`` config: the valid records
    whose config matches (seed chunks merged in seed order); records of another config are ignored
    (``tests/test_reference.py`` fails on them)."""
    exp = registry.all_experiments()[experiment]
    cfg = exp.config.for_scale("paper")
    want = seeds_of(cfg)
    good = [rec for _, rec, problem in reference_records(experiment, root) if rec is not None and problem is None]
    good.sort(key=lambda r: (r.get("seeds") or [0])[0])
    if want is None:  # no seed chunks: one record of the whole config
        good = good[:1]
    seeds = sorted({s for r in good for s in (r.get("seeds") or [])})
    summary, problem = None, ""
    if good:
        try:
            summary = merge_records(exp, good)
        except StoreError as e:  # e.g. a value computed from each chunk's own first seed
            problem = f"its seed chunks cannot be merged ({e})"
    return Reference(experiment, cfg, summary, seeds, len(want) if want else 0, good, problem)


def reference_rows(root: Path | None = None) -> list[dict]:
    """One row per experiment with shipped reference records: runs, wall and CPU time, commit, date, host."""
    root = root or REFERENCE
    names = sorted({p.parent.name for p, _, _ in reference_records(root=root)} & set(registry.all_experiments()))
    rows = []
    for name in names:
        ref = load_reference(name, root)
        meta = [r["meta"] for r in ref.records]
        rows.append({"experiment": name, "records": len(ref.records),
                     "runs": (f"{len(ref.seeds)} of {ref.wanted} seeds" if ref.wanted else "1 run")
                     + (" (seed chunks not mergeable)" if ref.problem else ""),
                     "complete": ref.complete, "wall_seconds": ref.wall_seconds, "cpu_seconds": ref.cpu_seconds,
                     "commit": ", ".join(sorted({str((m.get("code") or {}).get("git_commit") or "")[:10] for m in meta})),
                     "date": max((str(m.get("finished", ""))[:10] for m in meta), default=""),
                     "host": ", ".join(sorted({str(m.get("host", "")) for m in meta}))})
    return rows


def _duration(wall: float, cpu: float) -> str:
    """Wall / CPU time in seconds under two minutes, else in minutes."""
    if max(wall, cpu) < 120:
        return f"{wall:.0f} / {cpu:.0f} s"
    return f"{wall / 60:.0f} / {cpu / 60:.0f} min"


def reference_markdown(root: Path | None = None) -> str:
    rows = reference_rows(root)
    if not rows:
        return "No reference records have been shipped yet."
    return md_table(["experiment", "runs", "records", "wall / CPU time", "commit", "date", "host"],
                    [[f"`{r['experiment']}`", r["runs"] + ("" if r["complete"] else " (incomplete)"), r["records"],
                      _duration(r["wall_seconds"], r["cpu_seconds"]), r["commit"], r["date"], r["host"]] for r in rows])


def scale_differences_markdown(a: str = "ci", b: str = "book") -> str:
    """The claims whose status differs between the ledgers shipped for two scales."""
    da, db = REFERENCE / "claims" / a, REFERENCE / "claims" / b
    if not (da.is_dir() and db.is_dir()):
        return f"No shipped ledgers for both `{a}` and `{b}` scale yet."
    ta, tb = ClaimsTable.load(da), ClaimsTable.load(db)
    both = set(ta.papers) & set(tb.papers)
    only = sorted((set(ta.papers) | set(tb.papers)) - both)
    note = (f"\n\nNo ledger of {', '.join(only)} at both scales: not compared." if only else "")
    diff = compare(ClaimsTable([c for c in ta.claims if c.paper in both]),
                   ClaimsTable([c for c in tb.claims if c.paper in both]))
    if not diff:
        return f"Every claim has the same status at `{a}` and `{b}` scale." + note
    return md_table(["paper", "claim", "kind", f"`{a}`", f"`{b}`", f"measured at `{a}`", f"measured at `{b}`"],
                    [[d["paper"], d["id"], d["kind"], d["a"], d["b"], _cell(d["measured_a"]), _cell(d["measured_b"])]
                     for d in diff]) + note


def stored_results_summary(results_dir=None) -> tuple[list[dict], list[dict]]:
    """Stored records grouped by experiment and configuration (seeds merged): ``(groups, corrupt)``."""
    store = ResultsStore(results_dir)
    try:
        exps = registry.experiments()
    except ConfigError:
        exps = None
    groups: dict = {}
    corrupt = []
    for path, rec, err in store.records(experiments=exps):
        if rec is None:
            corrupt.append({"path": str(path), "error": err})
            continue
        cfg = {k: v for k, v in rec["config"].items() if k not in ("seed", "seeds")}
        g = groups.setdefault((rec["experiment"], json.dumps(cfg, sort_keys=True)), {
            "experiment": rec["experiment"], "scale": rec.get("scale"), "seeds": [], "tasks": 0,
            "overrides": {k: v for k, v in (rec.get("overrides") or {}).items() if k not in ("seed", "seeds")},
            "wall_seconds": 0.0, "cpu_seconds": 0.0, "commits": set(), "devices": set(), "finished": ""})
        meta, code = rec["meta"], rec["meta"].get("code", {})
        g["seeds"] += rec.get("seeds") or []
        g["tasks"] += 1
        g["wall_seconds"] += float(meta.get("wall_seconds", 0.0))
        g["cpu_seconds"] += float(meta.get("cpu_seconds", 0.0))
        g["commits"].add((code.get("git_commit") or "unknown")[:10] + ("+dirty" if code.get("git_dirty") else ""))
        g["devices"].add(meta.get("device", "?"))
        g["finished"] = max(g["finished"], meta.get("finished", ""))
    out = sorted(groups.values(), key=lambda g: (g["experiment"], json.dumps(g["overrides"], sort_keys=True)))
    for g in out:
        g.update(seeds=sorted(g["seeds"]), commits=sorted(g["commits"]), devices=sorted(g["devices"]))
    return out, corrupt
