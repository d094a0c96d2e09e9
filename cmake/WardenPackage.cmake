# A Debian package of the installed tree: from the build directory,
#   cpack -G DEB
# makes warden_<version>_<arch>.deb with the library (static or shared, as
# built), the public headers, the CMake package config, warden.pc and
# warden-inspect, under /usr. Included by WardenInstall.cmake.
set(CPACK_PACKAGE_NAME warden)
set(CPACK_PACKAGE_VENDOR warden)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Distributed locks on Redis for C++17, on Redisson's wire format")
set(CPACK_PACKAGE_DESCRIPTION
    "warden is a C++17 client library for distributed locks on Redis (Lock, FairLock, ReadWriteLock, MultiLock, "
    "RedLock), wire-compatible with Redisson. This package holds the library, its headers, the CMake and "
    "pkg-config files to build against it, and warden-inspect, which shows the state of a lock in Redis.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "warden maintainers <warden@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_LICENSE Apache-2.0)
# Run-time dependencies of libwarden.so and warden-inspect, as dpkg-shlibdeps
# (dpkg-dev) finds them (libhiredis0.14, libuv1, libfmt9, libssl3, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The development packages: warden.pc names hiredis, libuv, fmt, libssl and
# libcrypto (in Requires for a static libwarden, Requires.private for a shared
# one), which pkg-config resolves even for --cflags, and a static libwarden
# needs their libraries at link time.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libhiredis-dev, libuv1-dev, libfmt-dev, libssl-dev")
# A shared libwarden: shlibs for packages built against it, and the ldconfig
# trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)

include(CPack)
