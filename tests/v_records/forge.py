#!/usr/bin/env python3
# forge.py IN OUT HOW --- forge the records entries (format version 2,
# doc/archive-format.txt 3.6) of an uncompressed archive, one way per
# HOW, every checksum but the one under test made to agree again: the
# records entry's digest and its record's crc32c are computed anew
# after each change, and a changed record's own crc32c too.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import hashlib
import os
import struct
import sys
import tarfile

sys.path.insert(0, os.environ.get("TOOLS", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tools")))
from forge_rec import RECORDS, pax_record, reseal_ustar  # noqa: E402
from pax_rec import seal32  # noqa: E402


class Block:
    """A records entry of the archive: its member, record and groups"""

    def __init__(self, buf, ms, k):
        self.m = ms[k]
        self.k = k
        self.at, _ = pax_record(buf, self.m, RECORDS)
        rec = buf[self.at:self.at + 40]
        self.first, self.count = struct.unpack_from("<II", rec, 8)
        data = bytes(buf[self.m.offset_data:self.m.offset_data +
                         self.m.size])
        self.groups, p = [], 0
        for _ in range(self.count):
            seq, glen = struct.unpack_from("<II", data, p)
            items, q = [], p + 8
            while q < p + 8 + glen:
                kind, vlen = data[q], struct.unpack_from("<I", data,
                                                         q + 4)[0]
                items.append([kind, bytearray(data[q + 8:q + 8 + vlen])])
                q += 8 + vlen
            self.groups.append([seq, items])
            p += 8 + glen

    def data(self, fix_seq=False):
        out = b""
        for i, (seq, items) in enumerate(self.groups):
            body = b"".join(struct.pack("<B3xI", k, len(v)) + bytes(v)
                            for k, v in items)
            out += struct.pack("<II", self.first + i if fix_seq else seq,
                               len(body)) + body
        return out

    def put(self, buf, data, digest=None, count=None):
        """@buf with this entry's data replaced by @data, its record
        and tar size to match (or the values given)"""
        rec = bytearray(buf[self.at:self.at + 40])
        struct.pack_into("<II", rec, 12,
                         len(self.groups) if count is None else count,
                         len(data))
        rec[20:36] = hashlib.sha256(data).digest()[:16] \
            if digest is None else digest
        seal32(rec)
        out = bytearray(buf)
        out[self.at:self.at + 40] = rec
        hdr = self.m.offset_data - 512
        out[hdr + 124:hdr + 136] = b"%011o " % len(data)
        reseal_ustar(out, hdr)
        old_end = self.m.offset_data + (self.m.size + 511) // 512 * 512
        return out[:self.m.offset_data] + data + \
            bytes(-len(data) % 512) + out[old_end:]


def blocks(buf, ms):
    return [Block(buf, ms, k) for k, m in enumerate(ms)
            if pax_record(buf, m, RECORDS)]


def span(ms, k):
    """The bytes of member @k: its pax header, header and data"""
    return ms[k].offset, ms[k + 1].offset


# the entries a consumer may hand out before the damage: all before
# the records entry forged, or before the entry where it shows
BOUND = {"orphan": lambda b, z: b.first + b.count - 2,
         "orphan-end": lambda b, z: z.first + z.count - 2,
         "nogroup": lambda b, z: b.first + b.count - 2,
         "inside": lambda b, z: b.first + 2,
         "version": lambda b, z: b.first,
         "v1": lambda b, z: 0}


def forge(buf, ms, how):
    bl = blocks(buf, ms)
    b = bl[1]		# a records entry with one before and one after
    print(BOUND.get(how, lambda b, z: b.first - 1)(b, bl[-1]))
    if how == "intact":
        return b.put(buf, b.data())
    if how == "crc":
        # an inode record's uid changed, its own crc32c recomputed: only
        # the records entry's digest can tell (a crc32c over the data
        # could not: its register is 0 after each sealed record)
        rec = b.groups[0][1][0][1]
        rec[20:24] = struct.pack("<I", 4242)
        seal32(rec)
        data = b.data()
        old = bytes(buf[b.m.offset_data:b.m.offset_data + b.m.size])
        return b.put(buf, data, digest=hashlib.sha256(old).digest()[:16])
    if how == "uid":
        # the same, the digest recomputed: an archive a forger can make,
        # intact to every check but the kernel's (listed with uid 4242)
        rec = b.groups[0][1][0][1]
        rec[20:24] = struct.pack("<I", 4242)
        seal32(rec)
        return b.put(buf, b.data())
    if how == "orphan":
        # the last entry a records entry describes removed: its records
        # wait for an entry that never comes
        last = b.k + b.count
        lo, hi = span(ms, last)
        return buf[:lo] + buf[hi:]
    if how == "orphan-end":
        # the same before the trailer
        bz = bl[-1]
        last = bz.k + bz.count
        lo, hi = span(ms, last)
        return buf[:lo] + buf[hi:]
    if how == "nogroup":
        # the last group removed: its entry has no records at all
        b.groups.pop()
        return b.put(buf, b.data())
    if how == "swap":
        # two groups swapped, seq tags and all
        g = b.groups
        g[0], g[1] = g[1], g[0]
        return b.put(buf, b.data())
    if how == "swap-retag":
        # two groups swapped, the tags made consecutive again: the inode
        # records' seq tells
        g = b.groups
        g[0], g[1] = g[1], g[0]
        return b.put(buf, b.data(fix_seq=True))
    if how == "dup":
        # a group's metadata or name record given twice
        items = b.groups[2][1]
        items.insert(2, [items[1][0], bytearray(items[1][1])])
        return b.put(buf, b.data())
    if how == "both":
        # the first entry a records entry describes given its inode
        # record in a pax header too
        from pax_rec import _pax_line, _x_header
        m = ms[b.k + 1]
        pax = _pax_line(b"SCHILY.xattr.e2cryptbak.inode",
                        bytes(b.groups[0][1][0][1]))
        x = _x_header(buf[m.offset:m.offset + 512], len(pax)) + pax + \
            bytes(-len(pax) % 512)
        return buf[:m.offset] + x + buf[m.offset:]
    if how == "inside":
        # a second records entry in the middle of the run the first
        # describes
        lo, hi = span(ms, bl[2].k)
        at = ms[b.k + 3].offset
        return buf[:at] + buf[lo:hi] + buf[at:]
    if how == "v1":
        # the header record made version 1: a records entry in a
        # version 1 archive (the inode records say 2: refused either way)
        h = ms[0]
        at, length = pax_record(buf, h, b"SCHILY.xattr.e2cryptbak.header")
        out = bytearray(buf)
        out[at + 4:at + 6] = struct.pack("<H", 1)
        seal32(memoryview(out)[at:at + length])
        return out
    if how == "version":
        # one inode record of version 1 in a version 2 archive
        rec = b.groups[1][1][0][1]
        rec[4:6] = struct.pack("<H", 1)
        seal32(rec)
        return b.put(buf, b.data())
    if how == "big":
        # a records entry of 2 MiB, over the limit
        return b.put(buf, bytes(2 << 20))
    if how == "count":
        # one group more than the data holds
        return b.put(buf, b.data(), count=b.count + 1)
    if how == "glen":
        # the last group's length past the end of the data
        data = bytearray(b.data())
        p = len(data) - 8 - len(b"".join(
            struct.pack("<B3xI", k, len(v)) + bytes(v)
            for k, v in b.groups[-1][1]))
        struct.pack_into("<I", data, p + 4,
                         struct.unpack_from("<I", data, p + 4)[0] + 100)
        return b.put(buf, bytes(data))
    if how == "trunc":
        # the data cut in the middle of its last group
        data = b.data()
        return b.put(buf, data[:-20])
    if how == "kind":
        # an item of unknown kind
        b.groups[0][1].append([9, bytearray(b"x")])
        return b.put(buf, b.data())
    sys.exit("forge.py: unknown forgery %r" % how)


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: forge.py IN OUT HOW")
    with open(argv[1], "rb") as f:
        buf = bytearray(f.read())
    ms = tarfile.open(argv[1], "r:", encoding="utf-8",
                      errors="surrogateescape").getmembers()
    out = forge(buf, ms, argv[3])
    with open(argv[2], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main(sys.argv)
