#!/usr/bin/env python3
"""interactive.py HOST: nsalloc-lua on a terminal (a pty), as a user types:
the banner and prompts, expressions and statements, a chunk continued over
lines, Ctrl-C stopping a running loop (the REPL goes on), end of input ending
with status 0; and Ctrl-C (SIGINT) in a script, caught by pcall."""
import os
import pty
import select
import signal
import subprocess
import sys
import time

host = sys.argv[1]
failures = 0


def check(name, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    failures += not ok


def read_until(fd, want, timeout=10.0):
    """Output up to and including `want` (bytes), or all seen when it times out."""
    seen = b""
    deadline = time.monotonic() + timeout
    while want not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "dumb"  # no bracketed-paste escapes around the lines
    os.execv(host, [host])
banner = read_until(fd, b"> ")
check("banner and prompt", b"PUC-Rio" in banner and banner.endswith(b"> "), repr(banner))
os.write(fd, b"x = 6 * 7\n")
read_until(fd, b"> ")
os.write(fd, b"=x, 'y'\n")
out = read_until(fd, b"> ")
check("expression printed", b"42\ty" in out, repr(out))
os.write(fd, b"function f()\n")
out = read_until(fd, b">> ")
check("continuation prompt", out.endswith(b">> "), repr(out))
os.write(fd, b"return 'multi' end\nf()\n")
out = read_until(fd, b"\nmulti\r\n> ")  # f()'s result (the echo has "multi" too)
check("chunk over two lines", out.endswith(b"\nmulti\r\n> "), repr(out))
os.write(fd, b"while true do end\n")
time.sleep(1.0)  # the loop is running by then
os.write(fd, b"\x03")  # the terminal sends SIGINT
out = read_until(fd, b"> ")
check("Ctrl-C stops the loop", b"interrupted!" in out, repr(out))
os.write(fd, b"print('alive')\n")
out = read_until(fd, b"> ")
check("the REPL goes on", b"alive" in out, repr(out))
os.write(fd, b"\x04")  # end of input
read_until(fd, b"never printed", 5.0)  # drain until the pty closes
_, status = os.waitpid(pid, 0)
check("end of input: status 0", os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, str(status))

script = "pcall(function() print(12) while true do end end) print(42)"
proc = subprocess.Popen([host, "-e", script], stdout=subprocess.PIPE, text=True)
first = proc.stdout.readline()
proc.send_signal(signal.SIGINT)
rest = proc.stdout.read()
check("Ctrl-C in a script is an error pcall catches",
      first == "12\n" and rest == "42\n" and proc.wait() == 0, repr((first, rest)))

print("interactive: " + ("all passed" if failures == 0 else "%d failed" % failures))
sys.exit(1 if failures else 0)
