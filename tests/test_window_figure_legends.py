"""Window figures keep their legends legible (>= 9 pt) and off the data, and fit the page column."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from icl_lab import plotting  # noqa: E402
from icl_lab.papers.window import figures as WF  # noqa: E402


def _legends(fig):
    return [a.get_legend() for a in fig.axes if a.get_legend() is not None] + list(fig.legends)


def test_legend_below_sits_under_the_axes_and_its_x_label():
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1], label="a line")
    plotting.label(ax, "x", "y")
    leg = plotting.legend_below(ax)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert leg.get_texts()[0].get_fontsize() >= 9
    assert leg.get_window_extent(r).y1 <= ax.xaxis.label.get_window_extent(r).y0 + 1
    assert fig.get_window_extent(r).y0 <= leg.get_window_extent(r).y0  # constrained layout kept it on the figure
    plt.close(fig)


def test_draw_window_legends_are_large_and_outside_the_axes():
    fig = WF.draw_window(1.0, 0.1, 20, 2, tasks=8)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert 6.5 <= fig.get_size_inches()[0] <= 7.0
    legends = _legends(fig)
    assert legends
    for leg in legends:
        assert min(t.get_fontsize() for t in leg.get_texts()) >= 9
        box = leg.get_window_extent(r)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(r)), "a legend covers an axes"
    plt.close(fig)


def test_no_figure_module_sets_a_legend_font_below_9_pt():
    """Every legend drawn by a paper's figures module is at least 9 pt where its size is given (the style's
    default is 10 pt): the book shows figures at about 80 % of their size, where 7 pt read as 5 px."""
    import ast
    from pathlib import Path

    small = []
    for path in sorted(Path(plotting.__file__).parent.glob("papers/*/figures*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("legend", "legend_below", "legend_outside"):
                for kw in node.keywords:
                    if kw.arg == "fontsize" and isinstance(kw.value, ast.Constant) and kw.value.value < 9:
                        small.append(f"{path.name}:{node.lineno} fontsize={kw.value.value}")
    assert not small, small
