"""Execute notebooks many times, a few at a time, and catch a kernel execution that stops answering.

    nice -n 15 .venv/bin/python tools/stall_check.py chapters/window/window_smoother.ipynb chapters/intro.ipynb \\
        chapters/common_setup.ipynb chapters/intro.ipynb --widget-cells 10 --inherit --no-debug \\
        --runs 200 --jobs 2 --logs _build/stall

(the book's pre-execution as ``make book-ci`` runs it: two kernels at a time, their stderr through
``execute_parallel``'s filter, no debug logs; the window theory page, whose live-widget cell stalled,
every fifth run, and a generated notebook of ten such cells).

The book's pre-execution (``tools/execute_parallel.py``) once in a while sat in a cell that never
returned: the kernel idle, the client waiting for its ``execute_reply``. This script executes the
given notebooks (round-robin, ``--runs`` executions in all) the way the pre-execution does: nbclient
through ``jupyter_cache``'s settings (cell timeout, errors stop the notebook), ``--jobs`` worker
processes that each execute one notebook after another in the same process, the scale from
``$ICL_LAB_SCALE`` (``ci`` when unset), with the pre-execution's fix of the client's missed replies
(``execute_parallel.wake_after_session_sends``) unless ``--without-fix``, which reproduces the stall:
without it the window theory page's live-widget cell stalled in 3 of 18 runs on two loaded cores,
each time with the execute_reply waiting unread in the client's shell socket.

A watchdog thread in each worker notices a kernel that sits idle while a cell waits for its reply
(``execute_parallel``'s criterion: the kernel's main thread waiting for a request in epoll and no CPU
used for ``--stall`` seconds) and then keeps the evidence in ``<logs>/<run>/``: every kernel and
client thread with the system call it waits in, ``py-spy dump`` of both, a probe of the client's
shell and IOPub sockets run inside the client's event loop (is the reply already waiting there? are
the event loop's registrations those its epoll instance watches?), the kernel's ``--debug`` log
(``PYTHONFAULTHANDLER`` on) and the client's debug log. It then kills the kernel, so the run ends as
a stall and the next one starts. The logs of a run that finished are deleted. The last line is a summary; the exit status is 1 if any execution stalled or failed.
``<logs>/summary.json`` holds every run (notebook, worker, seconds, outcome).
"""
from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from execute_parallel import (EPOLL, IDLE_CPU, cpu_seconds, filter_stderr, stall_evidence, syscall_name,  # noqa: E402
                              wake_after_session_sends)
RACE_GC_THRESHOLD = 20  # --race: a young-generation collection every 20 allocations (CPython's default: 700)
DEFAULT = ["chapters/window/window_smoother.ipynb", "chapters/intro.ipynb", "chapters/common_setup.ipynb"]

# one cell of the generated widget notebook: the window theory page's live cell in small (icl_lab.widgets.live
# over an ipywidgets control whose function shows a page-wide matplotlib figure: nbclient's Output-widget mimic
# then sends the kernel a comm_msg on the shell channel while the cell's reply is on its way, the race that
# stalled that page), plus a kernel-free slider
WIDGET_CELL = """\
def _live(a=1.0, k={k}):
    fig, axes = plt.subplots(1, 3, figsize=(7.0, 3.9), layout="constrained")
    for i, ax in enumerate(axes):
        ax.loglog(x, x ** (a + i) + k, label=f"a = {{a}}")
        ax.legend()
    print("drawn", a, k)
    plt.show()
    plt.close(fig)


widgets.live(_live, a=ipywidgets.FloatLogSlider(value=1.0, base=10, min=-2, max=1.5, step=0.25))
widgets.static_slider(lambda a: _fig(a), [0.5, 1.0, 2.0], name="$a$")
"""


def widget_notebook(path: Path, cells: int) -> Path:
    """Write a notebook of ``cells`` live-widget cells (see ``WIDGET_CELL``) to ``path``."""
    import nbformat

    setup = ("import matplotlib.pyplot as plt\nimport numpy as np\nimport ipywidgets\nimport icl_lab.notebook\n"
             "from icl_lab import widgets\n"
             "icl_lab.notebook.setup(scale=None, quiet=True)\nx = np.logspace(-2, 2, 400)\n\n\ndef _fig(a):\n"
             "    fig, ax = plt.subplots(figsize=(3, 2))\n    ax.plot([0, 1], [0, a])\n    return fig\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup)]
                                  + [nbformat.v4.new_code_cell(WIDGET_CELL.format(k=k)) for k in range(cells)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def _epoll_registered(loop) -> set[int] | None:
    """The file descriptors the loop's epoll instance watches (Linux: /proc/self/fdinfo), or None."""
    sel = getattr(getattr(loop, "_selector", None), "_selector", None)
    if sel is None or not hasattr(sel, "fileno"):
        return None
    try:
        lines = Path(f"/proc/self/fdinfo/{sel.fileno()}").read_text().splitlines()
    except OSError:
        return None
    return {int(line.split()[1]) for line in lines if line.startswith("tfd:")}


def loop_registrations(loop) -> dict:
    """The readers the asyncio loop believes it has and those its epoll instance really watches:
    a file descriptor in the first set only is one whose readiness the loop will never be told."""
    believed = set(loop._selector.get_map()) if hasattr(loop, "_selector") else set()
    real = _epoll_registered(loop)
    return {"selector": sorted(believed), "epoll": None if real is None else sorted(real),
            "unwatched": None if real is None else sorted(believed - real)}


def _socket_state(channel) -> dict:
    import zmq

    sock = getattr(channel, "socket", None)
    if sock is None:
        return {"socket": None}
    shadow = getattr(sock, "_shadow_sock", sock)
    return {"fd": getattr(sock, "_fd", None), "state": getattr(sock, "_state", None),
            "recv_futures": len(getattr(sock, "_recv_futures", None) or ()),
            "pollin_now": bool(shadow.get(zmq.EVENTS) & zmq.POLLIN)}


class Watchdog(threading.Thread):
    """Watches the kernel while a cell is pending: a kernel that sits idle (its main thread waiting for a
    request in epoll, no CPU used: ``execute_parallel``'s criterion) for ``stall`` seconds has stopped
    answering; the watchdog then keeps the evidence and kills it."""

    def __init__(self, client, loop, stall: float, logdir: Path):
        super().__init__(daemon=True, name="stall-watchdog")
        self.client, self.loop, self.stall, self.logdir = client, loop, stall, logdir
        self.cell, self.stalled = None, None
        self.done = threading.Event()

    def started(self, cell_index):
        self.cell = cell_index

    def finished(self):
        self.cell = None

    def _kernel_pid(self):
        proc = getattr(getattr(self.client.km, "provisioner", None), "process", None)
        return getattr(proc, "pid", None)

    def run(self):
        idle = None  # (cpu when the kernel was first seen idle with a cell pending, since)
        while not self.done.wait(0.5):
            kpid, cell = self._kernel_pid(), self.cell
            cpu = cpu_seconds(kpid) if kpid else None
            call = syscall_name(kpid) if kpid else None
            if cell is None or cpu is None or (call is not None and call not in EPOLL) \
                    or (idle is not None and cpu - idle[0] > IDLE_CPU):
                idle = None
                continue
            if idle is None:
                idle = (cpu, time.monotonic())
            elif time.monotonic() - idle[1] >= self.stall:
                self.stalled = cell
                self.evidence(kpid, time.monotonic() - idle[1])
                return

    def probe(self) -> dict:
        """Run in the client's event loop (woken by call_soon_threadsafe): what the sockets hold."""
        kc = self.client.kc
        state = {"loop": loop_registrations(self.loop)}
        if kc is not None:
            for name in ("shell_channel", "iopub_channel"):
                try:
                    state[name] = _socket_state(getattr(kc, name))
                except Exception as e:  # noqa: BLE001 - evidence, never fatal
                    state[name] = f"{type(e).__name__}: {e}"
        return state

    def evidence(self, kpid: int, seconds: float):
        stall_evidence(kpid, self.logdir)  # threads and their system calls, py-spy, the client's sockets
        note = {"cell": self.cell, "idle_seconds": round(seconds, 1), "kernel_pid": kpid, "client_pid": os.getpid()}
        got, box = threading.Event(), {}

        def probe():
            box["state"] = self.probe()
            got.set()

        self.loop.call_soon_threadsafe(probe)
        note["probe"] = box["state"] if got.wait(10) else "the client's event loop did not run the probe in 10 s"
        (self.logdir / "stall.json").write_text(json.dumps(note, indent=1, default=str))
        try:
            os.kill(kpid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def execute_one(args) -> dict:
    """Execute one notebook in this worker process; return its record."""
    run, notebook, timeout, stall, logs, fix, debug, keep, inherit, race = args
    extra = ["--debug"] if debug else []
    if race:  # a collection at almost every allocation, a thread switch every 10 us: races and finalizers
        # that run in the wrong thread at the wrong moment (a lock held) happen far more often
        extra.append("--IPKernelApp.exec_lines=import gc, sys; gc.set_threshold(%d, 2, 2); sys.setswitchinterval(1e-5)"
                     % RACE_GC_THRESHOLD)
        import gc

        gc.set_threshold(RACE_GC_THRESHOLD, 2, 2)
        sys.setswitchinterval(1e-5)
    if fix:  # as the book's pre-execution runs (execute_parallel.wake_after_session_sends)
        wake_after_session_sends()
    import asyncio

    import nbformat
    from jupyter_core.utils import ensure_event_loop
    from nbclient import NotebookClient

    path = Path(notebook).resolve()
    logdir = Path(logs) / f"run{run:04d}-{path.stem}"
    logdir.mkdir(parents=True, exist_ok=True)
    log = logging.getLogger(f"stall_check.{run}")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    handler = logging.FileHandler(logdir / "client.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, allow_errors=False, record_timing=False, log=log,
                            resources={"metadata": {"path": str(path.parent)}},
                            extra_arguments=extra)
    loop = ensure_event_loop()
    dog = Watchdog(client, loop, stall, logdir)
    client.on_cell_execute = lambda cell, cell_index: dog.started(cell_index)
    client.on_cell_executed = lambda cell, cell_index, execute_reply: dog.finished()
    dog.start()
    t = time.perf_counter()
    outcome, error = "ok", ""
    with open(logdir / "kernel.log", "wb") as klog:
        try:
            client.execute(**({} if inherit else {"stderr": klog, "stdout": klog}))
        except Exception as e:  # noqa: BLE001 - every failure is counted and kept
            outcome, error = "error", f"{type(e).__name__}: {str(e)[-2000:]}"
        finally:
            dog.done.set()
    if dog.stalled is not None:
        outcome = "stall"
    log.removeHandler(handler)
    handler.close()
    rec = {"run": run, "notebook": str(notebook), "worker": os.getpid(), "seconds": round(time.perf_counter() - t, 1),
           "outcome": outcome, "cell": dog.stalled, "error": error,
           "loop_after": loop_registrations(asyncio.get_event_loop())}
    if outcome == "ok" and not keep:
        shutil.rmtree(logdir, ignore_errors=True)
    else:
        (logdir / "record.json").write_text(json.dumps(rec, indent=1))
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", default=DEFAULT, help=f"default: {' '.join(DEFAULT)}")
    ap.add_argument("--runs", type=int, default=200, help="executions in all, round-robin over the notebooks")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (worker processes)")
    ap.add_argument("--timeout", type=int, default=300, help="nbclient's cell timeout, seconds (make book-ci's)")
    ap.add_argument("--stall", type=float, default=60,
                    help="seconds a kernel may sit idle with a cell pending before it counts as stalled")
    ap.add_argument("--logs", type=Path, default=ROOT / "_build" / "stall", help="where the evidence goes")
    ap.add_argument("--without-fix", dest="fix", action="store_false",
                    help="leave jupyter_client's Session.send as it is (it can leave a reply unread: the stall)")
    ap.add_argument("--keep", action="store_true", help="keep the logs of the executions that finished too")
    ap.add_argument("--inherit", action="store_true",
                    help="the kernels write to this process's stdout and stderr (through execute_parallel's "
                         "stderr filter), as in the book's pre-execution, instead of to each run's kernel.log")
    ap.add_argument("--widget-cells", type=int, default=0,
                    help="add a generated notebook of this many live-widget cells to the rotation")
    ap.add_argument("--race", action="store_true",
                    help="make races likelier in kernels and clients: garbage collections at almost every allocation "
                         "(finalizers then run in whatever thread allocates) and a thread switch every 10 us")
    ap.add_argument("--no-debug", dest="debug", action="store_false", help="no --debug log from the kernels")
    args = ap.parse_args(argv)
    for name in ("runs", "jobs", "timeout"):
        if getattr(args, name) < 1:
            print(f"stall_check: --{name} must be >= 1", file=sys.stderr)
            return 2
    if not 0 < args.stall < args.timeout:
        print("stall_check: --stall must be > 0 and below --timeout", file=sys.stderr)
        return 2
    missing = [nb for nb in args.notebooks if not Path(nb).is_file()]
    if missing:
        print(f"stall_check: no such notebook: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    if args.widget_cells < 0:
        print("stall_check: --widget-cells must be >= 0", file=sys.stderr)
        return 2
    args.logs.mkdir(parents=True, exist_ok=True)
    if args.widget_cells:
        args.notebooks = [*args.notebooks, str(widget_notebook(args.logs / "widget_cells.ipynb", args.widget_cells))]
    os.environ.setdefault("ICL_LAB_SCALE", "ci")
    os.environ.setdefault("ICL_LAB_THREADS", "1")
    os.environ.setdefault("ICL_LAB_PROGRESS", "0")
    os.environ["PYTHONFAULTHANDLER"] = "1"
    todo = [(i, str(args.notebooks[i % len(args.notebooks)]), args.timeout, args.stall, str(args.logs), args.fix,
             args.debug, args.keep, args.inherit,
             args.race) for i in range(args.runs)]
    print(f"stall_check: {args.runs} executions of {len(args.notebooks)} notebook(s), {args.jobs} at a time, "
          f"scale {os.environ['ICL_LAB_SCALE']}, {'with' if args.fix else 'WITHOUT'} the fix of Session.send", flush=True)
    records, t0 = [], time.perf_counter()
    summary = args.logs / "summary.json"
    restore = None

    def stop(signum, frame):  # kill PID / a background job: end the workers and keep the summary
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.inherit:
        restore = filter_stderr()
    try:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            for rec in pool.imap_unordered(execute_one, todo, chunksize=1):
                records.append(rec)
                extra = (f" cell {rec['cell']}" if rec["outcome"] == "stall"
                         else (f" {rec['error'][:200]}" if rec["error"] else ""))
                print(f"  [{len(records)}/{args.runs}] {rec['notebook']}: {rec['outcome']} in {rec['seconds']} s{extra}",
                      flush=True)
                summary.write_text(json.dumps(records, indent=1))
    except KeyboardInterrupt:  # the workers catch SIGTERM (nbclient's cleanup handler): end them for sure
        for child in mp.active_children():
            child.kill()
        print("stall_check: interrupted", flush=True)
    finally:
        if restore is not None:
            restore()
    counts = {k: sum(r["outcome"] == k for r in records) for k in ("ok", "stall", "error")}
    if len(records) < args.runs:
        print(f"stall_check: {args.runs - len(records)} execution(s) not finished", flush=True)
    print(f"stall_check: {len(records)} executions in {time.perf_counter() - t0:.0f} s: {counts['ok']} ok, "
          f"{counts['stall']} stalled, {counts['error']} failed (evidence in {args.logs})", flush=True)
    return 0 if counts["ok"] == len(records) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
