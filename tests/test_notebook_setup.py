"""The notebooks' first cell: generated from _config.yml's repository.url, picks the scale in the notebook."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("check_notebooks", ROOT / "tools" / "check_notebooks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SOURCE = '''# %% [markdown]
# # A chapter

# %%
import icl_lab

# %% [markdown]
# text
'''


def test_first_cell_goes_before_the_first_code_cell_and_is_idempotent():
    tool = _tool()
    once = tool.with_first_cell(SOURCE, {"ci": 0.5})
    lines = once.split("\n")
    heads = [i for i, l in enumerate(lines) if l.startswith("# %%") and tool._is_code_header(l)]
    assert lines[heads[0] + 1] == tool.MARKER  # the generated cell is the first code cell
    assert lines.index("import icl_lab") > heads[0]
    url, branch = tool.repository()
    assert f'"icl_lab @ git+{url}.git@{branch}"' in once and 'if "google.colab" in sys.modules:' in once
    assert '"ci": 0.5' in once and '"paper": None' in once
    assert tool.with_first_cell(once, {}) == once  # refreshing keeps the measured minutes
    assert tool.with_first_cell(once, {"book": 3.0}).count(tool.MARKER) == 1


def test_first_cell_times_are_the_measured_wall_times(tmp_path):
    tool = _tool()
    report = tmp_path / "book.json"
    report.write_text(json.dumps({"notebooks": [
        {"notebook": "chapters/a.ipynb", "scale": "ci", "wall_seconds": 22.4, "cpu_seconds": 30.0},
        {"notebook": "chapters/a.ipynb", "scale": "book", "wall_seconds": 150.0, "cpu_seconds": 200.0}]}))
    assert tool.measured_minutes(report) == {"chapters/a.ipynb": {"ci": 0.37, "book": 2.5}}
    cell = tool.with_first_cell(SOURCE, tool.measured_minutes(report)["chapters/a.ipynb"])
    assert '"ci": 0.37, "book": 2.5, "paper": None' in cell


def test_the_shipped_timings_cover_every_notebook_of_the_book_at_ci_and_book_scale():
    import yaml

    tool = _tool()
    measured = tool.measured_minutes(ROOT / "benchmarks" / "results" / "book.json")

    def files(node):
        if isinstance(node, dict):
            yield from ([node["file"]] if "file" in node else [])
            for v in node.values():
                yield from files(v)
        elif isinstance(node, list):
            for v in node:
                yield from files(v)

    notebooks = [f for f in files(yaml.safe_load((ROOT / "_toc.yml").read_text())) if f.endswith(".ipynb")]
    assert notebooks
    for nb in notebooks:
        row = measured.get(nb, {})
        assert row.get("ci") is not None and row.get("book") is not None, nb


def test_check_first_cell_flags_missing_and_edited_cells(tmp_path, capsys):
    tool = _tool()
    py = tmp_path / "nb.py"
    py.write_text(SOURCE)
    assert tool.check_first_cell([str(py)]) == 1
    py.write_text(tool.with_first_cell(SOURCE, {}))
    assert tool.check_first_cell([str(py)]) == 0
    py.write_text(py.read_text().replace("scale=None", 'scale="ci"'))
    assert tool.check_first_cell([str(py)]) == 1
    assert "differs from the template" in capsys.readouterr().out


def test_setup_picks_the_scale_in_the_notebook(monkeypatch, capsys):
    from icl_lab import get_scale, notebook

    monkeypatch.setenv("ICL_LAB_SCALE", "ci")
    assert notebook.setup(None, {"ci": 0.4, "book": 5}) == "ci"  # None keeps the environment's choice
    out = capsys.readouterr().out
    assert "* ci" in out and "about 5 min" in out and "about 25 s" in out
    assert "not measured yet at paper scale" in out  # only the scale with no measurement says so
    assert notebook.setup("paper", quiet=True) == "paper" and get_scale() == "paper"
    assert os.environ["ICL_LAB_SCALE"] == "paper"
    with pytest.raises(Exception, match="scale"):
        notebook.setup("huge")


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            out[name.strip().lower()] = version.strip()
    return out


def test_binder_environment_matches_the_pinned_requirements():
    binder, dev = _pins(ROOT / "binder" / "requirements.txt"), _pins(ROOT / "requirements.txt")
    assert binder["torch"].split("+")[0] == dev["torch"].split("+")[0] and binder["torch"].endswith("+cpu")
    for name, version in binder.items():
        if name != "torch" and name in dev:
            assert version == dev[name], f"binder pins {name}=={version}, requirements.txt {dev[name]}"
    assert {"numpy", "matplotlib", "ipywidgets", "ipykernel"} <= set(binder)
    assert not {"jupyter-book", "playwright", "dask", "pytest"} & set(binder)  # only what the notebooks need
    assert (ROOT / "binder" / "postBuild").read_text().count("pip install") == 1


def test_the_timings_table_groups_rows_measured_apart_and_shows_a_missing_time_as_a_dash(tmp_path):
    from icl_lab import reports
    how = "nbclient, 1 torch thread"
    rows = [dict(notebook="a.ipynb", scale="ci", wall_seconds=10.0, cpu_seconds=12.0, load_before=1.0, load_after=1.0),
            dict(notebook="a.ipynb", scale="paper", wall_seconds=100.0, cpu_seconds=None, how=how, cpu="X", max_rss_mb=2048),
            dict(notebook="b.ipynb", scale="paper", wall_seconds=50.0, cpu_seconds=40.0, how=how, cpu="X", max_rss_mb=1024),
            dict(notebook="b.ipynb", scale="paper", wall_seconds=60.0, cpu_seconds=45.0, how=how, cpu="X", max_rss_mb=1024)]
    path = tmp_path / "book.json"
    path.write_text(json.dumps({"machine": {"cpus": 2}, "notebooks": rows}))
    text = reports.timings_markdown(path)
    assert "| a.ipynb | 10 / 12 | 100 / — |" in text
    assert "| b.ipynb | — | 60 / 45 |" in text  # the later measurement of b replaces the earlier one
    assert "**160 / 45**" in text  # the total sums the rows shown, not the replaced one
    assert text.count(how) == 1 and text.count("`b.ipynb`") == 1
    assert "`a.ipynb` (peak 2.0 GB resident), `b.ipynb` (peak 1.0 GB resident) at `paper`: nbclient" in text


def test_a_reduced_scale_names_its_reductions_above_the_figures():
    """At a reduced scale a page states what differs from the papers' setting (the captions describe the
    papers' setting, at which the book is built); at paper scale it says nothing."""
    from icl_lab.notebook import reduced_text
    from icl_lab.papers.convergence import experiments as cv

    assert reduced_text(cv.ReplicaConfig.for_scale("paper"), scale="paper") == ""
    text = reduced_text(cv.ReplicaConfig.for_scale("book"), scale="book")
    assert "book scale" in text and "seeds 3 instead of 6" in text and "test prompts 1000 instead of 3000" in text
    labelled = reduced_text(("the replica", cv.ReplicaConfig.for_scale("ci")), scale="ci")
    assert labelled.startswith("Computed at the ci scale") and "the replica: " in labelled
    assert reduced_text(cv.SweepConfig.for_scale("book"), scale="book") == ""  # nothing reduced: nothing said


def test_a_slider_keeps_every_frame_except_at_the_ci_scale():
    from icl_lab.notebook import frames

    seven = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert frames(seven, scale="paper") == seven and frames(seven, scale="book") == seven
    assert frames(seven, scale="ci") == [0.3, 0.6, 0.9]
    assert frames([10, 30, 100, 300], scale="ci") == [10, 100, 300]
    assert frames((1, 2, 3), scale="ci") == [1, 2, 3]


def test_the_test_order_knows_every_chapters_ci_time():
    """make test runs the longest files first from benchmarks/results/book.json: a notebook without a ci
    row there would be handed out last, whatever its length."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("root_conftest", root / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    seconds = mod._expected_seconds()
    notebooks = sorted(p.relative_to(root).as_posix() for p in (root / "chapters").rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts)
    assert notebooks and [nb for nb in notebooks if nb not in seconds] == []
    assert all(seconds[k] > 0 for k in mod.SLOW_TESTS)
