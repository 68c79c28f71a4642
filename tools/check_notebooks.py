"""Check the Jupytext pairing of the chapters: every chapters/**/*.py has an .ipynb twin whose cells
match it, and every committed .ipynb is stored without outputs.  Exit status 1 on any problem.

Run: python tools/check_notebooks.py           (or `make check-notebooks`)
     python tools/check_notebooks.py --strip   remove outputs from every chapters/**/*.ipynb
"""
from __future__ import annotations

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


if __name__ == "__main__":
    sys.exit(strip() if "--strip" in sys.argv[1:] else main())
