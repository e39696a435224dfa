#!/usr/bin/env bash
# bench/soak/native.sh [BUILDDIR] [SIGNALS] [INTERVAL_US]: the native
# unwinder's stress test (issues 14 and 15; slow, not part of make check).
#
# Runs bench/soak/soak.st (large integers through GMP, strings, sorting,
# allocation: primitives that spend their time in malloc and libgmp, three
# processes, a 1 ms ticker) under `spyon --native-interval INTERVAL_US`
# (default 20 us: a SIGPROF every 20 us to the interpreter thread, each
# unwound with libunwind when it lands in a primitive, often inside malloc
# or GMP's assembly) long enough for SIGNALS native stacks to be recorded
# (default 1,000,000; a 3 s probe run measures the rate first). The run is
# under `timeout`: a deadlock (the handler interrupting malloc or the
# loader, say) ends it with status 124. It prints the stacks recorded,
# those dropped because the ring was full, the run's exit status and the
# ticker's lateness, and exits 1 unless the run ended normally, its profile
# loads and at least SIGNALS stacks were recorded.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../_build}" && pwd)
want=${2:-1000000}
iv=${3:-20}
spyon=$build/spyon
export SPYON_KERNEL=${SPYON_KERNEL:-$here/../../hosts/st/kernel}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Native stacks in a saved profile, and the drops its report states.
stacks() {
  "$spyon" report --format json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(n["count"] for n in d["natives"]))'
}

"$spyon" --native-interval "$iv" -o "$work/probe.spy" "$here/soak.st" 3 \
  >/dev/null 2>&1 || { echo "native.sh: probe run failed" >&2; exit 1; }
rate=$(( $(stacks "$work/probe.spy") / 3 ))
[ "$rate" -gt 0 ] || { echo "native.sh: no native stacks in the probe" >&2; exit 1; }
secs=$(( want * 2 / rate + 2 )) # a long run records fewer a second than the probe
echo "native stress: interval ${iv} us, ${rate} stacks/s in the probe, running ${secs} s"
echo "($(date -u '+%Y-%m-%d %H:%M') UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
t0=$SECONDS
timeout $(( secs * 3 + 30 )) "$spyon" --native-interval "$iv" \
  -o "$work/run.spy" "$here/soak.st" "$secs" >"$work/out.txt" 2>"$work/err.txt"
st=$?
echo "exit status ${st} after $(( SECONDS - t0 )) s"
tail -n 3 "$work/out.txt"
if [ "$st" -ne 0 ]; then cat "$work/err.txt"; exit 1; fi
n=$(stacks "$work/run.spy") || { echo "native.sh: the profile does not load"; exit 1; }
"$spyon" report "$work/run.spy" | grep -E '^(dropped|rate):' || true
echo "native stacks recorded: ${n} (wanted ${want})"
[ "$n" -ge "$want" ] || exit 1
