"""The SVG chart (gnuplot): ratios to the best mimalloc per section, churn
RSS curves and multi-copy flatness."""
import os
import shutil
import statistics

from .measure import Failure, run
from .tables import peak_rss_rows

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
