#!/usr/bin/env bash
# Load benchmark of the daemon: starts `shingled serve` on a loopback port with a throw-away store,
# posts the corpus over 64 connections for SECONDS, and prints pages/s, p50/p99 latency, errors
# and the daemon's RSS at start and end (flat memory over a long run).
#   scripts/load-bench.sh [SECONDS [CONNECTIONS [CORPUS_DIR [UNIQUE]]]]
# UNIQUE=1 makes every body new bytes, so that every page is sketched (see load_bench.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
connections=${2:-64}
corpus=${3:-corpus}
unique=${4:-0}
[[ -d "$corpus" ]] || { echo "load-bench: no corpus in $corpus (scripts/make-corpus.sh)"; exit 2; }
scripts/build.sh build >/dev/null
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
build/daemon/shingled serve --config config/shingled.toml --store "$work/store" \
  --listen 127.0.0.1:0 2>"$work/log" &
pid=$!
for _ in $(seq 200); do grep -q "listening on" "$work/log" && break; sleep 0.05; done
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | cut -d: -f2)
build/tests/bench/load_bench --port "$port" --corpus "$corpus" --connections "$connections" \
  --seconds "$seconds" --pid "$pid" --unique "$unique"
curl -s "http://127.0.0.1:$port/metrics" | grep -E "^shingled_(store_commit_batch_pages_(sum|count)|store_commit_duration_seconds_(sum|count)|sketch_duration_seconds_(sum|count)|ingest_latency_seconds_(sum|count)|sketches_reused_total|pages_ingested_total|process_resident|store_disk)" || true
