#!/usr/bin/env bash
# The denial-of-service probe of docs/SECURITY.md: `outcore serve` with an
# auth file in a 1 GiB memory cgroup and 1024 file descriptors, attacked
# from loopback addresses only (127.0.0.0/8) with slow bodies, a gzip bomb,
# 20,000 idle connections, 900 idle connections held from 18 addresses
# and reopened as the server closes them (each at most 5 times), a bundle
# flood, a flood of 14 pages of a 10,000-run experiment and a
# password-guessing flood; after each it reports whether the server is
# alive and answering. Needs writable memory cgroups (root); about a
# minute and a half, 10 minutes at most. Not part of `make test` (the per-attack regression tests
# in web/attack_test.go and web/listener_test.go are).
set -euo pipefail
cd "$(dirname "$0")/.."
OUTCORE_PROBE=1 go test -count=1 -run '^TestProbeServer$' -v -timeout 10m ./web/ 2>&1 |
  grep -E '^(probe:|--- |FAIL|ok|PASS)|probe_test.go'
