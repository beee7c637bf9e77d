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
rpath as the interpreter finds it - except for the launcher of a wheel
(build_backend.py), which must not point into the build machine's prefix.
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


def embed_flags(self_contained=False):
    """The link arguments; with self_contained (a launcher shipped in a
    wheel, run wherever the wheel is installed), the static libpython even
    when the interpreter uses the shared one, since an rpath into this
    interpreter's prefix would point nowhere on another machine: None when
    there is no static libpython to link."""
    version = sysconfig.get_config_var("LDVERSION") or sysconfig.get_config_var("VERSION")
    libdir = sysconfig.get_config_var("LIBDIR")
    static_library = os.path.join(sysconfig.get_config_var("LIBPL") or "",
                                  sysconfig.get_config_var("LIBRARY") or "")
    common = config("MODLIBS") + config("LIBS") + config("SYSLIBS") + config("LINKFORSHARED")
    if self_contained:  # pyenv puts its own rpath into LIBS too
        common = [f for f in common if not f.startswith(("-Wl,-rpath", "-Wl,-R"))]
    if (self_contained or links_libpython_statically()) and os.path.isfile(static_library):
        return ["-no-pie", static_library] + common
    if self_contained:
        return None
    return ["-L" + libdir, "-lpython" + version, "-Wl,-rpath," + libdir] + common


if __name__ == "__main__":
    sys.stdout.write("".join(flag + "\n" for flag in embed_flags()))
