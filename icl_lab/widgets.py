"""Interaction: live ipywidgets in a running notebook, and a kernel-free slider in the built book.

:func:`explore` is the one call a chapter needs: it pre-renders one figure per parameter value (a
kernel-free slider for the static book: a range input that swaps inlined PNG frames with a few lines
of local JavaScript) *and* builds the live ipywidgets control, and displays them as one output. A
running notebook (JupyterLab, Colab) shows only the live control; the built book shows only the
kernel-free slider (``_config.yml`` ranks ``text/html`` above the widget view). Sliders show the
parameter's *value* (never an index), and heavy ones recompute when the mouse is released.

:func:`static_slider` (kernel-free only) and :func:`live` (live only) remain for special cases.
"""
from __future__ import annotations

import base64
import html
import io
import json
import uuid
from typing import Callable, Sequence

import matplotlib.pyplot as plt

from . import params as chk
from .render import markdown_inline
from .plotting import DPI


def _png(fig, dpi: int = DPI) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _same_axes(figs) -> None:
    """Give the matching axes of every frame the same limits (the union of their own), so that frames
    of a slider can be compared: without it each frame autoscales to its own data. Colour bars and
    frames whose panels differ in number are left as drawn."""
    if len(figs) < 2 or len({len(f.axes) for f in figs}) != 1:
        return
    for axes in zip(*(f.axes for f in figs)):
        if any(getattr(ax, "_colorbar", None) is not None for ax in axes):
            continue
        for get, set_, scale in (("get_xlim", "set_xlim", "get_xscale"), ("get_ylim", "set_ylim", "get_yscale")):
            if len({getattr(ax, scale)() for ax in axes}) != 1:
                continue
            lims = [getattr(ax, get)() for ax in axes]
            flipped = lims[0][0] > lims[0][1]
            lo = min(min(a, b) for a, b in lims)
            hi = max(max(a, b) for a, b in lims)
            for ax in axes:
                getattr(ax, set_)((hi, lo) if flipped else (lo, hi))


def render_frames(draw: Callable, values: Sequence, dpi: int = DPI, same_axes: bool = True) -> list[str]:
    """Call ``draw(value) -> matplotlib Figure`` for each value; return base64 PNGs. ``same_axes``
    (default): every frame gets the same axis limits (the union over the frames), so that moving the
    slider changes the data, never the scale."""
    figs = []
    for v in values:
        fig = draw(v)
        if fig is None:
            for f in figs:
                plt.close(f)
            raise chk.ConfigError("draw must return the matplotlib Figure it drew")
        figs.append(fig)
    if same_axes:
        _same_axes(figs)
    return [_png(fig, dpi) for fig in figs]


def _labels(values: Sequence, fmt) -> list[str]:
    """How each value reads on the slider: ``fmt`` is a format string or a callable."""
    return [fmt(v) if callable(fmt) else fmt.format(v) for v in values]


def _plain(text: str) -> str:
    """Inline math as plain text, for alt text (``$p_1$`` -> ``p_1``)."""
    return text.replace("$", "").replace("\\", "")


class StaticSlider:
    """HTML slider over pre-rendered frames (see :func:`static_slider`)."""

    def __init__(self, frames: list[str], values: Sequence, name: str, fmt="{}", alt: str | None = None,
                 start: int | None = None):
        self.frames, self.values, self.name, self.fmt = frames, list(values), name, fmt
        self.alt = alt
        self.start = len(self.frames) // 2 if start is None else int(start)

    def _repr_html_(self) -> str:
        uid = "icl" + uuid.uuid4().hex[:10]
        labels = _labels(self.values, self.fmt)
        imgs = json.dumps(["data:image/png;base64," + f for f in self.frames])
        start = self.start
        alt = self.alt or f"the figure for one value of {_plain(self.name)}"
        alt_name = self.name  # the name as written (tests and readers of the source expect it)
        return f"""
<div class="icl-static-slider" id="{uid}">
  <label for="{uid}-in" class="mathjax_process">{markdown_inline(self.name)} = <span id="{uid}-val">{html.escape(labels[start])}</span>
  <span style="font-size:0.85em;font-weight:normal;opacity:0.75">(drag the slider: the frames are pre-rendered, no kernel needed)</span></label><br>
  <input type="range" min="0" max="{len(self.frames) - 1}" step="1" value="{start}" id="{uid}-in" style="width:100%;max-width:40rem" aria-valuetext="{html.escape(labels[start])}">
  <div class="icl-slider-figure" style="margin:0"><img id="{uid}-img" src="data:image/png;base64,{self.frames[start]}" alt="{html.escape(alt)} ({html.escape(alt_name)} = {html.escape(labels[start])})" style="max-width:100%"></div>
  <script>
  (function() {{
    var frames = {imgs}; var labels = {json.dumps(labels)};
    var inp = document.getElementById("{uid}-in"), img = document.getElementById("{uid}-img");
    var alt = {json.dumps(alt + " (" + alt_name + " = ")};
    inp.addEventListener("input", function() {{
      img.src = frames[this.value];
      img.alt = alt + labels[this.value] + ")";
      this.setAttribute("aria-valuetext", labels[this.value]);
      document.getElementById("{uid}-val").textContent = labels[this.value];
    }});
  }})();
  </script>
</div>"""


def static_slider(draw: Callable, values: Sequence, name: str, fmt="{}", dpi: int = DPI,
                  alt: str | None = None) -> StaticSlider:
    """A kernel-free slider: ``draw(value)`` returns a Figure for each of ``values``.

    ``name`` and ``fmt`` (a format string or a callable) make the label: ``name = value``, so pass
    the values themselves, not their indices. ``alt`` describes the figure for readers who cannot
    see it (the current value is appended). Display the result (last expression of a cell); in the
    built HTML the reader drags the slider and the pre-rendered frame for that value appears."""
    values = list(values)
    if not values:
        raise chk.ConfigError("values must be non-empty")
    return StaticSlider(render_frames(draw, values, dpi), values, name, fmt, alt)


def value_slider(values: Sequence, name: str, fmt="{}", value=None, continuous_update: bool = False):
    """An ipywidgets slider over ``values`` that shows the value (``fmt``), never its index.
    ``continuous_update=False`` (default): the function runs when the mouse is released."""
    import ipywidgets

    values = list(values)
    if not values:
        raise chk.ConfigError("values must be non-empty")
    options = list(zip(_labels(values, fmt), values))
    value = values[len(values) // 2] if value is None else value
    return ipywidgets.SelectionSlider(options=options, value=value, description=name,
                                      continuous_update=continuous_update,
                                      style={"description_width": "initial"},
                                      layout=ipywidgets.Layout(width="100%", max_width="40rem"))


def _interactive(fn: Callable, heavy: bool, controls: dict, manual: str = ""):
    import ipywidgets

    w = ipywidgets.interactive(fn, {"manual": True, "manual_name": manual} if manual else {}, **controls)
    if heavy:  # recompute on release, not at every step of a drag
        for c in w.children:
            if hasattr(c, "continuous_update"):
                c.continuous_update = False
    return w


def live(fn: Callable, heavy: bool = True, manual: str = "", **controls) -> None:
    """Display ``ipywidgets.interact(fn, **controls)`` when ipywidgets is importable.

    Controls are ipywidgets (e.g. :func:`value_slider`, ``FloatSlider``) or ``(min, max, step)``
    tuples. ``heavy=True`` (default): recompute on release only. ``manual`` (a button's label): compute
    only when the reader presses it, never while the notebook is executed (a training that takes
    seconds). Returns None, so the cell shows only the widget. Prefer :func:`explore`, which also
    gives the static book its slider."""
    try:
        import ipywidgets  # noqa: F401
        from IPython.display import display
    except ImportError:  # pragma: no cover
        print("ipywidgets is not installed: no live controls")
        return None
    display(_interactive(fn, heavy, controls, manual))
    return None


class Explorer:
    """A live control and its kernel-free twin in one output (see :func:`explore`)."""

    def __init__(self, static: StaticSlider, live_widget=None):
        self.static, self.live_widget = static, live_widget

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"text/html": self.static._repr_html_(),
                "text/plain": f"<slider over {self.static.name}: run the notebook to move it>"}
        if self.live_widget is not None:
            view = self.live_widget._repr_mimebundle_() or {}
            key = "application/vnd.jupyter.widget-view+json"
            if key in view:
                data[key] = view[key]
        return data


def explore(draw: Callable, values: Sequence, name: str, fmt="{}", *, alt: str | None = None,
            live_values: Sequence | None = None, live_draw: Callable | None = None, heavy: bool = True,
            dpi: int = DPI) -> Explorer:
    """One slider over a parameter, for every reader: ``draw(value)`` returns a matplotlib Figure.

    In the built book the reader moves a kernel-free slider over the pre-rendered ``values``; in a
    running notebook only the live slider appears (over ``live_values``, default ``values``,
    redrawing with ``live_draw``, default ``draw``), recomputing on release when ``heavy``.
    ``name = fmt(value)`` labels both sliders; ``alt`` describes the figure. Make it the last
    expression of a cell (with the figure caption in that cell's ``mystnb`` metadata)."""
    static = static_slider(draw, values, name, fmt=fmt, dpi=dpi, alt=alt)
    try:
        import ipywidgets  # noqa: F401
        from IPython.display import display
    except ImportError:  # pragma: no cover
        return Explorer(static)
    live_draw = live_draw or draw
    lv = list(live_values) if live_values is not None else list(values)

    def _show(value):
        fig = live_draw(value)
        if fig is not None:
            display(fig)
            plt.close(fig)

    start = lv[len(lv) // 2] if live_values is not None else static.values[static.start]
    control = value_slider(lv, name, fmt=fmt, value=start, continuous_update=not heavy)
    return Explorer(static, _interactive(_show, heavy, {"value": control}))
