#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: once in a normal build, and once built
# with AddressSanitizer and UndefinedBehaviorSanitizer. Exits non-zero on any failure.
#   scripts/test.sh              both builds
#   scripts/test.sh --quick      the normal build only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

werror=()
if [[ "${CI:-}" == "true" ]]; then werror=(-DSHINGLED_WERROR=ON); fi

echo "== build (RelWithDebInfo) =="
scripts/build.sh build "${werror[@]}"
echo "== tests =="
ctest --test-dir build --output-on-failure -j "$(nproc)"

if [[ "${1:-}" != "--quick" ]]; then
  echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer) =="
  # -O1 -g1 (line tables): what the sanitizers' documentation advises for readable reports, and
  # ~40% less compile time than -O2 -g, which keeps CI under 20 minutes on 2 cores.
  scripts/build.sh build-asan -DSHINGLED_SANITIZE=ON -DSHINGLED_BUILD_BENCHMARKS=OFF "${werror[@]}" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  echo "== tests under sanitizers =="
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
fi
