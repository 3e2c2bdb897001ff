#!/usr/bin/env bash
# The crash harness's long mode: a daemon under mixed ingest killed with SIGKILL at
# random moments (start-up, load, graceful stop, sweep close, backup), restarted each round, every
# acknowledged page checked after each restart and `shingled check` at the end.
#   scripts/crash.sh [ROUNDS]          ROUNDS defaults to 100 (CI runs 5 through ctest)
# Builds the daemon and the test into $SHINGLED_BUILD_DIR (default build/) if needed; set
# SHINGLED_CRASH_SEED to replay a run (each run prints its seed).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-100}
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "crash.sh: ROUNDS must be a positive number, not '$rounds'" >&2
  exit 2
fi
build_dir=${SHINGLED_BUILD_DIR:-build}
[[ -f $build_dir/build.ninja ]] ||
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_dir" --target shingled daemon_tests >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
SHINGLED_CRASH_ROUNDS=$rounds "$build_dir/tests/daemon/daemon_tests" \
  --gtest_filter='CrashRoundsTest.*' 2>&1 | tee "$log" ||
  status=$?
summary=$(grep '^crash summary:' "$log" || true)
if [[ -z $summary ]]; then
  echo "crash.sh: the harness stopped before its summary (exit $status)" >&2
  exit 1
fi
echo "${summary/crash summary/crash.sh}"
exit "$status"
