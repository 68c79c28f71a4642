"""The book's pre-execution survives a kernel that dies or stops answering: the notebook runs once more
with a warning, and a second failure fails naming the notebook."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(240)


def _notebook(path: Path, code: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


# A cell after which the kernel sits idle and never sends its reply, the first time only (the marker
# file): the stall of the book builds, made on purpose. The kernel drops this cell's execute_reply, so
# its main thread waits for the next request in epoll_wait while the client waits for the reply.
DROPS_ITS_REPLY = """\
import pathlib
m = pathlib.Path({marker!r})
if not m.exists():
    m.write_text("x")
    k = get_ipython().kernel
    send = k.session.send

    def drop_the_reply(stream, msg_or_type, *args, **kwargs):
        if msg_or_type == "execute_reply":
            del k.session.send  # only this one
            return {{"content": {{"status": "ok"}}}}
        return send(stream, msg_or_type, *args, **kwargs)

    k.session.send = drop_the_reply
print("ran")
"""


def _run(tmp_path, *notebooks):
    return subprocess.run([sys.executable, str(ROOT / "tools" / "execute_parallel.py"), str(tmp_path / "cache"),
                           "--jobs", "2", "--timeout", "60", "--stall", "5", "--notebooks", *map(str, notebooks)],
                          capture_output=True, text=True, timeout=200, stdin=subprocess.DEVNULL)


def test_a_killed_or_stalled_kernel_runs_its_notebook_once_more_and_a_second_failure_fails_naming_it(tmp_path):
    """One pre-execution of four notebooks (one run, to start the kernels once): a notebook whose kernel
    is killed mid-run the first time runs once more with a warning and finishes; so does one whose kernel
    stops answering the first time (it drops a cell's reply and sits idle): the watch notices it after
    --stall seconds (5), long before the cell timeout (60 s, an hour in a paper-scale build), keeps the
    evidence (every thread's system call: the kernel's main thread waiting for a request in epoll; the
    client's sockets: no reply waiting there) and stops that kernel; a notebook whose kernel dies every
    time fails the build naming it; a notebook that runs through is not repeated."""
    marker, dropped = tmp_path / "died-once", tmp_path / "dropped-once"
    dies_once = _notebook(tmp_path / "dies_once.ipynb", (
        "import os, pathlib, signal\n"
        f"m = pathlib.Path({str(marker)!r})\n"
        "if not m.exists():\n    m.write_text('x')\n    os.kill(os.getpid(), signal.SIGKILL)\nprint('ran')"))
    stalls_once = _notebook(tmp_path / "stalls_once.ipynb", DROPS_ITS_REPLY.format(marker=str(dropped)))
    always = _notebook(tmp_path / "always_dies.ipynb", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    fine = _notebook(tmp_path / "fine.ipynb", "print(1 + 1)")
    r = _run(tmp_path, dies_once, stalls_once, always, fine)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "WARNING" in r.stdout and "dies_once.ipynb" in r.stdout and "executing it once more" in r.stdout
    assert marker.exists() and "dies_once.ipynb: finished" in r.stdout
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("execute_parallel: failed twice:") and "always_dies.ipynb" in last and "dies_once" not in last
    assert "stalls_once" not in last and r.stdout.count("fine.ipynb: started") == 1 and "fine.ipynb: finished" in r.stdout
    # the stall: noticed, stopped well before the cell timeout, run once more
    assert dropped.exists() and "stalls_once.ipynb: its kernel sat idle for" in r.stdout, r.stdout
    failed = re.search(r"stalls_once.ipynb: FAILED in (\d+) s", r.stdout)
    assert failed and int(failed.group(1)) < 60 and "stalls_once.ipynb: finished" in r.stdout, r.stdout
    (evidence,) = (tmp_path / "cache" / "stalls").iterdir()
    kernel = (evidence / "threads.txt").read_text().split("client:")[0]
    assert any(line.endswith((" main: epoll_wait", " main: epoll_pwait")) for line in kernel.splitlines()), kernel
    probe = json.loads((evidence / "client-sockets.json").read_text())
    assert [c["shell"]["message_waiting"] for c in probe.values()] == [False], probe

def test_a_negative_stall_window_is_refused_before_any_kernel_starts(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "execute_parallel.py"), str(tmp_path / "cache"),
                        "--stall", "-1", "--notebooks", "none.ipynb"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == "execute_parallel: --stall must be >= 0", r.stderr


def test_a_reply_that_lands_just_before_a_session_send_on_its_socket_wakes_the_waiting_client(monkeypatch):
    """The stall's cause, reproduced without a kernel: a client waits for a reply on an asyncio DEALER
    (nbclient waiting for a cell's execute_reply) while its loop is busy, the reply lands, and then
    jupyter_client's Session.send writes on the same socket (nbclient's Output-widget mimic sending a
    comm_msg). The send goes through a shadow socket and spends the edge of the socket's descriptor, so
    the waiting poll would sleep until its timeout (here 10 s, the cell timeout in a build) with the
    reply in the socket. With execute_parallel.wake_after_session_sends it returns at once."""
    import asyncio
    import threading
    import time

    import zmq
    import zmq.asyncio
    from jupyter_client.session import Session

    sys.path.insert(0, str(ROOT / "tools"))
    import execute_parallel

    monkeypatch.setattr(Session, "send", Session.send)  # restored after the test
    monkeypatch.setattr(Session, "send_raw", Session.send_raw)
    execute_parallel.wake_after_session_sends()
    send = Session.send
    execute_parallel.wake_after_session_sends()  # twice: wraps once
    assert Session.send is send and Session.send._wakes

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    port = router.bind_to_random_port("tcp://127.0.0.1")
    got = []

    def kernel():  # replies to the request, then receives the comm_msg
        ident, _ = router.recv_multipart()
        router.send_multipart([ident, b"execute_reply"])
        if router.poll(10000):
            got.append(router.recv_multipart()[-1])

    server = threading.Thread(target=kernel, daemon=True)
    server.start()

    async def client():
        actx = zmq.asyncio.Context()
        dealer = actx.socket(zmq.DEALER)
        dealer.linger = 0
        dealer.connect(f"tcp://127.0.0.1:{port}")
        try:
            await dealer.send(b"execute_request")
            waiting = asyncio.ensure_future(dealer.poll(10000))  # nbclient's get_msg(timeout=...)
            await asyncio.sleep(0)
            time.sleep(0.3)  # the loop is busy (processing output): the reply lands meanwhile
            Session(key=b"").send(dealer, "comm_msg", {"data": {}})
            t = time.monotonic()
            ready = await waiting
            return ready, time.monotonic() - t, await dealer.recv()
        finally:
            dealer.close()
            actx.term()

    ready, waited, reply = asyncio.run(client())
    server.join(15)
    router.close()
    ctx.term()
    assert ready and reply == b"execute_reply" and waited < 2, waited
    assert got and got[0].startswith(b"{"), got  # the comm_msg's content frame reached the kernel
