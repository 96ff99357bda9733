#!/usr/bin/python3
# repax.py --- forge what forge_rec.py cannot: records that change
# length, records added or dropped, long link targets; the archive is
# written anew by tarfile (pax), every record resealed, so that verify
# takes it as intact.
#
#   repax.py IN OUT ENTRY OP
#
# OP is one of
#   rawname=HEX    the name record's raw name (and the path's last
#                  component, its base64url)
#   dropname       no name record (nor its flag)
#   addname=HEX    a name record, on an entry that had none
#   linkname=N     an unencrypted symlink's target: N bytes
#   encsymlink=N   an encrypted symlink's target of N bytes as stored:
#                  its le16 length and N - 2 bytes of ciphertext
#   encsymlinklen=L  the le16 length an encrypted symlink's target gives
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import io
import os
import struct
import sys
import tarfile

sys.path.insert(0, os.environ.get("TOOLS", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tools")))
from check_archive import b64url, crc16, crc32c  # noqa: E402
from pax_rec import PRE, put, raw, seal32, unfold_bytes  # noqa: E402

IF_NAME = 0x2


def blob(kind, body):
    b = bytearray(b"e" + kind + b"\0\0" + body)
    b[2:4] = struct.pack("<H", crc16(bytes(b)))
    return b


def rename(m, ino, rawname):
    path = m.name.rstrip("/")
    head = path.rpartition("/")[0]
    m.name = (head + "/" if head else "") + b64url(rawname)
    ino[132:136] = struct.pack("<I", crc32c(m.name.encode()))


def set_size(ino, n):
    ino[32:40] = struct.pack("<Q", n)


def forge(m, op):
    what, _, arg = op.partition("=")
    ino = raw(m, "inode")
    if what == "rawname":
        name = raw(m, "name")
        if name[1:2] != b"f":
            sys.exit("repax.py: rawname: not an 'ef' blob")
        put(m, "name", blob(b"f", bytes.fromhex(arg)))
        rename(m, ino, bytes.fromhex(arg))
    elif what == "dropname":
        del m.pax_headers[PRE + "name"]
        ino[108:112] = struct.pack("<I", struct.unpack(
            "<I", ino[108:112])[0] & ~IF_NAME)
    elif what == "addname":
        put(m, "name", blob(b"f", bytes.fromhex(arg)))
        ino[108:112] = struct.pack("<I", struct.unpack(
            "<I", ino[108:112])[0] | IF_NAME)
        rename(m, ino, bytes.fromhex(arg))
    elif what == "linkname":
        m.linkname = "x" * int(arg)
        set_size(ino, int(arg))
    elif what == "encsymlink":
        n = int(arg)
        target = struct.pack("<H", n - 2) + os.urandom(n - 2)
        put(m, "symlink", seal32(bytearray(target + b"\0" * 4)))
        set_size(ino, n)
        meta = raw(m, "metadata")
        meta[4:12] = struct.pack("<Q", n)
        meta[2:4] = b"\0\0"
        meta[2:4] = struct.pack("<H", crc16(bytes(meta)))
        put(m, "metadata", meta)
    elif what == "encsymlinklen":
        target = raw(m, "symlink")
        target[0:2] = struct.pack("<H", int(arg))
        put(m, "symlink", seal32(target[:-4] + b"\0" * 4))
    else:
        sys.exit("repax.py: unknown op %r" % op)
    put(m, "inode", seal32(ino))


def main(argv):
    if len(argv) != 5:
        sys.exit("usage: repax.py IN OUT ENTRY OP")
    with open(argv[1], "rb") as f:
        data = unfold_bytes(f.read())
    tin = tarfile.open(fileobj=io.BytesIO(data), mode="r:",
                       encoding="utf-8", errors="surrogateescape")
    tout = tarfile.open(argv[2], "w:", format=tarfile.PAX_FORMAT,
                        encoding="utf-8", errors="surrogateescape")
    found = False
    for m in tin:
        f = tin.extractfile(m) if m.isreg() else None
        if m.name.rstrip("/") == argv[3]:
            forge(m, argv[4])
            found = True
        tout.addfile(m, f)
    tout.close()
    if not found:
        sys.exit("repax.py: no entry %r" % argv[3])


if __name__ == "__main__":
    main(sys.argv)
