"""CPython's debug hooks (PYTHONMALLOC=debug and friends, -X dev).

Module: a late install under the hooks is refused with RuntimeError, whether
they are on top of the chain or beneath tracemalloc (started before the
install, by code or PYTHONTRACEMALLOC). Going over them cannot work: the copy
would serve the new blocks, so the hooks would check none of them (an
overflow no longer reported), and pymalloc beneath them allocates its large
blocks from RAW, i.e. from the copy, so the copy would be handed an interior
pointer of its own block and abort. Refused, the process goes on with the
hooks and all their checks. Every PYTHONMALLOC mode is run with tracemalloc
started before the install, after it, at startup and not at all.
Launcher: the hooks set up by the preinitialisation are put back on top of
the copy, so they still catch a buffer overflow in a block of the copy.
"""
import signal
import unittest

from support import check_ok, run

DEBUG_ALLOCATORS = ("debug", "malloc_debug", "pymalloc_debug")
DEBUG_SETTINGS = [({"PYTHONMALLOC": name}, ()) for name in DEBUG_ALLOCATORS] + \
                 [({}, ("-X", "dev"))]
PLAIN_SETTINGS = [({}, ())] + [({"PYTHONMALLOC": name}, ()) for name in ("malloc", "pymalloc")]
OVERFLOW = "import _testcapi; _testcapi.pymem_buffer_overflow()"
# When tracemalloc starts: (env, WHEN) - WHEN is read by PROGRAM.
TRACEMALLOC = [({}, "never"), ({}, "before"), ({}, "after"), ({"PYTHONTRACEMALLOC": "1"}, "startup")]

# The program: before the fix, with the hooks on top it died with
# "free(...): interior pointer"; with tracemalloc over them, install() was
# accepted and the program aborted the same way (debug, pymalloc_debug,
# -X dev) or lost the overflow report (malloc_debug).
PROGRAM = """
import nsalloc, tracemalloc
if WHEN == "before":
    tracemalloc.start()
early = [str(i) * 10 for i in range(1000)]
x = [1]
try:
    nsalloc.install()
    print("installed")
except RuntimeError as error:
    print(error)
if WHEN == "after":
    tracemalloc.start()
x.extend(range(1000))
del x
big = [bytes(100000) for i in range(50)]
print(nsalloc.installed(), nsalloc.stats()["copy"]["in_use_blocks"] > 0)
print(tracemalloc.is_tracing() == (WHEN != "never"),
      tracemalloc.get_object_traceback(early[-1]) is not None)
"""


def program(when, overflow):
    return f"WHEN = {when!r}\n" + PROGRAM + (OVERFLOW if overflow else "")


class ModuleUnderDebugHooksTest(unittest.TestCase):
    def test_late_install_is_refused_and_the_hooks_keep_checking(self):
        for env, args in DEBUG_SETTINGS:
            for tracemalloc_env, when in TRACEMALLOC:
                with self.subTest(env=env, args=args, tracemalloc=when):
                    result = run(program(when, True), env={**env, **tracemalloc_env}, args=args)
                    self.assertEqual(result.returncode, -signal.SIGABRT, result.stderr)
                    self.assertIn("bad trailing pad byte", result.stderr)
                    self.assertNotIn("nsalloc[", result.stderr)
                    lines = result.stdout.splitlines()
                    self.assertIn("debug hooks are installed", lines[0])
                    self.assertEqual(lines[1], "() False")
                    # Refused before tracemalloc was touched: its traces stay.
                    self.assertEqual(lines[2], f"True {when in ('before', 'startup')}")

    def test_install_accepted_without_the_hooks(self):
        # The detection does not mistake other allocators, or tracemalloc on
        # top of them, for the hooks.
        for env, args in PLAIN_SETTINGS:
            for tracemalloc_env, when in TRACEMALLOC:
                with self.subTest(env=env, tracemalloc=when):
                    out = check_ok(self, run(program(when, False), env={**env, **tracemalloc_env},
                                             args=args))
                    # An install restarts tracemalloc, dropping the traces
                    # taken before it.
                    self.assertEqual(out.splitlines(), [
                        "installed", "('raw', 'mem', 'obj') True",
                        "True False"])


class LauncherDebugHooksTest(unittest.TestCase):
    def test_hooks_on_top_of_the_copy_catch_an_overflow(self):
        for env, args in DEBUG_SETTINGS:
            with self.subTest(env=env, args=args):
                result = run(OVERFLOW, launcher=True, env=env, args=args)
                self.assertEqual(result.returncode, -signal.SIGABRT, result.stderr)
                self.assertIn("bad trailing pad byte", result.stderr)

    def test_objects_live_in_the_copy_under_the_hooks(self):
        result = run("""
import nsalloc, sys
objects = [object() for i in range(1000)]
assert all(nsalloc.owns(id(o)) for o in objects)
assert nsalloc.installed() == ("raw", "mem", "obj")
""", launcher=True, env={"PYTHONMALLOC": "debug", "NSALLOC_PYTHON_STATS": "1"})
        check_ok(self, result)
        self.assertIn("raw: forwarded frees 0, forwarded reallocs 0", result.stderr)

    def test_negative_control_plain_launcher_misses_the_overflow(self):
        # Without debug hooks the same overflow goes unnoticed: the check above
        # comes from the hooks the launcher re-installed, not from the copy.
        result = run(OVERFLOW, launcher=True)
        self.assertNotIn("bad trailing pad byte", result.stderr)


if __name__ == "__main__":
    unittest.main()
