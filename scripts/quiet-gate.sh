# quiet-gate: sourced by the measuring scripts (bench-device.sh,
# frontier-figure.sh, reproduce-compute.sh,
# reproduce-testbed.sh). require_quiet NAME MAX exits
# when the 1-minute load average is above MAX: timings taken on a busy
# machine are not results.
require_quiet() {
  local name=$1 max=$2 load
  load=$(cut -d' ' -f1 /proc/loadavg)
  if awk -v l="$load" -v m="$max" 'BEGIN{exit !(l > m)}'; then
    echo "$name: load average $load is above $max: not a quiet machine, no measurement" >&2
    exit 1
  fi
}
