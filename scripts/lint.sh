#!/usr/bin/env bash
# The checks `make lint` runs (and `make test` through it). Each prints what
# it found; the script fails if any found something.
#   gofmt -l        every Go file formatted
#   goimports -l    imports grouped std / others / outcore (pinned as a go.mod tool)
#   templ fmt       web/views/*.templ formatted
#   go mod tidy     go.mod and go.sum complete and minimal
#   go vet          the whole module
# Generated files (templ's *_templ.go) are left to scripts/check-generated.sh.
set -u
cd "$(dirname "$0")/.."
fail=0
report() { # report NAME OUTPUT: print OUTPUT under NAME and fail when not empty
  if [ -n "$2" ]; then
    echo "lint: $1:" >&2
    echo "$2" | sed 's/^/  /' >&2
    fail=1
  fi
}

# Hand-written Go files: tracked or new (not ignored), without a generated header.
mapfile -t gofiles < <(git ls-files --cached --others --exclude-standard -- '*.go' |
  while read -r f; do [ -f "$f" ] && ! head -n 3 "$f" | grep -q '^// Code generated .* DO NOT EDIT\.$' && echo "$f"; done)

report "gofmt -l (run gofmt -w on these)" "$(gofmt -l "${gofiles[@]}")"
report "goimports -local outcore -l (run go tool goimports -local outcore -w on these)" \
  "$(go tool goimports -local outcore -l "${gofiles[@]}")"

# templ fmt rewrites in place: format a copy and compare.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r web/views "$tmp/views"
if ! out=$(go tool templ fmt -fail "$tmp/views" 2>&1); then
  report "templ fmt (run go tool templ fmt web/views)" \
    "$(diff -r -q web/views "$tmp/views" || echo "$out")"
fi

if ! out=$(go mod tidy -diff 2>&1); then
  report "go mod tidy -diff (run go mod tidy)" "$out"
fi

if ! out=$(go vet ./... 2>&1); then
  report "go vet ./..." "$out"
fi

exit $fail
