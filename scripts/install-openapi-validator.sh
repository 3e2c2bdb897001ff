#!/usr/bin/env bash
# Installs the npm package @seriousme/openapi-schema-validator (the OpenAPI 3.0 and 3.1 JSON
# schemas, checked with ajv, under node) into DIR/node_modules, for the test that validates
# docs/openapi.yaml as a document (tests/docs/openapi_test.py). The build runs it
# (tests/docs/CMakeLists.txt):
#   scripts/install-openapi-validator.sh DIR
# Without node and npm, or without the registry, it says so and exits 0: the test then checks the
# document with its own rules alone.
set -uo pipefail
dir=${1:?usage: install-openapi-validator.sh DIR}
package=@seriousme/openapi-schema-validator
version=2.11.0  # the version the test was written against
if [[ -f "$dir/node_modules/$package/package.json" ]] &&
  grep -q "\"version\": \"$version\"" "$dir/node_modules/$package/package.json"; then
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-openapi-validator.sh: no node or npm; openapi_test will not run $package" >&2
  exit 0
fi
mkdir -p "$dir"
if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
  --fetch-retries=1 --fetch-timeout=60000 "$package@$version" >&2; then
  echo "install-openapi-validator.sh: npm install $package@$version failed;" \
    "openapi_test will not run it" >&2
fi
exit 0
