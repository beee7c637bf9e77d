#!/bin/sh
# bombs.sh TOOL FIXTURES WORK LIMIT_MEMORY
#
# Bounded work on hostile archives, made here by make_bombs.py (nothing large
# is committed): members are judged by their first bytes, so 900 MiB of
# zeros is never inflated; David Fifield's overlapping-entry zip, a
# 42.zip-style nest, an ELF header followed by 512 MiB of zeros and a
# tarball of 1 GiB of zeros each end in seconds with an error naming the
# member (exit 2), in at most 64 MiB of resident memory (with LIMIT_MEMORY=1:
# not under sanitizers, whose shadow memory counts too). On 4bbb9f9 the
# overlapping zip ran for minutes. Also: the limits are options, and an
# argument order never changes the exit status.
set -u
. "$(dirname "$0")/checks.sh"
tool=$1 fixtures=$2 work=$3 limit_memory=$4
here=$(cd "$(dirname "$0")" && pwd)

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
python3 "$here/make_bombs.py" . || exit 1
good=$fixtures/mod_nsalloc_a.so

# bounded SECONDS ARG...: runs the tool; sets status, out.txt, err.txt and
# rss (peak resident KiB).
bounded() {
  seconds=$1
  shift
  rss=$(python3 - "$seconds" "$tool" "$@" <<'PY'
import resource, subprocess, sys
with open("out.txt", "wb") as out, open("err.txt", "wb") as err:
    try:
        status = subprocess.run(sys.argv[2:], stdout=out, stderr=err, timeout=float(sys.argv[1])).returncode
    except subprocess.TimeoutExpired:
        status = 124
print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
  status=${rss% *} rss=${rss#* }
}
expect_small() { # expect_small DESCRIPTION: peak RSS within 64 MiB
  if [ "$limit_memory" != 1 ]; then
    echo "skip: $1: $rss KiB resident, not bounded under sanitizers"
  elif [ "$rss" -le 65536 ]; then pass "$1: $rss KiB resident"; else fail "$1: $rss KiB resident, over 64 MiB"; fi
}

bounded 20 zeros.zip "$good"
expect_status 0 "900 MiB of zeros in a zip is passed over (exit 0)"
expect_small "900 MiB of zeros"
expect_line out.txt "nsalloc-audit: 1 artifact, 0 errors, 0 findings (skipped 1 without ELF, 0 seen twice)" \
  "the zip holds nothing to audit"

bounded 20 overlap.zip
expect_status 2 "the overlapping-entry zip bomb is an error (exit 2)"
expect_small "overlapping-entry zip bomb"
expect_line err.txt "nsalloc-audit: overlap.zip!f0000.so: its container inflates past 100 times its size (--max-ratio), a compression bomb: not audited further" \
  "the error names the member"

bounded 20 nest.zip
expect_status 2 "the 42.zip-style nest is an error (exit 2)"
expect_small "42.zip-style nest"
expect_match err.txt "nsalloc-audit: nest\.zip!l2_00\.zip!l1_00\.zip!l0_[0-9]+\.zip: its container inflates past 100 times its size \(--max-ratio\), a compression bomb: not audited further" \
  "the error names the nested member"
[ "$(wc -l <err.txt)" = 1 ] && pass "the nest stops at its first error" || fail "the nest went on: $(wc -l <err.txt) errors"

bounded 20 elf_bomb.zip "$good"
expect_status 2 "an ELF header before 512 MiB of zeros is an error (exit 2)"
expect_small "ELF-headed bomb"
expect_line err.txt "nsalloc-audit: elf_bomb.zip!mod.so: its container inflates past 100 times its size (--max-ratio), a compression bomb: not audited further" \
  "the error names the member"
expect_match out.txt ".*mod_nsalloc_a\.so" "the other input is still audited"

bounded 20 zeros.tar.gz
expect_status 2 "a tarball of 1 GiB of zeros is an error (exit 2)"
expect_small "tarball of zeros"
expect_line err.txt "nsalloc-audit: zeros.tar.gz!zeros.bin: its container inflates past 100 times its size (--max-ratio), a compression bomb: not audited further" \
  "refused by its declared size, before inflating it"

# A member declaring more than 1 GiB is refused once its first bytes show
# it is wanted (an ELF header; the tar is cut short after 8 KiB), and passed
# over when they show it is not.
python3 - <<'PY'
import io, tarfile
for name, head in (("huge_elf.tar", b"\x7fELF\x02\x01\x01"), ("huge_data.tar", b"data")):
    info = tarfile.TarInfo("member")
    info.size = 2 << 30
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    open(name, "wb").write(header + head + bytes(8192))
PY
bounded 20 huge_elf.tar
expect_status 2 "a wanted member past 1 GiB is an error"
expect_line err.txt "nsalloc-audit: huge_elf.tar!member: member larger than 1073741824 bytes" "the error names it"
bounded 20 huge_data.tar "$good"
expect_line err.txt "nsalloc-audit: huge_data.tar: Truncated input file (needed 2147483648 bytes, only 8196 available)" \
  "a member past 1 GiB that is not wanted is passed over (its archive is cut short)"

# An empty gzip stream (Debian ships empty man pages gzipped) holds nothing;
# a truncated one is an error.
mkdir empty
: | gzip >empty/empty.1.gz
head -c 15 empty/empty.1.gz >cut.gz
bounded 20 empty "$good"
expect_status 0 "an empty gzip stream is no error"
bounded 20 cut.gz "$good"
expect_status 2 "a truncated gzip stream is an error"

# The limits are options: raised, the ELF-headed bomb meets the other limit
# (negative control: with both raised it would be read whole).
bounded 20 --max-ratio=100000 --max-inflated=64M elf_bomb.zip
expect_status 2 "--max-ratio raised: --max-inflated still ends it"
expect_line err.txt "nsalloc-audit: elf_bomb.zip!mod.so: the input inflates past 67108864 bytes (--max-inflated): not audited further" \
  "the error names --max-inflated"
bounded 20 --max-inflated=1K "$fixtures/pkg-0.1-cp311-cp311-linux_x86_64.whl"
expect_status 2 "a real wheel past a tiny --max-inflated is an error"
bounded 20 "$fixtures/pkg-0.1-cp311-cp311-linux_x86_64.whl"
expect_status 1 "the same wheel with the defaults is audited (its findings: exit 1)"
bounded 5 --max-ratio=0 "$good"
expect_status 2 "--max-ratio=0 is a usage error"
expect_line err.txt "nsalloc-audit: --max-ratio takes a positive count, not '0'" "the usage error says why"

# A named file that holds nothing to audit is an error whatever the order.
mkdir dir
echo "not a library" >dir/notelf.so
cp "$good" dir/
for order in "dir dir/notelf.so" "dir/notelf.so dir"; do
  # shellcheck disable=SC2086
  bounded 20 $order
  expect_status 2 "'$order' exits 2"
  expect_line err.txt "nsalloc-audit: dir/notelf.so: not an ELF, PE or Mach-O file, static archive, zip or tarball" \
    "'$order' names the file"
  expect_line out.txt "nsalloc-audit: 1 artifact, 1 error, 0 findings (skipped 0 without ELF, 1 seen twice)" \
    "'$order' counts the same"
done
checks_done
