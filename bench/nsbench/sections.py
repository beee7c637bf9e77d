"""The kernel sections: each runs its kernels on the arms and returns the
measurements (no formatting)."""
import os
import statistics

import callgrind_calls  # bench/callgrind_calls.py, beside run.py (on sys.path)
from .arms import Arm, add_best_mimalloc, mimalloc_refs
from .measure import Failure, run
from .tables import md_table
from .workloads import (CHURN, CLASSIC_ST, FASTPATH, FASTPATH_CALLERS, IDLE, IDLE_KERNELS,
                        IDLE_SMOKE_ARMS, MODULE_DIVISOR, PER_OP)


def check_arms(r, karms, parms):
    """Each arm's malloc must live in the library it claims to be."""
    lines = []
    probe = r.cfg["arms"]["glibc"]
    for arm in karms:
        obj = run([arm.exe, "--info"], arm.env).stdout.decode().split("malloc_object=")[1].strip()
        # A module's link named by a soname resolves to the peer's library.
        if arm.expect not in obj and arm.expect not in os.path.realpath(obj):
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


def module_specs(specs=None):
    """The module arm's kernels: the fast-path pair, then every
    single-threaded kernel, at 1/MODULE_DIVISOR of the scan's length."""
    kernel, full, small = FASTPATH
    specs = specs or [(kernel, full, small, 1)] + PER_OP + CLASSIC_ST
    return [(k, max(small, full // MODULE_DIVISOR), small, t) for k, full, small, t in specs]


def module_section(r, marms, smoke):
    """Ir/op of the module arm's kernels on its arms (the smoke: the pair)."""
    return callgrind_section(r, marms, module_specs(), smoke, callgrind_all=not smoke,
                             native=False)


def interleave(arms, rounds, measure):
    """Runs measure(arm) for every arm in every round, alternating the order
    (A B C .. then .. C B A) so drift in the machine's load hits every arm
    alike. measure returns (wall s, CPU s, peak KiB, faults, ops); the result
    holds one series per quantity and arm. 'mimalloc' is the reference
    release with the lower median time, all its series as measured: not the
    faster release of each round, as the minimum of two noisy samples is
    biased low (larson on d8433c2: 0.853 and 0.832 against each release,
    0.518 against the per-round minimum)."""
    series = {key: {a.label: [] for a in arms} for key in ("times", "cpu", "peaks", "faults")}
    ops = None
    for rnd in range(rounds):
        for arm in (arms if rnd % 2 == 0 else arms[::-1]):
            *values, ops = measure(arm)
            for key, value in zip(("times", "cpu", "peaks", "faults"), values):
                series[key][arm.label].append(value)
    times = series["times"]
    refs = mimalloc_refs(times)
    best = min(refs, key=lambda l: statistics.median(times[l])) if refs else None
    if best:
        for values in series.values():
            values["mimalloc"] = values[best]
    return dict(series, ops=ops, best_of=best)


def interleaved_section(r, arms, specs, pairs, smoke, factor=1):
    """Wall clock of the multi-threaded kernels (at `factor` times their
    length), interleaved; ratios are medians of per-round ratios; the null
    arm's spread is the floor. Faults and peak RSS from /usr/bin/time."""
    threads_default = max(2, os.cpu_count() or 2)
    results = {}
    for kernel, full, small, threads in specs:
        n = (small if smoke else full) * factor
        if n == 0:
            continue
        t = threads or threads_default

        def measure(arm):
            res = r.native(arm, kernel, n, t)
            return res["seconds"], res["cpu_seconds"], res["peak_kib"], res["faults"], res["ops"]
        name = "%s (T=%d%s)" % (kernel, t, ", %dx" % factor if factor != 1 else "")
        results[name] = dict(interleave(arms, pairs, measure), kernel=kernel, threads=t)
    return results


def idle_section(r, karms, smoke):
    """RSS growth over the start after the frees and after 1 s idle, per
    idle kernel and arm (the smoke: IDLE_SMOKE_ARMS only, each run sleeps)."""
    n = IDLE[1] if smoke else IDLE[0]
    arms = [a for a in karms if not a.null and (not smoke or a.label in IDLE_SMOKE_ARMS)]
    results = {}
    for kernel in IDLE_KERNELS:
        for arm in arms:
            res = r.native(arm, kernel, n, 1)
            if len(res["samples"]) != 1:
                raise Failure("%s on %s printed %d samples, not 1" % (kernel, arm.label,
                                                                       len(res["samples"])))
            results.setdefault(kernel, {})[arm.label] = dict(res["samples"][0],
                                                             peak_kib=res["peak_kib"])
    return results, n


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
