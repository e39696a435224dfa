#!/bin/sh
# bench/st/leaves.sh: cheap primitive accounting (the default) against
# exact accounting (--exact-prims, every primitive call timed) -- do the
# leaves of the profile agree?
#
#   bench/st/leaves.sh [BUILDDIR] [RUNS] [PROGRAM] [INTERVAL_US]
#
# Runs the program (default examples/largeint.st; a name is
# bench/st/NAME.st) RUNS times in each mode (default 7), the modes
# alternating, at INTERVAL_US (default 100: 10 kHz), and prints for the
# leaves whose share is at least 1 % in either mode the mean share of
# each mode over the runs, their difference, and the difference's
# standard error from the runs' own spread (sd_a^2/n + sd_b^2/n). Samples
# are drawn anew each run, so two runs of one mode differ by the sampling
# noise and the machine's; the difference is the modes' own only where
# it is several standard errors. Exact accounting's clock reads at every
# call are time the cheap runs do not spend, charged to the primitives'
# callers (the hooks' own time): under exact accounting the callers read
# a little higher and the primitives lower, by the hooks' share of the
# run (the header's overhead line).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src}
runs=${2:-7}
prog=${3:-}
iv=${4:-100}
spyon="$build/spyon"
SPYON_KERNEL=${SPYON_KERNEL:-$src/hosts/st/kernel}
export SPYON_KERNEL
[ -x "$spyon" ] || { echo "leaves.sh: $spyon not built (run make first)" >&2; exit 2; }
if [ -z "$prog" ]; then script=$src/examples/largeint.st; prog=largeint
else script=$here/$prog.st; fi
[ -f "$script" ] || { echo "leaves.sh: no program $script" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() { # mode-flag tag -> the run's leaves as "tag share name" lines
  "$spyon" ${1:+"$1"} -i "$iv" -o "$tmp/p.spy" "$script" >/dev/null 2>&1 ||
    { echo "leaves.sh: $prog $1 failed" >&2; exit 1; }
  "$spyon" report "$tmp/p.spy" --threshold 0 |
    awk -v tag="$2" '/^\*\*Leaves\*\*/ { f = 1; next }
      f && /^\*\*/ { exit }
      f && $1 ~ /^[0-9.]+$/ && $2 ~ /^\(/ {
        name = $0; sub(/^ *[0-9.]+ +\([0-9,]+\) +/, "", name)
        print tag, $1, name }'
}

i=0
while [ $i -lt "$runs" ]; do
  if [ $((i % 2)) -eq 0 ]; then one "" a; one --exact-prims b
  else one --exact-prims b; one "" a; fi
  i=$((i + 1))
done >> "$tmp/leaves"

echo "bench/st/leaves.sh: $prog at $iv us, $runs runs of each mode, alternating"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$runs" '
  { k = $1; s = $2; name = $0; sub(/^[ab] [0-9.]+ /, "", name)
    sum[k, name] += s; sq[k, name] += s * s; names[name] = 1 }
  END {
    for (nm in names) {
      ma = sum["a", nm] / n; mb = sum["b", nm] / n
      if (ma < 1 && mb < 1) continue
      va = sq["a", nm] / n - ma * ma; vb = sq["b", nm] / n - mb * mb
      se = n > 1 ? sqrt(((va > 0 ? va : 0) + (vb > 0 ? vb : 0)) / (n - 1)) : 0
      sev = "-"
      if (n > 1) sev = sprintf("%.2f", se)
      printf "%8.2f %8.2f %+8.2f %8s  %s\n", ma, mb, ma - mb, sev, nm
    }
  }' "$tmp/leaves" | sort -k2,2 -rn > "$tmp/table"
printf '%8s %8s %8s %8s  %s\n' cheap exact diff "+-se" "leaf (self %, mean of the runs)"
cat "$tmp/table"
awk '{ d = $3 < 0 ? -$3 : $3; if (d > w) w = d; if (d > 2 * $4 && d > 0.5) o++ }
  END { printf "largest difference %.2f pp; over 0.5 pp and 2 se: %d leaves\n", w, o + 0 }' "$tmp/table"
