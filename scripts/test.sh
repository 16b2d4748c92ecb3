#!/usr/bin/env bash
# The project's tests: set up the host (idempotent), then run every test but the slow ones
# (kernel builds, bisects, the full LAVA server loop: -m slow runs those, -m "slow or not
# slow" everything). The end-to-end tests bring the virtual lab up and down themselves.
# Extra arguments go to pytest; a later -m replaces this one (e.g. -m "not vlab" for the
# unit tests alone: no daemon, no kernel build).
#
# Pytest sessions side by side (tests/conftest.py, --on-default-board): the tests on the
# lab's default board, qemu-arm, here (one after another: a board takes one user at a time),
# the rest beside them (the PowerPC board's own, scripted consoles, servers, unit tests),
# their output in a log printed when they end. The whole run (no arguments) splits the rest
# in three: the unit tests and then the PowerPC board's own tests (its QEMU keeps a core
# busy), one after another, and beside them the other end-to-end ones (which mostly wait on a
# replayed console's timeouts or a server); with arguments the rest is one session, so a -m of
# the caller's selects each test once. The exit code is the worst.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# The PowerPC board's images are a clean kernel build of their own, and the longest step
# of a host's first run: the whole run (no arguments) starts it as soon as its tools are
# in, beside the rest of the set-up (apt's downloads leave the CPU mostly idle), and the
# real boards' roots after them (scripts/build-beside.sh). The sessions' own builds
# (tests/conftest.py, test_realroot.py) then wait on the same locks and find them built;
# if this one fails, they build them and say why.
bash scripts/setup-host.sh --builds
early=
if [ $# = 0 ]; then
  early_log=$(mktemp --tmpdir boardlab-tests-ppc-images-early-XXXXXX.log)
  setsid nice -n 19 ionice -c 3 bash scripts/build-beside.sh > "$early_log" 2>&1 &
  early=$!
  echo "the PowerPC board's images, then the real boards' roots, build beside the set-up (pid $early, log $early_log)"
fi
stop_early() { [ -z "$early" ] || { kill -TERM -- -"$early" 2>/dev/null; wait "$early" 2>/dev/null; } || true; }
trap stop_early INT TERM EXIT
bash scripts/setup-host.sh
echo "set-up done $SECONDS s after the start ($(date +%T)); the tests begin"
# A slot runs its shares one after another ("a;b"): the unit tests, then the PowerPC
# board's, so that the cores hold at most one QEMU beside the default board's and the unit
# tests never share them with both (the default board's boots are the run's critical path).
# The unit tests first: on a host's first run the PowerPC board's images are built beside
# them meanwhile, not waited for.
if [ $# = 0 ]; then
  slots=("unit:not slow and not vlab;powerpc:not slow and ppc_board"
         "end-to-end:not slow and vlab and not ppc_board")
else
  slots=("beside:not slow")
fi
outdir=$(mktemp -d --tmpdir boardlab-tests-beside-XXXXXX)
# Each share's pytest in a session of its own, SIGINT as a foreground pytest has it (a
# background job's is ignored): an interrupted run sends the slot a TERM, the slot its
# running share an INT, and it stops the way Ctrl-C stops this one, its daemons torn down;
# the shares not started yet say 130
run_slot() {
  local child= stop=0 share name marks rc shares
  trap 'stop=1; [ -z "$child" ] || kill -INT "$child" 2>/dev/null' TERM
  IFS=';' read -ra shares <<< "$1"; shift
  for share in "${shares[@]}"; do
    name=${share%%:*} marks=${share#*:}
    if [ "$stop" = 1 ]; then echo 130 > "$outdir/$name.rc"; continue; fi
    setsid env --default-signal=INT .venv/bin/pytest -m "$marks" --on-default-board none --beside-name "$name" "$@" \
      > "$outdir/$name.log" 2>&1 &
    child=$!
    echo "$(date +%T) the tests off the default board ($name: -m \"$marks\") run beside these (pid $child, log $outdir/$name.log)"
    rc=0; wait "$child" || rc=$?
    while kill -0 "$child" 2>/dev/null; do rc=0; wait "$child" || rc=$?; done   # a TERM ended the wait, not the share
    echo "$rc" > "$outdir/$name.rc"
    child=
  done
}
pids=() names=()
stop_besides() { for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null && wait "$pid" || true; done; stop_early; }
trap stop_besides INT TERM EXIT
for slot in "${slots[@]}"; do
  run_slot "$slot" "$@" &
  pids+=($!)
  IFS=';' read -ra shares <<< "$slot"
  for share in "${shares[@]}"; do names+=("${share%%:*}"); done
done
rcs=()
rc=0
.venv/bin/pytest -m "not slow" --on-default-board only "$@" || rc=$?
rcs+=("$rc")
for pid in "${pids[@]}"; do wait "$pid" || true; done
trap - INT TERM EXIT
if [ -n "$early" ]; then   # long done: the sessions waited on it
  if wait "$early"; then
    grep -h " built$" "$early_log"; rm -f "$early_log"
  else
    echo "the builds beside the set-up failed (log $early_log): the tests built what they needed"
  fi
fi
for name in "${names[@]}"; do
  echo
  echo "==================== the tests beside: $name (log $outdir/$name.log) ===================="
  cat "$outdir/$name.log" 2>/dev/null || echo "(never started)"
  rcs+=("$(cat "$outdir/$name.rc" 2>/dev/null || echo 1)")
done
# 5 is pytest's "no tests collected": a share may be empty (-m "not vlab", a file path)
worst=5
for rc in "${rcs[@]}"; do
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then exit "$rc"; fi
  [ "$rc" = 0 ] && worst=0
done
[ "$worst" = 0 ] || exit 5
rm -rf "$outdir"
