"""What the suite measures: the kernels and their sizes, the programs, the
prebuilt peers and the targets the report checks."""
import os

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH_DIR)

# ---------------------------------------------------------------- workloads --
# (kernel, full n, smoke n, threads)
PER_OP = [
    ("small", 400000, 2000, 1),
    ("medium", 100000, 500, 1),
    ("large", 20000, 100, 1),
    ("huge", 400, 8, 1),
    ("batch-lifo", 400000, 2000, 1),
    ("batch-fifo", 400000, 2000, 1),
    ("realloc-chain", 40000, 500, 1),
    ("realloc-large", 2000, 26, 1),
    ("calloc", 200000, 1000, 1),
    ("aligned", 200000, 1000, 1),
    ("usable-size", 1000000, 5000, 1),
    ("working-set", 300000, 1000, 1),
    ("live-set", 300000, 2000, 1),
    ("aligned-64", 300000, 2000, 1),
    ("aligned-4096", 100000, 500, 1),
    ("cfrac-like", 300000, 2000, 1),
    ("tree", 204800, 4096, 1),
    ("xthread-free", 200000, 1024, 2),
]
CLASSIC_ST = [  # single-threaded classic kernels: callgrind
    ("glibc-simple", 200000, 20000, 1),
    ("alloc-test", 500000, 2000, 1),
    ("larson", 300000, 2000, 1),
    ("malloc-large", 60, 4, 1),
]
# Rows kept out of the user-relevant geometric means, and why: each measures
# a policy more than code paths. For memory from the operating system, a count
# of user-space instructions does not weigh the system calls and page faults
# behind a handful of instructions, and one peer version can be pathological
# (Debian's mimalloc 2.0.9 re-maps every huge block); for large realloc
# growth, copying or growing in place decides the row by orders of magnitude.
# Their rows are still printed, with their own geometric mean.
PATHOLOGICAL = {
    "huge": "4-8 MiB blocks: mapping policy (mmap/munmap per pair or a cached segment)",
    "malloc-large": "5-25 MiB blocks: mapping policy, as for huge",
    "realloc-large": "64 KiB-1 MiB growth: whether an allocator grows a block in place or "
                     "copies it (a memcpy of up to 1 MiB per step) decides the row, not its "
                     "code paths",
}
FASTPATH = ("fastpath", 1000000, 20000)  # kernel, full n, smoke n
FASTPATH_CALLERS = ("bench_fastpath_mallocs", "bench_fastpath_frees")
# The newest mimalloc releases, prebuilt (../shared/peers/README.md); absent
# in a bare checkout, where the runner says so and compares with Debian's.
PEERS_DIR = os.path.join(os.path.dirname(ROOT), "shared", "peers")
PEERS = [("mimalloc-2.4.1", "mimalloc-2.4.1/libmimalloc.so.2.4"),
         ("mimalloc-3.4.3", "mimalloc-3.4.3/libmimalloc.so.3.4")]
DEBIAN_MIMALLOC = "mimalloc-2.0.9"
CLASSIC_MT = [  # multi-threaded classic kernels: interleaved wall clock
    ("larson", 4000000, 2000, None),
    ("xmalloc", 4000000, 2000, None),
    ("mstress", 2000000, 2000, None),
    ("alloc-test", 4000000, 2000, None),
    ("cache-scratch", 1000, 10, None),
    ("xthread-free", 1000000, 1024, 2),
    ("malloc-large", 100, 4, 1),
    # Smoke n 0: not in the smoke (each thread first writes 10 blocks, 150 MiB).
    ("large-churn", 20, 0, 1),
    ("large-churn", 20, 0, 2),
]
# Every multi-threaded row again at this many times its length (issue 22:
# page faults must not grow with run length once the working set is reached),
# on nsalloc and the reference mimallocs only (Debian's when the prebuilt
# peers are absent) and in fewer rounds: the long rows are what the full
# suite's time goes to (mimalloc 3.4.3 takes 15 s for malloc-large at 10x).
LONG_FACTOR = 10
LONG_ROUNDS = 2
# mimalloc's own stress test, compiled at run time from the prebuilt peers'
# source with its USE_STD_MALLOC switch (mi_* mapped to the standard API),
# run under LD_PRELOAD of each allocator: (threads, scale, iterations) in the
# full and the smoke run, and rounds.
TEST_STRESS_SOURCE = "mimalloc-3.4.3/test/test-stress.c"
TEST_STRESS = ((4, 20, 10), (2, 5, 2))
TEST_STRESS_ROUNDS = 5
# Idle RSS: MiB of small blocks allocated and freed (full, smoke), and the
# arms run in the smoke (each run sleeps 1 s).
IDLE = (256, 48)
IDLE_KERNELS = ("idle-rss", "idle-rss-live")
IDLE_SMOKE_ARMS = ("nsalloc",)
# (name, command template, env, full size, smoke size, stdin template or None)
PROGRAMS = [
    ("lua5.4", ["lua5.4", "{programs}/alloc.lua", "{n}"], {}, 3000, 200, None),
    ("python3", ["python3", "{programs}/alloc.py", "{n}"],
     {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
     2000, 100, None),
    ("sqlite3", ["sqlite3", ":memory:"], {}, 20000, 300, "workload.sql"),
    ("perl", ["perl", "{programs}/alloc.pl", "{n}"],
     {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}, 4000, 200, None),
    ("jq", ["jq", "-c", "-f", "{programs}/transform.jq", "{work}/jq-{n}.json"], {}, 2500, 100, None),
    ("xz", ["xz", "-c", "-6", "-T1", "{work}/xz-{n}.txt"], {}, 1500, 20, None),
]
MULTICOPY = [1, 4, 16]
CHURN = (40, 4, 3, 2)  # full waves, threads; smoke waves, threads

# The module arm: every single-threaded kernel against a private copy in a
# dlopen()ed module (bench-module, BENCH_MODULE=...), nsalloc's and mimalloc's
# bundled the same way or linked against its .so (bench/CMakeLists.txt).
MODULE_SHAPES = ("bundled", "so")
# Its kernels run at 1/4 of the scan's length (instructions per operation are
# the steady state's either way; five more arms at full length would add a
# quarter to the suite), with the override again at that length for the
# 'private copy / override' ratio.
MODULE_DIVISOR = 4

# Issue 22's definition of done (docs/benchmarks.md "Targets"), checked by
# nsbench/targets.py against the run.
ISSUE22 = {
    "faults_vs_mimalloc": 2.0,      # minor faults <= 2x the better mimalloc
    "faults_growth": 1.25,          # 10x the length: faults grow by at most 25%
    "throughput_vs_mimalloc": 1.00,  # wall and CPU >= the better mimalloc
    "peak_rss_vs_best": 1.10,       # peak RSS <= 1.10x the best arm
    "idle_slack_kib": 1024, "idle_slack_live": 0.10,  # idle <= live * 1.1 + 1 MiB
    "pair_vs_mimalloc3": 1.00,      # bundled malloc(32)+free <= mimalloc 3.4.3
    "module_kernels": 1.00,         # named kernels <= the better bundled mimalloc
    "private_vs_override": 1.03,    # module copy <= 1.03x the override
}
# The kernels the bundled-shape target names (producer -> consumer is xthread-free).
ISSUE22_MODULE_KERNELS = ("live-set", "batch-lifo", "tree", "xthread-free")

TARGETS = {
    "st_max": 1.00,
    "programs_vs_mimalloc": 1.00, "programs_vs_glibc": 0.85,
    "mt_vs_mimalloc": 1.00, "mt_faults_vs_mimalloc": 1.5, "mt_vs_glibc": 1.5,
    "peak_rss_vs_best": 1.05, "idle_copy_kib": 64, "idle_16_kib": 1024,
}
