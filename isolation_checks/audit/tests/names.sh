#!/bin/sh
# names.sh TOOL FIXTURES WORK
#
# Member names as stored, in every report, in --exclude and in baselines: a
# zip name flagged UTF-8 (bit 11) as is, an unflagged one converted from
# CP437, a tar name from its pax path record; control characters escaped in
# the text report (JSON and SARIF escape them as JSON does). On 4bbb9f9 every
# non-ASCII zip name was "x.whl!?", so a baseline written for two copies
# accepted a third.
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
# wheel.py OUT NAME... : a wheel holding a jemalloc NIF under each NAME
cat >wheel.py <<'PY'
import sys, zipfile
so = open(sys.argv[1], "rb").read()
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    for name in sys.argv[3:]:
        z.writestr(name, so)  # non-ASCII names get the UTF-8 flag
PY
jemalloc=$fixtures/nif_jemalloc_a.so
python3 wheel.py "$jemalloc" w.whl "pkg/α.so" "pkg/β.so"

"$tool" w.whl >two.txt 2>two.err
status=$?
expect_status 1 "two UTF-8 named copies are a duplicate"
expect_line two.txt "w.whl!pkg/α.so" "a UTF-8 flagged name is reported as stored"
expect_line two.txt "  [high] duplicate-family: jemalloc is bundled in 2 artifacts: w.whl!pkg/α.so and w.whl!pkg/β.so" \
  "the finding names both members"
"$tool" --json w.whl >two.json 2>/dev/null
expect_match two.json '    \{"path": "w\.whl!pkg/\\u03b1\.so".*' "JSON carries the name (as \\u escapes)"
python3 -c 'import json,sys; d=json.load(open("two.json")); assert [a["path"] for a in d["artifacts"]] == ["w.whl!pkg/α.so", "w.whl!pkg/β.so"], d["artifacts"]' \
  && pass "JSON decodes to the stored names" || fail "JSON decodes to the stored names"
"$tool" --sarif w.whl >two.sarif 2>/dev/null
python3 -c 'import json; d=json.load(open("two.sarif")); names={l["logicalLocations"][0]["fullyQualifiedName"] for r in d["runs"][0]["results"] for l in r["locations"]}; assert "w.whl!pkg/β.so" in names, names' \
  && pass "SARIF carries the stored name" || fail "SARIF carries the stored name"

# A baseline written for the two copies fails on a third with another
# non-ASCII name (the negative control of the baseline flow).
"$tool" --write-baseline=base.txt w.whl >/dev/null 2>&1
expect_line base.txt "accept duplicate-family jemalloc w.whl!pkg/α.so w.whl!pkg/β.so" \
  "the baseline names each member"
"$tool" --baseline=base.txt w.whl >same.txt 2>&1
status=$?
expect_status 0 "the same wheel passes its baseline"
python3 wheel.py "$jemalloc" w.whl "pkg/α.so" "pkg/β.so" "pkg/γ.so"
"$tool" --baseline=base.txt w.whl >third.txt 2>&1
status=$?
expect_status 1 "a third copy with another non-ASCII name is not accepted"
expect_line third.txt "  [high] duplicate-family: jemalloc is bundled in 3 artifacts: w.whl!pkg/α.so, w.whl!pkg/β.so and w.whl!pkg/γ.so" \
  "the new finding names the third copy"

# --exclude matches the name as stored.
"$tool" '--exclude=*!pkg/γ.so' w.whl >excluded.txt 2>&1
expect_line excluded.txt "  1 path excluded: w.whl!pkg/γ.so" "--exclude matches a UTF-8 member name"
expect_no_line excluded.txt "w.whl!pkg/γ.so" "the excluded member is not audited"

# An unflagged name is CP437: byte 0x82 is é.
python3 - "$jemalloc" <<'PY'
import sys, zipfile
with zipfile.ZipFile("cp437.zip", "w") as z:
    z.writestr("pkg/#.so", open(sys.argv[1], "rb").read())
data = open("cp437.zip", "rb").read()
assert data.count(b"pkg/#.so") == 2  # local and central header, no flag
open("cp437.zip", "wb").write(data.replace(b"pkg/#.so", b"pkg/\x82.so"))
PY
"$tool" cp437.zip >cp437.txt 2>&1
expect_line cp437.txt "cp437.zip!pkg/é.so" "an unflagged zip name is converted from CP437"

# A tar name from its pax path record (non-ASCII, and past ustar's 100 bytes).
long=$(printf 'd%.0s' $(seq 1 120))
python3 - "$jemalloc" "$long" <<'PY'
import io, sys, tarfile
so = open(sys.argv[1], "rb").read()
with tarfile.open("pax.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as t:
    for name in ("mod_ü.so", sys.argv[2] + "/mod.so"):
        info = tarfile.TarInfo(name)
        info.size = len(so)
        t.addfile(info, io.BytesIO(so))
PY
"$tool" pax.tar.gz >pax.txt 2>&1
expect_line pax.txt "pax.tar.gz!mod_ü.so" "a pax path record gives a non-ASCII name"
expect_line pax.txt "pax.tar.gz!$long/mod.so" "a pax path record gives a name past 100 bytes"

# Control characters reach no report raw.
python3 wheel.py "$jemalloc" esc.whl "$(printf 'pkg/\033[31mred\n.so')"
"$tool" esc.whl >esc.txt 2>esc.err
expect_line esc.txt 'esc.whl!pkg/\x1b[31mred\x0a.so' "ESC and newline are escaped in the text report"
if LC_ALL=C grep -q "$(printf '\033')" esc.txt esc.err; then
  fail "an ESC byte reached the text report or standard error"
else
  pass "no ESC byte in the text report or on standard error"
fi
"$tool" --json esc.whl >esc.json 2>/dev/null
python3 -c 'import json; d=json.load(open("esc.json")); assert d["artifacts"][0]["path"] == "esc.whl!pkg/\x1b[31mred\n.so"' \
  && pass "JSON keeps the exact name, escaped" || fail "JSON keeps the exact name, escaped"
checks_done
