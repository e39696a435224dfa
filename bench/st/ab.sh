#!/bin/sh
# bench/st/ab.sh: two builds' profiling overhead, compared inside the
# interpreter and interleaved -- for a change to the hooks, whose effect
# (a fraction of a per cent) is below what separate batches resolve here.
#
#   bench/st/ab.sh BUILD_A BUILD_B [RUNS] [PROGRAM] [INTERVAL_US]
#
# BUILD_A and BUILD_B are build directories (their spyon is used) or
# spyon executables. Every round runs one process of each build, in
# alternating order, with bench/st/inproc.sh's method: the program
# (bench/st/PROGRAM.st, default largeint) runs 11 times under a profiler
# at INTERVAL_US (default 100: 10 kHz), each between two runs without
# one, and the process prints the median of those ratios (the
# interpreter thread's CPU time; with the tick marker it is the whole
# process while it profiles). The table gives each build's median over
# RUNS rounds (default 9) and the median of the rounds' paired
# differences B - A with its middle half: processes minutes apart drift
# together, so the pairs resolve what the two medians alone do not.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/st/ab.sh BUILD_A BUILD_B [RUNS] [PROGRAM] [INTERVAL_US]" >&2; exit 2; }
runs=${3:-9}
prog=${4:-largeint}
iv=${5:-100}
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
. "$src/bench/ab_pairs.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

exe() { if [ -d "$1" ]; then echo "$1/spyon"; else echo "$1"; fi; }
a=$(exe "$1")
b=$(exe "$2")
for x in "$a" "$b"; do
  [ -x "$x" ] || { echo "ab.sh: $x is no spyon executable" >&2; exit 2; }
done
[ -f "$here/$prog.st" ] || { echo "ab.sh: no program $here/$prog.st" >&2; exit 2; }

# The size that runs about 120 ms (bench/st/inproc.sh's).
case $prog in largeint) size=2000;; fib) size=29;; sends) size=300000;;
  loops) size=900;; collections) size=150000;; *) size="";; esac

one() { # spyon -> its process's median ratio
  "$1" --no-profile "$here/$prog.st" $size overhead "$iv" 11 "$tmp/o.spy" \
    2>/dev/null | sed -n 's/^overhead_median //p' | grep . ||
    { echo "ab.sh: $1 on $prog failed" >&2; exit 1; }
}

i=0
while [ $i -lt "$runs" ]; do
  if [ $((i % 2)) -eq 0 ]; then ra=$(one "$a"); rb=$(one "$b")
  else rb=$(one "$b"); ra=$(one "$a"); fi
  echo "$ra $rb" >> "$tmp/pairs"
  i=$((i + 1))
done

echo "bench/st/ab.sh: $prog at $iv us, $runs rounds of one process each;"
echo "CPU over the neighbouring unprofiled runs, in one process (median of 11)"
ab_pairs "$tmp/pairs" "$a" "$b" spyon
