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
# in three: the PowerPC board's own tests (its QEMU keeps a core busy), the other end-to-end
# ones (which mostly wait on a replayed console's timeouts or a server) and the unit tests
# (which use the CPU those waits leave); with arguments the rest is one session, so a -m of
# the caller's selects each test once. The exit code is the worst.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
# The PowerPC board's images are a clean kernel build of their own, and the longest step
# of a host's first run: the whole run (no arguments) starts it as soon as its tools are
# in, beside the rest of the set-up (apt's downloads leave the CPU mostly idle). The
# sessions' own build (tests/conftest.py) then waits on the board's image lock and finds
# them built; if this one fails, that one builds them and says why.
bash scripts/setup-host.sh --builds
early=
if [ $# = 0 ]; then
  early_log=$(mktemp --tmpdir boardlab-tests-ppc-images-early-XXXXXX.log)
  setsid nice -n 19 ionice -c 3 .venv/bin/boardlab vlab build --board "$(.venv/bin/python tests/paths.py)" \
    > "$early_log" 2>&1 &
  early=$!
  echo "the PowerPC board's images build beside the set-up (pid $early, log $early_log)"
fi
stop_early() { [ -z "$early" ] || { kill -TERM -- -"$early" 2>/dev/null; wait "$early" 2>/dev/null; } || true; }
trap stop_early INT TERM EXIT
bash scripts/setup-host.sh
if [ $# = 0 ]; then
  besides=("powerpc:not slow and ppc_board" "end-to-end:not slow and vlab and not ppc_board"
           "unit:not slow and not vlab")
else
  besides=("beside:not slow")
fi
pids=() logs=() names=()
# In a session of its own, SIGINT as a foreground pytest has it (a background job's is
# ignored): an interrupted run sends it one, and it stops the way Ctrl-C stops this one,
# its daemons torn down
stop_besides() { for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null && wait "$pid" || true; done; stop_early; }
trap stop_besides INT TERM EXIT
for share in "${besides[@]}"; do
  name=${share%%:*} marks=${share#*:}
  log=$(mktemp --tmpdir "boardlab-tests-$name-XXXXXX.log")
  setsid env --default-signal=INT .venv/bin/pytest -m "$marks" --on-default-board none --beside-name "$name" "$@" \
    > "$log" 2>&1 &
  pids+=($!) logs+=("$log") names+=("$name")
  echo "the tests off the default board ($name: -m \"$marks\") run beside these (pid $!, log $log)"
done
rcs=()
rc=0
.venv/bin/pytest -m "not slow" --on-default-board only "$@" || rc=$?
rcs+=("$rc")
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  rcs+=("$rc")
done
trap - INT TERM EXIT
if [ -n "$early" ]; then   # long done: the sessions waited on it
  if wait "$early"; then rm -f "$early_log"; else echo "the PowerPC board's images beside the set-up failed (log $early_log): the tests built them"; fi
fi
for i in "${!logs[@]}"; do
  echo
  echo "==================== the tests beside: ${names[$i]} (log ${logs[$i]}) ===================="
  cat "${logs[$i]}"
done
# 5 is pytest's "no tests collected": a share may be empty (-m "not vlab", a file path)
worst=5
for rc in "${rcs[@]}"; do
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then exit "$rc"; fi
  [ "$rc" = 0 ] && worst=0
done
[ "$worst" = 0 ] || exit 5
rm -f "${logs[@]}"
