"""LAVA, from the same board facts and baselines as the labgrid side, in parts:

- files:   where LAVA's files are (jobs/, LAVA's own) and the names of what is generated
- suites:  the suites and their test definitions; whose baselines judge (HARNESS)
- limits:  LAVA's own limits that shape a job and a device type
- errors:  LavaError, LavaInputError
- devices: device types and device dictionaries generated from the facts (`boardlab gen`)
- jobs:    job definitions per board, kernel, root and suites (their output judged off the board)
- schema:  LAVA's own schema checks of what was rendered
- logs:    a job log to results.json (boot milestones timed from LAVA's own log)
- run:     lava-run on this host, after checks that name what is missing
- server:  a LAVA server through lavacli: submit, wait, the schedule
- cli:     `boardlab lava VERB`

The names below are the package's interface; the modules are where they are made."""
from .errors import LavaError, LavaFault, LavaInputError
from .files import SCHEDULE, device_type_name
from .limits import BOOT_ATTEMPTS, LAVA_SEARCH_WINDOW, SPAWN_MAXREAD
from .suites import DEFAULT_SUITES, HARNESS, SUITES
from .devices import (connection_command, device_dictionary, device_type_template,
                      generated_files, power_commands, render_device)
from .jobs import (check_request, dump_job, expected_cases, expected_of,
                   normalise_suites, render_job, settings_of, testdefs_tarball)
from .logs import (boot_milestones, console_lines, job_failure, last_attempt, last_wait, read_log,
                   results_from_log, retried_attempts, test_cases)
from .run import (board_of_job, check_board_reachable, check_nfs_export, check_tftp_root,
                  dispatcher_config, lab_of, lava_run, prepare_run)
from .schema import validate
from .server import (cron_lines, lavacli, load_schedule, schedule_jobs, systemd_units,
                     wait_for_job)

__all__ = [
    "BOOT_ATTEMPTS", "DEFAULT_SUITES", "HARNESS", "LAVA_SEARCH_WINDOW", "SCHEDULE", "SUITES",
    "SPAWN_MAXREAD", "LavaError", "LavaFault", "LavaInputError", "device_type_name",
    "connection_command", "device_dictionary", "device_type_template", "generated_files",
    "power_commands", "render_device",
    "check_request", "dump_job", "expected_cases", "expected_of", "normalise_suites", "render_job", "settings_of", "testdefs_tarball",
    "boot_milestones", "console_lines", "job_failure", "last_attempt", "last_wait", "read_log",
    "results_from_log", "retried_attempts", "test_cases",
    "board_of_job", "check_board_reachable", "check_nfs_export", "check_tftp_root",
    "dispatcher_config", "lab_of", "lava_run", "prepare_run",
    "validate",
    "cron_lines", "lavacli", "load_schedule", "schedule_jobs", "systemd_units", "wait_for_job",
]
