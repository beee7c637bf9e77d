"""ctypes access to CPython's allocator API, for the binding's tests.

Domain(name) calls the public functions (PyMem_RawMalloc, PyMem_Malloc,
PyObject_Malloc, ...), which go through whatever allocator is installed.
top(name) reads the installed PyMemAllocatorEx itself, to call its hooks
directly (what CPython's own wrappers would pre-check, e.g. calloc overflow).
"""
import ctypes

DOMAIN_IDS = {"raw": 0, "mem": 1, "obj": 2}
_PREFIX = {"raw": "PyMem_Raw", "mem": "PyMem_", "obj": "PyObject_"}

# PYFUNCTYPE: the hooks are called with the GIL held, as CPython calls them.
MALLOC = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
CALLOC = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
REALLOC = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
FREE = ctypes.PYFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class PyMemAllocatorEx(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", MALLOC), ("calloc", CALLOC),
                ("realloc", REALLOC), ("free", FREE)]


def top(name):
    """The allocator currently installed in domain `name`."""
    allocator = PyMemAllocatorEx()
    ctypes.pythonapi.PyMem_GetAllocator(ctypes.c_int(DOMAIN_IDS[name]), ctypes.byref(allocator))
    return allocator


class Domain:
    """malloc/calloc/realloc/free of one domain through CPython's public API.

    release_gil=True calls them without the GIL (only valid for "raw")."""

    def __init__(self, name, release_gil=False):
        library = ctypes.CDLL(None) if release_gil else ctypes.pythonapi
        prefix = _PREFIX[name]
        self.name = name
        self.malloc = self._function(library, prefix + "Malloc", [ctypes.c_size_t])
        self.calloc = self._function(library, prefix + "Calloc", [ctypes.c_size_t] * 2)
        self.realloc = self._function(library, prefix + "Realloc",
                                      [ctypes.c_void_p, ctypes.c_size_t])
        self.free = self._function(library, prefix + "Free", [ctypes.c_void_p], None)

    @staticmethod
    def _function(library, name, argtypes, restype=ctypes.c_void_p):
        function = getattr(library, name)
        function.argtypes = argtypes
        function.restype = restype
        return function


def fill(address, size, seed):
    """Write a pattern derived from seed into size bytes at address."""
    pattern = bytes((seed + i) & 0xFF for i in range(min(size, 256)))
    data = (pattern * (size // len(pattern) + 1))[:size] if size else b""
    ctypes.memmove(address, data, size)
    return data


def read(address, size):
    return ctypes.string_at(address, size)
