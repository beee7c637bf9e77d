"""The kernel sections: each runs its kernels on the arms and returns the
measurements (no formatting)."""
import os
import statistics

import callgrind_calls  # bench/callgrind_calls.py, beside run.py (on sys.path)
from .arms import Arm, add_best_mimalloc, mimalloc_refs
from .measure import Failure, run
from .tables import md_table
from .workloads import CHURN, FASTPATH, FASTPATH_CALLERS


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
