"""Unit test of the issue-22 verdicts (ctest bench.targets): synthetic runs
whose numbers are on either side of each limit must come out met and MISSED,
so a verdict can only be computed, never a constant. Run as
`python3 -m nsbench.test_targets` from bench/."""
import unittest

from .arms import Arm
from .targets import issue22_targets, worst_of


def mt_entry(kernel, threads, ns_faults, mi_faults, ns_time=1.0, mi_time=1.0, ns_peak=100,
             mi_peak=100):
    """An interleaved row of two rounds, 'mimalloc' standing for 3.4.3."""
    def series(ns, mi):
        return {"nsalloc": [ns, ns], "mimalloc-3.4.3": [mi, mi], "mimalloc": [mi, mi]}
    return {"times": series(ns_time, mi_time), "cpu": series(ns_time, mi_time),
            "peaks": series(ns_peak, mi_peak), "faults": series(ns_faults, mi_faults),
            "ops": 1000, "best_of": "mimalloc-3.4.3", "kernel": kernel, "threads": threads}


def run_of(faults_long, idle_growth, pair_ir):
    """A run whose larson row faults 100 (mimalloc 100), `faults_long` at
    10x; idle-rss grows `idle_growth` KiB with nothing live; the bundled
    pair costs `pair_ir` against mimalloc 3.4.3's 100."""
    return {
        "classic_mt": {"larson (T=2)": mt_entry("larson", 2, 100, 100)},
        "classic_mt_long": {"larson (T=2, 10x)": mt_entry("larson", 2, faults_long, 100)},
        "test_stress": None,
        "programs": {},
        "idle": {"idle-rss": {"nsalloc": {"start_kib": 1000, "freed_kib": 1000 + idle_growth,
                                          "idle_kib": 1000 + idle_growth, "live_kib": 0}}},
        "long_labels": ["nsalloc", "mimalloc-3.4.3"],
    }, {"fastpath": {"ir": {"nsalloc-module": pair_ir, "mimalloc-3.4.3-bundled": 100},
                     "bundled": (pair_ir / 100, "mimalloc-3.4.3-bundled"),
                     "override": 1.0}}


ARMS = [Arm("nsalloc", None), Arm("mimalloc-3.4.3", None)]


def verdicts(faults_long, idle_growth, pair_ir):
    m, module = run_of(faults_long, idle_growth, pair_ir)
    return {row[0].split(":")[0]: row[3] for row in issue22_targets(m, ARMS, [], module)}


class Issue22Verdicts(unittest.TestCase):
    def test_within_every_limit_is_met(self):
        v = verdicts(faults_long=120, idle_growth=1000, pair_ir=100)
        self.assertEqual(v["faults flat with length"], "**met**")
        self.assertEqual(v["idle RSS (idle-rss)"], "**met**")
        self.assertEqual(v["bundled malloc(32)+free pair (fastpath kernel), nsalloc / mimalloc "
                           "3.4.3, both in a module"], "**met**")

    def test_past_each_limit_is_missed(self):
        v = verdicts(faults_long=130, idle_growth=1100, pair_ir=101)
        self.assertEqual(v["faults flat with length"], "**MISSED**")
        self.assertEqual(v["idle RSS (idle-rss)"], "**MISSED**")
        self.assertEqual(v["bundled malloc(32)+free pair (fastpath kernel), nsalloc / mimalloc "
                           "3.4.3, both in a module"], "**MISSED**")
        # 10x faults 130 against mimalloc's 100: within 2x, so that target holds.
        self.assertEqual(v["minor faults, nsalloc / better mimalloc"], "**met**")

    def test_worst_of_names_every_failing_row(self):
        row = worst_of("t", "<= 1", [("a", 0.5), ("b", 1.5), ("c", 2.0), ("d", None)],
                       lambda v: v <= 1)
        self.assertEqual(row[3], "**MISSED**")
        self.assertIn("worst 2.000 (c)", row[2])
        self.assertIn("2 of 3 rows miss: b, c", row[2])
        higher = worst_of("t", ">= 1", [("a", 0.9), ("b", 1.2)], lambda v: v >= 1,
                          higher_is_better=True)
        self.assertIn("worst 0.900 (a)", higher[2])

    def test_nothing_measured_is_not_met(self):
        self.assertEqual(worst_of("t", "<= 1", [("a", None)], lambda v: v <= 1)[3],
                         "**not measured**")


if __name__ == "__main__":
    unittest.main()
