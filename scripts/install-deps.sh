#!/usr/bin/env bash
# Installs the Debian 12 packages shingled needs to build, test, package and benchmark.
# Idempotent: packages already present are left alone. Runs as root (or with sudo).
#
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --corpus   also the HTML documentation used by the benchmark corpus
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates
  clang clang-tidy libclang-rt-14-dev
  # libraries
  libboost-dev libboost-system-dev
  libcurl4-openssl-dev libssl-dev openssl libgumbo-dev liblmdb-dev lmdb-utils
  prometheus-cpp-dev libutf8proc-dev libxxhash-dev nlohmann-json3-dev
  libtomlplusplus-dev libcli11-dev libspdlog-dev zlib1g-dev
  libidn2-dev  # IDNA for URL hosts in Unicode (crawler/url.cc)
  libhiredis-dev  # the Redis Cluster client (redis/)
  # integration test (Prometheus scrapes the daemon), load benchmark, unit verification
  prometheus wrk systemd
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  chromium  # the report tests render the HTML pages headless
  chromium-driver python3-selenium  # the sign-in test fills the login form in Chromium
  python3-scrapy  # the Python client's Scrapy middleware runs in a real crawl (tests/clients/)
  wget  # the WARC interop test crawls a loopback site with GNU wget
  curl  # the README's tour (tests/docs/readme_test.cc) runs its curl commands
  jq  # docs/API.md's examples (tests/docs/docs_test.cc) pipe an answer through jq
  # docs/openapi.yaml is loaded and a real daemon's answers validated against its schemas
  # (tests/docs/openapi_test.py)
  python3-yaml python3-jsonschema
  nghttp2-server  # nghttpd: the HTTP/2 fetch test
  redis-server redis-tools  # tests/redis/ starts a Redis Cluster on loopback
  # the Debian package (scripts/package.sh): CPack finds ELF files with file(1), splits the debug
  # symbols with objcopy (binutils) and asks dpkg-shlibdeps (dpkg-dev) for the dependencies
  lintian file binutils dpkg-dev
)
corpus_packages=(postgresql-doc-15 python3-doc)

want=("${packages[@]}")
if [[ "${1:-}" == "--corpus" ]]; then
  want+=("${corpus_packages[@]}")
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
