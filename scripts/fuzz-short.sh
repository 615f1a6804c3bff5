#!/usr/bin/env bash
# A short pass of every fuzz target over outside input (`make fuzz-short`,
# run by `make test`): each target fuzzes for FUZZTIME (default 3s) from its
# seeds (f.Add and testdata/fuzz/<target>/ of its package). A failure
# writes the input that found it to that folder; keep it there as a
# regression seed once fixed. Each package's test binary is built once.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-3s}
cache=$(go env GOCACHE)/fuzz
# package: targets (the parsers of outside input)
declare -A targets=(
  [engine/train]="FuzzParseConfig"                    # run configs
  [internal/units]="FuzzParseMemLimit"                # --mem-limit, grid limits, sizes of options
  # grid JSON (grid files, the JSON API, examples/); a grid's sbatch options
  # and node data directory; run record logs as ingested after a crash and a
  # run's record lines as checked against it (recordcheck.go); what
  # squeue, scontrol and sacct print
  [experiments/grid]="FuzzParseGrid FuzzSplitArgs FuzzSbatchArgs"
  [experiments]="FuzzRecordLogIngest FuzzRecordLines"
  [experiments/external]="FuzzRegistry FuzzProtocolLine"  # the operator's registry of external systems; their record-protocol lines
  [experiments/slurm]="FuzzConfineNodeDataDir FuzzParseSqueue FuzzParseScontrolJob FuzzParseSacct"
  [engine/system/diskgnn]="FuzzParseOptions FuzzDecodeChunkHeader FuzzDecodeSample"  # its options; its chunk and offline-sample files as read back
  [engine/dataset]="FuzzNPYHeader FuzzLINQSLines FuzzOGBLines FuzzMeta FuzzBinaryChecks"
  [web]="FuzzParseAuth FuzzDecodeForm FuzzPreview FuzzExampleStart"  # serve --auth-file; the new-experiment form (HTTP body to grid); its preview (and the submit's checks) and an example's Start page, with the real queue's checks
  [report]="FuzzParseFilter FuzzDecodeDigest"         # the filter bar (q=, runs=); digests stored with runs
  [store]="FuzzJSONMaps"                              # stages_json and tiers_json as read back
  [engine/accel]="FuzzParseProfile FuzzParseMode"     # accelerator profiles; --compute and the grid's compute axis
  [engine/metrics]="FuzzHostPressureParsers FuzzDeviceProfile"  # /proc/stat, /proc/pressure/*, /proc/loadavg; device profiles as read back
  [cmd/outcore/cli]="FuzzFioOutput"                   # fio's JSON output as the bench commands read it
)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for pkg in "${!targets[@]}"; do
  bin="$tmp/$(echo "$pkg" | tr / _).test"
  go test -c -o "$bin" "./$pkg"
  for name in ${targets[$pkg]}; do
    echo "fuzz $pkg $name ($FUZZTIME)"
    for try in 1 2; do
      if (cd "$pkg" && "$bin" -test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$FUZZTIME" \
        -test.fuzzcachedir="$cache/outcore/$pkg" >"$tmp/log" 2>&1); then
        break
      fi
      # Go's fuzzing coordinator can end at the fuzztime deadline with
      # "context deadline exceeded" while a worker is still answering: no
      # input failed (none was written). Such a run is tried once more; a
      # failing input is reported at once.
      if [ "$try" = 1 ] && grep -q 'context deadline exceeded' "$tmp/log" && ! grep -q 'Failing input written' "$tmp/log"; then
        echo "  (the fuzzing coordinator hit its deadline without a failing input: once more)"
        continue
      fi
      cat "$tmp/log" >&2
      fail=1
      break
    done
  done
done
exit $fail
