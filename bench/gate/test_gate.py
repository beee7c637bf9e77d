#!/usr/bin/env python3
"""test_gate.py - the gate's verdicts on synthetic measurements (ctest
bench.gate_judge): the 3% line, a doctored baseline, metrics missing on
either side, hostile baselines, another compiler's baseline and the skip
line. Needs neither the peers nor valgrind; bench.gate_negative runs the
real measurement of a slower build."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gate  # noqa: E402

BUILD = "GNU 12.2.0 RelWithDebInfo"
# (nsalloc samples, mimalloc samples) as gate.measure() returns them.
MEASURED = {
    "pair.module": ([51.3], [44.5]),
    "live-set.module": ([126.0], [117.8]),
    "faults.larson": ([530, 541, 560], [126, 128, 131]),
}


def ratios(scale=1.0):
    return {m: gate.ratio_of(samples) * scale for m, samples in MEASURED.items()}


class GateTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.saved = self.path("saved.json")
        self.write(self.saved, {"build": BUILD, "samples": MEASURED})

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def write(self, path, data):
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))

    def gate(self, *argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = gate.main(list(argv))
        return status, out.getvalue()

    def judge_against(self, baseline):
        path = self.path("baseline.json")
        self.write(path, baseline)
        return self.gate("--judge", self.saved, "--baseline", path)

    def test_same_ratios_pass_and_print_every_ratio(self):
        status, out = self.judge_against({"build": BUILD, "ratios": ratios()})
        self.assertEqual(status, 0, out)
        for metric in MEASURED:
            self.assertRegex(out, r"\n%s .* (\d\.\d{3}) +\1 +[\d.]+  ok\n" % metric)
        self.assertIn("perf gate: PASS: 3 ratios", out)

    def test_three_percent_is_the_line(self):
        within = {"build": BUILD, "ratios": ratios(1 / 1.029)}
        beyond = {"build": BUILD, "ratios": ratios(1 / 1.031)}
        self.assertEqual(self.judge_against(within)[0], 0)
        status, out = self.judge_against(beyond)
        self.assertEqual(status, 1, out)
        self.assertEqual(out.count("FAIL (+3.1%)"), 3, out)

    def test_doctored_baseline_fails_every_metric(self):
        status, out = self.judge_against({"build": BUILD, "ratios": ratios(1 / 1.04)})
        self.assertEqual(status, 1)
        self.assertIn("perf gate: FAIL: faults.larson, live-set.module, pair.module grew", out)
        self.assertIn("make gate-baseline", out)

    def test_a_better_ratio_passes_and_asks_to_lock_in_instructions(self):
        status, out = self.judge_against({"build": BUILD, "ratios": ratios(1.10)})
        self.assertEqual(status, 0, out)
        self.assertEqual(out.count("9.1% below"), 3, out)
        self.assertEqual(out.count("lock it in (make gate-baseline)"), 2, out)  # not faults

    def test_metric_missing_on_either_side_fails(self):
        committed = ratios()
        del committed["pair.module"]
        committed["pair.override"] = 1.1
        status, out = self.judge_against({"build": BUILD, "ratios": committed})
        self.assertEqual(status, 1, out)
        self.assertIn("pair.override        not measured", out)
        self.assertRegex(out, r"\npair\.module .*FAIL \(no committed ratio")

    def test_hostile_baselines_are_errors(self):
        for text in ["{", "[]", '{"build": "%s"}' % BUILD,
                     '{"ratios": {"pair.module": 1.0}}',
                     '{"build": "%s", "ratios": {"pair.module": "1.1"}}' % BUILD,
                     '{"build": "%s", "ratios": {"pair.module": NaN}}' % BUILD,
                     '{"build": "%s", "ratios": {"pair.module": -1}}' % BUILD,
                     '{"build": "%s", "ratios": {"pair.module": true}}' % BUILD,
                     " " * (gate.BASELINE_MAX_BYTES + 1)]:
            status, out = self.judge_against(text)
            self.assertEqual(status, 2, text[:60])
            self.assertIn("perf gate: ERROR: baseline", out)

    def test_another_builds_baseline_is_an_error(self):
        status, out = self.judge_against({"build": "Clang 14.0.6 Release", "ratios": ratios()})
        self.assertEqual(status, 2)
        self.assertIn("is for a Clang 14.0.6 Release build", out)

    def test_no_peers_skips_with_one_line(self):
        config = self.path("gate-config.json")
        self.write(config, {"peer_dir": "/nonexistent/peers/mimalloc-3.4.3"})
        status, out = self.gate("--config", config)
        self.assertEqual(status, 0)
        self.assertEqual(out.count("\n"), 1, out)
        self.assertTrue(out.startswith("perf gate: SKIPPED: no mimalloc 3.4.3 in /nonexistent"))

    def test_a_fault_ratio_over_its_limit_is_measured_again(self):
        config = self.path("gate-config.json")
        self.write(config, {"build": BUILD, "override": "-", "override_peer": "-"})
        baseline = self.path("baseline.json")
        self.write(baseline, {"build": BUILD, "ratios": {"faults.larson": 4.0}})
        for second, status, calls in [(400, 0, 2), (430, 1, 2), (None, 0, 1)]:
            series = [([430] * 15, [100] * 15), ([second] * 30, [100] * 30)]
            if second is None:  # within the limit at once: no second series
                series = [([410] * 15, [100] * 15)]
            measured = []

            def fake(cfg, metric, work, factor=1, slow=False):
                measured.append(factor)
                return series[len(measured) - 1]
            real, gate.measure = gate.measure, fake
            try:
                got, out = self.gate("--config", config, "--baseline", baseline,
                                     "--only", "faults.larson")
            finally:
                gate.measure = real
            self.assertEqual((got, len(measured)), (status, calls), out)
            if calls == 2:  # pooled: 15 runs at 430 and 30 at the second value
                self.assertEqual(measured, [1, 2])
                self.assertIn("faults.larson is 4.300, over its limit: measuring it again", out)
                self.assertIn("(%d..430, 45)" % second, out)

    def test_a_failing_program_is_an_error_not_a_pass(self):
        with self.assertRaisesRegex(gate.GateError, "failed \\(exit 3\\)"):
            gate.run([sys.executable, "-c", "import sys; sys.exit(3)"], os.environ, 10)
        with self.assertRaisesRegex(gate.GateError, "no result within 1 s"):
            gate.run([sys.executable, "-c", "import time; time.sleep(5)"], os.environ, 1)

    def test_huge_pages_off_reaches_the_child_and_is_undone(self):
        status = [sys.executable, "-c", "print(open('/proc/self/status').read())"]
        if "THP_enabled:" not in gate.run(status, os.environ, 30)[0]:
            self.skipTest("this kernel's /proc/self/status has no THP_enabled line")
        with gate.huge_pages(False):
            self.assertIn("THP_enabled:\t0", gate.run(status, os.environ, 30)[0])
        self.assertIn("THP_enabled:\t1", gate.run(status, os.environ, 30)[0])

    def test_faults_are_counted_per_child(self):
        touch = "b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096])"
        with gate.huge_pages(False):  # even where THP is "always": one fault per 4 KiB page
            _, big = gate.run([sys.executable, "-c", touch], os.environ, 30)
            _, small = gate.run([sys.executable, "-c", "pass"], os.environ, 30)
        self.assertGreater(big, small + 16000)  # 64 MiB of 4 KiB pages written
        self.assertLess(big, small + 17000)


if __name__ == "__main__":
    unittest.main()
