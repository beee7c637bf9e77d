"""tracemalloc with the copy: started before install (install re-stacks it on
top of the copy), started after install, and from the command line of the
launcher. Each time it must trace new allocations, and stopping it (also at
exit) must leave the copy in place.
"""
import unittest

from support import check_ok, run

TRACE_AND_STOP = """
import tracemalloc
def traced_bytes():
    snapshot = tracemalloc.take_snapshot()
    return sum(stat.size for stat in snapshot.statistics("filename"))
assert tracemalloc.is_tracing()
baseline = traced_bytes()
data = [str(i) * 10 for i in range(50000)]
grown = traced_bytes() - baseline
assert grown > 1_000_000, grown
assert nsalloc.owns(id(data[-1]))
tracemalloc.stop()
assert nsalloc.installed() == ("raw", "mem", "obj")
more = [str(i) * 10 for i in range(50000)]   # the copy again, under no tracer
assert nsalloc.owns(id(more[-1]))
del data, more
print("ok")
"""


class TracemallocTest(unittest.TestCase):
    def test_started_before_install(self):
        out = check_ok(self, run("""
import tracemalloc, nsalloc
tracemalloc.start(5)
early = [str(i) * 10 for i in range(20000)]   # traced, by pymalloc
nsalloc.install()
assert tracemalloc.get_traceback_limit() == 5
del early                                     # forwarded through the copy
""" + TRACE_AND_STOP))
        self.assertEqual(out.strip(), "ok")

    def test_refused_install_keeps_the_traces(self):
        # install() restarts tracemalloc, which drops its traces: a call that
        # refuses (or has nothing to do) must not get that far.
        out = check_ok(self, run("""
import tracemalloc, nsalloc
tracemalloc.start()
nsalloc.install(("raw",))
early = [str(i) * 10 for i in range(1000)]
for args, kwargs in (((("mem",),), {"forward": False}), ((("raw",),), {})):
    try:
        nsalloc.install(*args, **kwargs)
    except RuntimeError as error:
        print(error)
    print(tracemalloc.get_object_traceback(early[-1]) is not None)
"""))
        self.assertEqual(out.splitlines(), [
            "nsalloc.install: forward= must be the same for every install of a copy",
            "True", "True"])

    def test_started_after_install(self):
        out = check_ok(self, run("""
import tracemalloc, nsalloc
nsalloc.install()
tracemalloc.start()
""" + TRACE_AND_STOP))
        self.assertEqual(out.strip(), "ok")

    def test_launcher_with_tracemalloc_from_the_start(self):
        for args, env in (((("-X", "tracemalloc=3")), {}), ((), {"PYTHONTRACEMALLOC": "1"})):
            with self.subTest(args=args, env=env):
                out = check_ok(self, run("import nsalloc\n" + TRACE_AND_STOP, launcher=True,
                                         args=args, env=env))
                self.assertEqual(out.strip(), "ok")


if __name__ == "__main__":
    unittest.main()
