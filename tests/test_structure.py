"""The library's shape: one package per paper with the same module names for the same jobs, imports that
flow one way (the core <- the papers <- the store, the sweep and the command line) without cycles, and
reader-facing text that cites papers, never the internal reproduction specs."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from icl_lab.claims import PAPERS, declared

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "icl_lab"
def _modules():
    return sorted(p for p in LIB.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path, modules: set[str] | None = None) -> set[str]:
    """icl_lab modules imported anywhere in the module (inside functions too: a late import hides a
    cycle, it does not remove it); ``from pkg import mod`` counts as importing ``pkg.mod`` only."""
    modules = modules if modules is not None else {_name(p) for p in _modules()}
    tree = ast.parse(path.read_text())
    pkg = _name(path) if path.name == "__init__.py" else _name(path).rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("icl_lab"):
                subs = {f"{mod}.{a.name}" for a in node.names} & modules
                out.update(subs)
                if len(subs) < len(node.names):
                    out.add(mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("icl_lab"))
    return out


def test_every_paper_has_one_package_with_the_same_files():
    """Each paper package holds its experiments, figures and claims under the same names, and each of the
    four papers (and the common setup) its theory; no second home for paper code elsewhere in the library."""
    for key in PAPERS:
        pkg = LIB / "papers" / key
        assert pkg.is_dir(), f"icl_lab/papers/{key} is missing"
        files = ("experiments.py", "figures.py", "claims.toml") + (("theory.py",) if key != "synthesis" else ())
        missing = [f for f in files if not (pkg / f).exists()]
        assert not missing, f"icl_lab/papers/{key} lacks {missing}"
    for old in ("experiments", "dynamics", "theory", "window"):
        assert not (LIB / old).exists(), f"icl_lab/{old}/ is a second home for paper code"


#: the core every paper builds on, and the layer that stores, schedules and presents results
CORE = ("data", "models", "train", "metrics", "baselines", "params", "config")
OUTER = ("store", "sweep", "cli", "runner", "memo", "reports")


def test_imports_flow_one_way():
    """The core imports no paper and no outer module; a paper imports no outer module (it registers its
    experiments, and the outer layer finds them). The template's page stub (``chapter.py``) is a page."""
    wrong = []
    for p in _modules():
        name = _name(p)
        parts = name.split(".")
        imports = _imports(p)
        if len(parts) > 1 and parts[1] in CORE:
            wrong += [f"{name} -> {i}" for i in imports if i.startswith("icl_lab.papers")
                      or i.split(".")[1:2] and i.split(".")[1] in OUTER]
        if name.startswith("icl_lab.papers.") and not name.endswith(".chapter"):  # the template's page stub reads like a page
            wrong += [f"{name} -> {i}" for i in imports if len(i.split(".")) > 1 and i.split(".")[1] in OUTER]
    assert not wrong, "imports against the direction core <- papers <- outer layer: " + ", ".join(wrong)


def test_no_import_cycles():
    mods = {_name(p): p for p in _modules()}
    graph = {m: {i for i in _imports(p) if i in mods and i != m} for m, p in mods.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle = stack[stack.index(n):] + [n]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_no_function_level_imports_of_the_library():
    """Imports of the library's own modules sit at the top of the module, where the import graph shows
    them (an optional heavy dependency is the only reason to import late, and none is the library's)."""
    late = []
    for p in _modules():
        tree = ast.parse(p.read_text())
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            own = (isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("icl_lab"))) or (
                isinstance(node, ast.Import) and any(a.name.startswith("icl_lab") for a in node.names))
            if own and id(node) not in top:
                late.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert not late, "function-level imports of icl_lab modules: " + ", ".join(late)


def test_store_does_not_import_sweep():
    assert "icl_lab.sweep" not in _imports(LIB / "store.py")


SPEC = re.compile(r"\bspecs?\b ?(§|[A-Z]?[0-9]|item)|the spec\b|spec['’]s\b|\bspec A[0-9]", re.I)


def test_reader_facing_text_cites_no_spec():
    offenders = []
    for folder in ("icl_lab", "chapters", "synthesis"):
        for p in (ROOT / folder).rglob("*"):
            if p.suffix not in (".py", ".md") or "__pycache__" in p.parts or ".ipynb_checkpoints" in p.parts:
                continue
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if SPEC.search(line):
                    offenders.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:90]}")
    assert not offenders, "reader-facing text cites a spec readers do not have:\n" + "\n".join(offenders)


@pytest.mark.declarations
def test_claims_are_declared_in_the_library_with_statements():
    for key in PAPERS:
        decl = declared(key)
        assert decl, f"icl_lab/papers/{key}/claims.toml declares no claims"
        for d in decl.values():
            assert d.statement and d.location and d.kind in ("paper", "consistency", "finding")
            assert not re.search(r"(?<!\\)Theta\(", d.statement), f"{key} {d.id}: write math as MyST ($\\Theta(...)$)"


def test_every_statement_of_the_default_scale_agrees():
    """The default scale (config.DEFAULT_SCALE) and the scale `make book` builds at are stated in the CLI
    help, the README, the intro, the chapters and the notebooks' setup cell: all say the same."""
    from icl_lab import cli
    from icl_lab.config import DEFAULT_SCALE

    book_scale = re.search(r"^book:.*\n\t\$\(call build_book,(\w+),", (ROOT / "Makefile").read_text(), re.M).group(1)
    default = [r"\(`(\w+)` by default", r'else "(\w+)"\.', r"\$ICL_LAB_SCALE, else (\w+)\)"]
    book = [r"make book\s+# .*?at (\w+) scale", r"`make book` builds at (\w+) scale"]
    said = []
    texts = {"icl-lab run --help": cli.build_parser()._subparsers._group_actions[0].choices["run"].format_help()}
    for path in [ROOT / "README.md", *(ROOT / "chapters").rglob("*.md"), *(ROOT / "chapters").rglob("*.py"),
                 *(ROOT / "synthesis").glob("*.py"), ROOT / "tools" / "check_notebooks.py"]:
        texts[str(path.relative_to(ROOT))] = path.read_text()
    for where, text in texts.items():
        for pattern in default:
            said += [(where, "default", m) for m in re.findall(pattern, " ".join(text.split()) if "help" in where
                                                                else text, re.M)]
        for pattern in book:
            said += [(where, "make book", m) for m in re.findall(pattern, text)]
    assert {w for w, what, _ in said if what == "default"} >= {"icl-lab run --help", "tools/check_notebooks.py"}
    wrong = [(w, what, s) for w, what, s in said if s != (DEFAULT_SCALE if what == "default" else book_scale)]
    assert not wrong, f"statements that disagree (default {DEFAULT_SCALE}, make book at {book_scale}): {wrong}"


@pytest.mark.declarations
def test_chapters_measure_and_the_claims_tables_decide():
    """No verdict is typed in a notebook: chapters hand over measured quantities (``measure``), and every
    checkable claim declares the tests that decide it in its paper's claims.toml."""
    typed = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "chapters").rglob("*.py")) + sorted(
        (ROOT / "synthesis").rglob("*.py")) for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\bpassed *=|\.check\(|\binconclusive *=", line)]
    assert not typed, "criteria typed in notebooks: " + ", ".join(typed)
    untested = [f"{paper} {d.id}" for paper in PAPERS for d in declared(paper).values()
                if not d.not_checkable and not d.tests]
    assert not untested, "checkable claims without declared tests: " + ", ".join(untested)
