"""A board from a labgrid environment for a script (benches, `boardlab compare`, a
bisect step, the nightly, `lab check`): the strategy and its shell, the board's place
held at the coordinator when LAVA shares it, the board powered off at the end whatever
happens."""
from __future__ import annotations

import contextlib
from pathlib import Path

from boardlab.sharing.placehold import place_held
from boardlab.errors import InputError, one_line


def require_env(env_path):
    """InputError naming a labgrid environment file that is not there: said before a
    command writes anything, without building the environment."""
    if not Path(env_path).is_file():
        raise InputError(f"{env_path}: no such labgrid environment file")


def open_env(env_path):
    """A labgrid environment file; InputError naming it when it is missing or invalid."""
    from labgrid import Environment
    require_env(env_path)
    try:
        return Environment(str(env_path))
    except Exception as e:  # noqa: BLE001 - labgrid's InvalidConfigError, YAML errors
        raise InputError(f"{env_path}: not a usable labgrid environment: "
                         f"{type(e).__name__}: {one_line(e)}") from None


def touched(strategy) -> bool:
    """Whether this session may have powered its board: it holds the board's lock, or
    the board is on. A session whose first transition found the board busy never touched
    it: powering it off would be another run's board (or a second BoardBusy)."""
    return strategy.lock.held or strategy.status.name not in ("off", "unknown")


@contextlib.contextmanager
def board_session(env_path, log_dir: Path, milestones_due=None, command: str = "session"):
    """-> (strategy, shell): shell() is the environment's ShellDriver. milestones_due:
    narrows the strategy's own (when a silent board has hung). command: who holds the
    board's place at the coordinator when LAVA shares the board (sharing.placehold; held
    before anything touches the board, given back after the power-off, also on an error
    or Ctrl-C). The board is powered off at the end, and its lock never outlives the
    session: after a power-off that failed (a power switch gone) the process may live on
    (a test session, a daemon), and the next run powers the board off first anyway."""
    env = open_env(env_path)
    try:
        target = env.get_target("main")
        strategy = target.get_driver("Strategy")   # a strategy is not activated: nothing connects yet
        remote = any(type(r).__name__ == "RemotePlace" for r in target.resources)   # acquired by its user
        with contextlib.nullcontext() if remote else place_held(strategy.board, command):
            strategy.log_dir = str(log_dir)
            strategy.milestones_due = milestones_due
            try:
                yield strategy, lambda: target.get_driver("ShellDriver")
            finally:
                try:
                    if touched(strategy):
                        strategy.transition("off")
                finally:
                    strategy.release_board()
    finally:
        env.cleanup()
