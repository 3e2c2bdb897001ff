#!/usr/bin/env bash
# Installs what is missing, builds, and runs shingled on its sample pages.
# (Until the daemon lands, this compares the two near-duplicate sample pages shipped in
# tests/data/samples/.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build -DSHINGLED_BUILD_TESTS=OFF
exec build/daemon/shingled compare tests/data/samples/page-a.html tests/data/samples/page-b.html "$@"
