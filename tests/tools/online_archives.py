#!/usr/bin/env python3
#
# online_archives.py --- an archive of "e2cryptbak backup --online" of a
# mounted filesystem against "e2cryptbak backup" of it unmounted
#
# Usage: online_archives.py ONLINE_ARCHIVE OFFLINE_ARCHIVE
#
# Entry by entry, in order: the path, the tar type, size, link and
# data (ciphertext or plaintext, holes as zeros), and every record
# byte for byte (the inode record less its seal, the 'e5' and name
# blobs, the xattrs with POSIX ACLs in ext4's on-disk form, the symlink
# target), but for what the kernel does
# not tell a keyless reader of an inode it cannot open (an encrypted
# regular file without its key, a symlink, a fifo, a device node): its
# generation, 0 online.  Of the header, the block size and the root's
# inode number must agree; the superblock's fields are not online.
# The trailers' counts must agree.  Prints what differs that may, and
# how many ACLs (xattr index 2 and 3) were compared; exit 0 if nothing
# else differs, 1 otherwise.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import os
import stat
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_archive as ca  # noqa: E402

GEN = slice(48, 52)
errors = 0


def bad(msg, *args):
    global errors
    errors += 1
    sys.stderr.write("online_archives: " + (msg % args) + "\n")


def fields(rec):
    names = ("seq ino mode uid gid links size iflags projid generation "
             "rdev_major rdev_minor").split()
    r = dict(zip(names, struct.unpack_from("<IIIIIIQIIIII", rec, 8)))
    for i, t in enumerate(("atime", "mtime", "ctime", "crtime")):
        r[t] = struct.unpack_from("<qI", rec, 60 + 12 * i)
    r["rflags"], r["hash"], r["minor_hash"] = \
        struct.unpack_from("<III", rec, 108)
    return r


def data(tf, m):
    if not m.isreg() or m.islnk():
        return None
    f = tf.extractfile(m)
    return f.read() if f else None



def acls(e):
    if "xattrs" not in e.recs:
        return 0
    return sum(1 for i, n, v in ca.xattr_entries(e.recs["xattrs"])
               if i in (2, 3))


def compare(on_tf, on, off_tf, off):
    gens = nacl = 0
    if len(on) != len(off):
        bad("%d entries online, %d offline", len(on), len(off))
    for a, b in zip(on, off):
        if a.path != b.path:
            bad("entry %r online where %r is offline", a.path, b.path)
            return gens, nacl
        p = a.path
        if (a.m.type, a.m.size, a.m.linkname) != \
           (b.m.type, b.m.size, b.m.linkname):
            bad("%s: tar type/size/link %r, offline %r", p,
                (a.m.type, a.m.size, a.m.linkname),
                (b.m.type, b.m.size, b.m.linkname))
        if sorted(a.recs) != sorted(b.recs):
            bad("%s: records %s, offline %s", p, sorted(a.recs),
                sorted(b.recs))
        for k in sorted(set(a.recs) & set(b.recs)):
            x, y = a.recs[k], b.recs[k]
            if k == "inode" and len(x) == len(y) == 152:
                mode, = struct.unpack_from("<I", y, 16)
                enc = "metadata" in b.recs
                opened = stat.S_ISDIR(mode) or \
                    (stat.S_ISREG(mode) and not enc)
                if x[GEN] != y[GEN] and not opened and \
                   x[GEN] == b"\0\0\0\0":
                    gens += 1
                    x = x[:GEN.start] + y[GEN] + x[GEN.stop:]
                x, y = x[:-4], y[:-4]
            if k in ("header", "trailer"):
                continue
            if x != y and k == "inode":
                ra, rb = fields(x), fields(y)
                bad("%s: inode record differs: %s", p, ", ".join(
                    "%s %r, offline %r" % (f, ra[f], rb[f])
                    for f in sorted(ra) if ra[f] != rb[f]) or
                    "in the times or hashes")
            elif x != y:
                bad("%s: record %s differs", p, k)
            elif k == "xattrs":
                nacl += acls(a)
        if data(on_tf, a.m) != data(off_tf, b.m):
            bad("%s: the data differs", p)
    return gens, nacl


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("Usage: online_archives.py ONLINE OFFLINE\n")
        return 2
    stats = {"pax_values": 0}
    on_tf, on = ca.read_archive(argv[1], stats)
    off_tf, off = ca.read_archive(argv[2], stats)
    ha = ca.decode_header(on[0].recs["header"])
    hb = ca.decode_header(off[0].recs["header"])
    for k in ("block_size", "root_ino", "inode_size"):
        if ha[k] != hb[k]:
            bad("header: %s %r, offline %r", k, ha[k], hb[k])
    # the superblock's fields: features, hash seed and version, the
    # passphrase salt, the encoding and its flags (archive-format.txt)
    ra, rb = on[0].recs["header"], off[0].recs["header"]
    if ra[28:80] != rb[28:80]:
        bad("header: superblock fields %s, offline %s",
            ra[28:80].hex(), rb[28:80].hex())
    if ha["uuid"] != hb["uuid"]:
        print("header: uuid %s online, %s offline" %
              (ha["uuid"].hex(), hb["uuid"].hex()))
    ta = ca.decode_trailer(on[-1].recs["trailer"])
    tb = ca.decode_trailer(off[-1].recs["trailer"])
    for k in ("entries", "inodes", "encrypted", "data_bytes", "skipped",
              "tflags"):
        if ta[k] != tb[k]:
            bad("trailer: %s %r, offline %r", k, ta[k], tb[k])
    gens, nacl = compare(on_tf, on[1:-1], off_tf, off[1:-1])
    print("%d entries compared; %d generations not online; %d ACLs equal" %
          (len(on) - 2, gens, nacl))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
