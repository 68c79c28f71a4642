"""Interaction: live ipywidgets in a running notebook, and a kernel-free slider in the built book.

:func:`static_slider` pre-renders one figure per parameter value and returns HTML with a range
input that swaps the images in the browser, so a reader of the static site can move the control
and watch the figure change without a kernel or any network access (the images are inlined as
base64 PNGs and the script is a few lines of plain JavaScript).  :func:`live` wraps
``ipywidgets.interact`` when a kernel with ipywidgets is present.
"""
from __future__ import annotations

import base64
import html
import io
import itertools
import json
import uuid
from typing import Callable, Sequence

import matplotlib.pyplot as plt

from . import _checks as chk


def _png(fig, dpi: int = 80) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def render_frames(draw: Callable, values: Sequence, dpi: int = 80) -> list[str]:
    """Call ``draw(value) -> matplotlib Figure`` for each value; return base64 PNGs."""
    frames = []
    for v in values:
        fig = draw(v)
        if fig is None:
            raise chk.ConfigError("draw must return the matplotlib Figure it drew")
        frames.append(_png(fig, dpi))
    return frames


class StaticSlider:
    """HTML slider over pre-rendered frames (see :func:`static_slider`)."""

    def __init__(self, frames: list[str], values: Sequence, name: str, fmt: str = "{}"):
        self.frames, self.values, self.name, self.fmt = frames, list(values), name, fmt

    def _repr_html_(self) -> str:
        uid = "icl" + uuid.uuid4().hex[:10]
        labels = [self.fmt.format(v) for v in self.values]
        imgs = json.dumps(["data:image/png;base64," + f for f in self.frames])
        start = len(self.frames) // 2
        return f"""
<div class="icl-static-slider" id="{uid}">
  <label>{html.escape(self.name)} = <span id="{uid}-val">{html.escape(labels[start])}</span></label><br>
  <input type="range" min="0" max="{len(self.frames) - 1}" step="1" value="{start}" id="{uid}-in" style="width:60%">
  <br><img id="{uid}-img" src="data:image/png;base64,{self.frames[start]}" style="max-width:100%">
  <script>
  (function() {{
    var frames = {imgs}; var labels = {json.dumps(labels)};
    var inp = document.getElementById("{uid}-in");
    inp.addEventListener("input", function() {{
      document.getElementById("{uid}-img").src = frames[this.value];
      document.getElementById("{uid}-val").textContent = labels[this.value];
    }});
  }})();
  </script>
</div>"""


def static_slider(draw: Callable, values: Sequence, name: str, fmt: str = "{}", dpi: int = 80) -> StaticSlider:
    """A kernel-free slider: ``draw(value)`` returns a Figure for each of ``values``.

    Display the result (last expression of a cell); in the built HTML the reader drags the
    slider and the pre-rendered frame for that value appears."""
    values = list(values)
    if not values:
        raise chk.ConfigError("values must be non-empty")
    return StaticSlider(render_frames(draw, values, dpi), values, name, fmt)


def static_grid(draw: Callable, grid: dict[str, Sequence], dpi: int = 80) -> list[StaticSlider]:
    """Sliders over several parameters are pre-rendered as one slider per combination order;
    for two or more parameters use :func:`static_slider` on the product (kept small)."""
    keys = list(grid)
    combos = list(itertools.product(*(grid[k] for k in keys)))
    return [static_slider(lambda c: draw(**dict(zip(keys, c))), combos, ", ".join(keys), dpi=dpi)]


def live(fn: Callable, **controls) -> None:
    """Display ``ipywidgets.interact(fn, **controls)`` when ipywidgets is importable.

    Controls are ipywidgets (e.g. ``FloatSlider``) or ``(min, max, step)`` tuples.  Returns None,
    so the cell shows only the widget.  In the static book a kernel-free :func:`static_slider`
    stands in for it (tag the cell ``remove-output`` to hide the inert widget there)."""
    try:
        import ipywidgets
    except ImportError:  # pragma: no cover
        print("ipywidgets is not installed: no live controls")
        return None
    ipywidgets.interact(fn, **controls)
    return None
