#!/usr/bin/env bash
# Refreshes static/vendor/ from the versions pinned in static/package-lock.json.
# Only needed to change a version: the copied files are committed, so building
# and testing outcore never needs npm. Run from anywhere: static/vendor.sh
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp package.json package-lock.json "$tmp/"
(cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
v() { node -p "require('$tmp/node_modules/$1/package.json').version"; }
hv=$(v htmx.org); sv=$(v htmx-ext-sse); ev=$(v echarts)
rm -f vendor/*.js
cp "$tmp/node_modules/htmx.org/dist/htmx.min.js" "vendor/htmx-$hv.min.js"
cp "$tmp/node_modules/htmx-ext-sse/dist/sse.min.js" "vendor/htmx-ext-sse-$sv.min.js"
cp "$tmp/node_modules/echarts/dist/echarts.min.js" "vendor/echarts-$ev.min.js"
cp "$tmp/node_modules/htmx.org/LICENSE" vendor/LICENSE.htmx
cp "$tmp/node_modules/htmx-ext-sse/LICENSE" vendor/LICENSE.htmx-ext-sse
cp "$tmp/node_modules/echarts/LICENSE" vendor/LICENSE.echarts
cp "$tmp/node_modules/echarts/NOTICE" vendor/NOTICE.echarts
{
  echo "# Vendored front-end files: package, version, licence, sha256 of the committed file."
  echo "# Refresh with static/vendor.sh (reads package-lock.json); web/assets.go names these files."
  for f in "htmx.org $hv 0BSD vendor/htmx-$hv.min.js" \
           "htmx-ext-sse $sv 0BSD vendor/htmx-ext-sse-$sv.min.js" \
           "echarts $ev Apache-2.0 vendor/echarts-$ev.min.js"; do
    set -- $f
    echo "$1 $2 $3 $(sha256sum "$4" | cut -d' ' -f1) $4"
  done
} > vendor/VERSIONS
cat vendor/VERSIONS
