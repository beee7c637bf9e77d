"""Prints, one per line, the linker arguments that embed the running
interpreter's libpython into a program the way the interpreter itself is
linked: CMake (bindings/python/CMakeLists.txt) and the pip backend
(build_backend.py) link nsalloc-python with them.

A python3 that links libpython statically (Debian's /usr/bin/python3: a
non-PIE executable with libpython3.11.a inside) gets the same static,
position-dependent libpython: linking the shared libpython instead costs
every call into the interpreter a PLT/GOT indirection and PIC code, which
measured 22-29% more instructions (docs/python.md). A python3 on a shared
libpython (pyenv, --enable-shared) gets that libpython, found through an
rpath as the interpreter finds it.
"""
import os
import shlex
import sys
import sysconfig


def config(name):
    """A configuration variable as arguments, "-Xlinker X" as one "-Wl,X"."""
    words, flags = shlex.split(sysconfig.get_config_var(name) or ""), []
    while words:
        word = words.pop(0)
        flags.append("-Wl," + words.pop(0) if word == "-Xlinker" and words else word)
    return flags


def links_libpython_statically():
    """True when this process has no shared libpython mapped (Linux)."""
    with open("/proc/self/maps") as maps:
        return not any("/libpython" in line for line in maps)


def embed_flags():
    version = sysconfig.get_config_var("LDVERSION") or sysconfig.get_config_var("VERSION")
    libdir = sysconfig.get_config_var("LIBDIR")
    static_library = os.path.join(sysconfig.get_config_var("LIBPL") or "",
                                  sysconfig.get_config_var("LIBRARY") or "")
    common = config("MODLIBS") + config("LIBS") + config("SYSLIBS") + config("LINKFORSHARED")
    if links_libpython_statically() and os.path.isfile(static_library):
        return ["-no-pie", static_library] + common
    return ["-L" + libdir, "-lpython" + version, "-Wl,-rpath," + libdir] + common


if __name__ == "__main__":
    sys.stdout.write("".join(flag + "\n" for flag in embed_flags()))
