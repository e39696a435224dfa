#!/usr/bin/env bash
# bench/st/instr.sh: what a sample costs the Smalltalk host in
# instructions, which do not move with the machine's load. callgrind
# counts every instruction of a run of bench/st/PROGRAM.st SIZE at one
# sample a second (-i 1000000: the hooks on, almost no samples) and at
# 10 kHz (-i 100), and the difference over the samples taken is a
# sample's cost, split by where the code lives:
#   ticks     spy_tick_next and the host's interrupt check around it
#   near      the near visits (spy_trip_state and the host's trip checks)
#   record    the stack walk and the sample's record (vm-hooks/ record,
#             walk; the host's walker)
#   drain     the aggregation into the call tree (sampler/): with the tick
#             marker the thread drains its own rings
#   rest      everything else (the interpreter's own code, libc)
# Under valgrind the program runs ~50 times slower while the grid keeps
# its pace, so a sample comes every ~2 us of the program's native time:
# fewer checks between two samples, and so fewer ticks and near visits a
# sample than natively (largeint at 10 kHz natively: 11.7 ticks and 12
# near visits a sample, 12-07). A figure to compare builds by, not a time.
#   bench/st/instr.sh [BUILD_DIR] [PROGRAM] [SIZE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/_build}
prog=${2:-fib}
case $prog in fib) size=${3:-27};; largeint) size=${3:-100};;
  sends) size=${3:-100000};; loops) size=${3:-100};;
  collections) size=${3:-30000};; *) size=${3:-};; esac
command -v valgrind >/dev/null || { echo "instr.sh: needs valgrind" >&2; exit 2; }
[ -f "$here/$prog.st" ] || { echo "instr.sh: no program $here/$prog.st" >&2; exit 2; }
SPYON_KERNEL=${SPYON_KERNEL:-$top/hosts/st/kernel}
export SPYON_KERNEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # name interval
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$1" "$build/spyon" \
    -i "$2" -o "$tmp/$1.spy" "$here/$prog.st" ${size:+"$size"} > /dev/null \
    2> "$tmp/$1.err"
}
run idle 1000000 &
run busy 100
wait
samples() { "$build/spyon" report "$tmp/$1.spy" | sed -n 's/^Reporting - \([0-9,]*\) tallies.*/\1/p' | tr -d ,; }
# Instructions by group: each function's own (exclusive) count.
groups() {
  callgrind_annotate --auto=no --threshold=100 "$tmp/$1" 2>/dev/null |
    awk '$1 ~ /^[0-9,]+$/ && $0 !~ /PROGRAM TOTALS/ {
      n = $1; gsub(",", "", n)
      g = "rest"
      if ($0 ~ /:spy_tick_next_slow_|:st_interrupt|:tick_next/) g = "ticks"
      else if ($0 ~ /:spy_trip_state|:st_call_poll|:words_restore|:spy_trip_rearm|:st_call_words/) g = "near"
      else if ($0 ~ /[ \/]sampler\//) g = "drain"
      else if ($0 ~ /[ \/]vm-hooks\/(record|walk)\.|:walk |:spyH_walk|:emit |:spyH_emit/) g = "record"
      s[g] += n }
    END { for (g in s) print g, s[g] }'
}
n_idle=$(samples idle) n_busy=$(samples busy)
groups idle > "$tmp/g.idle"
groups busy > "$tmp/g.busy"
total() { sed -n 's/.*Collected : //p' "$tmp/$1.err"; }
echo "bench/st/instr.sh: $prog $size, callgrind, at 1 Hz ($n_idle samples) and 10 kHz ($n_busy)"
printf '%-8s %14s %14s %12s\n' "" "1 Hz" "10 kHz" "a sample"
for g in ticks near record drain rest; do
  a=$(awk -v g="$g" '$1 == g { print $2 }' "$tmp/g.idle"); a=${a:-0}
  b=$(awk -v g="$g" '$1 == g { print $2 }' "$tmp/g.busy"); b=${b:-0}
  printf '%-8s %14d %14d %12.0f\n' "$g" "$a" "$b" \
    "$(echo "($b - $a) / ($n_busy - $n_idle + ($n_busy == $n_idle))" | bc -l)"
done
a=$(total idle) b=$(total busy)
printf '%-8s %14d %14d %12.0f\n' "total" "$a" "$b" \
  "$(echo "($b - $a) / ($n_busy - $n_idle + ($n_busy == $n_idle))" | bc -l)"
