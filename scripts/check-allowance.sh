#!/usr/bin/env bash
# The memory contract checked on `medium` (docs/DESIGN.md §2 "One memory
# contract"), the command-line form of cmd/outcore/cli's
# TestEveryVariantWithinItsAllowanceOnMedium (make test-long, which bounds
# each run to 20 batches): every variant trains one whole epoch of the
# benchmark configuration (3-layer GraphSAGE, fanout 10,10,10, batch 1000)
# on `medium` at each host limit with the same device budget, each run in
# its own memory cgroup, and the check holds for every run:
#   - the summary's memory account names the grid point's host and device
#     budgets (the same for every variant);
#   - the device tiers stay within the device budget, or the run records
#     the overrun as a deviation ("device tiers of ... exceed");
#   - the cgroup's peak stays within host budget + device tiers + model
#     step (+1 MiB for the kernel's overshoot).
# A run that ends other than done fails the check (an OOM kill is a peak
# over the allowance). Correctness only: the epoch times are not results
# (see docs/benchmarks/variants.md for how timings are taken).
#
# Usage: scripts/check-allowance.sh
# Environment (all optional):
#   DATA     data directory holding `medium` (generated when absent; default bench-data)
#   OUT      where the JSON-lines records go (default $DATA/check-allowance)
#   LIMITS   host limits (default "25% 50%")
#   DEVICE   device budget for every run (default 10%, the default device_mem)
#   SYSTEMS  variants (default: every registered one but reference)
#   TIMEOUT  seconds before a run is stopped (default 3600)
# Needs: go, jq, memory cgroups.
set -u
cd "$(dirname "$0")/.."

DATA=${DATA:-bench-data}
OUT=${OUT:-$DATA/check-allowance}
LIMITS=${LIMITS:-"25% 50%"}
DEVICE=${DEVICE:-10%}
TIMEOUT=${TIMEOUT:-3600}
BIN=bin/outcore

command -v jq >/dev/null || { echo "check-allowance: needs jq" >&2; exit 1; }
mkdir -p "$OUT" bin
CGO_ENABLED=1 GOFLAGS=-buildvcs=false go build -o "$BIN" ./cmd/outcore || exit 1
SYSTEMS=${SYSTEMS:-$("$BIN" systems 2>/dev/null | awk '/^[^ ].* — / && $1 != "reference" {print $1}' | tr '\n' ' ')}
if [ ! -f "$DATA/datasets/medium/meta.json" ]; then
	echo "check-allowance: generating medium in $DATA"
	"$BIN" data gen --preset medium --data-dir "$DATA" || exit 1
fi

fail=0
for limit in $LIMITS; do
	for sys in $SYSTEMS; do
		tag="${sys}_${limit%\%}pct"
		timeout --signal=INT --kill-after=60 "$TIMEOUT" \
			"$BIN" train --data-dir "$DATA" --dataset medium --system "$sys" \
			--model sage --layers 3 --fanout 10,10,10 --batch 1000 --hidden 256 \
			--epochs 1 --eval-every 1000 --mem-limit "$limit" --device-mem "$DEVICE" \
			>"$OUT/$tag.jsonl" 2>"$OUT/$tag.err"
		verdict=$(jq -rs '
			(map(select(.type=="summary")) | last) as $s |
			($s.memory // null) as $m |
			if $s == null then "FAIL no summary"
			elif $s.outcome != "done" then "FAIL outcome \($s.outcome)"
			elif $m == null then "FAIL no memory account"
			elif ($m.device_tier_bytes > $m.device_budget_bytes) and
			     (($s.deviations // []) | map(test("device tiers of .* exceed")) | any | not)
				then "FAIL device tiers \($m.device_tier_bytes) over the budget \($m.device_budget_bytes), no deviation"
			elif $s.peak_cgroup_bytes > $m.host_budget_bytes + $m.device_tier_bytes + $m.model_step_bytes + 1048576
				then "FAIL cgroup peak \($s.peak_cgroup_bytes) over host \($m.host_budget_bytes) + device tiers \($m.device_tier_bytes) + step \($m.model_step_bytes)"
			else "ok host \($m.host_budget_bytes/1048576|floor) MiB, device \($m.device_budget_bytes/1048576|floor) MiB (tiers \($m.device_tier_bytes/1048576|floor)), step \($m.model_step_bytes/1048576|floor) MiB, cgroup peak \($s.peak_cgroup_bytes/1048576|floor) MiB"
			end' "$OUT/$tag.jsonl")
		echo "$tag: $verdict"
		case "$verdict" in ok*) ;; *) fail=1 ;; esac
	done
done
exit $fail
