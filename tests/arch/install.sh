#!/bin/sh
# tests/arch/install.sh BUILDDIR SRCDIR TMPDIR: install the build into a
# staging directory, then build examples/embed/embed.c with only
# `pkg-config spyon` (the runtime) and examples/embed/readprof.c with
# `pkg-config spyon-tools`, run the first (it saves a profile) and the
# second (it reports it), and print what the interpreter links.
# tests/test_arch.c checks the output. Exit 90+ says which step failed.
set -u
b=$1 s=$2 t=$3
dest=$t/dest
make -s -C "$b" install DESTDIR="$dest" >"$t/install.log" 2>&1 || {
  cat "$t/install.log" >&2
  exit 90
}
pc=$(find "$dest" -name spyon.pc | head -n 1)
[ -n "$pc" ] || exit 91
export PKG_CONFIG_PATH="${pc%/*}" PKG_CONFIG_SYSROOT_DIR="$dest"
lib=$(find "$dest" -name 'libspyon.so' | head -n 1)
export LD_LIBRARY_PATH="${lib%/*}"
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Wextra -Werror -O2 "$s/examples/embed/embed.c" \
  $(pkg-config --cflags --libs spyon) -o "$t/embed" || exit 92
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Wextra -Werror -O2 "$s/examples/embed/readprof.c" \
  $(pkg-config --cflags --libs spyon-tools) -o "$t/readprof" || exit 93
"$t/embed" "$t/e.spy" 20 || exit 94
"$t/readprof" "$t/e.spy" >"$t/report.txt" || exit 95
echo "embed links: $(ldd "$t/embed" | awk '{print $1}' | tr '\n' ' ')"
echo "readprof links: $(ldd "$t/readprof" | awk '{print $1}' | tr '\n' ' ')"
cat "$t/report.txt"
