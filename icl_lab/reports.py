"""What the book and the command line report: the book's deviations from the papers' settings, the
measured time of every notebook, the stored and the shipped reference results, and the claims whose
status differs between scales or builds. ``icl-lab report`` prints the same tables."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import memo, registry
from .claims import ClaimsTable, compare
from .params import ConfigError
from .paths import REFERENCE, REPOSITORY
from .records import StoreError, config_to_json, seeds_of, without_seeds
from .render import md_table
from .store import ResultsStore, merge_records

ROOT = REPOSITORY


def toc_notebooks() -> list[Path]:
    """The notebooks of the table of contents, in book order."""
    def files(entry):  # the toc itself, a part, a chapter or a section: its own file, then what it holds
        yield from (entry[k] for k in ("root", "file") if k in entry)
        for k in ("sections", "chapters", "parts"):
            for sub in entry.get(k) or []:
                yield from files(sub)
    return [ROOT / f for f in files(yaml.safe_load((ROOT / "_toc.yml").read_text())) if f.endswith(".ipynb")]


def _short(v):
    """Numbers at 4 significant digits, so that a swept grid reads as its values."""
    if isinstance(v, float):
        return float(f"{v:.4g}")
    return [_short(x) for x in v] if isinstance(v, (tuple, list)) else v


def _cell(v, width: int = 60) -> str:
    s = str(_short(v))
    if len(s) <= width:
        return s
    cut = s[:width - 3]
    if cut.count("$") % 2:  # never cut inside a formula: MathJax would leave it raw
        cut = cut[:cut.rindex("$")].rstrip()
    return cut + "..."


def seed_ranges(seeds) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``."""
    runs: list = []
    for s in sorted(set(seeds or [])):
        if runs and runs[-1][1] == s - 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "—"


def point_text(point) -> str:
    """A grid point (or a record's overrides) as ``key=value, ...``."""
    return ", ".join(f"{k}={v}" for k, v in dict(point).items()) or "—"


def folded(summary: str, markdown: str) -> str:
    """``markdown`` (a table) inside a fold a reader opens, with ``summary`` (plain text, what it
    holds) on its closed face: long reference tables stay one line tall until they are wanted.
    The page renders Markdown outputs as MyST, so the table inside stays a table."""
    if not summary.strip():
        raise ConfigError("summary must name what the fold holds (got an empty string)")
    if "|" not in markdown:  # a sentence (nothing to fold): shown as it is
        return markdown
    rows = sum(1 for line in markdown.splitlines() if line.startswith("|")) - 2
    return (f'<details class="icl-fold">\n<summary>{summary} ({rows} rows)</summary>\n\n'
            f"{markdown.strip()}\n\n</details>\n")


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
    def secs(v):  # a time not recorded (None) shows as a dash, not as a crash of the page
        return "—" if v is None else f"{v:.0f}"

    out = [[nb, *(f"{secs(per[s]['wall_seconds'])} / {secs(per[s].get('cpu_seconds'))}" if s in per else "—" for s in scales)]
           for nb, per in rows.items()]
    shown = [r for per in rows.values() for r in per.values()]  # the rows the table shows (a later row replaces an earlier)
    out.append(["**all, one after the other**",
                *(f"**{secs(sum(r['wall_seconds'] or 0 for r in shown if r['scale'] == s))} / "
                  f"{secs(sum(r.get('cpu_seconds') or 0 for r in shown if r['scale'] == s))}**" for s in scales)])
    loads = [r["load_before"] for r in shown if "load_before" in r]
    apart = [r for r in shown if "how" in r]  # rows measured otherwise than by benchmarks/book.py (their own note)
    when = []
    for s in scales:  # rows carry their own commit and date when scales were measured apart
        sr = [r for r in shown if r["scale"] == s]
        c = sorted({str(r.get("commit", data.get("commit", "?"))) for r in sr})
        d = sorted(str(r.get("date", data.get("date", "?")))[:10] for r in sr)
        when.append(f"`{s}` at commit {', '.join(c)} on {d[0]}" + (f" to {d[-1]}" if d[-1] != d[0] else ""))
    note = (f"\n\nMeasured on {m.get('cpus', '?')} cores ({m.get('cpu', '?')}), {m.get('threads', '?')} torch threads, "
            f"GPU: {m.get('gpu', 'none')}; {'; '.join(when)}; "
            f"load average before each notebook between {min(loads):.2f} and {max(loads):.2f}"
            + (" (rows measured by benchmarks/book.py)" if apart else "") + "."
            if loads else "")
    if apart:  # one sentence per way of measuring, naming its notebooks (with their peak memory where recorded)
        groups = {}
        for r in apart:
            groups.setdefault((r["scale"], r["how"], r.get("cpu")), []).append(r)
        note += "\n\n" + "; ".join(
            ", ".join(f"`{r['notebook']}`" + (f" (peak {r['max_rss_mb'] / 1024:.1f} GB resident)" if "max_rss_mb" in r else "")
                      for r in rs) + f" at `{scale}`: {how}" + (f" ({cpu})" if cpu else "")
            for (scale, how, cpu), rs in groups.items()) + "."
    return md_table(["notebook", *(f"`{s}` wall / CPU (s)" for s in scales)], out) + note


def provenance(records: list[dict]) -> dict:
    """Where and when records were computed and what they took: seeds, tasks, wall and CPU seconds,
    commits (``+dirty``: with uncommitted changes), hosts, devices, machine kinds (the CPU kind of
    :func:`icl_lab.records.cpu_kind`, or the device), first and last day. ``reader`` holds what a
    reader's page shows: short commits and machine kinds, no host names (the code fingerprint, not the
    working tree's state, is what makes a record current)."""
    metas = [r["meta"] for r in records]
    code = [m.get("code") or {} for m in metas]
    days = sorted(str(m.get("finished") or m.get("started") or "?")[:10] for m in metas) or [""]
    return dict(seeds=sorted(s for r in records for s in r.get("seeds") or []), tasks=len(records),
                wall_seconds=float(sum(m.get("wall_seconds") or 0.0 for m in metas)),
                cpu_seconds=float(sum(m.get("cpu_seconds") or 0.0 for m in metas)),
                commits=sorted({str(c.get("git_commit") or "unknown")[:10] + ("+dirty" if c.get("git_dirty") else "")
                                for c in code}),
                hosts=sorted({str(m.get("host") or "?") for m in metas}),
                devices=sorted({str(m.get("device") or "?") for m in metas}), first=days[0], last=days[-1],
                machines=sorted({_machine(m) for m in metas}),
                short_commits=sorted({str(c.get("git_commit") or "unknown")[:7] for c in code}))


def _machine(meta: dict) -> str:
    """A record's machine as a reader can compare it: its CPU kind, its device, or that none was noted."""
    if meta.get("cpu_kind"):
        return f"CPU kind {meta['cpu_kind']}"
    device = str(meta.get("device") or "cpu")
    return "CPU kind not recorded" if device.startswith("cpu") else device


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

    def runs(self) -> str:
        return f"{len(self.seeds)} of {self.wanted} seeds" if self.wanted else "1 run"  # one record: the config

    def provenance(self) -> str:
        """One line: runs, commit(s), date(s), machine kind(s), wall and CPU time, versions."""
        if not self.records:
            return "no reference record"
        p, v = provenance(self.records), self.records[0]["meta"].get("versions") or {}
        return (f"{self.runs()}; commit {', '.join(p['short_commits'])}; {p['first']}"
                + (f" to {p['last']}" if p["last"] != p["first"] else "")
                + f"; {', '.join(p['machines'])}; {p['wall_seconds'] / 60:.0f} min wall, "
                + f"{p['cpu_seconds'] / 60:.0f} min CPU; torch {v.get('torch', '?')}, Python {v.get('python', '?')}")


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
    """One row per experiment with shipped reference records: runs, wall and CPU time, commit, date, machine."""
    names = sorted({p.parent.name for p in (root or REFERENCE).glob("*/*.json")} & set(registry.all_experiments()))
    rows = []
    for ref in (load_reference(name, root) for name in names):
        p = provenance(ref.records)
        wall, cpu = p["wall_seconds"], p["cpu_seconds"]
        time = f"{wall:.0f} / {cpu:.0f} s" if max(wall, cpu) < 120 else f"{wall / 60:.0f} / {cpu / 60:.0f} min"
        rows.append([f"`{ref.experiment}`", ref.runs() + (" (seed chunks not mergeable)" if ref.problem else "")
                     + ("" if ref.complete else " (incomplete)"), len(ref.records), time, ", ".join(p["short_commits"]),
                     p["last"], ", ".join(p["machines"])])
    if not rows:
        return "No reference records have been shipped yet."
    return md_table(["experiment", "runs", "records", "wall / CPU time", "commit", "date", "machine"], rows)


def full_results_markdown(folder: Path | None = None) -> str:
    """One row per run function with stored full results (:mod:`icl_lab.memo`): how many calls, their
    CPU time and whether every one is current; below, the commits, dates, threads, size and CPU kinds."""
    groups: dict[str, list[dict]] = {}
    for m in memo.stored(folder):
        groups.setdefault(m["call"]["function"], []).append(m)
    rows = []
    for name, ms in sorted(groups.items()):
        cpu = sum(m["cpu_seconds"] for m in ms)
        rows.append([f"`{name.removeprefix('icl_lab.papers.')}`", len(ms), f"{cpu:.0f} s" if cpu < 120 else f"{cpu / 60:.0f} min",
                     "yes" if all(m["current"] for m in ms) else f"{sum(not m['current'] for m in ms)} stale"])
    if not rows:
        return "No full results are stored yet: `tools/reference_pages.sh` computes them."
    every = [m for ms in groups.values() for m in ms]
    sorted_set = lambda key: ", ".join(sorted({str(key(m)) for m in every}))  # noqa: E731
    return (md_table(["run function", "calls", "CPU time", "current"], rows)
            + f"\n\nTogether {len(every)} calls, {sum(m['cpu_seconds'] for m in every) / 60:.0f} min of CPU time, "
              f"{sum(m['bytes'] or 0 for m in every) / 1e6:.0f} MB; computed at commit "
              f"{sorted_set(lambda m: ((m.get('code') or {}).get('git_commit') or '?')[:7])} on "
              f"{sorted_set(lambda m: m['finished'][:10])}, with {sorted_set(lambda m: m.get('threads'))} torch "
              f"thread(s) each, on CPU kind {sorted_set(lambda m: m.get('cpu_kind'))} (`icl_lab.records.cpu_kind`).")


def differences_markdown(a: ClaimsTable, b: ClaimsTable, name_a: str, name_b: str,
                         measured: bool = True) -> tuple[str, int]:
    """The claims whose status differs between two ledgers, as a table, and how many they are
    (``measured=False``: without the measured values, a table narrow enough for a page column)."""
    diff = compare(a, b)
    if not measured:
        return md_table(["paper", "claim", "kind", f"status in {name_a}", f"status in {name_b}"],
                        [[d["paper"], d["id"], d["kind"], d["a"], d["b"]] for d in diff]), len(diff)
    return md_table(["paper", "claim", "kind", f"status in {name_a}", f"status in {name_b}", f"measured in {name_a}",
                     f"measured in {name_b}"], [[d["paper"], d["id"], d["kind"], d["a"], d["b"], _cell(d["measured_a"]),
                                                 _cell(d["measured_b"])] for d in diff]), len(diff)


def scale_differences_markdown(a: str = "ci", b: str = "book") -> str:
    """The claims whose status differs between the ledgers shipped for two scales."""
    da, db = REFERENCE / "claims" / a, REFERENCE / "claims" / b
    if not (da.is_dir() and db.is_dir()):
        return f"No shipped ledgers for both `{a}` and `{b}` scale yet."
    ta, tb = ClaimsTable.load(da), ClaimsTable.load(db)
    both = set(ta.papers) & set(tb.papers)
    only = sorted((set(ta.papers) | set(tb.papers)) - both)
    note = (f"\n\nNo ledger of {', '.join(only)} at both scales: not compared." if only else "")
    table, n = differences_markdown(ClaimsTable([c for c in ta.claims if c.paper in both]),
                                    ClaimsTable([c for c in tb.claims if c.paper in both]), f"`{a}`", f"`{b}`",
                                    measured=False)  # the page column: each claim's card gives its values
    return (table if n else f"Every claim has the same status at `{a}` and `{b}` scale.") + note


def stored_results(results_dir=None) -> tuple[list[dict], list[dict]]:
    """Stored records grouped by experiment and configuration (seeds merged), with their
    :func:`provenance`: ``(groups, corrupt)``."""
    try:
        exps = registry.experiments()
    except ConfigError:
        exps = None
    groups: dict = {}
    corrupt = []
    for path, rec, err in ResultsStore(results_dir).records(experiments=exps):
        if rec is None:
            corrupt.append({"path": str(path), "error": err})
        else:
            config = json.dumps(without_seeds(rec["config"]), sort_keys=True)
            groups.setdefault((rec["experiment"], config), []).append(rec)
    out = [{"experiment": recs[0]["experiment"], "scale": recs[0].get("scale"),
            "overrides": without_seeds(recs[0].get("overrides") or {}), **provenance(recs)} for recs in groups.values()]
    return sorted(out, key=lambda g: (g["experiment"], json.dumps(g["overrides"], sort_keys=True))), corrupt


def stored_results_markdown(groups: list[dict]) -> str:
    """:func:`stored_results`' groups as a table."""
    return md_table(["experiment", "scale", "overrides", "seeds", "tasks", "compute s (wall / cpu)", "code", "device"],
                    [[g["experiment"], g["scale"] or "—", point_text(g["overrides"]), seed_ranges(g["seeds"]),
                      g["tasks"], f"{g['wall_seconds']:.1f} / {g['cpu_seconds']:.1f}", ", ".join(g["commits"]),
                      ", ".join(g["devices"])] for g in groups])
