#!/usr/bin/env bash
# Installs one npm package, at the version a test was written against, into DIR/node_modules, for
# a test that checks our output with a reader that is not ours. The build runs it:
#   scripts/install-npm-package.sh DIR PACKAGE VERSION TEST
#   - warcio 2.4.11 (webrecorder's WARC reader) for crawl_warc_test (tests/crawler/CMakeLists.txt)
#   - @seriousme/openapi-schema-validator 2.11.0 (the OpenAPI 3.0 and 3.1 schemas, checked with
#     ajv) for openapi_test (tests/docs/CMakeLists.txt)
# Without node and npm, or without the registry, it says so and exits 0: TEST then goes without
# that reader (it skips, or checks with its own rules alone).
set -uo pipefail
usage="usage: install-npm-package.sh DIR PACKAGE VERSION TEST"
dir=${1:?$usage} package=${2:?$usage} version=${3:?$usage} test=${4:?$usage}
if [[ -f "$dir/node_modules/$package/package.json" ]] &&
  grep -q "\"version\": \"$version\"" "$dir/node_modules/$package/package.json"; then
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-npm-package.sh: no node or npm; $test will go without $package" >&2
  exit 0
fi
mkdir -p "$dir"
if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
  --fetch-retries=1 --fetch-timeout=60000 "$package@$version" >&2; then
  echo "install-npm-package.sh: npm install $package@$version failed; $test will go without it" >&2
fi
exit 0
