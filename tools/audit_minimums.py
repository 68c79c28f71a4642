"""Degenerate-value audit: every integer parameter of every registered experiment at the smallest
value its declaration allows (the other parameters at their ``ci`` values), run through the results
store's task path (``runner.run_and_record``: validation, memory guard, run, summary checks).

    .venv/bin/python tools/audit_minimums.py [EXPERIMENT ...] [--timeout 60] > audit.jsonl

One JSON line per case: ``[experiment, parameter, value, outcome, message, seconds]`` with outcome
``refused`` (a one-line ConfigError before anything runs), ``refused-late`` (a ConfigError after the
data were drawn, before training), ``ok`` (a storable summary, every number finite), ``undefined``
(stored, but with NaN/inf entries: a level never reached is fine, a statistic of one sample is not),
``problem`` (any other exception,
e.g. a non-finite loss taken for a diverged run) or ``timeout``. The audit is slow (tens of minutes
for every experiment) and is run by hand, not by the tests: ``problem`` lines are bugs to fix (a
missing cross-field rule or a wrong lower bound); ``timeout`` lines are cases to look at.
"""
from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time

from icl_lab import runner
from icl_lab.params import ConfigError
from icl_lab.params import Int, constraints_of
from icl_lab.records import _numbers
from icl_lab.registry import all_experiments


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def audit(names, timeout: int):
    exps = all_experiments()
    signal.signal(signal.SIGALRM, _alarm)
    for name in names:
        exp = exps[name]
        for field, c in constraints_of(exp.config).items():
            if not isinstance(c, Int) or field in ("seed", "test_seed"):
                continue
            lo = c.lo if c.closed in ("both", "left") else c.lo + 1
            t0 = time.time()
            try:
                cfg = exp.config.for_scale("ci", **{field: lo})
            except ConfigError as e:
                yield [name, field, lo, "refused", str(e)[:200], 0.0]
                continue
            signal.alarm(timeout)
            try:
                rec = runner.run_and_record(name, cfg, scale="ci", threads=1)
                bad = [f"{path} = {v}" for path, v in _numbers(rec["summary"]) if not math.isfinite(v)]
                out = ["undefined", "; ".join(bad[:5])] if bad else ["ok", ""]
            except ConfigError as e:
                out = ["refused-late", str(e)[:200]]
            except _Timeout:
                out = ["timeout", ""]
            except Exception as e:  # noqa: BLE001 - every other outcome is what the audit looks for
                out = ["problem", f"{type(e).__name__}: {str(e)[:200]}"]
            finally:
                signal.alarm(0)
            yield [name, field, lo, *out, round(time.time() - t0, 1)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiments", nargs="*", help="default: every registered experiment")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per case")
    args = ap.parse_args(argv)
    names = args.experiments or sorted(all_experiments())
    problems = 0
    for row in audit(names, args.timeout):
        problems += row[3] == "problem"
        print(json.dumps(row), flush=True)
    print(f"{problems} problem(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
