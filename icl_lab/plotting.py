"""One figure style for the whole book, and the few plot helpers every chapter needs.

Figures are sized for the book's page column: :func:`figure` makes a figure ``COLUMN_WIDTH`` inches
wide at ``DPI`` (825 px, shown at about 0.83x in the 688-px column of a desktop page, so that 11-pt
labels read at about 14 px), with at most three panels a row; :func:`legend_outside` keeps legends
off the data. A reader can click any figure of the built book to see it at full size.
"""
from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch
from .params import ConfigError

COLUMN_WIDTH = 7.5  # inches: the page column of the built book (688 px) at about 0.83x
DPI = 110  # figure and saved-frame resolution (inline figures use the figure's dpi)
MAX_PANELS_PER_ROW = 3  # more panels in a row would shrink below legibility in the column

STYLE = {
    "figure.figsize": (COLUMN_WIDTH, 3.6),
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "legend.fontsize": 10,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "image.cmap": "viridis",
}
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]


def use_style() -> None:
    """Apply the book's matplotlib style (colour-blind-safe cycle, light grid)."""
    matplotlib.rcParams.update(STYLE)
    matplotlib.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=COLORS)


def figure(ncols: int = 1, nrows: int = 1, *, height: float | None = None, width: float | None = None,
           **subplots_kw):
    """``plt.subplots`` sized for the page column: ``COLUMN_WIDTH`` wide (``width`` to narrow it),
    ``height`` inches per row (default 3.6 for one panel a row, 2.9 for two or three), constrained
    layout. At most ``MAX_PANELS_PER_ROW`` panels a row: put more panels on more rows (or in
    several figures) so their labels stay legible at the page's width."""
    if not 1 <= ncols <= MAX_PANELS_PER_ROW:
        raise ConfigError(f"ncols must be between 1 and {MAX_PANELS_PER_ROW} (got {ncols}): use more rows "
                          "or several figures, panels narrower than a third of the column are not legible")
    if nrows < 1:
        raise ConfigError(f"nrows must be >= 1 (got {nrows})")
    w = COLUMN_WIDTH if width is None else min(float(width), COLUMN_WIDTH)
    h = (3.6 if ncols == 1 else 2.9) if height is None else float(height)
    subplots_kw.setdefault("layout", "constrained")
    return plt.subplots(nrows, ncols, figsize=(w, h * nrows), dpi=DPI, **subplots_kw)


def legend_outside(ax_or_fig, where: str = "right", **kw):
    """A legend that never covers data: to the right of an axes (``where="right"``) or below the
    whole figure in columns (``where="below"``, for a legend shared by several panels)."""
    if where == "right":
        ax = ax_or_fig
        return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kw)
    if where == "below":
        fig = getattr(ax_or_fig, "figure", ax_or_fig)
        if getattr(fig, "figure", None) is not None and fig.figure is not fig:  # a SubFigure
            fig = fig.figure
        handles, labels = [], []
        for ax in fig.axes:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels and not l.startswith("_"):
                    handles.append(h)
                    labels.append(l)
        kw.setdefault("ncols", min(len(labels), 4) or 1)
        loc = "outside lower center" if fig.get_layout_engine() is not None else "lower center"
        return fig.legend(handles, labels, loc=loc, **kw)
    raise ConfigError(f"where must be 'right' or 'below' (got {where!r})")


def legend_below(ax, offset: float | None = None, **kw):
    """A legend under one axes, clear of its tick labels and x label: its top sits ``offset`` inches
    below the axes (default 0.55 with an x label, 0.3 without), centred, at 9 pt at least.
    Constrained layout makes room for it."""
    from matplotlib.transforms import ScaledTranslation
    if offset is None:
        offset = 0.55 if ax.get_xlabel() else 0.3
    kw.setdefault("fontsize", 9)
    shift = ScaledTranslation(0.0, -offset, ax.figure.dpi_scale_trans)
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=ax.transAxes + shift,
                     borderaxespad=0.0, **kw)


def log_ticks(ax, values=None, axis: str = "x", most: int = 4) -> None:
    """A log axis over a narrow range labelled in plain numbers, with no minor-tick labels:
    matplotlib's defaults label every minor tick of a range under a decade (``1.2×10⁰, 1.4×10⁰, …``),
    and those labels overprint. Ticks at (at most ``most``, evenly thinned) ``values``, or at
    1, 2 and 5 times the powers of ten when ``values`` is None."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter
    if axis not in ("x", "y"):
        raise ConfigError(f"axis must be 'x' or 'y' (got {axis!r})")
    a = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    if values is None:
        a.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    else:
        v = np.asarray(values, dtype=float)
        v = np.log10(np.unique(v[np.isfinite(v) & (v > 0)]))
        gap = (v[-1] - v[0]) / (1.2 * most) if v.size > 1 else 0.0  # labels this far apart do not touch
        keep = [v[0]] if v.size else []
        for x in v[1:]:
            if x - keep[-1] >= gap:
                keep.append(x)
        a.set_major_locator(FixedLocator(10 ** np.asarray(keep)))
    a.set_major_formatter(FuncFormatter(lambda x, _: f"{x:.0f}" if x >= 100 else f"{x:.3g}"))
    a.set_minor_formatter(NullFormatter())


def _np(a) -> np.ndarray:
    if isinstance(a, torch.Tensor):
        return a.detach().to("cpu", torch.float64).numpy()
    return np.asarray(a, dtype=float)


def band(ax, x, runs, label: str | None = None, color=None, log: bool = False, **kw):
    """Plot the mean over runs with a +-1 std band. ``runs``: (R, T) values (runs first).

    ``log=True`` computes the band in log space (for losses spanning decades)."""
    x, y = _np(x), _np(runs)
    if y.ndim == 1:
        y = y[None]
    if log:
        ly = np.log10(np.clip(y, 1e-300, None))
        m, s = ly.mean(0), ly.std(0)
        mean, lo, hi = 10**m, 10 ** (m - s), 10 ** (m + s)
        ax.set_yscale("log")
    else:
        mean, s = y.mean(0), y.std(0)
        lo, hi = mean - s, mean + s
    (line,) = ax.plot(x, mean, label=label, color=color, **kw)
    if y.shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


def heatmap(ax, mat, row_labels=None, col_labels=None, vmin=0.0, vmax=1.0, annotate: bool = True,
            fmt: str = "{:.2f}", cmap: str = "viridis", colorbar: bool = True):
    """A matrix as an annotated heat map (e.g. the K x K feature attention map)."""
    m = _np(mat)
    im = ax.imshow(m, vmin=vmin, vmax=vmax, cmap=cmap)
    ax.grid(False)
    if row_labels is not None:
        ax.set_yticks(range(len(row_labels)), row_labels)
    if col_labels is not None:
        ax.set_xticks(range(len(col_labels)), col_labels)
    if annotate:
        mid = (vmin + vmax) / 2
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                ax.text(j, i, fmt.format(m[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if m[i, j] < mid else "black")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return im


def label(ax, x: str, y: str, title: str | None = None):
    """Axis labels with symbols and units, e.g. label(ax, 'step t', r'loss $\\mathcal{L}$')."""
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if title:
        ax.set_title(title)
    return ax


def finish(fig) -> None:
    """Lay out (tight, unless the figure has a layout engine already) and show; closes the figure
    so notebooks do not keep them open."""
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    plt.show()
    plt.close(fig)
