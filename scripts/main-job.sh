#!/usr/bin/env bash
# The main job: set up the host (idempotent), bring the virtual lab up with the default
# board's images (no other board's: a board's images are built at its first use), run
# the suites of testsuites/ on it, print the results and where the time went, bring the
# lab down (also when the suites fail). Extra arguments go to pytest (e.g. --kernel rt-armmp).
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run_id=$(date +%Y%m%d-%H%M%S)
run_dir="$top/results/$run_id"
mkdir -p "$run_dir"
t=$SECONDS
step() {   # step NAME: the seconds since the last step, on the host clock (boardlab/pages/timing.py reads it)
  printf '%s\t%s\n' "$1" "$((SECONDS - t))" >> "$run_dir/steps.tsv"
  t=$SECONDS
}
bash "$top/scripts/setup-host.sh" --main-job || exit 1   # what this job uses; the tests install the rest
cd "$top"
board=$(.venv/bin/python -m boardlab.facts.labfacts) || exit 2   # the lab's default board (places/lab.yaml)
step "set-up (apt, venv)"
was_up=0
.venv/bin/boardlab vlab status >/dev/null 2>&1 && was_up=1
if [ $was_up = 0 ]; then
  .venv/bin/boardlab vlab up >/dev/null || exit 1
  trap '.venv/bin/boardlab vlab down' EXIT
fi
step "lab up (services)"
.venv/bin/boardlab vlab up --board "$board" || exit 1
step "lab up: images of $board"
# quick mode by default: the stored baselines of the virtual board are quick-mode runs.
# The kernel build runs beside the board's suites (its own process; the board's figures are
# on the guest-deterministic clock; host-clock figures say what shared the host).
mode=--quick
[ -n "${BOARDLAB_FULL:-}" ] && mode=
.venv/bin/pytest --lg-env "lab/$board.yaml" testsuites/ $mode --build-alongside --run-dir "$run_dir" \
  --junitxml "$run_dir/junit.xml" "$@"
status=$?
step "suites"
# into the lab's history (SQUAD), where the lab keeps one: queued while it is down; with
# SQUAD up, the board's series as charts in $run_dir/history/, linked from the report
[ -f "$run_dir/results.json" ] && .venv/bin/boardlab history submit --if-kept --lab vlab "$run_dir"
if [ -f "$run_dir/results.json" ]; then
  .venv/bin/boardlab report "$run_dir"
fi
step "report"
echo
.venv/bin/boardlab report --timing "$run_dir"
echo "results: $run_dir (results.json, junit.xml, report.html, plots, console logs in $run_dir/console, steps.tsv)"
exit $status
