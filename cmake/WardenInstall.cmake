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
# Public headers only; src/ headers and generated/ are private.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/warden
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
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
