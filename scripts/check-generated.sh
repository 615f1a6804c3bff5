#!/usr/bin/env bash
# Fails when a committed *_templ.go differs from what `templ generate` makes.
set -eu
cd "$(dirname "$0")/.."
[ -n "$(find web -name '*.templ' 2>/dev/null)" ] || exit 0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r web "$tmp/web"
go tool templ generate -path "$tmp/web" >/dev/null 2>&1
if ! diff -r -q web "$tmp/web" >/dev/null; then
  echo "templ output is stale; run 'make generate' and commit:" >&2
  diff -r -q web "$tmp/web" >&2 || true
  exit 1
fi
