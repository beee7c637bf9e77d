"""Issue 22's targets, each met or not as computed from the run (never
written by hand): the "Issue 22 targets" table of docs/benchmarks.md."""
from .tables import fault_growth, fmt_ratio, verdict, wall_table
from .workloads import ISSUE22, ISSUE22_MODULE_KERNELS

NOT_MEASURED = "**not measured**"


def worst_of(name, goal, values, ok, higher_is_better=False):
    """One target over several rows: values is [(row, value or None)]; the
    target holds when every measured row is ok and at least one was."""
    measured = [(row, v) for row, v in values if v is not None]
    if not measured:
        return [name, goal, "no row measured in this run", NOT_MEASURED]
    failing = [row for row, v in measured if not ok(v)]
    # The worst row is a failing one when there is one, else the closest call.
    sign = -1 if higher_is_better else 1
    row, value = max(measured, key=lambda x: (x[0] in failing, sign * x[1]))
    detail = "worst %s (%s)" % (fmt_ratio(value), row)
    if failing:
        detail += "; %d of %d rows miss: %s" % (len(failing), len(measured), ", ".join(failing))
    return [name, goal, detail, verdict(not failing)]


def issue22_targets(m, karms, parms, module_ratios):
    """The rows of the table: [target, goal, measured, verdict]."""
    t = ISSUE22
    _, mt_ratios = wall_table(m["classic_mt"], karms)
    if m.get("test_stress"):
        mt_ratios.update(wall_table(m["test_stress"], parms)[1])
    _, long_ratios = wall_table(m["classic_mt_long"], [a for a in karms if a.label in
                                                        m["long_labels"]])
    growth = fault_growth(m["classic_mt"], m["classic_mt_long"])
    rows = [
        worst_of("minor faults, nsalloc / better mimalloc: every multi-threaded row, "
                 "test-stress and the 10x rows", "<= %.2f" % t["faults_vs_mimalloc"],
                 [(n, r.get("faults")) for n, r in list(mt_ratios.items())
                  + list(long_ratios.items())], lambda v: v <= t["faults_vs_mimalloc"]),
        worst_of("faults flat with length: nsalloc's faults at 10x the length / at 1x",
                 "<= %.2f" % t["faults_growth"], [(n, g[0]) for n, g in growth.items()],
                 lambda v: v <= t["faults_growth"]),
        worst_of("throughput (wall), nsalloc vs better mimalloc: every multi-threaded row "
                 "and test-stress", ">= %.2f" % t["throughput_vs_mimalloc"],
                 [(n, r.get("mimalloc")) for n, r in mt_ratios.items()],
                 lambda v: v >= t["throughput_vs_mimalloc"], higher_is_better=True),
        worst_of("throughput (CPU time), nsalloc vs better mimalloc: the same rows",
                 ">= %.2f" % t["throughput_vs_mimalloc"],
                 [(n, r.get("cpu")) for n, r in mt_ratios.items()],
                 lambda v: v >= t["throughput_vs_mimalloc"], higher_is_better=True),
        worst_of("peak RSS, nsalloc / best arm: every multi-threaded row, test-stress, every "
                 "program", "<= %.2f" % t["peak_rss_vs_best"],
                 [(n, r.get("peak_vs_best")) for n, r in mt_ratios.items()]
                 + program_peaks(m["programs"]), lambda v: v <= t["peak_rss_vs_best"]),
    ]
    for kernel, by_arm in m["idle"].items():
        s = by_arm.get("nsalloc")
        goal = "<= live + %d%% + %d KiB" % (t["idle_slack_live"] * 100, t["idle_slack_kib"])
        name = "idle RSS (%s): growth over the start after 1 s idle" % kernel
        if not s:
            rows.append([name, goal, "n/a", NOT_MEASURED])
            continue
        limit = s["live_kib"] * (1 + t["idle_slack_live"]) + t["idle_slack_kib"]
        growth = s["idle_kib"] - s["start_kib"]
        rows.append([name, goal, "%d KiB (live %d KiB, limit %d KiB)" % (
            growth, s["live_kib"], limit), verdict(growth <= limit)])
    pair = module_ratios.get("fastpath", {}).get("ir", {})
    pair_ratio = (pair["nsalloc-module"] / pair["mimalloc-3.4.3-bundled"]
                  if "mimalloc-3.4.3-bundled" in pair else None)
    rows.append(["bundled malloc(32)+free pair (fastpath kernel), nsalloc / mimalloc 3.4.3, "
                 "both in a module", "<= %.2f" % t["pair_vs_mimalloc3"], fmt_ratio(pair_ratio),
                 verdict(pair_ratio <= t["pair_vs_mimalloc3"]) if pair_ratio else NOT_MEASURED])
    rows.append(worst_of("module shape, nsalloc / better bundled mimalloc: %s"
                         % ", ".join(ISSUE22_MODULE_KERNELS),
                         "<= %.2f" % t["module_kernels"],
                         [(k, module_ratios[k]["bundled"][0]) for k in ISSUE22_MODULE_KERNELS
                          if k in module_ratios], lambda v: v <= t["module_kernels"]))
    rows.append(worst_of("private copy (module) / override, every kernel of the module arm",
                         "<= %.2f" % t["private_vs_override"],
                         [(k, v["override"]) for k, v in module_ratios.items()],
                         lambda v: v <= t["private_vs_override"]))
    return rows


def program_peaks(programs):
    """(program, nsalloc's peak RSS / the lowest other arm's) per program."""
    out = []
    for name, by_arm in programs.items():
        peaks = {l: v["peak_kib"] for l, v in by_arm.items()
                 if isinstance(v, dict) and "peak_kib" in v}
        others = [v for l, v in peaks.items() if l not in ("nsalloc", "null", "mimalloc")]
        if "nsalloc" in peaks and others:
            out.append(("program " + name, peaks["nsalloc"] / min(others)))
    return out
