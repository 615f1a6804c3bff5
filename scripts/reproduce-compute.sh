#!/usr/bin/env bash
# reproduce-compute: re-measure the reproduction studies in the papers'
# conditions (DESIGN §10) beside the CPU trainer, on a quiet machine:
# for every study (or the ids given), every dataset and both compute
# modes, `outcore exp create --study ID --study-compute MODE
# --study-repeats 3 --wait`, then each experiment's CSVs and bundle into
# OUT/. With FRONTIER=1 it also runs the memory-frontier search (DESIGN
# §12) of gnndrive, ginex, diskgnn and pyg+ on each dataset. The numbers
# for docs/REPRODUCTION.md's paper | cpu | model table and the scale
# figure (docs/benchmarks/variants.md) come from OUT/.
#
# usage: scripts/reproduce-compute.sh [STUDY_ID...]
# env:   DATASETS   datasets, space-separated (default: each study's own;
#                   the scale sweep: "medium papers-like large" — generate
#                   them first with outcore data gen --preset NAME)
#        MODES      compute modes (default "cpu model:h100-pyg": the profile
#                   measured with PyG on an H100; model:h100-roofline is the
#                   derived one)
#        REPEATS    runs per cell (default 3: medians of 3)
#        FRONTIER   1 also runs the frontier search per dataset (default 0)
#        SCALE      1 also draws the scale figures (outcore exp scale: epoch
#                   time and bytes read against dataset size at 25 % and
#                   50 %) from the variants-medium experiments of DATASETS
#        OUT        output folder (default reproduce-compute-<date>)
#        MAX_LOAD   highest 1-minute load average to start at (default 1.5)
#        OUTCORE    outcore binary (default bin/outcore, built if missing)
#        OUTCORE_DATA  the data directory, as for outcore itself
set -euo pipefail
cd "$(dirname "$0")/.."
outcore=${OUTCORE:-bin/outcore}
modes=${MODES:-"cpu model:h100-pyg"}
repeats=${REPEATS:-3}
out=${OUT:-reproduce-compute-$(date -u +%Y%m%dT%H%M%SZ)}
maxload=${MAX_LOAD:-1.5}
. scripts/quiet-gate.sh
require_quiet reproduce-compute "$maxload"
[[ -x $outcore ]] || make build >/dev/null
mkdir -p "$out"
studies=("$@")
if [[ ${#studies[@]} == 0 ]]; then
  mapfile -t studies < <("$outcore" exp create --help 2>&1 | sed -n 's/.*(docs\/REPRODUCTION.md; ids: \([^)]*\)).*/\1/p' | tr ',' '\n' | tr -d ' ')
fi
[[ ${#studies[@]} -gt 0 ]] || { echo "reproduce-compute: no study ids" >&2; exit 1; }
run_one() { # study dataset mode
  local args=(exp create --study "$1" --study-compute "$3" --study-repeats "$repeats" --wait)
  [[ -n $2 ]] && args+=(--study-dataset "$2")
  local log="$out/$1${2:+-$2}-${3//:/_}.log"
  echo "== $1 ${2:-(its dataset)} $3 (load $(cut -d' ' -f1 /proc/loadavg))" | tee "$log"
  # exp create exits non-zero when any run failed or was refused (gids
  # and helios below their floors at 25 %): the rest are still results.
  "$outcore" "${args[@]}" 2>&1 | tee -a "$log" || echo "== exp create exited $? (some runs did not finish)" | tee -a "$log"
  local id
  id=$(sed -n 's/^experiment \([0-9]*\) created.*/\1/p' "$log" | head -1)
  [[ -n $id ]] || return 1
  scale_ids["$1 $3"]+="${scale_ids["$1 $3"]:+,}$id"
  "$outcore" exp export "$id" --csv --what runs >"${log%.log}-runs.csv"
  "$outcore" exp export "$id" --csv --what epochs >"${log%.log}-epochs.csv"
  "$outcore" exp export "$id" --bundle "${log%.log}.zip" >/dev/null
}
declare -A scale_ids # "study mode" -> experiment ids, one per dataset
for s in "${studies[@]}"; do
  for d in ${DATASETS:-""}; do
    for m in $modes; do run_one "$s" "$d" "$m"; done
  done
  if [[ -z ${DATASETS:-} ]]; then
    for m in $modes; do run_one "$s" "" "$m"; done
  fi
done
if [[ ${FRONTIER:-0} == 1 ]]; then
  for d in ${DATASETS:-medium}; do
    for m in $modes; do
      # bounded search, figure and data (the load was checked at the start)
      DATASET=$d COMPUTE=$m OUT="$out/frontier-$d-${m//:/_}" MAX_LOAD=1000 OUTCORE=$outcore scripts/frontier-figure.sh
    done
  done
fi
if [[ ${SCALE:-0} == 1 ]]; then
  for m in $modes; do
    ids=${scale_ids["variants-medium $m"]:-}
    [[ -n $ids ]] || { echo "reproduce-compute: SCALE=1 needs variants-medium run on DATASETS" >&2; continue; }
    for share in 25% 50%; do
      for fig in scale-epoch scale-read; do
        for f in svg csv; do
          "$outcore" exp scale "$ids" --share "$share" --figure "$fig" --format "$f" \
            --out "$out/$fig-${share%\%}-${m//:/_}.$f" || true
        done
      done
    done
  done
fi
echo "reproduce-compute: results in $out/"
