#!/usr/bin/env bash
# Reads beside writes: one daemon, posts of unique pages over CONNECTIONS connections, in ROUNDS
# pairs of SECONDS-long runs, the first of each pair alone and the second with READERS
# connections looping REPORT (/v1/reports/clusters by default); prints each run's pages/s and
# latency percentiles, then the medians and the ratio with reports / alone. The store grows
# during the runs, so alone and with reports alternate.
#   scripts/read-load-bench.sh [SECONDS [ROUNDS [READERS [CORPUS_DIR [REPORT [CONNECTIONS]]]]]]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
rounds=${2:-3}
readers=${3:-2}
corpus=${4:-corpus}
report=${5:-/v1/reports/clusters}
connections=${6:-16}
[[ -d "$corpus" ]] || { echo "read-load-bench: no corpus in $corpus (scripts/make-corpus.sh)"; exit 2; }
[[ -x build/tests/bench/load_bench ]] || { echo "read-load-bench: build first (scripts/build.sh build)"; exit 2; }
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
build/daemon/shingled serve --config config/shingled.toml --store "$work/store" \
  --listen 127.0.0.1:0 2>"$work/log" &
pid=$!
for _ in $(seq 200); do grep -q "listening on" "$work/log" && break; sleep 0.05; done
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | cut -d: -f2)
run() {  # $1: readers; prints "pages/s p50 p99"
  build/tests/bench/load_bench --port "$port" --corpus "$corpus" --connections "$connections" \
    --seconds "$seconds" --unique 1 --readers "$1" --report "$report" >"$work/out" 2>&1 || true
  local rate p50 p99
  rate=$(grep -o '[0-9]* pages/s' "$work/out" | head -1 | cut -d' ' -f1)
  p50=$(grep -o 'p50 [0-9.]*' "$work/out" | head -1 | cut -d' ' -f2)
  p99=$(grep -o 'p99 [0-9.]*' "$work/out" | head -1 | cut -d' ' -f2)
  echo "$rate $p50 $p99"
  grep '^reports' "$work/out" >&2 || true
}
echo "| run | readers | pages/s | p50 ms | p99 ms |"
echo "| --- | ---: | ---: | ---: | ---: |"
alone=() with=()
for r in $(seq "$rounds"); do
  a=$(run 0); w=$(run "$readers")
  echo "| $r | 0 | ${a// / | } |"
  echo "| $r | $readers | ${w// / | } |"
  alone+=("$a"); with+=("$w")
done
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
for k in 1 2 3; do
  ma=$(printf '%s\n' "${alone[@]}" | cut -d' ' -f$k | median)
  mw=$(printf '%s\n' "${with[@]}" | cut -d' ' -f$k | median)
  name=$(echo "pages/s p50 p99" | cut -d' ' -f$k)
  echo "median $name: alone $ma, with reports $mw, ratio $(awk -v a="$ma" -v w="$mw" 'BEGIN {printf "%.2f", (a > 0 ? w / a : 0)}')"
done
