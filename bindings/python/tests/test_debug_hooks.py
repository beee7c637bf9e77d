"""CPython's debug hooks (PYTHONMALLOC=debug and friends, -X dev).

Module: a late install under the hooks is refused with RuntimeError. Going
under them cannot work: they hand out block + 2 words, and pymalloc beneath
them allocates its large blocks from RAW, i.e. from the copy, so the copy
would be handed an interior pointer of its own block and abort. Refused, the
process goes on with the hooks and all their checks.
Launcher: the hooks set up by the preinitialisation are put back on top of
the copy, so they still catch a buffer overflow in a block of the copy.
"""
import signal
import unittest

from support import check_ok, run

DEBUG_ALLOCATORS = ("debug", "malloc_debug", "pymalloc_debug")
DEBUG_SETTINGS = [({"PYTHONMALLOC": name}, ()) for name in DEBUG_ALLOCATORS] + \
                 [({}, ("-X", "dev"))]
OVERFLOW = "import _testcapi; _testcapi.pymem_buffer_overflow()"


class ModuleUnderDebugHooksTest(unittest.TestCase):
    def test_late_install_is_refused_and_the_hooks_keep_checking(self):
        for env, args in DEBUG_SETTINGS:
            with self.subTest(env=env, args=args):
                # The program: before the fix it died with
                # "free(...): interior pointer".
                result = run("""
import nsalloc
x = [1]
try:
    nsalloc.install()
except RuntimeError as error:
    print(error)
x.extend(range(1000))
del x
big = [bytes(100000) for i in range(50)]
print(nsalloc.installed(), nsalloc.stats()["copy"]["in_use_blocks"])
""" + OVERFLOW, env=env, args=args)
                self.assertEqual(result.returncode, -signal.SIGABRT, result.stderr)
                self.assertIn("bad trailing pad byte", result.stderr)
                self.assertNotIn("nsalloc[", result.stderr)
                lines = result.stdout.splitlines()
                self.assertIn("debug hooks are installed", lines[0])
                self.assertEqual(lines[1], "() 0")

    def test_install_accepted_without_the_hooks(self):
        # The detection does not mistake other allocators for the hooks.
        for allocator in ("pymalloc", "malloc"):
            with self.subTest(PYTHONMALLOC=allocator):
                out = check_ok(self, run("import nsalloc; nsalloc.install(); "
                                         "print(nsalloc.installed())",
                                         env={"PYTHONMALLOC": allocator}))
                self.assertEqual(out.strip(), "('raw', 'mem', 'obj')")


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
