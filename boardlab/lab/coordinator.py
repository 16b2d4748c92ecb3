"""The labgrid coordinator, with LAVA's holds kept through its restart.

labgrid 26.0.1's coordinator drops every acquisition when it restarts (Coordinator.load:
"FIXME maybe recover previously acquired places here?"), LAVA's too: a person acquiring
in a loop had a board whose LAVA job still ran 1.6 s after the restart, before the
arbiter's next round. Started through this module, the coordinator loads its places and
then marks each place the arbiter held at its last round (its state file's round.held)
as acquired by LAVA's owner, before it serves anyone: there is no moment in which a
person can take a board LAVA had. The arbiter, back or never gone, finds its places
held as it left them; a board it gave back (released on stop) is not in the list.

`python -m boardlab.lab.coordinator -l HOST:PORT [--arbiter-state F]`: the other options
are labgrid-coordinator's."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from boardlab.facts.labfacts import ARBITER_STATE
from boardlab.lab.rules import LAVA_OWNER


def lava_held(state_file: Path) -> list[str]:
    """The places the arbiter held for LAVA at its last round ([] without a state file)."""
    try:
        held = json.loads(Path(state_file).read_text())["round"]["held"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [p for p in held if isinstance(p, str)] if isinstance(held, list) else []


def keep_lava_holds(coordinator_class, state_file: Path) -> None:
    """Coordinator.load, then LAVA's places acquired again as LAVA's owner."""
    load = coordinator_class.load

    def load_with_holds(self):
        load(self)
        for name in lava_held(state_file):
            place = self.places.get(name)
            if place is not None and not place.acquired:
                place.acquired = LAVA_OWNER
                place.touch()
                print(f"{name}: place acquired by {LAVA_OWNER} again (held at the arbiter's last round)",
                      flush=True)
    coordinator_class.load = load_with_holds


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    state = ARBITER_STATE
    if "--arbiter-state" in argv:
        i = argv.index("--arbiter-state")
        state = Path(argv[i + 1])
        del argv[i:i + 2]
    from labgrid.remote import coordinator
    keep_lava_holds(coordinator.Coordinator, state)
    sys.argv = ["labgrid-coordinator", *argv]
    return coordinator.main() or 0


if __name__ == "__main__":
    sys.exit(main())
