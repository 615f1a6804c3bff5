#!/usr/bin/env bash
# bench-io: random 512-byte reads at depth 128 on one large file, fio
# (io_uring, O_DIRECT) against `outcore bench io` with each backend.
# fio and outcore uring runs alternate; the medians and their ratio are
# printed, and the script fails when outcore uring reaches less than 90% of
# fio's IOPS (BENCH_IO_ENFORCE=0 turns that off).
#
# usage: scripts/bench-io.sh [FILE]
# env:   BENCH_IO_FILE     file to read (default $OUTCORE_SCRATCH/outcore-bench-io.bin,
#                          OUTCORE_SCRATCH defaults to /var/tmp); created if missing
#        BENCH_IO_GIB      size to create, GiB (default 8)
#        BENCH_IO_REPEATS  runs per configuration (default 5)
#        BENCH_IO_SECONDS  seconds per run (default 5)
#        BENCH_IO_BS       block/row size (default 512)
#        BENCH_IO_DEPTH    queue depth (default 128)
#        BENCH_IO_KEEP     1 keeps a file this script created (default: delete it)
#        OUTCORE           outcore binary (default bin/outcore, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."

file=${1:-${BENCH_IO_FILE:-${OUTCORE_SCRATCH:-/var/tmp}/outcore-bench-io.bin}}
gib=${BENCH_IO_GIB:-8}
repeats=${BENCH_IO_REPEATS:-5}
secs=${BENCH_IO_SECONDS:-5}
bs=${BENCH_IO_BS:-512}
depth=${BENCH_IO_DEPTH:-128}
outcore=${OUTCORE:-bin/outcore}

command -v fio >/dev/null || { echo "bench-io: fio not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
if [[ ! -x $outcore ]]; then
	outcore=$(mktemp -d)/outcore
	go build -o "$outcore" ./cmd/outcore
fi

created=0
cleanup() { if [[ $created == 1 && ${BENCH_IO_KEEP:-0} != 1 ]]; then rm -f "$file"; fi; }
trap cleanup EXIT
want=$((gib << 30))
if [[ -e $file ]]; then
	# Never write over an existing file: it may be someone's data.
	if [[ $(stat -c %s "$file") -lt $want ]]; then
		echo "bench-io: note: $file is smaller than ${gib} GiB; reads may hit the page cache or the host's disk cache" >&2
	fi
else
	mkdir -p "$(dirname "$file")"
	fstype=$(stat -f -c %T "$(dirname "$file")")
	if [[ $fstype == tmpfs ]]; then
		echo "bench-io: $(dirname "$file") is tmpfs; set BENCH_IO_FILE to a path on the SSD" >&2
		exit 1
	fi
	echo "bench-io: writing ${gib} GiB to $file" >&2
	created=1
	fio --name=create --filename="$file" --rw=write --bs=1M --size="${gib}G" --direct=1 \
		--ioengine=psync --output=/dev/null
fi

drop_caches() {
	sync
	if [[ -w /proc/sys/vm/drop_caches ]]; then
		echo 3 >/proc/sys/vm/drop_caches
	else
		echo "bench-io: cannot drop caches (not root); mmap runs may hit the page cache" >&2
	fi
}

fio_iops() {
	# terse format v3: field 8 is read IOPS.
	fio --name=r --filename="$file" --rw=randread --direct=1 --ioengine=io_uring \
		--bs="$bs" --iodepth="$depth" --runtime="$secs" --time_based \
		--output-format=terse | awk -F';' '{printf "%d\n", $8}'
}

outcore_iops() { # backend, extra flags...
	local io=$1
	shift
	"$outcore" bench io --file "$file" --row-bytes "$bs" --depth "$depth" --seconds "$secs" --io "$io" "$@" 2>/dev/null |
		tee -a "$log" | sed -n 's/.* iops=\([0-9]*\).*/\1/p'
}

load() { # uptime plus CPU and I/O pressure (PSI "some" avg10), where available
	local l
	l="$(uptime | sed 's/.*load average/load average/')"
	for r in cpu io; do
		[[ -r /proc/pressure/$r ]] && l+=", ${r}_pressure_avg10=$(awk '/^some/ {sub("avg10=", "", $2); print $2}' /proc/pressure/$r)%"
	done
	echo "$l"
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%d\n", (a[NR/2]+a[NR/2+1])/2}'; }

log=$(mktemp)
echo "bench-io: file=$file bs=$bs depth=$depth seconds=$secs repeats=$repeats" >&2
echo "bench-io: load before: $(load)" >&2
fio_runs=() uring_runs=() pread_runs=() mmap_runs=()
for i in $(seq "$repeats"); do
	fio_runs+=("$(fio_iops)")
	uring_runs+=("$(outcore_iops uring)")
	echo "bench-io: run $i: fio=${fio_runs[-1]} uring=${uring_runs[-1]} ($(load))" >&2
done
for i in $(seq "$repeats"); do
	pread_runs+=("$(outcore_iops pread)")
	drop_caches
	mmap_runs+=("$(outcore_iops mmap)")
	echo "bench-io: run $i: pread=${pread_runs[-1]} mmap=${mmap_runs[-1]} ($(load))" >&2
done
echo "bench-io: load after: $(load)" >&2
echo "bench-io: outcore lines:" >&2
sed 's/^/  /' "$log" >&2
rm -f "$log"

fio_med=$(printf '%s\n' "${fio_runs[@]}" | median)
uring_med=$(printf '%s\n' "${uring_runs[@]}" | median)
pread_med=$(printf '%s\n' "${pread_runs[@]}" | median)
mmap_med=$(printf '%s\n' "${mmap_runs[@]}" | median)
ratio=$(awk -v a="$uring_med" -v b="$fio_med" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')
echo "bench-io: fio_iops=$fio_med uring_iops=$uring_med pread_iops=$pread_med mmap_iops=$mmap_med uring_vs_fio=$ratio (medians of $repeats; fio runs: ${fio_runs[*]}; uring runs: ${uring_runs[*]})"
if [[ ${BENCH_IO_ENFORCE:-1} == 1 ]] && awk -v r="$ratio" 'BEGIN {exit !(r < 0.90)}'; then
	echo "bench-io: FAIL: outcore uring reached $ratio of fio's IOPS (< 0.90)" >&2
	exit 1
fi
