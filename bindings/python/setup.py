"""Builds the `nsalloc` extension module from the amalgamation, without CMake.

    pip install --no-build-isolation ./bindings/python

The amalgamation (core as one nsalloc.c + nsalloc.h) is generated from the
source tree with `cmake -P cmake/Amalgamate.cmake` (offline) into
build/amalgamation/. The module compiles it as a private copy: its own
prefix, hidden visibility, its own TLS (TLSDESC on x86-64: fast and
dlopen-safe) - what nsalloc_add_private_copy() does in the CMake build.
"""
import os
import platform
import subprocess
import sysconfig

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
AMALGAMATION = os.path.join("build", "amalgamation")


def generate_amalgamation():
    subprocess.check_call([
        "cmake", "-DCORE_DIR=" + os.path.join(ROOT, "core"),
        "-DHEADER=" + os.path.join(ROOT, "sdk", "include", "nsalloc.h"),
        "-DOUT_DIR=" + os.path.join(HERE, AMALGAMATION),
        "-P", os.path.join(ROOT, "cmake", "Amalgamate.cmake")])


def tls_flags():
    """TLS descriptors where the compiler has them (GCC on x86-64; clang before
    19 rejects the flag). The copy names its TLS model itself."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    probe = subprocess.call([cc, "-mtls-dialect=gnu2", "-E", "-x", "c", os.devnull],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if platform.machine() in ("x86_64", "AMD64") and probe == 0:
        return ["-ftls-model=global-dynamic", "-mtls-dialect=gnu2"]
    return ["-ftls-model=global-dynamic"]


generate_amalgamation()
setup(ext_modules=[Extension(
    "nsalloc",
    sources=["src/module.c", "src/pyalloc.c", os.path.join(AMALGAMATION, "nsalloc.c")],
    include_dirs=[AMALGAMATION],
    define_macros=[("NSALLOC_PREFIX", "nsalloc_py_"), ("NSALLOC_PRIVATE", "1")],
    extra_compile_args=["-std=gnu11", "-fvisibility=hidden", *tls_flags()],
    extra_link_args=["-pthread"])])
