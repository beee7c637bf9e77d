"""The package installs like any package: pip, offline, no build isolation,
into a fresh virtual environment (no system site-packages, so no setuptools
or wheel beyond what venv itself puts there), then works there: the module
from site-packages, and the launcher nsalloc-python from the environment's
bin/ directory, running with the environment's prefix.
"""
import os
import subprocess
import sys
import tempfile
import unittest

from support import TESTS_DIR

SOURCE_DIR = os.path.dirname(TESTS_DIR)


class PipInstallTest(unittest.TestCase):
    def test_install_into_a_fresh_venv_and_use(self):
        with tempfile.TemporaryDirectory() as venv:
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            python = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
            env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
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
            launcher = subprocess.run([os.path.join(venv, "bin", "nsalloc-python"), "-c", """
import nsalloc, sys
print(sys.prefix, sys.executable, nsalloc.prefix, nsalloc.installed(), sys.getallocatedblocks())
"""], env=env, capture_output=True, text=True, cwd=venv)
            self.assertEqual(launcher.returncode, 0, launcher.stderr)
            self.assertEqual(launcher.stdout.split(), [
                venv, os.path.join(venv, "bin", "nsalloc-python"), "nsalloc_pyl_",
                "('raw',", "'mem',", "'obj')", "0"])


if __name__ == "__main__":
    unittest.main()
