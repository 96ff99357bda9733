#!/usr/bin/python3
# damage.py --- byte-level damage that debugfs cannot do
#
#   damage.py ctxlen IMAGE BLOCK OFFSET VALUE
#       set e_value_size of the in-inode xattr index 9 "c" (the fscrypt
#       context) of the inode at byte OFFSET of BLOCK ("debugfs imap");
#       the inode checksum is left for "debugfs -n sif checksum calc"
#   damage.py dirent IMAGE BLOCK DIR_INO GEN CHILD_INO FIELD VALUE
#       set FIELD (inode, rec_len or name_len) of the entry of CHILD_INO
#       in directory block BLOCK of directory DIR_INO (generation GEN),
#       then recompute the block's checksum (metadata_csum), so that
#       only the structure is wrong
#   damage.py entries IMAGE BLOCK
#       print the inode number of every live entry of directory block
#       BLOCK (to know what is lost with it)
#
# Prints what it changed.  This file may be redistributed under the
# terms of the GNU General Public License, version 2.

import struct
import sys

POLY = 0x82F63B78
TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TABLE.append(c)


def crc32c_raw(crc, data):
    """ext2fs_crc32c_le: no inversion before or after"""
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


class Image:
    def __init__(self, path):
        self.f = open(path, "r+b")
        self.f.seek(1024)
        sb = self.f.read(1024)
        self.bs = 1024 << struct.unpack_from("<I", sb, 24)[0]
        self.inode_size = struct.unpack_from("<H", sb, 0x58)[0]
        incompat = struct.unpack_from("<I", sb, 0x60)[0]
        ro_compat = struct.unpack_from("<I", sb, 0x64)[0]
        self.csum = bool(ro_compat & 0x400)         # metadata_csum
        if incompat & 0x2000:                       # csum_seed
            self.seed = struct.unpack_from("<I", sb, 0x270)[0]
        else:
            self.seed = crc32c_raw(0xFFFFFFFF, sb[0x68:0x78])

    def read(self, off, n):
        self.f.seek(off)
        return bytearray(self.f.read(n))

    def write(self, off, data):
        self.f.seek(off)
        self.f.write(data)


def ctxlen(img, block, offset, value):
    off = block * img.bs + offset
    ino = img.read(off, img.inode_size)
    extra = struct.unpack_from("<H", ino, 0x80)[0]
    p = 128 + extra
    if struct.unpack_from("<I", ino, p)[0] != 0xEA020000:
        sys.exit("no in-inode xattrs")
    p += 4
    while p + 16 <= len(ino):
        name_len, index = ino[p], ino[p + 1]
        if name_len == 0 and index == 0:
            break
        if index == 9 and ino[p + 16:p + 16 + name_len] == b"c":
            old = struct.unpack_from("<I", ino, p + 8)[0]
            struct.pack_into("<I", ino, p + 8, value)
            img.write(off, ino)
            print("context length %d -> %d" % (old, value))
            return
        p += (16 + name_len + 3) & ~3
    sys.exit("no context in the inode")


def dirent(img, block, dir_ino, gen, child, field, value):
    off = block * img.bs
    buf = img.read(off, img.bs)
    p = 0
    while p + 8 <= img.bs:
        inode, rec_len, name_len = struct.unpack_from("<IHB", buf, p)
        if inode == child:
            break
        if rec_len < 8:
            sys.exit("bad rec_len at %d" % p)
        p += rec_len
    else:
        sys.exit("no entry for inode %d" % child)
    fmt, where = {"inode": ("<I", 0), "rec_len": ("<H", 4),
                  "name_len": ("<B", 6)}[field]
    old = struct.unpack_from(fmt, buf, p + where)[0]
    struct.pack_into(fmt, buf, p + where, value)
    # the tail: inode 0, rec_len 12, name_len 0, file_type 0xde
    tail = img.bs - 12
    if img.csum and struct.unpack_from("<IHBB", buf, tail) == (0, 12, 0, 0xDE):
        c = crc32c_raw(img.seed, struct.pack("<I", dir_ino))
        c = crc32c_raw(c, struct.pack("<I", gen))
        c = crc32c_raw(c, bytes(buf[:tail]))
        struct.pack_into("<I", buf, img.bs - 4, c)
    img.write(off, buf)
    print("entry of inode %d at offset %d: %s %d -> %d" %
          (child, p, field, old, value))


def entries(img, block):
    buf = img.read(block * img.bs, img.bs)
    p = 0
    while p + 8 <= img.bs:
        inode, rec_len, name_len = struct.unpack_from("<IHB", buf, p)
        if rec_len < 8:
            sys.exit("bad rec_len at %d" % p)
        if inode and name_len:
            print(inode)
        p += rec_len


def main():
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "ctxlen":
        ctxlen(Image(a[1]), int(a[2], 0), int(a[3], 0), int(a[4], 0))
    elif len(a) == 8 and a[0] == "dirent":
        dirent(Image(a[1]), int(a[2], 0), int(a[3], 0), int(a[4], 0),
               int(a[5], 0), a[6], int(a[7], 0))
    elif len(a) == 3 and a[0] == "entries":
        entries(Image(a[1]), int(a[2], 0))
    else:
        sys.exit("usage: see the head of damage.py")


main()
