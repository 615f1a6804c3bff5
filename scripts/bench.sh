#!/usr/bin/env bash
# Runs the benchmarks quoted in docs/BENCHMARKS.md, one section at a time.
# Usage: scripts/bench.sh [section...]   sections: dataset storage nn trainer store web variants
# (default: all but variants, which takes about an hour).
# Large scratch files go under $OUTCORE_SCRATCH (default /var/tmp), never the repository.
set -u
cd "$(dirname "$0")/.."
export OUTCORE_SCRATCH=${OUTCORE_SCRATCH:-/var/tmp}
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(dataset storage nn trainer store web)
status=0
run() { echo "+ $*"; "$@" || status=1; }
for s in "${sections[@]}"; do
  echo "== $s"
  case $s in
  dataset)
    d=$(mktemp -d "$OUTCORE_SCRATCH/outcore-gen.XXXXXX")
    for i in 1 2 3; do
      run /usr/bin/time -f "medium: %e s wall, %M KiB max RSS" bin/outcore data gen --preset medium --name m$i --data-dir "$d" --quiet
      rm -rf "$d/datasets/m$i"
    done
    rm -rf "$d"
    run go test -run '^$' -bench . -benchtime 3s -count 3 ./engine/dataset ;;
  storage) run scripts/bench-io.sh ;;
  nn) run go test -run '^$' -bench 'Gemm|SAGEStep' -count 5 ./engine/nn ;;
  trainer) run go test -run '^$' -bench . -count 5 ./engine/train ;;
  store)
    OUTCORE_STORE_BENCH=1 run go test ./store -run '^$' -bench Store -benchtime 20x -timeout 90m
    OUTCORE_STORE_BENCH=1 run go test ./store -run '^$' -bench Export -benchtime 3x -timeout 60m ;;
  web) run go test ./web -run '^$' -bench 'Pages|ChartsCold' -benchtime 20x -count 5 ;;
  variants) run scripts/bench-variants.sh ;;
  *) echo "bench: unknown section $s" >&2; status=2 ;;
  esac
done
exit $status
