#!/usr/bin/python3
# forge.py --- archives at and past the reader's limits, tar bytes made
# by hand where tarfile would not write them
#
#   forge.py sparse IN COUNT PAIRS [empty]    (to standard output)
#       IN's header entry, then a regular file entry in GNU sparse 1.0
#       whose map says COUNT stretches and holds PAIRS of them (one byte
#       each, a byte apart; "empty": "0 0" each, which compresses to
#       nothing); then the end of the archive
#   forge.py kind IN OUT KIND
#       IN's header entry, then one entry e2cryptbak never writes:
#       gnu00 gnu01 sparseS gnumagic global longname acl paxbig
#   forge.py deep IN OUT N
#       IN's header and root entries, then N directories each in the
#       one before ("d/d/..."), every record sealed: intact to verify
#   forge.py xattrs IN OUT ENTRY N VALUE
#       ENTRY's xattr record holds N attributes "user.a" of VALUE bytes
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import os
import struct
import sys
import tarfile

sys.path.insert(0, os.environ.get("TOOLS", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tools")))
from check_archive import crc32c  # noqa: E402
from pax_rec import PRE, put, raw, seal32  # noqa: E402


def pax_record(key, value):
    if isinstance(value, str):
        value = value.encode()
    body = b" " + key.encode() + b"=" + value + b"\n"
    n = len(body) + 1
    while len(str(n)) + len(body) != n:
        n = len(str(n)) + len(body)
    return str(n).encode() + body


def ustar(name, size, typeflag, magic=b"ustar\x0000", linkname=b""):
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[156:157] = typeflag
    h[157:157 + len(linkname)] = linkname
    h[257:265] = magic
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def pad(data):
    return data + b"\0" * (-len(data) % 512)


def pax(records, typeflag=b"x"):
    body = b"".join(records)
    return ustar(b"PaxHeaders/x", len(body), typeflag) + pad(body)


def head(path, entries=1):
    """The bytes of the first @entries entries of archive @path."""
    with tarfile.open(path) as t:
        members = t.getmembers()
    with open(path, "rb") as f:
        return f.read(members[entries].offset)


def sparse(argv):
    src, count, pairs = argv[0], int(argv[1]), int(argv[2])
    empty = len(argv) > 3 and argv[3] == "empty"

    def line(j):
        return b"0\n0\n" if empty else b"%d\n1\n" % (2 * j)

    out = sys.stdout.buffer
    data = 0 if empty else pairs
    maplen = len(b"%d\n" % count) + sum(len(line(i)) for i in range(pairs))
    size = maplen + (-maplen % 512) + data
    out.write(head(src))
    out.write(pax([pax_record("GNU.sparse.major", "1"),
                   pax_record("GNU.sparse.minor", "0"),
                   pax_record("GNU.sparse.name", "bomb"),
                   pax_record("GNU.sparse.realsize", str(2 * data + 1))]))
    out.write(ustar(b"GNUSparseFile.0/bomb", size, b"0"))
    out.write(b"%d\n" % count)
    for i in range(0, pairs, 65536):
        out.write(b"".join(line(j) for j in range(i, min(i + 65536, pairs))))
    out.write(b"\0" * (-maplen % 512))
    out.write(pad(b"x" * data))
    out.write(b"\0" * 1024)


def kind(argv):
    src, dst, what = argv
    pre = head(src)
    if what == "gnu00":
        e = pax([pax_record("GNU.sparse.numblocks", "1"),
                 pax_record("GNU.sparse.offset", "0"),
                 pax_record("GNU.sparse.numbytes", "1")]) + \
            ustar(b"f", 512, b"0") + pad(b"x")
    elif what == "gnu01":
        e = pax([pax_record("GNU.sparse.map", "0,1," * 1000 + "0,1")]) + \
            ustar(b"f", 512, b"0") + pad(b"x")
    elif what == "sparseS":
        h = bytearray(ustar(b"f", 512, b"S", magic=b"ustar  \0"))
        h[386:398] = b"%011o\0" % 1     # offset of the first stretch
        h[398:410] = b"%011o\0" % 1
        h[148:156] = b" " * 8
        h[148:156] = b"%06o\0 " % sum(h)
        e = bytes(h) + pad(b"x")
    elif what == "gnumagic":
        e = ustar(b"f", 0, b"0", magic=b"ustar  \0")
    elif what == "global":
        e = pax([pax_record("comment", "x")], typeflag=b"g") + \
            ustar(b"f", 0, b"0")
    elif what == "longname":
        e = ustar(b"././@LongLink", 512, b"L") + pad(b"f" * 200) + \
            ustar(b"f", 0, b"0")
    elif what == "acl":
        e = pax([pax_record("SCHILY.acl.access", "user::rw-," * 1000)]) + \
            ustar(b"f", 0, b"0")
    elif what == "paxbig":
        e = pax([pax_record("comment", "x" * (1 << 20))]) + \
            ustar(b"f", 0, b"0")
    else:
        sys.exit("forge.py: unknown kind %r" % what)
    with open(dst, "wb") as f:
        f.write(pre + e + b"\0" * 1024)


def deep(argv):
    src, dst, n = argv[0], argv[1], int(argv[2])
    tin = tarfile.open(src, encoding="utf-8", errors="surrogateescape")
    members = tin.getmembers()
    tout = tarfile.open(dst, "w:", format=tarfile.PAX_FORMAT,
                        encoding="utf-8", errors="surrogateescape")
    hdr, root, trailer = members[0], members[1], members[-1]
    tout.addfile(hdr)
    tout.addfile(root)
    rec = raw(root, "inode")
    path, crc = "", None
    for i in range(n):
        path = path + "/d" if path else "d"
        crc = crc32c(b"/d", crc) if crc is not None else crc32c(b"d")
        rec[8:12] = struct.pack("<I", i + 2)
        rec[12:16] = struct.pack("<I", 1000 + i)
        rec[132:136] = struct.pack("<I", crc)
        m = tarfile.TarInfo(path)
        m.type = tarfile.DIRTYPE
        m.mode = root.mode
        m.pax_headers = {PRE + "inode": ""}
        put(m, "inode", seal32(rec))
        tout.addfile(m)
    t = raw(trailer, "trailer")
    t[8:12] = struct.pack("<I", n + 2)
    t[16:28] = struct.pack("<QI", 0, 0xFFFFFFFF)
    t[32:56] = struct.pack("<QQQ", n + 1, n + 1, 0)
    t[56:64] = struct.pack("<Q", 0)
    put(trailer, "trailer", seal32(t))
    tout.addfile(trailer)
    tout.close()


def xattrs(argv):
    src, dst, entry, n, vlen = argv[0], argv[1], argv[2], int(argv[3]), \
        int(argv[4])
    tin = tarfile.open(src, "r:", encoding="utf-8", errors="surrogateescape")
    tout = tarfile.open(dst, "w:", format=tarfile.PAX_FORMAT,
                        encoding="utf-8", errors="surrogateescape")
    one = bytes([1, 1]) + struct.pack("<I", vlen) + b"a" + b"v" * vlen
    found = False
    for m in tin:
        f = tin.extractfile(m) if m.isreg() else None
        if m.name.rstrip("/") == entry:
            put(m, "xattrs", seal32(bytearray(one * n + b"\0" * 4)))
            ino = raw(m, "inode")
            ino[108:112] = struct.pack("<I", struct.unpack(
                "<I", ino[108:112])[0] | 0x4)
            put(m, "inode", seal32(ino))
            found = True
        tout.addfile(m, f)
    tout.close()
    if not found:
        sys.exit("forge.py: no entry %r" % entry)


def main(argv):
    ops = {"sparse": sparse, "kind": kind, "deep": deep, "xattrs": xattrs}
    if len(argv) < 2 or argv[1] not in ops:
        sys.exit("usage: forge.py sparse|kind|deep|xattrs ...")
    ops[argv[1]](argv[2:])


if __name__ == "__main__":
    main(sys.argv)
