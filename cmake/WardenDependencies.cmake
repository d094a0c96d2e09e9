# Finds warden's dependencies from Debian packages: libhiredis-dev, libuv1-dev,
# libfmt-dev, libssl-dev (OpenSSL 3, through CMake's own FindOpenSSL, whose
# OpenSSL::SSL/OpenSSL::Crypto targets the package config finds again with
# find_dependency). hiredis and libuv are found through pkg-config and wrapped in
# imported targets so the package config can find them again for consumers.
# The install export records them as PkgConfig::WARDEN_HIREDIS and
# PkgConfig::WARDEN_UV: cmake/wardenConfig.cmake.in recreates exactly those, so
# keep the prefixes in sync.
include(GNUInstallDirs)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(PkgConfig REQUIRED)
if(NOT TARGET warden_deps::hiredis)
  pkg_check_modules(WARDEN_HIREDIS REQUIRED IMPORTED_TARGET GLOBAL hiredis)
  add_library(warden_deps::hiredis ALIAS PkgConfig::WARDEN_HIREDIS)
endif()
if(NOT TARGET warden_deps::uv)
  pkg_check_modules(WARDEN_UV REQUIRED IMPORTED_TARGET GLOBAL libuv)
  add_library(warden_deps::uv ALIAS PkgConfig::WARDEN_UV)
endif()
