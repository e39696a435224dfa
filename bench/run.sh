#!/bin/sh
# bench/run.sh: run every core benchmark and print its table.
#
#   bench/run.sh [BUILDDIR]     (default: the current directory)
#
# Each benchmark repeats its measurements and prints medians (see the
# comment at the top of each bench/*.c). The machine is shared, so the
# header records the load average at the start; compare ratios, which are
# taken within one run, rather than absolute times. A copy of the output
# goes to BUILDDIR/bench/out/latest.txt.
set -eu
B=${1:-.}
for p in bench_overhead bench_accuracy bench_ingest bench_deep; do
  if [ ! -x "$B/bench/$p" ]; then
    echo "bench/run.sh: $B/bench/$p is not built (run make first)" >&2
    exit 2
  fi
done
mkdir -p "$B/bench/out"
out="$B/bench/out/latest.txt"
{
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  echo "machine: $cpu, $(nproc) cores, $(uname -sr)"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average at start:" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  "$B/bench/bench_overhead" -r "${SPY_BENCH_ROUNDS:-11}"
  echo
  "$B/bench/bench_accuracy" -r "${SPY_BENCH_ACC_ROUNDS:-3}"
  echo
  "$B/bench/bench_ingest"
  echo
  "$B/bench/bench_deep" -r "${SPY_BENCH_DEEP_ROUNDS:-5}"
} 2>&1 | tee "$out"
