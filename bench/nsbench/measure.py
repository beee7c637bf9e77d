"""Running one measurement: a process under /usr/bin/time, or under
callgrind; its result line parsed, and the work-parity digests recorded per
arm."""
import concurrent.futures
import os
import re
import subprocess
import tempfile
import threading
import time


class Failure(Exception):
    pass


TIMEOUT = 3600  # seconds any one process may run


def succeeded(proc):
    """proc, or a Failure naming the command, its status and its stderr."""
    if proc.returncode != 0:
        raise Failure("%s exited %d: %s" % (" ".join(proc.args), proc.returncode,
                                            proc.stderr.decode(errors="replace")[-2000:]))
    return proc


def with_environ(env):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return full_env


def run(cmd, env=None, stdin=None, timeout=TIMEOUT):
    return succeeded(subprocess.run(cmd, env=with_environ(env), input=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    timeout=timeout))


def run_measured(cmd, env=None, stdin=None):
    """Runs cmd under /usr/bin/time; returns (process, usage): its peak RSS in
    KiB and page faults (minor + major) as /usr/bin/time reports them, the
    wall seconds from start to exit and the CPU seconds (user + system) of
    the reaped /usr/bin/time, its child included (wait4: microseconds, where
    /usr/bin/time prints hundredths). Not wait4's peak and faults: a child
    forked from this Python process keeps its parent's peak RSS through
    exec, which /usr/bin/time, a small process, does not have."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as report:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        timed = ["/usr/bin/time", "-f", "%M %R %F", "-o", report.name] + cmd
        start = time.perf_counter()
        child = subprocess.Popen(timed, env=with_environ(env), stdout=out, stderr=err,
                                 stdin=inp if stdin is not None else None)
        timer = threading.Timer(TIMEOUT, child.kill)
        timer.start()
        _, status, rusage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        proc = succeeded(subprocess.CompletedProcess(cmd, child.returncode, out.read(),
                                                     err.read()))
        peak, minor, major = map(int, report.read().strip().splitlines()[-1].split())
    return proc, {"peak_kib": peak, "faults": minor + major, "wall": wall,
                  "cpu": rusage.ru_utime + rusage.ru_stime}


def parse_line(text):
    """The harness's result line (and churn samples) -> dict."""
    result, samples = None, []
    for line in text.splitlines():
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        if line.startswith("sample "):
            samples.append({k: int(v) for k, v in fields.items()})
        elif line.startswith("kernel="):
            result = dict(f.split("=", 1) for f in line.split())
    if result is None:
        raise Failure("no result line in: " + text[-500:])
    result["ops"] = int(result["ops"])
    result["seconds"] = float(result["seconds"])
    result["cpu_seconds"] = float(result.get("cpu_seconds", 0))
    result["rss_final_kib"] = int(result["rss_final_kib"])
    result["defects"] = int(result.get("defects", 0))
    result["samples"] = samples
    return result


class Runner:
    def __init__(self, args, cfg):
        self.args, self.cfg = args, cfg
        self.work = os.path.abspath(args.work)
        os.makedirs(self.work, exist_ok=True)
        self.parity = {}  # key -> {arm label: digest}
        self.defects = {}  # (kernel, arm) -> count
        self.jobs = args.jobs

    def arm_env(self, arm):
        env = dict(arm.env)
        if self.args.perturb_arm == arm.label:
            env["BENCH_PERTURB"] = "1"
        return env

    def record(self, key, arm, digest):
        self.parity.setdefault(key, {})[arm.label] = digest

    def kernel_cmd(self, arm, kernel, n, threads):
        cmd = [arm.exe, kernel, "n=%d" % n]
        if threads:
            cmd.append("threads=%d" % threads)
        return cmd

    def native(self, arm, kernel, n, threads):
        proc, usage = run_measured(self.kernel_cmd(arm, kernel, n, threads), self.arm_env(arm))
        res = parse_line(proc.stdout.decode())
        res["peak_kib"], res["faults"] = usage["peak_kib"], usage["faults"]
        self.record(("kernel", kernel, n, threads), arm, (res["checksum"], res["ops"]))
        if res["defects"]:
            self.defects[(kernel, arm.label)] = res["defects"]
        return res

    def callgrind(self, arm, cmd, tag, env=None, stdin=None, region=True):
        out = os.path.join(self.work, "callgrind.%s.%s.out" % (tag, arm.label))
        vg = ["valgrind", "--tool=callgrind", "-q", "--callgrind-out-file=" + out]
        if region:
            vg.append("--instr-atstart=no")
        full_env = dict(env if env is not None else self.arm_env(arm))
        proc = run(vg + cmd, full_env, stdin)
        return proc, callgrind_total(out), out

    def kernel_callgrind(self, arm, kernel, n, threads):
        cmd = self.kernel_cmd(arm, kernel, n, threads)
        tag = "%s-%d" % (kernel, n)
        proc, ir, out = self.callgrind(arm, cmd, tag)
        res = parse_line(proc.stdout.decode())
        self.record(("kernel", kernel, n, threads), arm, (res["checksum"], res["ops"]))
        if res["defects"]:
            self.defects[(kernel, arm.label)] = res["defects"]
        res["ir"], res["ir_per_op"], res["profile"] = ir, ir / res["ops"], out
        return res

    def parallel(self, calls):
        """Runs deterministic (callgrind) jobs concurrently: counts do not
        depend on load. Returns the results in order."""
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            futures = [pool.submit(fn, *a) for fn, *a in calls]
            return [f.result() for f in futures]

    def parity_failures(self):
        bad = []
        for key, digests in sorted(self.parity.items(), key=str):
            if len(set(digests.values())) > 1:
                bad.append((key, digests))
        return bad


def callgrind_total(path):
    """The profile's event total ("totals:" at the end; the "summary:" header
    stays 0 when instrumentation starts late)."""
    found = {}
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                found[line.split(":")[0]] = int(line.split()[1])
    if "totals" in found:
        return found["totals"]
    if "summary" in found:
        return found["summary"]
    raise Failure("no totals in " + path)


def callgrind_functions(path, top=8):
    """Per-function self cost (Ir) from callgrind_annotate, largest first. The
    same function inlined from several source files is summed into one row."""
    proc = run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", path])
    totals = {}
    for line in proc.stdout.decode(errors="replace").splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S+:\S.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        name = re.sub(r"\s*\[.*\]$", "", m.group(2)).split(":", 1)[1]
        totals[name] = totals.get(name, 0) + int(m.group(1).replace(",", ""))
    return sorted(((ir, name) for name, ir in totals.items()), reverse=True)[:top]
