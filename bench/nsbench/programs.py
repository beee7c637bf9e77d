"""Whole programs under LD_PRELOAD: their inputs, commands, runs and table."""
import hashlib
import json
import os
import shutil

from .arms import add_best_mimalloc, mimalloc_refs
from .measure import Failure, run_measured
from .tables import fmt_int, fmt_ratio, md_table
from .workloads import BENCH_DIR, PROGRAMS


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
    subst = {"programs": os.path.join(BENCH_DIR, "programs"), "work": r.work, "n": str(n)}
    cmd = [part.format(**subst) for part in spec[1]]
    stdin = None
    if spec[5]:
        with open(os.path.join(BENCH_DIR, "programs", spec[5])) as f:
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
        proc, usage = run_measured(cmd, env, stdin)
        entry = results.setdefault(name, {}).setdefault(arm.label, {})
        entry["peak_kib"] = usage["peak_kib"]
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
