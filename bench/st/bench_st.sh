#!/bin/sh
# bench/st/bench_st.sh: the Smalltalk interpreter against lua5.4, and the
# profiler's overhead on it.
#
#   bench/st/bench_st.sh [BUILDDIR] [RUNS]
#
# Each program (bench/st/NAME.st and NAME.lua run the same algorithm)
# prints the CPU time of its workload ("cpu_ms N": the interpreter
# thread's CPU clock for Smalltalk, os.clock() for Lua), so VM start-up,
# kernel loading and report printing are left out, and time the machine
# gives to other processes does not count. Every configuration runs RUNS
# times (default 7), interleaved, and the tables show medians.
#
# Table 1: hosts/st/st (built with -DSPY_DISABLE) against lua5.4; the
# target is at least half of lua5.4's speed (st/lua <= 2.00).
# Table 2: the profiler's overhead; targets 0.5 % stopped, 2 % at 10 kHz,
# 10 % at 100 kHz. "stopped" is spyon --no-profile (the hooks compiled in,
# no profiler running) against hosts/st/st (built without them); as two
# different binaries place the same dispatch loop differently, their CPU
# times differ by code layout alone (up to +-25 % on some CPUs), so the
# stopped overhead is measured exactly as the instructions the hooks add
# (valgrind's cachegrind; the difference between two input sizes, so
# start-up cancels out). Sampling at 10 kHz (-i 100) and 100 kHz (-i 10)
# is compared with the same binary stopped, in CPU time; "hooks" is the
# time the profiler's slow paths report having spent in the interpreter
# thread (hook_ns / wall_ns in the JSON export).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src}
runs=${2:-7}
st="$build/hosts/st/st"
spyon="$build/spyon"
lua=${LUA:-lua5.4}
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
progs="fib sends loops collections"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in "$st" "$spyon"; do
  [ -x "$t" ] || { echo "bench_st.sh: $t not built (run make first)" >&2; exit 2; }
done
command -v "$lua" >/dev/null || { echo "bench_st.sh: $lua not found" >&2; exit 2; }

# cpu_ms of one run of a command, or fail loudly.
cpu_ms() {
  out=$("$@" 2>/dev/null) || { echo "bench_st.sh: failed: $*" >&2; exit 1; }
  echo "$out" | sed -n 's/^cpu_ms //p'
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] \
    : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

configs="st lua stopped k10 k100"
for p in $progs; do
  for c in $configs; do : > "$tmp/$p.$c"; done
  i=0
  while [ $i -lt "$runs" ]; do
    cpu_ms "$st" "$here/$p.st" >> "$tmp/$p.st"
    cpu_ms "$lua" "$here/$p.lua" >> "$tmp/$p.lua"
    cpu_ms "$spyon" --no-profile "$here/$p.st" >> "$tmp/$p.stopped"
    cpu_ms "$spyon" -i 100 -o "$tmp/p.spy" "$here/$p.st" >> "$tmp/$p.k10"
    cpu_ms "$spyon" -i 10 -o "$tmp/p.spy" "$here/$p.st" >> "$tmp/$p.k100"
    i=$((i + 1))
  done
  for c in $configs; do median < "$tmp/$p.$c" > "$tmp/$p.$c.med"; done
done

echo "Smalltalk (hosts/st/st) vs $($lua -v 2>&1 | cut -d' ' -f1-2), CPU ms, median of $runs"
echo "$(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')"
printf '%-12s %10s %10s %9s %8s\n' program st lua5.4 st/lua "<= 2.00"
for p in $progs; do
  s=$(cat "$tmp/$p.st.med"); l=$(cat "$tmp/$p.lua.med")
  awk -v p="$p" -v s="$s" -v l="$l" 'BEGIN {
    r = s / l; printf "%-12s %10.0f %10.0f %9.2f %8s\n", p, s, l, r,
      (r <= 2.0) ? "ok" : "MISSED" }'
done
# The exact measures.
hook_share() { # interval_us prog -> percent of wall time spent in hooks
  "$spyon" --json -i "$1" "$here/$2.st" 2>/dev/null |
    sed -n 's/.*"wall_ns":\([0-9]*\).*"hook_ns":\([0-9]*\).*/\1 \2/p' |
    awk '{ printf "%.2f\n", $2 * 100 / $1 }'
}
irefs() { # command... -> instructions executed
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$@" 2>&1 >/dev/null | sed -n 's/.*I *refs: *//p' | tr -d ,
}
small() { case $1 in fib) echo 22;; sends) echo 20000;; loops) echo 150;;
  collections) echo 20000;; esac; }
large() { case $1 in fib) echo 25;; sends) echo 80000;; loops) echo 300;;
  collections) echo 80000;; esac; }
for p in $progs; do
  if command -v valgrind >/dev/null; then
    a1=$(irefs "$st" "$here/$p.st" "$(small $p)")
    a2=$(irefs "$st" "$here/$p.st" "$(large $p)")
    b1=$(irefs "$spyon" --no-profile "$here/$p.st" "$(small $p)")
    b2=$(irefs "$spyon" --no-profile "$here/$p.st" "$(large $p)")
    awk -v a="$((a2 - a1))" -v b="$((b2 - b1))" \
      'BEGIN { printf "%+.3f%%\n", (b / a - 1) * 100 }' > "$tmp/$p.instr"
  else
    echo "n/a" > "$tmp/$p.instr"
  fi
  : > "$tmp/h10"; : > "$tmp/h100"
  i=0
  while [ $i -lt "$runs" ]; do
    hook_share 100 "$p" >> "$tmp/h10"
    hook_share 10 "$p" >> "$tmp/h100"
    i=$((i + 1))
  done
  median < "$tmp/h10" > "$tmp/$p.h10"
  median < "$tmp/h100" > "$tmp/$p.h100"
done

echo
echo "Profiler overhead, CPU ms (median of $runs) and % against the column named"
printf '%-12s %6s %9s %9s | %15s %6s | %15s %6s\n' program st stopped \
  "+instr" "10 kHz vs stop" hooks "100 kHz vs stop" hooks
for p in $progs; do
  awk -v p="$p" -v b="$(cat "$tmp/$p.st.med")" \
      -v s0="$(cat "$tmp/$p.stopped.med")" -v s1="$(cat "$tmp/$p.k10.med")" \
      -v s2="$(cat "$tmp/$p.k100.med")" -v ins="$(cat "$tmp/$p.instr")" \
      -v h1="$(cat "$tmp/$p.h10")" -v h2="$(cat "$tmp/$p.h100")" 'BEGIN {
    printf "%-12s %6.0f %9.0f %9s | %6.0f %+7.1f%% %5.2f%% | %6.0f %+7.1f%% %5.2f%%\n",
      p, b, s0, ins, s1, (s1 / s0 - 1) * 100, h1, s2, (s2 / s0 - 1) * 100, h2 }'
done
echo "targets:                      <= 0.5 %          <= 2 %                 <= 10 %"
