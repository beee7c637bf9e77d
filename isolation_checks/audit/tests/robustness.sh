#!/bin/sh
# robustness.sh TOOL FIXTURES WORK LIMIT_MEMORY
#
# Corrupt, truncated and non-ELF inputs each get a clear error while the
# other files are still audited; huge symbol tables and archives with
# hundreds of members finish in bounded time (and, with LIMIT_MEMORY=1,
# within 256 MiB of address space: not under sanitizers, which reserve more).
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3 limit_memory=$4
here=$(cd "$(dirname "$0")" && pwd)
cut_tail() { # cut_tail FILE BYTES OUT: FILE without its last BYTES bytes
  head -c $(($(wc -c <"$1") - $2)) "$1" >"$3"
}
run_bounded() { # run_bounded SECONDS OUT ERR ARG...: the tool's exit status
  seconds=$1 out=$2 err=$3
  shift 3
  (
    [ "$limit_memory" = 1 ] && ulimit -v 262144
    exec timeout "$seconds" "$tool" "$@"
  ) >"$out" 2>"$err"
}

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

# --- corrupt and truncated inputs, mixed with good ones ---------------------
good=$fixtures/mod_nsalloc_a.so
head -c 100 "$fixtures/nif_jemalloc_a.so" >truncated_header.so
head -c 5000 "$fixtures/nif_jemalloc_a.so" >truncated_early.so
head -c 400000 "$fixtures/nif_jemalloc_a.so" >truncated_half.so
python3 - "$fixtures/tls_initial_exec.so" <<'PY'
import random, sys
rng = random.Random(7)
open("random.bin", "wb").write(bytes(rng.getrandbits(8) for _ in range(65536)))
open("random_elf_magic.so", "wb").write(b"\x7fELF" + bytes(rng.getrandbits(8) for _ in range(4096)))
image = bytearray(open(sys.argv[1], "rb").read())
image[0x28:0x30] = (10**9).to_bytes(8, "little")  # e_shoff far past the end
open("bad_section_offset.so", "wb").write(image)
PY
echo "not a library" >text.so
: >empty.so
head -c 200 "$fixtures/libcopies.a" >truncated_header.a
cut_tail "$fixtures/libcopies.a" 100 truncated_member.a # inside its last member, plain.o
head -c 1000 "$fixtures/pkg-0.1-cp311-cp311-linux_x86_64.whl" >truncated.whl

run_bounded 60 report.txt errors.txt truncated_header.so truncated_early.so truncated_half.so \
  random.bin random_elf_magic.so bad_section_offset.so text.so empty.so truncated_header.a \
  truncated_member.a truncated.whl "$good" missing.so
status=$?
[ "$status" = 2 ] && pass "bad inputs give exit status 2" || fail "exit status $status, expected 2"
tail_lines() { sed "s|^nsalloc-audit: ||" errors.txt; }
tail_lines >errors.clean
for expected in \
  "truncated_header.so: truncated or corrupt: the program header table ends past the end of the file" \
  "truncated_early.so: truncated or corrupt: the dynamic segment \(PT_DYNAMIC\) ends past the end of the file" \
  "truncated_half.so: truncated or corrupt: the dynamic segment \(PT_DYNAMIC\) ends past the end of the file" \
  "random.bin: not an ELF, PE or Mach-O file, static archive, zip or tarball" \
  "random_elf_magic.so: corrupt ELF header: unknown class, byte order or version" \
  "text.so: not an ELF, PE or Mach-O file, static archive, zip or tarball" \
  "empty.so: empty file" \
  "truncated_member.a\(plain.o\): Truncated ar archive" \
  "truncated_header.a: truncated or corrupt: [0-9]+ bytes after the last member" \
  "truncated.whl: Truncated input file .*" \
  "missing.so: No such file or directory"; do
  expect_match errors.clean "$expected" "error reported: ${expected%%:*}"
done
expect_line report.txt "$good" "the good file is still audited"
# The loader never reads section headers: the file is read as it does.
expect_line report.txt "bad_section_offset.so" "section headers past the end: read through PT_DYNAMIC"
expect_line report.txt "    nsalloc: prefix=a_ version=0.1.0 visibility=hidden tls=global-dynamic; a_malloc defined, not exported" \
  "the good file's evidence is complete"
expect_line report.txt "  type: static archive, 2 ELF members (ELF64 LSB relocatable, x86-64)" \
  "the complete members of a truncated archive are audited"

# --- compressed and nested containers past the limits ------------------------
# A tar member declaring 3 GiB in a tiny tarball is refused by --max-ratio
# before anything is read; a truncated tarball and a corrupt gzip stream are
# errors; a tarball in a wheel in a tarball is opened (depth 2, within 3).
python3 - "$fixtures/nif_jemalloc_a.stripped.so" <<'PY'
import gzip, io, sys, tarfile, zipfile
def tar_bytes(members, mode="w:gz"):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 0
            t.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
header = tarfile.TarInfo("huge.so")
header.size = 3 << 30
open("huge_member.tar.gz", "wb").write(gzip.compress(header.tobuf() + b"\0" * 4096, mtime=0))
module = open(sys.argv[1], "rb").read()
whole = tar_bytes([("lib/a.so", module)])
open("truncated.tar.gz", "wb").write(whole[: len(whole) // 2])
open("corrupt.tar.gz", "wb").write(whole[:20] + bytes(200) + whole[220:])
wheel = io.BytesIO()
with zipfile.ZipFile(wheel, "w") as z:
    z.writestr("pkg/sdist.tar.gz", tar_bytes([("x/a.so", module)]))
open("nested.tar.gz", "wb").write(tar_bytes([("dist/pkg.whl", wheel.getvalue())]))
PY
run_bounded 60 limits.txt limits.err huge_member.tar.gz truncated.tar.gz corrupt.tar.gz \
  nested.tar.gz
status=$?
[ "$status" = 2 ] && pass "containers past the limits: exit status 2" ||
  fail "containers past the limits: exit status $status, expected 2"
sed "s|^nsalloc-audit: ||" limits.err >limits.clean
expect_line limits.clean "huge_member.tar.gz!huge.so: its container inflates past 100 times its size (--max-ratio), a compression bomb: not audited further" \
  "a member past the size limit is refused, named"
expect_match limits.clean "truncated.tar.gz(!lib/a.so)?: .+" "a truncated tarball is an error"
expect_match limits.clean "corrupt.tar.gz(!.*)?: .+" "a corrupt gzip stream is an error"
expect_line limits.txt "nested.tar.gz!dist/pkg.whl!pkg/sdist.tar.gz!x/a.so" \
  "a tarball in a wheel in a tarball is opened"

# --- truncated and corrupt PE and Mach-O images -------------------------------
head -c 300 "$fixtures/mi_a.pyd" >truncated.pyd          # headers, no section data
head -c 40 "$fixtures/mi_arm64.dylib" >truncated.dylib   # load commands cut off
head -c 20000 "$fixtures/mi_mac.cpython-311-darwin.so" >truncated_universal.so
run_bounded 60 foreign.txt foreign.err truncated.pyd truncated.dylib truncated_universal.so
status=$?
[ "$status" = 2 ] && pass "truncated PE and Mach-O: exit status 2" ||
  fail "truncated PE and Mach-O: exit status $status, expected 2"
sed "s|^nsalloc-audit: ||" foreign.err >foreign.clean
expect_match foreign.clean "truncated.pyd: truncated or corrupt: .+" "a truncated PE is an error"
expect_line foreign.clean "truncated.dylib: truncated or corrupt: the load commands (sizeofcmds 920) end past the end of the file" \
  "a truncated Mach-O is an error"
expect_line foreign.clean "truncated_universal.so: truncated or corrupt: slice 0 ends past the end of the file" \
  "a universal binary with a slice past the end is an error"

# --- a huge symbol table ------------------------------------------------------
python3 - <<'PY'
with open("huge.s", "w") as out:
    for i in range(300000):
        out.write(f".globl sym_{i}\nsym_{i}: .byte 0\n")
    for i in range(5000):
        out.write(f".globl je_internal_{i}\nje_internal_{i}: .byte 0\n")
PY
cc -c -o huge.o huge.s
start=$(date +%s)
run_bounded 60 huge.txt huge.err huge.o
status=$?
elapsed=$(($(date +%s) - start))
[ "$status" = 0 ] && pass "305000 symbols: exit status 0" ||
  { fail "305000 symbols: exit status $status"; cat huge.err; }
[ "$elapsed" -le 30 ] && pass "305000 symbols in ${elapsed}s" || fail "305000 symbols took ${elapsed}s"
expect_line huge.txt "    jemalloc: defines 5000 symbols: je_internal_0, je_internal_1, je_internal_10 and 4997 more; exports 5000 symbols: je_internal_0, je_internal_1, je_internal_10 and 4997 more" \
  "evidence from a huge table is counted exactly and sampled in name order"
expect_line huge.txt "  note: over 4096 allocator exports; duplicate-export compares the first 4096 found" \
  "the bound on kept export names is reported, not silent"

# --- an archive with hundreds of members -------------------------------------
cc -O1 -c -o member.o "$here/../fixtures/plain.c"
i=0
while [ $i -lt 400 ]; do
  cp member.o "m$i.o"
  i=$((i + 1))
done
ar rc big.a m[0-9]*.o
ar rc big.a "$fixtures/tls_initial_exec.o"
rm -f m[0-9]*.o
start=$(date +%s)
run_bounded 60 big.txt big.err big.a
status=$?
elapsed=$(($(date +%s) - start))
[ "$status" = 1 ] && pass "400-member archive: exit status 1 (static TLS member)" ||
  { fail "400-member archive: exit status $status"; cat big.err; }
[ "$elapsed" -le 30 ] && pass "400-member archive in ${elapsed}s" || fail "archive took ${elapsed}s"
expect_line big.txt "  type: static archive, 401 ELF members (ELF64 LSB relocatable, x86-64)" \
  "every member of a 401-member archive is read"

checks_done
