#!/usr/bin/env bash
# What a host's first test run builds beside its set-up (scripts/test.sh starts it at
# nice 19): the PowerPC board's images (a clean kernel build of their own, the longest
# step), then the real boards' roots (test_realroot.py's: musl, soft-fp and busybox
# cross-built). The tests' own builds wait on the same locks and find them built. Each
# step's end is a line "HH:MM:SS ... built" (test.sh prints them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
.venv/bin/boardlab vlab build --board "$(.venv/bin/python tests/paths.py)"
echo "$(date +%T) the PowerPC board's images built"
out=$(mktemp -d --tmpdir boardlab-tests-roots-beside-XXXXXX)
trap 'rm -rf "$out"' EXIT
trap 'exit 143' TERM INT
for board in $(.venv/bin/python tests/paths.py --real-roots); do
  .venv/bin/boardlab images root --board "$board" --out "$out"
  echo "$(date +%T) the root of $board built"
done
