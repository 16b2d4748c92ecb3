"""One board, two schedulers: the arbiter's rule (lab.arbiter.decide) in a small world
that behaves as the coordinator and LAVA's scheduler do (DESIGN.md 9.1, 9.2): the
coordinator allocates a free place to a waiting reservation and refuses to acquire a
place another owner holds or is allocated; LAVA's scheduler starts a queued job only on
an idle device whose health is Good or Unknown. Every step of every interleaving checks
that neither side has the board while the other does."""
import itertools

from boardlab.lab.arbiter import Seen, decide, parse_reservations, reservation_asks

OURS = "lava-arbiter/lava"


class World:
    def __init__(self):
        self.holder, self.reservation = None, None      # the place; one person's reservation
        self.health, self.job, self.queued = "Good", None, []
        self.aside = False
        self.ran, self.granted = [], []

    # the coordinator
    def coordinator(self):
        if self.reservation == "waiting" and self.holder is None:
            self.reservation = "allocated"

    def acquire(self, who):
        if self.holder is None and (self.reservation != "allocated" or who == "alice"):
            self.holder = who
            return True
        return False

    # LAVA's scheduler
    def scheduler(self):
        if self.job is None and self.queued and self.health in ("Good", "Unknown"):
            self.job = self.queued.pop(0)
            assert self.holder == OURS, f"LAVA started job {self.job} on a board held by {self.holder}"

    def arbiter(self):
        asked = self.reservation in ("waiting", "allocated")
        step = decide(Seen(self.holder, asked, self.health, self.job is not None, OURS, self.aside))
        if step == "acquire":
            self.acquire(OURS)
        elif step == "release":
            self.holder = None
        elif step == "maintenance":
            self.aside, self.health = True, "Maintenance"
        elif step == "restore":
            self.aside, self.health = False, "Good"
        return step

    # the people and the jobs
    def tick(self, event=None):
        if event == "submit":
            self.queued.append(len(self.ran) + len(self.queued) + (self.job is not None) + 1)
        elif event == "reserve":
            self.reservation = "waiting"
        elif event == "end job" and self.job is not None:
            self.ran.append(self.job)
            self.job = None
        elif event == "release" and self.holder == "alice":
            self.holder, self.reservation = None, None
        for actor in (self.coordinator, self.arbiter, self.scheduler):
            actor()
        if self.reservation == "allocated" and self.acquire("alice"):
            self.granted.append(len(self.ran))
        assert not (self.job is not None and self.holder != OURS), "a LAVA job without LAVA's place"


def settle(w, n=6):
    for _ in range(n):
        w.tick()


def test_a_job_submitted_while_a_person_holds_the_board_runs_after_the_release():
    w = World()
    settle(w)
    assert w.holder == OURS
    w.tick("reserve")
    settle(w)
    assert w.holder == "alice" and w.health == "Maintenance"
    w.tick("submit")
    settle(w)
    assert w.job is None and w.queued == [1]        # waits: not failed, not lost
    w.tick("release")
    settle(w)
    assert w.job == 1 and w.holder == OURS and w.health == "Good"


def test_a_reservation_made_during_a_job_is_granted_when_the_job_ends():
    w = World()
    settle(w)
    w.tick("submit")
    settle(w)
    assert w.job == 1
    w.tick("reserve")
    settle(w)
    assert w.job == 1 and w.holder == OURS and not w.granted   # the job goes on
    w.tick("end job")
    settle(w)
    assert w.holder == "alice" and w.granted == [1]


def test_no_interleaving_lets_both_have_the_board():
    """All 720 orders of two jobs and one person's hold (World.tick checks each step)."""
    for order in itertools.permutations(["submit", "reserve", "end job", "release", "submit", "end job"]):
        w = World()
        settle(w)
        for event in order:
            w.tick(event)
            w.tick()
        for _ in range(4):   # everyone finishes
            w.tick("end job")
            w.tick("release")
            settle(w)
        assert not w.queued and w.job is None and w.holder == OURS and w.health == "Good", order


def test_an_admins_maintenance_and_a_bad_board_are_left_alone():
    assert decide(Seen(OURS, False, "Maintenance", False, OURS, set_aside=False)) is None
    assert decide(Seen(None, False, "Bad", False, OURS)) is None             # people may have it
    assert decide(Seen(OURS, False, "Bad", False, OURS)) == "release"


def test_reservations_as_labgrid_client_lists_them():
    text = ("Reservation 'QDZJOR11YX':\n  owner: vm/alice\n  token: QDZJOR11YX\n  state: waiting\n"
            "  filters:\n    main: board=qemu-ppc\n  allocations:\n  created: 2026-11-26 08:57:46\n")
    rs = parse_reservations(text)
    assert rs == [{"token": "QDZJOR11YX", "owner": "vm/alice", "state": "waiting",
                   "filters": {"main": {"board": "qemu-ppc"}}, "allocations": {},
                   "created": "2026-11-26 08:57:46"}]
    assert reservation_asks(rs, {"board": "qemu-ppc", "arch": "ppc"}, "qemu-ppc", OURS)
    assert not reservation_asks(rs, {"board": "qemu-arm"}, "qemu-arm", OURS)
