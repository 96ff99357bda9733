#!/usr/bin/env python3
#
# jbd2.py --- look at, and rewrite, the log of an ext4 image's journal
#
#   jbd2.py layout IMAGE
#       one line per log block from s_start to the end of the log:
#       "SEQ KIND JBLK DEVOFFSET [FSBLOCK]", KIND one of descriptor,
#       data, commit, revoke; DEVOFFSET the block's byte offset in IMAGE
#   jbd2.py sb IMAGE FIELD VALUE
#       set a 32-bit field of the journal superblock (sequence, start,
#       first, maxlen) and its checksum (csum v3), as a buggy or hostile
#       writer would leave it
#   jbd2.py put IMAGE FSBLOCK FILE
#       replace every logged copy of FSBLOCK with the block in FILE and
#       make the tags' and descriptors' checksums (csum v3) agree, so
#       that a crafted change to a block the log holds survives replay
#
# Only what the tests need: internal journals (inode 8), no checksum or
# checksum v3, 32- or 64-bit tags; the walk stops as jbd2's scan pass
# does at a block without the magic or with the wrong sequence.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import struct
import subprocess
import sys

MAGIC = 0xC03B3998
INCOMPAT_REVOKE, INCOMPAT_64BIT, INCOMPAT_CSUM_V3 = 0x1, 0x2, 0x10
FLAG_ESCAPE, FLAG_SAME_UUID, FLAG_LAST_TAG = 1, 2, 8

_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _TABLE.append(_c)


def crc32c(crc, data):
    """The kernel's crc32c_le(): no inversion in or out, as jbd2 uses it"""
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


class Journal:
    def __init__(self, path):
        self.path = path
        self.f = open(path, "r+b")
        out = subprocess.run(["debugfs", "-c", "-R", "blocks <8>", path],
                             capture_output=True, text=True).stdout
        self.bmap = [int(x) for x in out.split()]
        if not self.bmap:
            sys.exit("jbd2.py: %s: no journal inode blocks" % path)
        self.f.seek(1024 + 24)
        self.fsbs = 1024 << struct.unpack("<I", self.f.read(4))[0]
        sb = self.read(0)
        (magic, btype, _, self.bs, self.maxlen, self.first, self.sequence,
         self.start) = struct.unpack_from(">8I", sb, 0)
        if magic != MAGIC or btype not in (3, 4):
            sys.exit("jbd2.py: %s: no jbd2 superblock" % path)
        self.incompat = struct.unpack_from(">I", sb, 0x28)[0]
        self.csum3 = bool(self.incompat & INCOMPAT_CSUM_V3)
        if self.incompat & 0x8:
            sys.exit("jbd2.py: checksum v2 journals are not handled")
        self.uuid = sb[0x30:0x40]
        self.seed = crc32c(0xFFFFFFFF, self.uuid)

    def off(self, jblk):
        return self.bmap[jblk] * self.fsbs

    def read(self, jblk):
        self.f.seek(self.off(jblk))
        return bytearray(self.f.read(self.fsbs))

    def write(self, jblk, data):
        self.f.seek(self.off(jblk))
        self.f.write(data)

    def wrap(self, jblk):
        return self.first if jblk >= self.maxlen else jblk

    def tags(self, desc):
        """(offset of the tag, fs block, flags) of each tag"""
        big = self.incompat & INCOMPAT_64BIT
        if self.csum3:
            # journal_block_tag3_t: blocknr, flags, blocknr_high, checksum
            tsize, end = 16, len(desc) - 4
        else:
            # journal_block_tag_t: blocknr, checksum16, flags16[, high]
            tsize, end = (12 if big else 8), len(desc)
        p = 12
        while p + tsize <= end:
            blk = struct.unpack_from(">I", desc, p)[0]
            if self.csum3:
                flags = struct.unpack_from(">I", desc, p + 4)[0]
            else:
                flags = struct.unpack_from(">H", desc, p + 6)[0]
            if big:
                blk |= struct.unpack_from(">I", desc, p + 8)[0] << 32
            yield p, blk, flags
            p += tsize + (0 if flags & FLAG_SAME_UUID else 16)
            if flags & FLAG_LAST_TAG:
                break

    def walk(self):
        """(seq, kind, jblk, fsblock or None, descriptor jblk, tag offset)"""
        if self.start == 0:
            return
        jblk, seq = self.start, self.sequence
        while True:
            b = self.read(jblk)
            magic, btype, bseq = struct.unpack_from(">III", b, 0)
            if magic != MAGIC or bseq != seq:
                return
            if btype == 1:
                yield seq, "descriptor", jblk, None, None, None
                d = jblk
                for p, fsblk, _ in list(self.tags(b)):
                    jblk = self.wrap(jblk + 1)
                    yield seq, "data", jblk, fsblk, d, p
            elif btype == 2:
                yield seq, "commit", jblk, None, None, None
                seq += 1
            elif btype == 5:
                yield seq, "revoke", jblk, None, None, None
            else:
                return
            jblk = self.wrap(jblk + 1)

    def put(self, fsblk, data):
        n = 0
        for seq, kind, jblk, blk, d, p in list(self.walk()):
            if kind != "data" or blk != fsblk:
                continue
            if struct.unpack_from(">I", data, 0)[0] == MAGIC:
                sys.exit("jbd2.py: the new block would need escaping")
            self.write(jblk, data)
            if self.csum3:
                desc = self.read(d)
                c = crc32c(crc32c(self.seed, struct.pack(">I", seq)), data)
                struct.pack_into(">I", desc, p + 12, c)
                struct.pack_into(">I", desc, len(desc) - 4, 0)
                struct.pack_into(">I", desc, len(desc) - 4,
                                 crc32c(self.seed, desc))
                self.write(d, desc)
            n += 1
        return n


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "layout":
        j = Journal(sys.argv[2])
        for seq, kind, jblk, blk, _, _ in j.walk():
            print("%d %s %d %d%s" % (seq, kind, jblk, j.off(jblk),
                                     "" if blk is None else " %d" % blk))
    elif len(sys.argv) == 5 and sys.argv[1] == "sb":
        j = Journal(sys.argv[2])
        fields = {"maxlen": 0x10, "first": 0x14, "sequence": 0x18,
                  "start": 0x1C}
        sb = j.read(0)
        struct.pack_into(">I", sb, fields[sys.argv[3]], int(sys.argv[4]))
        if j.csum3:
            struct.pack_into(">I", sb, 0xFC, 0)
            struct.pack_into(">I", sb, 0xFC, crc32c(0xFFFFFFFF, sb[:1024]))
        j.write(0, sb)
    elif len(sys.argv) == 5 and sys.argv[1] == "put":
        j = Journal(sys.argv[2])
        data = open(sys.argv[4], "rb").read()
        if len(data) != j.fsbs:
            sys.exit("jbd2.py: %s: not one block" % sys.argv[4])
        print(j.put(int(sys.argv[3]), data))
    else:
        sys.exit("Usage: jbd2.py layout IMAGE | sb IMAGE FIELD VALUE | "
                 "put IMAGE FSBLOCK FILE")


if __name__ == "__main__":
    main()
