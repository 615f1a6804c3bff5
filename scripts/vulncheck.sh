#!/usr/bin/env bash
# `make vulncheck`: govulncheck against a vulnerability database built here,
# offline, from the golang.org/x/vulndb module (docs/SECURITY.md
# "Dependencies"). Both come through the module proxy at pinned versions:
# the vulndb module's OSV files (data/osv) are indexed into govulncheck's
# database format by vulndb's own cmd/indexdb, once per VULNDB_VERSION
# (kept under the Go build cache), and govulncheck reads it with
# -db file://. No vulnerability service is asked.
#
# The scan runs with the toolchain go.mod names (its `toolchain` line;
# GOTOOLCHAIN=auto fetches it through the proxy where it is not the local
# one), since the standard library's fixes come with it.
# Exit status: 0 when no reachable vulnerability is found, 3 when one is.
set -euo pipefail
cd "$(dirname "$0")/.."
VULNDB_VERSION=${VULNDB_VERSION:-v0.0.0-20261105234957-e22db6528018}
GOVULNCHECK_VERSION=${GOVULNCHECK_VERSION:-v1.9.0}
export GOTOOLCHAIN=auto GOFLAGS=-buildvcs=false
db=${VULNDB_DIR:-$(go env GOCACHE)/outcore-vulndb/$VULNDB_VERSION}
if [ ! -f "$db/index/db.json" ]; then
  src=$(go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$src" ] || [ ! -d "$src/data/osv" ]; then
    echo "vulncheck: golang.org/x/vulndb@$VULNDB_VERSION has no data/osv (got ${src:-nothing})" >&2
    exit 1
  fi
  echo "vulncheck: indexing $(ls "$src/data/osv" | wc -l) OSV entries of golang.org/x/vulndb@$VULNDB_VERSION into $db" >&2
  rm -rf "$db.tmp"
  mkdir -p "$(dirname "$db")"
  go run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$db.tmp"
  rm -rf "$db"
  mv "$db.tmp" "$db"
fi
echo "vulncheck: govulncheck $GOVULNCHECK_VERSION, $(go version), database golang.org/x/vulndb@$VULNDB_VERSION" >&2
exec go run "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "file://$db" "$@" ./...
