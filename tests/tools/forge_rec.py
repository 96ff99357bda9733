#!/usr/bin/env python3
# forge_rec.py --- change fields of an archive's records as a forger
# would, and make every check agree again
#
#   forge_rec.py IN OUT EDIT...
#
# An EDIT is ENTRY:FIELD=VALUE.  ENTRY is an archive path ("." for the
# root) or "header".  FIELD is a field of the entry's inode record
# (doc/archive-format.txt 7.3: mode, uid, gid, links_count, size,
# iflags, rflags, ino, generation, rdev_major, rdev_minor, ...), of the
# header record (7.2: encrypt_pw_salt, uuid, block_size, ...), or of
# the ustar header: tarname, tartype (a typeflag character), linkname,
# devmajor, devminor.  Numbers may be given in any base Python reads (0o100644,
# 0x800); byte fields in hex.  The record's crc32c and the ustar
# checksum are computed again, so that verify takes the result as
# intact: only the field itself is wrong; in a records entry (format
# version 2) its crc32c too.  Only archives without
# compression.  This file may be redistributed under the terms of the
# GNU General Public License, version 2.

import hashlib
import os
import struct
import sys
import tarfile

sys.path.insert(0, os.environ.get("TOOLS", os.path.dirname(
    os.path.abspath(__file__))))
from check_archive import crc32c  # noqa: E402

# name: (offset, struct format or byte count)
INODE = {
    "seq": (8, "<I"), "ino": (12, "<I"), "mode": (16, "<I"),
    "uid": (20, "<I"), "gid": (24, "<I"), "links_count": (28, "<I"),
    "size": (32, "<Q"), "iflags": (40, "<I"), "projid": (44, "<I"),
    "generation": (48, "<I"), "rdev_major": (52, "<I"),
    "rdev_minor": (56, "<I"), "rflags": (108, "<I"),
}
HEADER = {
    "block_size": (8, "<I"), "uuid": (12, 16),
    "feature_compat": (28, "<I"), "feature_incompat": (32, "<I"),
    "feature_ro_compat": (36, "<I"), "hash_seed": (40, 16),
    "def_hash_version": (56, "<B"), "encrypt_pw_salt": (60, 16),
    "encoding": (76, "<H"), "inode_size": (80, "<I"),
}
KINDS = {b"SCHILY.xattr.e2cryptbak.inode": 1,
         b"SCHILY.xattr.e2cryptbak.header": 0}
USTAR = {"tarname": (0, 100), "tartype": (156, 1), "linkname": (157, 100),
         "devmajor": (329, 8), "devminor": (337, 8)}


def reseal_ustar(buf, off):
    hdr = buf[off:off + 148] + b" " * 8 + buf[off + 156:off + 512]
    buf[off + 148:off + 156] = b"%06o\0 " % sum(hdr)


RECORDS = b"SCHILY.xattr.e2cryptbak.records"


def pax_record(buf, member, key):
    """(offset, length) of the value of pax record @key of @member"""
    if member.offset_data - member.offset < 1024:
        return None
    p, end = member.offset + 512, member.offset_data - 512
    while p < end and buf[p:p + 1] != b"\0":
        sp = buf.index(b" ", p)
        n = int(buf[p:sp])
        eq = buf.index(b"=", sp)
        if buf[sp + 1:eq] == key:
            return eq + 1, p + n - 1 - (eq + 1)
        p += n
    return None


def reseal_block(buf, rm):
    """The records entry @rm's digest and its record's crc32c, again"""
    at, length = pax_record(buf, rm, RECORDS)
    data = bytes(buf[rm.offset_data:rm.offset_data + rm.size])
    buf[at + 20:at + 36] = hashlib.sha256(data).digest()[:16]
    buf[at + 36:at + 40] = struct.pack("<I", crc32c(bytes(buf[at:at + 36])))


def group_record(buf, members, member, kind):
    """(offset, length, records entry) of record @kind of @member in the
    group a records entry (format version 2) holds for it"""
    i = members.index(member)
    j = i - 1
    while j >= 0 and pax_record(buf, members[j], RECORDS) is None:
        j -= 1
    if j < 0:
        return None
    rm = members[j]
    p = rm.offset_data
    for _ in range(i - j - 1):
        p += 8 + struct.unpack_from("<I", buf, p + 4)[0]
    glen = struct.unpack_from("<I", buf, p + 4)[0]
    q, end = p + 8, p + 8 + glen
    while q < end:
        k, vlen = buf[q], struct.unpack_from("<I", buf, q + 4)[0]
        if k == kind:
            return q + 8, vlen, rm
        q += 8 + vlen
    return None


def record(buf, members, member, key):
    """(offset, length, records entry or None) of record @key of
    @member: in its pax header, or in a records entry's group"""
    found = pax_record(buf, member, key)
    if found:
        return found + (None,)
    found = group_record(buf, members, member, KINDS[key])
    if found:
        return found
    sys.exit("forge_rec.py: %s has no %s record" % (member.name, key))


def find(buf, members, entry):
    for m in members:
        name = m.name.rstrip("/") or m.name
        if name == entry or (entry == "header" and
                             name == "e2cryptbak.header"):
            return m
    sys.exit("forge_rec.py: no entry %r" % entry)


def put(buf, off, spec, value):
    if isinstance(spec, int):
        raw = bytes.fromhex(value)
        if len(raw) != spec:
            sys.exit("forge_rec.py: %s: want %d bytes" % (value, spec))
        buf[off:off + spec] = raw
    else:
        buf[off:off + struct.calcsize(spec)] = \
            struct.pack(spec, int(value, 0))


def edit(buf, members, spec):
    entry, _, rest = spec.partition(":")
    field, _, value = rest.partition("=")
    m = find(buf, members, entry)
    hdr = m.offset_data - 512
    if field in USTAR:
        off, size = USTAR[field]
        if field in ("devmajor", "devminor"):
            raw = b"%07o\0" % int(value, 0)
        else:
            raw = os.fsencode(value)
        buf[hdr + off:hdr + off + size] = raw.ljust(size, b"\0")
        reseal_ustar(buf, hdr)
        return
    table, key = (HEADER, b"SCHILY.xattr.e2cryptbak.header") \
        if entry == "header" else \
        (INODE, b"SCHILY.xattr.e2cryptbak.inode")
    if field not in table:
        sys.exit("forge_rec.py: unknown field %r" % field)
    at, length, rm = record(buf, members, m, key)
    off, fmt = table[field]
    put(buf, at + off, fmt, value)
    buf[at + length - 4:at + length] = struct.pack(
        "<I", crc32c(bytes(buf[at:at + length - 4])))
    if rm:
        reseal_block(buf, rm)


def main(argv):
    if len(argv) < 4:
        sys.exit("usage: forge_rec.py IN OUT ENTRY:FIELD=VALUE...")
    with open(argv[1], "rb") as f:
        buf = bytearray(f.read())
    members = tarfile.open(argv[1], "r:", encoding="utf-8",
                           errors="surrogateescape").getmembers()
    for spec in argv[3:]:
        edit(buf, members, spec)
    with open(argv[2], "wb") as f:
        f.write(buf)


if __name__ == "__main__":
    main(sys.argv)
