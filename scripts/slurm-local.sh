#!/usr/bin/env bash
# slurm-local.sh start|stop|status — a single-node Slurm cluster on this
# machine, for outcore's slurm executor tests and for trying it by hand
# (docs/ARCHITECTURE.md "Executors"; README "Running grids on Slurm").
#
#   start   install Debian's slurm-wlm and munge when missing (apt-get),
#           write /etc/slurm/slurm.conf for this host, start munged,
#           slurmctld and slurmd, and wait until the node takes jobs
#   stop    stop the daemons this script started
#   status  say whether the cluster takes jobs (exit 0) or not (exit 1)
#
# It never touches a slurm.conf it did not write (a real cluster's): start
# then only checks that sbatch works. Needs root (or sudo). Settings known
# to work in containers without systemd: proctrack/linuxproc, task/none,
# select/cons_tres with CR_Core_Memory, SlurmUser=root, /run/munge owned
# by munge before munged starts. Finished jobs stay visible to squeue and
# scontrol for an hour (MinJobAge), as there is no accounting database.
set -euo pipefail

conf=/etc/slurm/slurm.conf
marker="# written by outcore scripts/slurm-local.sh"
logdir=/var/log/outcore-slurm
sudo=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo"

say() { echo "slurm-local: $*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

install_pkgs() {
  local want=()
  have munged || want+=(munge)
  { have slurmctld && have slurmd && have sbatch; } || want+=(slurm-wlm)
  [ ${#want[@]} -eq 0 ] && return 0
  if ! have apt-get; then
    say "no apt-get; install ${want[*]} yourself"
    return 1
  fi
  say "installing ${want[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null 2>&1 || true
  if ! $sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1; then
    say "apt-get install ${want[*]} failed"
    return 1
  fi
}

# takes_jobs: the controller answers and the node is idle, mixed or allocated.
takes_jobs() {
  local st
  st=$(sinfo -h -N -o '%T' 2>/dev/null | head -1) || return 1
  case "$st" in idle*|mix*|alloc*|completing*) return 0 ;; esac
  return 1
}

write_conf() {
  local node cpus mem line
  node=$(hostname -s)
  line=$(slurmd -C 2>/dev/null | head -1)
  cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$line")
  mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$line")
  [ -n "$cpus" ] || cpus=$(nproc)
  [ -n "$mem" ] || mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 ))
  # Leave 512 MiB to the system; jobs request memory (CR_Core_Memory).
  mem=$(( mem > 1024 ? mem - 512 : mem ))
  $sudo mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd "$logdir"
  $sudo tee "$conf" >/dev/null <<EOF
$marker
ClusterName=outcore-local
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/outcore-slurmctld.pid
SlurmdPidFile=/run/outcore-slurmd.pid
SlurmctldLogFile=$logdir/slurmctld.log
SlurmdLogFile=$logdir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if pgrep -x munged >/dev/null 2>&1 && munge -n </dev/null >/dev/null 2>&1; then
    return 0
  fi
  $sudo mkdir -p /run/munge /var/lib/munge /var/log/munge
  $sudo chown munge:munge /run/munge /var/lib/munge /var/log/munge
  $sudo chmod 0755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    $sudo mkdir -p /etc/munge
    $sudo dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 status=none
    $sudo chown munge:munge /etc/munge/munge.key
    $sudo chmod 0400 /etc/munge/munge.key
  fi
  if have runuser && [ "$(id -u)" -eq 0 ]; then
    runuser -u munge -- /usr/sbin/munged
  else
    $sudo -u munge /usr/sbin/munged
  fi
  for _ in $(seq 50); do
    munge -n </dev/null >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  say "munged did not start (see /var/log/munge/munged.log)"
  return 1
}

start() {
  install_pkgs || exit 1
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    say "$conf was not written by this script (a real cluster?); leaving it alone"
    takes_jobs && exit 0
    say "and its cluster does not take jobs from here"
    exit 1
  fi
  if takes_jobs && [ -f /run/outcore-slurmctld.pid ]; then
    say "already running"
    exit 0
  fi
  write_conf
  start_munge || exit 1
  if ! { [ -f /run/outcore-slurmctld.pid ] && kill -0 "$(cat /run/outcore-slurmctld.pid)" 2>/dev/null; }; then
    # -c: a fresh controller state (no jobs of an earlier start).
    $sudo slurmctld -c -f "$conf" || { say "slurmctld did not start (see $logdir/slurmctld.log)"; exit 1; }
  fi
  if ! { [ -f /run/outcore-slurmd.pid ] && kill -0 "$(cat /run/outcore-slurmd.pid)" 2>/dev/null; }; then
    $sudo slurmd -f "$conf" || { say "slurmd did not start (see $logdir/slurmd.log)"; exit 1; }
  fi
  for _ in $(seq 100); do
    if takes_jobs; then
      say "up: $(sinfo -h -N -o '%N %T %c CPUs %m MiB' | head -1)"
      exit 0
    fi
    # A node left down by an earlier start comes back on request.
    scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
    sleep 0.2
  done
  say "the node does not take jobs: $(sinfo -h -N -o '%N %T %E' 2>&1 | head -1)"
  exit 1
}

stop() {
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    say "$conf was not written by this script; not stopping anything"
    exit 0
  fi
  for p in /run/outcore-slurmd.pid /run/outcore-slurmctld.pid; do
    if [ -f "$p" ]; then
      pid=$(cat "$p")
      $sudo kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      $sudo rm -f "$p"
    fi
  done
  say "stopped slurmctld and slurmd (munged left running)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) takes_jobs && { say "up"; exit 0; } || { say "down"; exit 1; } ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
