#!/usr/bin/env python3
#
# manifest.py DIR --- the canonical description of a file tree that
# tests/tools/manifest prints, line for line, without a process per
# file.  See that script for the format; both must agree byte for byte.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import hashlib
import os
import stat
import sys


def esc(raw):
    out = []
    for c in raw:
        if c == 0x5C:
            out.append("\\\\")
        elif 0x21 <= c <= 0x7E:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return "".join(out)


def walk(top):
    """(relative path bytes, lstat) of everything under top, top first."""
    res = [(b"", os.lstat(top))]
    stack = [b""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(top, rel) if rel else top) as it:
            for d in it:
                p = os.path.join(rel, d.name) if rel else d.name
                st = os.lstat(os.path.join(top, p))
                res.append((p, st))
                if stat.S_ISDIR(st.st_mode):
                    stack.append(p)
    return sorted(res, key=lambda x: x[0])


TYPES = {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l",
         stat.S_IFCHR: "c", stat.S_IFBLK: "b", stat.S_IFIFO: "p",
         stat.S_IFSOCK: "s"}


def line(top, rel, st, leader):
    path = os.path.join(top, rel) if rel else top
    t = TYPES[stat.S_IFMT(st.st_mode)]
    sec, nsec = divmod(st.st_mtime_ns, 10 ** 9)
    f = ["%s type=%s mode=%04o uid=%d gid=%d nlink=%d mtime=%d.%09d" %
         (esc(rel) if rel else ".", t, stat.S_IMODE(st.st_mode),
          st.st_uid, st.st_gid, st.st_nlink, sec, nsec)]
    if t == "f":
        h = hashlib.sha256()
        with open(path, "rb") as fd:
            for chunk in iter(lambda: fd.read(1 << 20), b""):
                h.update(chunk)
        f.append("size=%d sha256=%s" % (st.st_size, h.hexdigest()))
    elif t == "l":
        f.append("target=%s" % esc(os.readlink(path)))
    elif t in "bc":
        f.append("dev=%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
    if t != "d" and st.st_nlink > 1:
        key = (st.st_dev, st.st_ino)
        if key in leader:
            f.append("link=%s" % leader[key])
        else:
            leader[key] = esc(rel)
    xs = []
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        names = []
    for n in names:
        try:
            v = os.getxattr(path, n, follow_symlinks=False)
        except OSError:
            continue
        xs.append("%s=0x%s" % (n, v.hex()))
    for x in sorted(xs, key=lambda s: s.encode("utf-8", "surrogateescape")):
        f.append("xattr:" + x)
    return " ".join(f)


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("Usage: %s DIR" % argv[0], file=sys.stderr)
        return 2
    top = os.fsencode(argv[1])
    leader = {}
    out = sys.stdout.buffer
    for rel, st in walk(top):
        out.write(line(top, rel, st, leader).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
