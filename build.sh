#!/usr/bin/env bash
# build.sh: set-up, build, demo and tests for spyon in one place.
#
#   ./build.sh demo    install what is missing, build, run the demo
#   ./build.sh check   install what is missing, build, run the test suite
#   ./build.sh build   install what is missing and build only
#   ./build.sh deps    install the Debian packages only
#   ./build.sh ci-deps the same plus what only CI needs (clang: its -Werror
#                      build, the sanitizers, the libFuzzer targets)
#
# Builds out of tree in _build/ (BUILD_DIR=... to change). Missing Debian
# packages are installed with apt-get when run as root.
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
build=${BUILD_DIR:-$top/_build}
jobs=$(nproc 2>/dev/null || echo 2)

# Everything the build, the tests and the demo need, by Debian name.
packages=(build-essential autoconf automake libtool pkg-config
  libunwind-dev libdw-dev libelf-dev libncurses-dev libgsl-dev libgmp-dev
  zlib1g-dev liblua5.4-dev lua5.4 libcairo2-dev libjansson-dev
  python3 tmux protobuf-c-compiler libprotobuf-c-dev
  golang-go libxml2-utils python3-jsonschema nodejs)

# Only for .ci/run.
ci_packages=(clang)

deps() {
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "build.sh: missing packages: ${missing[*]}" >&2
    echo "build.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "build.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

configure() {
  [ -x "$top/configure" ] && [ "$top/configure" -nt "$top/configure.ac" ] &&
    [ "$top/Makefile.in" -nt "$top/Makefile.am" ] ||
    (cd "$top" && autoreconf -fi >/dev/null 2>&1 || autoreconf -fi)
  mkdir -p "$build"
  if [ ! -f "$build/Makefile" ] || [ "$top/configure" -nt "$build/Makefile" ]; then
    # Quiet, except for configure's closing summary of what is built.
    (cd "$build" && "$top/configure" --enable-werror ${CONFIGURE_FLAGS:-} |
      sed -n '/will be built with/,$p')
  fi
}

# The export tests read each export back with its real reader; the one
# Debian does not package is speedscope's file-format schema, which comes
# with speedscope's npm package (installed into the build tree).
readers() {
  local schema="$build/npm/node_modules/speedscope/dist/release/file-format-schema.json"
  [ -f "$schema" ] && return 0
  mkdir -p "$build/npm"
  # Debian's nodejs needs its npm package; NodeSource's nodejs has npm
  # built in (and conflicts with Debian's).
  command -v npm >/dev/null || apt-get install -y -qq npm >/dev/null
  npm install --prefix "$build/npm" --no-audit --no-fund --silent \
    speedscope@1.25.0 >/dev/null
}

compile() {
  configure
  make -C "$build" -j"$jobs" >/dev/null
}

case "${1:-}" in
  deps) deps ;;
  ci-deps) deps "${ci_packages[@]}" ;;
  build) deps; compile ;;
  demo)
    deps; compile
    echo "== spyon examples/largeint.st (the workload of Squeak's AndreasSystemProfiler example) =="
    "$build/spyon" "$top/examples/largeint.st"
    ;;
  check)
    deps
    readers
    configure
    make -C "$build" -j"$jobs" >/dev/null
    make -C "$build" -j"$jobs" check TESTS= >/dev/null   # the test programs
    (cd "$build" && SPY_BUILDDIR="$build" SPY_SRCDIR="$top" ./tests/runner)
    ;;
  *)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
