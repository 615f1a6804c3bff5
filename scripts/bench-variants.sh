#!/usr/bin/env bash
# Benchmark of the disk-based training variants (docs/benchmarks/variants.md):
# pyg+, ginex and gnndrive on the `medium` dataset (2,097,152 nodes, 128-dim
# float32 features = 1 GiB), 3-layer GraphSAGE, fanout 10,10,10, batch 1000,
# under a sweep of memory limits given as shares of the feature bytes. Each
# run is `outcore train` in its own memory cgroup (--mem-limit), so the page
# cache counts; the page cache is dropped before every run.
#
# Usage: scripts/bench-variants.sh
# Environment (all optional):
#   DATA      data directory for `medium` and the runs' scratch (default bench-data)
#   OUT       where the JSON-lines records go          (default $DATA/bench-variants)
#   LIMITS    memory limits                            (default "25% 50% 100%")
#   SYSTEMS   variants, each NAME or NAME:KEY=VALUE[,KEY=VALUE] (--opt)
#             (default "gnndrive ginex pyg+ gnndrive:feature_buffer=device
#             ginex:read_block=512 gnndrive:read_block=4096": every variant
#             at its artifact's read granularity, and ginex and gnndrive
#             again at the other one, so that bytes_read shows what the
#             granularity costs; see engine/system/kit/read_block.go)
#   EPOCHS    epochs per run (default 3): the first (cold: the page cache of
#             the dataset was evicted, caches and buffers empty) is reported
#             apart from the mean of the following (warm) ones
#   REPS      repetitions of every (limit, system)     (default 1)
#   COMPUTE   what consumes each batch (--compute): cpu (default; the CPU
#             trainer), none, or model:PROFILE (e.g. model:h100-pyg: the
#             batch held for the accelerator's modelled step, DESIGN §10)
#   DATASET   dataset (default medium; generated from its preset when absent)
#   TIMEOUT   seconds before a run is stopped          (default 3600)
# Needs: go, jq, root (cgroups, /proc/sys/vm/drop_caches).
set -u
cd "$(dirname "$0")/.."

DATA=${DATA:-bench-data}
OUT=${OUT:-$DATA/bench-variants}
LIMITS=${LIMITS:-"25% 50% 100%"}
SYSTEMS=${SYSTEMS:-"gnndrive ginex pyg+ gnndrive:feature_buffer=device ginex:read_block=512 gnndrive:read_block=4096"}
EPOCHS=${EPOCHS:-3}
REPS=${REPS:-1}
TIMEOUT=${TIMEOUT:-3600}
COMPUTE=${COMPUTE:-cpu}
DATASET=${DATASET:-medium}
BIN=bin/outcore

command -v jq >/dev/null || { echo "bench-variants: needs jq" >&2; exit 1; }
mkdir -p "$OUT" bin
CGO_ENABLED=1 GOFLAGS=-buildvcs=false go build -o "$BIN" ./cmd/outcore || exit 1

if [ ! -f "$DATA/datasets/$DATASET/meta.json" ]; then
	echo "bench-variants: generating $DATASET in $DATA"
	"$BIN" data gen --preset "$DATASET" --data-dir "$DATA" || exit 1
fi

drop_caches() {
	sync
	if ! echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
		echo "bench-variants: cannot drop the page cache (not root?); runs start warm" >&2
	fi
}

{
	echo "# bench-variants $(date -u +%FT%TZ) on $(hostname): $(nproc) cores, $(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# commit $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo '+dirty')"
	echo "# dataset $DATASET, compute $COMPUTE, limits $LIMITS, epochs $EPOCHS, reps $REPS"
} | tee "$OUT/README"

for rep in $(seq 1 "$REPS"); do
	for limit in $LIMITS; do
		for entry in $SYSTEMS; do
			sys=${entry%%:*}
			optargs=()
			if [ "$entry" != "$sys" ]; then
				IFS=, read -ra kvs <<<"${entry#*:}"
				for kv in "${kvs[@]}"; do optargs+=(--opt "$kv"); done
			fi
			tag=$(printf '%s' "$entry" | sed 's/[:=,]/_/g')
			tag="${tag}_${limit%\%}pct_r${rep}"
			drop_caches
			echo "== $tag (load $(cut -d' ' -f1 /proc/loadavg))"
			timeout --signal=INT --kill-after=60 "$TIMEOUT" \
				"$BIN" train --data-dir "$DATA" --dataset "$DATASET" --system "$sys" \
				--model sage --layers 3 --fanout 10,10,10 --batch 1000 --hidden 256 \
				--epochs "$EPOCHS" --eval-every 1000 --mem-limit "$limit" --compute "$COMPUTE" "${optargs[@]}" \
				>"$OUT/$tag.jsonl" 2>"$OUT/$tag.err"
			echo "   exit $? $(jq -r 'select(.type=="summary") | "\(.outcome) mean_epoch_s=\(.mean_epoch_s) val=\(.best_val_acc)"' "$OUT/$tag.jsonl")"
		done
	done
done

# One row per run: the first (cold) epoch and the mean of the following
# (warm) ones apart, then the last epoch's breakdown (or the outcome when
# none). A run of one epoch has no warm mean ("-").
{
	printf 'run\toutcome\tcold_epoch_s\twarm_epoch_s\twarm_epochs\tepoch_s\tsample_s\textract_s\ttrain_s\tstall_s\tinspect_s\tswitch_s\tcache_update_s\tcpu_hit\tdevice_rows\tbytes_read_GiB\tfeature_read_GiB\tbytes_needed_GiB\tamplification\tpeak_cgroup_MiB\tval_acc\n'
	for f in "$OUT"/*.jsonl; do
		jq -rs --arg run "$(basename "$f" .jsonl)" '
			(map(select(.type=="epoch"))) as $eps |
			($eps | last) as $e |
			($eps | first) as $cold |
			($eps[1:]) as $warm |
			(map(select(.type=="summary")) | last) as $s |
			def r(x): if x == null then "-" else (x * 100 | round / 100 | tostring) end;
			def hit: if $e.tiers.cpu.lookups > 0 then r($e.tiers.cpu.hits / $e.tiers.cpu.lookups) else "-" end;
			[$run, ($s.outcome // "none"),
			 r($cold.epoch_s), (if ($warm | length) > 0 then r(($warm | map(.epoch_s) | add) / ($warm | length)) else "-" end), ($warm | length | tostring),
			 r($e.epoch_s), r($e.sample_s), r($e.extract_s), r($e.train_s), r($e.stall_s),
			 r($e.stages.inspect_s), r($e.stages.switch_s), r($e.stages.cache_update_s),
			 (if $e then hit else "-" end), ($e.tiers.device.lookups // "-" | tostring),
			 r(($e.bytes_read // null) | if . == null then null else . / 1073741824 end),
			 r(($e.feature_bytes_read // null) | if . == null then null else . / 1073741824 end),
			 r(($e.bytes_needed // null) | if . == null then null else . / 1073741824 end),
			 r($e.read_amplification), r(($s.peak_cgroup_bytes // 0) / 1048576), r($s.best_val_acc)] | @tsv' "$f"
	done
} | tee "$OUT/summary.tsv"
