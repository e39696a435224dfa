#!/usr/bin/env bash
# bench/lua/bench_lua.sh: the Lua host's overhead. For each workload, the
# CPU time (user + sys, all threads: bench/cpurun) of plain lua5.4 and of
# spyon at 1 and 10 kHz, the median of REPS interleaved runs, and the
# ratio; also the Lua thread's own CPU under spyon at 10 kHz
# (SPYON_LUA_TIMES), which leaves out the sampler thread; the Lua thread's
# CPU at one sample a second ("brackets": -i 1000000, what the bracketed C
# functions cost with hardly a signal), which separates the brackets' cost
# from the signals', over the Lua thread's CPU under `spyon --no-profile`
# ("stopped", itself over lua5.4: the same binary with the hooks compiled
# in and the profiler stopped; spyon links liblua5.4's archive and loads
# more libraries than lua5.4), so that "brackets x" is what bracketing
# alone costs the interpreter thread; what one wrapped call costs, stopped
# and profiled (bench/lua/percall.lua: the least time of many chunks, for
# a guest whose speed moves; bench/lua/instr.sh counts instructions); what a
# bare timer signal costs this machine (sigfloor.c, the floor under any
# sampler that interrupts the thread); and the alternatives to the
# signal-armed hook (SPYON_LUA_HOOK=count:N: a permanent count hook every
# N instructions; SPYON_LUA_TIMER=cpu: the timer on the thread's CPU
# clock; SPYON_LUA_ADAPT=0: the timer never slows down while a mark waits).
#   bench/lua/bench_lua.sh [BUILD_DIR] [REPS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${1:-$top/_build}
reps=${2:-5}
spyon=$build/spyon
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# cpu CMD...: user+sys seconds of one run, all threads (stdout discarded;
# bench/cpurun: microseconds, where /usr/bin/time rounds to 10 ms).
cpu() {
  "$build/bench/cpurun" "$tmp/t" "$@" > /dev/null 2> "$tmp/err" || true
  awk '{printf "%.4f", ($1 + $2) / 1e6}' "$tmp/t"
}
# lua thread CPU of one spyon run (SPYON_LUA_TIMES).
lcpu() {
  SPYON_LUA_TIMES=1 "$@" > /dev/null 2> "$tmp/err" || true
  awk '/lua thread cpu/ {printf "%.3f", $5}' "$tmp/err"
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -n |
  awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # label, measure fn, cmd...: the median of REPS runs
  local label=$1 fn=$2; shift 2
  local xs=""
  for _ in $(seq "$reps"); do xs="$xs $($fn "$@")"; done
  echo "$xs" | median
}
printf "load average: %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
cc -O2 -o "$tmp/sigfloor" "$here/sigfloor.c"
# At 10 kHz only: at 1 kHz the few signals' cost drowns in the loop's noise.
xs=""
for _ in $(seq "$reps"); do xs="$xs $("$tmp/sigfloor" 100 | cut -d' ' -f1)"; done
printf "a bare timer signal every 100 us costs %s us of CPU (median)\n" \
  "$(echo "$xs" | median)"
printf "%-22s %8s %8s %6s %8s %6s %8s %6s %8s %6s %8s %6s\n" workload \
  "lua5.4" "1 kHz" x "10 kHz" x "thread" x stopped x brackets x
for w in "examples/fib.lua 34" "examples/strings.lua 40" \
         "examples/sorting.lua" "bench/lua/deep.lua 100000" \
         "bench/lua/calls.lua 5000000"; do
  set -- $w
  script=$top/$1; shift
  # Interleaved: one run of each configuration per round, so that the
  # machine's drift hits all alike.
  base="" k1="" k10="" th="" st="" br=""
  for _ in $(seq "$reps"); do
    base="$base $(cpu lua5.4 "$script" "$@")"
    k1="$k1 $(cpu "$spyon" -i 1000 -o "$tmp/p.spy" "$script" "$@")"
    k10="$k10 $(cpu "$spyon" -i 100 -o "$tmp/p.spy" "$script" "$@")"
    th="$th $(lcpu "$spyon" -i 100 -o "$tmp/p.spy" "$script" "$@")"
    st="$st $(lcpu "$spyon" --no-profile "$script" "$@")"
    br="$br $(lcpu "$spyon" -i 1000000 -o "$tmp/p.spy" "$script" "$@")"
  done
  base=$(echo "$base" | median) k1=$(echo "$k1" | median)
  k10=$(echo "$k10" | median) th=$(echo "$th" | median)
  st=$(echo "$st" | median) br=$(echo "$br" | median)
  printf "%-22s %8s %8s %6.3f %8s %6.3f %8s %6.3f %8s %6.3f %8s %6.3f\n" \
    "$(basename "$script") $*" "$base" "$k1" "$(echo "$k1 / $base" | bc -l)" \
    "$k10" "$(echo "$k10 / $base" | bc -l)" "$th" \
    "$(echo "$th / $base" | bc -l)" "$st" "$(echo "$st / $base" | bc -l)" \
    "$br" "$(echo "$br / $st" | bc -l)"
done

echo
echo "one wrapped call, ns (bench/lua/percall.lua: the least of 300 chunks;"
echo "median of $reps runs each): stopped, at one sample a second, and over"
for f in upper format; do
  st="" br=""
  for _ in $(seq "$reps"); do
    st="$st $("$spyon" --no-profile "$here/percall.lua" |
              sed -n "s/.*$f[^)]*) \([0-9.]*\).*/\1/p")"
    br="$br $("$spyon" -i 1000000 -o "$tmp/p.spy" "$here/percall.lua" 2>/dev/null |
              sed -n "s/.*$f[^)]*) \([0-9.]*\).*/\1/p")"
  done
  st=$(echo "$st" | median) br=$(echo "$br" | median)
  printf "  string.%-8s %8s %8s %+8.2f\n" "$f" "$st" "$br" \
    "$(echo "$br - $st" | bc -l)"
done

echo
echo "alternatives at 10 kHz (Lua thread CPU, fib.lua 34):"
for m in signal cpu-timer count:1000 count:100 none; do
  hm=$m tm=""; [ "$m" = signal ] && hm=""
  [ "$m" = cpu-timer ] && hm="" tm=cpu
  t=$(SPYON_LUA_HOOK=$hm SPYON_LUA_TIMER=${tm:-} run m lcpu "$spyon" -i 100 -o "$tmp/p.spy" \
      "$top/examples/fib.lua" 34)
  printf "  %-12s %8s s\n" "$m" "$t"
done
echo "the timer kept at every interval while a mark waits (Lua thread CPU, 10 kHz):"
for w in "examples/sorting.lua" "examples/fib.lua 34"; do
  set -- $w
  on=$(run on lcpu "$spyon" -i 100 -o "$tmp/p.spy" "$top/$1" "${@:2}")
  off=$(SPYON_LUA_ADAPT=0 run off lcpu "$spyon" -i 100 -o "$tmp/p.spy" \
        "$top/$1" "${@:2}")
  printf "  %-22s slowed %s s, kept %s s\n" "$(basename "$1") ${*:2}" "$on" "$off"
done
printf "load average at the end: %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
