"""Root test configuration, applied to tests/ and to the notebooks that nbval collects from
chapters/: use the small `ci` scale, two torch threads and a non-interactive matplotlib backend,
unless the caller set them (ICL_LAB_SCALE=paper make test runs the notebooks at paper scale); and run
the longest files first."""
import json
import os
from pathlib import Path

os.environ.setdefault("ICL_LAB_SCALE", "ci")
os.environ.setdefault("ICL_LAB_THREADS", "2")
os.environ.setdefault("MPLBACKEND", "Agg")


ROOT = Path(__file__).resolve().parent
#: seconds a unit-test module takes at ci scale on 2 cores, for those that wait on kernels, clusters or
#: subprocesses (measured; the other modules take a second or two)
SLOW_TESTS = {"tests/test_sweep.py": 31, "tests/test_execute_parallel.py": 32, "tests/test_valid_configs.py": 18,
              "tests/test_hostile.py": 10, "tests/test_battery.py": 11, "tests/test_cli.py": 7, "tests/test_store.py": 7,
              "tests/test_reference.py": 6, "tests/test_data.py": 6}


def _expected_seconds() -> dict:
    """Each notebook's measured ci wall time (benchmarks/results/book.json) and SLOW_TESTS."""
    try:
        rows = json.loads((ROOT / "benchmarks" / "results" / "book.json").read_text())["notebooks"]
    except (OSError, ValueError, KeyError, TypeError):
        rows = []
    return {**{r["notebook"]: r["wall_seconds"] for r in rows if r.get("scale") == "ci"}, **SLOW_TESTS}


def pytest_collection_modifyitems(session, config, items):
    """Longest file first: with pytest-xdist's ``--dist loadscope --no-loadscope-reorder`` (make test) each
    worker takes the next file when it is free, so a run ends on short files, not on a long one started
    last. The sort is stable: a file's tests and a notebook's cells keep their order."""
    seconds = _expected_seconds()

    def key(item):
        try:
            return -seconds.get(item.path.resolve().relative_to(ROOT).as_posix(), 0.0)
        except ValueError:  # outside the repository
            return 0.0

    items.sort(key=key)
