#!/bin/sh
# needed.sh TOOL FIXTURES WORK
#
# Allocators a module loads through DT_NEEDED: found on this machine
# (Debian's libjemalloc.so.2) and in the audited tree or through DT_RUNPATH
# $ORIGIN, transitively; paired with modules that bundle the same family,
# while two modules needing one shared library are one copy (the negative
# control); a DT_NEEDED found nowhere is counted.
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3

rm -rf "$work"
mkdir -p "$work/alone"
cd "$fixtures" || exit 1

# A NIF bundling nothing but needing Debian's libjemalloc.so.2.
"$tool" nif_needs_jemalloc_a.so >"$work/one.txt" 2>&1
status=$?
expect_status 0 "a module needing jemalloc alone is one copy (exit 0)"
expect_line "$work/one.txt" "  allocators via DT_NEEDED: jemalloc, interposer" \
  "the module's DT_NEEDED allocators are reported"
expect_match "$work/one.txt" "    libjemalloc\.so\.2 => /(usr/)?lib/[a-z0-9_-]+/libjemalloc\.so\.2: jemalloc, interposer" \
  "the library is found on this machine"
expect_line "$work/one.txt" "  loaded through DT_NEEDED of nif_needs_jemalloc_a.so (found on disk)" \
  "the library joins the set, naming who needs it"

# A module needing Debian's Boehm GC.
"$tool" mod_needs_gc.so >"$work/gc.txt" 2>&1
expect_match "$work/gc.txt" "    libgc\.so\.1 => /(usr/)?lib/[a-z0-9_-]+/libgc\.so\.1: boehm-gc" \
  "Boehm GC loaded through DT_NEEDED is reported"

# Two modules needing the same shared library load one copy of it.
"$tool" nif_needs_jemalloc_a.so nif_needs_jemalloc_b.so >"$work/two.txt" 2>&1
status=$?
expect_status 0 "two modules needing libjemalloc.so.2 share one copy (exit 0)"
expect_line "$work/two.txt" "nsalloc-audit: 3 artifacts, 0 errors, 1 finding" \
  "the shared library is one artifact"
expect_no_match "$work/two.txt" "duplicate-family" "no duplicate for one shared copy"

# A module needing libjemalloc.so.2 beside one bundling jemalloc: two copies.
"$tool" nif_needs_jemalloc_a.so nif_jemalloc_b.so >"$work/mixed.txt" 2>&1
status=$?
expect_status 1 "a bundled copy beside a needed one fails"
expect_match "$work/mixed.txt" "  \[high\] duplicate-family: jemalloc is bundled in 2 artifacts: nif_jemalloc_b\.so and /(usr/)?lib/[a-z0-9_-]+/libjemalloc\.so\.2" \
  "the bundled copy is paired with the needed library"

# Transitively, through DT_RUNPATH $ORIGIN: needs_local.so -> libmid.so
# (no allocator) -> libbundled.so.1 (jemalloc).
"$tool" needed/needs_local.so >"$work/runpath.txt" 2>&1
expect_line "$work/runpath.txt" "    libmid.so => needed/libmid.so: jemalloc" \
  "jemalloc two DT_NEEDED levels down is reported at the module"
expect_line "$work/runpath.txt" "  loaded through DT_NEEDED of needed/libmid.so (found on disk)" \
  "the library holding jemalloc is found through \$ORIGIN"
# The same libraries audited as a tree resolve among the audited artifacts.
"$tool" needed >"$work/tree.txt" 2>&1
expect_line "$work/tree.txt" "nsalloc-audit: 3 artifacts, 0 errors, 1 finding" \
  "a walked tree resolves DT_NEEDED among its own artifacts"
expect_line "$work/tree.txt" "    libbundled.so.1 => needed/libbundled.so.1: jemalloc" \
  "libmid.so's DT_NEEDED names the audited library"
expect_no_match "$work/tree.txt" "loaded through" "nothing is added from disk"

# Alone in another directory, the module's DT_NEEDED is found nowhere.
cp needed/needs_local.so "$work/alone/"
"$tool" "$work/alone/needs_local.so" >"$work/alone.txt" 2>&1
expect_line "$work/alone.txt" "  DT_NEEDED not found: 1 library (neither audited nor on this machine): libmid.so" \
  "an unresolvable DT_NEEDED is counted"
expect_line "$work/alone.txt" "  allocators: none" "and brings no allocator"

"$tool" --json nif_needs_jemalloc_a.so >"$work/one.json" 2>/dev/null
if python3 - "$work/one.json" <<'PY'; then pass "--json carries dependencies and needed_by"; else fail "--json dependencies"; fi
import json, sys
report = json.load(open(sys.argv[1]))
module, library = report["artifacts"]
(dep,) = module["dependencies"]
assert dep["name"] == "libjemalloc.so.2" and dep["families"] == ["jemalloc", "interposer"], dep
assert dep["path"] == library["path"] and library["needed_by"] == "nif_needs_jemalloc_a.so"
assert module["unresolved_needed"] == 0 and module["needed_by"] is None
PY

checks_done
