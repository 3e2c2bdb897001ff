# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS, packaging/Debian.cmake): what dh_strip does.
# Runs after CPack installed each component into ${CPACK_TEMPORARY_DIRECTORY}/<component>, before
# the packages are made from those directories: the debug information of /usr/bin/shingled goes
# to shingled-dbgsym as /usr/lib/debug/.build-id/<xx>/<rest of the build ID>.debug (where gdb and
# debuginfod look for it), and the binary is stripped, keeping a .gnu_debuglink to that file.
set(_stage ${CPACK_TEMPORARY_DIRECTORY})
set(_binary ${_stage}/shingled${CPACK_PACKAGING_INSTALL_PREFIX}/bin/shingled)
set(_debug_root ${_stage}/dbgsym${CPACK_PACKAGING_INSTALL_PREFIX}/lib/debug)
if(NOT EXISTS ${_binary})
  message(FATAL_ERROR "SplitDebug.cmake: no ${_binary} to strip")
endif()

find_program(_objcopy objcopy REQUIRED)
find_program(_readelf readelf REQUIRED)
find_program(_strip strip REQUIRED)

function(_run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "SplitDebug.cmake: ${ARGN}: ${err}")
  endif()
endfunction()

execute_process(COMMAND env LC_ALL=C ${_readelf} -n ${_binary} OUTPUT_VARIABLE _notes
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0 OR NOT _notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
  message(FATAL_ERROR "SplitDebug.cmake: ${_binary} has no GNU build ID (link with --build-id)")
endif()
set(_debug_dir ${_debug_root}/.build-id/${CMAKE_MATCH_1})
set(_debug_file ${_debug_dir}/${CMAKE_MATCH_2}.debug)
file(MAKE_DIRECTORY ${_debug_dir})

# dh_strip's commands for an executable, in its order.
_run(${_objcopy} --only-keep-debug --compress-debug-sections ${_binary} ${_debug_file})
file(CHMOD ${_debug_file} PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
_run(${_strip} --remove-section=.comment --remove-section=.note ${_binary})
_run(${_objcopy} --add-gnu-debuglink ${_debug_file} ${_binary})
message(STATUS "SplitDebug.cmake: stripped bin/shingled; debug information in "
               "lib/debug/.build-id/${CMAKE_MATCH_1}/${CMAKE_MATCH_2}.debug")
