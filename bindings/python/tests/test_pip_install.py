"""The module installs like any package: pip, offline, no build isolation,
into a throw-away virtual environment (never the system site-packages), then
works there.

The build needs setuptools and wheel in the environment. Debian's python3
has both (python3-setuptools, python3-wheel); an interpreter without wheel
(e.g. pyenv's) gets it, offline, from Debian's wheel files
(python3-wheel-whl, /usr/share/python-wheels).
"""
import os
import subprocess
import sys
import tempfile
import unittest

from support import TESTS_DIR

SOURCE_DIR = os.path.dirname(TESTS_DIR)
DEBIAN_WHEELS = "/usr/share/python-wheels"


class PipInstallTest(unittest.TestCase):
    def test_install_into_a_venv_and_use(self):
        with tempfile.TemporaryDirectory() as venv:
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                           check=True)
            python = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            if subprocess.run([python, "-c", "import wheel"], capture_output=True).returncode:
                subprocess.run([python, "-m", "pip", "install", "--no-index", "--find-links",
                                DEBIAN_WHEELS, "wheel"], env=env, check=True,
                               capture_output=True)
            install = subprocess.run(
                [python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                 SOURCE_DIR], env=env, capture_output=True, text=True)
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


if __name__ == "__main__":
    unittest.main()
