#!/usr/bin/env bash
# bench-device: measure the storage of a data directory once with
# `outcore bench device` (DESIGN §11) — IOPS by request size and depth,
# sequential bandwidth — checked against fio, and keep the profile in the
# data directory for every later run's io_floor_s and io_efficiency.
# Run it on a quiet machine (the profile records the load average before
# and after; the script refuses to start above BENCH_DEVICE_MAX_LOAD, and
# `outcore bench device --max-load` saves no profile when the load rose
# above it by the measurement's end).
# The fio checks (512 B and 4 KiB random reads at the largest depth, the
# sequential read) run ours and fio back to back BENCH_DEVICE_PAIRS times
# with the same file, job shape and ring setup; the script prints each
# check's medians and ratio and fails when one disagrees by more than
# 10 % (BENCH_DEVICE_ENFORCE=0 turns that off): the docs/BENCHMARKS.md row.
#
# usage: scripts/bench-device.sh [DATA_DIR]
# env:   BENCH_DEVICE_SIZE      file size (default 8GiB: beyond the disk's and the host's caches)
#        BENCH_DEVICE_SECONDS   seconds per measurement (default 5)
#        BENCH_DEVICE_PAIRS     back-to-back ours/fio pairs per fio check (default 3)
#        BENCH_DEVICE_ROUNDS    rounds of every measurement, each point their median (default 3)
#        BENCH_DEVICE_MAX_LOAD  highest 1-minute load average to start at and to end at (default 1.5)
#        OUTCORE                outcore binary (default bin/outcore, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-${OUTCORE_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/outcore}}
size=${BENCH_DEVICE_SIZE:-8GiB}
secs=${BENCH_DEVICE_SECONDS:-5}
maxload=${BENCH_DEVICE_MAX_LOAD:-1.5}
pairs=${BENCH_DEVICE_PAIRS:-3}
rounds=${BENCH_DEVICE_ROUNDS:-3}
outcore=${OUTCORE:-bin/outcore}
command -v fio >/dev/null || { echo "bench-device: fio not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
. scripts/quiet-gate.sh
require_quiet bench-device "$maxload"
[[ -x $outcore ]] || make build >/dev/null
out=$("$outcore" bench device --data-dir "$data" --size "$size" --seconds "$secs" --fio-pairs "$pairs" --rounds "$rounds" --max-load "$maxload")
echo "$out"
echo "--- outcore bench device vs fio (medians of $pairs back-to-back pairs, ${secs}s each; load average now $(cut -d' ' -f1 /proc/loadavg))"
grep '^fio ' <<<"$out" | sed -E 's/^fio ([^:]*): ours ([0-9.]+), fio ([0-9.]+), ratio ([0-9.]+).*\((agrees|DISAGREES)[^)]*\)$/\1 | ours \2 | fio \3 | ratio \4 | \5/' 
if [[ ${BENCH_DEVICE_ENFORCE:-1} == 1 ]] && grep -q "DISAGREES" <<<"$out"; then
  echo "bench-device: outcore and fio disagree by more than 10 %" >&2
  exit 1
fi
