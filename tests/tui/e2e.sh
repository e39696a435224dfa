#!/usr/bin/env bash
# tests/tui/e2e.sh: the browser end to end, in a real (headless) terminal.
#
#   e2e.sh SPYON SRCDIR TMPDIR [CASE...]
#
# Runs the spyon binary in tmux (a private server on a socket in TMPDIR),
# sends keys and reads the screen back with capture-pane. Every wait polls
# the screen until the expected text shows up or WAIT seconds pass (30 by
# default; sanitizer builds are slow), so the test holds under load.
# Cases: first search focus invert help quit resize corrupt colour live
# browse (all by default). Prints "e2e: ok CASE" per case; exits 1 at the first failure
# with the screen that was expected to show something.
set -u
spyon=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd) tmp=$(cd "$3" && pwd)
shift 3
cases=${*:-first search focus invert help quit resize corrupt colour live browse}
wait_s=${WAIT:-30}
unset TMUX
command -v tmux >/dev/null || { echo "e2e: tmux is not installed" >&2; exit 1; }
T() { tmux -S "$tmp/tmux.sock" "$@"; }
trap 'T kill-server 2>/dev/null' EXIT
# A session that outlives the cases, so that the server does not exit
# when a case's session is killed (a new session could then reach the
# dying server: "server exited unexpectedly", seen under load).
T new-session -d -s keep "sleep 3600"

fail() {
  echo "e2e: FAIL $case: $*" >&2
  echo "---- screen ----" >&2
  T capture-pane -p -t e2e >&2 2>/dev/null
  echo "---- stderr ----" >&2
  cat "$tmp/stderr" >&2 2>/dev/null
  echo "----------------" >&2
  exit 1
}

# Wait until the screen matches the extended regex $1.
wait_for() {
  local deadline=$((SECONDS + wait_s))
  while ((SECONDS < deadline)); do
    T capture-pane -p -t e2e 2>/dev/null | grep -Eq -- "$1" && return 0
    sleep 0.1
  done
  fail "timed out waiting for /$1/"
}

# Wait until the screen no longer matches $1.
wait_gone() {
  local deadline=$((SECONDS + wait_s))
  while ((SECONDS < deadline)); do
    T capture-pane -p -t e2e 2>/dev/null | grep -Eq -- "$1" || return 0
    sleep 0.1
  done
  fail "timed out waiting for /$1/ to go"
}

# Start "$@" in a fresh 80x24 session; after it ends the shell prints the
# exit status and whether the terminal modes came back, then waits.
start() {
  T kill-session -t e2e 2>/dev/null
  printf '%q ' "$@" >"$tmp/cmd"
  cat >"$tmp/run.sh" <<RUN
cd '$tmp'
before=\$(stty -g)
$(cat "$tmp/cmd") 2>'$tmp/stderr'
rc=\$?
after=\$(stty -g)
[ "\$before" = "\$after" ] && echo "TTY=same" || echo "TTY=changed"
echo "EXIT=\$rc"
sleep 600
RUN
  T new-session -d -s e2e -x 80 -y 24 "bash '$tmp/run.sh'"
}

keys() { T send-keys -t e2e "$@"; }

# The profile every case browses: a short run of the demo workload.
if [ ! -s "$tmp/work.spy" ]; then
  "$spyon" -o "$tmp/work.spy" "$src/tests/tui/work.st" >/dev/null 2>&1 ||
    { echo "e2e: could not make the profile" >&2; exit 1; }
fi

for case in $cases; do
  case $case in
  first) # The first screen: header, views, the tree with guides.
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\] Leaves'
    wait_for 'tallies .* ms +interval 100/'
    wait_for '^- +[0-9]+\.[0-9]+ \([0-9,]+\)  .*DoIt'
    wait_for '\|[0-9]+\.[0-9]+ \([0-9,]+\)  LargePositiveInteger>>squared'
    wait_for '\? help +q quit'
    keys q
    wait_for '^EXIT=0$'
    ;;
  search) # / finds a method: the cursor's row and the status line.
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    keys / S Q U A R E D Enter
    wait_for "^match 1 of [0-9]+ for 'SQUARED'"
    wait_for 'LargePositiveInteger>>squared'
    keys n
    wait_for "^match 2 of [0-9]+ for 'SQUARED'"
    keys N
    wait_for "^match 1 of [0-9]+ for 'SQUARED'"
    keys / z z z z Enter
    wait_for "^no match for 'zzzz'"
    keys q
    wait_for '^EXIT=0$'
    ;;
  focus) # f makes the selected node the root; u goes back.
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    keys / s q u a r e d B y F o u r t h Enter
    wait_for '^match 1 of'
    keys f
    wait_for '^  focus: .*squaredByFourth'
    wait_for '^focus on LargePositiveInteger>>squaredByFourth'
    wait_gone '^[-+ ] .*DoIt'
    keys u
    wait_for '^  main .* 100\.00'
    keys q
    wait_for '^EXIT=0$'
    ;;
  invert) # G: the callers of the selected method (a leaf here).
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    keys / d i g i t M u l t i p l y Enter
    wait_for '^match 1 of'
    keys G
    wait_for '\| callers'
    wait_for '^callers of Integer>>digitMultiply:neg:'
    wait_for '^- +[0-9.]+ \([0-9,]+\)  Integer>>digitMultiply:neg:'
    keys G
    wait_for '^callee tree'
    keys q
    wait_for '^EXIT=0$'
    ;;
  help) # ? lists the keys; any key closes it.
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    keys '?'
    wait_for '^keys \(any other key closes this help\)'
    wait_for '^/ +search method names'
    wait_for '^G +invert'
    keys j j j j j j j j j j j j j j j j j j
    wait_for '^q \^C +quit'
    keys Escape
    wait_for '\? help +q quit'
    keys q
    wait_for '^EXIT=0$'
    ;;
  quit) # q: exit status 0 and the terminal as it was.
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    keys Tab
    wait_for '^ Tree \[Leaves\]'
    keys q
    wait_for '^TTY=same$'
    wait_for '^EXIT=0$'
    wait_gone '^\[Tree\]|\[Leaves\]'
    ;;
  resize) # 60x15 and back: redrawn each time, no crash.
    start "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    T resize-window -t e2e -x 60 -y 15
    wait_for '^[0-9]+/[0-9]+ +\? help'
    [ "$(T capture-pane -p -t e2e | wc -l)" -eq 15 ] || fail "not 15 rows"
    keys j j j
    T resize-window -t e2e -x 30 -y 5
    wait_for '^[0-9]+/[0-9]+'
    T resize-window -t e2e -x 80 -y 24
    wait_for '^\[Tree\] Leaves'
    keys E End
    wait_for '^[0-9]+/[0-9]+ +\? help'
    keys q
    wait_for '^EXIT=0$'
    ;;
  corrupt) # The loader's one line, before curses starts; exit 1.
    head -c 300 "$tmp/work.spy" >"$tmp/bad.spy"
    start "$spyon" browse "$tmp/bad.spy"
    wait_for '^EXIT=1$'
    grep -Eq '^spyon: .*bad\.spy: offset [0-9]+: ' "$tmp/stderr" ||
      fail "stderr: $(cat "$tmp/stderr")"
    [ "$(wc -l <"$tmp/stderr")" -eq 1 ] || fail "not one line"
    wait_for '^TTY=same$'
    ;;
  colour) # Colours where the terminal has them; none with NO_COLOR.
    sgr=$'\e\\[[0-9;]*(3[0-7]|4[0-7])m'
    start env NO_COLOR= "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    T capture-pane -e -p -t e2e | grep -Eq "$sgr" || fail "no colours"
    keys q
    wait_for '^EXIT=0$'
    start env NO_COLOR=1 "$spyon" browse "$tmp/work.spy"
    wait_for '^\[Tree\]'
    T capture-pane -e -p -t e2e | grep -Eq "$sgr" && fail "colours with NO_COLOR"
    T capture-pane -e -p -t e2e | grep -q $'\e\\[[0-9;]*7m' ||
      fail "no reverse video for the cursor"
    keys q
    wait_for '^EXIT=0$'
    ;;
  live) # --live: the tree while it runs, the script's output after.
    start "$spyon" --live "$src/tests/tui/live.st"
    wait_for '\[live [0-9.]+ s'
    wait_for 'DoIt'
    T capture-pane -p -t e2e | grep -q 'live step' &&
      fail "the script's output reached the screen"
    wait_for '\[finished, exit 0'
    keys q
    wait_for '^EXIT=0$'
    wait_for '^live step 6$'
    ;;
  browse) # --browse: the script's output, then the browser on its profile.
    start "$spyon" --browse -o "$tmp/b.spy" "$src/tests/tui/work.st"
    wait_for '^\[Tree\]'
    wait_for 'dropped  spyon '
    keys q
    wait_for '^EXIT=0$'
    wait_for '^digits: '
    [ -s "$tmp/b.spy" ] || fail "no profile saved"
    ;;
  *) echo "e2e: unknown case $case" >&2; exit 2 ;;
  esac
  T kill-session -t e2e 2>/dev/null
  echo "e2e: ok $case"
done
