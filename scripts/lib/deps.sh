# shellcheck shell=bash
# Sourced by scripts/test and scripts/demo: installs the Debian packages warden
# needs when any is missing, and configures + builds the tree.

# Everything the build, the tests and the benchmark use. Only Debian packages:
# the CI machine has no other source.
WARDEN_DEB_PACKAGES=(
  build-essential cmake pkg-config
  libhiredis-dev libuv1-dev libfmt-dev libssl-dev libgtest-dev libbenchmark-dev
  redis-server redis-tools openssl
)

warden_log() {
  printf '==> %s\n' "$*" >&2
}

# Prints the packages from WARDEN_DEB_PACKAGES that are not fully installed.
# dpkg -s also succeeds for removed packages whose config files remain, so the
# Status line is checked rather than the exit code alone.
warden_missing_packages() {
  local package
  for package in "${WARDEN_DEB_PACKAGES[@]}"; do
    if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed$'; then
      printf '%s\n' "$package"
    fi
  done
}

# Installs what is missing. Runs apt-get only if something is missing, so a
# prepared machine (or one without network) is not touched.
warden_install_deps() {
  if ! command -v dpkg >/dev/null 2>&1; then
    warden_log "dpkg not found: not a Debian system; assuming dependencies are installed"
    return 0
  fi
  local missing
  mapfile -t missing < <(warden_missing_packages)
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
  # Not just the missing ones: asking for the whole list is idempotent and
  # lets apt resolve them together. </dev/null: CI has no standard input.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update </dev/null
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${WARDEN_DEB_PACKAGES[@]}" </dev/null
}

# Configures and builds the tree rooted at $1 into $BUILD_DIR (default build/,
# relative to the tree), passing the whitespace-separated $WARDEN_CMAKE_ARGS
# to cmake. Sets WARDEN_BUILD_PATH to the absolute build directory.
warden_configure_and_build() {
  local root=$1
  local build_dir=${BUILD_DIR:-build}
  [[ $build_dir == /* ]] || build_dir="$root/$build_dir"
  local -a extra_args=()
  read -r -a extra_args <<<"${WARDEN_CMAKE_ARGS:-}"
  warden_log "configuring into $build_dir ${extra_args[*]}"
  cmake -S "$root" -B "$build_dir" ${extra_args[@]+"${extra_args[@]}"}
  warden_log "building (-j2)"
  cmake --build "$build_dir" -j2
  # shellcheck disable=SC2034 # read by the scripts that source this file
  WARDEN_BUILD_PATH=$build_dir
}
