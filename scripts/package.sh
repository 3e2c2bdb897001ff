#!/usr/bin/env bash
# Builds the Debian package with CPack and checks it with lintian (packaging/Debian.cmake).
#   scripts/package.sh             configures build-deb/ (Release, -O2 -g, Debian's hardening
#                                  flags, /usr prefix, no tests), builds the binary, packages it
#   scripts/package.sh BUILD_DIR   packages an already configured tree (scripts/test.sh passes its
#                                  build/): sets the /usr prefix if needed, which changes only the
#                                  install rules, so a built tree is not compiled again
# Leaves shingled_<version>_<arch>.deb and shingled-dbgsym_<version>_<arch>.deb in the build
# directory. Exits non-zero if packaging fails or lintian reports an error; warnings are printed.
# Tags overridden, each with its reason: packaging/deb/lintian-overrides.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -ge 1 ]]; then
  build_dir=$1
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    echo "package.sh: $build_dir is not a configured build directory" >&2
    exit 2
  fi
  if ! grep -qx 'CMAKE_INSTALL_PREFIX:PATH=/usr' "$build_dir/CMakeCache.txt"; then
    cmake -DCMAKE_INSTALL_PREFIX=/usr "$build_dir" >/dev/null
  fi
else
  build_dir=build-deb
  # What dpkg-buildpackage would compile with: -g -O2, the stack protector, _FORTIFY_SOURCE,
  # relro and bind-now. The debug information goes to the -dbgsym package.
  export DEB_BUILD_MAINT_OPTIONS=hardening=+all
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DSHINGLED_BUILD_TESTS=OFF -DSHINGLED_BUILD_BENCHMARKS=OFF \
    "-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG" \
    "-DCMAKE_CXX_FLAGS=$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)" \
    "-DCMAKE_EXE_LINKER_FLAGS=$(dpkg-buildflags --get LDFLAGS)" >/dev/null
fi

# A no-op for a built tree; cpack would otherwise build the whole tree itself.
cmake --build "$build_dir" -j "$(nproc)"

rm -f "$build_dir"/shingled_*.deb "$build_dir"/shingled-dbgsym_*.deb
(cd "$build_dir" && cpack -G DEB)
debs=("$build_dir"/shingled_*.deb "$build_dir"/shingled-dbgsym_*.deb)
for f in "${debs[@]}"; do
  if [[ ! -f "$f" ]]; then
    echo "package.sh: cpack made no $f" >&2
    exit 1
  fi
done

# The binary is hardened (bind-now, fortified functions) and the -dbgsym package holds its debug
# information, whichever tree it was built in.
binary="$build_dir/daemon/shingled"
# Captured, then matched: `readelf | grep -q` fails under pipefail when grep stops reading early.
dynamic=$(readelf -W -d "$binary")
if ! grep -q 'BIND_NOW\|FLAGS_1.*NOW' <<<"$dynamic"; then
  echo "package.sh: $binary is not linked with -z now (configure with dpkg-buildflags' LDFLAGS)" >&2
  exit 1
fi
symbols=$(readelf -W --dyn-syms "$binary")
if ! grep -q '__[a-z_]*_chk' <<<"$symbols"; then
  echo "package.sh: $binary calls no fortified function (compile with -D_FORTIFY_SOURCE=2 -O1 or more)" >&2
  exit 1
fi
dbgsym_dir=$(mktemp -d)
trap 'rm -rf "$dbgsym_dir"' EXIT
dpkg-deb -x "$build_dir"/shingled-dbgsym_*.deb "$dbgsym_dir"
debug_file=$(find "$dbgsym_dir/usr/lib/debug" -name '*.debug' -print -quit)
sections=""
if [[ -n "$debug_file" ]]; then sections=$(readelf -W -S "$debug_file" 2>/dev/null || true); fi
if ! grep -q '\.debug_info' <<<"$sections" || ! grep -q '\.debug_line' <<<"$sections"; then
  echo "package.sh: the -dbgsym package holds no debug information (.debug_info, .debug_line)" >&2
  exit 1
fi
echo "package.sh: bind-now, fortified functions, and debug information in ${debug_file#"$dbgsym_dir"}"

# Every relative link of the package's Markdown leads to a file the package holds.
package_dir="$dbgsym_dir/package"
dpkg-deb -x "$build_dir"/shingled_*.deb "$package_dir"
/usr/bin/python3 - "$package_dir" <<'PY'
import os, re, sys
root = sys.argv[1]
broken = []
for folder, _, names in os.walk(os.path.join(root, "usr/share/doc/shingled")):
    for name in (n for n in names if n.endswith(".md")):
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, https:, mailto:, file:
            if not os.path.exists(os.path.join(folder, target)):
                broken.append(f"{os.path.relpath(path, root)} -> {target}")
if broken:
    print("package.sh: the installed docs link to files the package leaves out:", *broken,
          sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY

echo "== lintian ${debs[*]}"
# Errors and warnings are printed (lintian's default); only errors fail.
lintian --fail-on error "${debs[@]}"
echo "package.sh: lintian found no error in ${debs[*]}"
