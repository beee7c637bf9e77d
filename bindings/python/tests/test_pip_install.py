"""The package installs like any package: pip, offline, no build isolation,
into a fresh virtual environment (no system site-packages, so no setuptools
or wheel beyond what venv itself puts there), then works there: the module
from site-packages, and the launcher nsalloc-python from the environment's
bin/ directory, running with the environment's prefix.

The wheel itself is what a package index would hold: built twice with one
SOURCE_DATE_EPOCH it is the same file byte for byte, it carries its License,
no binary in it has an rpath into the build machine's interpreter prefix,
and nsalloc-audit finds nothing wrong in it or in the environment.
"""
import glob
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

from support import TESTS_DIR

SOURCE_DIR = os.path.dirname(TESTS_DIR)
AUDIT = os.path.join(os.environ["NSALLOC_BUILD_DIR"], "isolation_checks", "audit", "nsalloc-audit")


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", SOURCE_DATE_EPOCH="1700000000")
    return env


def build_wheel(directory):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation",
                            "--no-index", "--no-deps", "-w", directory, SOURCE_DIR],
                           env=clean_env(), capture_output=True, text=True)
    if built.returncode != 0:
        raise AssertionError(built.stdout + built.stderr)
    (wheel,) = glob.glob(os.path.join(directory, "*.whl"))
    return wheel


def dynamic_section(path):
    return subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                          check=True).stdout


class PipInstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        cls.wheel = build_wheel(os.path.join(cls.scratch.name, "first"))

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def test_wheel_is_reproducible(self):
        again = build_wheel(os.path.join(self.scratch.name, "second"))
        with open(self.wheel, "rb") as a, open(again, "rb") as b:
            self.assertEqual(a.read(), b.read(), "two builds of one source differ")

    def test_wheel_metadata_and_binaries(self):
        with zipfile.ZipFile(self.wheel) as wheel:
            names = wheel.namelist()
            metadata = wheel.read("nsalloc-0.1.0.dist-info/METADATA").decode()
            self.assertIn("\nLicense: MIT\n", metadata)
            self.assertIn("nsalloc-0.1.0.dist-info/LICENSE", names)
            binaries = [n for n in names if n.endswith(".so") or n.endswith("/nsalloc-python")]
            self.assertEqual(len(binaries), 2, names)
            unpacked = os.path.join(self.scratch.name, "unpacked")
            wheel.extractall(unpacked, binaries)
        for name in binaries:
            section = dynamic_section(os.path.join(unpacked, name))
            self.assertNotIn("RPATH", section, name)
            self.assertNotIn("RUNPATH", section, name)
            self.assertNotIn("libpython", section, name)

    def test_install_into_a_fresh_venv_and_use(self):
        venv = os.path.join(self.scratch.name, "venv")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        python, env = os.path.join(venv, "bin", "python"), clean_env()
        install = subprocess.run([python, "-m", "pip", "install", "--no-index", self.wheel],
                                 env=env, capture_output=True, text=True)
        self.assertEqual(install.returncode, 0, install.stdout + install.stderr)
        used = subprocess.run([python, "-c", """
import nsalloc, sys
nsalloc.install()
data = [str(i) * 3 for i in range(100000)]
assert nsalloc.owns(id(data[-1]))
print(nsalloc.__file__.startswith(sys.prefix), nsalloc.prefix, nsalloc.version)
"""], env=env, capture_output=True, text=True, cwd=venv)
        self.assertEqual(used.returncode, 0, used.stderr)
        self.assertEqual(used.stdout.split(), ["True", "nsalloc_py_", "0.1.0"])
        launcher = subprocess.run([os.path.join(venv, "bin", "nsalloc-python"), "-c", """
import nsalloc, sys
print(sys.prefix, sys.executable, nsalloc.prefix, nsalloc.installed(), sys.getallocatedblocks())
"""], env=env, capture_output=True, text=True, cwd=venv)
        self.assertEqual(launcher.returncode, 0, launcher.stderr)
        self.assertEqual(launcher.stdout.split(), [
            venv, os.path.join(venv, "bin", "nsalloc-python"), "nsalloc_pyl_",
            "('raw',", "'mem',", "'obj')", "0"])
        audit = subprocess.run([AUDIT, self.wheel, venv], capture_output=True, text=True)
        self.assertEqual(audit.returncode, 0, audit.stdout + audit.stderr)
        self.assertIn("0 errors, 0 findings", audit.stdout)


if __name__ == "__main__":
    unittest.main()
