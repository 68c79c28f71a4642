"""Figures sized for the page column, sliders labelled by value, one slider per reader."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from icl_lab import ConfigError, plotting, widgets  # noqa: E402


def test_figure_fits_the_column_with_at_most_three_panels_a_row():
    fig, axes = plotting.figure(3, 2)
    w, h = fig.get_size_inches()
    assert w == plotting.COLUMN_WIDTH and h == pytest.approx(2 * 2.9) and axes.shape == (2, 3)
    assert w * fig.dpi <= 688 / 0.75  # shown at >= 0.75x in the 688-px column of a desktop page
    plt.close(fig)
    with pytest.raises(ConfigError, match="ncols"):
        plotting.figure(4)
    fig, ax = plotting.figure(width=20)  # never wider than the column
    assert fig.get_size_inches()[0] == plotting.COLUMN_WIDTH
    ax.plot([0, 1], label="a")
    leg = plotting.legend_outside(ax)
    assert leg.get_bbox_to_anchor().x0 > ax.get_window_extent().x1  # right of the data
    plt.close(fig)


def _draw(v):
    fig, ax = plotting.figure()
    ax.plot([0, 1], [0, v])
    return fig


def test_explore_gives_the_book_a_static_slider_and_a_notebook_the_live_one():
    ex = widgets.explore(_draw, [1.0, 2.0, 4.0], "slope $a$", fmt="{:.1f}", alt="a line of slope a")
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle  # a running notebook shows the live widget
    html = bundle["text/html"]  # the built book shows this (text/html ranks first in _config.yml)
    assert r"\(a\)" in html and "2.0" in html and 'alt="a line of slope a (slope $a$ = 2.0)"' in html
    control = ex.live_widget.children[0]
    assert control._options_labels == ("1.0", "2.0", "4.0") and control.value == 2.0  # labelled by value
    assert control.continuous_update is False  # heavy: recompute on release


def test_value_slider_shows_values_not_indices():
    s = widgets.value_slider([0.03, 0.3, 3.0], "L", fmt="{:g}")
    assert s._options_labels == ("0.03", "0.3", "3") and s.value == 0.3 and s.description == "L"
