"""Execute the book's notebooks a few at a time into Jupyter Book's execution cache.

    python tools/execute_parallel.py _build/book/_build/.jupyter_cache --jobs 2

``jupyter-book build`` with ``execute_notebooks: cache`` executes notebooks one after the other and
re-uses a cached execution whenever a notebook's code is unchanged. This script fills that same
cache (jupyter-cache, the library Jupyter Book uses) with several kernels at once, so the build
that follows only reads the outputs. Notebooks whose metadata forces execution on every build
(``mystnb: execution_mode: force``: the synthesis, which reads every chapter's ledger, and the
reproduction page) are left to the build. Each kernel inherits the environment (``ICL_LAB_SCALE``,
``ICL_LAB_THREADS``). The longest notebooks start first (their last measured time, else the order
of the table of contents). A notebook that fails (its kernel died or stopped answering, which a loaded
machine can cause) is executed once more, alone, with a warning in the log; a second failure exits non-zero
naming the notebook and showing the end of its traceback.

The client's missed replies are prevented at their cause (:func:`wake_after_session_sends`):
jupyter_client's ``Session.send`` writes to an asyncio socket through a plain shadow of it, and a raw
send consumes the socket's edge-triggered wake-up, so a reply that landed just then sat unread while
the event loop slept. nbclient sends on the shell socket while it waits for a cell's reply when the
cell shows output inside an Output widget (its widget mimic sends the outputs back: the live-widget
cells of the window theory, nonlinear and selectors pages), and those pages stalled until the cell
timeout.

Should a notebook stall for any other reason, a kernel that sits idle while its notebook waits for a
reply (the kernel's main thread waiting for a request in ``epoll_wait``, no CPU used, the client
waiting for the cell's ``execute_reply``) is noticed after ``--stall`` seconds (default 120) by a watch in each
worker, whatever the scale: a computing kernel uses CPU, a stalled one does not. The watch writes the
evidence into ``<cache>/stalls/<notebook>-<time>/`` (every kernel and client thread with the system
call it waits in, ``py-spy dump`` of both when py-spy is installed, and whether the reply is already
waiting in the client's socket), says so in the log and stops that kernel, so the notebook's rerun
starts at once instead of after the cell timeout (an hour at book and paper scale).

It prints one line when a notebook starts and one when it ends (with its seconds), so a long build is
never silent. Each kernel's log line "Kernel is running over TCP without encryption" (ipykernel's
kernelapp warns at every start when the transport is TCP: the kernels here are local, started by
jupyter_client on 127.0.0.1) is dropped from the kernels' stderr; every other line passes through.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
from kernel_wake import wake_after_session_sends  # noqa: E402  (also installed by the book build: _ext/icl_book.py)


def forced(path: Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    return nb.metadata.get("mystnb", {}).get("execution_mode") == "force"


# the one known-harmless line a kernel logs at every start (ipykernel.kernelapp.IPKernelApp.init_sockets)
HARMLESS = (b"Kernel is running over TCP without encryption.",)


def filter_stderr(harmless=HARMLESS):
    """Route this process's stderr (file descriptor 2, which the kernels started from here inherit)
    through a pipe that drops the lines containing one of ``harmless`` and passes every other line
    on. Returns a function that restores stderr and forwards what is left."""
    sys.stderr.flush()
    saved = os.dup(2)
    read, write = os.pipe()
    os.dup2(write, 2)
    os.close(write)

    def pump():
        with os.fdopen(read, "rb") as src:
            for line in src:
                if not any(h in line for h in harmless):
                    os.write(saved, line)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()

    def restore():
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe closes once no process of ours holds its write end any more
        thread.join(timeout=5)

    return restore


# system calls a thread waits in, by number (Linux; /proc/<pid>/task/<tid>/syscall), for the evidence;
# EPOLL: those of an event loop waiting for its next event (an idle kernel's main thread)
SYSCALLS = {
    "x86_64": {0: "read", 1: "write", 7: "poll", 23: "select", 35: "nanosleep", 61: "wait4", 202: "futex",
               230: "clock_nanosleep", 232: "epoll_wait", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait",
               441: "epoll_pwait2"},
    "aarch64": {22: "epoll_pwait", 63: "read", 64: "write", 72: "pselect6", 73: "ppoll", 98: "futex",
                101: "nanosleep", 115: "clock_nanosleep", 260: "wait4", 441: "epoll_pwait2"},
}
EPOLL = {"epoll_wait", "epoll_pwait", "epoll_pwait2"}
IDLE_CPU = 0.05  # CPU seconds a kernel may use over the whole --stall window and still count as idle


def syscall_name(pid: int, tid: int | None = None) -> str | None:
    """The system call thread ``tid`` of process ``pid`` (its main thread by default) is in, by name;
    ``running`` when it is not in one, None when it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/task/{tid or pid}/syscall").read_text().split()
    except OSError:
        return None
    if not text or text[0] == "running":
        return "running"
    try:
        nr = int(text[0])
    except ValueError:
        return None
    return SYSCALLS.get(platform.machine(), {}).get(nr, f"syscall {nr}")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` (all its threads), or None when it has gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def threads(pid: int) -> list[str]:
    """One line per thread of process ``pid``: ids, name (``main`` for the main thread), the system call
    it waits in."""
    lines = []
    try:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return [f"process {pid}: gone"]
    for tid in tids:
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            continue
        lines.append(f"{pid}/{tid} {'main' if tid == pid else repr(name)}: {syscall_name(pid, tid)}")
    return lines


def kernel_children(pid: int | None = None) -> list[int]:
    """The ipykernel processes started by process ``pid`` (this one by default)."""
    pid = pid or os.getpid()
    kids = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            kids.update(int(k) for k in Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
    except OSError:
        return []
    out = []
    for k in sorted(kids):
        try:
            if b"ipykernel" in Path(f"/proc/{k}/cmdline").read_bytes():
                out.append(k)
        except OSError:
            pass
    return out


def _py_spy(pid: int, out: Path) -> None:
    spy = shutil.which("py-spy")
    if spy is None:
        out.write_text("py-spy is not installed\n")
        return
    try:
        r = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
        out.write_text(r.stdout + r.stderr)
    except (OSError, subprocess.SubprocessError) as e:
        out.write_text(f"py-spy failed: {e}\n")


def client_sockets(timeout: float = 10) -> dict:
    """What this process's kernel clients hold: for each live asyncio client, whether a message is
    waiting in its shell and IOPub sockets (read inside the client's own event loop, which a call from
    this thread wakes). A reply waiting there while the client sleeps is a wake-up the loop missed; no
    reply there means the kernel never sent it."""
    import gc

    import zmq
    from jupyter_client.asynchronous.client import AsyncKernelClient

    out = {}
    for kc in [o for o in gc.get_objects() if isinstance(o, AsyncKernelClient)]:
        shell = getattr(kc._shell_channel, "socket", None) if kc._shell_channel else None
        loop = getattr(shell, "_current_loop", None)
        if shell is None or loop is None or loop.is_closed():
            continue
        done, box = threading.Event(), {}

        def probe(kc=kc, box=box, done=done):
            for name in ("shell", "iopub"):
                ch = getattr(kc, f"_{name}_channel")
                sock = getattr(ch, "socket", None) if ch else None
                if sock is not None:
                    raw = getattr(sock, "_shadow_sock", sock)
                    box[name] = {"message_waiting": bool(raw.get(zmq.EVENTS) & zmq.POLLIN),
                                 "pending_receives": len(getattr(sock, "_recv_futures", None) or ())}
            done.set()

        loop.call_soon_threadsafe(probe)
        out[kc.session.session] = box if done.wait(timeout) else "the client's event loop did not run a probe"
    return out


class StallWatch(threading.Thread):
    """Watches the kernels this process started: a kernel whose main thread waits for a request
    (``epoll_wait``) and that uses no CPU for ``stall`` seconds while its notebook is being executed
    has stopped answering. ``on_stall(pid, seconds)`` is called once for it."""

    def __init__(self, stall: float, on_stall, interval: float | None = None):
        super().__init__(daemon=True, name="stall-watch")
        self.stall, self.on_stall = stall, on_stall
        self.interval = interval or max(0.2, min(5.0, stall / 10))
        self.done = threading.Event()

    def run(self):
        idle: dict[int, tuple[float, float]] = {}  # pid -> (cpu when it became idle, since)
        fired = set()
        while not self.done.wait(self.interval):
            now = time.monotonic()
            for pid in kernel_children():
                cpu, call = cpu_seconds(pid), syscall_name(pid)
                if cpu is None or pid in fired:
                    continue
                waiting = call is None or call in EPOLL  # unreadable: the CPU time alone decides
                start = idle.get(pid)
                if not waiting or start is None or cpu - start[0] > IDLE_CPU:
                    idle[pid] = (cpu, now)
                elif now - start[1] >= self.stall:
                    fired.add(pid)
                    self.on_stall(pid, now - start[1])

    def stop(self):
        self.done.set()
        self.join(timeout=10)


def stall_evidence(kernel: int, folder: Path) -> Path:
    """Write what a stalled kernel and this client are doing into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["kernel:", *threads(kernel), "client:", *threads(os.getpid())]
    (folder / "threads.txt").write_text("\n".join(lines) + "\n")
    _py_spy(kernel, folder / "py-spy-kernel.txt")
    _py_spy(os.getpid(), folder / "py-spy-client.txt")
    try:
        probe = client_sockets()
    except Exception as e:  # noqa: BLE001 - evidence, never fatal
        probe = f"{type(e).__name__}: {e}"
    (folder / "client-sockets.json").write_text(json.dumps(probe, indent=1, default=str) + "\n")
    return folder


def _execute(args):
    cache_path, pk, uri, timeout, stall = args
    wake_after_session_sends()  # no reply is left unread (see the module's docstring)
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ProcessData

    def on_stall(pid, seconds):
        folder = Path(cache_path) / "stalls" / f"{Path(uri).stem}-{time.strftime('%Y%m%dT%H%M%S')}"
        stall_evidence(pid, folder)
        print(f"execute_parallel: WARNING: {_name(uri)}: its kernel sat idle for {seconds:.0f} s with a cell "
              f"waiting for its reply (a stall); evidence in {_name(folder)}; stopping that kernel", flush=True)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    watch = StallWatch(stall, on_stall) if stall > 0 else None
    if watch is not None:
        watch.start()
    print(f"  {_name(uri)}: started", flush=True)
    t = time.perf_counter()
    try:
        code, _ = ExecutionWorkerLocalMProc()(ProcessData(pk, uri, get_cache(cache_path), timeout, False))
    finally:
        if watch is not None:
            watch.stop()
    return uri, code, time.perf_counter() - t


def _name(uri) -> str:
    path = Path(uri).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", help="the build's jupyter-cache folder, e.g. _build/book/_build/.jupyter_cache")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--stall", type=float, default=120,
                    help="seconds a kernel may sit idle with a cell pending before it counts as stalled (0: never)")
    ap.add_argument("--notebooks", nargs="+", type=Path, help="these notebooks instead of the table of contents'")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        print("execute_parallel: --jobs must be >= 1", file=sys.stderr)
        return 2
    if args.stall < 0:
        print("execute_parallel: --stall must be >= 0", file=sys.stderr)
        return 2
    from jupyter_cache import get_cache

    cache = get_cache(args.cache)
    if args.notebooks:
        notebooks = args.notebooks
    else:  # imported here, not at the top: the spawned workers re-import this module, and the library's import
        from icl_lab.reports import toc_notebooks  # (torch) would add seconds to every worker's start

        notebooks = toc_notebooks()
    todo = []
    for nb in notebooks:
        if forced(nb):
            continue
        rec = cache.add_nb_to_project(str(nb))
        if cache.get_cached_project_nb(rec.pk) is None:  # no cached execution of this exact code
            todo.append((rec.pk, str(nb)))
    if not todo:
        print("execute_parallel: every notebook's execution is cached")
        return 0
    # the last measured time at this scale ($ICL_LAB_SCALE), else at any scale; paths as given or absolute
    last, scale = {}, os.environ.get("ICL_LAB_SCALE", "book")
    timings = ROOT / "benchmarks" / "results" / "book.json"
    if timings.exists():
        for r in json.loads(timings.read_text()).get("notebooks", []):
            key, secs = str((ROOT / r["notebook"]).resolve()), r.get("wall_seconds") or 0
            rank = (r.get("scale") == scale, secs)
            last[key] = max(last.get(key, (False, 0)), rank)
    todo.sort(key=lambda t: tuple(-v for v in last.get(str(Path(t[1]).resolve()), (False, 0))))
    print(f"execute_parallel: {len(todo)} notebook(s), {args.jobs} at a time", flush=True)
    restore = filter_stderr()
    try:
        return _run(args, cache, todo)
    finally:
        restore()


def _run(args, cache, todo) -> int:
    pk_of = {uri: pk for pk, uri in todo}
    failed = []
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for uri, code, secs in pool.imap_unordered(_execute, [(args.cache, pk, uri, args.timeout, args.stall) for pk, uri in todo],
                                                    chunksize=1):
            print(f"  {_name(uri)}: {'finished' if code == 0 else 'FAILED'} in {secs:.0f} s", flush=True)
            if code != 0:
                failed.append((pk_of[uri], uri))
    still = []
    for pk, uri in failed:  # once more, alone: a kernel that died under load usually runs through
        print(f"execute_parallel: WARNING: {_name(uri)} failed (an error, or its kernel died or stopped "
              "answering); executing it once more, alone", flush=True)
        _, code, secs = _execute((args.cache, pk, uri, args.timeout, args.stall))
        print(f"  {_name(uri)}: {'finished' if code == 0 else 'FAILED again'} in {secs:.0f} s", flush=True)
        if code != 0:
            still.append((pk, uri))
    for pk, uri in still:
        tb = cache.get_project_record(pk).traceback or "(no traceback recorded)"
        print(f"execute_parallel: {_name(uri)} failed twice; the end of its traceback:\n{tb[-3000:]}", file=sys.stderr)
    if still:
        print(f"execute_parallel: failed twice: {', '.join(_name(u) for _, u in still)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
