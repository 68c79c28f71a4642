"""What the book and the command line report: the book's deviations from the papers' settings, the
measured time of every notebook, the stored and the shipped reference results, and the claims whose
status differs between scales."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import registry
from .chunks import merge_records
from .claims import ClaimsTable, compare
from .params import ConfigError
from .paths import REFERENCE, REPOSITORY
from .records import StoreError, config_to_json, seeds_of, without_seeds
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
    names = [toc.get("root", ""), *files(toc.get("chapters")),
             *(f for part in toc.get("parts", []) for f in files(part.get("chapters")))]
    return [ROOT / f for f in names if f.endswith(".ipynb")]


def _short(v):
    """Numbers at 4 significant digits, so that a swept grid reads as its values."""
    if isinstance(v, float):
        return float(f"{v:.4g}")
    return [_short(x) for x in v] if isinstance(v, (tuple, list)) else v


def _cell(v, width: int = 60) -> str:
    s = str(_short(v))
    return s if len(s) <= width else s[:width - 3] + "..."


def deviations_markdown() -> str:
    """Every reduction of the paper's setting at ``book`` scale, as declared next to each config."""
    rows, seen, last = [], set(), None
    for name, exp in sorted(registry.all_experiments().items()):
        for dev in exp.config.deviations():
            if (exp.config.__name__, dev["field"]) in seen:
                continue
            seen.add((exp.config.__name__, dev["field"]))
            rows.append([f"`{name}` ({exp.location})" if name != last else "",  # named on its first row only
                         f"`{dev['field']}`: {_cell(dev['paper'], 40)} → {_cell(dev['book'], 40)}", dev["why"]])
            last = name
    if not rows:
        return "At `book` scale every experiment runs with the paper's parameters."
    return md_table(["experiment (paper location)", "parameter: paper → book", "why"], rows)


def timings_markdown(path: Path | None = None) -> str:
    path = path or ROOT / "benchmarks" / "results" / "book.json"
    if not path.exists():
        return "No timings recorded yet: run `benchmarks/book.py`."
    data = json.loads(path.read_text())
    runs, m = data.get("notebooks", []), data.get("machine", {})
    scales = sorted({r["scale"] for r in runs}, key=["ci", "book", "paper"].index)
    rows = {}
    for r in runs:
        rows.setdefault(r["notebook"], {})[r["scale"]] = r
    out = [[nb, *(f"{per[s]['wall_seconds']:.0f} / {per[s]['cpu_seconds']:.0f}" if s in per else "—" for s in scales)]
           for nb, per in rows.items()]
    out.append(["**all, one after the other**",
                *(f"**{sum(r['wall_seconds'] for r in runs if r['scale'] == s):.0f} / "
                  f"{sum(r['cpu_seconds'] for r in runs if r['scale'] == s):.0f}**" for s in scales)])
    loads = [r["load_before"] for r in runs]
    note = (f"\n\nMeasured on {m.get('cpus', '?')} cores ({m.get('cpu', '?')}), {m.get('threads', '?')} torch threads, "
            f"GPU: {m.get('gpu', 'none')}, commit {data.get('commit', '?')}, {data.get('date', '?')}; "
            f"load average before each notebook between {min(loads):.2f} and {max(loads):.2f}."
            if loads else "")
    return md_table(["notebook", *(f"`{s}` wall / CPU (s)" for s in scales)], out) + note


def reference_check(rec: dict) -> str | None:
    """Why a reference record is not one of its experiment's current ``paper`` config (None when it is):
    its config, seeds aside, must equal the paper config, its seeds lie within the paper's."""
    exp = registry.all_experiments().get(rec.get("experiment"))
    if exp is None:
        return f"{rec.get('experiment')!r} is not a registered experiment"
    paper = without_seeds(config_to_json(exp.config.for_scale("paper")))
    if without_seeds(rec["config"]) != paper:
        diff = sorted(k for k in set(paper) | set(without_seeds(rec["config"])) if paper.get(k) != rec["config"].get(k))
        return f"config differs from the current paper config in {diff}"
    want, have = seeds_of(exp.config.for_scale("paper")), rec.get("seeds")
    if want is not None and (not have or not set(have) <= set(want)):
        return f"seeds {have} are not within the paper's {want[0]}..{want[-1]}"
    return None


def reference_records(experiment: str | None = None, root: Path | None = None) -> list[tuple]:
    """Every shipped reference record as ``(path, record or None, problem or None)``, read and checked
    by the results store, then against the current paper config."""
    exps = registry.all_experiments()
    return [(path, rec, err if rec is None else reference_check(rec))
            for path, rec, err in ResultsStore(root or REFERENCE).records(experiment, experiments=exps)
            if experiment is not None or path.parent.name in exps]  # e.g. results/reference/claims: no records


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

    def _total(self, field: str) -> float:
        return float(sum(r["meta"].get(field) or 0.0 for r in self.records))

    @property
    def wall_seconds(self) -> float:
        return self._total("wall_seconds")

    @property
    def cpu_seconds(self) -> float:
        return self._total("cpu_seconds")

    @property
    def commits(self) -> list[str]:
        return sorted({str((r["meta"].get("code") or {}).get("git_commit") or "?")[:10] for r in self.records})

    @property
    def hosts(self) -> list[str]:
        return sorted({str(r["meta"].get("host") or "?") for r in self.records})

    def provenance(self) -> str:
        """One line: runs, commit(s), date(s), host(s), wall and CPU time, versions."""
        if not self.records:
            return "no reference record"
        dates = sorted(str(r["meta"].get("finished") or r["meta"].get("started") or "?")[:10] for r in self.records)
        v = self.records[0]["meta"].get("versions") or {}
        runs = f"{len(self.seeds)} of {self.wanted} seeds" if self.wanted else f"{len(self.records)} record(s)"
        return (f"{runs}; commit {', '.join(self.commits)}; {dates[0]}"
                + (f" to {dates[-1]}" if dates[-1] != dates[0] else "")
                + f"; host {', '.join(self.hosts)}; {self.wall_seconds / 60:.0f} min wall, "
                + f"{self.cpu_seconds / 60:.0f} min CPU; torch {v.get('torch', '?')}, Python {v.get('python', '?')}")


def load_reference(experiment: str, root: Path | None = None) -> Reference:
    """The shipped reference of ``experiment`` for its current ``paper`` config: the valid records whose
    config matches, seed chunks merged in seed order (records of another config are ignored)."""
    exp = registry.all_experiments()[experiment]
    cfg = exp.config.for_scale("paper")
    want = seeds_of(cfg)
    good = sorted((rec for _, rec, problem in reference_records(experiment, root) if rec is not None and not problem),
                  key=lambda r: (r.get("seeds") or [0])[0])
    good = good if want is not None else good[:1]  # no seed chunks: one record of the whole config
    summary, problem = None, ""
    if good:
        try:
            summary = merge_records(exp, good)
        except StoreError as e:  # e.g. a value computed from each chunk's own first seed
            problem = f"its seed chunks cannot be merged ({e})"
    seeds = sorted({s for r in good for s in (r.get("seeds") or [])})
    return Reference(experiment, cfg, summary, seeds, len(want) if want else 0, good, problem)


def reference_markdown(root: Path | None = None) -> str:
    """One row per experiment with shipped reference records: runs, wall and CPU time, commit, date, host."""
    names = sorted({p.parent.name for p, _, _ in reference_records(root=root)} & set(registry.all_experiments()))
    rows = []
    for ref in (load_reference(name, root) for name in names):
        wall, cpu = ref.wall_seconds, ref.cpu_seconds
        runs = (f"{len(ref.seeds)} of {ref.wanted} seeds" if ref.wanted else "1 run") + (
            " (seed chunks not mergeable)" if ref.problem else "") + ("" if ref.complete else " (incomplete)")
        rows.append([f"`{ref.experiment}`", runs,
                     len(ref.records), f"{wall:.0f} / {cpu:.0f} s" if max(wall, cpu) < 120 else
                     f"{wall / 60:.0f} / {cpu / 60:.0f} min", ", ".join(ref.commits),
                     max((str(r["meta"].get("finished", ""))[:10] for r in ref.records), default=""),
                     ", ".join(ref.hosts)])
    if not rows:
        return "No reference records have been shipped yet."
    return md_table(["experiment", "runs", "records", "wall / CPU time", "commit", "date", "host"], rows)


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
    try:
        exps = registry.experiments()
    except ConfigError:
        exps = None
    groups: dict = {}
    corrupt = []
    for path, rec, err in ResultsStore(results_dir).records(experiments=exps):
        if rec is None:
            corrupt.append({"path": str(path), "error": err})
            continue
        g = groups.setdefault((rec["experiment"], json.dumps(without_seeds(rec["config"]), sort_keys=True)), {
            "experiment": rec["experiment"], "scale": rec.get("scale"), "seeds": [], "tasks": 0,
            "overrides": without_seeds(rec.get("overrides") or {}),
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
