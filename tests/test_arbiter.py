"""One board, two schedulers: the arbiter's rule (lab.rules.decide) in a small world
that behaves as the coordinator and LAVA's scheduler do (DESIGN.md 9.1, 9.2): the
coordinator allocates a free place to a waiting reservation and refuses to acquire a
place another owner holds or is allocated; LAVA's scheduler runs a health check on an
Unknown device first and starts a queued job only on an idle device whose health is
Good or Unknown. Every step of every interleaving checks that neither side has the board
while the other does."""
import itertools

from boardlab.lab import rules
from boardlab.lab.rules import Seen, decide

OURS = rules.LAVA_OWNER


class World:
    def __init__(self):
        self.holder, self.reservation = None, None      # the place; one person's reservation
        self.health, self.job, self.queued = "Good", None, []
        self.entry = None                                 # what the arbiter set aside
        self.ran, self.granted, self.checks = [], [], 0

    # the coordinator
    def coordinator(self):
        if self.reservation == "waiting" and self.holder is None:
            self.reservation = "allocated"

    def acquire(self, who):
        if self.holder is None and (self.reservation != "allocated" or who == "alice"):
            self.holder = who
            return True
        return False

    # LAVA's scheduler: a health check first on an Unknown device (done in one tick)
    def scheduler(self):
        if self.job == "check":
            self.job, self.health, self.checks = None, "Good", self.checks + 1
        if self.job is None and self.health == "Unknown":
            self.job = "check"
        elif self.job is None and self.queued and self.health == "Good":
            self.job = self.queued.pop(0)
        if self.job is not None:
            assert self.holder == OURS, f"LAVA started job {self.job} on a board held by {self.holder}"

    def arbiter(self):
        asked = self.reservation in ("waiting", "allocated")
        seen = Seen(self.holder, asked, self.health, self.job is not None, OURS, self.entry is not None,
                    checking=self.job == "check", by_name=asked)     # the person names the board
        self.entry = rules.observe(self.entry, seen)
        step = decide(seen)
        if step == "acquire":
            self.acquire(OURS)
        elif step == "release":
            self.holder = None
            self.entry = self.entry and {**self.entry, "touched": True}
        elif step == "maintenance":
            self.entry, self.health = rules.aside_entry(self.health), "Maintenance"
        elif step == "restore":
            self.health, self.entry = rules.health_after(self.entry), None
        assert step != "cancel", "an overlap in the model"
        return step

    # the people and the jobs
    def tick(self, event=None):
        if event == "submit":
            self.queued.append(len(self.ran) + len(self.queued) + (self.job not in (None, "check")) + 1)
        elif event == "reserve":
            self.reservation = "waiting"
        elif event == "end job" and self.job not in (None, "check"):
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


def test_a_job_submitted_while_a_person_holds_the_board_runs_after_a_health_check():
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
    assert w.checks == 1 and w.job == 1 and w.holder == OURS and w.health == "Good"


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
        assert w.checks == (1 if w.granted else 0), order    # checked after a person's hold only


def test_a_reservation_that_expired_unused_gives_the_health_back_as_it_was():
    w = World()
    settle(w)
    w.tick("reserve")
    assert w.health == "Maintenance" and w.holder == OURS
    w.reservation = None   # expired before the coordinator allocated it: nobody acquired
    settle(w)
    assert w.health == "Good" and w.checks == 0


def test_no_maintenance_while_a_health_check_runs():
    checking = Seen(OURS, True, "Unknown", True, OURS, checking=True)
    assert decide(checking) is None          # the person waits: the check's result is kept
    assert decide(Seen(OURS, True, "Good", True, OURS)) == "maintenance"   # a job: it goes on


def test_an_admins_maintenance_and_retired_and_a_bad_board_are_left_alone():
    assert decide(Seen(OURS, False, "Maintenance", False, OURS, set_aside=False)) is None
    assert decide(Seen("vm/bob", False, "Maintenance", False, OURS)) is None
    # a Bad board is kept from reservations by tags (arch=arm got one), given to one naming it
    assert decide(Seen(None, False, "Bad", False, OURS)) == "acquire"
    assert decide(Seen(OURS, False, "Bad", False, OURS)) is None
    assert decide(Seen(OURS, True, "Bad", False, OURS, by_name=True)) == "release"
    assert decide(Seen("vm/bob", True, "Bad", False, OURS, by_name=True)) is None
    assert decide(Seen(OURS, False, "Retired", False, OURS)) == "release"
    assert decide(Seen("vm/bob", True, "Retired", False, OURS)) is None


def test_a_maintenance_someone_else_changed_is_theirs():
    """An admin sets Retired (or Good) over the arbiter's Maintenance: forgotten, not
    restored over theirs."""
    for health in ("Retired", "Good", "Bad"):
        assert decide(Seen("vm/alice", False, health, False, OURS, set_aside=True)) == "forget"


def test_health_comes_back_unknown_once_anything_happened():
    entry = rules.aside_entry("Good")
    assert rules.health_after(entry) == "Good"                         # nobody acquired it
    held = rules.observe(entry, Seen("vm/alice", False, "Maintenance", False, OURS, True))
    assert rules.health_after(held) == "Unknown"
    assert rules.observe(entry, Seen(OURS, False, "Maintenance", False, OURS, True)) == entry
    assert rules.health_after(rules.aside_entry("Unknown")) == "Unknown"
    assert rules.health_after(rules.aside_entry("Looping", touched=True)) == "Looping"
    assert rules.health_after(rules.aside_entry("")) == "Unknown"


def test_an_overlap_is_ended_by_cancelling_the_lava_job():
    """A person holds the place while LAVA runs on it (the coordinator restarted and they
    took the free place; an admin set the board Good during their hold): never None."""
    for health in ("Good", "Unknown", "Maintenance", "Looping", "Bad"):
        assert decide(Seen("vm/alice", False, health, True, OURS)) == "cancel", health
    assert rules.overlaps({"a": {"acquired": "vm/alice"}, "b": {"acquired": OURS}, "c": {"acquired": None}},
                          {"a": {"current_job": 7}, "b": {"current_job": 8}, "c": {"current_job": 9}}) == [
        {"board": "a", "holder": "vm/alice", "job": 7}]


def test_after_a_coordinator_restart_lava_retakes_only_what_nobody_holds():
    """Every acquisition dropped: a running job's place is taken back at once, even with a
    reservation waiting (it would be granted when the job ends); a person's is not."""
    assert decide(Seen(None, False, "Good", True, OURS)) == "acquire"
    assert decide(Seen(None, True, "Good", True, OURS)) == "acquire"
    assert decide(Seen(None, False, "Good", False, OURS)) == "acquire"
    assert decide(Seen("vm/alice", False, "Good", False, OURS)) == "maintenance"
    # the arbiter's own Maintenance of a hold the restart dropped: re-taken, then Unknown
    assert decide(Seen(None, False, "Maintenance", False, OURS, set_aside=True)) == "acquire"
    assert decide(Seen(OURS, False, "Maintenance", False, OURS, set_aside=True)) == "restore"


def test_a_failed_job_sets_its_board_unknown_whoever_submitted_it():
    failed = {"state": "Finished", "health": "Incomplete", "health_check": False, "submitter": "someone"}
    assert rules.after_job(failed, "Good", False) == "unknown"
    assert rules.after_job({**failed, "health": "Canceled"}, "Good", False) == "unknown"
    assert rules.after_job(failed, "Maintenance", True) == "touched"     # comes back Unknown
    assert rules.after_job(failed, "Maintenance", False) is None         # an admin's
    assert rules.after_job(failed, "Bad", False) is None
    assert rules.after_job({**failed, "health_check": True}, "Good", False) is None
    assert rules.after_job({**failed, "health": "Complete"}, "Good", False) is None
    assert rules.after_job({**failed, "state": "Canceling"}, "Good", False) is None


def test_a_state_file_left_by_a_killed_arbiter():
    """SIGKILLed mid-hold: the entries it left are read back as they were written (before
    LAVA was told); an older file's format is read as touched (what happened is not known)."""
    text = ('{"aside": {"a": {"before": "Good", "touched": true}, "b": {"before": "Good", "touched": false}},'
            ' "jobs": {"c": 12}, "round": {"at": 1, "pid": 99999999}}')
    state = rules.load_state(text)
    assert rules.health_after(state["aside"]["a"]) == "Unknown"
    assert rules.health_after(state["aside"]["b"]) == "Good"
    assert state["jobs"] == {"c": 12} and state["overlaps"] == []
    old = rules.load_state('{"qemu-arm": "Good"}')
    assert rules.health_after(old["aside"]["qemu-arm"]) == "Unknown"
    assert rules.load_state(None) == rules.load_state("") == {"aside": {}, "jobs": {}, "overlaps": []}


def test_holds_past_the_labs_limit():
    now = 1_000_000.0
    assert rules.overdue({"acquired": "vm/alice", "changed": now - 25 * 3600}, now, 24) == 25
    assert rules.overdue({"acquired": "vm/alice", "changed": now - 3600}, now, 24) is None
    assert rules.overdue({"acquired": OURS, "changed": now - 99 * 3600}, now, 24) is None
    assert rules.overdue({"acquired": None, "changed": 0}, now, 24) is None
