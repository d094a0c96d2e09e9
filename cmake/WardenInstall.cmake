# Install rules and the package config, so that an installed warden is used as
#   find_package(warden)  +  target_link_libraries(app PRIVATE warden::warden)
# Included by the top-level CMakeLists.txt when WARDEN_INSTALL is ON.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WARDEN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/warden
    CACHE STRING "Where wardenConfig.cmake is installed, relative to the prefix")
mark_as_advanced(WARDEN_INSTALL_CMAKEDIR)

install(TARGETS warden
  EXPORT warden-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Public headers only (and the generated version.hpp); src/ headers and the
# generated Lua tables are private.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/warden
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/warden/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/warden)
install(EXPORT warden-targets
  NAMESPACE warden::
  FILE wardenTargets.cmake
  DESTINATION ${WARDEN_INSTALL_CMAKEDIR})

# A static warden carries its private dependencies into the consumer's link
# line ($<LINK_ONLY:...> in the export), so the config must find them again. A
# shared warden resolves them itself.
get_target_property(_warden_type warden TYPE)
if(_warden_type STREQUAL "STATIC_LIBRARY")
  set(WARDEN_CONFIG_FIND_PRIVATE_DEPS ON)
else()
  set(WARDEN_CONFIG_FIND_PRIVATE_DEPS OFF)
endif()
unset(_warden_type)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/wardenConfig.cmake.in
  ${PROJECT_BINARY_DIR}/wardenConfig.cmake
  INSTALL_DESTINATION ${WARDEN_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO
  NO_CHECK_REQUIRED_COMPONENTS_MACRO)
# 0.x releases promise nothing across minor versions either, but SameMajorVersion
# is what users of 1.x will expect; keep it from the start.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/wardenConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/wardenConfig.cmake
  ${PROJECT_BINARY_DIR}/wardenConfigVersion.cmake
  DESTINATION ${WARDEN_INSTALL_CMAKEDIR})

# pkg-config: warden.pc, for builds that do not use CMake
#   c++ app.cpp $(pkg-config --cflags --libs warden)             static or shared libwarden
#   c++ app.cpp $(pkg-config --cflags --libs --static warden)    also either (for a static program)
# The prefix is found from where the file lies (${pcfiledir}), so an installed
# tree can be moved (cmake --install --prefix, dpkg -x) and still be right.
# The dependencies are their Debian .pc names: hiredis (libhiredis-dev), libuv
# (libuv1-dev), fmt (libfmt-dev), libssl and libcrypto (libssl-dev).
# Where they go depends on what is installed. A shared libwarden records them
# itself (its NEEDED entries): Requires.private / Libs.private, which only
# --static adds to a link line. A static libwarden (the default) is only an
# archive: every program linking it needs them, so they go in Requires / Libs
# and the plain line works for it too (without, it left some 185 undefined
# references to hiredis, libuv, fmt and OpenSSL).
get_target_property(_warden_pc_type warden TYPE)
if(_warden_pc_type STREQUAL "STATIC_LIBRARY")
  set(WARDEN_PC_REQUIRES_FIELD "Requires")
  set(WARDEN_PC_LIBS_TAIL " -pthread")
  set(WARDEN_PC_LIBS_PRIVATE "")
else()
  set(WARDEN_PC_REQUIRES_FIELD "Requires.private")
  set(WARDEN_PC_LIBS_TAIL "")
  set(WARDEN_PC_LIBS_PRIVATE " -pthread")
endif()
unset(_warden_pc_type)
set(WARDEN_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    CACHE STRING "Where warden.pc is installed, relative to the prefix")
mark_as_advanced(WARDEN_INSTALL_PKGCONFIGDIR)
if(IS_ABSOLUTE "${WARDEN_INSTALL_PKGCONFIGDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}"
   OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "warden.pc needs WARDEN_INSTALL_PKGCONFIGDIR, CMAKE_INSTALL_LIBDIR and "
                      "CMAKE_INSTALL_INCLUDEDIR relative to the prefix")
endif()
# From the .pc file's directory back up to the prefix: "../.." for lib/pkgconfig.
file(RELATIVE_PATH WARDEN_PC_TO_PREFIX "/prefix/${WARDEN_INSTALL_PKGCONFIGDIR}" "/prefix")
configure_file(${CMAKE_CURRENT_LIST_DIR}/warden.pc.in ${PROJECT_BINARY_DIR}/warden.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/warden.pc DESTINATION ${WARDEN_INSTALL_PKGCONFIGDIR})

include(WardenPackage)
