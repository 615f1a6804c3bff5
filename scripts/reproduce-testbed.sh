#!/usr/bin/env bash
# reproduce-testbed: the measurement campaign (issues 36.7, 37.4, 38.5):
# every reproduction study under its paper's testbed (DESIGN §13,
# "Studies"; a study's grid names it), quiet, medians of REPEATS, one
# study at a time, resumable.
#
# Before starting it prints `outcore exp estimate`'s table: each study's
# runs (cells × repeats, refused cells left out) and their expected time
# (past runs' median epoch time × epochs, "unknown" without any). With
# BUDGET_MIN it runs only the studies that fit, in the order given.
#
# For each study: it refuses to start when the machine is not quiet
# (quiet-gate.sh; the campaign stops there, run it again later), records
# the load average before and after in OUT/KEY/load.txt, runs
# `outcore exp create --study ID --study-repeats REPEATS --wait`, then
# exports the runs and epochs CSVs, the study table (study.csv) and the
# bundle into OUT/KEY/, and only then writes OUT/KEY/complete. A study
# with that marker is skipped. A study killed mid-way (Ctrl-C, or kill
# the script's process group) is continued on the next start: its
# experiment's failed, cancelled and interrupted runs are queued again and
# waited for (`outcore exp retry ID --wait`), its done runs kept.
# At the end it writes OUT/claims.md (`outcore exp claims`): the claims
# table of docs/REPRODUCTION.md from the complete studies.
#
# usage: scripts/reproduce-testbed.sh [STUDY_ID...]
#        (default: every reproduction study, the ones with a paper block)
# env:   DATASET     run each study on this dataset (--study-dataset;
#                    default: each study's own)
#        COMPUTE     compute mode of every run (--study-compute; default:
#                    the testbed's, model:<the paper GPU's profile>)
#        REPEATS     runs per cell (default 3: medians of 3)
#        BUDGET_MIN  run only the studies whose estimates fit, one after
#                    another, in this many minutes (default: no budget)
#        ESTIMATE_ONLY  1: print the estimate and stop
#        OUT         output folder (default reproduce-testbed; the same OUT
#                    resumes)
#        MAX_LOAD    highest 1-minute load average to start a study at
#                    (default 1.5)
#        COLUMN      the claims column's name (default "paper's testbed,
#                    emulated")
#        OUTCORE     outcore binary (default bin/outcore, built if missing)
#        OUTCORE_DATA  the data directory, as for outcore itself
set -euo pipefail
cd "$(dirname "$0")/.."
outcore=${OUTCORE:-bin/outcore}
repeats=${REPEATS:-3}
out=${OUT:-reproduce-testbed}
maxload=${MAX_LOAD:-1.5}
column=${COLUMN:-"paper's testbed, emulated"}
. scripts/quiet-gate.sh
[[ -x $outcore ]] || make build >/dev/null
mkdir -p "$out"

studies=("$@")
if [[ ${#studies[@]} == 0 ]]; then
  mapfile -t studies < <("$outcore" exp estimate --study-repeats 1 | awk 'NR>1 && $1!="total" {print $1}')
fi
[[ ${#studies[@]} -gt 0 ]] || { echo "reproduce-testbed: no study ids" >&2; exit 1; }

opts=(--study-repeats "$repeats")
[[ -n ${DATASET:-} ]] && opts+=(--study-dataset "$DATASET")
[[ -n ${COMPUTE:-} ]] && opts+=(--study-compute "$COMPUTE")
key_of() { # study -> the folder of its results in OUT
  local k=$1
  [[ -n ${DATASET:-} ]] && k+="-$DATASET"
  [[ -n ${COMPUTE:-} ]] && k+="-${COMPUTE//:/_}"
  echo "$k"
}

todo=()
for s in "${studies[@]}"; do
  if [[ -f $out/$(key_of "$s")/complete ]]; then
    echo "reproduce-testbed: $s complete in $out/$(key_of "$s") (experiment $(cat "$out/$(key_of "$s")/experiment")): skipped"
  else
    todo+=("$s")
  fi
done

if [[ ${#todo[@]} -gt 0 ]]; then
  est=("$outcore" exp estimate "${opts[@]}")
  [[ -n ${BUDGET_MIN:-} ]] && est+=(--budget "${BUDGET_MIN}m")
  "${est[@]}" "${todo[@]}" | tee "$out/estimate-$(date -u +%Y%m%dT%H%M%SZ).txt"
  if [[ -n ${BUDGET_MIN:-} ]]; then
    mapfile -t todo < <("${est[@]}" --fitting "${todo[@]}")
    echo "reproduce-testbed: within ${BUDGET_MIN} min: ${todo[*]:-none}"
  fi
fi
[[ ${ESTIMATE_ONLY:-0} == 1 ]] && exit 0

# is_paper ID STUDY: experiment ID was made for reproduction study STUDY
# (its name is "STUDY: ..."; an example's is its grid's): only those have
# a study table (paper against ours) and claims
is_paper() { "$outcore" exp list | awk -v id="$1" -v want="$2:" '$1 == id && $2 == want {f = 1} END {exit !f}'; }
load() { echo "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
run_study() { # study
  local s=$1 dir id rc=0
  dir=$out/$(key_of "$s")
  mkdir -p "$dir"
  require_quiet "reproduce-testbed: $s" "$maxload"
  echo "before: $(load)" >>"$dir/load.txt"
  echo "== $s (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$dir/log"
  if [[ -s $dir/experiment ]]; then
    id=$(cat "$dir/experiment")
    echo "== continuing experiment $id" | tee -a "$dir/log"
    "$outcore" exp retry "$id" --wait 2>&1 | tee -a "$dir/log" || rc=$?
  else
    # the id is kept as soon as exp create prints it, so that a kill
    # mid-way continues this experiment
    "$outcore" exp create --study "$s" "${opts[@]}" --wait 2>&1 |
      while IFS= read -r line; do
        echo "$line"
        echo "$line" >>"$dir/log"
        if [[ $line =~ ^experiment\ ([0-9]+)\ created ]]; then echo "${BASH_REMATCH[1]}" >"$dir/experiment"; fi
      done || rc=$?
    id=$(cat "$dir/experiment" 2>/dev/null || true)
  fi
  echo "after:  $(load)" >>"$dir/load.txt"
  [[ -n ${id:-} ]] || { echo "reproduce-testbed: $s: no experiment was created (see $dir/log)" >&2; return 1; }
  # exp create exits non-zero when a run failed: the rest are still
  # results, exported; the log says which.
  [[ $rc == 0 ]] || echo "== $s: exited $rc (some runs did not finish as done; outcore exp show $id)" | tee -a "$dir/log"
  # the marker only after every export succeeded
  if "$outcore" exp export "$id" --csv --what runs --out "$dir/runs.csv" &&
    "$outcore" exp export "$id" --csv --what epochs --out "$dir/epochs.csv" &&
    { ! is_paper "$id" "$s" || "$outcore" exp export "$id" --csv --what study --out "$dir/study.csv"; } &&
    "$outcore" exp export "$id" --bundle "$dir/bundle.zip" >/dev/null; then
    date -u +%FT%TZ >"$dir/complete"
  else
    echo "reproduce-testbed: $s: export of experiment $id failed: not complete" >&2
    return 1
  fi
  echo "== $s: complete, experiment $id, results in $dir"
}
# a study that cannot be created or exported is reported and the next one
# tried; a machine that is not quiet stops the campaign (require_quiet)
failed=()
for s in ${todo[@]+"${todo[@]}"}; do run_study "$s" || failed+=("$s"); done
[[ ${#failed[@]} == 0 ]] || echo "reproduce-testbed: not complete: ${failed[*]}" >&2

ids=()
for s in "${studies[@]}"; do
  f=$out/$(key_of "$s")
  [[ -f $f/complete && -f $f/study.csv ]] && ids+=("$(cat "$f/experiment")")
done
if [[ ${#ids[@]} -gt 0 ]]; then
  "$outcore" exp claims --column "$column" --out "$out/claims.md" "${ids[@]}"
  echo "reproduce-testbed: claims of ${#ids[@]} studies in $out/claims.md"
fi
[[ ${#failed[@]} == 0 ]]
