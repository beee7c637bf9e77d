#!/bin/sh
# formats.sh TOOL FIXTURES WORK SCHEMA
#
# Machine-readable output: every --json document validates against the
# schema in the repository (and a document without a finding's fix does
# not: the negative control), carries the tool and schema versions, and
# --sarif says the same findings as SARIF 2.1.0 (levels, rules, locations,
# baseline suppressions, input errors).
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3 schema=$4

rm -rf "$work"
mkdir -p "$work/tree/with blank"
cd "$fixtures" || exit 1
cp nif_jemalloc_a.so "$work/tree/with blank/a.so"
cp nif_jemalloc_b.so "$work/tree/b.so"
ln -s missing.so "$work/tree/dangling.so"

# One JSON document per kind of run: findings, containers, DT_NEEDED,
# input errors, a baseline in use, nothing audited.
"$tool" --write-baseline="$work/base.txt" nif_jemalloc_a.so tls_exported.so >/dev/null 2>&1
i=0
for args in "nif_jemalloc_a.so nif_jemalloc_b.so" \
  "libcopies.a pkg-0.1-cp311-cp311-linux_x86_64.whl app-0.1.tar.gz vendored-0.1-py3-none-any.whl" \
  "nif_needs_jemalloc_a.so mod_nsalloc_default.so interposer.so app_tcmalloc" \
  "mi_a.pyd mi-0.1-cp311-cp311-win_amd64.whl mi_mac.cpython-311-darwin.so mi_x86_64.o" \
  "missing.so deep.zip plain.so" \
  "--baseline=$work/base.txt nif_jemalloc_a.so tls_exported.so tls_exported_b.so" \
  "$work/tree" "$work/nothing-here"; do
  i=$((i + 1))
  # shellcheck disable=SC2086 # the arguments are split on purpose
  "$tool" --json $args >"$work/doc$i.json" 2>/dev/null
done
if python3 - "$schema" "$work"/doc*.json <<'PY'; then pass "every --json document validates against the schema"; else fail "schema validation"; fi
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
docs = [json.load(open(path)) for path in sys.argv[2:]]
for path, doc in zip(sys.argv[2:], docs):
    errors = list(validator.iter_errors(doc))
    assert not errors, (path, errors[0].message, list(errors[0].path))
    assert doc["tool"]["version"] and doc["schema_version"] == 1
assert sum(len(d["findings"]) for d in docs) >= 10 and sum(len(d["errors"]) for d in docs) >= 2
# Negative control: the schema rejects a finding without its fix.
broken = copy.deepcopy(docs[0])
del broken["findings"][0]["fix"]
assert list(validator.iter_errors(broken)), "the schema accepted a finding without a fix"
PY

# SARIF: the same findings as the JSON report.
"$tool" --sarif --baseline="$work/base.txt" nif_jemalloc_a.so nif_jemalloc_b.so tls_exported.so \
  "$work/tree" missing.so >"$work/run.sarif" 2>/dev/null
sarif_status=$?
"$tool" --json --baseline="$work/base.txt" nif_jemalloc_a.so nif_jemalloc_b.so tls_exported.so \
  "$work/tree" missing.so >"$work/run.json" 2>/dev/null
if python3 - "$work/run.sarif" "$work/run.json" "$sarif_status" <<'PY'; then pass "--sarif carries the findings, rules, levels, suppressions and errors"; else fail "--sarif"; fi
import json, sys
sarif, report, status = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
assert sarif["version"] == "2.1.0" and status == report["exit_status"] == 2
(run,) = sarif["runs"]
assert run["tool"]["driver"]["name"] == "nsalloc-audit"
rules = run["tool"]["driver"]["rules"]
results = run["results"]
assert len(results) == len(report["findings"]) > 0
levels = {"high": "error", "medium": "warning", "low": "note"}
for result, finding in zip(results, report["findings"]):
    assert result["ruleId"] == finding["kind"] == rules[result["ruleIndex"]]["id"]
    assert result["level"] == levels[finding["severity"]]
    assert result["message"]["text"] == finding["message"]
    assert rules[result["ruleIndex"]]["help"]["text"]
    names = [l["logicalLocations"][0]["fullyQualifiedName"] for l in result["locations"]]
    assert names == finding["artifacts"], (names, finding["artifacts"])
    accepted = finding["accepted_by_baseline_line"] is not None
    assert ("suppressions" in result) == accepted, result
uris = [l["physicalLocation"]["artifactLocation"]["uri"] for r in results for l in r["locations"]]
assert any(u.endswith("tree/with%20blank/a.so") for u in uris), uris
assert any("suppressions" in r for r in results) and any("suppressions" not in r for r in results)
(invocation,) = run["invocations"]
assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
assert [n["message"]["text"] for n in invocation["toolExecutionNotifications"]] == [
    "No such file or directory"]
PY
"$tool" --json --sarif nif_jemalloc_a.so >/dev/null 2>"$work/both.err"
status=$?
if [ "$status" = 2 ]; then pass "--json with --sarif is a usage error"; else
  fail "--json with --sarif: exit status $status"
fi

checks_done
