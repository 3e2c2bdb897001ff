# The Debian package, made by CPack from the install rules (scripts/package.sh does all of this
# and runs lintian):
#   cmake -S . -B build -G Ninja -DCMAKE_INSTALL_PREFIX=/usr ... && cmake --build build
#   (cd build && cpack -G DEB)
# gives shingled_<version>_<arch>.deb and shingled-dbgsym_<version>_<arch>.deb. What debhelper
# would add by itself is here by hand: the copyright file, the compressed Debian changelog, the
# conffile list, the maintainer scripts (packaging/deb/) and the split debug symbols.

set(_deb_dir ${PROJECT_SOURCE_DIR}/packaging/deb)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_deb_dir}/changelog)
configure_file(${_deb_dir}/shingled.1.in ${PROJECT_BINARY_DIR}/packaging/shingled.1 @ONLY)

# The package's version is the changelog's first entry, as dpkg-buildpackage takes it from
# debian/changelog; its upstream part must be project()'s version, so that the two cannot drift.
file(STRINGS ${_deb_dir}/changelog _deb_top LIMIT_COUNT 1)
if(NOT _deb_top MATCHES "^shingled \\(([0-9][^ )]*)-([^ )-]+)\\) ")
  message(FATAL_ERROR
          "packaging/deb/changelog: the first line is not 'shingled (VERSION-REVISION) ...'")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR
          "packaging/deb/changelog's newest entry is ${CMAKE_MATCH_1}-${CMAKE_MATCH_2}; "
          "project() says ${PROJECT_VERSION}: add a changelog entry")
endif()
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CMAKE_MATCH_2})

# The changelog and the man page go in compressed with gzip -9n (no name or time stamp in the
# header, so that the package is reproducible), as dh_compress does.
find_program(SHINGLED_GZIP gzip REQUIRED)
foreach(_pair "${_deb_dir}/changelog;changelog.Debian.gz"
              "${PROJECT_BINARY_DIR}/packaging/shingled.1;shingled.1.gz")
  list(GET _pair 0 _in)
  list(GET _pair 1 _out)
  execute_process(COMMAND ${SHINGLED_GZIP} -9nc INPUT_FILE ${_in}
                  OUTPUT_FILE ${PROJECT_BINARY_DIR}/packaging/${_out} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "gzip ${_in}: ${_rc}")
  endif()
endforeach()
install(FILES ${_deb_dir}/copyright ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_BINARY_DIR}/packaging/shingled.1.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${_deb_dir}/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME shingled)

# The debug symbols' package, as dh_strip makes it: its doc directory is a link to shingled's, and
# packaging/SplitDebug.cmake moves the binary's debug information into it (below).
file(CREATE_LINK shingled ${PROJECT_BINARY_DIR}/packaging/shingled-dbgsym SYMBOLIC)
install(FILES ${PROJECT_BINARY_DIR}/packaging/shingled-dbgsym
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc COMPONENT dbgsym EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shingled)
set(SHINGLED_PACKAGE_MAINTAINER
    "shingled maintainers <maintainers@users.noreply.a-seed-8bf14690.example>"
    CACHE STRING "The Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT ${SHINGLED_PACKAGE_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${SHINGLED_PACKAGE_MAINTAINER})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each package's own description,
# which starts with its synopsis.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Directories 0755 whatever the umask of the user who runs cpack.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# Two packages, one per install component: shingled (every install rule's default component,
# set in the top-level CMakeLists.txt) and shingled-dbgsym. CPack's own
# CPACK_DEBIAN_DEBUGINFO_PACKAGE is not used: in CMake 3.25 its package lists the debug file
# under its absolute build path in md5sums and has no copyright file, both lintian errors.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL shingled dbgsym)
set(CPACK_DEBIAN_SHINGLED_PACKAGE_NAME shingled)
set(CPACK_DEBIAN_SHINGLED_PACKAGE_SECTION net)
set(CPACK_DEBIAN_SHINGLED_DESCRIPTION "near-duplicate web page detection daemon
shingled finds duplicate and near-duplicate web pages as a crawl goes by,
with Broder's shingles and min-wise sketches, and remembers them across
crawls in an LMDB store: documents, dated URL versions, sweeps and
persistent clusters.

It answers a crawler's hook over an HTTP API on loopback, runs scheduled
crawl sweeps of its own, reads WARC files, and exports Prometheus metrics.
The systemd unit is installed but neither enabled nor started.")
# Library dependencies from dpkg-shlibdeps; the maintainer scripts' systemd-sysusers comes from
# one of the packages dh_installsysusers names.
set(CPACK_DEBIAN_SHINGLED_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_SHINGLED_PACKAGE_DEPENDS
    "systemd | systemd-standalone-sysusers | systemd-sysusers")
set(CPACK_DEBIAN_SHINGLED_PACKAGE_CONTROL_EXTRA
    ${_deb_dir}/conffiles ${_deb_dir}/postinst ${_deb_dir}/prerm ${_deb_dir}/postrm)

set(CPACK_DEBIAN_DBGSYM_PACKAGE_NAME shingled-dbgsym)
set(CPACK_DEBIAN_DBGSYM_PACKAGE_SECTION debug)
set(CPACK_DEBIAN_DBGSYM_DESCRIPTION "debug symbols for shingled
The debug information of /usr/bin/shingled (line tables at least), under
/usr/lib/debug/.build-id, where gdb finds it by the binary's build ID.")
set(CPACK_DEBIAN_DBGSYM_PACKAGE_DEPENDS
    "shingled (= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE})")

# After CPack has installed both components into their staging directories and before it makes
# the packages: strip /usr/bin/shingled and move its debug information to shingled-dbgsym under
# /usr/lib/debug/.build-id, as dh_strip does.
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/packaging/SplitDebug.cmake)

# The conffile list and the unit's paths assume /usr (config in /etc): a .deb of a tree
# configured for /usr/local would be wrong, so cpack refuses it (packaging/CPackProject.cmake).
set(CPACK_SHINGLED_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/packaging/CPackProject.cmake)
include(CPack)
