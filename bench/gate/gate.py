#!/usr/bin/env python3
"""gate.py - the deterministic performance gate (docs/performance.md, "The CI gate").

  gate.py --config GATE_CONFIG [--baseline FILE] [--runs N] [--save FILE]
      measure, print every ratio beside its committed one, exit 1 if one grew
  gate.py --config GATE_CONFIG --write-baseline FILE [--runs N]
      measure and write the ratios to commit (`make gate-baseline`)
  gate.py --config GATE_CONFIG --negative-control
      the same measurement of a deliberately slower build: must exit 1
  gate.py --judge SAVED --baseline FILE
      judge measurements saved by --save again, without measuring

Every metric is nsalloc's count divided by mimalloc 3.4.3's, both measured in
this run: instructions (callgrind, deterministic) of the malloc(32)+free pair
and of the live-set kernel, in the module shape (a private copy in a shared
module against mimalloc bundled into one the same way) and preloaded (the
override against mimalloc's .so); minor faults (median of --runs interleaved
runs) of larson, mstress and malloc-large. A ratio more than 3% above its
committed value fails the gate. Without the peers (GATE_CONFIG names no
mimalloc 3.4.3) it prints one SKIPPED line and exits 0.

Exit status: 0 pass or skipped, 1 a ratio grew too much, 2 an error (a
program failed, the baseline is malformed or from another compiler).
"""
import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import callgrind_calls  # noqa: E402  (bench/callgrind_calls.py)

TOLERANCE = 0.03  # issue 22, target 4: a ratio may grow by at most 3%
PEER = "mimalloc 3.4.3"
REGENERATE = "make gate-baseline"
BASELINE_MAX_BYTES = 1 << 20
CALLGRIND_TIMEOUT = 300  # seconds for one profiled run (a few seconds normally)
NATIVE_TIMEOUT = 120

# The fault programs: bench kernels with their arguments, in the module shape.
FAULT_PROGRAMS = {
    "faults.larson": ["larson", "n=4000000", "threads=2"],
    "faults.mstress": ["mstress", "n=2000000", "threads=2"],
    "faults.malloc-large": ["malloc-large", "n=100"],
}
INSTRUCTION_METRICS = ["pair.module", "pair.override", "live-set.module", "live-set.override"]
METRICS = INSTRUCTION_METRICS + list(FAULT_PROGRAMS)


class GateError(Exception):
    """A measurement or an input the gate cannot trust: exit 2, never a pass."""


def child_env(extra):
    """The environment of a measured run: no inherited allocator options or
    preloads, which would make both arms measure something else."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "NSALLOC_OPTIONS", "BN_OPTIONS", "FP_OPTIONS")
           and not k.startswith("MIMALLOC_")}
    env.update(extra)
    return env


def run(cmd, env, timeout):
    """Runs cmd; returns (stdout, its minor faults). The faults are the growth
    of the waited-for children's total: the gate runs one child at a time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GateError("%s: no result within %d s" % (" ".join(cmd), timeout))
    except OSError as e:
        raise GateError("%s: %s" % (" ".join(cmd), e))
    if proc.returncode != 0:
        raise GateError("%s failed (exit %d): %s" % (" ".join(cmd), proc.returncode,
                        proc.stderr.decode(errors="replace").strip()[-2000:]))
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
    return proc.stdout.decode(errors="replace"), faults


def callgrind(cmd, env, work, start_at_region):
    """Profiles cmd; returns (profile path, its stdout)."""
    profile = os.path.join(work, "callgrind.%d.out" % len(os.listdir(work)))
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + profile]
    if start_at_region:  # the bench harness switches instrumentation on at its region
        vg.append("--instr-atstart=no")
    stdout, _ = run(vg + cmd, env, CALLGRIND_TIMEOUT)
    return profile, stdout


def pair_instructions(cmd, env, work, callers):
    """Instructions of one malloc(32) plus one free: the calls made from the
    harness's two loops (callers), inclusive, per call."""
    profile, _ = callgrind(cmd, env, work, start_at_region=False)
    total = 0.0
    for caller, (calls, ir) in callgrind_calls.call_costs(profile, callers).items():
        if calls == 0:
            raise GateError("%s: the profile has no call from %s" % (" ".join(cmd), caller))
        total += ir / calls
    return total


def kernel_instructions(bench, kernel, env, work):
    """Instructions per operation of a bench kernel's measured region."""
    profile, stdout = callgrind([bench, kernel, "n=100000"], env, work, start_at_region=True)
    fields = dict(f.split("=", 1) for f in stdout.split() if "=" in f)
    ops = int(fields.get("ops", "0"))
    totals = None
    with open(profile) as f:
        for line in f:
            if line.startswith("totals:") or (totals is None and line.startswith("summary:")):
                totals = int(line.split()[1])
    if not ops or totals is None:
        raise GateError("%s %s: no ops= or no totals in the profile" % (bench, kernel))
    return totals / ops


def measure(cfg, metrics, runs, slow=False):
    """{metric: (nsalloc, mimalloc, spread)} where spread is None for the
    deterministic counts and (nsalloc min, max, mimalloc min, max) for faults."""
    result = {}
    preload = child_env({"LD_PRELOAD": cfg["override"]})
    preload_peer = child_env({"LD_PRELOAD": cfg["override_peer"]})
    plain = child_env({})
    pair_module = cfg["pair_module_slow"] if slow else cfg["pair_module"]
    with tempfile.TemporaryDirectory(prefix="nsalloc-gate-") as work:
        for metric in metrics:
            if metric == "pair.module":
                callers = ["fastpath_mallocs", "fastpath_frees"]
                pair = [pair_instructions([cfg["pair_driver"], m], plain, work, callers)
                        for m in (pair_module, cfg["pair_module_peer"])]
                result[metric] = (pair[0], pair[1], None)
            elif metric == "pair.override":
                callers = ["bench_fastpath_mallocs", "bench_fastpath_frees"]
                cmd = [cfg["bench_plain"], "fastpath", "n=100000"]
                result[metric] = (pair_instructions(cmd, preload, work, callers),
                                  pair_instructions(cmd, preload_peer, work, callers), None)
            elif metric == "live-set.module":
                result[metric] = (kernel_instructions(cfg["bench_module"], "live-set", plain, work),
                                  kernel_instructions(cfg["bench_module_peer"], "live-set", plain,
                                                      work), None)
            elif metric == "live-set.override":
                result[metric] = (kernel_instructions(cfg["bench_plain"], "live-set", preload, work),
                                  kernel_instructions(cfg["bench_plain"], "live-set", preload_peer,
                                                      work), None)
            else:
                args = FAULT_PROGRAMS[metric]
                ours, theirs = [], []
                for _ in range(runs):  # interleaved: both arms see the same machine
                    ours.append(run([cfg["bench_module"]] + args, plain, NATIVE_TIMEOUT)[1])
                    theirs.append(run([cfg["bench_module_peer"]] + args, plain, NATIVE_TIMEOUT)[1])
                result[metric] = (statistics.median(ours), statistics.median(theirs),
                                  (min(ours), max(ours), min(theirs), max(theirs)))
    return result


def load_baseline(path):
    """The committed ratios, checked: a malformed file is an error, not a pass."""
    try:
        if os.path.getsize(path) > BASELINE_MAX_BYTES:
            raise GateError("baseline %s: larger than %d bytes" % (path, BASELINE_MAX_BYTES))
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise GateError("baseline %s: %s" % (path, e))
    if not isinstance(data, dict) or not isinstance(data.get("ratios"), dict) \
            or not isinstance(data.get("build"), str):
        raise GateError("baseline %s: needs \"build\" (a string) and \"ratios\" (an object)" % path)
    for metric, ratio in data["ratios"].items():
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) \
                or not math.isfinite(ratio) or ratio <= 0:
            raise GateError("baseline %s: ratio of %s is %r, not a positive number"
                            % (path, metric, ratio))
    return data


def load_saved(path):
    """(build, measurements) written by --save."""
    try:
        with open(path) as f:
            saved = json.load(f)
        measured = {m: (float(ours), float(theirs), tuple(spread) if spread else None)
                    for m, (ours, theirs, spread) in saved["measured"].items()}
        return str(saved["build"]), measured
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise GateError("saved measurements %s: %s" % (path, e))


def cells(ours, theirs, spread):
    """The two arms' columns: instructions, or median faults (min..max)."""
    if spread is None:
        return ["%.2f Ir" % ours, "%.2f Ir" % theirs]
    return ["%d faults (%d..%d)" % (ours, spread[0], spread[1]),
            "%d faults (%d..%d)" % (theirs, spread[2], spread[3])]


def judge(measured, baseline):
    """Prints every ratio, its committed value and the verdict; returns the
    failed metrics (a metric measured but never committed, or committed but
    not measured, fails too: the gate never passes what it did not compare)."""
    ratios = baseline["ratios"]
    failed = []
    print("perf gate: nsalloc / %s, each measured in this run; fails when a ratio exceeds "
          "its committed value by more than %d%%" % (PEER, round(TOLERANCE * 100)))
    print("%-20s %-27s %-27s %7s %9s %7s  %s" % ("metric", "nsalloc", PEER, "ratio", "committed",
                                                  "limit", "verdict"))
    for metric in sorted(set(measured) | set(ratios)):
        if metric not in measured:
            failed.append(metric)
            print("%-20s not measured (committed %.3f): FAIL" % (metric, ratios[metric]))
            continue
        ours, theirs, spread = measured[metric]
        if theirs <= 0:
            raise GateError("%s: %s measured %r" % (metric, PEER, theirs))
        ratio = ours / theirs
        line = "%-20s %-27s %-27s %7.3f" % (metric, *cells(ours, theirs, spread), ratio)
        if metric not in ratios:
            failed.append(metric)
            print("%s %9s %7s  FAIL (no committed ratio: %s)" % (line, "-", "-", REGENERATE),
                  )
            continue
        limit = ratios[metric] * (1 + TOLERANCE)
        verdict = "ok"
        if ratio > limit:
            failed.append(metric)
            verdict = "FAIL (+%.1f%%)" % (100 * (ratio / ratios[metric] - 1))
        elif ratio < ratios[metric] * (1 - TOLERANCE):
            verdict = "ok, %.1f%% better: refresh the baseline (%s)" % (
                100 * (1 - ratio / ratios[metric]), REGENERATE)
        print("%s %9.3f %7.3f  %s" % (line, ratios[metric], limit, verdict))
    return failed


def load_config(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise GateError("config %s: %s (configure the build first)" % (path, e))


def selected(only):
    if not only:
        return METRICS
    metrics = only.split(",")
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise GateError("unknown metric %s (known: %s)" % (", ".join(unknown), ", ".join(METRICS)))
    return metrics


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", help="gate-config.json of the build (build/bench/gate/)")
    ap.add_argument("--baseline", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "baseline.json"))
    ap.add_argument("--runs", type=int, default=5, help="runs per fault program and arm")
    ap.add_argument("--write-baseline", metavar="FILE")
    ap.add_argument("--only", metavar="METRICS",
                    help="comma-separated metrics to measure and judge (default: all)")
    ap.add_argument("--negative-control", action="store_true",
                    help="measure the pair of the slower build variant instead")
    ap.add_argument("--save", metavar="FILE", help="write the measurements (for --judge)")
    ap.add_argument("--judge", metavar="SAVED", help="judge saved measurements, measure nothing")
    args = ap.parse_args(argv)
    try:
        if args.judge:
            build, measured = load_saved(args.judge)
        else:
            if not args.config:
                ap.error("--config is required unless --judge is given")
            if not 1 <= args.runs <= 99:
                ap.error("--runs must be 1..99")
            cfg = load_config(args.config)
            if "override_peer" not in cfg:
                print("perf gate: SKIPPED: no %s in %s (the prebuilt peers, ../shared/peers): "
                      "nothing compared" % (PEER, cfg.get("peer_dir", "?")))
                return 0
            build = cfg["build"]
            baseline = None if args.write_baseline else load_baseline(args.baseline)
            if baseline and baseline["build"] != build:
                raise GateError("%s was measured on a %s build, this one is %s: counts differ "
                                "by compiler and build type (run the gate on build/ of "
                                "`make test`, or %s)" % (args.baseline, baseline["build"], build,
                                                         REGENERATE))
            metrics = ["pair.module"] if args.negative_control else selected(args.only)
            measured = measure(cfg, metrics, args.runs, slow=args.negative_control)
            if args.save:
                with open(args.save, "w") as f:
                    json.dump({"build": build, "measured": measured}, f, indent=1)
        if args.write_baseline:
            write_baseline(args.write_baseline, build, measured, args.runs)
            return 0
        baseline = load_baseline(args.baseline)
        if baseline["build"] != build:
            raise GateError("%s is for a %s build, the measurements for %s"
                            % (args.baseline, baseline["build"], build))
        if args.negative_control or args.only:  # judge what was measured
            baseline["ratios"] = {m: r for m, r in baseline["ratios"].items() if m in measured}
        failed = judge(measured, baseline)
    except GateError as e:
        print("perf gate: ERROR: %s" % e)
        return 2
    if failed:
        print("perf gate: FAIL: %s grew more than %d%% over %s (if intended: %s, and commit it "
              "with the reason)" % (", ".join(failed), round(TOLERANCE * 100), args.baseline,
                                    REGENERATE))
        return 1
    print("perf gate: PASS: %d ratios within %d%% of %s" % (len(measured),
                                                          round(TOLERANCE * 100), args.baseline))
    return 0


def write_baseline(path, build, measured, runs):
    ratios = {m: round(ours / theirs, 4) for m, (ours, theirs, _) in measured.items()}
    with open(path, "w") as f:
        json.dump({"regenerate": REGENERATE, "build": build, "fault_runs": runs,
                   "ratios": ratios,
                   "measured": {m: {"nsalloc": v[0], PEER: v[1]} for m, v in measured.items()}},
                  f, indent=1, sort_keys=True)
        f.write("\n")
    judge(measured, {"ratios": ratios})
    print("perf gate: wrote %s: commit it" % path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
