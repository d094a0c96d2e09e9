# Builds warden as the library type this build is not (SHARED=ON: a shared
# libwarden, for a static main build; OFF: a static one), then checks it as a
# user gets it:
#   - a shared libwarden has soname libwarden.so.<soversion> and exports only
#     the public API (nm -D; the counts are printed);
#   - installed with cmake --install, it is found by find_package (CMake
#     consumer) and by pkg-config (plain-Makefile consumer, and README.md's
#     pkg-config lines as printed);
#   - cpack -G DEB makes a .deb with the library, headers, CMake and pkg-config
#     files and warden-inspect, which unpacked (dpkg -x) into a scratch root is
#     found the same two ways, and which dpkg would install on this system
#     (dpkg --dry-run -i, when run as root).
# Only the library and warden-inspect are built (-j2): no tests or examples.
# Run as a ctest test (see CMakeLists.txt next to this file for the inputs).
cmake_minimum_required(VERSION 3.16)

foreach(var SHARED SOVERSION WORK_DIR WARDEN_SOURCE_DIR WARDEN_VERSION CONSUMER_SOURCE_DIR MAKE_CONSUMER_DIR
            GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_other_type.cmake: ${var} is not set")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/package_steps.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(warden_build "${WORK_DIR}/warden-build")
set(type_name static)
if(SHARED)
  set(type_name shared)
endif()

set(build_type "${BUILD_TYPE}")
if(NOT build_type)
  set(build_type RelWithDebInfo)
endif()
set(configure_args -S "${WARDEN_SOURCE_DIR}" -B "${warden_build}" -G "${GENERATOR}"
  "-DBUILD_SHARED_LIBS=${SHARED}" "-DCMAKE_BUILD_TYPE=${build_type}"
  -DWARDEN_BUILD_TESTS=OFF -DWARDEN_BUILD_EXAMPLES=OFF -DWARDEN_BUILD_BENCH=OFF
  -DWARDEN_BUILD_TOOLS=ON -DWARDEN_INSTALL=ON
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
  "-DCMAKE_SHARED_LINKER_FLAGS=${LINKER_FLAGS}")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(C_COMPILER)
  list(APPEND configure_args "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run_step("Configuring a ${type_name} warden" "${CMAKE_COMMAND}" ${configure_args})
run_step("Building the ${type_name} warden (library and warden-inspect)"
  "${CMAKE_COMMAND}" --build "${warden_build}" -j2)

if(SHARED)
  file(GLOB built_library "${warden_build}/libwarden.so.${WARDEN_VERSION}")
  if(NOT built_library)
    message(FATAL_ERROR "no libwarden.so.${WARDEN_VERSION} in ${warden_build}")
  endif()
  check_shared_library("${built_library}" "${SOVERSION}")
endif()

# Installed with cmake --install.
set(prefix "${WORK_DIR}/prefix")
run_step("Installing into ${prefix}" "${CMAKE_COMMAND}" --install "${warden_build}" --prefix "${prefix}")
check_installed_tree("${prefix}")
set(prefix_pc_dir "${installed_pc_dir}")
get_filename_component(prefix_lib_dir "${prefix_pc_dir}" DIRECTORY)
cmake_consumer("${prefix}" "${WORK_DIR}/cmake-consumer")
if(SHARED)
  make_consumer("${prefix_pc_dir}" "${prefix_lib_dir}" OFF "${WORK_DIR}/make-consumer")
else()
  make_consumer("${prefix_pc_dir}" "" ON "${WORK_DIR}/make-consumer")
endif()
readme_pkg_config_lines("${prefix_pc_dir}" "${prefix_lib_dir}" "${WORK_DIR}/readme")

# The Debian package.
find_program(DPKG_DEB_EXECUTABLE dpkg-deb)
find_program(DPKG_SHLIBDEPS_EXECUTABLE dpkg-shlibdeps)
if(NOT DPKG_DEB_EXECUTABLE OR NOT DPKG_SHLIBDEPS_EXECUTABLE)
  message(STATUS "dpkg-deb or dpkg-shlibdeps (dpkg-dev) not found: not a Debian system, the .deb is not checked")
  return()
endif()
get_filename_component(cmake_bin_dir "${CMAKE_COMMAND}" DIRECTORY)
find_program(CPACK_EXECUTABLE NAMES cpack HINTS "${cmake_bin_dir}" REQUIRED)
run_step("Making the .deb (cpack -G DEB)" "${CMAKE_COMMAND}" -E chdir "${warden_build}" "${CPACK_EXECUTABLE}" -G DEB)
file(GLOB debs "${warden_build}/warden_${WARDEN_VERSION}_*.deb")
list(LENGTH debs deb_count)
if(NOT deb_count EQUAL 1)
  message(FATAL_ERROR "expected one warden_${WARDEN_VERSION}_*.deb in ${warden_build}, found: ${debs}")
endif()
message(STATUS "package: ${debs}")

run_step("Reading the package's control fields" "${DPKG_DEB_EXECUTABLE}" --field "${debs}" Package Version Depends)
set(control "${step_output}")
message(STATUS "${control}")
if(NOT control MATCHES "Package: warden\n" OR NOT control MATCHES "Version: ${WARDEN_VERSION}\n")
  message(FATAL_ERROR "unexpected package name or version:\n${control}")
endif()
# The -dev packages warden.pc needs, and run-time libraries as dpkg-shlibdeps
# found them in libwarden.so / warden-inspect.
foreach(dependency libhiredis-dev libuv1-dev libfmt-dev libssl-dev libhiredis libuv1 libstdc)
  if(NOT control MATCHES "Depends:[^\n]*${dependency}")
    message(FATAL_ERROR "the package does not depend on ${dependency}:\n${control}")
  endif()
endforeach()

run_step("Listing the package's files" "${DPKG_DEB_EXECUTABLE}" --contents "${debs}")
set(contents "${step_output}")
set(expected_files ./usr/include/warden/warden.hpp ./usr/include/warden/version.hpp ./usr/bin/warden-inspect
  ./usr/share/man/man1/warden-inspect.1 "lib/cmake/warden/wardenConfig.cmake" "lib/pkgconfig/warden.pc")
if(SHARED)
  list(APPEND expected_files "libwarden.so.${WARDEN_VERSION}" "libwarden.so.${SOVERSION} ->")
else()
  list(APPEND expected_files "libwarden.a")
endif()
foreach(file IN LISTS expected_files)
  string(FIND "${contents}" "${file}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${file} is not in the package:\n${contents}")
  endif()
endforeach()
if(contents MATCHES "/src/|warden_scripts|\\.cpp")
  message(FATAL_ERROR "the package holds sources or private headers:\n${contents}")
endif()

# Unpacked into a scratch root: found by find_package and pkg-config there.
set(root "${WORK_DIR}/deb-root")
run_step("Unpacking the package into ${root}" "${DPKG_DEB_EXECUTABLE}" -x "${debs}" "${root}")
check_installed_tree("${root}/usr")
set(root_pc_dir "${installed_pc_dir}")
get_filename_component(root_lib_dir "${root_pc_dir}" DIRECTORY)
cmake_consumer("${root}/usr" "${WORK_DIR}/deb-cmake-consumer")
if(SHARED)
  make_consumer("${root_pc_dir}" "${root_lib_dir}" OFF "${WORK_DIR}/deb-make-consumer")
else()
  make_consumer("${root_pc_dir}" "" ON "${WORK_DIR}/deb-make-consumer")
endif()
run_step("Running the packaged warden-inspect --help"
  "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${root_lib_dir}" "${root}/usr/bin/warden-inspect" --help)
if(NOT step_output MATCHES "SYNOPSIS")
  message(FATAL_ERROR "warden-inspect --help printed no manual:\n${step_output}")
endif()

# Would it install here? dpkg checks the dependencies against this system
# without installing anything. Needs root (CI runs as root).
find_program(ID_EXECUTABLE id)
find_program(DPKG_EXECUTABLE dpkg)
if(ID_EXECUTABLE AND DPKG_EXECUTABLE)
  execute_process(COMMAND "${ID_EXECUTABLE}" -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(uid STREQUAL "0")
    run_step("Checking that dpkg would install it (dpkg --dry-run -i)" "${DPKG_EXECUTABLE}" --dry-run -i "${debs}")
  else()
    message(STATUS "not root: dpkg --dry-run -i skipped")
  endif()
endif()
