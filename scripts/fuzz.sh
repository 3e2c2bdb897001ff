#!/usr/bin/env bash
# Fuzzing's long mode: builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan)
# into their own build directory, runs each for SECONDS one after the other, merges the new inputs
# that add coverage into the committed corpus (tests/fuzz/corpus/NAME, with -merge=1 so it stays
# small), and prints per target: executions, coverage (cov/ft of libFuzzer's last status line),
# corpus size and findings (crash, leak, timeout and OOM inputs, kept in the findings folder).
#   scripts/fuzz.sh [SECONDS]          SECONDS per target, default 600
# Environment: SHINGLED_FUZZ_BUILD_DIR (default build-fuzz), SHINGLED_FUZZ_TARGETS (names such as
# "url config", default all), SHINGLED_FUZZ_OUT (logs and findings, default BUILD_DIR/fuzz-out),
# SHINGLED_FUZZ_NICE (default 10). Exits 1 when a target found something.
# A finding is fixed in the code, its input committed under tests/fuzz/corpus/NAME/regression_*
# (CTest replays it: NAME_corpus_replay) and a unit test named after the bug added.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS must be a positive number, not '$seconds'" >&2
  exit 2
fi
all_targets="canonicalize streaming_canonicalizer chunker charset links url robots warc
  request_parse http_request store_codec config"
targets=${SHINGLED_FUZZ_TARGETS:-$all_targets}
for t in $targets; do
  if ! [[ " $(echo $all_targets) " == *" $t "* ]]; then
    echo "fuzz.sh: no fuzz target '$t' (targets: $(echo $all_targets))" >&2
    exit 2
  fi
done
build_dir=${SHINGLED_FUZZ_BUILD_DIR:-build-fuzz}
out=${SHINGLED_FUZZ_OUT:-$build_dir/fuzz-out}
nice_level=${SHINGLED_FUZZ_NICE:-10}
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang++ (apt install clang)" >&2; exit 2; }

if [[ ! -f $build_dir/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHINGLED_BUILD_FUZZERS=ON >/dev/null
fi
binaries=()
for t in $targets; do binaries+=("${t}_fuzz"); done
nice -n "$nice_level" cmake --build "$build_dir" --target "${binaries[@]}" >/dev/null
mkdir -p "$out"

rows=()
failed=0
for t in $targets; do
  bin=$build_dir/tests/fuzz/${t}_fuzz
  corpus=tests/fuzz/corpus/$t
  new=$out/$t.new
  findings=$out/findings/$t
  log=$out/$t.log
  rm -rf "$new"
  mkdir -p "$new" "$findings" "$corpus"
  dict=()
  [[ -f tests/fuzz/$t.dict ]] && dict=("-dict=tests/fuzz/$t.dict")
  before=$(find "$findings" -type f | wc -l)
  echo "fuzz.sh: $t for ${seconds}s" >&2
  # New inputs go to $new (the first folder); the committed corpus is only read here.
  status=0
  nice -n "$nice_level" "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" "${dict[@]}" \
    "$new" "$corpus" >"$log" 2>&1 || status=$?
  # Adds to the committed corpus only the new inputs that bring coverage it lacks.
  nice -n "$nice_level" "$bin" -merge=1 -timeout=25 -rss_limit_mb=2048 -max_len=65536 \
    "$corpus" "$new" >"$out/$t.merge.log" 2>&1 || true
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  [[ -n $execs ]] || execs=$(grep -o '^#[0-9]*' <<<"$last" | tr -d '#' || true)
  files=$(find "$corpus" -type f | wc -l)
  kib=$(du -sk --apparent-size "$corpus" | cut -f1)
  found=$(($(find "$findings" -type f | wc -l) - before))
  if ((found > 0 || status != 0)); then
    failed=1
    what="$found: $(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer): [a-z -]+|runtime error: .*' "$log" || echo "exit $status")"
  else
    what=0
  fi
  rows+=("| $t | ${seconds} s | ${execs:-?} | ${cov:-?} / ${ft:-?} | $files files, $kib KiB | $what |")
done

echo
echo "fuzz.sh: ${seconds} s per target, $(date -u +%F) at $(git rev-parse --short HEAD)"
echo
echo "| target | time | executions | cov / ft | corpus after merge | findings |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
((failed == 0)) || echo "fuzz.sh: findings and logs in $out" >&2
exit "$failed"
