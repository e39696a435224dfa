#!/bin/sh
# bench/native.sh [BUILDDIR] [RUNS]: what --native costs (issue 14: at most
# 5 % CPU at its default rate).
#
# examples/largeint.st (GMP primitives, malloc-heavy: 1.7 M primitive calls
# a second) and bench/st/fib.st (no primitives: the signals alone) run
# RUNS times (default 5) each way, interleaved: `spyon` (profiling at the
# default 10 kHz) and `spyon --native` (the same plus a SIGPROF every
# native interval, 1 ms by default, unwound when it lands in a
# primitive), then `--native-interval 100` for comparison. bench/cpurun
# measures the CPU of the whole process (user + system, all threads). The
# table gives medians and the ratio to plain `spyon`, and the native
# signals the last run of each recorded.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=$(cd "${1:-$src/_build}" && pwd)
runs=${2:-5}
spyon=$build/spyon cpurun=$build/bench/cpurun
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
confs="plain native native100"
args() { case $1 in plain) ;; native) echo --native;;
  native100) echo --native-interval 100;; esac; }
prog() { case $1 in largeint) echo "$src/examples/largeint.st";;
  fib) echo "$here/st/fib.st 34";; esac; }
echo "native stacks: CPU of all threads, median of $runs interleaved runs"
echo "($(date -u '+%Y-%m-%d %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-9s %-10s %9s %8s %9s\n' program config "cpu ms" "x plain" signals
for pg in largeint fib; do
  for c in $confs; do : >"$tmp/$pg.$c"; done
  i=0
  while [ $i -lt "$runs" ]; do
    for c in $confs; do
      # shellcheck disable=SC2046
      "$cpurun" "$tmp/s" "$spyon" $(args $c) -o "$tmp/p.spy" $(prog $pg) \
        >/dev/null 2>&1
      awk '{print ($1 + $2) / 1000}' "$tmp/s" >>"$tmp/$pg.$c"
      "$spyon" report --format json "$tmp/p.spy" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(n["count"] for n in d["natives"]))' >"$tmp/$pg.$c.sig"
    done
    i=$((i + 1))
  done
  base=$(sort -n "$tmp/$pg.plain" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  for c in $confs; do
    m=$(sort -n "$tmp/$pg.$c" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '%-9s %-10s %9.0f %8.3f %9s\n' "$pg" "$c" "$m" \
      "$(echo "$m $base" | awk '{print $1 / $2}')" "$(cat "$tmp/$pg.$c.sig")"
  done
done
