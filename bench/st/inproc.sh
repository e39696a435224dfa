#!/bin/sh
# bench/st/inproc.sh: the profiler's overhead measured inside one
# interpreter process, at several sampling rates, with the Smalltalk
# host's default marker (the tick marker, self-draining: no other thread).
#
#   bench/st/inproc.sh [BUILDDIR] [RUNS] [PROGRAMS]
#
# Each process runs the program ROUNDS times under a profiler between two
# runs without one (Profiler class>>overheadOf:every:rounds:toFile:
# profiled:, hosts/st/kernel/Profiler.st); a round's ratio is the profiled
# run's CPU time over the mean of its neighbours', a process prints the
# median of its rounds, and the table gives the median over RUNS processes
# (default 5). With the tick marker the interpreter thread is the whole
# process while it profiles, so the ratio is the whole process's, less
# start-up (bench/cost.sh has that). Separate whole runs of this machine
# differ by 2-4 % between batches, more than a rate's share: here both
# sides of a ratio run within a fraction of a second of each other.
# "control" profiles no middle run either: the method's own noise.
# PROGRAMS defaults to "largeint fib" (bench/st/NAME.st).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src}
runs=${2:-5}
progs=${3:-"largeint fib"}
spyon="$build/spyon"
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$spyon" ] || { echo "inproc.sh: $spyon not built (run make first)" >&2; exit 2; }

rounds=11
# A size whose run takes about 120 ms here.
size() { case $1 in largeint) echo 2000;; fib) echo 29;; sends) echo 300000;;
  loops) echo 900;; collections) echo 150000;; *) echo "";; esac; }

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] \
    : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() { # prog interval_us [control] -> median ratio
  i=0
  while [ $i -lt "$runs" ]; do
    out=$("$spyon" --no-profile "$here/$1.st" "$(size "$1")" overhead "$2" \
      "$rounds" "$tmp/o.spy" ${3:-} 2>/dev/null) ||
      { echo "inproc.sh: $1 at $2 us failed" >&2; exit 1; }
    echo "$out" | sed -n 's/^overhead_median //p'
    i=$((i + 1))
  done | median
}

echo "bench/st/inproc.sh: CPU over the neighbouring unprofiled runs, in one process;"
echo "median of $runs processes of $rounds rounds; tick marker, self-draining"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %9s %9s %9s %9s %9s\n' program control "1 Hz" "1 kHz" "10 kHz" "100 kHz"
for p in $progs; do
  c=$(ratio "$p" 100 control)
  a=$(ratio "$p" 1000000)
  b=$(ratio "$p" 1000)
  d=$(ratio "$p" 100)
  e=$(ratio "$p" 10)
  printf '%-12s %9.3f %9.3f %9.3f %9.3f %9.3f\n' "$p" "$c" "$a" "$b" "$d" "$e"
done
