#!/usr/bin/env bash
# The project's tests: set up the host (idempotent), then run every test but the slow ones
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
# The boards' images are built beside the set-up when the whole run (no arguments) runs:
# the PowerPC board's, a clean kernel build of its own and the longest step of a host's
# first run, as soon as its tools are in; then the default board's (Debian's armhf
# packages fetched and unpacked), once the main job's packages are in, while apt fetches
# the servers'. The sessions' own builds (tests/conftest.py) then wait on each board's
# image lock and find them built; where an early one failed, they build them and say why.
early_pids=()
early_logs=()
build_early() {   # board
  local log
  log=$(mktemp --tmpdir "boardlab-tests-$1-images-early-XXXXXX.log")
  setsid nice -n 19 ionice -c 3 .venv/bin/boardlab vlab build --board "$1" > "$log" 2>&1 &
  early_pids+=("$!")
  early_logs+=("$log")
  echo "$1's images build beside the set-up (pid $!, log $log)"
}
stop_early() {
  local pid
  for pid in "${early_pids[@]}"; do { kill -TERM -- -"$pid" 2>/dev/null; wait "$pid" 2>/dev/null; } || true; done
}
trap stop_early INT TERM EXIT
bash scripts/setup-host.sh --builds
boards=()   # the default board and the PowerPC board (tests/paths.py)
if [ $# = 0 ]; then read -r -a boards < <(.venv/bin/python tests/paths.py); fi
[ ${#boards[@]} = 2 ] && build_early "${boards[1]}"   # the PowerPC board
bash scripts/setup-host.sh --main-job
[ ${#boards[@]} = 2 ] && build_early "${boards[0]}"   # the default board
bash scripts/setup-host.sh
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
for i in "${!early_pids[@]}"; do   # long done: the sessions waited on them
  if wait "${early_pids[$i]}"; then rm -f "${early_logs[$i]}"
  else echo "images beside the set-up failed (log ${early_logs[$i]}): the tests built them"; fi
done
echo
echo "==================== the tests beside (log $beside_log) ===================="
cat "$beside_log"
# 5 is pytest's "no tests collected": one share may be empty (-m "not vlab", a file path)
if [ "$lab_rc" = 5 ] && [ "$beside_rc" = 5 ]; then exit 5; fi
for rc in "$lab_rc" "$beside_rc"; do
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then exit "$rc"; fi
done
rm -f "$beside_log"
