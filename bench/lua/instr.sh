#!/usr/bin/env bash
# bench/lua/instr.sh: what bracketing costs the Lua host in instructions,
# which do not move with the machine's load (this project's guest has run
# the same loop at anything from 1x to 2x its time within a minute:
# 12-07). callgrind counts every instruction of a run of SCRIPT under
# `spyon --no-profile` and under `spyon -i 1000000` (one sample a second:
# the brackets, the cost observations' timed calls and the sampler
# thread's drains), and of the wrapped calls' own code (call_* in
# hosts/lua/lspylib.c, with the library's inline hooks). Needs valgrind.
# Under valgrind every call looks ~50 times slower, so the timing budget
# (1 % of each primitive's time) lets about 4 times as many calls be
# timed as a native run does: the "timed" row is an upper bound.
#   bench/lua/instr.sh [BUILD_DIR] [SCRIPT ARGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/_build}
shift || true
[ $# -gt 0 ] || set -- "$top/examples/strings.lua" 40
command -v valgrind >/dev/null || { echo "instr.sh: needs valgrind" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$tmp/off" "$build/spyon" \
  --no-profile "$@" > /dev/null 2> "$tmp/off.err" &
valgrind --tool=callgrind --callgrind-out-file="$tmp/on" "$build/spyon" \
  -i 1000000 -o "$tmp/p.spy" "$@" > /dev/null 2> "$tmp/on.err"
wait
total() { sed -n 's/.*Collected : //p' "$1"; }
# the wrapped calls' own instructions (their inlined hooks included), and
# how many calls they made (the bracketed calls)
wrapped() {
  callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
    awk '/:call_(none|s1|s1s2|s1n2|t1|nargs|sargs|n1)(_direct)?( |$)/ {
           gsub(",", "", $1); s += $1 } END { print s + 0 }'
}
calls() {
  callgrind_annotate --auto=no --tree=caller --threshold=100 "$1" 2>/dev/null |
    awk '/< .*slot_wrapper_|< .*:wrapper[0-7] / {
           if (match($0, /\(([0-9,]+)x\)/)) {
             n = substr($0, RSTART + 1, RLENGTH - 3); gsub(",", "", n); c += n } }
         END { print c + 0 }'
}
off=$(total "$tmp/off.err") on=$(total "$tmp/on.err")
woff=$(wrapped "$tmp/off") won=$(wrapped "$tmp/on") n=$(calls "$tmp/on")
printf "%s: %d bracketed calls\n" "$(basename "$1") ${*:2}" "$n"
printf "%-34s %14s %14s %10s\n" "" stopped "1 sample/s" "over"
printf "%-34s %14d %14d %9.2f%%\n" "instructions, whole run" "$off" "$on" \
  "$(echo "100 * ($on - $off) / $off" | bc -l)"
printf "%-34s %14d %14d %10.1f\n" "the wrappers (a call)" "$woff" "$won" \
  "$(echo "($won - $woff) / ($n + ($n == 0))" | bc -l)"
printf "%-34s %14s %14d %9.2f%%\n" "the rest: timed calls, drains" "" \
  "$((on - off - won + woff))" \
  "$(echo "100 * ($on - $off - $won + $woff) / $off" | bc -l)"
