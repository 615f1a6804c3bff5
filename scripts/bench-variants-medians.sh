#!/usr/bin/env bash
# Medians over repeated runs of scripts/bench-variants.sh: one row per
# (memory limit, variant entry) over every run record (*.jsonl) in the
# directories given, as the Markdown table of docs/benchmarks/variants.md.
#
# Usage: scripts/bench-variants-medians.sh DIR [DIR...]
#
# Columns: runs done / runs (and how the others ended); the first (cold)
# epoch's time, median (min–max) over the runs that finished it, whatever
# happened later (a run killed in its second epoch has a cold epoch); the mean of the following (warm) epochs,
# median over the runs that had them (their count in brackets); then
# medians of the cold epoch's breakdown and counters; validation accuracy
# of the runs of one epoch (after the cold epoch, comparable across runs). A cell whose runs all
# ended otherwise shows the outcome (and the first error line).
# Needs: jq.
set -eu
[ $# -gt 0 ] || { echo "usage: $0 DIR [DIR...]" >&2; exit 2; }
files=()
for d in "$@"; do
	for f in "$d"/*.jsonl; do [ -e "$f" ] && files+=("$f"); done
done
[ ${#files[@]} -gt 0 ] || { echo "bench-variants-medians: no *.jsonl in $*" >&2; exit 1; }

for f in "${files[@]}"; do
	# a run refused before it started has no records: its first stderr line
	# says why, and its tag names the limit and the variant entry
	errline=$(head -n 1 "${f%.jsonl}.err" 2>/dev/null || true)
	tag=$(basename "$f" .jsonl)
	jq -cs --arg errline "$errline" --arg tag "$tag" '
		(map(select(.type=="start")) | first) as $st |
		(map(select(.type=="summary")) | last) as $s |
		(map(select(.type=="epoch"))) as $eps |
		($st.config.options // {} | to_entries | sort_by(.key) | map("\(.key)=\(.value)") | join(",")) as $o |
		($tag | capture("^(?<e>.*)_(?<l>[0-9]+)pct_r[0-9]+$") // {e: $tag, l: "?"}) as $t |
		{limit: ($st.config.mem_limit // ($t.l + "%")),
		 entry: (if $st then $st.system + (if $o == "" then "" else ":" + $o end)
		         + (if ($st.config.compute // "cpu") == "cpu" or ($st.config.compute // "") == "" then "" else " (compute " + $st.config.compute + ")" end) else $t.e end),
		 outcome: ($s.outcome // (if $st then "none" else "refused" end)),
		 error: (($s.error // (if $st then "" else $errline end)) | split("\n") | first),
		 cold: ($eps | first),
		 warm: (if ($eps | length) > 1 then ($eps[1:] | map(.epoch_s) | add / length) else null end),
		 prepare_s: ($s.prepare_s // null),
		 peak: (($s.peak_cgroup_bytes // 0) / 1048576),
		 epochs: ($eps | length),
		 val: ($s.best_val_acc // null)}' "$f"
done | jq -rs '
	def med: map(select(. != null)) | sort | if length == 0 then null
		elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r(n): if . == null then "–" else (. * pow(10; n) | round / pow(10; n) | tostring) end;
	def lim: .limit | rtrimstr("%") | tonumber? // 1000;
	def gib: if . == null then null else . / 1073741824 end;
	def mrows: if . == null then null else . / 1e6 end;
	"| limit | variant | done / runs | cold epoch s, median (min–max) | warm epoch s, median [runs] | prepare s | sample s | extract s | train s | stall s | rows from SSD (M) | feature GiB read | topology GiB read | amplification | peak cgroup MiB | val acc |",
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
	(group_by([lim, .limit, .entry]) | sort_by(.[0] | lim)[] |
		. as $g |
		map(select(.cold != null)) as $ok |
		($g | map(select(.outcome == "done")) | length) as $done |
		($g | map(select(.outcome != "done") | .outcome) | group_by(.) | map("\(length) \(.[0])") | join(", ")) as $others |
		($ok | map(.cold.epoch_s) | sort) as $c |
		($ok | map(.warm) | map(select(. != null))) as $w |
		"| \($g[0].limit) | \($g[0].entry) | \($done) / \($g | length)" + (if $others == "" then "" else " (" + $others + ")" end) + " | " +
		(if ($c | length) == 0 then "**" + ($g | map(.outcome) | unique | join(", ")) + "**" + (($g | map(.error) | map(select(. != "")) | first // "") | if . == "" then "" else ": " + .[0:160] end)
		 else ($c | med | r(1)) + " (" + ($c | first | r(1)) + "–" + ($c | last | r(1)) + ")" end) + " | " +
		(if ($w | length) == 0 then "–" else ($w | med | r(1)) + " [" + ($w | length | tostring) + "]" end) + " | " +
		([($ok | map(.prepare_s) | med | r(1)),
		  ($ok | map(.cold.sample_s) | med | r(1)),
		  ($ok | map(.cold.extract_s) | med | r(1)),
		  ($ok | map(.cold.train_s) | med | r(1)),
		  ($ok | map(.cold.stall_s) | med | r(1)),
		  ($ok | map(.cold.rows_from_device | mrows) | med | r(2)),
		  ($ok | map(.cold.feature_bytes_read | gib) | med | r(2)),
		  ($ok | map(.cold.topology_bytes_read | gib) | med | r(2)),
		  ($ok | map(.cold.read_amplification) | med | r(2)),
		  ($g | map(.peak) | med | r(0)),
		  ($g | map(select(.outcome == "done" and .epochs == 1) | .val) | med | r(3))] | join(" | ")) + " |")'
