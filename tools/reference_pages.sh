#!/usr/bin/env bash
# Regenerate the stored full results the chapters draw at paper scale (results/reference/full/, read by
# icl_lab.memo.full): execute every chapter notebook at `paper` scale, each run function's result stored
# as it is computed. The chapters' paper-scale ledgers are exported beside them, into $CLAIMS (default
# _build/claims/paper-regenerated; compare with `icl-lab report --compare` before copying them into
# results/reference/claims/paper).
#
#   tools/reference_pages.sh                               # every chapter (about 25 min on 2 cores)
#   tools/reference_pages.sh chapters/window/window_lowrank.ipynb   # only these notebooks
#
# Resumable: a stored result is read, not recomputed, on the next call (a page then runs in seconds), so
# an interrupted call continues where it stopped. Results whose code changed since are recomputed, and
# their old files removed at the end (`--prune` only removes them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export ICL_LAB_SCALE=paper ICL_LAB_THREADS="${ICL_LAB_THREADS:-1}" ICL_LAB_PROGRESS=0
export ICL_LAB_FULL_WRITE="${ICL_LAB_FULL_WRITE:-$ROOT/results/reference/full}"
export ICL_LAB_CLAIMS_DIR="${CLAIMS:-$ROOT/_build/claims/paper-regenerated}"
prune() {
  "$PY" - <<'PY'
from pathlib import Path
import os
from icl_lab import memo
gone = [m for m in memo.stored(Path(os.environ["ICL_LAB_FULL_WRITE"])) if not m["current"]]
for m in gone:
    for p in (Path(m["path"]), Path(m["path"]).with_suffix(".pt")):
        p.unlink(missing_ok=True)
print(f"reference_pages: removed {len(gone)} stored result(s) whose code changed")
PY
}
if [ "${1:-}" = "--prune" ]; then prune; exit 0; fi
CACHE="$(mktemp -d)"
trap 'rm -rf "$CACHE"' EXIT
if [ $# -gt 0 ]; then
  "$PY" tools/execute_parallel.py "$CACHE" --jobs "${JOBS:-2}" --timeout 7200 --notebooks "$@"
else
  mapfile -t NBS < <(ls chapters/*/*.ipynb)
  "$PY" tools/execute_parallel.py "$CACHE" --jobs "${JOBS:-2}" --timeout 7200 --notebooks "${NBS[@]}"
fi
prune
echo "reference_pages: ledgers in $ICL_LAB_CLAIMS_DIR"
