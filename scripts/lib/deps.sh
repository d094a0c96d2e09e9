# shellcheck shell=bash
# Sourced by scripts/test and scripts/demo: installs the Debian packages a
# task needs when any is missing, and configures + builds the tree.

# The Debian packages each task needs, and what for. Only Debian packages:
# the CI machine has no other source. warden_install_deps takes task names.
WARDEN_BUILD_PACKAGES=(
  build-essential # the C/C++ compiler and make; its dpkg-dev makes cpack's .deb (dpkg-shlibdeps)
  cmake           # the build; cpack for the .deb
  pkg-config      # finds hiredis and libuv; consumers of warden.pc use it too
  libhiredis-dev  # the RESP codec (reply parser, command encoder)
  libuv1-dev      # the event loop of the I/O thread
  libfmt-dev      # message formatting
  libssl-dev      # TLS (OpenSSL 3)
)
WARDEN_DEMO_PACKAGES=(
  redis-server # the demo's throw-away server
  redis-tools  # redis-cli: the demo checks that its server answers
)
WARDEN_TEST_PACKAGES=(
  libgtest-dev # the unit and integration tests
  redis-server # the tests start their own servers
  openssl      # the TLS tests make their certificates with the openssl tool
  doxygen      # docs.api-reference: scripts/api-docs, the API reference
  groff-base   # docs.man-page: renders warden-inspect's man page
  clang-format # style.format checks the layout of the C++ files
  spin         # model.*: scripts/check-model checks the lock protocol's Promela model
  libasio-dev  # optional: standalone Asio for <warden/asio.hpp>'s tests and example (skipped without it)
  clang        # asio.ClangCompilesTheCxx20Layer: the C++20 layer with clang++ too (Debian 12: clang 14)
)
WARDEN_BENCH_PACKAGES=(
  redis-server # the benchmark's server
  redis-tools  # redis-benchmark, the benchmark's yardstick
)

warden_log() {
  printf '==> %s\n' "$*" >&2
}

# The packages of the tasks named ($@: build, demo, test, bench), once each.
warden_packages_for() {
  local task
  local -a packages=()
  for task in "$@"; do
    case $task in
      build) packages+=("${WARDEN_BUILD_PACKAGES[@]}") ;;
      demo) packages+=("${WARDEN_DEMO_PACKAGES[@]}") ;;
      test) packages+=("${WARDEN_TEST_PACKAGES[@]}") ;;
      bench) packages+=("${WARDEN_BENCH_PACKAGES[@]}") ;;
      *)
        warden_log "unknown task '$task'"
        return 1
        ;;
    esac
  done
  printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'
}

# Prints the packages among $@ that are not fully installed. dpkg -s also
# succeeds for removed packages whose config files remain, so the Status line
# is checked rather than the exit code alone.
warden_missing_packages() {
  local package
  for package in "$@"; do
    if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed$'; then
      printf '%s\n' "$package"
    fi
  done
}

# Installs what the tasks named ($@: build, demo, test, bench) need and is
# missing. Runs apt-get only if something is missing, so a prepared machine
# (or one without network) is not touched.
warden_install_deps() {
  if ! command -v dpkg >/dev/null 2>&1; then
    warden_log "dpkg not found: not a Debian system; assuming dependencies are installed"
    return 0
  fi
  local -a wanted missing
  mapfile -t wanted < <(warden_packages_for "$@")
  mapfile -t missing < <(warden_missing_packages "${wanted[@]}")
  if [[ ${#missing[@]} -eq 0 ]]; then
    return 0
  fi
  warden_log "installing missing packages: ${missing[*]}"
  local -a sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      warden_log "not root and no sudo: install these packages first: ${missing[*]}"
      return 1
    fi
  fi
  # Not just the missing ones: asking for the task's whole list is idempotent
  # and lets apt resolve them together. </dev/null: CI has no standard input.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update </dev/null
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${wanted[@]}" </dev/null
}

# Configures the tree rooted at $1 into $BUILD_DIR (default build/, relative
# to the tree) with the cmake arguments that follow, then the whitespace-
# separated $WARDEN_CMAKE_ARGS (so a caller's choice wins), and builds it:
# everything, or only the targets named after a "--" argument. Sets
# WARDEN_BUILD_PATH to the absolute build directory.
warden_configure_and_build() {
  local root=$1
  shift
  local -a args=() targets=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    args+=("$1")
    shift
  done
  if [[ $# -gt 0 ]]; then
    shift
    targets=("$@")
  fi
  local build_dir=${BUILD_DIR:-build}
  [[ $build_dir == /* ]] || build_dir="$root/$build_dir"
  local -a extra_args=()
  read -r -a extra_args <<<"${WARDEN_CMAKE_ARGS:-}"
  args+=(${extra_args[@]+"${extra_args[@]}"})
  warden_log "configuring into $build_dir ${args[*]}"
  cmake -S "$root" -B "$build_dir" ${args[@]+"${args[@]}"}
  if [[ ${#targets[@]} -gt 0 ]]; then
    warden_log "building ${targets[*]} (-j2)"
    cmake --build "$build_dir" -j2 --target "${targets[@]}"
  else
    warden_log "building (-j2)"
    cmake --build "$build_dir" -j2
  fi
  # shellcheck disable=SC2034 # read by the scripts that source this file
  WARDEN_BUILD_PATH=$build_dir
}
