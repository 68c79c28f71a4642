"""plotting.log_ticks: plain-number labels on narrow log axes, thinned so that they cannot overprint."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from icl_lab import plotting  # noqa: E402
from icl_lab.params import ConfigError  # noqa: E402


def _labels(ax, axis="x"):
    ax.figure.canvas.draw()
    a = ax.xaxis if axis == "x" else ax.yaxis
    major = [t.get_text() for t in a.get_majorticklabels() if t.get_text()]
    minor = [t.get_text() for t in a.get_minorticklabels() if t.get_text()]
    return major, minor


def test_values_become_plain_labels_and_minor_labels_vanish():
    fig, ax = plotting.figure(1)
    x = np.array([1.18, 1.43, 1.82, 2.0])
    ax.plot(x, x)
    plotting.log_ticks(ax, x)
    major, minor = _labels(ax)
    assert ax.get_xscale() == "log"
    assert minor == []
    assert "1.18" in major and "\\times" not in "".join(major)
    # 1.82 and 2.0 are closer than 1/(1.2 * 4) of the log range apart: the later one is dropped
    assert len(major) == 3


def test_y_axis_default_ticks_and_large_values():
    fig, ax = plotting.figure(1)
    ax.plot([1, 2], [150, 650])
    plotting.log_ticks(ax, None, "y")
    major, minor = _labels(ax, "y")
    assert ax.get_yscale() == "log" and minor == []
    assert "200" in major and "500" in major  # 1, 2 and 5 times the powers of ten, whole numbers


def test_bad_axis_is_refused():
    fig, ax = plotting.figure(1)
    with pytest.raises(ConfigError, match="axis"):
        plotting.log_ticks(ax, [1, 2], "z")
