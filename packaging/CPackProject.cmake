# Read by cpack before each generator (CPACK_PROJECT_CONFIG_FILE).
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_SHINGLED_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "The Debian package needs a build configured with "
                      "-DCMAKE_INSTALL_PREFIX=/usr (this one has ${CPACK_SHINGLED_INSTALL_PREFIX}); "
                      "scripts/package.sh does it")
endif()
