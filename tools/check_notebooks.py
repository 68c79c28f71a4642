"""Check the Jupytext pairing of the chapters: every chapters/**/*.py has an .ipynb twin whose cells
match it, every committed .ipynb is stored without outputs, and every notebook starts with the
current setup cell (see ``--first-cell``).  Exit status 1 on any problem.

Run: python tools/check_notebooks.py           (or `make check-notebooks`)
     python tools/check_notebooks.py --strip   remove outputs from every chapters/**/*.ipynb
     python tools/check_notebooks.py --first-cell [--times benchmarks/out/book.json] [PY ...]
         insert or refresh the setup cell (Colab install from _config.yml's repository.url, scale
         choice, measured run times) as the first code cell of every paired notebook (or of the
         given .py sources), then update the .ipynb twins; the times come from --times, else from
         benchmarks/out/book.json (benchmarks/book.py's fresh output), else from the shipped
         benchmarks/results/book.json; a scale with no measurement stays None ("not measured yet")
     python tools/check_notebooks.py --check-first-cell
         fail unless every paired notebook starts with the current setup cell
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIRS = ("chapters", "synthesis")  # the folders of paired notebooks (as in the Makefile)


def cells(nb):
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def main() -> int:
    problems = []
    pys = sorted(p for d in NOTEBOOK_DIRS for p in (ROOT / d).rglob("*.py"))
    pys = [p for p in pys if ".ipynb_checkpoints" not in p.parts]
    for py in pys:
        ipynb = py.with_suffix(".ipynb")
        if not ipynb.exists():
            problems.append(f"{py.relative_to(ROOT)} has no paired {ipynb.name}")
            continue
        nb_py = jupytext.read(py)
        nb_ip = nbformat.read(ipynb, as_version=4)
        if cells(nb_py) != cells(nb_ip):
            problems.append(f"{ipynb.relative_to(ROOT)} is out of sync with {py.name}: run `make sync`")
    for ipynb in sorted(p for d in NOTEBOOK_DIRS for p in (ROOT / d).rglob("*.ipynb")):
        if ".ipynb_checkpoints" in ipynb.parts:
            continue
        if not ipynb.with_suffix(".py").exists():
            problems.append(f"{ipynb.relative_to(ROOT)} has no paired .py source")
        nb = nbformat.read(ipynb, as_version=4)
        dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
        if dirty:
            problems.append(f"{ipynb.relative_to(ROOT)} has stored outputs in cells {dirty}: run `make sync`")
    # every notebook starts with the setup cell (Colab install, scale choice) generated from _config.yml
    problems.extend(first_cell_problems(pys))
    for p in problems:
        print("notebook check:", p)
    print(f"notebook check: {len(pys)} paired notebooks, {len(problems)} problems")
    return 1 if problems else 0


def strip() -> int:
    for ipynb in sorted(p for d in NOTEBOOK_DIRS for p in (ROOT / d).rglob("*.ipynb")):
        if ".ipynb_checkpoints" in ipynb.parts:
            continue
        nb = nbformat.read(ipynb, as_version=4)
        changed = False
        for c in nb.cells:
            if c.cell_type == "code" and (c.outputs or c.execution_count):
                c.outputs, c.execution_count, changed = [], None, True
        if changed:
            nbformat.write(nb, ipynb)
            print(f"stripped outputs from {ipynb.relative_to(ROOT)}")
    return 0


# -- the first cell ---------------------------------------------------------------------------

MARKER = "# Setup cell, generated from _config.yml by tools/check_notebooks.py --first-cell."
FIRST_CELL = """# %% tags=["remove-cell"]
{marker}
# In Colab it installs the icl_lab library from the book's repository; elsewhere it installs nothing.
# Pick the scale of the experiments here: scale="ci" (fastest), "book" or "paper";
# None keeps $ICL_LAB_SCALE if set, else "book". The table it prints gives the run time of each.
import subprocess
import sys

if "google.colab" in sys.modules:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", {spec}], check=True)
import icl_lab.notebook

icl_lab.notebook.setup(scale=None, minutes={minutes})
"""
SCALES = ("ci", "book", "paper")


def repository() -> tuple[str, str]:
    """``repository.url`` and ``repository.branch`` of ``_config.yml`` (the one place they are kept)."""
    import yaml

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = cfg.get("repository") or {}
    url, branch = str(repo.get("url", "")).rstrip("/"), str(repo.get("branch", "main"))
    if not url.startswith("https://"):
        raise SystemExit(f"_config.yml: repository.url must be an https URL (got {url!r})")
    return url, branch


def install_spec() -> str:
    url, branch = repository()
    return f"icl_lab @ git+{url}.git@{branch}" if not url.endswith(".git") else f"icl_lab @ git+{url}@{branch}"


def first_cell(minutes: dict) -> str:
    m = "{" + ", ".join(f"{json.dumps(s)}: {minutes.get(s)!r}" for s in SCALES) + "}"
    return FIRST_CELL.format(marker=MARKER, spec=json.dumps(install_spec()), minutes=m)


def _cells(lines: list[str]) -> list[int]:
    return [i for i, l in enumerate(lines) if l.startswith("# %%")]


def _is_code_header(line: str) -> bool:
    return not re.match(r"# %%\s*\[(markdown|md|raw)\]", line)


def _find_generated(lines: list[str]) -> tuple[int, int] | None:
    heads = _cells(lines)
    for k, i in enumerate(heads):
        if i + 1 < len(lines) and lines[i + 1].strip() == MARKER:
            end = heads[k + 1] if k + 1 < len(heads) else len(lines)
            return i, end
    return None


def _minutes_in(block: str) -> dict:
    m = re.search(r"minutes=(\{.*?\})\)", block)
    try:
        return ast.literal_eval(m.group(1)) if m else {}
    except (ValueError, SyntaxError):
        return {}


def measured_minutes(times: Path | None) -> dict[str, dict]:
    """``{notebook path: {scale: minutes}}`` from a ``benchmarks/book.py`` report, if there is one
    (its rows give ``wall_seconds``; ``seconds`` in older reports)."""
    if times is None or not times.exists():
        return {}
    out: dict[str, dict] = {}
    for row in json.loads(times.read_text()).get("notebooks", []):
        seconds = row.get("wall_seconds", row.get("seconds"))
        if seconds is not None:
            out.setdefault(row["notebook"], {})[row["scale"]] = round(float(seconds) / 60, 2)
    return out


def with_first_cell(text: str, minutes: dict) -> str:
    """The py:percent text with the setup cell inserted before the first code cell, or refreshed."""
    lines = text.split("\n")
    found = _find_generated(lines)
    if found:
        start, end = found
        old = "\n".join(lines[start:end])
        minutes = {**_minutes_in(old), **{k: v for k, v in minutes.items() if v is not None}}
        del lines[start:end]
    else:
        heads = [i for i in _cells(lines) if _is_code_header(lines[i])]
        start = heads[0] if heads else len(lines)
    block = first_cell(minutes).split("\n")  # ends with "" -> one blank line after the cell
    lines[start:start] = block
    return "\n".join(lines)


def paired_sources(args: list[str]) -> list[Path]:
    if args:
        return [Path(a).resolve() for a in args]
    pys = sorted(p for d in NOTEBOOK_DIRS for p in (ROOT / d).rglob("*.py"))
    return [p for p in pys if ".ipynb_checkpoints" not in p.parts]


def _rel(p: Path) -> str:
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        return p.as_posix()


def insert_first_cell(args: list[str]) -> int:
    times = None
    if "--times" in args:
        i = args.index("--times")
        times, args = Path(args[i + 1]), args[:i] + args[i + 2:]
    else:  # a fresh local measurement, else the shipped one (the reproduction page's)
        for candidate in (ROOT / "benchmarks" / "out" / "book.json", ROOT / "benchmarks" / "results" / "book.json"):
            if candidate.exists():
                times = candidate
                break
    measured = measured_minutes(times)
    for py in paired_sources(args):
        rel_nb = _rel(py.with_suffix(".ipynb"))
        text = py.read_text()
        new = with_first_cell(text, measured.get(rel_nb, {}))
        if new != text:
            py.write_text(new)
            print(f"first cell: refreshed {_rel(py)}")
        ipynb = py.with_suffix(".ipynb")
        if ipynb.exists():  # keep the twin's cell ids: update it from the source
            subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--update", str(py)], check=True)
        else:
            subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", str(py)], check=True)
    return 0


def check_first_cell(args: list[str]) -> int:
    pys = paired_sources(args)
    problems = first_cell_problems(pys)
    for p in problems:
        print("notebook check:", p)
    print(f"notebook check: first cell of {len(pys)} notebooks, {len(problems)} problems")
    return 1 if problems else 0


def first_cell_problems(pys: list[Path]) -> list[str]:
    problems = []
    for py in pys:
        lines = py.read_text().split("\n")
        found = _find_generated(lines)
        heads = [i for i in _cells(lines) if _is_code_header(lines[i])]
        if not found:
            problems.append(f"{_rel(py)} has no setup cell: run tools/check_notebooks.py --first-cell")
            continue
        if heads and heads[0] != found[0]:
            problems.append(f"{_rel(py)}: the setup cell is not the first code cell")
        block = "\n".join(lines[found[0]:found[1]])
        if block.rstrip() != first_cell(_minutes_in(block)).rstrip():
            problems.append(f"{_rel(py)}: the setup cell differs from the template (repository.url changed, or "
                            "it was edited): run tools/check_notebooks.py --first-cell")
    return problems


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--strip" in argv:
        sys.exit(strip())
    if "--first-cell" in argv:
        sys.exit(insert_first_cell([a for a in argv if a != "--first-cell"]))
    if "--check-first-cell" in argv:
        sys.exit(check_first_cell([a for a in argv if a != "--check-first-cell"]))
    sys.exit(main())
