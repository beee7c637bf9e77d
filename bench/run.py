#!/usr/bin/env python3
"""run.py - the nsalloc benchmark runner (Python 3 standard library only).

Runs every section of the suite against every allocator arm, checks work
parity (identical checksums / outputs across arms), computes ratios and writes
docs/benchmarks.md plus an SVG chart (gnuplot).

  run.py --config BUILD/bench/bench-config.json --out docs/benchmarks.md \
         --chart docs/benchmarks.svg --work BUILD/bench/results     # full suite
  run.py --smoke --config ... --work DIR                           # < 60 s
  run.py --embed-analysis docs/benchmarks.md     # re-embed an edited analysis.md

Method (see docs/benchmarks.md): instructions retired under callgrind for
single-threaded kernels and whole programs (deterministic; each kernel's
measured region only), interleaved wall clock with a null arm for the
multi-threaded kernels, /usr/bin/time for peak RSS. Exit status 1 when any
checksum or program output differs between arms.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

import callgrind_calls

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ---------------------------------------------------------------- workloads --
# (kernel, full n, smoke n, threads)
PER_OP = [
    ("small", 400000, 2000, 1),
    ("medium", 100000, 500, 1),
    ("large", 20000, 100, 1),
    ("huge", 400, 8, 1),
    ("batch-lifo", 400000, 2000, 1),
    ("batch-fifo", 400000, 2000, 1),
    ("realloc-chain", 40000, 500, 1),
    ("realloc-large", 2000, 26, 1),
    ("calloc", 200000, 1000, 1),
    ("aligned", 200000, 1000, 1),
    ("usable-size", 1000000, 5000, 1),
    ("working-set", 300000, 1000, 1),
    ("live-set", 300000, 2000, 1),
    ("aligned-64", 300000, 2000, 1),
    ("aligned-4096", 100000, 500, 1),
    ("cfrac-like", 300000, 2000, 1),
    ("xthread-free", 200000, 1024, 2),
]
CLASSIC_ST = [  # single-threaded classic kernels: callgrind
    ("glibc-simple", 200000, 20000, 1),
    ("alloc-test", 500000, 2000, 1),
    ("larson", 300000, 2000, 1),
    ("malloc-large", 60, 4, 1),
]
# Rows kept out of the user-relevant geometric means, and why: each measures
# a policy more than code paths. For memory from the operating system, a count
# of user-space instructions does not weigh the system calls and page faults
# behind a handful of instructions, and one peer version can be pathological
# (Debian's mimalloc 2.0.9 re-maps every huge block); for large realloc
# growth, copying or growing in place decides the row by orders of magnitude.
# Their rows are still printed, with their own geometric mean.
PATHOLOGICAL = {
    "huge": "4-8 MiB blocks: mapping policy (mmap/munmap per pair or a cached segment)",
    "malloc-large": "5-25 MiB blocks: mapping policy, as for huge",
    "realloc-large": "64 KiB-1 MiB growth: whether an allocator grows a block in place or "
                     "copies it (a memcpy of up to 1 MiB per step) decides the row, not its "
                     "code paths",
}
FASTPATH = ("fastpath", 1000000, 20000)  # kernel, full n, smoke n
FASTPATH_CALLERS = ("bench_fastpath_mallocs", "bench_fastpath_frees")
# The newest mimalloc releases, prebuilt (../shared/peers/README.md); absent
# in a bare checkout, where the runner says so and compares with Debian's.
PEERS_DIR = os.path.join(os.path.dirname(ROOT), "shared", "peers")
PEERS = [("mimalloc-2.4.1", "mimalloc-2.4.1/libmimalloc.so.2.4"),
         ("mimalloc-3.4.3", "mimalloc-3.4.3/libmimalloc.so.3.4")]
DEBIAN_MIMALLOC = "mimalloc-2.0.9"
CLASSIC_MT = [  # multi-threaded classic kernels: interleaved wall clock
    ("larson", 4000000, 2000, None),
    ("xmalloc", 4000000, 2000, None),
    ("mstress", 2000000, 2000, None),
    ("alloc-test", 4000000, 2000, None),
    ("cache-scratch", 1000, 10, None),
    ("xthread-free", 1000000, 1024, 2),
    ("malloc-large", 100, 4, 1),
]
# (name, command template, env, full size, smoke size, stdin template or None)
PROGRAMS = [
    ("lua5.4", ["lua5.4", "{programs}/alloc.lua", "{n}"], {}, 3000, 200, None),
    ("python3", ["python3", "{programs}/alloc.py", "{n}"],
     {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
     2000, 100, None),
    ("sqlite3", ["sqlite3", ":memory:"], {}, 20000, 300, "workload.sql"),
    ("perl", ["perl", "{programs}/alloc.pl", "{n}"],
     {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}, 4000, 200, None),
    ("jq", ["jq", "-c", "-f", "{programs}/transform.jq", "{work}/jq-{n}.json"], {}, 2500, 100, None),
    ("xz", ["xz", "-c", "-6", "-T1", "{work}/xz-{n}.txt"], {}, 1500, 20, None),
]
MULTICOPY = [1, 4, 16]
CHURN = (40, 4, 3, 2)  # full waves, threads; smoke waves, threads

TARGETS = {
    "st_max": 1.00,
    "programs_vs_mimalloc": 1.00, "programs_vs_glibc": 0.85,
    "mt_vs_mimalloc": 1.00, "mt_faults_vs_mimalloc": 1.5, "mt_vs_glibc": 1.5,
    "peak_rss_vs_best": 1.05, "idle_copy_kib": 64, "idle_16_kib": 1024,
}


# ---------------------------------------------------------------------- arms --
class Arm:
    """One allocator as a benchmark executable (+ environment)."""

    def __init__(self, label, exe, env=None, expect=None, null=False):
        self.label, self.exe, self.env, self.expect, self.null = label, exe, env or {}, expect, null


def peer_libs(peers_dir):
    """(label, library) of every prebuilt peer present; a note when none is."""
    found = [(label, os.path.join(peers_dir, rel)) for label, rel in PEERS
             if os.path.exists(os.path.join(peers_dir, rel))]
    if not found:
        print("run.py: note: no prebuilt peers in %s: the mimalloc 2.4.1 and 3.4.3 arms are "
              "skipped and 'mimalloc' below means Debian's %s" % (peers_dir, DEBIAN_MIMALLOC),
              file=sys.stderr)
    return found


def kernel_arms(cfg, peers):
    """Kernel executables; the prebuilt peers are preloaded into the glibc
    executable (their malloc replaces libc's, as the issue measured them)."""
    arms = cfg["arms"]
    out = [Arm("nsalloc", arms["nsalloc"], expect="libbench-arm-nsalloc"),
           Arm("nsalloc-override", arms["glibc"], {"LD_PRELOAD": cfg["override"]},
               expect="libnsalloc-override"),
           Arm("glibc", arms["glibc"], expect="libc.so")]
    if "mimalloc" in arms:
        out.append(Arm(DEBIAN_MIMALLOC, arms["mimalloc"], expect="libmimalloc.so.2"))
    for label, lib in peers:
        out.append(Arm(label, arms["glibc"], {"LD_PRELOAD": lib}, os.path.basename(lib)))
    for name in ("jemalloc", "tcmalloc"):
        if name in arms:
            out.append(Arm(name, arms[name], expect="lib" + name))
    out.append(Arm("null", arms["nsalloc"], expect="libbench-arm-nsalloc", null=True))
    return out


def program_arms(cfg, peers):
    """Whole programs: every allocator by LD_PRELOAD; glibc is no preload."""
    out = [Arm("nsalloc", None, {"LD_PRELOAD": cfg["override"]}, "libnsalloc-override"),
           Arm("glibc", None, {}, "libc.so")]
    libs = [(DEBIAN_MIMALLOC, cfg.get("mimalloc_lib"))] + peers
    libs += [(name, cfg.get(name + "_lib")) for name in ("jemalloc", "tcmalloc")]
    for label, lib in libs:
        if lib:
            lib = os.path.realpath(lib)
            out.append(Arm(label, None, {"LD_PRELOAD": lib}, os.path.basename(lib)))
    out.append(Arm("null", None, {"LD_PRELOAD": cfg["override"]}, "libnsalloc-override", True))
    return out


def mimalloc_refs(labels):
    """The arms 'mimalloc' stands for: the newest releases when present, else
    Debian's. Every ratio to 'mimalloc' is to the better of them."""
    refs = [label for label, _ in PEERS if label in labels]
    return refs or [l for l in [DEBIAN_MIMALLOC] if l in labels]


def add_best_mimalloc(results, refs, key):
    """Adds a 'mimalloc' entry to every row: the reference arm with the
    lowest `key` (instructions), named in its 'best_of'."""
    for by_arm in results.values():
        have = [l for l in refs if key in by_arm.get(l, {})]
        if have:
            best = min(have, key=lambda l: by_arm[l][key])
            by_arm["mimalloc"] = dict(by_arm[best], best_of=best)
    return results


# ------------------------------------------------------------------ running --
class Failure(Exception):
    pass


def run(cmd, env=None, stdin=None, timeout=3600):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(cmd, env=full_env, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)
    if proc.returncode != 0:
        raise Failure("%s exited %d: %s" % (" ".join(cmd), proc.returncode,
                                            proc.stderr.decode(errors="replace")[-2000:]))
    return proc


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

    def timed(self, cmd, env, stdin=None, faults=False):
        """Runs cmd under /usr/bin/time; returns (process, peak RSS in KiB)
        or, with faults, (process, peak RSS, page faults (minor + major))."""
        rss_file = os.path.join(self.work, "time-%d-%d.txt" % (os.getpid(),
                                                               threading.get_ident()))
        proc = run(["/usr/bin/time", "-f", "%M %R %F", "-o", rss_file] + cmd, env, stdin)
        with open(rss_file) as f:
            peak, minor, major = map(int, f.read().strip().splitlines()[-1].split())
        return (proc, peak, minor + major) if faults else (proc, peak)

    def kernel_cmd(self, arm, kernel, n, threads):
        cmd = [arm.exe, kernel, "n=%d" % n]
        if threads:
            cmd.append("threads=%d" % threads)
        return cmd

    def native(self, arm, kernel, n, threads):
        proc, peak, faults = self.timed(self.kernel_cmd(arm, kernel, n, threads),
                                        self.arm_env(arm), faults=True)
        res = parse_line(proc.stdout.decode())
        res["peak_kib"], res["faults"] = peak, faults
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


# --------------------------------------------------------------- statistics --
def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def fmt_ratio(x):
    return "n/a" if x is None or x != x else "%.3f" % x


def fmt_int(x):
    return "{:,}".format(int(round(x)))


def md_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict(ok):
    return "**met**" if ok else "**MISSED**"


# ------------------------------------------------------------------ sections --
def check_arms(r, karms, parms):
    """Each arm's malloc must live in the library it claims to be."""
    lines = []
    probe = r.cfg["arms"]["glibc"]
    for arm in karms:
        obj = run([arm.exe, "--info"], arm.env).stdout.decode().split("malloc_object=")[1].strip()
        if arm.expect not in obj:
            raise Failure("arm %s: malloc resolves to %s" % (arm.label, obj))
        lines.append((arm.label, "kernels", os.path.basename(obj)))
    for arm in parms:
        obj = run([probe, "--info"], arm.env).stdout.decode().split("malloc_object=")[1].strip()
        if arm.expect not in obj:
            raise Failure("program arm %s: malloc resolves to %s" % (arm.label, obj))
        lines.append((arm.label, "programs (LD_PRELOAD)", os.path.basename(obj)))
    return lines


def callgrind_section(r, arms, specs, smoke, callgrind_all=True, native=True):
    """Per kernel: Ir per op of every arm (callgrind) and, unless `native` is
    false (the quick mode), a native run for RSS."""
    results = {}
    calls, native_calls = [], []
    for i, (kernel, full, small, threads) in enumerate(specs):
        n = small if smoke else full
        for arm in arms:
            if callgrind_all or i == 0:
                calls.append((r.kernel_callgrind, arm, kernel, n, threads))
            if native:
                native_calls.append((r.native, arm, kernel, n, threads))
    for (fn, arm, kernel, n, threads), res in zip(calls, r.parallel(calls)):
        results.setdefault(kernel, {})[arm.label] = res
    for (fn, arm, kernel, n, threads), res in zip(native_calls, r.parallel(native_calls)):
        row = results.setdefault(kernel, {}).setdefault(arm.label, {})
        row["peak_kib"], row["native"] = res["peak_kib"], res
        row.setdefault("checksum", res["checksum"])
    return add_best_mimalloc(results, mimalloc_refs([a.label for a in arms]), "ir_per_op")


def fastpath_section(r, arms, smoke):
    """Per arm: instructions per malloc and per free call (callgrind_calls)."""
    kernel, full, small = FASTPATH
    real = [a for a in arms if not a.null]
    got = r.parallel([(r.kernel_callgrind, a, kernel, small if smoke else full, 1) for a in real])
    rows = []
    for arm, res in zip(real, got):
        costs = callgrind_calls.call_costs(res["profile"], FASTPATH_CALLERS)
        per_call = ["%.1f" % (ir / calls) if calls else "n/a" for calls, ir in
                    (costs[c] for c in FASTPATH_CALLERS)]
        rows.append([arm.label] + per_call)
    return md_table(["arm", "malloc(32)", "free"], rows)


def row_class(kernel):
    return "pathological" if kernel in PATHOLOGICAL else "user"


def ir_table(results, arms):
    """Instructions per op of every arm. 'mimalloc' in the ratios is the
    better of the reference arms (add_best_mimalloc), named per row."""
    labels = [a.label for a in arms]
    headers = (["kernel", "rows"] + ["%s Ir/op" % l for l in labels]
               + ["best mimalloc", "nsalloc/mimalloc", "override/mimalloc", "nsalloc/glibc",
                  "null/nsalloc", "checksum"])
    rows, ratios = [], {}
    for kernel, by_arm in results.items():
        if "ir_per_op" not in by_arm.get("nsalloc", {}):
            continue
        ns = by_arm["nsalloc"]["ir_per_op"]

        def rel(label, base=ns):
            other = by_arm.get(label, {}).get("ir_per_op")
            return base / other if other and base else None
        null = by_arm.get("null", {}).get("ir_per_op")
        override = by_arm.get("nsalloc-override", {}).get("ir_per_op")
        ratios[kernel] = {"mimalloc": rel("mimalloc"), "override": rel("mimalloc", override),
                          "glibc": rel("glibc"), "null": null / ns if null else None,
                          "class": row_class(kernel)}
        for label in labels + ["mimalloc"]:
            ratios[kernel]["ir:" + label] = by_arm.get(label, {}).get("ir_per_op")
        rows.append([kernel, row_class(kernel)]
                    + ["%.1f" % by_arm[l]["ir_per_op"] if "ir_per_op" in by_arm.get(l, {})
                       else "n/a" for l in labels]
                    + [by_arm.get("mimalloc", {}).get("best_of", "n/a"),
                       fmt_ratio(ratios[kernel]["mimalloc"]), fmt_ratio(ratios[kernel]["override"]),
                       fmt_ratio(ratios[kernel]["glibc"]), fmt_ratio(ratios[kernel]["null"]),
                       by_arm["nsalloc"]["checksum"][:8]])
    return md_table(headers, rows), ratios


def class_geomeans(ratios, key="mimalloc"):
    """The geometric means of `key` over user-relevant and pathological rows."""
    parts = []
    for cls, title in (("user", "user-relevant rows"), ("pathological", "pathological rows")):
        values = [v[key] for v in ratios.values() if v["class"] == cls and v.get(key)]
        if values:
            parts.append("%s **%s** (%d)" % (title, fmt_ratio(geomean(values)), len(values)))
    return "; ".join(parts) or "n/a"


def interleaved_section(r, arms, specs, pairs, smoke):
    """Wall clock, arms interleaved A B C .. C B A per pair of rounds; ratios
    are medians of per-round ratios; the null arm's spread is the floor."""
    threads_default = max(2, os.cpu_count() or 2)
    results = {}
    for kernel, full, small, threads in specs:
        n = small if smoke else full
        t = threads or threads_default
        times = {a.label: [] for a in arms}
        cpu = {a.label: [] for a in arms}
        peaks = {a.label: [] for a in arms}
        faults = {a.label: [] for a in arms}
        for rnd in range(pairs):
            for arm in (arms if rnd % 2 == 0 else arms[::-1]):
                res = r.native(arm, kernel, n, t)
                times[arm.label].append(res["seconds"])
                cpu[arm.label].append(res["cpu_seconds"])
                peaks[arm.label].append(res["peak_kib"])
                faults[arm.label].append(res["faults"])
                ops = res["ops"]
        # 'mimalloc': the reference release with the lower median time on
        # this kernel, all its series (time, CPU, faults, peak) as measured.
        # Not the faster release of each round: the minimum of two noisy
        # samples is biased low (larson on d8433c2: 0.853 and 0.832 against
        # each release, 0.518 against the per-round minimum).
        refs = mimalloc_refs(times)
        best = min(refs, key=lambda l: statistics.median(times[l])) if refs else None
        if best:
            for series in (times, cpu, peaks, faults):
                series["mimalloc"] = series[best]
        results["%s (T=%d)" % (kernel, t)] = {"times": times, "cpu": cpu, "peaks": peaks, "ops": ops,
                                              "faults": faults, "kernel": kernel, "best_of": best}
    return results


def throughput_ratios(entry, base="nsalloc"):
    """Per-round t_other / t_base: > 1 means base has the higher throughput."""
    times = entry["times"]
    out = {}
    for label, ts in times.items():
        if label == base:
            continue
        per_round = [o / b for o, b in zip(ts, times[base]) if b > 0]
        out[label] = (statistics.median(per_round), min(per_round), max(per_round))
    return out


def wall_table(results, arms):
    labels = [a.label for a in arms if a.label != "nsalloc" and a.label != "null"]
    headers = (["kernel", "nsalloc Mops/s"] + ["vs %s" % l for l in labels]
               + ["vs best mimalloc", "null arm: median [min, max]",
                  "CPU time: vs best mimalloc, null", "page faults: nsalloc, best mimalloc, ratio"])
    rows, ratios = [], {}
    for name, entry in results.items():
        tr = throughput_ratios(entry)
        ratios[name] = {l: tr[l][0] for l in tr}
        mops = entry["ops"] / statistics.median(entry["times"]["nsalloc"]) / 1e6
        null = tr.get("null", (float("nan"),) * 3)
        cpu = throughput_ratios({"times": entry["cpu"]})
        faults = {l: statistics.median(v) for l, v in entry["faults"].items() if v}
        fault_ratio = (faults["nsalloc"] / faults["mimalloc"]
                       if faults.get("mimalloc") else None)
        ratios[name]["faults"] = fault_ratio
        rows.append([name, "%.3g" % mops] + [fmt_ratio(tr[l][0]) for l in labels]
                    + ["%s (%s)" % (fmt_ratio(tr.get("mimalloc", (None,))[0]),
                                    entry.get("best_of") or "n/a"),
                       "%.3f [%.3f, %.3f]" % null,
                       "%s, %s" % (fmt_ratio(cpu.get("mimalloc", (None,))[0]),
                                   fmt_ratio(cpu.get("null", (None,))[0])),
                       "%s, %s, %s" % (fmt_int(faults["nsalloc"]),
                                       fmt_int(faults["mimalloc"]) if "mimalloc" in faults
                                       else "n/a", fmt_ratio(fault_ratio))])
    return md_table(headers, rows), ratios


def prepare_inputs(r, n_by_program):
    """Deterministic input files for the whole-program rows."""
    for name, cmd, env, full, small, stdin in PROGRAMS:
        n = n_by_program[name]
        if name == "jq":
            path = os.path.join(r.work, "jq-%d.json" % n)
            records = [{"group": "g%03d" % (i * 37 % 211), "name": "name-%05d" % (i * 7919 % n),
                        "value": i * 13 % 1000, "tags": ["t%d" % (i % k) for k in (3, 7, 11)]}
                       for i in range(n)]
            with open(path, "w") as f:
                json.dump(records, f)
        elif name == "xz":
            path = os.path.join(r.work, "xz-%d.txt" % n)
            state, lines = 12345, []
            for i in range(n * 16):
                state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
                lines.append("line %d value %d word%d" % (i, state >> 40, (state >> 20) % 97))
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")


def program_command(r, name, n):
    spec = next(p for p in PROGRAMS if p[0] == name)
    subst = {"programs": os.path.join(HERE, "programs"), "work": r.work, "n": str(n)}
    cmd = [part.format(**subst) for part in spec[1]]
    stdin = None
    if spec[5]:
        with open(os.path.join(HERE, "programs", spec[5])) as f:
            stdin = f.read().replace("@N@", str(n)).encode()
    return cmd, dict(spec[2]), stdin


def programs_section(r, arms, smoke):
    n_by_program = {p[0]: (p[4] if smoke else p[3]) for p in PROGRAMS}
    prepare_inputs(r, n_by_program)
    results = {}
    calls, natives = [], []
    for name, *_ in PROGRAMS:
        if not shutil.which(name):
            raise Failure("program %s not installed (scripts/bench-deps.txt)" % name)
        cmd, env, stdin = program_command(r, name, n_by_program[name])
        for arm in arms:
            full_env = dict(env)
            full_env.update(r.arm_env(arm))
            if not smoke or name == PROGRAMS[0][0]:
                calls.append((name, arm, cmd, full_env, stdin))
            natives.append((name, arm, cmd, full_env, stdin))

    def one_callgrind(name, arm, cmd, env, stdin):
        proc, ir, out = r.callgrind(arm, cmd, "prog-" + name, env, stdin, region=False)
        return proc, ir, out

    got = r.parallel([(one_callgrind,) + c for c in calls])
    for (name, arm, cmd, env, stdin), (proc, ir, out) in zip(calls, got):
        entry = results.setdefault(name, {}).setdefault(arm.label, {})
        entry["ir"], entry["profile"] = ir, out
        r.record(("program", name), arm, hashlib.sha256(proc.stdout).hexdigest())
    for name, arm, cmd, env, stdin in natives:
        proc, peak = r.timed(cmd, env, stdin)
        entry = results.setdefault(name, {}).setdefault(arm.label, {})
        entry["peak_kib"] = peak
        entry["digest"] = hashlib.sha256(proc.stdout).hexdigest()
        if arm.label == r.args.perturb_arm:
            entry["digest"] = hashlib.sha256(proc.stdout + b"perturbed").hexdigest()
        r.record(("program", name), arm, entry["digest"])
    add_best_mimalloc(results, mimalloc_refs([a.label for a in arms]), "ir")
    return results, n_by_program


def program_table(results, arms):
    labels = [a.label for a in arms]
    headers = (["program"] + ["%s Ir" % l for l in labels]
               + ["best mimalloc", "nsalloc/mimalloc", "nsalloc/glibc", "null/nsalloc",
                  "output sha256"])
    rows, ratios = [], {}
    for name, by_arm in results.items():
        if "ir" not in by_arm.get("nsalloc", {}):
            continue
        ns = by_arm["nsalloc"]["ir"]
        rel = {l: ns / by_arm[l]["ir"] for l in labels + ["mimalloc"] if "ir" in by_arm.get(l, {})}
        ratios[name] = {"mimalloc": rel.get("mimalloc"), "glibc": rel.get("glibc"),
                        "null": by_arm["null"]["ir"] / ns if "null" in by_arm else None}
        for l in labels + ["mimalloc"]:
            ratios[name]["ir:" + l] = by_arm.get(l, {}).get("ir")
        rows.append([name] + [fmt_int(by_arm[l]["ir"]) if "ir" in by_arm.get(l, {}) else "n/a"
                              for l in labels]
                    + [by_arm.get("mimalloc", {}).get("best_of", "n/a"),
                       fmt_ratio(ratios[name]["mimalloc"]), fmt_ratio(ratios[name]["glibc"]),
                       fmt_ratio(ratios[name]["null"]), by_arm["nsalloc"]["digest"][:12]])
    return md_table(headers, rows), ratios


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
            proc, peak = r.timed(cmd, {})
            res = parse_line(proc.stdout.decode())
            res["peak_kib"] = peak
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


def churn_section(r, karms, smoke):
    waves, threads = (CHURN[2], CHURN[3]) if smoke else (CHURN[0], CHURN[1])
    ns = next(a for a in karms if a.label == "nsalloc")
    arms = [Arm("nsalloc", ns.exe, {}, None),
            Arm("nsalloc purge=0", ns.exe, {"BN_OPTIONS": "purge_delay_ms=0"}),
            Arm("nsalloc purge=never", ns.exe, {"BN_OPTIONS": "purge_delay_ms=-1"})]
    arms += [a for a in karms if a.label not in ("nsalloc", "nsalloc-override")]
    results = {}
    for arm in arms:
        res = r.native(arm, "churn-waves", waves, threads)
        results[arm.label] = res
    return results, waves, threads


# -------------------------------------------------------------------- chart --
# The arms drawn in the chart, as ratios to the best mimalloc of each row.
CHART_SERIES = ["nsalloc", "mimalloc-2.4.1", "mimalloc-3.4.3", "glibc", "jemalloc", "tcmalloc"]


def relative_throughput(entry, ref="mimalloc"):
    """Median per-round throughput of every arm relative to `ref`."""
    times = entry["times"]
    if ref not in times:
        return {}
    return {l: statistics.median(r_ / a_ for r_, a_ in zip(times[ref], ts))
            for l, ts in times.items()}


def write_chart(path, work, data):
    """A 2x3 SVG (gnuplot): ratios vs mimalloc for every section, the churn
    RSS curves and multi-copy flatness."""
    if not shutil.which("gnuplot"):
        raise Failure("gnuplot not installed (scripts/bench-deps.txt)")
    lines = ['set terminal svg size 1500,960 dynamic noenhanced font "sans,10" background "white"',
             'set output "%s"' % path,
             "set multiplot layout 2,3 title \"nsalloc vs peers (%s)\"" % data["title"],
             "set style data histograms", "set style histogram clustered gap 1",
             "set style fill solid 0.85 border -1", "set key top left font \",8\"",
             "set xtics rotate by -40 font \",8\"", "set grid ytics",
             "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2"]

    def histogram(name, title, ylabel, rows, log=True):
        # Only the arms measured here: an all-NaN column (the prebuilt peers
        # absent, on any user's machine) stops gnuplot with "No valid points".
        present = [s for s in CHART_SERIES if any(values.get(s) for _, values in rows)]
        lines.append("set title \"%s\"" % title)
        lines.append("set ylabel \"%s\"" % ylabel)
        lines.append("set logscale y" if log else "unset logscale y")
        lines.append("set yrange [*:*]")
        if not present:
            lines.append("set label 9 \"no data in this run\" at graph 0.5, 0.5 center")
            lines.append("plot [0:1] [0:1] 2 notitle")
            lines.append("unset label 9")
            return
        lines.append("$%s << EOD" % name)
        lines.append("x " + " ".join(present))
        for label, values in rows:
            lines.append('"%s" ' % label + " ".join(
                "%.4f" % values[s] if values.get(s) else "NaN" for s in present))
        lines.append("EOD")
        plot = ", ".join("$%s using %d%s title columnhead(%d)" % (name, i + 2,
                                                                  ":xtic(1)" if i == 0 else "",
                                                                  i + 2)
                         for i in range(len(present)))
        lines.append("plot " + plot)

    histogram("perop", "Per-operation scan: instructions / op vs best mimalloc (lower is better)",
              "ratio to best mimalloc (log)", data["perop"])
    histogram("programs", "Whole programs (LD_PRELOAD): instructions vs best mimalloc",
              "ratio to best mimalloc (log)", data["programs"])
    histogram("mt", "Multi-threaded kernels: throughput vs best mimalloc (higher is better)",
              "ratio to best mimalloc (log)", data["mt"])
    histogram("rss", "Peak RSS vs best mimalloc (lower is better)", "ratio to best mimalloc (log)",
              data["rss"])
    # Churn: RSS over the waves, one line per arm.
    lines.append("unset arrow 1")
    lines.append("set style data linespoints")
    lines.append("unset logscale y")
    lines.append("set xtics rotate by 0")
    lines.append("set title \"Thread-wave churn: RSS after each wave (MiB)\"")
    lines.append("set ylabel \"MiB\"")
    lines.append("set xlabel \"wave\"")
    plots = []
    for i, (label, samples) in enumerate(data["churn"]):
        lines.append("$churn%d << EOD" % i)
        lines += ["%d %.2f" % (s["wave"], s["rss_kib"] / 1024) for s in samples]
        lines.append("EOD")
        plots.append("$churn%d using 1:2 title \"%s\" pt 7 ps 0.4" % (i, label))
    if data["churn_live"]:
        lines.append("$live << EOD")
        lines += ["%d %.2f" % (s["wave"], s["live_kib"] / 1024) for s in data["churn_live"]]
        lines.append("EOD")
        plots.append("$live using 1:2 title \"live set\" with lines lw 3 lc rgb \"black\"")
    lines.append("plot " + ", ".join(plots))
    # Multi-copy flatness.
    lines.append("unset xlabel")
    lines.append("set style data histograms")
    lines.append("set title \"Private copies active at once (flat is the goal)\"")
    lines.append("set ylabel \"relative to 1 copy\"")
    lines.append("set yrange [0:1.5]")
    lines.append("$mc << EOD")
    lines.append("x instructions/op throughput")
    for label, ir, tput in data["multicopy"]:
        lines.append('"%s" %.4f %.4f' % (label, ir, tput))
    lines.append("EOD")
    lines.append("set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2")
    lines.append("plot $mc using 2:xtic(1) title columnhead(2), '' using 3 title columnhead(3)")
    lines.append("unset multiplot")
    script = os.path.join(work, "chart.gp")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    run(["gnuplot", script])


# ----------------------------------------------------------------- document --
def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = "%.1f GiB" % (int(f.readline().split()[1]) / 1048576)
    except OSError:
        pass
    return "%s, %d CPUs, %s RAM, %s %s" % (cpu, os.cpu_count() or 0, mem, platform.system(),
                                          platform.release())


def source_version():
    """The commit the suite measured, and whether core/ had local changes."""
    try:
        head = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.decode().strip()
        dirty = run(["git", "-C", ROOT, "status", "--porcelain", "--", "core", "sdk"]).stdout
        return head + (" with uncommitted changes in core/ or sdk/" if dirty.strip() else "")
    except (Failure, FileNotFoundError):
        return "unknown (not a git checkout)"


def package_versions():
    names = ["libc6", "libmimalloc2.0", "libjemalloc2", "libtcmalloc-minimal4", "valgrind",
             "lua5.4", "python3", "sqlite3", "perl", "jq", "xz-utils"]
    out = []
    for name in names:
        try:
            v = run(["dpkg-query", "-W", "-f=${Version}", name]).stdout.decode()
            out.append("%s %s" % (name, v))
        except (Failure, FileNotFoundError):
            pass
    return ", ".join(out)


def worst_profiles(r, perop_results, ratios, count=3):
    """callgrind per-function self cost of nsalloc vs mimalloc for the worst
    per-op rows, per op of the kernel."""
    ranked = sorted((k for k in ratios if ratios[k]["mimalloc"]),
                    key=lambda k: -ratios[k]["mimalloc"])[:count]
    parts = []
    for kernel in ranked:
        parts.append("#### `%s`: nsalloc/mimalloc = %s\n" % (kernel,
                                                            fmt_ratio(ratios[kernel]["mimalloc"])))
        for label in ("nsalloc", "mimalloc"):
            res = perop_results[kernel][label]
            rows = [[fmt_int(ir), "%.2f" % (ir / res["ops"]), "`%s`" % name]
                    for ir, name in callgrind_functions(res["profile"])]
            parts.append("%s (%.1f Ir/op in the region):\n\n%s\n" % (
                res.get("best_of", label), res["ir_per_op"],
                md_table(["Ir", "Ir/op", "function"], rows)))
    return "\n".join(parts)


def peak_rss_rows(sections, labels):
    """(workload, {arm: peak KiB}) for every workload that has a native run."""
    rows = []
    for prefix, results in sections:
        for name, by_arm in results.items():
            peaks = {}
            for l in labels:
                v = by_arm.get(l)
                if isinstance(v, dict) and "peak_kib" in v:
                    peaks[l] = v["peak_kib"]
                elif isinstance(v, list) and v:
                    peaks[l] = statistics.median(v)
            if "nsalloc" in peaks:
                rows.append(("%s %s" % (prefix, name), peaks))
    return rows


def write_document(r, out, chart, m):
    labels_k = [a.label for a in m["karms"]]
    labels_p = [a.label for a in m["parms"]]
    perop_table, perop_ratios = ir_table(m["perop"], m["karms"])
    st_table, st_ratios = ir_table(m["classic_st"], m["karms"])
    mt_table, mt_ratios = wall_table(m["classic_mt"], m["karms"])
    prog_table, prog_ratios = program_table(m["programs"], m["parms"])

    # Targets. Single-threaded: every user-relevant row of the scan and of the
    # classic single-threaded kernels, against the better mimalloc.
    st_rows = [("%s (%s)" % (k, sec), v["mimalloc"]) for sec, ratios in
               (("scan", perop_ratios), ("classic", st_ratios)) for k, v in ratios.items()
               if v["mimalloc"] and v["class"] == "user"]
    worst_st = max(st_rows, key=lambda x: x[1]) if st_rows else ("n/a", float("nan"))
    st_over = [k for k, v in st_rows if v > TARGETS["st_max"]]
    prog_mi = geomean([v["mimalloc"] for v in prog_ratios.values()])
    prog_gl = geomean([v["glibc"] for v in prog_ratios.values()])
    mt_rows = []
    for name, rt in mt_ratios.items():
        mt_rows.append((name, rt.get("mimalloc"), rt.get("glibc")))
    peak_mt = {name: e["peaks"] for name, e in m["classic_mt"].items()}
    rss_rows = peak_rss_rows([("op", m["perop"]), ("st", m["classic_st"]), ("mt", peak_mt),
                              ("program", m["programs"]), ("churn", m["churn"])],
                             sorted(set(labels_k + labels_p)))
    # Peak RSS against the best (lowest) other allocator of each workload.
    others = [l for l in set(labels_k + labels_p) if l not in ("nsalloc", "nsalloc-override",
                                                                 "null", "mimalloc")]
    rss_ratio = [(w, p["nsalloc"] / min(p[l] for l in others if p.get(l))
                  if any(p.get(l) for l in others) else None) for w, p in rss_rows]
    worst_rss = max((x for x in rss_ratio if x[1]), key=lambda x: x[1],
                    default=("n/a", float("nan")))
    mc = m["multicopy"]
    control = mc["rss"]["control"]["used_kib"]
    idle1, idle16 = mc["rss"][1]["used_kib"] - control, mc["rss"][16]["used_kib"] - control
    t = TARGETS
    targets = [
        ["every single-threaded user-relevant row, nsalloc/best mimalloc Ir",
         "<= %.2f" % t["st_max"], "worst %s (%s); %d of %d rows over" % (
             fmt_ratio(worst_st[1]), worst_st[0], len(st_over), len(st_rows)),
         verdict(not st_over and bool(st_rows))],
        ["programs geomean nsalloc/mimalloc Ir", "<= %.2f" % t["programs_vs_mimalloc"],
         fmt_ratio(prog_mi), verdict(prog_mi <= t["programs_vs_mimalloc"])],
        ["programs geomean nsalloc/glibc Ir", "<= %.2f" % t["programs_vs_glibc"],
         fmt_ratio(prog_gl), verdict(prog_gl <= t["programs_vs_glibc"])],
    ]
    for name, vs_mi, vs_gl in mt_rows:
        if vs_mi is None:
            continue
        targets.append(["MT %s throughput vs best mimalloc" % name,
                        ">= %.2f" % t["mt_vs_mimalloc"], fmt_ratio(vs_mi),
                        verdict(vs_mi >= t["mt_vs_mimalloc"])])
        faults = mt_ratios[name].get("faults")
        if faults:
            targets.append(["MT %s page faults vs best mimalloc" % name,
                            "<= %.2f" % t["mt_faults_vs_mimalloc"], fmt_ratio(faults),
                            verdict(faults <= t["mt_faults_vs_mimalloc"])])
        if m["classic_mt"][name]["kernel"] in ("larson", "xmalloc"):
            targets.append(["MT %s throughput vs glibc" % name, ">= %.2f" % t["mt_vs_glibc"],
                            fmt_ratio(vs_gl), verdict(vs_gl >= t["mt_vs_glibc"])])
    targets += [
        ["peak RSS nsalloc / best other arm, worst workload", "<= %.2f" % t["peak_rss_vs_best"],
         "%s (%s)" % (fmt_ratio(worst_rss[1]), worst_rss[0]),
         verdict(worst_rss[1] <= t["peak_rss_vs_best"])],
        ["idle RSS of one loaded copy", "< %d KiB" % t["idle_copy_kib"], "%d KiB" % idle1,
         verdict(idle1 < t["idle_copy_kib"])],
        ["idle RSS of 16 loaded copies", "< %d KiB" % t["idle_16_kib"], "%d KiB" % idle16,
         verdict(idle16 < t["idle_16_kib"])],
    ]
    missed = [row for row in targets if "MISSED" in row[3]]

    doc = []
    doc.append("# nsalloc benchmarks\n")
    doc.append("_Generated by `bench/run.py` (`make bench`); every number below was measured by "
               "that run. Do not edit by hand: edit `bench/` and re-run._\n")
    doc.append("- **Date:** %s\n- **Machine:** %s\n- **Source:** nsalloc %s\n"
               "- **Build:** %s, %s\n- **Peers:** %s%s\n"
               "- **Command:** `%s` (%.0f s)\n" % (
                   m["date"], machine_info(), m["source"], r.cfg["build_type"], r.cfg["compiler"],
                   package_versions(), m["peers_note"], m["command"], m["elapsed"]))
    doc.append("## Targets\n")
    doc.append("%d of %d targets met.%s\n" % (len(targets) - len(missed), len(targets),
                                              " Where a target is missed, section 6 shows the "
                                              "callgrind per-function evidence." if missed else ""))
    doc.append(md_table(["target", "goal", "measured", "verdict"], targets) + "\n")
    doc.append("![benchmark chart](%s)\n" % os.path.basename(chart))
    with open(os.path.join(HERE, "method.md")) as f:
        doc.append(f.read())
    doc.append("### Arms\n")
    doc.append("Each arm's `malloc` was resolved at run time (`dladdr`) and checked against the "
               "library the arm claims to be:\n")
    doc.append(md_table(["arm", "used for", "malloc found in"], m["arm_check"]) + "\n")

    doc.append("## 1. Per-operation scan (instructions per operation, callgrind)\n")
    doc.append("Instructions retired inside each kernel's measured region divided by its "
               "operations; lower is better. Ratios are nsalloc's count over the peer's.\n")
    doc.append(perop_table + "\n")
    doc.append("Geometric means, nsalloc/best mimalloc: %s. The override (preloaded like the "
               "peers): %s. nsalloc/glibc: %s.\n" % (
                   class_geomeans(perop_ratios), class_geomeans(perop_ratios, "override"),
                   class_geomeans(perop_ratios, "glibc")))
    doc.append("Pathological rows, and why they are kept out of the user-relevant mean:\n")
    doc.append("\n".join("- `%s`: %s" % kv for kv in PATHOLOGICAL.items()) + "\n")
    doc.append("### Per-call fast paths (callgrind)\n")
    doc.append("Instructions per call of `malloc(32)` and `free` on the owning thread (rounds "
               "of 50 allocations then 50 frees), measured the same way for every arm: the "
               "inclusive cost of the calls made from two noinline harness functions "
               "(`bench/fastpath.c`, `bench/callgrind_calls.py`), amortised slow paths "
               "included.\n")
    doc.append(m["fastpath_table"] + "\n")
    doc.append("## 2. Classic kernels\n")
    doc.append("### Single-threaded (instructions per operation, callgrind)\n")
    doc.append(st_table + "\n")
    doc.append("Geometric means, nsalloc/best mimalloc: %s.\n" % class_geomeans(st_ratios))
    doc.append("### Multi-threaded (wall clock, %d interleaved rounds)\n" % m["pairs"])
    doc.append("Throughput of nsalloc relative to each peer (median over rounds of the per-round "
               "ratio; > 1 means nsalloc is faster). The null arm is nsalloc against itself: its "
               "spread is this machine's noise floor, so differences inside it are not "
               "results. The best mimalloc of a row is the release with the lower median time "
               "on that kernel (named in brackets).\n")
    doc.append(mt_table + "\n")
    doc.append("## 3. Whole programs under the override (instructions, callgrind)\n")
    doc.append("Each program runs with the allocator preloaded (`LD_PRELOAD`; glibc: none). Its "
               "standard output must be byte-identical across arms.\n")
    doc.append(prog_table + "\n")
    doc.append("Geometric mean nsalloc/best mimalloc: **%s**, nsalloc/glibc: **%s**.\n" % (
        fmt_ratio(prog_mi), fmt_ratio(prog_gl)))
    doc.append("## 4. Private copies in one process\n")
    mc_rows, base_ir = [], mc["ir"]["1 copies"]["ir_per_op"]
    base_t = statistics.median(mc["times"]["1 copies"])
    for label in mc["ir"]:
        tput = [b / x for b, x in zip(mc["times"]["1 copies"], mc["times"][label])]
        mc_rows.append([label, "%.1f" % mc["ir"][label]["ir_per_op"],
                        fmt_ratio(mc["ir"][label]["ir_per_op"] / base_ir),
                        "%.2f" % (mc["n_wall"] * 2 / statistics.median(mc["times"][label]) / 1e6),
                        "%s [%s, %s]" % (fmt_ratio(statistics.median(tput)), fmt_ratio(min(tput)),
                                         fmt_ratio(max(tput)))])
    doc.append("A live set of small blocks spread over K copies (each a dlopen()ed module "
               "with its own prefix); the work is identical for every K. Instructions: one "
               "thread, %s ops; throughput: 2 threads, %s ops each, %d interleaved rounds "
               "(null = 1 copy again).\n" % (fmt_int(mc["n_ir"]), fmt_int(mc["n_wall"]),
                                             m["pairs"]))
    doc.append(md_table(["copies", "Ir/op", "vs 1 copy", "Mops/s",
                         "throughput vs 1 copy: median [min, max]"], mc_rows) + "\n")
    doc.append("Idle RSS: growth over the process before loading (median of runs). The "
               "control is a module of the same shape with no allocator (it forwards to the C "
               "library): its growth is what dlopen() itself costs, and the targets count a "
               "copy's growth beyond it. Anonymous memory is the part that is not the modules' "
               "code pages.\n")
    doc.append(md_table(["modules", "loaded", "after one malloc+free each", "of which anonymous",
                         "beyond the control"],
                        [[k, "%d KiB" % v["loaded_kib"], "%d KiB" % v["used_kib"],
                          "%d KiB" % v["used_anon_kib"],
                          "%d KiB" % (v["used_kib"] - control) if k != "control" else ""]
                         for k, v in ((1, mc["rss"][1]), (16, mc["rss"][16]),
                                      ("control", mc["rss"]["control"]))]) + "\n")
    doc.append("## 5. Memory\n")
    doc.append("### Peak RSS (KiB, `/usr/bin/time`; multi-threaded rows: median over rounds)\n")
    rss_labels = [l for l in ["nsalloc", "nsalloc-override", "glibc", DEBIAN_MIMALLOC]
                  + [label for label, _ in PEERS] + ["jemalloc", "tcmalloc", "null"]
                  if any(l in p for _, p in rss_rows)]
    doc.append(md_table(["workload"] + rss_labels + ["nsalloc / best other"],
                        [[w] + [fmt_int(p[l]) if l in p else "" for l in rss_labels]
                         + [fmt_ratio(ratio)] for (w, p), (_, ratio) in zip(rss_rows, rss_ratio)])
               + "\n")
    doc.append("### Thread-wave churn (RSS returning toward the live set)\n")
    churn_rows = []
    for label, res in m["churn"].items():
        s = res["samples"]
        if not s:
            continue
        tail = s[len(s) // 2:]
        churn_rows.append([label, fmt_int(res["peak_kib"]), fmt_int(max(x["rss_kib"] for x in s)),
                           fmt_int(s[-1]["rss_kib"]), fmt_int(s[-1]["live_kib"]),
                           fmt_ratio(statistics.mean(x["rss_kib"] for x in tail)
                                     / max(1, statistics.mean(x["live_kib"] for x in tail)))])
    doc.append("%d waves of %d threads; after each wave the main thread sleeps 50 ms and "
               "samples RSS. nsalloc runs three ways: default options, "
               "`purge_delay_ms=0` and `purge_delay_ms=-1` (never purge).\n" % (
                   m["churn_waves"], m["churn_threads"]))
    doc.append(md_table(["arm", "peak RSS (time)", "max sampled RSS", "final RSS",
                         "final live set", "RSS / live (2nd half mean)"], churn_rows) + "\n")
    doc.append("## 6. Where nsalloc is behind: per-function profiles\n")
    doc.append("callgrind self cost (`callgrind_annotate --inclusive=no`) inside the measured "
               "region for the per-op rows with the highest nsalloc/mimalloc ratio. mimalloc "
               "inlines most of its fast paths into `mi_malloc`/`mi_free`, so compare totals "
               "per op, not names.\n")
    doc.append(m["profiles"] + "\n")
    doc.append(read_analysis())
    doc.append(CORRECTNESS_HEADING)
    if r.defects:
        doc.append(md_table(["kernel", "arm", "defects"],
                            [[k, a, fmt_int(c)] for (k, a), c in sorted(r.defects.items())]) + "\n")
        doc.append("A defect is a result the kernel could verify as wrong and survive (e.g. "
                   "`aligned_alloc` returning a misaligned block); the run goes on so the row "
                   "stays comparable, and the arm's stderr shows the first cases.\n")
    else:
        doc.append("No arm returned a block the kernels could verify as wrong.\n")
    doc.append("## Work parity\n")
    doc.append("%d comparisons (kernel checksums and operation counts, program output digests), "
               "all identical across arms.\n" % len(r.parity))
    with open(out, "w") as f:
        f.write("\n".join(doc))
    return perop_ratios, prog_ratios, targets


CORRECTNESS_HEADING = "## Correctness findings\n"


def read_analysis():
    with open(os.path.join(HERE, "analysis.md")) as f:
        return f.read()


def embed_analysis(doc_path):
    """Replace the copy of analysis.md embedded in a report written by this
    runner (it sits between the profiles and the correctness findings) with
    the file as it is now, leaving every measurement alone."""
    analysis = read_analysis()
    with open(doc_path) as f:
        doc = f.read()
    first_line = analysis.split("\n", 1)[0]
    start, end = doc.find(first_line + "\n"), doc.find("\n" + CORRECTNESS_HEADING)
    if start < 0 or end < start:
        print("run.py: %s has no embedded analysis starting with %r" % (doc_path, first_line),
              file=sys.stderr)
        return 1
    with open(doc_path, "w") as f:
        f.write(doc[:start] + analysis + doc[end:])
    return 0


def chart_data(m, perop_ratios, prog_ratios):
    def rel(ratios, key_ir):
        rows = []
        for name, v in ratios.items():
            mi = v.get("ir:mimalloc")
            if mi:
                rows.append((name, {s: v["ir:" + s] / mi for s in CHART_SERIES
                                    if v.get("ir:" + s)}))
        return rows
    mt = [(name, relative_throughput(e)) for name, e in m["classic_mt"].items()]
    rss = []
    for w, p in peak_rss_rows([("op", m["perop"]), ("program", m["programs"])],
                              CHART_SERIES + ["mimalloc"]):
        if p.get("mimalloc"):
            rss.append((w, {s: p[s] / p["mimalloc"] for s in p}))
    churn = [(l, res["samples"]) for l, res in m["churn"].items() if l != "null"]
    live = next(iter(m["churn"].values()))["samples"]
    mc = m["multicopy"]
    base_ir = mc["ir"]["1 copies"]["ir_per_op"]
    multicopy = []
    for label in mc["ir"]:
        if label == "null":
            continue
        tput = statistics.median(b / x for b, x in zip(mc["times"]["1 copies"], mc["times"][label]))
        multicopy.append((label, mc["ir"][label]["ir_per_op"] / base_ir, tput))
    return {"title": m["date"], "perop": rel(perop_ratios, "ir"), "programs": rel(prog_ratios, "ir"),
            "mt": mt, "rss": rss, "churn": churn, "churn_live": live, "multicopy": multicopy}


# --------------------------------------------------------------------- main --
def select(specs, args):
    """The specs --kernels names (all without it), n at most --n."""
    names = args.kernels.split(",") if args.kernels else None
    return [(k, min(full, args.n or full), small, threads) for k, full, small, threads in specs
            if names is None or k in names]


def run_only(r, m, sections, pairs):
    """Quick re-measurement of chosen sections: tables on stdout, no report."""
    karms, parms, args = m["karms"], m["parms"], r.args
    try:
        check_arms(r, karms, parms)
        for name in sections:
            if name == "perop":
                results = callgrind_section(r, karms, select(PER_OP, args), False, native=False)
                table, ratios = ir_table(results, karms)
                print(table)
                print("nsalloc/best mimalloc: %s" % class_geomeans(ratios).replace("*", ""))
                if args.profiles:
                    print(worst_profiles(r, results, ratios))
            elif name == "st":
                print(ir_table(callgrind_section(r, karms, select(CLASSIC_ST, args), False,
                                                 native=False), karms)[0])
            elif name == "fastpath":
                print(fastpath_section(r, karms, False))
            elif name == "mt":
                print(wall_table(interleaved_section(r, karms, select(CLASSIC_MT, args), pairs,
                                                     False), karms)[0])
            elif name == "programs":
                print(program_table(programs_section(r, parms, False)[0], parms)[0])
            else:
                raise Failure("unknown section " + name)
    except Failure as e:
        print("run.py: FAILED: %s" % e, file=sys.stderr)
        return 1
    bad = r.parity_failures()
    for key, digests in bad:
        print("PARITY FAILURE: %s: %s" % (key, digests))
    return 1 if bad else 0



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", help="BUILD/bench/bench-config.json (required to measure)")
    ap.add_argument("--work", help="directory for profiles and scratch files (required to measure)")
    ap.add_argument("--out", help="Markdown report (default: WORK/benchmarks.md)")
    ap.add_argument("--chart", help="SVG chart (default: WORK/benchmarks.svg)")
    ap.add_argument("--smoke", action="store_true", help="tiny inputs: the harness end to end")
    ap.add_argument("--parity-only", action="store_true", help="only the kernels' parity check")
    ap.add_argument("--perturb-arm", help="negative control: perturb this arm's checksums")
    ap.add_argument("--pairs", type=int, default=None, help="interleaved rounds (default 10)")
    ap.add_argument("--jobs", type=int, default=2, help="concurrent callgrind runs")
    ap.add_argument("--only", help="comma-separated sections (perop, st, fastpath, mt, programs) "
                    "to run and print as tables, without writing the report")
    ap.add_argument("--kernels", help="with --only: just these kernels (comma-separated)")
    ap.add_argument("--arms", help="with --only: just these arms (nsalloc is always one)")
    ap.add_argument("--n", type=int, help="with --only: at most this size (the full one by default)")
    ap.add_argument("--profiles", action="store_true",
                    help="with --only perop: per-function profiles of the worst rows")
    ap.add_argument("--peers", default=PEERS_DIR,
                    help="folder of prebuilt mimalloc releases (default ../shared/peers)")
    ap.add_argument("--embed-analysis", metavar="DOC",
                    help="only replace the copy of bench/analysis.md embedded in the report DOC "
                    "with the file as it is now; no measurement runs")
    args = ap.parse_args()
    if args.embed_analysis:
        return embed_analysis(args.embed_analysis)
    if not args.config or not args.work:
        ap.error("--config and --work are required")
    with open(args.config) as f:
        cfg = json.load(f)
    r = Runner(args, cfg)
    out = args.out or os.path.join(r.work, "benchmarks.md")
    chart = args.chart or os.path.join(r.work, "benchmarks.svg")
    pairs = args.pairs or (2 if args.smoke else 10)
    start = time.time()
    peers = peer_libs(args.peers)
    karms, parms = kernel_arms(cfg, peers), program_arms(cfg, peers)
    if args.arms:
        keep = set(args.arms.split(",")) | {"nsalloc"}
        karms = [a for a in karms if a.label in keep]
        parms = [a for a in parms if a.label in keep]
    if cfg["build_type"] != "Release" and not args.smoke:
        print("run.py: warning: build type %s, not Release" % cfg["build_type"], file=sys.stderr)

    def step(name):
        print("[%6.1f s] %s" % (time.time() - start, name), flush=True)

    m = {"karms": karms, "parms": parms, "pairs": pairs, "source": source_version(),
         "peers_note": ("; prebuilt %s (`../shared/peers`)" % ", ".join(l for l, _ in peers)
                        if peers else "; no prebuilt peers (`../shared/peers` absent): "
                        "'mimalloc' is Debian's %s" % DEBIAN_MIMALLOC)}
    if args.only:
        return run_only(r, m, args.only.split(","), pairs)
    try:
        step("checking arms")
        m["arm_check"] = check_arms(r, karms, parms)
        if args.parity_only:
            for kernel, full, small, threads in PER_OP + CLASSIC_ST:
                for arm in karms:
                    r.native(arm, kernel, small, threads or 2)
        else:
            step("per-operation scan (callgrind)")
            m["perop"] = callgrind_section(r, karms, PER_OP, args.smoke, not args.smoke)
            step("per-call fast paths (callgrind)")
            m["fastpath_table"] = fastpath_section(r, karms, args.smoke)
            step("classic single-threaded kernels (callgrind)")
            m["classic_st"] = callgrind_section(r, karms, CLASSIC_ST, args.smoke, not args.smoke)
            step("classic multi-threaded kernels (interleaved wall clock)")
            m["classic_mt"] = interleaved_section(r, karms, CLASSIC_MT, pairs, args.smoke)
            step("whole programs")
            m["programs"], _ = programs_section(r, parms, args.smoke)
            step("multi-copy")
            m["multicopy"] = multicopy_section(r, args.smoke, pairs)
            step("thread-wave churn")
            m["churn"], m["churn_waves"], m["churn_threads"] = churn_section(r, karms, args.smoke)
    except Failure as e:
        print("run.py: FAILED: %s" % e, file=sys.stderr)
        return 1
    bad = r.parity_failures()
    for key, digests in bad:
        print("PARITY FAILURE: %s: %s" % (" ".join(map(str, key)),
                                          ", ".join("%s=%s" % kv for kv in sorted(digests.items()))))
    if args.parity_only:
        print("parity: %d comparisons, %d differ" % (len(r.parity), len(bad)))
        return 1 if bad else 0
    if bad:
        return 1
    step("profiles of the worst rows")
    _, ratios = ir_table(m["perop"], karms)
    m["profiles"] = worst_profiles(r, m["perop"], ratios) if not args.smoke else \
        "(not profiled in the smoke run)"
    m["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    m["command"] = "make bench" if not args.smoke else "run.py --smoke"
    m["elapsed"] = time.time() - start
    perop_ratios, prog_ratios, targets = write_document(r, out, chart, m)
    write_chart(os.path.abspath(chart), r.work, chart_data(m, perop_ratios, prog_ratios))
    step("wrote %s and %s" % (out, chart))
    for row in targets:
        print("  %-48s %-10s %-24s %s" % tuple(x.replace("*", "") for x in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
