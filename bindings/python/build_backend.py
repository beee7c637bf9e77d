"""PEP 517 build backend of the `nsalloc` package, standard library only.

    pip install --no-build-isolation ./bindings/python

works in a fresh virtual environment: no setuptools, no wheel package, no
network, no CMake. It compiles, with the C compiler the interpreter was built
with (sysconfig CC):
  - the extension module `nsalloc` (src/module.c, src/pyalloc.c and the core,
    core/nsalloc.c, as a private copy: prefix nsalloc_py_, hidden
    visibility, TLS descriptors where the compiler has them - what nsalloc_add_private_copy() does in
    the CMake build);
  - the launcher `nsalloc-python` (src/launcher.c with its own copy, prefix
    nsalloc_pyl_, initial-exec TLS), linked to libpython the way the
    interpreter itself is (tools/embed_flags.py), shipped as a script of the
    wheel, so pip puts it in the environment's bin/ directory.
The sources are read in place (pip builds a local directory in place), so
the package builds from a checkout of the repository.
"""
import base64
import hashlib
import os
import shlex
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "tools"))
from embed_flags import embed_flags  # noqa: E402

NAME, VERSION, LICENSE = "nsalloc", "0.1.0", "MIT"
SOURCES = [os.path.join(HERE, "src", name) for name in ("module.c", "pyalloc.c")]
CORE = os.path.join(ROOT, "core", "nsalloc.c")
INCLUDES = [os.path.join(ROOT, "sdk", "include"), os.path.join(ROOT, "core"),
            sysconfig.get_paths()["include"]]


def compiler():
    return shlex.split(sysconfig.get_config_var("CC") or "cc")


def gnu2_supported():
    """Whether the compiler takes TLS descriptors (GCC on x86-64 does; clang
    before 19 and GCC on other architectures do not)."""
    probe = [*compiler(), "-mtls-dialect=gnu2", "-fPIC", "-x", "c", "-c", os.devnull,
             "-o", os.devnull]
    return subprocess.call(probe, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


def copy_flags(prefix, initial_exec=False):
    """Compile flags of a private copy with this prefix: dlopen-safe TLS
    (descriptors where the compiler has them), or initial-exec for a copy in
    an executable. The copy names its own TLS model in its ID record."""
    if initial_exec:
        tls = ["-ftls-model=initial-exec", "-DNSALLOC_TLS_INITIAL_EXEC=1"]
    else:
        tls = ["-ftls-model=global-dynamic", *(["-mtls-dialect=gnu2"] if gnu2_supported() else [])]
    return ["-std=gnu11", "-O2", "-DNDEBUG", "-fvisibility=hidden", "-pthread", *tls,
            f"-DNSALLOC_PREFIX={prefix}", "-DNSALLOC_PRIVATE=1", *("-I" + d for d in INCLUDES)]


def build_module(directory):
    output = os.path.join(directory, NAME + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.check_call([*compiler(), "-shared", "-fPIC", *copy_flags("nsalloc_py_"),
                           *SOURCES, CORE, "-o", output])
    return output


def build_launcher(directory):
    """The launcher, or None (with a note) when this interpreter has no static
    libpython: a wheel's launcher carries no rpath into the build-time prefix."""
    output = os.path.join(directory, "nsalloc-python")
    link = embed_flags(self_contained=True)
    if link is None:
        print("nsalloc build_backend: no static libpython for this interpreter: the wheel ships "
              "the module without the nsalloc-python launcher", file=sys.stderr)
        return None
    pie = ["-fno-pie"] if "-no-pie" in link else []
    subprocess.check_call([*compiler(), *pie, *copy_flags("nsalloc_pyl_", initial_exec=True),
                           os.path.join(HERE, "src", "launcher.c"), *SOURCES, CORE, "-o", output,
                           *link])
    return output


def wheel_tag():
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    abi = interpreter + sys.abiflags
    return f"{interpreter}-{abi}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"


def metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: nsalloc, a private allocator copy, as CPython's memory allocator\n"
            f"License: {LICENSE}\nClassifier: License :: OSI Approved :: MIT License\n"
            "Requires-Python: >=3.9\n")


def member_time():
    """Every member's timestamp: SOURCE_DATE_EPOCH when set (reproducible
    builds), else a fixed date; zip cannot store times before 1980."""
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "1577836800"))  # 2020-01-01
    return max(time.gmtime(epoch)[:6], (1980, 1, 1, 0, 0, 0))


def write_wheel(path, files):
    """files: [(name in the wheel, bytes, executable)]; adds RECORD. The same
    files give the same wheel, byte for byte."""
    record_name = f"{NAME}-{VERSION}.dist-info/RECORD"
    records = []
    date_time = member_time()

    def add(wheel, name, data, executable=False):
        info = zipfile.ZipInfo(name, date_time=date_time)
        info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        wheel.writestr(info, data)

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data, executable in files:
            add(wheel, name, data, executable)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{name},sha256={digest.decode()},{len(data)}")
        records.append(f"{record_name},,")
        add(wheel, record_name, ("\n".join(records) + "\n").encode())


# ---- PEP 517 hooks -----------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = wheel_tag()
    with tempfile.TemporaryDirectory() as build:
        module, launcher = build_module(build), build_launcher(build)
        read = lambda path: open(path, "rb").read()
        info = f"{NAME}-{VERSION}.dist-info"
        files = [(os.path.basename(module), read(module), False)]
        if launcher:
            files.append((f"{NAME}-{VERSION}.data/scripts/nsalloc-python", read(launcher), True))
        files += [(f"{info}/METADATA", metadata().encode(), False),
                 (f"{info}/LICENSE", read(os.path.join(ROOT, "LICENSE")), False),
                 (f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: {NAME} build_backend\n"
                                    f"Root-Is-Purelib: false\nTag: {tag}\n").encode(), False),
                 (f"{info}/top_level.txt", f"{NAME}\n".encode(), False)]
        filename = f"{NAME}-{VERSION}-{tag}.whl"
        write_wheel(os.path.join(wheel_directory, filename), files)
    return filename
