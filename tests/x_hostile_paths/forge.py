#!/usr/bin/python3
# forge.py --- an archive as a hostile producer would write it
#
#   forge.py path IN OUT OLD NEW
#       the entry whose tar name is OLD is renamed NEW (as long as OLD),
#       and its inode record's path_crc and seal are made to agree, so
#       that only the path itself is wrong
#   forge.py tree IN OUT OLD NEW
#       as path, for OLD and every entry below it (OLD/...)
#   forge.py link IN OUT OLD TARGET
#       the hard link entry OLD points to TARGET instead (tar's link
#       name; no record covers it)
#
# Paths short enough for a ustar header only: libarchive writes no pax
# "path" record for them.  This file may be redistributed under the
# terms of the GNU General Public License, version 2.

import io
import os
import sys
import tarfile

sys.path.insert(0, os.environ.get("TOOLS", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tools")))
from check_archive import crc32c  # noqa: E402
import forge_rec  # noqa: E402

INODE_KEY = b" SCHILY.xattr.e2cryptbak.inode="
INODE_SIZE = 152


def octal(field):
    return int(field.rstrip(b"\0 ").decode("ascii") or "0", 8)


def reseal_header(buf, off):
    """The ustar checksum of the 512-byte header at @off."""
    hdr = buf[off:off + 148] + b" " * 8 + buf[off + 156:off + 512]
    buf[off + 148:off + 156] = b"%06o\0 " % sum(hdr)


def find_entry(buf, name):
    """(offset of the pax data before it, its size, offset of the ustar
    header) of the entry named @name."""
    off, pax = 0, None
    while off + 512 <= len(buf) and buf[off:off + 512] != b"\0" * 512:
        size = octal(buf[off + 124:off + 136])
        kind = buf[off + 156:off + 157]
        if kind == b"x":
            pax = (off + 512, size)
        elif buf[off:off + 100].rstrip(b"\0") == name:
            return pax + (off,) if pax else (None, 0, off)
        else:
            pax = None
        off += 512 + (size + 511) // 512 * 512
    sys.exit("forge.py: no entry %r" % name)


def forge_path(buf, old, new):
    if len(new) != len(old):
        sys.exit("forge.py: %r and %r differ in length" % (old, new))
    pax_off, pax_size, hdr = find_entry(buf, old)
    pax = bytes(buf[pax_off:pax_off + pax_size]) if pax_off else b""
    if b" path=" in pax:
        sys.exit("forge.py: %r has a pax path record" % old)
    at, rm = pax.find(INODE_KEY), None
    if at >= 0:
        rec = pax_off + at + len(INODE_KEY)
    else:
        rec, rm = group_inode(buf, hdr)
    # a directory's tar name ends in "/"; its path does not
    crc = crc32c(new.rstrip(b"/"))
    buf[rec + 132:rec + 136] = crc.to_bytes(4, "little")
    seal = crc32c(bytes(buf[rec:rec + INODE_SIZE - 4]))
    buf[rec + INODE_SIZE - 4:rec + INODE_SIZE] = seal.to_bytes(4, "little")
    buf[hdr:hdr + 100] = new.ljust(100, b"\0")
    reseal_header(buf, hdr)
    if rm:
        forge_rec.reseal_block(buf, rm)


def group_inode(buf, hdr):
    """(offset, records entry) of the inode record, in a records entry's
    group (format version 2), of the entry whose ustar header is at
    @hdr"""
    ms = tarfile.open(fileobj=io.BytesIO(bytes(buf)), mode="r:").getmembers()
    m = [m for m in ms if m.offset_data == hdr + 512][0]
    rec, _, rm = forge_rec.record(buf, ms, m, INODE_KEY[1:-1])
    return rec, rm


def tree_names(buf, old):
    """The tar names of @old and of every entry below it."""
    names, off = [], 0
    while off + 512 <= len(buf) and buf[off:off + 512] != b"\0" * 512:
        size = octal(buf[off + 124:off + 136])
        name = bytes(buf[off:off + 100]).rstrip(b"\0")
        if buf[off + 156:off + 157] != b"x" and (
                name.rstrip(b"/") == old or name.startswith(old + b"/")):
            names.append(name)
        off += 512 + (size + 511) // 512 * 512
    return names


def forge_link(buf, old, target):
    _, _, hdr = find_entry(buf, old)
    if buf[hdr + 156:hdr + 157] != b"1":
        sys.exit("forge.py: %r is not a hard link" % old)
    buf[hdr + 157:hdr + 257] = target.ljust(100, b"\0")
    reseal_header(buf, hdr)


def main(argv):
    if len(argv) != 6 or argv[1] not in ("path", "tree", "link"):
        sys.exit("usage: forge.py path|tree|link IN OUT OLD NEW")
    with open(argv[2], "rb") as f:
        buf = bytearray(f.read())
    old, new = os.fsencode(argv[4]), os.fsencode(argv[5])
    if argv[1] == "path":
        forge_path(buf, old, new)
    elif argv[1] == "tree":
        if len(new) != len(old):
            sys.exit("forge.py: %r and %r differ in length" % (old, new))
        for name in tree_names(buf, old):
            forge_path(buf, name, new + name[len(old):])
    else:
        forge_link(buf, old, new)
    with open(argv[3], "wb") as f:
        f.write(buf)
    print("%s: %s %r -> %r" % (argv[3], argv[1], old, new))


if __name__ == "__main__":
    main(sys.argv)
