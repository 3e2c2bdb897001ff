#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: once in a normal build, and once built
# with AddressSanitizer and UndefinedBehaviorSanitizer; the normal build is also packaged as a
# .deb and checked with lintian. Exits non-zero on any failure.
#   scripts/test.sh              both builds
#   scripts/test.sh --quick      the normal build only (and its package)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

werror=()
# Each phase's heading gives the seconds since the start: CI's budget is 20 minutes.
phase() { echo "== $1 (at ${SECONDS} s) =="; }
if [[ "${CI:-}" == "true" ]]; then werror=(-DSHINGLED_WERROR=ON); fi

phase "build (RelWithDebInfo)"
# -g1 (line tables, enough for backtraces): full debug info is ~30% of the compile time of the
# template-heavy files (http_server.cc: 58 s at -O2 -g, 40 s at -O2 -g1).
# The /usr prefix is the package's (below); it changes only the install rules.
# The tests' own sources at -O1 (what they test stays at -O2): docs/DEVELOPMENT.md "CI time".
# Debian's hardening flags (dpkg-buildflags: _FORTIFY_SOURCE, the stack protector, relro and
# bind-now) without its -g -O2, which the build type sets: the package below is made from this
# tree, and lintian and package.sh check them in its binary.
hardening() { DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1" |
  tr ' ' '\n' | grep -vE '^(-g|-O[0-9s]|-ffile-prefix-map=.*)$' | tr '\n' ' '; }
scripts/build.sh build "${werror[@]}" -DCMAKE_INSTALL_PREFIX=/usr \
  "-DCMAKE_CXX_FLAGS=$(hardening CPPFLAGS) $(hardening CXXFLAGS)" \
  "-DCMAKE_EXE_LINKER_FLAGS=$(hardening LDFLAGS)" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DSHINGLED_TEST_OPTIMIZE=-O1
phase "tests"
# Twice as many tests as cores: most of them wait on sockets, daemons and Redis (the normal
# suite used ~36% of 2 cores at -j2). The timing-bound ones take two slots (PROCESSORS).
ctest --test-dir build --output-on-failure -j "$((2 * $(nproc)))"
phase "package (cpack + lintian)"
# Packages the tree just built and tested (no third compile: ~25 s on 2 cores), so the .deb holds
# the binary the tests ran; lintian fails the run on any error.
scripts/package.sh build

if [[ "${1:-}" != "--quick" ]]; then
  phase "build (AddressSanitizer + UndefinedBehaviorSanitizer)"
  # -O0 -g1 (line tables): nothing optimized away from the sanitizers' checks, and on 2 cores the
  # build takes 411 s against 679 s at -O1, more than the tests lose (115 s without the
  # statistical tests below, against 85 s with them at -O1).
  # clang 14 (Debian's, with libclang-rt-14-dev): at -O0 with the sanitizers it compiles our
  # files ~2-2.5x faster than GCC 12 (docs/DEVELOPMENT.md "CI time"), and the normal build above
  # still checks the tree with GCC, the compiler the package is built with.
  scripts/build.sh build-asan -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DSHINGLED_SANITIZE=ON -DSHINGLED_BUILD_BENCHMARKS=OFF "${werror[@]}" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG"
  phase "tests under sanitizers"
  # One test a core: at twice that the timing-bound tests starve under the sanitizers (the
  # crash test's child had acknowledged no page when it was killed).
  # The statistical tests of the sketches (thousands of sketches of random pages, ~60 s of CPU
  # under the sanitizers) run in the normal build only: their code paths are those of the
  # other sketch tests, which run here.
  # The same for the verification corpus test (10 seeds over ~1,600 texts): store_verify_test
  # runs the second stage's code under the sanitizers.
  statistical='sketch_test\.SketchTest\.(FungibilityFollowsTheAcceptanceCurve|SampleEstimatorsAreUnbiased|SuperShinglesFindHalfResemblingPages)|store_verify_corpus_test\.'
  # The differential tests of the Redis Cluster engine (the same pages on both engines, compared
  # answer by answer; 40-50 s each under the sanitizers) run in the normal build only: under the
  # sanitizers the conformance suite (store_tests.RedisCluster) runs the same engine code.
  differential='redis_backend(_listings|_reports|_chunks|_walks)?_test\.[A-Za-z]+\.[A-Za-z]+(AsLmdb|GivesLmdbs[A-Za-z]+)$'
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -E "$statistical|$differential"
fi
phase "done"
