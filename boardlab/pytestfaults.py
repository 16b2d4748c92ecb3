"""Who broke a suite's test, as pytest says it (a plugin that boardlab.pytestplugin
loads): a lab fault is an error, pytest's word for a test that could not run, with the
lab's part named; the kernel's fault stays a failure, said as the kernel's."""
import pytest

from boardlab.errors import KERNEL, LAB, fault_of


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if call.excinfo is None or not report.failed:
        return
    fault = fault_of(call.excinfo.value)
    if fault.party not in (LAB, KERNEL):
        return
    if fault.party == LAB and report.when == "call":
        # pytest's junit.xml and summary say error only of set-up and tear-down: a lab
        # fault in the test's body (the boot-time suite boots there) is said as set-up's
        report.when = "setup"
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:   # the line junit.xml and the short summary show
        crash.message = f"{fault.words()}: {fault.line}"
