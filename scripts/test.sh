#!/usr/bin/env bash
# The project's tests: set up the host (idempotent), then run every test but the slow ones
# (kernel builds, bisects, the full LAVA server loop: -m slow runs those, -m "slow or not
# slow" everything). The end-to-end tests bring the virtual lab up and down themselves.
# Extra arguments go to pytest; a later -m replaces this one (e.g. -m "not vlab" for the
# unit tests alone: no daemon, no kernel build).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/scripts/setup-host.sh"
cd "$top"
exec .venv/bin/pytest -m "not slow" "$@"
