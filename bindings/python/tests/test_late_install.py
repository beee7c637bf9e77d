"""Install after Python is running: blocks and objects from before the install
(pymalloc's, libc's) are freed and resized through the copy's hooks, which
hand them to each domain's previous allocator. Negative control: with the
routing off (install(forward=False)) such a block reaches the copy, whose
foreign policy aborts the process.
"""
import json
import signal
import unittest

from support import check_ok, run

# Before install: raw/mem/obj blocks with known contents, and objects whose
# memory is later freed or grown (list items arrays grow with PyMem_Realloc).
PROLOGUE = """
import json, nsalloc
from pymem import Domain, fill, read
domains = [Domain(name) for name in ("raw", "mem", "obj")]
blocks = [(d, d.malloc(n), n) for d in domains for n in (1, 8, 100, 3000, 300000)]
contents = [fill(p, n, n & 0xFF) for d, p, n in blocks]
objects = [{"k%d" % i: [i] * i for i in range(50)}, list(range(1000)), "s" * 5000,
           bytearray(70000), [str(i) for i in range(2000)]]
"""


class LateInstallTest(unittest.TestCase):
    def test_blocks_from_before_install_go_back_to_their_allocator(self):
        out = check_ok(self, run(PROLOGUE + """
nsalloc.install()
assert not any(nsalloc.owns(p) for d, p, n in blocks)
fresh = [[str(i)] * 10 for i in range(10000)]
for (d, p, n), data in zip(blocks, contents):
    assert read(p, n) == data
    q = d.realloc(p, 2 * n)             # forwarded: stays with its allocator
    assert not nsalloc.owns(q) and read(q, n) == data
    d.free(q)                           # forwarded
objects[1].extend(range(100000))        # grows a pre-install items array
objects[4] += [str(i) for i in range(100000)]
del objects, fresh
print(json.dumps(nsalloc.stats()))
"""))
        stats = json.loads(out)
        for name in ("raw", "mem", "obj"):
            self.assertGreaterEqual(stats[name]["forwarded_frees"], 5, name)
            self.assertGreaterEqual(stats[name]["forwarded_reallocs"], 5, name)
        # Every foreign pointer the core met went to a domain's previous allocator.
        forwarded = sum(stats[name][kind] for name in ("raw", "mem", "obj")
                        for kind in ("forwarded_frees", "forwarded_reallocs"))
        self.assertEqual(stats["copy"]["foreign_pointers"], forwarded)
        self.assertEqual(stats["copy"]["forwarded"], forwarded)
        self.assertEqual(stats["copy"]["invalid_pointers"], 0)

    def test_install_arguments(self):
        out = check_ok(self, run("""
import nsalloc
for bad in (("bogus",), "rawr", [1], 5):
    try:
        nsalloc.install(bad)
    except (ValueError, TypeError) as error:
        print(type(error).__name__, error)
nsalloc.install("raw")                  # one name, not its letters
print(nsalloc.installed())
try:
    nsalloc.install(("obj",), forward=False)
except RuntimeError as error:
    print(error)
nsalloc.install(["raw", "obj"])         # raw already there: only obj is added
nsalloc.install()
nsalloc.install()                       # idempotent
print(nsalloc.installed())
"""))
        self.assertEqual(out.splitlines(), [
            "ValueError unknown allocator domain 'bogus' (expected 'raw', 'mem' or 'obj')",
            "ValueError unknown allocator domain 'rawr' (expected 'raw', 'mem' or 'obj')",
            "ValueError unknown allocator domain 1 (expected 'raw', 'mem' or 'obj')",
            "TypeError domains must be a domain name or a sequence of them",
            "('raw',)",
            "nsalloc.install: forward= must be the same for every install of a copy",
            "('raw', 'mem', 'obj')"])

    def test_install_in_every_subinterpreter(self):
        # A sitecustomize calling install() runs again in each subinterpreter,
        # which shares the process's allocators: a no-op there.
        out = check_ok(self, run("""
import _xxsubinterpreters as interpreters, nsalloc
nsalloc.install()
code = "import nsalloc; nsalloc.install(); assert nsalloc.installed() == ('raw', 'mem', 'obj')"
for i in range(3):
    interp = interpreters.create()
    interpreters.run_string(interp, code)
    interpreters.destroy(interp)
print(nsalloc.installed())
"""))
        self.assertEqual(out.strip(), "('raw', 'mem', 'obj')")

    def test_installed_drops_a_replaced_domain(self):
        # Another allocator set on top without wrapping (the previous
        # allocator taken back from under the copy): installed() no longer
        # lists that domain, and installing there again is refused.
        out = check_ok(self, run("""
import ctypes, nsalloc
from pymem import DOMAIN_IDS, PyMemAllocatorEx, top
before = top("raw")
nsalloc.install()
after = top("raw")
ctypes.pythonapi.PyMem_SetAllocator(ctypes.c_int(DOMAIN_IDS["raw"]), ctypes.byref(before))
print(nsalloc.installed())
try:
    nsalloc.install()
except RuntimeError as error:
    print(error)
ctypes.pythonapi.PyMem_SetAllocator(ctypes.c_int(DOMAIN_IDS["raw"]), ctypes.byref(after))
print(nsalloc.installed())
"""))
        self.assertEqual(out.splitlines(), [
            "('mem', 'obj')",
            "nsalloc.install: a requested domain was installed before and another allocator now "
            "serves it (it wrapped the copy, e.g. another copy installed after this one, or "
            "replaced it); a copy installs into a domain only once",
            "('raw', 'mem', 'obj')"])

    def check_unrouted_block_is_caught(self, domain):
        result = run(PROLOGUE + f"""
nsalloc.install(({domain!r},), forward=False)
d, p, n = next(b for b in blocks if b[0].name == {domain!r})
d.free(p)
print("the copy accepted a foreign block")
""")
        self.assertEqual(result.returncode, -signal.SIGABRT, result.stdout + result.stderr)
        self.assertIn("pointer not owned by this copy (foreign)", result.stderr)
        self.assertNotIn("accepted", result.stdout)

    def test_negative_control_without_routing_the_copy_aborts(self):
        for domain in ("raw", "mem", "obj"):
            with self.subTest(domain=domain):
                self.check_unrouted_block_is_caught(domain)


if __name__ == "__main__":
    unittest.main()
