"""Many threads at once: Python threads churning objects (MEM/OBJ, under the
GIL), RAW from Python threads that released the GIL (ctypes.CDLL) and from
pthreads Python knows nothing about, and blocks of the GIL heap freed through
RAW from those pthreads.

Runs in-process: installs the module's copy unless the interpreter is
nsalloc-python.
"""
import ctypes
import queue
import random
import threading
import unittest

import nsalloc
from pymem import Domain, fill, read
from support import HELPER

THREADS = 8


def setUpModule():
    if not nsalloc.installed():
        nsalloc.install()


def run_threads(target, count=THREADS):
    errors = []

    def guarded(index):
        try:
            target(index)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


class ThreadsTest(unittest.TestCase):
    def tearDown(self):
        copy = nsalloc.stats()["copy"]
        self.assertEqual(copy["foreign_pointers"], copy["forwarded"])
        self.assertEqual(copy["invalid_pointers"], 0)

    def test_object_churn_handed_between_threads(self):
        mailbox = queue.Queue(maxsize=64)

        def work(index):
            rng = random.Random(index)
            for round_ in range(3000):
                value = {"i": index, "r": round_, "items": [str(x) * rng.randrange(1, 40)
                                                             for x in range(rng.randrange(1, 20))]}
                value["tuple"] = tuple(value["items"])
                mailbox.put(value)
                received = mailbox.get()  # usually made by another thread
                self.assertEqual(received["tuple"], tuple(received["items"]))

        run_threads(work)

    def test_raw_without_the_gil_from_python_threads(self):
        raw = Domain("raw", release_gil=True)
        shared = []
        lock = threading.Lock()

        def work(index):
            rng = random.Random(index)
            for _ in range(2000):
                size = rng.choice((0, 1, 16, 100, 1000, 5000, 70000))
                p = raw.malloc(size)
                self.assertIsNotNone(p)
                data = fill(p, size, index)
                if rng.random() < 0.3:
                    p = raw.realloc(p, size * 2 + 8)
                    self.assertEqual(read(p, size), data)
                with lock:  # swap with a block of another thread, free that one
                    shared.append((p, data))
                    p, data = shared.pop(rng.randrange(len(shared)))
                self.assertEqual(read(p, len(data)), data)
                raw.free(p)

        run_threads(work)
        for p, _ in shared:
            raw.free(p)

    def test_raw_from_threads_python_does_not_know(self):
        helper = ctypes.CDLL(HELPER)
        self.assertEqual(helper.raw_threads_churn(THREADS, 20000), 0)

    def test_gil_heap_blocks_freed_through_raw_by_other_threads(self):
        helper = ctypes.CDLL(HELPER)
        mem, obj = Domain("mem"), Domain("obj")
        blocks = [domain.malloc(size) for size in (16, 100, 700, 4000, 90000) * 400
                  for domain in (mem, obj)]
        self.assertTrue(all(nsalloc.owns(p) for p in blocks))
        array = (ctypes.c_void_p * len(blocks))(*blocks)
        self.assertEqual(helper.raw_threads_free(array, len(blocks), THREADS), 0)
        # The pages those frees went back to serve new blocks again.
        again = [mem.malloc(100) for _ in range(5000)]
        self.assertTrue(all(nsalloc.owns(p) for p in again))
        for p in again:
            mem.free(p)


if __name__ == "__main__":
    unittest.main()
