"""nsalloc-python runs like python3, with the copy in every domain from the
start: same arguments, standard input, exit codes and interpreter; no block
from pymalloc; statistics at exit on request.
"""
import os
import subprocess
import sys
import tempfile
import unittest

from support import LAUNCHER, check_ok, child_env, run


def launch(args, interpreter=LAUNCHER, env=None, stdin=None):
    return subprocess.run([interpreter, *args], env=child_env(env), input=stdin,
                          capture_output=True, text=True, timeout=60)


class LauncherTest(unittest.TestCase):
    def test_arguments_reach_the_program(self):
        out = check_ok(self, launch(["-c", "import sys; print(sys.argv[1:])", "a", "-b", "--c"]))
        self.assertEqual(out.strip(), "['a', '-b', '--c']")

    def test_same_interpreter_as_python3(self):
        code = "import sys; print(sys.version, sys.prefix, sys.flags.isolated, sys.flags.optimize)"
        for args in ([], ["-I", "-O"]):
            with self.subTest(args=args):
                ours = check_ok(self, launch(args + ["-c", code]))
                theirs = check_ok(self, launch(args + ["-c", code], interpreter=sys.executable))
                self.assertEqual(ours, theirs)
        self.assertEqual(launch(["--version"]).stdout, launch(["--version"], sys.executable).stdout)

    def test_module_stdin_and_exit_codes(self):
        out = check_ok(self, launch(["-m", "json.tool", "--compact"], stdin='{"a": [1, 2]}'))
        self.assertEqual(out.strip(), '{"a":[1,2]}')
        self.assertEqual(check_ok(self, launch(["-"], stdin="print(6 * 7)")).strip(), "42")
        self.assertEqual(launch(["-c", "raise SystemExit(7)"]).returncode, 7)
        failed = launch(["-c", "1 / 0"])
        self.assertEqual(failed.returncode, 1)
        self.assertIn("ZeroDivisionError", failed.stderr)
        self.assertEqual(launch(["--no-such-option"]).returncode, 2)

    def test_cmake_install_rule(self):
        # `cmake --install` puts the launcher in <prefix>/bin; it runs from there.
        with tempfile.TemporaryDirectory() as prefix:
            subprocess.run(["cmake", "--install", os.environ["NSALLOC_BUILD_DIR"], "--prefix",
                            prefix], check=True, capture_output=True)
            installed = os.path.join(prefix, "bin", "nsalloc-python")
            out = check_ok(self, launch(["-c", "import nsalloc, sys; "
                                         "print(sys.executable, nsalloc.installed())"],
                                        interpreter=installed))
        self.assertEqual(out.strip(), f"{installed} ('raw', 'mem', 'obj')")

    def test_no_block_comes_from_pymalloc(self):
        code = "import sys; data = [str(i) for i in range(100000)]; print(sys.getallocatedblocks())"
        self.assertEqual(int(check_ok(self, launch(["-c", code]))), 0)
        # Negative control: the plain interpreter's objects are pymalloc's.
        self.assertGreater(int(check_ok(self, launch(["-c", code], sys.executable))), 100000)

    def test_statistics_at_exit(self):
        result = launch(["-c", "data = [str(i) for i in range(100000)]"],
                        env={"NSALLOC_PYTHON_STATS": "1"})
        check_ok(self, result)
        self.assertRegex(result.stderr, r"nsalloc-python: copy nsalloc_pyl_: \d+ blocks")
        for domain in ("raw", "mem", "obj"):
            # Nothing was allocated before the copy: nothing is forwarded.
            self.assertRegex(result.stderr,
                             rf"{domain}: forwarded frees 0, forwarded reallocs 0")
        self.assertNotIn("nsalloc-python", launch(["-c", "pass"]).stderr)

    def test_builtin_module_reports_the_launcher_copy(self):
        out = check_ok(self, run("""
import nsalloc
print(nsalloc.prefix, nsalloc.installed())
nsalloc.install()                   # already installed: a no-op
print(nsalloc.installed())
""", launcher=True))
        self.assertEqual(out.splitlines(), [
            "nsalloc_pyl_ ('raw', 'mem', 'obj')", "('raw', 'mem', 'obj')"])


if __name__ == "__main__":
    unittest.main()
