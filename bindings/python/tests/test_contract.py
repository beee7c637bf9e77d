"""The PyMemAllocatorEx contract, for every domain, through CPython's API.

Runs in-process: installs the module's copy unless the interpreter is
nsalloc-python (whose built-in `nsalloc` is installed from the start).
"""
import ctypes
import unittest

import nsalloc
from pymem import Domain, fill, read, top

DOMAINS = ("raw", "mem", "obj")


def setUpModule():
    if not nsalloc.installed():
        nsalloc.install()


class ContractTest(unittest.TestCase):
    def each_domain(self):
        for name in DOMAINS:
            with self.subTest(domain=name):
                yield Domain(name)

    def test_installed_everywhere(self):
        self.assertEqual(nsalloc.installed(), DOMAINS)

    def test_zero_sizes_give_unique_blocks_of_the_copy(self):
        for domain in self.each_domain():
            blocks = [domain.malloc(0), domain.malloc(0), domain.calloc(0, 8),
                      domain.calloc(8, 0), domain.calloc(0, 0)]
            self.assertNotIn(None, blocks)
            self.assertEqual(len(set(blocks)), len(blocks))
            self.assertTrue(all(nsalloc.owns(p) for p in blocks))
            for p in blocks:
                domain.free(p)

    def test_realloc_to_zero_keeps_a_block(self):
        for domain in self.each_domain():
            p = domain.malloc(100)
            q = domain.realloc(p, 0)
            self.assertIsNotNone(q)
            self.assertTrue(nsalloc.owns(q))
            domain.free(q)

    def test_realloc_null_allocates_and_free_null_is_a_no_op(self):
        for domain in self.each_domain():
            p = domain.realloc(None, 40)
            self.assertTrue(nsalloc.owns(p))
            domain.free(p)
            domain.free(None)

    def test_failed_realloc_keeps_the_block(self):
        for domain in self.each_domain():
            p = domain.malloc(64)
            data = fill(p, 64, 7)
            self.assertIsNone(domain.realloc(p, 1 << 62))
            self.assertEqual(read(p, 64), data)
            domain.free(p)

    def test_calloc_overflow_gives_null(self):
        for domain in self.each_domain():
            self.assertIsNone(domain.calloc(1 << 40, 1 << 40))
            # CPython's wrapper checks the product first: call the hook itself.
            hooks = top(domain.name)
            self.assertIsNone(hooks.calloc(hooks.ctx, 1 << 33, 1 << 33))
            self.assertIsNone(hooks.calloc(hooks.ctx, (1 << 64) - 1, 2))

    def test_calloc_zeroes(self):
        for domain in self.each_domain():
            for count, size in ((1, 24), (30, 33), (1000, 1000), (3, 1 << 20)):
                dirty = domain.malloc(count * size)  # reused below: calloc must clear it
                fill(dirty, count * size, 3)
                domain.free(dirty)
                p = domain.calloc(count, size)
                self.assertEqual(read(p, count * size), bytes(count * size))
                domain.free(p)

    def test_sixteen_byte_alignment(self):
        sizes = list(range(1, 1100)) + [4095, 65536, 70000, 1 << 21, 5 << 20]
        for domain in self.each_domain():
            blocks = [domain.malloc(size) for size in sizes]
            self.assertEqual([p % 16 for p in blocks], [0] * len(blocks))
            for p in blocks:
                domain.free(p)

    def test_realloc_preserves_contents_across_sizes(self):
        for domain in self.each_domain():
            p = domain.malloc(24)
            data = fill(p, 24, 11)
            for size in (48, 96, 1000, 70000, 3 << 20, 10 << 20, 500, 24):
                p = domain.realloc(p, size)
                self.assertIsNotNone(p)
                kept = min(len(data), size)
                self.assertEqual(read(p, kept), data[:kept])
                data = fill(p, size, size & 0xFF)
            domain.free(p)

    def test_python_objects_live_in_the_copy(self):
        # Built at run time (constants were allocated at compile time) and of
        # types without free lists (those recycle blocks from before install).
        n = len(DOMAINS)
        objects = [f"{n}" * 1000, bytearray(5000), object(), 10 ** (100 * n), ContractTest()]
        self.assertTrue(all(nsalloc.owns(id(o)) for o in objects))


if __name__ == "__main__":
    unittest.main()
