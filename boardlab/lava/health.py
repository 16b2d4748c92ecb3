"""LAVA's health checks, generated from the facts like the rest of jobs/: one job per
device type (jobs/health-checks/<device type>.yaml, which the server reads from
dispatcher-config/health-checks/ by the name the device dictionary extends). Power on,
U-Boot, the board's default kernel over TFTP to a shell, one exact figure within its
floor (boardlab.judge.health: the same rule as `boardlab lab check`), power off.

LAVA sets the device Good when the check completes and Bad when it is incomplete: the
test raises (lava-test-raise) when the figure is outside its floor, so a wrong figure
is as Bad as a board that does not boot. The server runs it on a schedule
(health_frequency), after a job that failed (`boardlab lava` sets the device Unknown,
which forces a check), and on a Bad board each hour (`boardlab lava recheck`), so a
repaired board comes back by itself."""
from __future__ import annotations

from pathlib import Path

from boardlab.facts.board import BOARDS_DIR, Board, load_board
from boardlab.judge.health import health_figure
from boardlab.lava.files import DEVICE_TYPES_DIR, device_type_name
from boardlab.lava.jobs import dump_job, render_job

HEALTH_CHECKS_DIR = DEVICE_TYPES_DIR.parent / "health-checks"
FREQUENCY_HOURS = 24     # a check a day on a board nothing failed on


def _check_steps(board: Board) -> list[str]:
    """The inline test's shell steps: read the figure, judge it, raise when outside."""
    fig = health_figure(board)
    read = "v=$(free | awk '/^Mem:/ { print $2 }')"
    if fig.expected is None:
        return [read, f'echo "boardlab: {fig.describe()}: $v kB"',
                'lava-test-case free_total_kb --result pass --measurement "$v" --units kB']
    return [read,
            f"if [ -n \"$v\" ] && awk -v v=\"$v\" 'BEGIN {{ d = v - {fig.expected:g}; exit !(d <= {fig.floor:g} "
            f"&& -d <= {fig.floor:g}) }}'; then r=pass; else r=fail; fi",
            'lava-test-case free_total_kb --result "$r" --measurement "${v:-0}" --units kB',
            f'[ "$r" = pass ] || lava-test-raise "{fig.key} = $v kB, not {fig.expected:g} +- {fig.floor:g} '
            f'({fig.kernel} on {fig.board})"']


def health_check_job(board: Board) -> dict:
    fig = health_figure(board)
    job = render_job(board, fig.kernel, [], fig.root, testdefs_url="")
    job["job_name"] = f"health-check {board.name}: {fig.describe()}"
    job["priority"] = "high"
    job["metadata"]["boardlab.health_check"] = fig.key
    test = {"from": "inline", "name": "health", "path": "inline/health.yaml", "repository": {
        "metadata": {"format": "Lava-Test Test Definition 1.0", "name": "health",
                     "description": f"boardlab health check of {board.name}: {fig.describe()}"},
        "run": {"steps": _check_steps(board)}}}
    job["actions"].append({"test": {"timeout": {"minutes": 2}, "definitions": [test]}})
    job["timeouts"]["job"]["minutes"] += 2
    return job


def health_check_path(board: Board) -> Path:
    return HEALTH_CHECKS_DIR / f"{device_type_name(board)}.yaml"


def generated_files() -> dict[Path, str]:
    files = {}
    for facts in sorted(BOARDS_DIR.glob("*.yaml")):
        board = load_board(facts)
        files[health_check_path(board)] = (
            f"# Generated from boards/{board.name}.yaml and its baselines by `boardlab gen`: "
            f"the LAVA health check of device type {device_type_name(board)}.\n" + dump_job(health_check_job(board)))
    return files
