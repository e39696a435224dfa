#!/usr/bin/env bash
# bench/soak/soak.sh [BUILDDIR] [SECONDS] [CONTROL_SECONDS]: the soak test
# of issue 15 (slow: 10 minutes by default; not part of `make check`).
#
# Runs bench/soak/soak.st (large-integer, string, sort and allocation
# primitives in three time-sliced processes, a 1 ms ticker above them,
# steady garbage) under `spyon -i 1` (a 1 us interval: far more often than
# the sampler can drain, so the rings fill and drops must be counted) for
# SECONDS, sampling the process's resident memory every 5 s, then the same
# script with --no-profile for CONTROL_SECONDS. It prints one table:
#   memory    RSS after the first minute (or first sample), at the end, max:
#             flat means the end is within 10 % of the first-minute figure
#   samples   tallies and dropped samples as the saved profile says, and
#             the profile read back by `spyon report`
#   ticker    wake-ups of the 1 ms ticker, the latest one, and how many
#             were over 10 ms late, profiled and not: a profiler that
#             blocked the interpreter would make the profiled run later
# and exits 1 if memory grew by more than 10 % or the profile does not load.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../_build}
secs=${2:-600}
control=${3:-120}
spyon=$build/spyon
export SPYON_KERNEL=${SPYON_KERNEL:-$here/../../hosts/st/kernel}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

echo "soak: $secs s at -i 1, control $control s; $(nproc) CPUs," \
     "load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"
"$spyon" -i 1 -o "$work/soak.spy" "$here/soak.st" "$secs" \
  > "$work/out.txt" 2> "$work/err.txt" &
pid=$!
first= last= max=0 t=0
while kill -0 "$pid" 2>/dev/null; do
  sleep 5; t=$((t + 5))
  r=$(rss_kb "$pid")
  [ -n "$r" ] || continue
  last=$r
  [ "$r" -gt "$max" ] && max=$r
  if [ -z "$first" ] && { [ $t -ge 60 ] || [ "$secs" -lt 120 ]; }; then
    first=$r
  fi
  echo "$t $r" >> "$work/rss.txt"
done
wait "$pid"; rc=$?
echo "exit status $rc; $(tail -n 1 "$work/err.txt")"
"$spyon" report "$work/soak.spy" > "$work/report.txt" || {
  echo "soak: the profile does not load"; exit 1; }
tallies=$(sed -n 's/^Reporting - \([0-9,]*\) tallies.*/\1/p' "$work/report.txt")
dropped=$(sed -n 's/^dropped: *\([0-9,]*\) samples.*/\1/p' "$work/report.txt")
overhead=$(sed -n 's/^overhead: *//p' "$work/report.txt")
gc=$(awk '/^\*\*GC\*\*/ {getline; getline; print $1}' "$work/report.txt")
"$spyon" --no-profile "$here/soak.st" "$control" > "$work/control.txt"
val() { sed -n "s/^$1 //p" "$2"; }
printf '%-22s %14s %14s\n' "" "profiled" "not profiled"
printf '%-22s %14s %14s\n' "seconds" "$secs" "$control"
printf '%-22s %14s %14s\n' "work units" "$(val units "$work/out.txt")" \
  "$(val units "$work/control.txt")"
printf '%-22s %14s %14s\n' "ticker wake-ups" "$(val ticks "$work/out.txt")" \
  "$(val ticks "$work/control.txt")"
printf '%-22s %14s %14s\n' "latest wake-up (us)" \
  "$(val max_late_us "$work/out.txt")" "$(val max_late_us "$work/control.txt")"
printf '%-22s %14s %14s\n' "wake-ups > 10 ms late" \
  "$(val late_10ms "$work/out.txt")" "$(val late_10ms "$work/control.txt")"
printf '%-22s %14s %14s\n' "Smalltalk heap bytes" \
  "$(val heap_bytes "$work/out.txt")" "$(val heap_bytes "$work/control.txt")"
printf '%-22s %14s\n' "RSS first minute (kB)" "$first"
printf '%-22s %14s\n' "RSS at the end (kB)" "$last"
printf '%-22s %14s\n' "RSS max (kB)" "$max"
printf '%-22s %14s\n' "tallies" "$tallies"
printf '%-22s %14s\n' "dropped samples" "$dropped"
printf '%-22s %14s\n' "GC collections" "$gc"
printf '%-22s %s\n' "overhead" "$overhead"
if [ -n "$first" ] && [ "$last" -gt $((first + first / 10)) ]; then
  echo "soak: memory grew from $first kB to $last kB"
  exit 1
fi
