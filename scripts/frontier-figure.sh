#!/usr/bin/env bash
# frontier-figure: the memory-frontier figure (DESIGN §12; DiskGNN Fig. 9
# and GNNDrive Fig. 9 in one) on a quiet machine: `outcore exp frontier`
# of gnndrive, ginex, diskgnn and pyg+ on one dataset in one compute mode
# (each probe a real run under its memory cgroup), then the experiment's
# epoch-vs-mem chart as SVG and PDF, its data as CSV, and the runs.
#
# The search is bounded: each probe trains on FRONTIER_TRAIN_NODES
# training nodes (a fixed random subset: 20 batches of 1000, recorded as a
# deviation in every run), each variant stops starting probes once its
# finished probes took FRONTIER_CELL_S seconds (and after FRONTIER_PROBES
# probes), so the whole search ends within 4 × FRONTIER_CELL_S plus one
# probe per variant. The result names a variant stopped by the budget.
#
# usage: scripts/frontier-figure.sh
# env:   DATASET          dataset (default medium; generated when missing)
#        COMPUTE          compute mode (default model:h100-pyg)
#        SYSTEMS          variants (default gnndrive,ginex,diskgnn,pyg+)
#        FRONTIER_PROBES  most probes per variant (default 6)
#        FRONTIER_TOL     tolerance of the bisection (default 0.1)
#        FRONTIER_CELL_S  wall-time budget per variant in seconds (default 180)
#        FRONTIER_TRAIN_NODES  training nodes per probe (default 20000; 0 = the whole split)
#        OUT              output folder (default frontier-<dataset>-<date>)
#        MAX_LOAD         highest 1-minute load average to start at (default 1.5)
#        OUTCORE          outcore binary (default bin/outcore, built if missing)
#        OUTCORE_DATA     the data directory, as for outcore itself
#        DROP_CACHES      1 (the default as root): drop the page cache before
#                         each probe, so that no probe reads pages an earlier
#                         one left cached outside its cgroup; 0: keep it
set -euo pipefail
cd "$(dirname "$0")/.."
outcore=${OUTCORE:-bin/outcore}
ds=${DATASET:-medium}
compute=${COMPUTE:-model:h100-pyg}
systems=${SYSTEMS:-gnndrive,ginex,diskgnn,pyg+}
out=${OUT:-frontier-$ds-$(date -u +%Y%m%dT%H%M%SZ)}
maxload=${MAX_LOAD:-1.5}
. scripts/quiet-gate.sh
require_quiet frontier-figure "$maxload"
load=$(cut -d' ' -f1 /proc/loadavg)
[[ -x $outcore ]] || make build >/dev/null
mkdir -p "$out"
if ! "$outcore" data list 2>/dev/null | grep -qw -- "$ds"; then
  "$outcore" data gen --preset "$ds" --quiet
fi
log="$out/frontier.log"
drop=()
if [[ ${DROP_CACHES:-$([[ $EUID == 0 ]] && echo 1 || echo 0)} == 1 ]]; then drop=(--drop-caches); fi
echo "== frontier $ds $compute $systems (load $load, ${drop[*]:-page cache kept}, $(date -u +%FT%TZ))" | tee "$log"
start=$(date +%s)
# Failed probes are what a frontier search is made of: exp frontier exits
# non-zero when any probe failed, which is no reason to stop here.
rc=0
"$outcore" exp frontier --dataset "$ds" --system "$systems" --compute "$compute" \
  --max-probes "${FRONTIER_PROBES:-6}" --tolerance "${FRONTIER_TOL:-0.1}" \
  --max-cell-seconds "${FRONTIER_CELL_S:-180}" --train-max-nodes "${FRONTIER_TRAIN_NODES:-20000}" \
  "${drop[@]}" --wait 2>&1 | tee -a "$log" || rc=$?
[[ $rc == 0 ]] || echo "== exp frontier exited $rc (failed probes are expected below the frontier)" | tee -a "$log"
echo "== search took $(( $(date +%s) - start )) s (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$log"
id=$(sed -n 's/^experiment \([0-9]*\) created.*/\1/p' "$log" | head -1)
[[ -n $id ]] || { echo "frontier-figure: no experiment id in $log" >&2; exit 1; }
for f in svg pdf csv; do
  "$outcore" exp export "$id" --figure epoch-vs-mem --format "$f" --out "$out/frontier-$ds.$f"
done
"$outcore" exp export "$id" --csv --what runs >"$out/frontier-$ds-runs.csv"
echo "frontier-figure: experiment $id, figure and data in $out/"
