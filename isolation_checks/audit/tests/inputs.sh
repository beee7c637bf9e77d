#!/bin/sh
# inputs.sh TOOL FIXTURES WORK
#
# How arguments become artifacts: directories are walked recursively, glob
# patterns the shell left alone are expanded, a file reached twice (by a
# symbolic link) is audited once, files without ELF met in a walk are
# skipped, usage errors exit 2, and --json is well-formed JSON with the same
# facts as the text report.
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3

rm -rf "$work"
mkdir -p "$work/release/lib/a/priv/native" "$work/release/lib/b/priv/native"
cd "$work" || exit 1
cp "$fixtures/nif_jemalloc_a.so" release/lib/a/priv/native/a.so
cp "$fixtures/nif_jemalloc_b.stripped.so" release/lib/b/priv/native/b.so
ln -s a.so release/lib/a/priv/native/a_alias.so # the same file again
echo "defmodule A do end" >release/lib/a/a.ex    # no ELF: skipped in a walk
mkdir release/lib/loop && ln -s .. release/lib/loop/up  # a directory link is not followed

# A directory walk: two artifacts, the alias and the source file skipped.
"$tool" release >walk.txt 2>walk.err
status=$?
expect_status 1 "directory walk finds the duplicate jemalloc (exit 1)"
expect_line walk.txt "nsalloc-audit: 2 artifacts, 0 errors, 3 findings (skipped 1 without ELF, 1 seen twice)" \
  "walk counts the skipped file and the alias"
expect_line walk.txt "  [high] duplicate-family: jemalloc is bundled in 2 artifacts: release/lib/a/priv/native/a.so and release/lib/b/priv/native/b.so" \
  "walk order is name order; the alias is not a second copy"

expect_line walk.txt "  1 link to a directory (not followed): release/lib/loop/up" \
  "a directory link met in the walk is reported, not silently ignored"

# Links to nothing, link loops and FIFOs met while walking are counted and
# named; a FIFO is never opened (the walk would block on it).
mkdir -p odd
cp "$fixtures/mod_nsalloc_a.so" odd/mod.so
ln -s missing.so odd/dangling.so
ln -s loop_b odd/loop_a && ln -s loop_a odd/loop_b
mkfifo odd/pipe
timeout 20 "$tool" odd >odd.txt 2>odd.err
status=$?
expect_status 0 "a walk past odd entries still audits the module (exit 0, no FIFO hang)"
expect_line odd.txt "  1 dangling link: odd/dangling.so" "the dangling link is counted and named"
expect_line odd.txt "  2 symbolic link loops: odd/loop_a, odd/loop_b" "the link loop is counted and named"
expect_line odd.txt "  1 FIFO, socket or device: odd/pipe" "the FIFO is counted and named"

# Auditing nothing is an error, never a pass: an empty directory, a
# directory holding only a dangling link, a tree of sources only.
mkdir -p nothing/empty nothing/dangling nothing/sources
ln -s missing.so nothing/dangling/gone.so
echo "print('hi')" >nothing/sources/x.py
for dir in nothing/empty nothing/dangling nothing/sources; do
  "$tool" "$dir" >nothing.txt 2>nothing.err
  status=$?
  expect_status 2 "$dir: zero audited artifacts is exit status 2"
  expect_line nothing.err "nsalloc-audit: $dir: no artifact was audited: no ELF file, nor an archive, zip or tarball with ELF members, was found" \
    "$dir: the error says nothing was audited"
done
"$tool" --json nothing/dangling >nothing.json 2>/dev/null
if python3 - nothing.json <<'PY'; then pass "--json of an empty audit names the dangling link"; else fail "--json of an empty audit"; fi
import json, sys
report = json.load(open(sys.argv[1]))
assert report["exit_status"] == 2 and report["artifacts"] == []
assert report["skipped"]["dangling_links"] == {"count": 1, "sample": ["nothing/dangling/gone.so"]}
PY

# A glob the shell did not expand (quoted), as in every priv/native/*.so.
"$tool" 'release/lib/*/priv/native/[ab].so' >glob.txt 2>glob.err
status=$?
expect_status 1 "quoted glob pattern is expanded"
expect_line glob.txt "nsalloc-audit: 2 artifacts, 0 errors, 3 findings" "glob matches both modules"
"$tool" 'release/*.nothing' >noglob.txt 2>noglob.err
status=$?
expect_status 2 "a pattern matching nothing is an input error"
expect_line noglob.err "nsalloc-audit: release/*.nothing: no file matches this pattern" \
  "the unmatched pattern is named"

# Usage errors.
"$tool" >/dev/null 2>usage.err
status=$?
expect_status 2 "no arguments is a usage error"
"$tool" --fail-on=severe release >/dev/null 2>failon.err
status=$?
expect_status 2 "an unknown --fail-on level is a usage error"
expect_line failon.err "nsalloc-audit: --fail-on takes low, medium or high, not 'severe'" \
  "the bad level is named"
"$tool" --fail-on=low "$fixtures/mod_nsalloc_a.so" >/dev/null
status=$?
expect_status 0 "a clean private copy passes even at --fail-on=low"

# --json: parseable, and the same artifacts, findings and status.
"$tool" --json release >walk.json 2>/dev/null
status=$?
expect_status 1 "--json keeps the exit status"
if python3 - walk.json <<'PY'; then pass "--json output parses and matches the text report"; else fail "--json output"; fi
import json, sys
report = json.load(open(sys.argv[1]))
assert [a["path"] for a in report["artifacts"]] == [
    "release/lib/a/priv/native/a.so", "release/lib/b/priv/native/b.so"], report["artifacts"]
assert [f["name"] for f in report["artifacts"][0]["families"]] == ["jemalloc"]
assert report["artifacts"][1]["families"][0]["strings"] == ["<jemalloc>: "]
assert report["artifacts"][0]["host_vm"] == "Erlang NIF"
assert report["artifacts"][0]["tls"] == {"model": "static", "static_tls": "DF_STATIC_TLS"}
kinds = [(f["severity"], f["kind"]) for f in report["findings"]]
assert kinds == [("high", "duplicate-family"), ("high", "static-tls"), ("high", "static-tls")], kinds
assert report["findings"][0]["artifacts"] == [
    "release/lib/a/priv/native/a.so", "release/lib/b/priv/native/b.so"]
assert report["skipped"]["without_elf"] == 1 and report["skipped"]["seen_twice"] == 1
assert report["skipped"]["directory_links"]["sample"] == ["release/lib/loop/up"]
assert report["tool"]["name"] == "nsalloc-audit" and report["tool"]["version"]
assert report["schema_version"] == 1
# Every finding says what to do about it.
assert all(f["fix"] and f["fix"] != f["risk"] for f in report["findings"]), report["findings"]
assert report["exit_status"] == 1 and report["failing_findings"] == 3
PY

checks_done
