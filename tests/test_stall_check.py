"""tools/stall_check.py, the many-executions stall check: its checks of the arguments, its generated
widget notebook, and its test of an event loop whose epoll instance no longer watches a reader the loop
believes registered (a wake-up that can never come). The kernel-level watch it shares with
execute_parallel is tested in test_execute_parallel.py."""
from __future__ import annotations

import asyncio
import os
import selectors
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import stall_check  # noqa: E402

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("args, message", [
    (["--runs", "0"], "stall_check: --runs must be >= 1"),
    (["--jobs", "0"], "stall_check: --jobs must be >= 1"),
    (["--stall", "400", "--timeout", "300"], "stall_check: --stall must be > 0 and below --timeout"),
    (["--widget-cells", "-1"], "stall_check: --widget-cells must be >= 0"),
    (["no_such.ipynb"], "stall_check: no such notebook: no_such.ipynb"),
])
def test_bad_arguments_are_refused_in_one_line_before_any_kernel_starts(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(ROOT)
    assert stall_check.main([*args, "--logs", str(tmp_path / "logs")]) == 2
    assert capsys.readouterr().err.strip() == message
    assert not (tmp_path / "logs").exists()


def test_the_widget_notebook_has_a_setup_cell_and_one_live_widget_cell_each():
    path = stall_check.widget_notebook(Path(os.environ.get("TMPDIR", "/tmp")) / f"widgets-{os.getpid()}.ipynb", 3)
    try:
        nb = nbformat.read(path, as_version=4)
    finally:
        path.unlink()
    assert len(nb.cells) == 4 and "icl_lab.notebook.setup" in nb.cells[0].source
    assert all("widgets.live(_live" in c.source and "plt.show()" in c.source for c in nb.cells[1:])
    assert [c.source.count("k=") for c in nb.cells[1:]] == [1, 1, 1]
    for c in nb.cells:
        compile(c.source, "<cell>", "exec")


@pytest.mark.skipif(not hasattr(selectors, "EpollSelector"), reason="epoll (Linux) only")
def test_a_reader_the_loop_believes_registered_but_epoll_does_not_watch_is_reported_and_never_wakes():
    """A file descriptor closed behind the loop's back leaves the loop's record of it; a new descriptor
    with the same number then 'registered' again is never added to epoll (same events: asyncio only
    updates its record), so data on it wakes nobody. loop_registrations names such descriptors."""
    loop = asyncio.SelectorEventLoop(selectors.EpollSelector())
    try:
        r1, w1 = os.pipe()
        loop.add_reader(r1, lambda: None)
        assert loop_registrations_ok(loop)
        os.close(r1)  # closed without remove_reader: epoll forgets it, the loop does not
        os.close(w1)
        r2, w2 = os.pipe()
        assert r2 == r1  # the lowest free number comes back
        got = loop.create_future()
        loop.add_reader(r2, lambda: got.done() or got.set_result(os.read(r2, 10)))
        report = stall_check.loop_registrations(loop)
        assert report["unwatched"] == [r2], report
        os.write(w2, b"reply")
        with pytest.raises(asyncio.TimeoutError):  # ready to read, and the loop is never told
            loop.run_until_complete(asyncio.wait_for(got, 0.5))
        loop.remove_reader(r2)
        os.close(r2)
        os.close(w2)
    finally:
        loop.close()


def loop_registrations_ok(loop) -> bool:
    report = stall_check.loop_registrations(loop)
    return report["unwatched"] == [] and set(report["selector"]) == set(report["epoll"])
