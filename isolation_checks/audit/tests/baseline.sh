#!/bin/sh
# baseline.sh TOOL FIXTURES WORK
#
# Accepting known findings and excluding paths: --write-baseline records
# every finding and the run then passes; the same baseline passes the same
# tree and fails on a new finding (the negative control); entries match by
# rule, family and artifact globs; unused entries are reported; a baseline
# that does not parse is a usage error naming its line; --exclude and
# "exclude" lines skip files, directories and zip members.
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3

rm -rf "$work"
mkdir -p "$work/rel/lib/a/priv" "$work/rel/lib/b/priv" "$work/rel/lib/c/priv" "$work/rel/tests"
cd "$work" || exit 1
cp "$fixtures/nif_jemalloc_a.so" rel/lib/a/priv/a.so
cp "$fixtures/nif_jemalloc_b.so" "rel/lib/b/priv/b nif.so" # a blank in the path
cp "$fixtures/tls_exported.so" rel/tests/tls_exported.so

# Writing a baseline accepts every current finding: the run passes.
"$tool" --write-baseline=base.txt rel >write.txt 2>write.err
status=$?
expect_status 0 "--write-baseline accepts every finding (exit 0)"
expect_line base.txt "accept duplicate-family jemalloc rel/lib/a/priv/a.so rel/lib/b/priv/b\\ nif.so" \
  "the duplicate is recorded by rule, family and both artifacts (blank quoted)"
expect_line base.txt "accept exported-tls - rel/tests/tls_exported.so" \
  "a finding about no family is recorded with family -"
expect_line write.txt "exit status 0: 0 findings at or above medium not in the baseline (4 accepted), 0 errors" \
  "the written baseline accepts all 4 findings"

# The same tree against that baseline passes ...
"$tool" --baseline=base.txt rel >same.txt 2>same.err
status=$?
expect_status 0 "the same tree passes with its baseline"
expect_line same.txt "baseline base.txt: 4 entries, 0 unused" "every entry is used"
expect_line same.txt "    accepted: base.txt line 3" "an accepted finding names its baseline line"

# ... and a new copy of jemalloc fails it (negative control): the finding
# now names an artifact the entry does not.
cp "$fixtures/nif_jemalloc_a.stripped.so" rel/lib/c/priv/c.so
"$tool" --baseline=base.txt rel >new.txt 2>new.err
status=$?
expect_status 1 "a new jemalloc copy fails despite the baseline"
expect_line new.txt "exit status 1: 2 findings at or above medium not in the baseline (3 accepted), 0 errors" \
  "the new duplicate and the new module's static TLS fail; the rest stay accepted"
expect_line new.txt "baseline base.txt: 4 entries, 1 unused (line 3; fixed or no longer matching: delete them)" \
  "the entry that no longer matches is reported as unused"
"$tool" rel >nobase.txt 2>/dev/null
status=$?
expect_status 1 "without the baseline the same tree fails"

# Globs: one entry for every NIF of the release, by rule and family.
cat >globs.txt <<'EOF'
# reviewed: jemalloc in every NIF, static TLS in NIFs; exported TLS in tests
accept duplicate-family jemalloc rel/lib/*/priv/*.so
accept static-tls * rel/lib/*
accept exported-tls - rel/tests/*
EOF
"$tool" --baseline=globs.txt rel >globs.out 2>&1
status=$?
expect_status 0 "glob entries accept the findings of every NIF"
# The family must match: a tcmalloc entry does not accept jemalloc.
sed 's/jemalloc/tcmalloc/' globs.txt >wrong_family.txt
"$tool" --baseline=wrong_family.txt rel >wrong_family.out 2>&1
status=$?
expect_status 1 "an entry for another family does not accept the duplicate"
# The rule must match too.
sed 's/^accept duplicate-family/accept duplicate-export/' globs.txt >wrong_rule.txt
"$tool" --baseline=wrong_rule.txt rel >wrong_rule.out 2>&1
status=$?
expect_status 1 "an entry for another rule does not accept the duplicate"

# A baseline that does not parse, or is missing, is a usage error.
printf 'accept duplicate-family jemalloc a.so\nignore everything\n' >bad.txt
"$tool" --baseline=bad.txt rel >bad.out 2>bad.err
status=$?
expect_status 2 "a malformed baseline is exit status 2"
expect_line bad.err "nsalloc-audit: bad.txt: line 2: unknown directive 'ignore' (accept or exclude)" \
  "the error names the line"
printf 'accept static-tls *\n' >short.txt
"$tool" --baseline=short.txt rel >/dev/null 2>short.err
status=$?
expect_status 2 "an accept line without artifact globs is exit status 2"
"$tool" --baseline=missing.txt rel >/dev/null 2>missing.err
status=$?
expect_status 2 "a missing baseline is exit status 2"

# Excludes: a directory, by flag; a file, by baseline line.
"$tool" --exclude='*/tests/*' --baseline=base.txt rel >excl.txt 2>&1
status=$?
expect_line excl.txt "  1 path excluded: rel/tests" "the excluded directory is named, not walked"
expect_no_line excl.txt "rel/tests/tls_exported.so" "nothing under the excluded directory is audited"
printf 'exclude rel/lib/c/*\n' >>base.txt
"$tool" --baseline=base.txt rel >excl2.txt 2>&1
status=$?
expect_status 0 "an exclude line in the baseline removes the new copy: exit 0"
expect_line excl2.txt "  1 path excluded: rel/lib/c" "the excluded directory is named"
# A zip member, by its full name.
"$tool" --exclude='*.whl!*/_native*' "$fixtures/pkg-0.1-cp311-cp311-linux_x86_64.whl" \
  "$fixtures/mod_nsalloc_a.so" >excl3.txt 2>&1
status=$?
expect_status 0 "excluding the wheel's extension leaves a clean set"
expect_line excl3.txt "  1 path excluded: $fixtures/pkg-0.1-cp311-cp311-linux_x86_64.whl!pkg/_native.cpython-311-x86_64-linux-gnu.so" \
  "the excluded zip member is named"
# Excluding everything is auditing nothing: an error, not a pass.
"$tool" --exclude='*' rel >/dev/null 2>all.err
status=$?
expect_status 2 "excluding every path is exit status 2"

# JSON: the acceptance and the baseline's use.
"$tool" --json --baseline=base.txt rel >base.json 2>/dev/null
if python3 - base.json <<'PY'; then pass "--json shows accepted findings and unused lines"; else fail "--json baseline fields"; fi
import json, sys
report = json.load(open(sys.argv[1]))
assert report["baseline"] == {"path": "base.txt", "entries": 4, "unused_lines": []}, report["baseline"]
assert report["accepted_findings"] == 4 and report["failing_findings"] == 0
assert all(f["accepted_by_baseline_line"] for f in report["findings"])
families = sorted((f["kind"], f["family"]) for f in report["findings"])
assert ("duplicate-family", "jemalloc") in families and ("exported-tls", None) in families
assert report["skipped"]["excluded"]["sample"] == ["rel/lib/c"]
PY

checks_done
