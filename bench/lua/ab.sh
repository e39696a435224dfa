#!/bin/sh
# bench/lua/ab.sh: two builds' bracketing cost on the Lua host, compared
# inside the interpreter and interleaved -- for a change to the wrappers or
# the inline hooks, whose effect (a fraction of a per cent) is below what
# separate batches resolve on this project's guests.
#
#   bench/lua/ab.sh BUILD_A BUILD_B [RUNS] [SCRIPT ARGS...]
#
# BUILD_A and BUILD_B are build directories (their bench/lua/lua_inproc
# is used). Every round runs one process of each build, in alternating
# order: lua_inproc -r ROUNDS (default 60) $AB_OPTS SCRIPT ARGS (default
# examples/strings.lua 3: ~50 ms a run, ~2.4 M bracketed calls a second),
# which prints the median over its rounds of the Lua thread's CPU
# profiled at 1 sample a second over its stopped neighbours'. AB_OPTS
# passes lua_inproc's options, e.g. AB_OPTS="-k 0": no cost observations,
# the brackets alone. The table gives each build's median over RUNS
# rounds (default 9) and the median of the rounds' paired differences
# B - A with its middle half.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/lua/ab.sh BUILD_A BUILD_B [RUNS] [SCRIPT ARGS...]" >&2; exit 2; }
a=$1/bench/lua/lua_inproc
b=$2/bench/lua/lua_inproc
runs=${3:-9}
shift 2
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$src/examples/strings.lua" 3
for x in "$a" "$b"; do
  [ -x "$x" ] || { echo "ab.sh: no $x (make bench/lua/lua_inproc)" >&2; exit 2; }
done
. "$src/bench/ab_pairs.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() { # lua_inproc SCRIPT ARGS... -> its process's median ratio
  exe=$1
  shift
  # shellcheck disable=SC2086 # AB_OPTS is a list of options
  "$exe" -r "${AB_ROUNDS:-60}" ${AB_OPTS:-} "$@" 2>&1 >/dev/null |
    sed -n 's/.*rounds: median \([0-9.]*\).*/\1/p' | grep . ||
    { echo "ab.sh: $exe failed" >&2; exit 1; }
}

i=0
while [ $i -lt "$runs" ]; do
  if [ $((i % 2)) -eq 0 ]; then ra=$(one "$a" "$@"); rb=$(one "$b" "$@")
  else rb=$(one "$b" "$@"); ra=$(one "$a" "$@"); fi
  echo "$ra $rb" >> "$tmp/pairs"
  i=$((i + 1))
done

echo "bench/lua/ab.sh: $(echo "$*" | sed "s|$src/||g") ${AB_OPTS:-}, $runs rounds of one process each;"
echo "Lua thread CPU profiled at 1 Hz over its stopped neighbours, in one process (median of ${AB_ROUNDS:-60})"
ab_pairs "$tmp/pairs" "$a" "$b" lua_inproc
