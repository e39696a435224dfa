#!/bin/sh
# bench/st/deep.sh: what profiling costs a deep recursion.
#
#   bench/st/deep.sh [BUILDDIR] [RUNS]
#
# deep.st makes 20 million activations at depth 10, 1000 and 100 000 (the
# main process holds at most 131 072 frames, so 1 M is out of reach
# here). Each depth runs RUNS times (default 5), interleaved, with
# `spyon --no-profile` and with `spyon` at the default 10 kHz; the table
# gives the median CPU ms of the workload (the interpreter thread's
# clock, printed by the script), their ratio (target: at most 1.5 at
# 100 000), the samples taken, and the extra CPU per sample.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src}
runs=${2:-5}
spyon="$build/spyon"
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$spyon" ] || { echo "deep.sh: $spyon not built" >&2; exit 2; }

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] \
    : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "Deep recursion, 20 M activations, CPU ms, median of $runs; $(uptime | sed 's/.*load/load/')"
printf '%-10s %10s %10s %7s %9s %12s\n' depth stopped "10 kHz" ratio samples "us/sample"
for d in 10 1000 100000; do
  : > "$tmp/off"; : > "$tmp/on"; : > "$tmp/n"
  i=0
  while [ $i -lt "$runs" ]; do
    "$spyon" --no-profile "$here/deep.st" $d | sed -n 's/^cpu_ms //p' >> "$tmp/off"
    "$spyon" -o "$tmp/p.spy" "$here/deep.st" $d 2> "$tmp/err" |
      sed -n 's/^cpu_ms //p' >> "$tmp/on"
    sed -n 's/^spyon: \([0-9,]*\) tallies.*/\1/p' "$tmp/err" | tr -d , >> "$tmp/n"
    i=$((i + 1))
  done
  off=$(median < "$tmp/off"); on=$(median < "$tmp/on"); n=$(median < "$tmp/n")
  awk -v d=$d -v a="$off" -v b="$on" -v n="$n" 'BEGIN {
    printf "%-10s %10.0f %10.0f %7.2f %9.0f %12.2f\n", d, a, b, b / a, n,
      (n > 0) ? (b - a) * 1000 / n : 0 }'
done
