#!/usr/bin/env python3
#
# mutate.py KIND ARCHIVE OUT --- write a copy of an uncompressed
# e2cryptbak archive changed so that it stays self-consistent (every
# crc16 and crc32c recomputed): only a comparison with the image can
# tell.  KIND: context (a nonce byte of an 'e5' blob), name (a byte of a
# raw name in an 'ef' blob, with the path, path_crc and ustar checksum
# to match), symlink (a byte of an encrypted symlink target).  Prints
# the path of the changed entry.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import base64
import os
import struct
import sys
import tarfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.environ.get("TOOLS", os.path.dirname(__file__)))
from check_archive import crc16, crc32c  # noqa: E402

kind, src, out = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
tf = tarfile.open(src, encoding="utf-8", errors="surrogateescape")
ms = tf.getmembers()


def value_at(m, rec):
    """(offset, length) of the value of pax record @rec of member m."""
    hdr = bytes(data[m.offset + 512:m.offset_data])
    tag = (" SCHILY.xattr.e2cryptbak.%s=" % rec).encode()
    i = hdr.find(tag)
    start = hdr.rfind(b"\n", 0, i) + 1
    n = int(hdr[start:i])
    return m.offset + 512 + i + len(tag), start + n - 1 - (i + len(tag))


def reseal16(off, n):
    data[off + 2:off + 4] = b"\0\0"
    data[off + 2:off + 4] = struct.pack("<H", crc16(data[off:off + n]))


def reseal32(off, n):
    data[off + n - 4:off + n] = struct.pack("<I",
                                            crc32c(data[off:off + n - 4]))


def pick(pred):
    for m in ms[1:-1]:
        if pred(m):
            return m
    sys.exit("mutate.py: no entry fits %s" % kind)


def has(m, rec):
    return ("SCHILY.xattr.e2cryptbak." + rec) in m.pax_headers


if kind == "context":
    m = pick(lambda m: has(m, "metadata") and m.isfile())
    off, n = value_at(m, "metadata")
    data[off + n - 3] ^= 0x01          # in the nonce
    reseal16(off, n)
elif kind == "symlink":
    m = pick(lambda m: has(m, "symlink"))
    off, n = value_at(m, "symlink")
    data[off + 5] ^= 0x01
    reseal32(off, n)
elif kind == "name":
    m = pick(lambda m: has(m, "name") and m.isfile() and not m.sparse and
             "path" not in m.pax_headers and m.name.count("/") == 1)
    off, n = value_at(m, "name")
    raw = bytearray(data[off + 4:off + n])
    raw[0] ^= 0x01
    data[off + 4:off + n] = raw
    reseal16(off, n)
    newpath = (m.name.rsplit("/", 1)[0] + "/" +
               base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode())
    assert len(newpath) == len(m.name) < 100
    h = m.offset_data - 512
    data[h:h + 100] = newpath.encode().ljust(100, b"\0")
    data[h + 148:h + 156] = b" " * 8
    data[h + 148:h + 155] = ("%06o\0" % sum(data[h:h + 512])).encode()
    ioff, il = value_at(m, "inode")
    data[ioff + 132:ioff + 136] = struct.pack("<I",
                                              crc32c(newpath.encode()))
    reseal32(ioff, il)
else:
    sys.exit("mutate.py: unknown kind %s" % kind)
open(out, "wb").write(data)
print(m.name)
