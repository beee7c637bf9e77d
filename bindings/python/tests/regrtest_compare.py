"""Run CPython's own regression tests three ways - under the plain interpreter,
under nsalloc-python, and under the plain interpreter with the module
installed while it starts (late_install/sitecustomize.py) - and compare the
outcome of every test case with the plain run.

    regrtest_compare.py TEST [TEST ...]      (e.g. test_dict test_capi)

Passes when every run reports the same set of failing test cases as the plain
one (a case that fails identically under all is listed) and the same number
of cases. The only cases allowed to differ are the EXPECTED_DIFFERENCES
below: they assert that pymalloc is the allocator.
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

from support import LAUNCHER, MODULES_DIR, TESTS_DIR, child_env

# CPython's own per-module limit, then ours for the three runs together. A
# module that takes 30 s alone (test_subprocess: some 300 child interpreters)
# took over 300 s with the three runs side by side on a 2-core machine busy
# with the rest of the suite; a hang still ends in a failure, just later.
REGRTEST_TIMEOUT = 900
TIMEOUT = 1000
SKIPPED = 77  # the ctest SKIP_RETURN_CODE

BASELINE = "python3"
# label: (interpreter, extra environment)
RUNS = {
    BASELINE: (sys.executable, {}),
    "nsalloc-python": (LAUNCHER, {}),
    "late install": (sys.executable, {"PYTHONPATH": os.pathsep.join(
        [os.path.join(TESTS_DIR, "late_install"), MODULES_DIR, TESTS_DIR])}),
}
# Per run, the cases that check pymalloc itself, which the copy replaces on
# purpose.
EXPECTED_DIFFERENCES = {
    "nsalloc-python": {
        "test.test_sys.SysModuleTest.test_debugmallocstats":
            "sys._debugmallocstats() prints pymalloc's arenas ('Small block threshold')",
        "test.test_sys.SysModuleTest.test_getallocatedblocks":
            "sys.getallocatedblocks() counts pymalloc's blocks: 0 when pymalloc is unused",
    },
    "late install": {},
}


def start(run, tests, report):
    interpreter, extra = RUNS[run]
    command = [interpreter, "-m", "test", "--timeout", str(REGRTEST_TIMEOUT), "--junit-xml", report, *tests]
    return subprocess.Popen(command, env=child_env(extra), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def outcomes(report):
    """{test case id: "passed" | "failed" | "skipped"} from a JUnit report."""
    result = {}
    for case in ElementTree.parse(report).iter("testcase"):
        name = ".".join(filter(None, (case.get("classname"), case.get("name"))))
        if case.find("failure") is not None or case.find("error") is not None:
            result[name] = "failed"
        elif case.find("skipped") is not None:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def summary(label, result):
    failed = sum(1 for state in result.values() if state == "failed")
    skipped = sum(1 for state in result.values() if state == "skipped")
    return f"{label}: {len(result)} cases, {failed} failed, {skipped} skipped"


def main(tests):
    missing = [test for test in tests
               if importlib.util.find_spec("test." + test.split(".")[0]) is None]
    if missing:  # e.g. Debian's libpython3.11-testsuite does not ship test_capi
        print(f"skipped: not installed for {sys.executable}: {', '.join(missing)}")
        return SKIPPED
    interpreter, extra = RUNS["late install"]
    check = subprocess.run([interpreter, "-c", "import nsalloc; print(nsalloc.installed())"],
                           env=child_env(extra), capture_output=True, text=True)
    if check.stdout.strip() != "('raw', 'mem', 'obj')":
        print(f"FAIL: the late-install run does not install the copy: {check}")
        return 1
    with tempfile.TemporaryDirectory() as directory:
        reports = {run: os.path.join(directory, run.replace(" ", "_") + ".xml") for run in RUNS}
        processes = {run: start(run, tests, reports[run]) for run in RUNS}
        logs = {run: process.communicate(timeout=TIMEOUT)[0]
                for run, process in processes.items()}
        if not all(os.path.exists(report) for report in reports.values()):
            for run, log in logs.items():
                print(f"---- {run} ----\n{log}")
            print("FAIL: a run produced no report")
            return 1
        results = {run: outcomes(report) for run, report in reports.items()}
    for run, result in results.items():
        print(summary(run, result))
    failing = {run: {case for case, state in result.items() if state == "failed"}
               for run, result in results.items()}
    for case in sorted(set.intersection(*failing.values())):
        print(f"fails identically under every run: {case}")
    differ = False
    for run in EXPECTED_DIFFERENCES:
        expected = EXPECTED_DIFFERENCES[run]
        for case in sorted(failing[run] & expected.keys()):
            print(f"fails under {run} as expected: {case}: {expected[case]}")
        ours = failing[run] - expected.keys()
        for case in sorted(ours - failing[BASELINE]):
            print(f"FAILS ONLY under {run}: {case}")
        for case in sorted(failing[BASELINE] - ours - expected.keys()):
            print(f"fails only under {BASELINE}, not under {run}: {case}")
        if ours != failing[BASELINE] - expected.keys() or not results[run] or \
                len(results[run]) != len(results[BASELINE]):
            print(f"---- {run} ----\n{logs[run]}")
            differ = True
    if differ:
        print("FAIL: the runs differ")
        return 1
    print("same outcome under every run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
