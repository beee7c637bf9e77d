"""Allocation failures injected on top of the copy (_testcapi.set_nomemory,
CPython's own failure-injection hooks, which wrap the installed allocator and
are removed again from the top of the chain): the interpreter raises
MemoryError, recovers, and the copy stays installed.
"""
import unittest

from support import check_ok, run

# After CPython's test_capi.test_set_nomemory: allocations from the start-th
# on fail (the third round: only the start-th).
INJECT = """
import _testcapi, nsalloc
class C:
    pass
for round_ in range(1, 4):
    start = 10 * round_
    for attempt in range(100):
        if attempt == 0:
            _testcapi.set_nomemory(start, start + 1 if round_ == 3 else 0)
        try:
            C()
        except MemoryError:
            _testcapi.remove_mem_hooks()
            print("MemoryError", round_)
            break
    else:
        _testcapi.remove_mem_hooks()
        print("no failure", round_)
survivors = [str(i) * 4 for i in range(100000)]
print(nsalloc.installed(), nsalloc.owns(id(survivors[-1])))
"""


class FailureInjectionTest(unittest.TestCase):
    EXPECTED = ["MemoryError 1", "MemoryError 2", "MemoryError 3", "('raw', 'mem', 'obj') True"]

    def test_module(self):
        out = check_ok(self, run("import nsalloc; nsalloc.install()\n" + INJECT))
        self.assertEqual(out.splitlines(), self.EXPECTED)

    def test_launcher(self):
        out = check_ok(self, run(INJECT, launcher=True))
        self.assertEqual(out.splitlines(), self.EXPECTED)


if __name__ == "__main__":
    unittest.main()
