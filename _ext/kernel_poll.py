"""A missed wake-up in the asyncio kernel client, worked around for the book's notebook executions.

nbclient waits for a cell's ``execute_reply`` with ``await kc.shell_channel.get_msg(timeout=<cell
timeout>)``. Now and then (seen on cells that create ipywidgets, under load: jupyter/nbclient#312) the
event loop misses the socket's readiness, so the kernel sits idle with its reply sent while the
client waits out the whole cell timeout (traced with gdb on 2026-11-26: the kernel idle after the
window theory page's live-widget cell, the client in ``epoll_wait``). pyzmq's poller checks the
socket itself when a poll times out, so polling in slices of at most a second reads a missed reply
within that second. :func:`install` makes the async channel's ``get_msg`` do that; the overall
timeout is unchanged. Used by ``tools/execute_parallel.py`` and, for the notebooks the book build
executes itself, by ``_ext/icl_book.py``.
"""
from __future__ import annotations

import time
from queue import Empty

SLICE = 1.0  # seconds


def install() -> None:
    from jupyter_client.channels import AsyncZMQSocketChannel

    if getattr(AsyncZMQSocketChannel.get_msg, "_sliced", False):
        return
    original = AsyncZMQSocketChannel.get_msg

    async def get_msg(self, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await original(self, SLICE if left is None else min(SLICE, left))
            except Empty:
                if left is not None and left <= SLICE:
                    raise

    get_msg._sliced = True
    AsyncZMQSocketChannel.get_msg = get_msg
