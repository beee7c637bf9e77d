#!/bin/sh
# hostile.sh TOOL FIXTURES WORK
#
# Hostile and damaged ELF, Mach-O and PE files, one case a run: each ends
# with the expected exit status and message, never a silent "clean".
#  - ELF: cut at every header boundary (inside e_ident, the ELF header, the
#    program header table, PT_DYNAMIC), dynamic tags pointing outside the
#    file, and section headers cut past the end of the file, removed (as
#    sstrip does), pointing far away or hiding .dynsym and .dynamic: the
#    loader never reads them, so the report must equal the intact file's;
#    a relocatable object, which has no loader's view, is an error instead.
#  - Mach-O: cut inside the header, the load commands and __LINKEDIT;
#    sizeofcmds of 0xffffffff and smaller than the commands.
#  - PE: cut inside the DOS stub, the COFF header, the section table, the
#    section data and the COFF symbol table; export, import and TLS
#    directories pointing outside the file.
#  - Separate debug files (objcopy --only-keep-debug, ELF and PE): skipped
#    in a directory walk, an error when named.
set -u
exec python3 - "$@" <<'PY'
import os, shutil, struct, subprocess, sys

tool, fixtures, work = (os.path.abspath(p) for p in sys.argv[1:4])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = passes = 0


def check(ok, what, detail=""):
    global failures, passes
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else "\n" + detail))
    if ok:
        passes += 1
    else:
        failures += 1


def fixture(name):
    with open(os.path.join(fixtures, name), "rb") as f:
        return bytearray(f.read())


def run(directory, *names):
    result = subprocess.run([tool, *names], cwd=directory, capture_output=True, text=True,
                            timeout=60)
    return result.returncode, result.stdout, result.stderr


def expect_error(name, data, message, status=2):
    """One damaged file: exit status and exactly one error line."""
    with open(os.path.join(work, name), "wb") as f:
        f.write(data)
    code, _, err = run(work, name)
    want = f"nsalloc-audit: {name}: {message}"
    check(code == status and err.strip() == want, f"{name}: exit {status}, '{message}'",
          f"exit {code}, stderr:\n{err}")


def same_report(label, files):
    """Damaged copies of fixtures report exactly what the intact ones do."""
    intact, damaged = os.path.join(work, label + ".intact"), os.path.join(work, label)
    for directory in (intact, damaged):
        os.makedirs(directory)
    for name, data in files.items():
        shutil.copy(os.path.join(fixtures, name), intact)
        with open(os.path.join(damaged, name), "wb") as f:
            f.write(data)
    want, got = run(intact, *files), run(damaged, *files)
    check(want == got and want[1], f"{label}: the report equals the intact files' (exit {want[0]})",
          f"intact: {want}\ndamaged: {got}")


# --- ELF ---------------------------------------------------------------------
def elf_header(data):
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    return phoff, phentsize, phnum, shoff, shentsize, shnum


def segment(data, kind):
    phoff, phentsize, phnum = elf_header(data)[:3]
    for i in range(phnum):
        p_type, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == kind:
            return offset, vaddr, filesz
    raise SystemExit(f"no segment {kind}")


def set_dynamic_tag(data, tag, value=None, new_tag=None):
    offset, _, filesz = segment(data, 2)  # PT_DYNAMIC
    for at in range(offset, offset + filesz, 16):
        if struct.unpack_from("<q", data, at)[0] == tag:
            if value is not None:
                struct.pack_into("<Q", data, at + 8, value)
            if new_tag is not None:
                struct.pack_into("<q", data, at, new_tag)
            return data
    raise SystemExit(f"no dynamic tag {tag}")


DT_STRSZ, DT_SYMTAB, DT_HASH, DT_GNU_HASH, DT_DEBUG = 10, 6, 4, 0x6FFFFEF5, 21
loaded = ["tls_initial_exec.so", "tls_exported.so", "interposer.so"]
images = {name: fixture(name) for name in loaded}
so = images["interposer.so"]
phoff, phentsize, phnum, shoff, shentsize, shnum = elf_header(so)
dynamic_offset = segment(so, 2)[0]

expect_error("cut_ident.so", so[:10], "corrupt ELF header: unknown class, byte order or version")
expect_error("cut_ehdr.so", so[:40],
             "truncated or corrupt ELF header: it ends past the end of the file")
expect_error("cut_phdrs.so", so[:phoff + phentsize + 1],
             "truncated or corrupt: the program header table ends past the end of the file")
expect_error("cut_dynamic.so", so[:dynamic_offset + 20],
             "truncated or corrupt: the dynamic segment (PT_DYNAMIC) ends past the end of the file")
outside = "lies outside the loaded segments or past the end of the file"
expect_error("far_symtab.so", set_dynamic_tag(fixture("interposer.so"), DT_SYMTAB, 1 << 40),
             f"truncated or corrupt: the dynamic symbol table (DT_SYMTAB) {outside}")
expect_error("huge_strsz.so", set_dynamic_tag(fixture("interposer.so"), DT_STRSZ, 1 << 40),
             f"truncated or corrupt: the dynamic string table (DT_STRTAB) {outside}")
no_hash = set_dynamic_tag(fixture("interposer.so"), DT_GNU_HASH, new_tag=DT_DEBUG)
try:
    no_hash = set_dynamic_tag(no_hash, DT_HASH, new_tag=DT_DEBUG)
except SystemExit:
    pass  # linked with --hash-style=gnu only
expect_error("no_hash.so", no_hash,
             "corrupt: the dynamic segment has DT_SYMTAB but no DT_GNU_HASH, DT_HASH or "
             "DT_MIPS_SYMTABNO, so the number of dynamic symbols is unknown")

# Section headers the loader never reads: cut past the end of the file (by
# 1 byte, half the table, all of it), removed, or moved far away.
for cut in (1, shentsize * shnum // 2, shentsize * shnum):
    same_report(f"sections_cut_{cut}", {n: d[:len(d) - cut] for n, d in images.items()})
stripped = {}
for name, data in images.items():
    data = bytearray(data)
    struct.pack_into("<Q", data, 0x28, 0)           # e_shoff
    struct.pack_into("<HHH", data, 0x3A, 0, 0, 0)   # e_shentsize, e_shnum, e_shstrndx
    stripped[name] = data
same_report("sections_removed", stripped)
far = {}
for name, data in images.items():
    data = bytearray(data)
    struct.pack_into("<Q", data, 0x28, 10**9)
    far[name] = data
same_report("sections_far", far)
# Section headers that disagree with the loader: .dynsym and .dynamic
# retyped as SHT_NULL hide nothing, as the loader never looks at them.
hidden = {}
for name, data in images.items():
    data = bytearray(data)
    shoff, shentsize, shnum = elf_header(data)[3:]
    for i in range(shnum):
        at = shoff + i * shentsize + 4
        if struct.unpack_from("<I", data, at)[0] in (6, 11):  # SHT_DYNAMIC, SHT_DYNSYM
            struct.pack_into("<I", data, at, 0)
    hidden[name] = data
same_report("sections_disagree", hidden)
obj = fixture("tls_initial_exec.o")
expect_error("cut_object.o", obj[:len(obj) - 1],
             "truncated or corrupt: the section header table ends past the end of the file, "
             "and there is no dynamic segment (PT_DYNAMIC) to read instead")

# --- Mach-O ------------------------------------------------------------------
dylib = fixture("mi_arm64.dylib")
ncmds, sizeofcmds = struct.unpack_from("<II", dylib, 16)
expect_error("cut_header.dylib", dylib[:20],
             "truncated or corrupt: the Mach-O header ends past the end of the file")
expect_error("cut_commands.dylib", dylib[:32 + sizeofcmds // 2],
             f"truncated or corrupt: the load commands (sizeofcmds {sizeofcmds}) end past the "
             "end of the file")
huge = bytearray(dylib)
struct.pack_into("<I", huge, 20, 0xFFFFFFFF)
expect_error("huge_sizeofcmds.dylib", huge,
             "truncated or corrupt: the load commands (sizeofcmds 4294967295) end past the end "
             "of the file")
small = bytearray(dylib)
struct.pack_into("<I", small, 20, 8)
expect_error("small_sizeofcmds.dylib", small,
             f"truncated or corrupt: load command 1 of {ncmds} ends past sizeofcmds")
expect_error("cut_linkedit.dylib", dylib[:len(dylib) - 1],
             "truncated or corrupt: a segment's file data ends past the end of the file")

# --- PE ----------------------------------------------------------------------
pyd = fixture("mi_a.pyd")
lfanew = struct.unpack_from("<I", pyd, 0x3C)[0]
nsections, optional_size = struct.unpack_from("<H", pyd, lfanew + 6)[0], struct.unpack_from(
    "<H", pyd, lfanew + 20)[0]
section_table = lfanew + 24 + optional_size
expect_error("cut_stub.pyd", pyd[:0x30],
             "not an ELF, PE or Mach-O file, static archive, zip or tarball")
expect_error("cut_coff.pyd", pyd[:lfanew + 10],
             "truncated or corrupt: the PE headers end past the end of the file")
expect_error("cut_sections.pyd", pyd[:section_table + 40 * nsections - 1],
             "truncated or corrupt: the section table ends past the end of the file")
directories = lfanew + 24 + (112 if struct.unpack_from("<H", pyd, lfanew + 24)[0] == 0x20B else 96)
for index, name, what in ((0, "far_exports.pyd", "export"), (1, "far_imports.pyd", "import"),
                          (9, "far_tls.pyd", "TLS")):
    far_directory = bytearray(pyd)
    struct.pack_into("<I", far_directory, directories + 8 * index, 0x7FFFFFF0)
    expect_error(name, far_directory,
                 f"truncated or corrupt: the {what} directory lies outside the file")
expect_error("cut_symbols.pyd", pyd[:len(pyd) - 1],
             "truncated or corrupt: the COFF symbol table ends past the end of the file")
no_symbols = bytearray(pyd)
struct.pack_into("<II", no_symbols, lfanew + 12, 0, 0)  # no COFF symbol table
raw_size, raw = struct.unpack_from("<II", pyd, section_table + 40 * (nsections - 1) + 16)
expect_error("cut_data.pyd", no_symbols[:raw + raw_size - 1],
             f"truncated or corrupt: section {nsections} ends past the end of the file")

# --- separate debug files ------------------------------------------------------
# objcopy --only-keep-debug keeps a program's headers but not its code. A
# directory walk skips them (no process loads one); named, each is an error.
debug = os.path.join(work, "debug")
os.makedirs(debug)
shutil.copy(os.path.join(fixtures, "tls_exported.so"), debug)
subprocess.run(["objcopy", "--only-keep-debug", os.path.join(fixtures, "tls_initial_exec.so"),
                os.path.join(debug, "tls_initial_exec.so.debug")], check=True)
subprocess.run(["x86_64-w64-mingw32-objcopy", "--only-keep-debug",
                os.path.join(fixtures, "mi_a.pyd"), os.path.join(debug, "mi_a.exe.debug")],
               check=True)
code, out, err = run(work, "debug")
check(code == 1 and err == "" and "(skipped 2 without ELF, 0 seen twice)" in out.splitlines()[0],
      "a walk skips debug-only ELF and PE files and audits the rest (exit 1, no error)",
      f"exit {code}\n{out}{err}")
code, _, err = run(debug, "tls_initial_exec.so.debug", "mi_a.exe.debug")
want = ["nsalloc-audit: tls_initial_exec.so.debug: a separate debug file (its code is NOBITS): "
        "no process loads it",
        "nsalloc-audit: mi_a.exe.debug: a debug-only image (its code sections hold no bytes): no "
        "process loads it"]
check(code == 2 and err.splitlines() == want, "named debug-only files are errors (exit 2)",
      f"exit {code}\n{err}")

print(f"{passes} passed, {failures} failed")
sys.exit(failures != 0)
PY
