"""Shared by the binding's tests: run code in a fresh interpreter.

Installing is once per process, so every scenario runs in a child: the
python3 the build found (sys.executable of the test runner) with the built
modules on its path, or the nsalloc-python launcher. The build passes the
paths in NSALLOC_PYTHON_MODULES, NSALLOC_PYTHON_LAUNCHER and
NSALLOC_PYTHON_HELPER.
"""
import os
import subprocess
import sys
import textwrap

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
MODULES_DIR = os.environ["NSALLOC_PYTHON_MODULES"]
LAUNCHER = os.environ["NSALLOC_PYTHON_LAUNCHER"]
HELPER = os.environ.get("NSALLOC_PYTHON_HELPER", "")


def child_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([MODULES_DIR, TESTS_DIR])
    for name in ("PYTHONMALLOC", "PYTHONTRACEMALLOC", "PYTHONDEVMODE", "NSALLOC_PY_OPTIONS"):
        env.pop(name, None)
    env.update(extra or {})
    return env


def run(code, launcher=False, env=None, args=(), timeout=120):
    """Run `code` (dedented) in a child; returns the CompletedProcess."""
    interpreter = LAUNCHER if launcher else sys.executable
    return subprocess.run([interpreter, *args, "-c", textwrap.dedent(code)], env=child_env(env),
                          capture_output=True, text=True, timeout=timeout)


def check_ok(test, result):
    """Assert the child exited 0 and return its stdout."""
    test.assertEqual(result.returncode, 0,
                     f"child failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout
