#!/usr/bin/env bash
# Runs `systemd-analyze verify` on systemd/shingled.service with ExecStart pointed at a built
# binary (verify checks that the executable exists), and prints the offline security exposure.
#   scripts/verify-unit.sh [BINARY]      BINARY defaults to build/daemon/shingled
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-build/daemon/shingled}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s#/usr/bin/shingled#$binary#" systemd/shingled.service > "$tmp/shingled.service"
systemd-analyze verify "$tmp/shingled.service"
echo "systemd-analyze verify: ok"
systemd-analyze security --offline=true "$tmp/shingled.service" | tail -1
