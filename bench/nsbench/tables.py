"""Formatting and the tables every section prints: instruction counts,
interleaved wall clock, peak RSS, each with its ratios to the peers."""
import math
import statistics

from .workloads import MODULE_SHAPES, PATHOLOGICAL


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


def median_series(series):
    """{arm: median} of every arm with measurements."""
    return {label: statistics.median(v) for label, v in series.items() if v}


def wall_table(results, arms):
    """The interleaved rows: throughput against every arm, CPU time, page
    faults and peak RSS (medians over rounds)."""
    labels = [a.label for a in arms if a.label != "nsalloc" and a.label != "null"]
    headers = (["kernel", "nsalloc Mops/s"] + ["vs %s" % l for l in labels]
               + ["vs best mimalloc", "null arm: median [min, max]",
                  "CPU time: vs best mimalloc, null", "page faults: nsalloc, best mimalloc, ratio",
                  "peak RSS KiB: nsalloc, best mimalloc, nsalloc / best arm"])
    rows, ratios = [], {}
    for name, entry in results.items():
        tr = throughput_ratios(entry)
        ratios[name] = {l: tr[l][0] for l in tr}
        ops = entry["ops"]
        mops = "%.3g" % (ops / statistics.median(entry["times"]["nsalloc"]) / 1e6) if ops else "n/a"
        null = tr.get("null")
        cpu = throughput_ratios({"times": entry["cpu"]})
        ratios[name]["cpu"] = cpu.get("mimalloc", (None,))[0]
        faults = median_series(entry["faults"])
        fault_ratio = (faults["nsalloc"] / faults["mimalloc"]
                       if faults.get("mimalloc") else None)
        ratios[name]["faults"] = fault_ratio
        peaks = median_series(entry["peaks"])
        others = [v for l, v in peaks.items() if l not in ("nsalloc", "null", "mimalloc",
                                                            "nsalloc-override")]
        ratios[name]["peak_vs_best"] = peaks["nsalloc"] / min(others) if others else None
        rows.append([name, mops] + [fmt_ratio(tr[l][0]) for l in labels]
                    + ["%s (%s)" % (fmt_ratio(tr.get("mimalloc", (None,))[0]),
                                    entry.get("best_of") or "n/a"),
                       "%.3f [%.3f, %.3f]" % null if null else "n/a (no null arm)",
                       "%s, %s" % (fmt_ratio(cpu.get("mimalloc", (None,))[0]),
                                   fmt_ratio(cpu.get("null", (None,))[0])),
                       "%s, %s, %s" % (fmt_int(faults["nsalloc"]),
                                       fmt_int(faults["mimalloc"]) if "mimalloc" in faults
                                       else "n/a", fmt_ratio(fault_ratio)),
                       "%s, %s, %s" % (fmt_int(peaks["nsalloc"]),
                                       fmt_int(peaks["mimalloc"]) if "mimalloc" in peaks
                                       else "n/a", fmt_ratio(ratios[name]["peak_vs_best"]))])
    return md_table(headers, rows), ratios


def fault_growth(short, long):
    """Per row of the long run: (nsalloc's median faults at the long length
    over the short one, the same for the best mimalloc), by the short row's
    name."""
    out = {}
    for name, entry in long.items():
        base = next((n for n, e in short.items() if e["kernel"] == entry["kernel"]
                     and e["threads"] == entry["threads"]), None)
        if base is None:
            continue
        s, l = median_series(short[base]["faults"]), median_series(entry["faults"])
        out[base] = tuple(l[k] / s[k] if s.get(k) and k in l else None
                          for k in ("nsalloc", "mimalloc"))
    return out


def module_table(results, marms):
    """The module arm: Ir/op of every arm and nsalloc's ratio to the better
    mimalloc of each shape and to the override measured beside it."""
    labels = [a.label for a in marms]
    headers = (["kernel"] + ["%s Ir/op" % l for l in labels]
               + ["nsalloc / best bundled", "nsalloc / best .so", "module / override"])
    rows, ratios = [], {}
    for kernel, by_arm in results.items():
        ir = {l: v["ir_per_op"] for l, v in by_arm.items() if "ir_per_op" in v}
        ns = ir.get("nsalloc-module")
        if not ns:
            continue
        ratios[kernel] = {"ir": ir}
        cells = []
        for shape in MODULE_SHAPES:
            have = [l for l in ir if l.endswith("-" + shape)]
            best = min(have, key=ir.get) if have else None
            ratios[kernel][shape] = (ns / ir[best], best) if best else (None, None)
            cells.append("%s (%s)" % (fmt_ratio(ratios[kernel][shape][0]), best)
                         if best else "n/a")
        override = ir.get("nsalloc-override")
        ratios[kernel]["override"] = ns / override if override else None
        rows.append([kernel] + ["%.1f" % ir[l] if l in ir else "n/a" for l in labels] + cells
                    + [fmt_ratio(ratios[kernel]["override"])])
    return md_table(headers, rows), ratios


def idle_table(results):
    """Per idle kernel and arm: RSS growth over the start after the frees and
    after the idle second, against the live bytes."""
    rows = []
    for kernel, by_arm in results.items():
        for label, s in by_arm.items():
            rows.append([kernel, label, fmt_int(s["live_kib"]),
                         fmt_int(s["freed_kib"] - s["start_kib"]),
                         fmt_int(s["idle_kib"] - s["start_kib"]), fmt_int(s["peak_kib"])])
    return md_table(["kernel", "arm", "live KiB", "growth after the frees KiB",
                     "growth after 1 s idle KiB", "peak RSS KiB"], rows)


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
