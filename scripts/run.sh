#!/usr/bin/env bash
# Installs what is missing, builds, and starts the daemon (`shingled serve`) in the foreground
# with the default config (config/shingled.toml) and a store under ./data/store, on
# 127.0.0.1:8480. Ctrl-C (SIGINT) stops it gracefully. Extra arguments go to `shingled serve`
# (e.g. --listen 127.0.0.1:9000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build -DSHINGLED_BUILD_TESTS=OFF
mkdir -p data
exec build/daemon/shingled serve --config config/shingled.toml --store data/store "$@"
