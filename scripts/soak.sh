#!/usr/bin/env bash
# The soak: a daemon under mixed load for MINUTES, measured every minute.
#   scripts/soak.sh [MINUTES [CORPUS_DIR]]      MINUTES defaults to 30
# Builds shingled and load_bench into $SHINGLED_BUILD_DIR (default build/) if needed, starts
# `shingled serve` on a free loopback port with a store in a temporary folder, serves a site of
# 200 pages on another loopback port (python3's http.server) that the daemon's crawler sweeps
# every minute, and drives 64 connections with tests/bench/load_bench's mixed mode: pages, NDJSON
# batches, WARC uploads, similar, lost, history and /metrics (every body new bytes, so the store
# grows). Prints per minute pages/s, p50/p99/p999 latency, errors, RSS, open descriptors and
# threads, then the slope of each per minute, the crawler's sweeps, the store's size and the
# daemon's own timings (/metrics). Exits 1 on any error. CORPUS_DIR defaults to corpus/ or, when
# there is none, a 20 MB corpus made by scripts/make-corpus.sh in the build folder.
# SHINGLED_SOAK_STORE=DIR starts the daemon on a copy of the store in DIR (a store that starts
# large, against one that grows from empty); SHINGLED_SOAK_TOML adds its text to the daemon's
# config (e.g. $'[sketch]\nchunk_input = "none"' for a store without chunks);
# SHINGLED_SOAK_KEEP=DIR keeps a backup of the store at the end (`shingled backup`) in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
if ! [[ $minutes =~ ^[1-9][0-9]*$ ]]; then
  echo "soak.sh: MINUTES must be a positive number, not '$minutes'" >&2
  exit 2
fi
build_dir=${SHINGLED_BUILD_DIR:-build}
[[ -f $build_dir/build.ninja ]] ||
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_dir" --target shingled load_bench >/dev/null
corpus=${2:-corpus}
if [[ ! -d $corpus ]]; then
  corpus=$build_dir/soak-corpus
  [[ -d $corpus ]] || scripts/make-corpus.sh "$corpus" 20 >/dev/null
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The loopback site: an index linking 200 pages of the corpus.
mkdir -p "$work/site"
n=0
{
  echo "<!doctype html><html><body><h1>soak site</h1>"
  while IFS= read -r -d '' file; do
    cp "$file" "$work/site/p$n.html"
    echo "<a href=\"p$n.html\">page $n</a>"
    n=$((n + 1))
    ((n < 200)) || break
  done < <(find "$corpus" -maxdepth 1 -type f -print0 | sort -z)
  echo "</body></html>"
} >"$work/site/index.html"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/site" >"$work/site.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "port [0-9]" "$work/site.log" && break; sleep 0.1; done
site_port=$(grep -o 'port [0-9]*' "$work/site.log" | head -1 | cut -d' ' -f2)
[[ -n $site_port ]] || { echo "soak.sh: the loopback site did not start" >&2; exit 1; }

if [[ -n ${SHINGLED_SOAK_STORE:-} ]]; then
  [[ -f $SHINGLED_SOAK_STORE/data.mdb ]] ||
    { echo "soak.sh: SHINGLED_SOAK_STORE=$SHINGLED_SOAK_STORE holds no data.mdb" >&2; exit 2; }
  mkdir -p "$work/store"
  cp "$SHINGLED_SOAK_STORE/data.mdb" "$work/store/"
fi
cat >"$work/soak.toml" <<TOML
[crawler]
enabled = true
seeds = ["http://127.0.0.1:$site_port/index.html"]
allow_private_addresses = true
obey_robots = false
every = "60s"
per_host_delay_ms = 0
max_depth = 1
TOML
[[ -z ${SHINGLED_SOAK_TOML:-} ]] || printf '%s\n' "$SHINGLED_SOAK_TOML" >>"$work/soak.toml"
"$build_dir/daemon/shingled" serve --config "$work/soak.toml" --store "$work/store" \
  --listen 127.0.0.1:0 2>"$work/log" &
pid=$!
pids+=("$pid")
for _ in $(seq 600); do grep -q "listening on" "$work/log" && break; sleep 0.05; done
port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/log" | head -1 | cut -d: -f2)
[[ -n $port ]] || { echo "soak.sh: the daemon did not start:" >&2; cat "$work/log" >&2; exit 1; }
echo "soak.sh: $minutes min, daemon pid $pid on 127.0.0.1:$port, site on 127.0.0.1:$site_port," \
  "$(date -u +%FT%TZ), commit $(git rev-parse --short HEAD)"

status=0
"$build_dir/tests/bench/load_bench" --port "$port" --corpus "$corpus" --connections 64 \
  --seconds $((minutes * 60)) --pid "$pid" --unique 1 --mix 1 --report-every 60 || status=$?

echo "crawler: $(curl -s "http://127.0.0.1:$port/v1/crawl")"
echo "crawler sweeps: $(curl -s "http://127.0.0.1:$port/v1/sweeps" | grep -o '"crawl-[^"]*"' | sort -u | wc -l)"
echo "store: $(du -sh "$work/store" | cut -f1)"
if [[ -n ${SHINGLED_SOAK_KEEP:-} ]]; then
  "$build_dir/daemon/shingled" backup --store "$work/store" "$SHINGLED_SOAK_KEEP" >/dev/null &&
    echo "store kept in $SHINGLED_SOAK_KEEP"
fi
curl -s "http://127.0.0.1:$port/metrics" |
  grep -E '^shingled_(store_commit_batch_pages_(sum|count)|store_commit_duration_seconds_(sum|count)|sketch_duration_seconds_(sum|count)|ingest_latency_seconds_(sum|count)|store_disk)' ||
  true
# Log lines are "TIME LEVEL message".
if grep -qE '^[^ ]+ (error|critical) ' "$work/log"; then
  echo "soak.sh: the daemon logged errors:" >&2
  grep -E '^[^ ]+ (error|critical) ' "$work/log" | cut -d' ' -f2- | sort | uniq -c | sort -rn |
    head -20 >&2
  status=1
fi
exit "$status"
