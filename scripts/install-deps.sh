#!/usr/bin/env bash
# Installs the Debian packages outcore's tests and benchmarks use, where they
# are missing, and starts the single-node Slurm cluster of
# scripts/slurm-local.sh (it installs slurm-wlm and munge when missing) for
# the slurm executor's tests. Safe to run again. Needs root (or sudo) and
# apt-get; without them it says what is missing and carries on (tests that
# need a missing tool then fail, or for Slurm skip, with a message naming it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
start_slurm() {
  "$here/slurm-local.sh" start \
    || echo "install-deps: the local Slurm cluster did not start; the slurm executor's end-to-end tests will skip and say why" >&2
}
want=()
have() { command -v "$1" >/dev/null 2>&1; }
have chromium || want+=(chromium)
have fio || want+=(fio)
ls /usr/lib/*/libopenblas.so.0 >/dev/null 2>&1 || ls /usr/lib/libopenblas.so.0 >/dev/null 2>&1 || want+=(libopenblas0-pthread)
if [ ${#want[@]} -eq 0 ]; then
  start_slurm
  exit 0
fi
echo "install-deps: installing ${want[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && have sudo && sudo="sudo"
if ! have apt-get; then
  echo "install-deps: no apt-get; please install: ${want[*]}" >&2
  start_slurm
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null 2>&1 || true
$sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1 \
  || echo "install-deps: apt-get install ${want[*]} failed" >&2
start_slurm
exit 0
