# Builds and runs tests/package/consumer against warden, one way per run:
#   MODE=find_package      installs this build tree into WORK_DIR/prefix with
#                          cmake --install and finds it there
#   MODE=add_subdirectory  adds WARDEN_SOURCE_DIR to the consumer's build
# Run as a ctest test (see CMakeLists.txt next to this file for the inputs):
#   cmake -DMODE=... -DWORK_DIR=... [...] -P run_consumer.cmake
cmake_minimum_required(VERSION 3.16)

foreach(var MODE WORK_DIR WARDEN_SOURCE_DIR WARDEN_BINARY_DIR WARDEN_VERSION CONSUMER_SOURCE_DIR GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: ${var} is not set")
  endif()
endforeach()

# Runs a command, echoing it first; stops the test with its output if it fails.
function(run_step what)
  message(STATUS "${what}")
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output
    COMMAND_ECHO STDOUT)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

# Reads NAME from the consumer's CMakeCache.txt into out_var.
function(read_cache_entry build_dir name out_var)
  file(STRINGS "${build_dir}/CMakeCache.txt" line REGEX "^${name}:[A-Z]+=")
  string(REGEX REPLACE "^${name}:[A-Z]+=" "" value "${line}")
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

# A clean start each time: stale results from an earlier run must not pass.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(build_dir "${WORK_DIR}/build")

set(configure_args
  -S "${CONSUMER_SOURCE_DIR}" -B "${build_dir}" -G "${GENERATOR}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
  # Only what this test installed may satisfy find_package.
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
  -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON)
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(BUILD_TYPE)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(C_COMPILER)
  list(APPEND configure_args "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
set(config_args)
if(BUILD_TYPE)
  set(config_args --config "${BUILD_TYPE}")
endif()

if(MODE STREQUAL "find_package")
  set(prefix "${WORK_DIR}/prefix")
  run_step("Installing ${WARDEN_BINARY_DIR} into ${prefix}"
    "${CMAKE_COMMAND}" --install "${WARDEN_BINARY_DIR}" --prefix "${prefix}" ${config_args})

  # Public headers only (warden/detail/ holds header-only helpers the public
  # templates need): nothing from src/ or the generated Lua tables.
  file(GLOB_RECURSE installed_headers RELATIVE "${prefix}/include" "${prefix}/include/*")
  if(NOT installed_headers)
    message(FATAL_ERROR "no headers were installed under ${prefix}/include")
  endif()
  foreach(header IN LISTS installed_headers)
    if(NOT header MATCHES "^warden/(detail/)?[^/]+\\.hpp$")
      message(FATAL_ERROR "unexpected file installed: include/${header}")
    endif()
  endforeach()
  if(NOT EXISTS "${prefix}/include/warden/warden.hpp")
    message(FATAL_ERROR "include/warden/warden.hpp was not installed")
  endif()
  file(GLOB_RECURSE config_files "${prefix}/*/wardenConfig.cmake")
  if(NOT config_files)
    message(FATAL_ERROR "wardenConfig.cmake was not installed under ${prefix}")
  endif()

  run_step("Configuring the consumer with find_package(warden)"
    "${CMAKE_COMMAND}" ${configure_args}
    -DWARDEN_CONSUME=find_package
    "-DWARDEN_EXPECTED_VERSION=${WARDEN_VERSION}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
  read_cache_entry("${build_dir}" warden_DIR found_dir)
  string(FIND "${found_dir}" "${prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "find_package found warden in '${found_dir}', not in ${prefix}")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  run_step("Configuring the consumer with add_subdirectory(${WARDEN_SOURCE_DIR})"
    "${CMAKE_COMMAND}" ${configure_args}
    -DWARDEN_CONSUME=add_subdirectory
    "-DWARDEN_SOURCE_DIR=${WARDEN_SOURCE_DIR}")
  # As a subproject warden must stay quiet: no tests, examples, benchmark or
  # install rules forced on the parent project.
  foreach(option WARDEN_BUILD_TESTS WARDEN_BUILD_EXAMPLES WARDEN_BUILD_BENCH WARDEN_INSTALL)
    read_cache_entry("${build_dir}" ${option} value)
    if(value)
      message(FATAL_ERROR "${option} is '${value}' when warden is not the top-level project")
    endif()
  endforeach()
  foreach(subdir tests examples bench)
    if(EXISTS "${build_dir}/warden/${subdir}")
      message(FATAL_ERROR "warden's ${subdir}/ was configured although warden is a subproject")
    endif()
  endforeach()
else()
  message(FATAL_ERROR "MODE must be find_package or add_subdirectory (got '${MODE}')")
endif()

run_step("Building the consumer" "${CMAKE_COMMAND}" --build "${build_dir}" -j2 ${config_args})

run_step("Running the consumer" "${build_dir}/bin/warden-consumer")
if(NOT step_output MATCHES "port=6399 thread_id=[1-9][0-9]*")
  message(FATAL_ERROR "unexpected consumer output:\n${step_output}")
endif()
message(STATUS "consumer output: ${step_output}")
