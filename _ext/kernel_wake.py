"""The kernel client's missed replies, prevented at their cause: installed by ``tools/execute_parallel.py``
(the book's pre-execution) and, for the notebooks the book build executes itself, by ``_ext/icl_book.py``.

jupyter_client's ``Session.send`` writes to an asyncio socket through a plain shadow of it, and a raw send
consumes the socket's edge-triggered wake-up, so a reply that landed just then sat unread while the event
loop slept. nbclient sends on the shell socket while it waits for a cell's reply when the cell shows output
inside an Output widget (its widget mimic sends the outputs back), and such a notebook then waited out the
whole cell timeout with its kernel idle (jupyter/jupyter_client#1059, jupyter/nbclient#312).
"""
from __future__ import annotations


def _wake(sock) -> None:
    import zmq

    if not sock.closed:
        sock.get(zmq.EVENTS)  # pyzmq's asyncio socket: reads its events and schedules the receives waiting


def wake_after_session_sends() -> None:
    """After ``Session.send`` / ``send_raw`` on a ``zmq.asyncio`` socket, let the socket's own asyncio
    wrapper look at its events, as pyzmq does after every send of its own.

    jupyter_client sends on an asyncio socket through ``zmq.Socket.shadow(socket.underlying)``. Any
    operation on a zmq socket processes the commands libzmq has queued for it and consumes the edge of
    its file descriptor; pyzmq's asyncio socket therefore re-reads ``ZMQ_EVENTS`` after each of its own
    operations, but never learns of the shadow's. When a reply reaches the socket just before such a
    send, the descriptor's edge is spent, the event loop is never woken, and the coroutine waiting for
    that reply (nbclient's ``get_msg`` for an ``execute_reply``) sleeps until its timeout while the
    reply waits in the socket. The re-check runs in the socket's event loop (from this thread or any
    other). Installing twice wraps once."""
    import zmq.asyncio
    from jupyter_client.session import Session

    for name in ("send", "send_raw"):
        original = getattr(Session, name)
        if getattr(original, "_wakes", False):
            continue

        def wrapped(self, stream, *args, _original=original, **kwargs):
            out = _original(self, stream, *args, **kwargs)
            loop = getattr(stream, "_current_loop", None) if isinstance(stream, zmq.asyncio.Socket) else None
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(_wake, stream)
            return out

        wrapped._wakes = True
        wrapped.__doc__, wrapped.__name__ = original.__doc__, original.__name__
        setattr(Session, name, wrapped)
