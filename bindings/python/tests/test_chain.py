"""Two extension modules, each bundling its own copy, installed one after the
other: nsalloc_twin on top of nsalloc on top of pymalloc/libc. A block freed
or resized through the top travels down the chain to the copy (or allocator)
that made it. Negative control: a top copy that does not route hands the
lower copy's block to its own core, which aborts.
"""
import json
import signal
import unittest

from support import check_ok, run

SCENARIO = """
import json, nsalloc, nsalloc_twin
from pymem import Domain, fill, read
domains = [Domain(name) for name in ("raw", "mem", "obj")]
def make(tag):
    made = [(d, d.malloc(n), n) for d in domains for n in (8, 200, 5000, 400000)]
    return [(d, p, n, fill(p, n, tag)) for d, p, n in made]
before = make(1)                 # pymalloc and libc
nsalloc.install()
lower = make(2)                  # the lower copy
lower_objects = [[str(i)] * 10 for i in range(20000)]
nsalloc_twin.install(forward=FORWARD)
upper = make(3)                  # the top copy
def owner(p):
    return [nsalloc.owns(p), nsalloc_twin.owns(p)]
owners = {"before": [owner(p) for d, p, n, data in before],
          "lower": [owner(p) for d, p, n, data in lower],
          "upper": [owner(p) for d, p, n, data in upper]}
lower_in_use = nsalloc.stats()["copy"]["in_use_blocks"]
resized = []
for group in (before, lower, upper):
    for d, p, n, data in group:
        assert read(p, n) == data
        q = d.realloc(p, n + 64)        # through the top of the chain
        assert read(q, n) == data
        resized.append(owner(q) == owner(p))
        d.free(q)
del lower_objects
print(json.dumps({"owners": owners, "resized_in_place_owner": resized,
                  "lower_in_use_drop": lower_in_use - nsalloc.stats()["copy"]["in_use_blocks"],
                  "lower": nsalloc.stats(), "upper": nsalloc_twin.stats()}))
"""


class ChainTest(unittest.TestCase):
    def test_blocks_travel_the_chain_to_their_owner(self):
        result = json.loads(check_ok(self, run(SCENARIO.replace("FORWARD", "True"))))
        count = 12  # blocks per group: 3 domains x 4 sizes
        self.assertEqual(result["owners"]["before"], [[False, False]] * count)
        self.assertEqual(result["owners"]["lower"], [[True, False]] * count)
        self.assertEqual(result["owners"]["upper"], [[False, True]] * count)
        # A resized block stays with the allocator that made it.
        self.assertTrue(all(result["resized_in_place_owner"]))
        # The lower copy got its own blocks (and its objects') back.
        self.assertGreaterEqual(result["lower_in_use_drop"], count + 20000)
        upper, lower = result["upper"], result["lower"]
        for name in ("raw", "mem", "obj"):
            # Through the top: before- and lower-blocks are foreign to it...
            self.assertGreaterEqual(upper[name]["forwarded_frees"], 8, name)
            self.assertGreaterEqual(upper[name]["forwarded_reallocs"], 8, name)
            # ... and the lower copy passes only the before-blocks further down.
            self.assertGreaterEqual(lower[name]["forwarded_frees"], 4, name)
            self.assertGreaterEqual(lower[name]["forwarded_reallocs"], 4, name)
        for stats in (upper, lower):
            self.assertEqual(stats["copy"]["foreign_pointers"], stats["copy"]["forwarded"])
            self.assertEqual(stats["copy"]["invalid_pointers"], 0)

    def test_negative_control_unrouted_top_copy_aborts(self):
        result = run(SCENARIO.replace("FORWARD", "False"))
        self.assertEqual(result.returncode, -signal.SIGABRT, result.stdout + result.stderr)
        # The copy is named by prefix and module file.
        self.assertRegex(result.stderr, r"nsalloc\[nsalloc_twin_ in [^\]]*nsalloc_twin[^\]]*\]: ")
        self.assertIn("pointer not owned by this copy (foreign)", result.stderr)

    def test_reinstall_under_another_copy_raises(self):
        # nsalloc_twin wraps nsalloc (it does not replace it: nsalloc still
        # frees its own blocks), but new blocks come from the twin, so
        # nsalloc serves no domain any more and installing it again would put
        # a second set of its hooks on top: refused. The twin's own re-install
        # is a no-op.
        out = check_ok(self, run("""
import nsalloc, nsalloc_twin
nsalloc.install()
kept = [str(i) for i in range(10000)]
nsalloc_twin.install()
nsalloc_twin.install()
print(nsalloc.installed(), nsalloc_twin.installed())
try:
    nsalloc.install()
except RuntimeError as error:
    print(error)
assert nsalloc.owns(id(kept[-1]))
del kept
print(nsalloc.stats()["copy"]["invalid_pointers"], nsalloc_twin.stats()["obj"]["forwarded_frees"] > 0)
"""))
        lines = out.splitlines()
        self.assertEqual(lines[0], "() ('raw', 'mem', 'obj')")
        self.assertIn("another allocator now serves it (it wrapped the copy", lines[1])
        self.assertEqual(lines[2], "0 True")

    def test_module_copy_on_top_of_the_launcher_copy(self):
        out = check_ok(self, run("""
import nsalloc, nsalloc_twin
from pymem import Domain, fill, read
obj = Domain("obj")
lower = [obj.malloc(n) for n in range(1, 3000, 7)]
lower_list = [str(i) for i in range(50000)]
nsalloc_twin.install()
assert all(nsalloc.owns(p) and not nsalloc_twin.owns(p) for p in lower)
for p in lower:
    obj.free(p)
lower_list.extend(range(100000))  # resized through the top, stays in the launcher's copy
assert nsalloc.owns(id(lower_list)) and nsalloc_twin.owns(id(object()))
del lower_list
print(nsalloc_twin.stats()["obj"]["forwarded_frees"])
""", launcher=True))
        self.assertGreaterEqual(int(out), 428)


if __name__ == "__main__":
    unittest.main()
