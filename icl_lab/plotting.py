"""One figure style for the whole book, and the few plot helpers every chapter needs."""
from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch

STYLE = {
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "image.cmap": "viridis",
}
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]


def use_style() -> None:
    """Apply the book's matplotlib style (colour-blind-safe cycle, light grid)."""
    matplotlib.rcParams.update(STYLE)
    matplotlib.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=COLORS)


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
    """Tight layout and show (closes the figure so notebooks do not keep them open)."""
    fig.tight_layout()
    plt.show()
    plt.close(fig)
