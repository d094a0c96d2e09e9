# Steps shared by the package test drivers (run_consumer.cmake,
# run_other_type.cmake): running a command, reading a cache, checking an
# installed tree, and building + running the consumer with CMake
# (find_package) or with a plain Makefile (pkg-config).
#
# The drivers set these before including this file:
#   WORK_DIR, CONSUMER_SOURCE_DIR, MAKE_CONSUMER_DIR, GENERATOR, MAKE_PROGRAM,
#   BUILD_TYPE, C_COMPILER, CXX_COMPILER, CXX_FLAGS, LINKER_FLAGS, WARDEN_VERSION

# Runs a command, echoing it first; stops the test with its output if it fails.
# The output is left in step_output.
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

# Reads NAME from a CMakeCache.txt into out_var ("" when absent).
function(read_cache_entry build_dir name out_var)
  file(STRINGS "${build_dir}/CMakeCache.txt" line REGEX "^${name}:[A-Z]+=")
  string(REGEX REPLACE "^${name}:[A-Z]+=" "" value "${line}")
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

# cmake arguments for configuring the consumer the way warden was built.
function(consumer_configure_args out_var build_dir)
  set(args
    -S "${CONSUMER_SOURCE_DIR}" -B "${build_dir}" -G "${GENERATOR}"
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    # Only what the test installed may satisfy find_package.
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    -DCMAKE_FIND_PACKAGE_NO_SYSTEM_PACKAGE_REGISTRY=ON)
  if(MAKE_PROGRAM)
    list(APPEND args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
  if(C_COMPILER)
    list(APPEND args "-DCMAKE_C_COMPILER=${C_COMPILER}")
  endif()
  if(CXX_COMPILER)
    list(APPEND args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
  endif()
  set(${out_var} "${args}" PARENT_SCOPE)
endfunction()

# The consumer's line: "port=6399 thread_id=N version=MAJOR.MINOR.PATCH".
function(check_consumer_output output)
  if(NOT output MATCHES "port=6399 thread_id=[1-9][0-9]* version=${WARDEN_VERSION}")
    message(FATAL_ERROR "unexpected consumer output:\n${output}")
  endif()
  message(STATUS "consumer output: ${output}")
endfunction()

# An installed warden under `prefix`: the public headers only (warden/detail/
# holds header-only helpers the public templates need; nothing from src/ or
# the generated Lua tables), the generated version.hpp, the CMake package
# config and warden.pc. Sets installed_pc_dir in the caller to warden.pc's
# directory.
function(check_installed_tree prefix)
  file(GLOB_RECURSE installed_headers RELATIVE "${prefix}/include" "${prefix}/include/*")
  if(NOT installed_headers)
    message(FATAL_ERROR "no headers were installed under ${prefix}/include")
  endif()
  foreach(header IN LISTS installed_headers)
    if(NOT header MATCHES "^warden/(detail/)?[^/]+\\.hpp$")
      message(FATAL_ERROR "unexpected file installed: include/${header}")
    endif()
  endforeach()
  foreach(header warden.hpp version.hpp export.hpp)
    if(NOT EXISTS "${prefix}/include/warden/${header}")
      message(FATAL_ERROR "include/warden/${header} was not installed under ${prefix}")
    endif()
  endforeach()
  file(STRINGS "${prefix}/include/warden/version.hpp" version_line REGEX "^#define WARDEN_VERSION \"")
  if(NOT version_line STREQUAL "#define WARDEN_VERSION \"${WARDEN_VERSION}\"")
    message(FATAL_ERROR "installed version.hpp says '${version_line}', expected ${WARDEN_VERSION}")
  endif()
  file(GLOB_RECURSE config_files "${prefix}/*/wardenConfig.cmake")
  if(NOT config_files)
    message(FATAL_ERROR "wardenConfig.cmake was not installed under ${prefix}")
  endif()
  # warden-inspect comes with its manual page (man1 under CMAKE_INSTALL_MANDIR).
  if(EXISTS "${prefix}/bin/warden-inspect")
    file(GLOB_RECURSE man_pages "${prefix}/*/man/man1/warden-inspect.1")
    if(NOT man_pages)
      message(FATAL_ERROR "warden-inspect was installed under ${prefix} without its man page (share/man/man1/warden-inspect.1)")
    endif()
  endif()
  file(GLOB_RECURSE pc_files "${prefix}/*/pkgconfig/warden.pc")
  list(LENGTH pc_files pc_count)
  if(NOT pc_count EQUAL 1)
    message(FATAL_ERROR "expected one pkgconfig/warden.pc under ${prefix}, found: ${pc_files}")
  endif()
  get_filename_component(pc_dir "${pc_files}" DIRECTORY)
  set(installed_pc_dir "${pc_dir}" PARENT_SCOPE)
endfunction()

# Builds and runs the consumer against the warden installed under `prefix`,
# through find_package(warden <version>).
function(cmake_consumer prefix build_dir)
  consumer_configure_args(args "${build_dir}")
  if(BUILD_TYPE)
    list(APPEND args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
  endif()
  run_step("Configuring the consumer with find_package(warden) from ${prefix}"
    "${CMAKE_COMMAND}" ${args}
    -DWARDEN_CONSUME=find_package
    "-DWARDEN_EXPECTED_VERSION=${WARDEN_VERSION}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
  read_cache_entry("${build_dir}" warden_DIR found_dir)
  string(FIND "${found_dir}" "${prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "find_package found warden in '${found_dir}', not in ${prefix}")
  endif()
  set(config_args)
  if(BUILD_TYPE)
    set(config_args --config "${BUILD_TYPE}")
  endif()
  run_step("Building the consumer" "${CMAKE_COMMAND}" --build "${build_dir}" -j2 ${config_args})
  run_step("Running the consumer" "${build_dir}/bin/warden-consumer")
  check_consumer_output("${step_output}")
endfunction()

# Builds the consumer with tests/package/make_consumer/Makefile from the
# warden.pc in `pc_dir` and runs it (with `lib_dir` on LD_LIBRARY_PATH).
# `static`: link with pkg-config --static and expect no libwarden.so in the
# program's NEEDED entries; else expect one.
function(make_consumer pc_dir lib_dir static work)
  find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
  find_program(MAKE_EXECUTABLE NAMES make gmake REQUIRED)
  find_program(READELF_EXECUTABLE NAMES readelf REQUIRED)
  # The warden.pc found must be the one under test, not one installed elsewhere.
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${pc_dir}"
            "${PKG_CONFIG_EXECUTABLE}" --variable=pcfiledir warden
    OUTPUT_VARIABLE found_pc_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE result)
  get_filename_component(found_pc_dir "${found_pc_dir}" REALPATH)
  get_filename_component(expected_pc_dir "${pc_dir}" REALPATH)
  if(NOT result EQUAL 0 OR NOT found_pc_dir STREQUAL expected_pc_dir)
    message(FATAL_ERROR "pkg-config found warden.pc in '${found_pc_dir}', not in ${pc_dir}")
  endif()
  file(MAKE_DIRECTORY "${work}")
  set(make_args -f "${MAKE_CONSUMER_DIR}/Makefile" -C "${work}"
    "SRC=${CONSUMER_SOURCE_DIR}/main.cpp" "OUT=${work}/warden-consumer"
    "PKG_CONFIG=${PKG_CONFIG_EXECUTABLE}" "PKG_CONFIG_PATH=${pc_dir}"
    "CXXFLAGS=${CXX_FLAGS}" "LDFLAGS=${LINKER_FLAGS}")
  if(CXX_COMPILER)
    list(APPEND make_args "CXX=${CXX_COMPILER}")
  endif()
  if(static)
    list(APPEND make_args STATIC=1)
    set(how "pkg-config --static")
  else()
    set(how "pkg-config")
  endif()
  run_step("pkg-config flags (${how})" "${MAKE_EXECUTABLE}" ${make_args} flags)
  message(STATUS "${step_output}")
  run_step("Building the consumer with a plain Makefile (${how})" "${MAKE_EXECUTABLE}" ${make_args})
  run_step("Reading the consumer's dynamic section" "${READELF_EXECUTABLE}" -d "${work}/warden-consumer")
  if(static AND step_output MATCHES "libwarden\\.so")
    message(FATAL_ERROR "a static link left the consumer needing libwarden.so:\n${step_output}")
  endif()
  if(NOT static AND NOT step_output MATCHES "NEEDED[^\n]*libwarden\\.so")
    message(FATAL_ERROR "the consumer does not need libwarden.so:\n${step_output}")
  endif()
  run_step("Running the Makefile-built consumer"
    "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${lib_dir}" "${work}/warden-consumer")
  check_consumer_output("${step_output}")
endfunction()

# A shared libwarden: its soname carries the version, and it exports the
# public API only. Prints the counts of exported symbols.
function(check_shared_library library soversion)
  find_program(READELF_EXECUTABLE NAMES readelf REQUIRED)
  find_program(NM_EXECUTABLE NAMES nm REQUIRED)
  run_step("Reading the soname of ${library}" "${READELF_EXECUTABLE}" -d "${library}")
  if(NOT step_output MATCHES "SONAME[^\n]*\\[libwarden\\.so\\.${soversion}\\]")
    message(FATAL_ERROR "libwarden's soname is not libwarden.so.${soversion}:\n${step_output}")
  endif()
  run_step("Listing the symbols ${library} exports" "${NM_EXECUTABLE}" -DC --defined-only "${library}")
  string(REGEX MATCHALL "[^\n]+" symbols "${step_output}")
  list(LENGTH symbols total)
  set(public 0)
  set(unexpected)
  foreach(line IN LISTS symbols)
    # "<address> <type> <demangled name>"
    string(REGEX REPLACE "^[0-9a-fA-F]* *[A-Za-z] +" "" symbol "${line}")
    if(symbol MATCHES "warden::")
      math(EXPR public "${public} + 1")
    endif()
    # Members of public classes may name internal types (a private
    # constructor taking a core); anything else naming warden::detail is an
    # internal that leaked: public inline code reaches no internal function.
    if(symbol MATCHES "^warden::detail::" OR (NOT symbol MATCHES "^warden::" AND symbol MATCHES "warden::detail::"))
      list(APPEND unexpected "${symbol}")
    endif()
  endforeach()
  message(STATUS "libwarden exports ${total} symbols, ${public} of them in namespace warden")
  if(unexpected)
    list(LENGTH unexpected count)
    list(JOIN unexpected "\n" text)
    message(FATAL_ERROR "${count} internal symbols are exported:\n${text}")
  endif()
endfunction()

# The pkg-config lines of README.md ("Without CMake, through pkg-config"), run
# as they are printed, in a scratch directory holding the consumer as app.cpp,
# with PKG_CONFIG_PATH pointing at `pc_dir`; each program (a.out) is run with
# `lib_dir` on LD_LIBRARY_PATH. A sanitizer build's flags (CXX_FLAGS,
# LINKER_FLAGS) are appended after the line: its static libwarden only links
# with those runtimes.
function(readme_pkg_config_lines pc_dir lib_dir work)
  file(STRINGS "${WARDEN_SOURCE_DIR}/README.md" lines REGEX "^c\\+\\+ .*\\$\\(pkg-config ")
  if(NOT lines)
    message(FATAL_ERROR "README.md has no 'c++ ... $(pkg-config ...)' line")
  endif()
  find_program(SH_EXECUTABLE sh REQUIRED)
  set(index 0)
  foreach(line IN LISTS lines)
    # The command, without its trailing comment.
    string(REGEX REPLACE "[ ]+#.*$" "" command "${line}")
    set(dir "${work}/readme-${index}")
    file(REMOVE_RECURSE "${dir}")
    file(MAKE_DIRECTORY "${dir}")
    configure_file("${CONSUMER_SOURCE_DIR}/main.cpp" "${dir}/app.cpp" COPYONLY)
    set(extra "")
    if(NOT "${CXX_FLAGS} ${LINKER_FLAGS}" MATCHES "^ *$")
      set(extra " ${CXX_FLAGS} ${LINKER_FLAGS}")
    endif()
    run_step("README line ${index}, as printed: ${command}"
      "${CMAKE_COMMAND}" -E chdir "${dir}" "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${pc_dir}"
      "${SH_EXECUTABLE}" -c "${command}${extra}")
    run_step("Running the program README line ${index} built"
      "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${lib_dir}" "${dir}/a.out")
    check_consumer_output("${step_output}")
    math(EXPR index "${index} + 1")
  endforeach()
endfunction()
