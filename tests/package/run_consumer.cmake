# Builds and runs tests/package/consumer against this build of warden, one
# way per run:
#   MODE=find_package      installs this build tree into WORK_DIR/prefix with
#                          cmake --install and finds it there (CMake consumer)
#   MODE=pkg_config        installs it the same way and builds the consumer
#                          with a plain Makefile from warden.pc, and with
#                          each pkg-config line of README.md as printed
#   MODE=add_subdirectory  adds WARDEN_SOURCE_DIR to the consumer's build
# Run as a ctest test (see CMakeLists.txt next to this file for the inputs):
#   cmake -DMODE=... -DWORK_DIR=... [...] -P run_consumer.cmake
cmake_minimum_required(VERSION 3.16)

foreach(var MODE WORK_DIR WARDEN_SOURCE_DIR WARDEN_BINARY_DIR WARDEN_VERSION CONSUMER_SOURCE_DIR
            MAKE_CONSUMER_DIR GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/package_steps.cmake)

# A clean start each time: stale results from an earlier run must not pass.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(build_dir "${WORK_DIR}/build")
set(config_args)
if(BUILD_TYPE)
  set(config_args --config "${BUILD_TYPE}")
endif()

if(MODE STREQUAL "find_package" OR MODE STREQUAL "pkg_config")
  set(prefix "${WORK_DIR}/prefix")
  run_step("Installing ${WARDEN_BINARY_DIR} into ${prefix}"
    "${CMAKE_COMMAND}" --install "${WARDEN_BINARY_DIR}" --prefix "${prefix}" ${config_args})
  check_installed_tree("${prefix}")
  if(MODE STREQUAL "find_package")
    cmake_consumer("${prefix}" "${build_dir}")
  else()
    file(GLOB shared_libraries "${prefix}/*/libwarden.so" "${prefix}/*/*/libwarden.so")
    if(shared_libraries)
      set(static OFF)
      get_filename_component(lib_dir "${shared_libraries}" DIRECTORY)
    else()
      set(static ON)
      set(lib_dir "")
    endif()
    make_consumer("${installed_pc_dir}" "${lib_dir}" ${static} "${WORK_DIR}/make")
    readme_pkg_config_lines("${installed_pc_dir}" "${lib_dir}" "${WORK_DIR}/readme")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  consumer_configure_args(args "${build_dir}")
  if(BUILD_TYPE)
    list(APPEND args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
  endif()
  run_step("Configuring the consumer with add_subdirectory(${WARDEN_SOURCE_DIR})"
    "${CMAKE_COMMAND}" ${args}
    -DWARDEN_CONSUME=add_subdirectory
    "-DWARDEN_SOURCE_DIR=${WARDEN_SOURCE_DIR}")
  # As a subproject warden must stay quiet: no tests, examples, benchmark,
  # tools or install rules forced on the parent project.
  foreach(option WARDEN_BUILD_TESTS WARDEN_BUILD_EXAMPLES WARDEN_BUILD_BENCH WARDEN_BUILD_TOOLS WARDEN_INSTALL)
    read_cache_entry("${build_dir}" ${option} value)
    if(value)
      message(FATAL_ERROR "${option} is '${value}' when warden is not the top-level project")
    endif()
  endforeach()
  foreach(subdir tests examples bench tools)
    if(EXISTS "${build_dir}/warden/${subdir}")
      message(FATAL_ERROR "warden's ${subdir}/ was configured although warden is a subproject")
    endif()
  endforeach()

  # Nor its build type: a consumer that chose none keeps none (warden's own
  # default, RelWithDebInfo, is for its top-level build only). Configuring is
  # enough to see it.
  set(plain_dir "${WORK_DIR}/no-build-type")
  consumer_configure_args(args "${plain_dir}")
  run_step("Configuring a consumer that sets no build type"
    "${CMAKE_COMMAND}" ${args}
    -DWARDEN_CONSUME=add_subdirectory
    "-DWARDEN_SOURCE_DIR=${WARDEN_SOURCE_DIR}")
  read_cache_entry("${plain_dir}" CMAKE_BUILD_TYPE plain_type)
  if(NOT plain_type STREQUAL "")
    message(FATAL_ERROR "warden set the consumer's CMAKE_BUILD_TYPE to '${plain_type}'")
  endif()

  run_step("Building the consumer" "${CMAKE_COMMAND}" --build "${build_dir}" -j2 ${config_args})
  run_step("Running the consumer" "${build_dir}/bin/warden-consumer")
  check_consumer_output("${step_output}")
else()
  message(FATAL_ERROR "MODE must be find_package, pkg_config or add_subdirectory (got '${MODE}')")
endif()
