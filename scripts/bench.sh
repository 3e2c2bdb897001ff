#!/usr/bin/env bash
# Builds the benchmarks and runs one, reporting the median of several repetitions.
#   scripts/bench.sh [BENCHMARK [REPETITIONS [FILTER]]]     e.g. scripts/bench.sh dedup_bench 5
# Needs the corpus: scripts/install-deps.sh --corpus && scripts/make-corpus.sh
# Runs on one core (taskset) so that figures are per core, as the issues quote them.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:-dedup_bench}
reps=${2:-5}
filter=${3:-.}
[[ -d corpus ]] || scripts/make-corpus.sh
scripts/build.sh build >/dev/null
exec taskset -c 0 "build/tests/bench/$bench" --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true --benchmark_filter="$filter"
