"""Run CPython's own regression tests under nsalloc-python and under the plain
interpreter it embeds, and compare the outcome of every test case.

    regrtest_compare.py TEST [TEST ...]      (e.g. test_dict test_capi)

Passes when both runs report the same set of failing test cases (a case that
fails identically under both, e.g. because of the machine, is listed) and the
launcher run produced results at all. The only cases allowed to differ are
the EXPECTED_DIFFERENCES below: they assert that pymalloc is the allocator.
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

from support import LAUNCHER, child_env

TIMEOUT = 600
SKIPPED = 77  # the ctest SKIP_RETURN_CODE

# Cases that check pymalloc itself, which nsalloc-python replaces on purpose.
EXPECTED_DIFFERENCES = {
    "test.test_sys.SysModuleTest.test_debugmallocstats":
        "sys._debugmallocstats() prints pymalloc's arenas ('Small block threshold')",
    "test.test_sys.SysModuleTest.test_getallocatedblocks":
        "sys.getallocatedblocks() counts pymalloc's blocks: 0 when pymalloc is unused",
}


def start(interpreter, tests, report):
    command = [interpreter, "-m", "test", "--timeout", "300", "--junit-xml", report, *tests]
    return subprocess.Popen(command, env=child_env(), stdout=subprocess.PIPE,
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
    missing = [test for test in tests if importlib.util.find_spec("test." + test) is None]
    if missing:  # e.g. Debian's libpython3.11-testsuite does not ship test_capi
        print(f"skipped: not installed for {sys.executable}: {', '.join(missing)}")
        return SKIPPED
    runs = {"python3": sys.executable, "nsalloc-python": LAUNCHER}
    with tempfile.TemporaryDirectory() as directory:
        reports = {label: os.path.join(directory, label + ".xml") for label in runs}
        processes = {label: start(interpreter, tests, reports[label])
                     for label, interpreter in runs.items()}
        logs = {label: process.communicate(timeout=TIMEOUT)[0]
                for label, process in processes.items()}
        if not all(os.path.exists(report) for report in reports.values()):
            for label, log in logs.items():
                print(f"---- {label} ----\n{log}")
            print("FAIL: a run produced no report")
            return 1
        results = {label: outcomes(report) for label, report in reports.items()}
    plain, ours = results["python3"], results["nsalloc-python"]
    for label, result in results.items():
        print(summary(label, result))
    failing = {label: {case for case, state in result.items() if state == "failed"}
               for label, result in results.items()}
    for case in sorted(failing["python3"] & failing["nsalloc-python"]):
        print(f"fails identically under both interpreters: {case}")
    for case in sorted(failing["nsalloc-python"] & EXPECTED_DIFFERENCES.keys()):
        print(f"fails under nsalloc-python as expected: {case}: {EXPECTED_DIFFERENCES[case]}")
    failing["nsalloc-python"] -= EXPECTED_DIFFERENCES.keys()
    only_ours = sorted(failing["nsalloc-python"] - failing["python3"])
    only_plain = sorted(failing["python3"] - failing["nsalloc-python"])
    for case in only_ours:
        print(f"FAILS ONLY under nsalloc-python: {case}")
    for case in only_plain:
        print(f"fails only under python3: {case}")
    if only_ours or only_plain or not ours or len(ours) != len(plain):
        print(logs["nsalloc-python"])
        print("FAIL: the runs differ")
        return 1
    print("same outcome under both interpreters")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
