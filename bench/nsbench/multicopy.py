"""Private copies in one process: K dlopen()ed modules, instructions,
throughput and idle RSS."""
import statistics

from .arms import Arm
from .measure import parse_line, run, run_measured
from .workloads import MULTICOPY


class CopyArm(Arm):
    def __init__(self, label, copies, null=False):
        super().__init__(label, None, null=null)
        self.copies = copies


def multicopy_section(r, smoke, pairs):
    exe, copies_dir = r.cfg["multicopy"], r.cfg["copies_dir"]
    n_ir, n_wall = (2000, 2000) if smoke else (300000, 1000000)
    arms = [CopyArm("%d copies" % k, k) for k in MULTICOPY] + [CopyArm("null", 1, True)]

    def churn(arm, threads, n, callgrind):
        cmd = [exe, "churn", str(arm.copies), str(threads), str(n), copies_dir]
        if callgrind:
            proc, ir, out = r.callgrind(arm, cmd, "multicopy-%d" % arm.copies, {})
            res = parse_line(proc.stdout.decode())
            res["ir_per_op"] = ir / res["ops"]
        else:
            proc, usage = run_measured(cmd, {})
            res = parse_line(proc.stdout.decode())
            res["peak_kib"] = usage["peak_kib"]
        # The work does not depend on the number of copies: one checksum.
        r.record(("multicopy", threads, n), arm, res["checksum"])
        return res

    ir = dict(zip([a.label for a in arms],
                  r.parallel([(churn, a, 1, n_ir, True) for a in arms])))
    times = {a.label: [] for a in arms}
    for rnd in range(pairs):
        for arm in (arms if rnd % 2 == 0 else arms[::-1]):
            times[arm.label].append(churn(arm, 2, n_wall, False)["seconds"])
    rss = {}
    for k, extra in ((1, []), (16, []), ("control", ["control"])):
        samples = []
        for _ in range(1 if smoke else 7):
            line = run([exe, "rss", "1" if extra else str(k), copies_dir] + extra).stdout.decode()
            samples.append({f.split("=")[0]: int(f.split("=")[1]) for f in line.split()[1:]})
        rss[k] = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    return {"ir": ir, "times": times, "rss": rss, "n_ir": n_ir, "n_wall": n_wall}
