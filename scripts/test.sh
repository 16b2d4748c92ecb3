#!/usr/bin/env bash
# The project's tests: set up the host (idempotent; the servers' packages go in beside the
# first tests, which need only the main job's), and run every test but the slow ones
# (kernel builds, bisects, the full LAVA server loop: -m slow runs those, -m "slow or not
# slow" everything). The end-to-end tests bring the virtual lab up and down themselves.
# Extra arguments go to pytest; a later -m replaces this one (e.g. -m "not vlab" for the
# unit tests alone: no daemon, no kernel build).
#
# Two pytest sessions side by side (tests/conftest.py, --on-default-board): the tests on the
# lab's default board, qemu-arm, here (one after another: a board takes one user at a time),
# the rest beside them (the PowerPC board's own, scripted consoles, servers, unit tests),
# their output in a log printed when they end. The exit code is the worse of the two.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# The PowerPC board's images are a clean kernel build of their own, and the longest step
# of a host's first run: the whole run (no arguments) starts it as soon as its tools are
# in, beside the rest of the set-up (apt's downloads leave the CPU mostly idle). The
# sessions' own build (tests/conftest.py) then waits on the board's image lock and finds
# them built; if this one fails, that one builds them and says why. The build is a session
# of its own, and the kernel's autogroup scheduling shares the CPU between sessions
# whatever their nice: its session's group is set to nice -5 (about 3 times the weight of
# a test session's), from inside it (from outside, the write races setsid), so that the
# PowerPC board's tests, one at a time on the one board, start while the default board's
# are still running rather than after them.
bash scripts/setup-host.sh --builds
early=
if [ $# = 0 ]; then
  early_log=$(mktemp --tmpdir boardlab-tests-ppc-images-early-XXXXXX.log)
  setsid sh -c 'echo -5 > /proc/self/autogroup 2>/dev/null; exec ionice -c 3 "$@"' build \
    .venv/bin/boardlab vlab build --board qemu-ppc > "$early_log" 2>&1 &
  early=$!
  echo "the PowerPC board's images build beside the set-up (pid $early, log $early_log)"
fi
stop_early() { [ -z "$early" ] || { kill -TERM -- -"$early" 2>/dev/null; wait "$early" 2>/dev/null; } || true; }
trap stop_early INT TERM EXIT
# The rest of the set-up (the servers' packages: LAVA, PostgreSQL, Chromium, pdudaemon;
# the history's venv) goes on beside the tests. Those marked main_job_packages use only
# what is in by now, the main job's own, and run first on the default board; every other
# test waits for it to end (tests/conftest.py). Its output goes to a log, printed below.
setup_log=$(mktemp --tmpdir boardlab-tests-setup-XXXXXX.log)
setup_status=$(mktemp --tmpdir boardlab-tests-setup-XXXXXX.status)   # its exit code, once it ends
( rc=0; bash scripts/setup-host.sh > "$setup_log" 2>&1 || rc=$?; echo "$rc" > "$setup_status" ) &
setup=$!
export BOARDLAB_SETUP_PENDING="$setup $setup_status $setup_log"
echo "the rest of the set-up goes on beside the first tests (pid $setup, log $setup_log)"
beside_log=$(mktemp --tmpdir boardlab-tests-beside-XXXXXX.log)
# In a session of its own, SIGINT as a foreground pytest has it (a background job's is
# ignored): an interrupted run sends it one, and it stops the way Ctrl-C stops this one,
# its daemons torn down
setsid env --default-signal=INT .venv/bin/pytest -m "not slow" --on-default-board none "$@" > "$beside_log" 2>&1 &
beside=$!
stop_beside() { kill -INT "$beside" 2>/dev/null && wait "$beside" || true; stop_early; }
trap stop_beside INT TERM EXIT
echo "the tests off the default board run beside these (pid $beside, log $beside_log)"
lab_rc=0
.venv/bin/pytest -m "not slow" --on-default-board only "$@" || lab_rc=$?
beside_rc=0
wait "$beside" || beside_rc=$?
trap - INT TERM EXIT
wait "$setup" || true
setup_rc=$(cat "$setup_status")
[ -n "$setup_rc" ] || setup_rc=1   # it ended without writing one (killed)
echo
echo "==================== the rest of the set-up (log $setup_log) ===================="
cat "$setup_log"
if [ -n "$early" ]; then   # long done: the sessions waited on it
  if wait "$early"; then rm -f "$early_log"; else echo "the PowerPC board's images beside the set-up failed (log $early_log): the tests built them"; fi
fi
echo
echo "==================== the tests beside (log $beside_log) ===================="
cat "$beside_log"
if [ "$setup_rc" != 0 ]; then echo "the rest of the set-up failed (exit $setup_rc): the tests that need it did not run"; exit "$setup_rc"; fi
rm -f "$setup_log" "$setup_status"
# 5 is pytest's "no tests collected": one share may be empty (-m "not vlab", a file path)
if [ "$lab_rc" = 5 ] && [ "$beside_rc" = 5 ]; then exit 5; fi
for rc in "$lab_rc" "$beside_rc"; do
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then exit "$rc"; fi
done
rm -f "$beside_log"
