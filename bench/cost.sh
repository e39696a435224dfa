#!/bin/sh
# bench/cost.sh: what profiling costs the whole process, and the rate it
# reaches.
#
#   bench/cost.sh [BUILDDIR] [RUNS]
#
# Every program runs RUNS times (default 5) in each configuration,
# interleaved (one run of each configuration per round, so the machine's
# drift hits all alike), under bench/cpurun, which reports the CPU time of
# the whole process (user + system, every thread: the sampler thread and
# the kernel's work for timers and signals count) and of its main thread
# (the interpreter) alone. The table gives medians, and each profiled
# configuration's CPU over the median of `spyon --no-profile` (hooks
# compiled in, profiler stopped): whole process ("cpu x") and interpreter
# thread ("interp x"). "rate" is the samples per second the profile took
# (tallies over profiled wall time, median of the runs), and "of asked"
# that over the asked rate; "per cpu-s" is tallies over the interpreter
# thread's CPU seconds (whole run): on a loaded machine the thread is off
# the CPU much of the time and takes fewer samples per wall second (no time
# is lost: a late sample weighs what it covers), so this column shows
# whether the marker keeps up while the thread runs. Whole runs, start-up
# included: the empty script's row is start-up alone (wall ms, spyon over
# --no-profile).
#
# Environment: COST_PROGS (default "fib sends loops collections largeint"),
# COST_KHZ (default "1 10 100"), COST_MARKERS (default "default": the CLI's
# own; e.g. "thread signal tick" to compare the markers; "exact" is the
# CLI's own marker with --exact-prims, every primitive call timed, beside
# "default", the cheap accounting), COST_SKIP
# (configurations left out, default "signal@100": on a KVM guest each timer
# signal costs 10-20 us, more than the 10 us interval, and the interpreter
# thread livelocks in signal delivery).
#
# The machine is shared: the header and footer give the load average, and
# figures taken under load are not final. Compare within one table.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${1:-$src}
runs=${2:-5}
spyon="$build/spyon"
cpurun="$build/bench/cpurun"
progs=${COST_PROGS:-"fib sends loops collections largeint"}
khz=${COST_KHZ:-"1 10 100"}
markers=${COST_MARKERS:-default}
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in "$spyon" "$cpurun"; do
  [ -x "$t" ] || { echo "cost.sh: $t not built (run make first)" >&2; exit 2; }
done

# Script and arguments of each program: sizes that run about 1 s here.
script() { case $1 in
  largeint) echo "$src/examples/largeint.st";;
  empty) echo "$tmp/empty.st";;
  *) echo "$here/st/$1.st";; esac; }
size() { case $1 in fib) echo 34;; sends) echo 3000000;; loops) echo 3000;;
  collections) echo 1000000;; *) echo "";; esac; }
: > "$tmp/empty.st"

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else
    print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# One run: config is "off" or MARKER@KHZ. Appends "whole_us main_us
# wall_us [rate]" to $tmp/PROG.CONFIG.
run1() { # prog config
  p=$1; c=$2; s=$(script "$p"); a=$(size "$p")
  if [ "$c" = off ]; then
    "$cpurun" "$tmp/st" "$spyon" --no-profile "$s" $a > /dev/null 2>&1 ||
      { echo "cost.sh: failed: spyon --no-profile $s $a" >&2; exit 1; }
    rate=""
  else
    m=${c%@*}; k=${c#*@}
    iv=$(awk -v k="$k" 'BEGIN { printf "%g", 1000 / k }')
    case $m in default) mopt="";; exact) mopt="--exact-prims";;
      *) mopt="--marker $m";; esac
    "$cpurun" "$tmp/st" "$spyon" --json -i "$iv" $mopt "$s" $a \
      > "$tmp/out.json" 2>/dev/null ||
      { echo "cost.sh: failed: spyon -i $iv $mopt $s $a" >&2; exit 1; }
    rate=$(sed -n 's/.*"wall_ns":\([0-9]*\),"tallies":\([0-9]*\).*/\1 \2/p' \
      "$tmp/out.json" | awk '{ if ($1 > 0) printf "%.0f %s", $2 * 1e9 / $1, $2 }')
  fi
  # whole_us main_us wall_us [rate/s tallies/interp-cpu-s]
  awk -v r="$rate" '{ split(r, a, " "); if (r == "") print $1 + $2, $3, $4;
    else print $1 + $2, $3, $4, a[1], ($3 > 0 ? a[2] * 1e6 / $3 : 0) }' \
    "$tmp/st" >> "$tmp/$p.$c"
}

skip=${COST_SKIP-"signal@100"}
configs="off"
for k in $khz; do for m in $markers; do
  case " $skip " in *" $m@$k "*) continue;; esac
  configs="$configs $m@$k"
done; done

load0=$(cut -d' ' -f1-3 /proc/loadavg)
for p in empty $progs; do
  for c in $configs; do : > "$tmp/$p.$c"; done
  cs=$configs; [ "$p" = empty ] && cs="off default@10"
  i=0
  while [ $i -lt "$runs" ]; do
    for c in $cs; do run1 "$p" "$c"; done
    i=$((i + 1))
  done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

col() { cut -d' ' -f"$2" "$1" | median; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "bench/cost.sh: whole-process CPU, spyon vs spyon --no-profile, medians of $runs interleaved runs"
echo "machine: $cpu, $(nproc) cores, $(uname -sr)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average at start $load0, at end $load1"
echo
o=$tmp/empty.off; d=$tmp/empty.default@10
awk -v a="$(col "$o" 3)" -v b="$(col "$d" 3)" 'BEGIN {
  printf "start-up (empty script, wall): %.1f ms off, %.1f ms at 10 kHz: %+.2f ms\n\n",
    a / 1000, b / 1000, (b - a) / 1000 }'
printf '%-12s %8s %7s %9s %9s %7s %9s %9s %8s %9s\n' program marker kHz \
  "cpu ms" "interp ms" "cpu x" "interp x" "rate/s" "of asked" "per cpu-s"
for p in $progs; do
  w0=$(col "$tmp/$p.off" 1); m0=$(col "$tmp/$p.off" 2)
  printf '%-12s %8s %7s %9.0f %9.0f %7s %9s %9s %8s %9s\n' "$p" "-" off \
    "$(echo "$w0" | awk '{ print $1 / 1000 }')" \
    "$(echo "$m0" | awk '{ print $1 / 1000 }')" - - - - -
  for c in $configs; do
    [ "$c" = off ] && continue
    f=$tmp/$p.$c; m=${c%@*}; k=${c#*@}
    w=$(col "$f" 1); mm=$(col "$f" 2); r=$(col "$f" 4); rc=$(col "$f" 5)
    awk -v p="$p" -v m="$m" -v k="$k" -v w="$w" -v mm="$mm" -v w0="$w0" \
      -v m0="$m0" -v r="$r" -v rc="$rc" 'BEGIN {
      printf "%-12s %8s %7s %9.0f %9.0f %7.3f %9.3f %9.0f %7.1f%% %8.1f%%\n",
        "", m, k, w / 1000, mm / 1000, w / w0, mm / m0, r,
        r / (k * 1000) * 100, rc / (k * 1000) * 100 }'
  done
done
echo "(cpu: user+sys of all threads; interp: the interpreter thread alone;"
echo " x: over --no-profile; rate: samples taken per second of profiled time;"
echo " per cpu-s: samples per second of the interpreter thread's CPU, of asked)"
