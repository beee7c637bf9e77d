"""The parts of docs/benchmarks.md for the product's shape and its memory
(issue 22): the module arm, the 10x rows, test-stress and idle RSS. Each
returns Markdown; document.py places them."""
from .tables import fault_growth, fmt_ratio, idle_table, md_table, module_table, wall_table
from .workloads import (IDLE_KERNELS, ISSUE22, LONG_FACTOR, LONG_ROUNDS, MODULE_DIVISOR,
                        TEST_STRESS, TEST_STRESS_ROUNDS)


def module_ratios(m):
    return module_table(m["module"], m["marms"])


def module_part(m):
    table, _ = module_ratios(m)
    peers = len(m["marms"]) > 1
    text = ["## Kernels in the bundled shape (the module arm)\n",
            "The kernels of section 1 and 2 (and the fast-path pair, `fastpath`: 50 `malloc(32)` "
            "then their frees) in the shape nsalloc ships in: `bench-module` `dlopen()`s a "
            "module (`BENCH_MODULE`) and calls the allocator through the vtable it exports. "
            "`nsalloc-module` is the private copy built by the documented recipe (prefix, "
            "hidden, TLSDESC); `mimalloc-X-bundled` links `../shared/peers/mimalloc-X/"
            "libmimalloc-bundled.a` into the module with hidden visibility and "
            "`-Wl,--exclude-libs,ALL`; `mimalloc-X-so` links the module against the release's "
            "`.so` (`bench/mimalloc_module.c`). Instructions per operation (callgrind, the "
            "measured region), each kernel at 1/%d of its length in sections 1 and 2; the "
            "ratios are to the better mimalloc of each shape, and `module / override` is the "
            "private copy against `nsalloc-override` (the same kernels preloaded, same "
            "lengths).\n" % MODULE_DIVISOR]
    if not peers:
        text.append("_The mimalloc modules were not built or the prebuilt peers are absent "
                    "(`../shared/peers`): nsalloc runs alone and the ratios are n/a._\n")
    text.append(table + "\n")
    return "\n".join(text)


def long_part(m):
    arms = [a for a in m["karms"] if a.label in m["long_labels"]]
    table, _ = wall_table(m["classic_mt_long"], arms)
    growth = fault_growth(m["classic_mt"], m["classic_mt_long"])
    rows = [[name, fmt_ratio(ns), fmt_ratio(mi)] for name, (ns, mi) in growth.items()]
    return "\n".join([
        "### Multi-threaded at %dx the length (%d interleaved rounds)\n" % (LONG_FACTOR,
                                                                           LONG_ROUNDS),
        "Every row above again, %d times as long, on nsalloc and the mimalloc releases the "
        "targets compare with (no null arm: read the noise floor from the table above). Once "
        "the working set is reached, an allocator that reuses its memory faults no more in a "
        "longer run; one that gives memory back and faults it in again grows with the "
        "length.\n" % LONG_FACTOR,
        table + "\n",
        "Fault growth, median faults at %dx the length over those at 1x (target: nsalloc <= "
        "%.2f):\n" % (LONG_FACTOR, ISSUE22["faults_growth"]),
        md_table(["row", "nsalloc", "best mimalloc"], rows) + "\n"])


def stress_part(m):
    if not m.get("test_stress"):
        return ("### mimalloc's test-stress\n\n_Not run: `../shared/peers/%s` is absent (or no C "
                "compiler); the rows need mimalloc's source, which is not copied into the "
                "repository._\n" % "mimalloc-3.4.3/test/test-stress.c")
    threads, scale, iterations = TEST_STRESS[0]
    table, _ = wall_table(m["test_stress"], m["parms"])
    return "\n".join([
        "### mimalloc's test-stress (whole process, %d interleaved rounds)\n"
        % TEST_STRESS_ROUNDS,
        "`../shared/peers/mimalloc-3.4.3/test/test-stress.c`, compiled by the runner with "
        "`-O2 -DNDEBUG -DUSE_STD_MALLOC` (its own switch mapping `mi_*` to the standard API), "
        "run as `test-stress %d %d %d` (threads, scale, iterations) with each allocator "
        "preloaded; wall and CPU time, faults and peak RSS of the whole process "
        "(`/usr/bin/time`; CPU from `wait4`). nsalloc here is the override.\n"
        % (threads, scale, iterations),
        table + "\n"])


def idle_part(m):
    return "\n".join([
        "### Idle RSS (a program that frees its memory and goes idle)\n",
        "`%s` allocates %d MiB of 16-1024 B blocks, frees them and sleeps 1 s without "
        "calling the allocator; `%s` keeps the first 32 MiB live. RSS growth over the start "
        "(`/proc/self/statm`, the block table excluded) right after the frees and after the "
        "second; target: at most the live bytes + %d%% + %d KiB.\n" % (
            IDLE_KERNELS[0], m["idle_mib"], IDLE_KERNELS[1], ISSUE22["idle_slack_live"] * 100,
            ISSUE22["idle_slack_kib"]),
        idle_table(m["idle"]) + "\n"])
