#!/bin/sh
# bench/startup.sh [BUILDDIR] [RUNS]: what linking spyon costs an
# interpreter at start-up (issue 12). examples/embed/embed.c with no work
# to do ("embed - 0": the hooks on the stand-in handle, profiling off) is
# built three ways and each is run RUNS times (default 200), interleaved,
# wall time from fork to exit measured by bench/cpurun; medians:
#   no library    the same file built with -DSPY_DISABLE (hooks compiled
#                 out, nothing of spyon linked): the baseline
#   libspyon      linked with the runtime library only, as
#                 `pkg-config --libs spyon` links it
#   + tools       also linked with libspyon-tools (what every interpreter
#                 loaded before the two libraries were split: libdw, GSL,
#                 zlib, protobuf-c ...)
set -eu
b=$(cd "${1:-_build}" && pwd)
runs=${2:-200}
s=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cc=${CC:-cc}
src=$s/examples/embed/embed.c
cat >"$t/none.c" <<'C'
#define SPY_DISABLE 1
#include <spyon/hooks.h>
#include <stdio.h>
int main(int argc, char **argv) { /* embed.c's unprofiled path, no work */
  (void)argc, (void)argv;
  spy_vm *v = NULL;
  spy_poll(v);
  return 0;
}
C
$cc -O2 -I"$s/include" "$t/none.c" -o "$t/none"
$cc -O2 -I"$s/include" "$src" -L"$b/.libs" -lspyon -Wl,-rpath,"$b/.libs" \
  -o "$t/rt"
$cc -O2 -I"$s/include" "$src" -L"$b/.libs" -Wl,--no-as-needed \
  -lspyon-tools -lspyon -Wl,-rpath,"$b/.libs" -o "$t/tools"
for k in none rt tools; do : >"$t/$k.w"; done
i=0
while [ $i -lt "$runs" ]; do
  for k in none rt tools; do
    "$b/bench/cpurun" "$t/stat" "$t/$k" - 0
    awk '{print $4}' "$t/stat" >>"$t/$k.w"
  done
  i=$((i + 1))
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
n=$(med "$t/none.w") r=$(med "$t/rt.w") x=$(med "$t/tools.w")
echo "start-up, wall us (median of $runs interleaved runs; load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-14s %8s %10s\n' program "wall us" "vs none"
printf '%-14s %8d %10s\n' "no library" "$n" "-"
printf '%-14s %8d %+9dus\n' "libspyon" "$r" $((r - n))
printf '%-14s %8d %+9dus\n' "+ tools" "$x" $((x - n))
