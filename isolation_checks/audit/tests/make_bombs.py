"""Writes the hostile zips the bounded-work test runs the audit on.

    make_bombs.py DIR

DIR/zeros.zip     one member of 900 MiB of zeros (about 0.9 MB)
DIR/overlap.zip   David Fifield's overlapping-entry bomb ("A better zip bomb",
                  2019): the entries' data overlap, each entry quoting the
                  next one's local header in a stored deflate block, so every
                  entry inflates to everything after it (about 100 KB,
                  terabytes once inflated)
DIR/nest.zip      a 42.zip-style nest: 16 zips of 16 zips of 16 zips, each
                  leaf holding one 64 MiB member of zeros
DIR/elf_bomb.zip  an ELF header followed by 512 MiB of zeros (about 0.5 MB)
DIR/zeros.tar.gz  a tarball of one 1 GiB member of zeros (about 1 MB)
"""
import os
import struct
import sys
import zipfile
import zlib

MIB = 1 << 20


def deflate(prefix, zero_mib):
    """Raw deflate of prefix followed by zero_mib MiB of zeros, in a blink:
    after a full flush deflate forgets everything, so every MiB of zeros
    compresses to the same bytes, repeated (about 1 KiB each)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    piece = compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + piece * zero_mib + b"\x03\x00"  # an empty final block


def crc(prefix, zero_mib):
    value = zlib.crc32(prefix)
    zeros = bytes(MIB)
    for _ in range(zero_mib):
        value = zlib.crc32(zeros, value)
    return value


def local_header(name, crc, csize, usize):
    return struct.pack("<4s5H3L2H", b"PK\3\4", 20, 0, 8, 0, 0, crc, csize, usize, len(name), 0) + name


def central_header(name, crc, csize, usize, offset):
    return struct.pack("<4s6H3L5H2L", b"PK\1\2", 20, 20, 0, 8, 0, 0, crc, csize, usize,
                       len(name), 0, 0, 0, 0, 0, offset) + name


def end_record(count, cd_size, cd_offset):
    return struct.pack("<4s4H2LH", b"PK\5\6", 0, 0, count, count, cd_size, cd_offset, 0)


def raw_zip(entries):
    """entries: (name, crc, csize, usize, data) written one after the other."""
    body, central = b"", b""
    for name, crc, csize, usize, data in entries:
        central += central_header(name, crc, csize, usize, len(body))
        body += local_header(name, crc, csize, usize) + data
    return body + central + end_record(len(entries), len(central), len(body))


def zeros_zip(path, zero_mib, prefix=b"", name=b"big.bin"):
    data = deflate(prefix, zero_mib)
    usize = len(prefix) + zero_mib * MIB
    with open(path, "wb") as out:
        out.write(raw_zip([(name, crc(prefix, zero_mib), len(data), usize, data)]))


def overlap_zip(path, entries=250, kernel_mib=64):
    """Fifield's quoted overlap, built from the last entry back: entry i's
    data is a stored, non-final deflate block quoting entry i+1's local
    header, then entry i+1's data. The CRCs of all but the last entry are
    left 0: a reader must refuse the bomb without inflating an entry whole."""
    kernel = deflate(b"", kernel_mib)
    names = [b"f%04d.so" % i for i in range(entries)]
    usize, csize = kernel_mib * MIB, len(kernel)
    headers = [local_header(names[-1], crc(b"", kernel_mib), csize, usize)]
    sizes = [(crc(b"", kernel_mib), csize, usize)]
    for i in range(entries - 2, -1, -1):
        quoted = headers[0]
        csize += 5 + len(quoted)
        usize += len(quoted)
        sizes.insert(0, (0, csize, usize & 0xFFFFFFFF))
        headers.insert(0, local_header(names[i], 0, csize, usize & 0xFFFFFFFF))
    body, offsets = b"", []
    for i in range(entries):
        offsets.append(len(body))
        body += headers[i]
        if i + 1 < entries:
            quoted = headers[i + 1]
            body += struct.pack("<BHH", 0, len(quoted), len(quoted) ^ 0xFFFF) + b""
    body += kernel
    central = b"".join(central_header(names[i], *sizes[i], offsets[i]) for i in range(entries))
    with open(path, "wb") as out:
        out.write(body + central + end_record(entries, len(central), len(body)))


def nest_zip(path, fanout=16, levels=3, leaf_mib=256):
    """A 42.zip-style nest: every level deflated, so the whole is small."""
    data = deflate(b"", leaf_mib)
    blob = raw_zip([(b"zeros.bin", crc(b"", leaf_mib), len(data), leaf_mib * MIB, data)])
    for level in range(levels):
        packed = zlib.compress(blob, 9)[2:-4]  # raw deflate
        blob = raw_zip([(b"l%d_%02d.zip" % (level, i), zlib.crc32(blob), len(packed), len(blob),
                         packed) for i in range(fanout)])
    with open(path, "wb") as out:
        out.write(blob)


def zeros_tar_gz(path, zero_mib):
    """A tar header, then zero_mib MiB of zeros (the member and, past it,
    the end-of-archive blocks), gzipped."""
    header = bytearray(512)
    fields = [(0, b"zeros.bin"), (100, b"0000644\0"), (124, b"%011o\0" % ((zero_mib - 1) * MIB)),
              (136, b"00000000000\0"), (156, b"0"), (257, b"ustar\x0000")]
    for offset, value in fields:
        header[offset:offset + len(value)] = value
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    data = deflate(bytes(header), zero_mib)
    trailer = struct.pack("<LL", crc(bytes(header), zero_mib), (512 + zero_mib * MIB) & 0xFFFFFFFF)
    with open(path, "wb") as out:
        out.write(b"\x1f\x8b\x08\0\0\0\0\0\x02\xff" + data + trailer)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    zeros_zip(os.path.join(out, "zeros.zip"), 900)
    overlap_zip(os.path.join(out, "overlap.zip"))
    nest_zip(os.path.join(out, "nest.zip"))
    elf = b"\x7fELF\x02\x01\x01" + bytes(57)
    zeros_zip(os.path.join(out, "elf_bomb.zip"), 512, prefix=elf, name=b"mod.so")
    zeros_tar_gz(os.path.join(out, "zeros.tar.gz"), 1025)


if __name__ == "__main__":
    main()
