#!/usr/bin/env bash
# Installs the npm package warcio (webrecorder's WARC reader, JavaScript) into DIR/node_modules,
# for the test that reads the crawler's WARC files with a reader that is not ours
# (tests/crawler/crawl_warc_test.cc). The build runs it (tests/crawler/CMakeLists.txt):
#   scripts/install-warcio.sh DIR
# Without node and npm, or without the registry, it says so and exits 0: that test then skips.
set -uo pipefail
dir=${1:?usage: install-warcio.sh DIR}
version=2.4.11  # the version the test was written against
if [[ -f "$dir/node_modules/warcio/package.json" ]] &&
  grep -q "\"version\": \"$version\"" "$dir/node_modules/warcio/package.json"; then
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-warcio.sh: no node or npm; the warcio interop test will skip" >&2
  exit 0
fi
mkdir -p "$dir"
if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
  --fetch-retries=1 --fetch-timeout=60000 "warcio@$version" >&2; then
  echo "install-warcio.sh: npm install warcio@$version failed; the warcio interop test will skip" >&2
fi
exit 0
