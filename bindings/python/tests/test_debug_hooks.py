"""CPython's debug hooks (PYTHONMALLOC=debug and friends, -X dev).

Module: installed under the hooks, the copy wraps them; the blocks they made
before go back through them (their checks pass), new blocks are the copy's.
Launcher: the hooks set up by the preinitialisation are put back on top of
the copy, so they still catch a buffer overflow in a block of the copy.
"""
import signal
import unittest

from support import check_ok, run

DEBUG_ALLOCATORS = ("debug", "malloc_debug", "pymalloc_debug")


class ModuleUnderDebugHooksTest(unittest.TestCase):
    def test_late_install_under_each_debug_allocator(self):
        for allocator in DEBUG_ALLOCATORS:
            with self.subTest(PYTHONMALLOC=allocator):
                out = check_ok(self, run("""
import nsalloc
from pymem import Domain, fill, read
domains = [Domain(name) for name in ("raw", "mem", "obj")]
old = [(d, d.malloc(n), n) for d in domains for n in (1, 64, 5000)]
old_objects = [str(i) * 3 for i in range(20000)]
nsalloc.install()
new_objects = [{"k": str(i)} for i in range(20000)]
assert nsalloc.owns(id(new_objects[-1]))
for d, p, n in old:
    d.free(d.realloc(p, n * 3))     # through the copy to the debug hooks
del old_objects, new_objects
stats = nsalloc.stats()
print(min(stats[name]["forwarded_frees"] for name in ("raw", "mem", "obj")))
""", env={"PYTHONMALLOC": allocator}))
                self.assertGreaterEqual(int(out), 3)


class LauncherDebugHooksTest(unittest.TestCase):
    OVERFLOW = "import _testcapi; _testcapi.pymem_buffer_overflow()"

    def test_hooks_on_top_of_the_copy_catch_an_overflow(self):
        for env, args in [({"PYTHONMALLOC": name}, ()) for name in DEBUG_ALLOCATORS] + \
                         [({}, ("-X", "dev"))]:
            with self.subTest(env=env, args=args):
                result = run(self.OVERFLOW, launcher=True, env=env, args=args)
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
        result = run(self.OVERFLOW, launcher=True)
        self.assertNotIn("bad trailing pad byte", result.stderr)


if __name__ == "__main__":
    unittest.main()
