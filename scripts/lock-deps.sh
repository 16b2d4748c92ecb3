#!/usr/bin/env bash
# Regenerates requirements.lock (every Python dependency pinned, with hashes) from the
# pins in pyproject.toml. Run after changing a dependency there, and commit both; setup
# installs exactly the lock (pip --require-hashes).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install -q --disable-pip-version-check pip-tools
cd "$top"
"$tools/venv/bin/pip-compile" -q --generate-hashes --strip-extras --no-emit-find-links \
  --extra test --output-file requirements.lock pyproject.toml
sed -i 's#^\#    pip-compile .*#\#    scripts/lock-deps.sh   (pip-compile --extra=test --generate-hashes --strip-extras pyproject.toml)#' requirements.lock
echo "wrote $top/requirements.lock"
# the results database's own venv (.venv-squad), from history/requirements.in
"$tools/venv/bin/pip-compile" -q --generate-hashes --strip-extras --no-emit-find-links \
  --allow-unsafe --output-file history/requirements.lock history/requirements.in
sed -i 's#^\#    pip-compile .*#\#    scripts/lock-deps.sh   (pip-compile --generate-hashes --allow-unsafe history/requirements.in)#' history/requirements.lock
echo "wrote $top/history/requirements.lock"
# the installer setup uses for both locks (uv), from scripts/uv.in
"$tools/venv/bin/pip-compile" -q --generate-hashes --no-emit-find-links \
  --output-file scripts/uv.lock scripts/uv.in
sed -i 's#^\#    pip-compile .*#\#    scripts/lock-deps.sh   (pip-compile --generate-hashes scripts/uv.in)#' scripts/uv.lock
echo "wrote $top/scripts/uv.lock"
