#!/usr/bin/env bash
# Builds the HTML corpus used by the canonicalizer differential test and the benchmarks: real
# HTML from the Debian documentation installed on this machine (postgresql-doc-15, python3-doc and
# everything else under /usr/share/doc; `scripts/install-deps.sh --corpus` installs the big ones).
#
#   scripts/make-corpus.sh [DIR [MAX_MB]]     default: corpus/ in the repository root, 90 MB
#
# Deterministic for a given set of installed packages: files are taken in byte order of their
# real path (symlinked copies counted once) until MAX_MB is reached, and written as
# NNNNN-<path>.html. Compressed pages (.html.gz) are stored decompressed. The directory is
# recreated from scratch; it is git-ignored.
set -euo pipefail
export LC_ALL=C

repo_root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$repo_root/corpus"}
max_mb=${2:-90}
max_bytes=$((max_mb * 1024 * 1024))
src=/usr/share/doc

if [[ ! -d $src ]]; then
  echo "make-corpus: $src not found" >&2
  exit 1
fi

list=$(mktemp)
trap 'rm -f "$list"' EXIT
find -L "$src" -type f \( -name '*.html' -o -name '*.htm' -o -name '*.xhtml' \
  -o -name '*.html.gz' -o -name '*.htm.gz' \) -print0 2>/dev/null |
  xargs -0 -r realpath -z | sort -z -u >"$list"

rm -rf "$out"
mkdir -p "$out"
total=0
n=0
while IFS= read -r -d '' f; do
  (( total >= max_bytes )) && break
  name=$(printf '%s' "${f#"$src"/}" | tr -c 'A-Za-z0-9._-' '_')
  name=${name%.gz}
  dest=$(printf '%s/%05d-%s' "$out" "$n" "$name")
  case $f in
    *.gz) gzip -dc -- "$f" >"$dest" ;;
    *) cp -- "$f" "$dest" ;;
  esac
  size=$(stat -c %s -- "$dest")
  total=$((total + size))
  n=$((n + 1))
done <"$list"

echo "make-corpus: $n pages, $((total / 1024 / 1024)) MB in $out"
