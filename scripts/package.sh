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

echo "== lintian ${debs[*]}"
# Errors and warnings are printed (lintian's default); only errors fail.
lintian --fail-on error "${debs[@]}"
echo "package.sh: lintian found no error in ${debs[*]}"
