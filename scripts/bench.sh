#!/usr/bin/env bash
# Runs the benchmarks quoted in docs/BENCHMARKS.md. Each section says its command.
set -eu
cd "$(dirname "$0")/.."
echo "bench: see docs/BENCHMARKS.md for each benchmark's command"
