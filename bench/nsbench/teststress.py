"""mimalloc's own stress test (test/test-stress.c of the prebuilt peers),
compiled at run time with its USE_STD_MALLOC switch, which maps its mi_*
calls to the standard API; every allocator comes in by LD_PRELOAD. The source
stays in ../shared/peers: it is never copied into the repository."""
import hashlib
import os
import shutil
import sys

from .measure import run, run_measured
from .sections import interleave
from .workloads import TEST_STRESS, TEST_STRESS_ROUNDS, TEST_STRESS_SOURCE


def build_test_stress(r, peers_dir):
    """The executable in the work folder, or None (with a note) when the
    peers' source or a C compiler is absent."""
    source = os.path.join(peers_dir, TEST_STRESS_SOURCE)
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not os.path.exists(source) or not compiler:
        print("run.py: note: %s: mimalloc's test-stress rows are skipped" % (
            "no C compiler" if os.path.exists(source) else "no " + source), file=sys.stderr)
        return None
    exe = os.path.join(r.work, "test-stress")
    run([compiler, "-O2", "-DNDEBUG", "-DUSE_STD_MALLOC", "-o", exe, source, "-lpthread"])
    return exe


def test_stress_section(r, parms, peers_dir, smoke):
    """Interleaved whole-process runs of test-stress under every program arm,
    in the multi-threaded rows' format; None when it cannot be built."""
    exe = build_test_stress(r, peers_dir)
    if not exe:
        return None
    threads, scale, iterations = TEST_STRESS[1 if smoke else 0]
    cmd = [exe, str(threads), str(scale), str(iterations)]

    def measure(arm):
        proc, usage = run_measured(cmd, r.arm_env(arm))
        digest = hashlib.sha256(proc.stdout).hexdigest()
        if arm.label == r.args.perturb_arm:
            digest = hashlib.sha256(proc.stdout + b"perturbed").hexdigest()
        r.record(("program", "test-stress"), arm, digest)
        return usage["wall"], usage["cpu"], usage["peak_kib"], usage["faults"], None

    name = "test-stress (T=%d, scale %d, %d iterations)" % (threads, scale, iterations)
    entry = interleave(parms, 1 if smoke else TEST_STRESS_ROUNDS, measure)
    return {name: dict(entry, kernel="test-stress", threads=threads)}
