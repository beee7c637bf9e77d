"""docs/benchmarks.md: the header, the method, every section's table and the
embedded analysis."""
import os
import platform
import statistics
import sys

from .measure import Failure, callgrind_functions, run
from .programs import program_table
from .report_parts import idle_part, long_part, module_part, module_ratios, stress_part
from .targets import issue22_targets
from .tables import (class_geomeans, fmt_int, fmt_ratio, geomean, ir_table, md_table,
                     peak_rss_rows, verdict, wall_table)
from .workloads import BENCH_DIR, DEBIAN_MIMALLOC, PATHOLOGICAL, PEERS, ROOT, TARGETS


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
    targets22 = issue22_targets(m, m["karms"], m["parms"], module_ratios(m)[1])

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
    doc.append("### Issue 22\n")
    met22 = sum("**met**" in row[3] for row in targets22)
    doc.append("%d of %d met, each computed from this run (`bench/nsbench/targets.py`); a row "
               "over several workloads names the worst and every one that misses.\n"
               % (met22, len(targets22)))
    if not any(label for label, _ in PEERS if label in [a.label for a in m["karms"]]):
        doc.append("_No prebuilt peers in this run: 'mimalloc' is Debian's %s, so these "
                   "verdicts are not the issue's, which compares with 2.4.1 and 3.4.3._\n"
                   % DEBIAN_MIMALLOC)
    doc.append(md_table(["target", "goal", "measured", "verdict"], targets22) + "\n")
    doc.append("### Earlier targets\n")
    doc.append("%d of %d targets met.%s\n" % (len(targets) - len(missed), len(targets),
                                              " Where a target is missed, section 6 shows the "
                                              "callgrind per-function evidence." if missed else ""))
    doc.append(md_table(["target", "goal", "measured", "verdict"], targets) + "\n")
    doc.append("![benchmark chart](%s)\n" % os.path.basename(chart))
    with open(os.path.join(BENCH_DIR, "method.md")) as f:
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
    doc.append(module_part(m))
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
    doc.append(long_part(m))
    doc.append(stress_part(m))
    doc.append("## 3. Whole programs under the override (instructions, callgrind)\n")
    doc.append("Each program runs with the allocator preloaded (`LD_PRELOAD`; glibc: none). Its "
               "standard output must be byte-identical across arms.\n")
    doc.append(prog_table + "\n")
    doc.append("Geometric mean nsalloc/best mimalloc: **%s**, nsalloc/glibc: **%s**.\n" % (
        fmt_ratio(prog_mi), fmt_ratio(prog_gl)))
    doc.append("## 4. Private copies in one process\n")
    mc_rows, base_ir = [], mc["ir"]["1 copies"]["ir_per_op"]
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
    doc.append(idle_part(m))
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
    return perop_ratios, prog_ratios, targets22 + targets


CORRECTNESS_HEADING = "## Correctness findings\n"


def read_analysis():
    with open(os.path.join(BENCH_DIR, "analysis.md")) as f:
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
