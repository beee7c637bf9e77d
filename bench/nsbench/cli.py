"""The command line: the full suite, the smoke run, quick --only re-measurements."""
import argparse
import datetime
import json
import os
import sys
import time

from .arms import kernel_arms, mimalloc_refs, module_arms, peer_libs, program_arms
from .chart import chart_data, write_chart
from .document import embed_analysis, source_version, worst_profiles, write_document
from .measure import Failure, Runner
from .programs import program_table, programs_section
from .multicopy import multicopy_section
from .sections import (callgrind_section, check_arms, churn_section, fastpath_section,
                       idle_section, interleaved_section, module_section, module_specs)
from .tables import class_geomeans, idle_table, ir_table, module_table, wall_table
from .teststress import test_stress_section
from .workloads import (CLASSIC_MT, CLASSIC_ST, DEBIAN_MIMALLOC, FASTPATH, LONG_FACTOR,
                        LONG_ROUNDS, PEERS_DIR, PER_OP)

USAGE = """the nsalloc benchmark runner (Python 3 standard library only).

Runs every section of the suite against every allocator arm, checks work
parity (identical checksums / outputs across arms), computes ratios and writes
docs/benchmarks.md plus an SVG chart (gnuplot).

  run.py --config BUILD/bench/bench-config.json --out docs/benchmarks.md \\
         --chart docs/benchmarks.svg --work BUILD/bench/results     # full suite
  run.py --smoke --config ... --work DIR                           # < 60 s
  run.py --embed-analysis docs/benchmarks.md     # re-embed an edited analysis.md

Method (see docs/benchmarks.md): instructions retired under callgrind for
single-threaded kernels and whole programs (deterministic; each kernel's
measured region only), interleaved wall clock with a null arm for the
multi-threaded kernels, /usr/bin/time for peak RSS and page faults. Exit
status 1 when any checksum or program output differs between arms.
"""


def long_arms(karms):
    """The arms of the 10x rows: nsalloc and the arms 'mimalloc' stands for."""
    refs = mimalloc_refs([a.label for a in karms])
    return [a for a in karms if a.label == "nsalloc" or a.label in refs]


def select(specs, args):
    """The specs --kernels names (all without it), n at most --n."""
    names = args.kernels.split(",") if args.kernels else None
    return [(k, min(full, args.n or full), small, threads) for k, full, small, threads in specs
            if names is None or k in names]


def run_only(r, m, sections, pairs):
    """Quick re-measurement of chosen sections: tables on stdout, no report."""
    karms, parms, marms, args = m["karms"], m["parms"], m["marms"], r.args
    try:
        check_arms(r, karms + marms, parms)
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
            elif name == "module":
                specs = module_specs(select([(FASTPATH[0], FASTPATH[1], FASTPATH[2], 1)]
                                            + PER_OP + CLASSIC_ST, args))
                print(module_table(callgrind_section(r, marms, specs, False, native=False),
                                   marms)[0])
            elif name == "mt":
                print(wall_table(interleaved_section(r, karms, select(CLASSIC_MT, args), pairs,
                                                     False), karms)[0])
            elif name == "mt10":
                arms = long_arms(karms)
                print(wall_table(interleaved_section(r, arms, select(CLASSIC_MT, args),
                                                     LONG_ROUNDS, False, LONG_FACTOR), arms)[0])
            elif name == "stress":
                stress = test_stress_section(r, parms, args.peers, False)
                print(wall_table(stress, parms)[0] if stress else "test-stress: not built")
            elif name == "idle":
                print(idle_table(idle_section(r, karms, False)[0]))
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
    ap = argparse.ArgumentParser(description=USAGE.split("\n")[0],
                                 epilog=USAGE.split("\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", help="BUILD/bench/bench-config.json (required to measure)")
    ap.add_argument("--work", help="directory for profiles and scratch files (required to measure)")
    ap.add_argument("--out", help="Markdown report (default: WORK/benchmarks.md)")
    ap.add_argument("--chart", help="SVG chart (default: WORK/benchmarks.svg)")
    ap.add_argument("--smoke", action="store_true", help="tiny inputs: the harness end to end")
    ap.add_argument("--parity-only", action="store_true", help="only the kernels' parity check")
    ap.add_argument("--perturb-arm", help="negative control: perturb this arm's checksums")
    ap.add_argument("--pairs", type=int, default=None, help="interleaved rounds (default 10)")
    ap.add_argument("--jobs", type=int, default=2, help="concurrent callgrind runs")
    ap.add_argument("--only", help="comma-separated sections (perop, st, fastpath, module, mt, "
                    "mt10, stress, idle, programs) to run and print as tables, without writing "
                    "the report")
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
    marms = module_arms(cfg, peers, next(a for a in karms if a.label == "nsalloc-override"))
    if args.arms:
        keep = set(args.arms.split(",")) | {"nsalloc", "nsalloc-module"}
        karms = [a for a in karms if a.label in keep]
        parms = [a for a in parms if a.label in keep]
        marms = [a for a in marms if a.label in keep]
    if cfg["build_type"] != "Release" and not args.smoke:
        print("run.py: warning: build type %s, not Release" % cfg["build_type"], file=sys.stderr)

    def step(name):
        print("[%6.1f s] %s" % (time.time() - start, name), flush=True)

    m = {"karms": karms, "parms": parms, "marms": marms, "pairs": pairs,
         "long_labels": [a.label for a in long_arms(karms)], "source": source_version(),
         "peers_note": ("; prebuilt %s (`../shared/peers`)" % ", ".join(l for l, _ in peers)
                        if peers else "; no prebuilt peers (`../shared/peers` absent): "
                        "'mimalloc' is Debian's %s" % DEBIAN_MIMALLOC)}
    if args.only:
        return run_only(r, m, args.only.split(","), pairs)
    try:
        step("checking arms")
        m["arm_check"] = check_arms(r, karms + marms, parms)
        if args.parity_only:
            for kernel, full, small, threads in PER_OP + CLASSIC_ST:
                for arm in karms + marms:
                    r.native(arm, kernel, small, threads or 2)
        else:
            step("per-operation scan (callgrind)")
            m["perop"] = callgrind_section(r, karms, PER_OP, args.smoke, not args.smoke)
            step("per-call fast paths (callgrind)")
            m["fastpath_table"] = fastpath_section(r, karms, args.smoke)
            step("classic single-threaded kernels (callgrind)")
            m["classic_st"] = callgrind_section(r, karms, CLASSIC_ST, args.smoke, not args.smoke)
            step("the module arm: kernels in the bundled shape (callgrind)")
            m["module"] = module_section(r, marms, args.smoke)
            step("classic multi-threaded kernels (interleaved wall clock)")
            m["classic_mt"] = interleaved_section(r, karms, CLASSIC_MT, pairs, args.smoke)
            step("multi-threaded kernels at %dx the length" % LONG_FACTOR)
            # The smoke runs one long row: it checks the plumbing, not the growth.
            long_specs, long_rounds = (CLASSIC_MT[:1], 1) if args.smoke else (CLASSIC_MT,
                                                                              LONG_ROUNDS)
            m["classic_mt_long"] = interleaved_section(r, long_arms(karms), long_specs,
                                                       long_rounds, args.smoke, LONG_FACTOR)
            step("mimalloc's test-stress (LD_PRELOAD)")
            m["test_stress"] = test_stress_section(r, parms, args.peers, args.smoke)
            step("idle RSS")
            m["idle"], m["idle_mib"] = idle_section(r, karms, args.smoke)
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
