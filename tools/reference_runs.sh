#!/usr/bin/env bash
# Regenerate the reference results: every experiment whose `book` scale reduces the paper's setting
# (its config's BOOK differs from the paper defaults), plus the extra reference experiments below,
# run at `paper` scale through the results store into results/reference/.
#
#   tools/reference_runs.sh              # run them all, one after the other (hours on one machine)
#   tools/reference_runs.sh --list       # only print the experiments
#   tools/reference_runs.sh --dry-run    # show every experiment's tasks and which are already stored
#   tools/reference_runs.sh nonlinear.polynomial   # only these experiments
#   tools/reference_runs.sh -- --executor dask --workers 4   # options passed to every `icl-lab run`
#
# Resumable: a finished task is stored at once (one JSON record per chunk of SEEDS_PER_TASK seeds) and
# skipped on the next call, so an interrupted run continues where it stopped. Keep SEEDS_PER_TASK
# (default 1) the same between calls: the chunking is part of each record's configuration.
# `make references` runs them all on Dask's local cluster (one single-threaded worker per core).
# tests/test_reference.py fails when a shipped record's config is no longer the current paper config:
# then delete the stale records and run this script again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export ICL_LAB_THREADS="${ICL_LAB_THREADS:-1}"
export ICL_LAB_REFERENCE_TOOL=1  # the one writer of the shipped folder (the store refuses anyone else)
RESULTS="${RESULTS:-$ROOT/results/reference}"
# one seed per task: CI recomputes the cheapest record of every reference (tools/check_references.py)
SEEDS_PER_TASK="${SEEDS_PER_TASK:-1}"
# Reference experiments that `book` does not reduce but whose paper setting the chapters show from a
# record (absent ones are skipped with a note, e.g. before they are registered).
EXTRA=(selectors.theorem1 synthesis.cross_paper)
# Experiments run as one task although they have seeds: their summary holds a value computed from the
# config's first seed or from all seeds at once (the population c* of the window paper's norm figures,
# Fig. 1's optimum, Fig. 9's learning-rate choice, the synthesis's contrast), so seed chunks would
# each compute their own and could not be merged (tests/test_reference.py checks that every one merges). So is every experiment whose summary declares no
# per-seed entries (its values are statistics over all its seeds).
WHOLE=(window.fig3_norm_vs_L window.fig4_norm_vs_sigma_n window.isotropy window.fig1_hills window.fig9_lowrank
       synthesis.cross_paper)

list=0 dry=()
names=() pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list=1 ;;
    --dry-run) dry=(--dry-run) ;;
    --) shift; pass=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) names+=("$1") ;;
  esac
  shift
done

mapfile -t all < <(WHOLE="${WHOLE[*]}" "$PY" - "${EXTRA[@]}" <<'PYEOF'
import os
import sys
from icl_lab.registry import all_experiments
exps = all_experiments()
whole = set(os.environ["WHOLE"].split())
names = [n for n, e in sorted(exps.items()) if e.config.deviations()]
for extra in sys.argv[1:]:
    if extra in exps:
        names.append(extra) if extra not in names else None
    else:
        print(f"note: extra reference experiment {extra} is not registered; skipped", file=sys.stderr)
for n in names:
    split = exps[n].seed_splittable and n not in whole and bool(exps[n].summary_keys.per_seed)
    print(n, "split" if split else "whole")
PYEOF
)

status=0
for line in "${all[@]}"; do
  exp="${line% *}" kind="${line#* }"
  if [ ${#names[@]} -gt 0 ] && [[ ! " ${names[*]} " =~ " $exp " ]]; then continue; fi
  if [ "$list" = 1 ]; then echo "$exp"; continue; fi
  args=(run "$exp" --scale paper --results "$RESULTS" --no-progress)
  [ "$kind" = split ] && args+=(--seeds-per-task "$SEEDS_PER_TASK")
  echo "== $(date -u +%FT%TZ) icl-lab ${args[*]} ${dry[*]} ${pass[*]}"
  "$PY" -m icl_lab.cli "${args[@]}" "${dry[@]}" "${pass[@]}" || { echo "!! $exp failed (exit $?)"; status=1; }
done
exit $status
