#!/usr/bin/env python3
"""Benchmark CPython's allocators on allocation-heavy Python programs.

    bench/python/run.py --launcher BUILD/bindings/python/nsalloc-python
                        [--rounds 5] [--jobs 2] [--update-doc docs/python.md]

Each program of bench/python/programs/ runs under
  pymalloc  the plain interpreter (CPython's default allocator)
  glibc     PYTHONMALLOC=malloc
  mimalloc  PYTHONMALLOC=malloc, Debian's libmimalloc.so.2 preloaded
  jemalloc  PYTHONMALLOC=malloc, Debian's libjemalloc.so.2 preloaded
  nsalloc   nsalloc-python (nsalloc in every domain)
  late      the plain interpreter; nsalloc.install() (the module) runs before the
            program from a usercustomize on PYTHONPATH
and is measured three ways: whole-program instructions (callgrind, one run,
deterministic: PYTHONHASHSEED=0), wall-clock time (median of --rounds runs,
the allocators interleaved round by round) and peak RSS (/usr/bin/time -v,
median). Prints Markdown; --update-doc replaces the text between the
`<!-- bench:begin -->` and `<!-- bench:end -->` markers of a file with it.
"""
import argparse
import atexit
import concurrent.futures
import datetime
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS_DIR = os.path.join(HERE, "programs")
LIBRARY_DIR = "/usr/lib/x86_64-linux-gnu"
PEERS = {"mimalloc": "libmimalloc.so.2", "jemalloc": "libjemalloc.so.2"}
BASELINE = "pymalloc"


# The late-install arm: python3 runs the program itself, and `site` imports
# this usercustomize (searched on sys.path, so PYTHONPATH finds it) before it:
# the way a deployment installs the copy without touching the program. Every
# arm's `site` looks for a usercustomize; only this one finds it. (Wrapping
# the program in `python3 -c "...; runpy.run_path(...)"` instead measured
# the wrapper: +5 M instructions on object_churn with nothing installed.)
LATE_INSTALL = "import nsalloc\nnsalloc.install()\n"


def configurations(python, launcher, modules):
    """{name: (command prefix, extra environment)}"""
    configs = {"pymalloc": ([python], {}), "glibc": ([python], {"PYTHONMALLOC": "malloc"})}
    for name, library in PEERS.items():
        path = os.path.join(LIBRARY_DIR, library)
        if not os.path.exists(path):
            sys.exit(f"run.py: {path} is missing (Debian package of {name})")
        configs[name] = ([python], {"PYTHONMALLOC": "malloc", "LD_PRELOAD": path})
    configs["nsalloc"] = ([launcher], {})
    hook_dir = tempfile.mkdtemp(prefix="nsalloc-late-")
    atexit.register(shutil.rmtree, hook_dir, True)
    with open(os.path.join(hook_dir, "usercustomize.py"), "w") as f:
        f.write(LATE_INSTALL)
    configs["late"] = ([python], {"PYTHONPATH": os.pathsep.join([hook_dir, modules])})
    # The arm must really run installed (a usercustomize that site skipped,
    # e.g. with the user site disabled, would measure pymalloc as 'late').
    check = subprocess.run([python, "-c", "import nsalloc, sys; sys.exit(not nsalloc.installed())"],
                           env=environment(configs["late"][1]))
    if check.returncode != 0:
        sys.exit("run.py: the late arm's usercustomize did not install nsalloc")
    return configs


def environment(extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "NSALLOC")) and k != "LD_PRELOAD"}
    env["PYTHONHASHSEED"] = "0"
    env.update(extra)
    return env


def instructions(config, program):
    command, extra = config
    result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                             *command, program], env=environment(extra),
                            capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", result.stderr).group(1))


def timed_run(config, program):
    """(seconds, peak RSS in KiB) of one run."""
    command, extra = config
    start = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-v", *command, program], env=environment(extra),
                            capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1))
    return seconds, rss


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def measure(configs, programs, rounds, jobs):
    names = list(configs)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {(p, n): pool.submit(instructions, configs[n], path)
                   for p, path in programs.items() for n in names}
        counts = {key: future.result() for key, future in futures.items()}
    samples = {(p, n): [] for p in programs for n in names}
    for round_ in range(rounds):  # interleaved; the order rotates every round
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for p, path in programs.items():
            for n in order:
                samples[p, n].append(timed_run(configs[n], path))
    wall = {key: statistics.median(s for s, _ in runs) for key, runs in samples.items()}
    rss = {key: statistics.median(r for _, r in runs) for key, runs in samples.items()}
    return names, counts, wall, rss


def table(title, names, programs, cell, summary=None):
    lines = [f"**{title}**", "", "| program | " + " | ".join(names) + " |",
             "|---|" + "---:|" * len(names)]
    for p in programs:
        lines.append(f"| {p} | " + " | ".join(cell(p, n) for n in names) + " |")
    if summary:
        lines.append(summary)
    return lines + [""]


def report(names, programs, counts, wall, rss, rounds, python):
    ratio = lambda metric, p, n: metric[p, n] / metric[p, BASELINE]
    peers = [n for n in names if n in PEERS]
    geo = {n: geomean([ratio(counts, p, n) for p in programs]) for n in names}
    wall_geo = {n: geomean([ratio(wall, p, n) for p in programs]) for n in names}
    version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, check=True).stdout.strip()
    out = [f"Measured {datetime.date.today().isoformat()} on {platform.machine()}, "
           f"{os.cpu_count()} CPUs, Python {version} ({python}), load average "
           f"{os.getloadavg()[0]:.1f} at the end; command: `bench/python/run.py "
           f"--rounds {rounds} --python {python}`.", ""]
    out += table("Whole-program instructions, millions (callgrind; ratio to pymalloc)", names,
                 programs, lambda p, n: f"{counts[p, n] / 1e6:.0f} ({ratio(counts, p, n):.3f})",
                 "| **geometric mean ratio** | " + " | ".join(f"**{geo[n]:.3f}**" for n in names)
                 + " |")
    out += table(f"Wall-clock time, ratio to pymalloc (median of {rounds} interleaved runs)",
                 names, programs, lambda p, n: f"{ratio(wall, p, n):.3f}",
                 "| **geometric mean** | " + " | ".join(f"**{wall_geo[n]:.3f}**" for n in names)
                 + " |")
    out += table("Peak RSS, MiB (ratio to pymalloc)", names, programs,
                 lambda p, n: f"{rss[p, n] / 1024:.1f} ({ratio(rss, p, n):.2f})")
    behind = [f"{p} ({n})" for p in programs for n in peers
              if counts[p, "nsalloc"] >= counts[p, n]]
    over = [p for p in programs if ratio(rss, p, "nsalloc") > 1.10]
    above = [f"{p} ({n})" for p in programs for n in ("nsalloc", "late")
             if ratio(counts, p, n) > 1.0]
    out += ["Targets:", "",
            f"- instructions at or below pymalloc on the geometric mean: "
            f"{'met' if geo['nsalloc'] <= 1.0 else 'NOT met'} ({geo['nsalloc']:.3f})",
            "- launcher and late install at or below pymalloc (instructions) on every program: "
            + ("met" if not above else "NOT met: " + ", ".join(above)),
            "- fewer instructions than every preloaded peer on every program: "
            + ("met" if not behind else "NOT met: " + ", ".join(behind)),
            "- peak RSS no worse than pymalloc + 10%: "
            + ("met" if not over else "NOT met: " + ", ".join(over)), ""]
    return "\n".join(out)


def update_doc(path, text):
    with open(path) as f:
        doc = f.read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(f"{head}{begin}\n{text}\n{end}{tail}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--modules", help="the directory of the nsalloc module "
                        "(default: modules/ next to the launcher)")
    parser.add_argument("--python", help="the interpreter the launcher embeds "
                        "(default: the python3 on PATH)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--programs", nargs="*")
    parser.add_argument("--update-doc")
    args = parser.parse_args()
    python = args.python or subprocess.run(
        ["python3", "-c", "import sys; print(sys.executable)"],
        capture_output=True, text=True, check=True).stdout.strip()
    names = args.programs or sorted(f[:-3] for f in os.listdir(PROGRAMS_DIR) if f.endswith(".py"))
    programs = {name: os.path.join(PROGRAMS_DIR, name + ".py") for name in names}
    launcher = os.path.abspath(args.launcher)
    modules = args.modules or os.path.join(os.path.dirname(launcher), "modules")
    configs = configurations(python, launcher, os.path.abspath(modules))
    names, counts, wall, rss = measure(configs, programs, args.rounds, args.jobs)
    text = report(names, list(programs), counts, wall, rss, args.rounds, python)
    print(text)
    if args.update_doc:
        update_doc(args.update_doc, text)


if __name__ == "__main__":
    main()
