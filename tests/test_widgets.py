"""The kernel-free slider of the built book."""
from __future__ import annotations

import base64
import json
import re

import pytest
from matplotlib.figure import Figure

from icl_lab import ConfigError
from icl_lab.widgets import static_slider

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _draw(v):
    fig = Figure(figsize=(2, 1.5))  # no pyplot: works with any backend
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, v])
    ax.set_title(f"v={v}")
    return fig


def test_static_slider_has_one_png_frame_per_value_and_a_range_input():
    values = [0.5, 1.0, 2.0, 4.0]
    html = static_slider(_draw, values, "slope", fmt="{:.1f}", dpi=30)._repr_html_()
    m = re.search(r"var frames = (\[.*?\]);", html)
    assert m is not None
    frames = json.loads(m.group(1))
    assert len(frames) == len(values)
    for f in frames:
        assert f.startswith("data:image/png;base64,")
        assert base64.b64decode(f.split(",", 1)[1]).startswith(PNG_MAGIC)
    assert len(set(frames)) == len(values)  # each value drew its own figure
    # the initial image is one of the frames; no frame comes from elsewhere
    img = re.search(r'<img [^>]*src="(data:image/png;base64,[^"]+)"', html)
    assert img is not None and img.group(1) in frames
    assert set(re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", html)) == set(frames)
    rng = re.search(r'<input type="range" min="0" max="(\d+)"', html)
    assert rng is not None and int(rng.group(1)) == len(values) - 1
    labels = json.loads(re.search(r"var labels = (\[.*?\]);", html).group(1))
    assert labels == ["0.5", "1.0", "2.0", "4.0"]


def test_static_slider_validates():
    with pytest.raises(ConfigError, match="values"):
        static_slider(_draw, [], "v")
    with pytest.raises(ConfigError, match="draw"):
        static_slider(lambda v: None, [1], "v")


def test_frames_share_their_axis_limits_so_they_can_be_compared():
    from icl_lab.widgets import _same_axes

    figs = [_draw(v) for v in (0.5, 4.0)]
    _same_axes(figs)
    assert figs[0].axes[0].get_ylim() == figs[1].axes[0].get_ylim()
    assert figs[0].axes[0].get_ylim()[1] >= 4.0  # the union of the frames' ranges


def test_static_slider_has_no_caption_of_its_own():
    # the numbered caption comes from the cell's mystnb metadata: a second one would repeat it
    html = static_slider(_draw, [1.0, 2.0], "slope", alt="a line", dpi=30)._repr_html_()
    assert "<figcaption" not in html and "<figure" not in html and 'alt="a line (slope = 2.0)"' in html
