"""A corpus of hostile command lines, generated from every experiment's declared PARAMS plus
hand-written ones, run in-process through ``cli.main``: each exits with status 2 and one error
line (never a traceback, never a computation), and creates no results folder."""
from __future__ import annotations

import pytest

from icl_lab import ConfigError, cli, registry
from icl_lab.params import constraints_of, is_declared

PENDING: set[str] = set()  # papers whose configs may still lack PARAMS (none)


def _text(v) -> str:
    if isinstance(v, (tuple, list)):
        return "[" + ",".join(_text(x) for x in v) + "]"
    return repr(v) if not isinstance(v, str) else v


def _generated():
    out = []
    for name, exp in sorted(registry.all_experiments().items()):
        if not is_declared(exp.config):
            continue
        for field, c in sorted(constraints_of(exp.config).items()):
            for bad in c.invalid()[:4]:
                text = _text(bad)
                if isinstance(bad, str) and bad.strip().lower() in ("none", "null", ""):
                    continue
                try:  # invalid as a Python value but valid as typed text ("N_values=5" is [5])
                    c.parse(field, text)
                    continue
                except ConfigError:
                    pass
                out.append(["run", name, "--dry-run", "--set", f"{field}={text}"])
    return out


HAND = [
    ["run", "common.context_length", "--set", "seed=18446744073709551615"],
    ["run", "common.context_length", "--set", "seed=1e20"],
    ["run", "common.context_length", "--set", "test_seed=2**70"],
    ["run", "common.context_length", "--set", "batch=1e9"],
    ["run", "common.context_length", "--set", "N_values=[1000000000]"],
    ["run", "common.context_length", "--set", "steps=1e12"],
    ["run", "common.context_length", "--set", "lr=1e308"],
    ["run", "common.context_length", "--set", "seed=" + "9" * 5000],
    ["run", "common.context_length", "--set", "N_values=" + "[" * 100_000],
    ["run", "common.context_length", "--seeds", "1000000", "--seeds-per-task", "1", "--dry-run"],
    ["run", "common.context_length", "--results", ""],
    ["run", "common.context_length", "--results", "x" * 300],
    ["run", "common.context_length", "--max-memory", "lots"],
    ["run", "common.context_length", "--max-memory", "1K", "--dry-run"],
    ["run", "common.context_length", "--executor", "dask", "--address", "not an address"],
    ["run", "common.context_length", "--device", "quantum"],
    ["run", "nope.nothing"], ["show", "nope"], ["run", "../../etc"],
]
ENV = [("ICL_LAB_THREADS", "abc"), ("ICL_LAB_THREADS", "100000"), ("ICL_LAB_SCALE", "huge"),
       ("ICL_LAB_DEVICE", "quantum"), ("ICL_LAB_EXPERIMENTS", "../../etc"), ("ICL_LAB_MAX_MEMORY", "-3"),
       ("ICL_LAB_RESULTS", "y" * 300), ("ICL_LAB_LOCK_STALE", "never")]
CORPUS = _generated() + HAND


def test_the_corpus_is_large():
    assert len(CORPUS) + len(ENV) >= 200


def test_hostile_command_lines_exit_2_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICL_LAB_RESULTS", str(tmp_path / "results"))
    bad = []
    for argv in CORPUS:
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = e.code
        err = capsys.readouterr().err.strip().splitlines()
        if code != 2 or not err or not err[-1].startswith("icl-lab") or "Traceback" in "\n".join(err):
            bad.append((argv[:5], code, err[-1:] if err else None))
        if (tmp_path / "results").exists():
            bad.append((argv[:5], "created the results folder"))
            (tmp_path / "results").rmdir()
    assert not bad, bad[:8]
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("var,value", ENV)
def test_bad_environment_is_one_line(monkeypatch, capsys, var, value, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(var, value)
    assert cli.main(["run", "common.context_length", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("icl-lab: error:"), err


@pytest.mark.parametrize("name", sorted(registry.all_experiments()))
def test_every_config_declares_params(name):
    exp = registry.all_experiments()[name]
    if name.split(".")[0] in PENDING and not is_declared(exp.config):
        pytest.xfail("being declared on another branch")
    assert is_declared(exp.config), f"{exp.config.__name__} ({name}) declares no PARAMS for every field"


@pytest.mark.parametrize("reply", [b"", b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"\x00\xff" * 64],
                         ids=["silent", "http", "garbage"])
def test_address_of_a_service_that_is_not_a_scheduler_fails_fast_with_one_line(reply):
    """A port that accepts and then stays silent, answers HTTP, or answers bytes that are not Dask's
    protocol: one ConfigError naming the address within the connection timeout, never a hang."""
    import socket
    import threading
    import time

    from icl_lab import sweep

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    port = srv.getsockname()[1]
    stop = threading.Event()

    def serve():
        conns = []
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            conns.append(c)
            if reply:
                try:
                    c.sendall(reply)
                except OSError:
                    pass
        for c in conns:
            c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        t0 = time.monotonic()
        with pytest.raises(ConfigError) as e:
            sweep.connect(f"tcp://127.0.0.1:{port}", timeout=2)
        assert time.monotonic() - t0 < 30
        msg = str(e.value)
        assert msg.startswith("address:") and "\n" not in msg
    finally:
        stop.set()
        t.join(timeout=5)
        srv.close()
