#!/usr/bin/env bash
# The main job: set up the host (idempotent), bring the virtual lab up, run the suites
# of testsuites/ on the default virtual board, print the results, bring the lab down
# (also when the suites fail). Extra arguments go to pytest (e.g. --kernel rt-armmp).
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/scripts/setup-host.sh" || exit 1
cd "$top"
run_id=$(date +%Y%m%d-%H%M%S)
run_dir="results/$run_id"
was_up=0
.venv/bin/boardlab vlab status >/dev/null 2>&1 && was_up=1
if [ $was_up = 0 ]; then
  .venv/bin/boardlab vlab up || exit 1
  trap '.venv/bin/boardlab vlab down' EXIT
fi
# quick mode by default: the stored baselines of the virtual board are quick-mode runs
mode=--quick
[ -n "${BOARDLAB_FULL:-}" ] && mode=
.venv/bin/pytest --lg-env lab/qemu-arm.yaml testsuites/ $mode --run-dir "$run_dir" \
  --junitxml "$run_dir/junit.xml" "$@"
status=$?
if [ -f "$run_dir/results.json" ]; then
  .venv/bin/boardlab report "$run_dir"
fi
echo "results: $run_dir (results.json, junit.xml, report.html, plots, console logs in $run_dir/console)"
exit $status
