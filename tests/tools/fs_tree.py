#!/usr/bin/env python3
#
# fs_tree.py IMAGE [SUBDIR] --- print a canonical view of an ext4 image
# as e2fsprogs' own debugfs sees it, without any key: one line per entry
# with its raw on-disk name path, type, mode, owner, size, mtime, inode
# flags that belong to the file, encryption context, xattrs, symlink
# target bytes, and a digest of the stored blocks with their hole map.
# Hard links are shown as "link=FIRST", never by inode number, so an
# original and its restored copy diff equal.  Nothing of e2cryptbak is
# used: this is the independent view that restore tests compare.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_archive import (Debugfs, Failure, parse_ls, parse_stat,  # noqa
                           parse_extents, parse_ea_hex, parse_ea_list)

ENCRYPT_FL = 0x800
# flags a file owns; layout flags (extents, index, inline) may differ
OWN_FLAGS = 0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x40 | 0x80 | 0x800 | \
    0x10000 | 0x20000 | 0x20000000 | 0x40000000
S_IFMT, S_IFDIR, S_IFREG, S_IFLNK = 0o170000, 0o040000, 0o100000, 0o120000


def esc(raw):
    return "".join(chr(c) if 0x21 <= c <= 0x7E and c != 0x5C
                   else "\\x%02x" % c for c in raw)


class Tree:
    def __init__(self, image):
        self.image = image
        self.dbg = Debugfs(os.environ.get("DEBUGFS", "debugfs"), image)
        self.fd = open(image, "rb")
        out = self.dbg.run(["stats -h"])["stats -h"].decode()
        self.bs = int(out.split("Block size:")[1].split()[0])
        self.st = {}

    def walk(self, root):
        """[(path bytes, ino)] in sorted order, root first."""
        entries = [(b".", root)]
        self.stat([root])
        level = [(b"", root)]
        while level:
            cmds = ["ls -l -r <%d>" % ino for _, ino in level]
            outs = self.dbg.run(cmds)
            nxt = []
            for (path, ino), c in zip(level, cmds):
                for child, name in parse_ls(outs[c]):
                    p = path + b"/" + name if path else name
                    entries.append((p, child))
                    nxt.append((p, child))
            self.stat([i for _, i in nxt])
            level = [(p, i) for p, i in nxt
                     if self.st[i]["mode"] & S_IFMT == S_IFDIR]
        return sorted(entries)

    def stat(self, inos):
        cmds = {}
        for i in inos:
            if i not in self.st:
                cmds["stat <%d>" % i] = i
        outs = self.dbg.run(list(cmds))
        for c, i in cmds.items():
            self.st[i] = parse_stat(outs[c], i)

    def details(self, inos):
        """One debugfs run for the extents, contexts and xattr names."""
        cmds = []
        for i in inos:
            cmds += ["ex -l <%d>" % i, "ea_list <%d>" % i, "imap <%d>" % i]
            if self.st[i]["flags"] & ENCRYPT_FL:
                cmds.append("ea_get -x <%d> c" % i)
            if self.st[i]["inline_size"] is not None:
                cmds.append("ea_get -x <%d> system.data" % i)
        self.out = self.dbg.run(cmds)
        xcmds = []
        self.names = {}
        for i in inos:
            names = parse_ea_list(self.out["ea_list <%d>" % i])
            self.names[i] = sorted(set(names) - {"c", "system.data"})
            xcmds += ["ea_get -x <%d> %s" % (i, n) for n in self.names[i]]
        self.out.update(self.dbg.run(xcmds))

    def extents(self, ino, st):
        if st["flags"] & 0x80000:
            return parse_extents(self.out["ex -l <%d>" % ino])
        return st["blocks"]

    def content(self, ino, st):
        """Digest of an unencrypted file's bytes, whatever its layout."""
        if st["inline_size"] is not None:
            # the first 60 bytes in i_block, the rest in "system.data"
            out = self.raw_inode(ino)[40:100]
            rest = parse_ea_hex(self.out["ea_get -x <%d> system.data" %
                                         ino])
            out = (out + (rest or b""))[:st["size"]]
            out += bytes(st["size"] - len(out))
            return "data=" + hashlib.sha256(out).hexdigest()[:16]
        data = bytearray(st["size"])
        for lblk, n, pblk, uninit in self.extents(ino, st):
            off = lblk * self.bs
            if uninit or off >= st["size"]:
                continue
            self.fd.seek(pblk * self.bs)
            chunk = self.fd.read(min(n * self.bs, st["size"] - off))
            data[off:off + len(chunk)] = chunk
        return "data=" + hashlib.sha256(bytes(data)).hexdigest()[:16]

    def stored(self, ino, st):
        """Digest of the stored blocks and their hole map."""
        if not st["flags"] & ENCRYPT_FL:
            return self.content(ino, st)
        h = hashlib.sha256()
        regions = []
        for lblk, n, pblk, uninit in sorted(self.extents(ino, st)):
            if uninit:
                continue
            self.fd.seek(pblk * self.bs)
            h.update(self.fd.read(n * self.bs))
            # the hole map, not where one extent ends and the next starts
            if regions and regions[-1][0] + regions[-1][1] == lblk:
                regions[-1][1] += n
            else:
                regions.append([lblk, n])
        return "blocks=%s:%s" % (",".join("%d+%d" % tuple(r)
                                          for r in regions) or "none",
                                 h.hexdigest()[:16])

    def raw_inode(self, ino):
        t = self.out["imap <%d>" % ino].decode()
        blk = int(t.split("located at block ")[1].split(",")[0])
        off = int(t.split("offset ")[1].split()[0], 16)
        self.fd.seek(blk * self.bs + off)
        return self.fd.read(128)

    def symlink(self, ino, st):
        """The target bytes as stored: i_block, or the first block."""
        ex = [e for e in self.extents(ino, st) if not e[3]]
        if st["inline_size"] is None and ex:
            self.fd.seek(sorted(ex)[0][2] * self.bs)
            return self.fd.read(st["size"])
        return self.raw_inode(ino)[40:40 + st["size"]]

    def line(self, path, ino, leader):
        st = self.st[ino]
        f = ["%s" % esc(path), "mode=%o" % st["mode"],
             "uid=%d" % st["uid"], "gid=%d" % st["gid"],
             "flags=%x" % (st["flags"] & OWN_FLAGS),
             "mtime=%d.%09d" % st["mtime"]]
        if leader:
            return " ".join(f + ["link=%s" % esc(leader)])
        kind = st["mode"] & S_IFMT
        if kind != S_IFDIR:
            f.append("size=%d" % st["size"])
        if st["rdev"]:
            f.append("dev=%d:%d" % st["rdev"])
        if st["flags"] & ENCRYPT_FL:
            ctx = parse_ea_hex(self.out["ea_get -x <%d> c" % ino])
            f.append("ctx=%s" % (ctx.hex() if ctx is not None else "NONE"))
        for n in self.names[ino]:
            v = parse_ea_hex(self.out["ea_get -x <%d> %s" % (ino, n)])
            f.append("xattr:%s=%s" % (n, v.hex() if v is not None else "?"))
        if kind == S_IFREG:
            f.append(self.stored(ino, st))
        elif kind == S_IFLNK:
            f.append("target=%s" % esc(self.symlink(ino, st)))
        return " ".join(f)


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: fs_tree.py IMAGE [DIR-INODE]", file=sys.stderr)
        return 2
    t = Tree(argv[1])
    root = int(argv[2]) if len(argv) == 3 else 2
    seen = {}
    entries = t.walk(root)
    t.details(sorted(set(i for _, i in entries)))
    for path, ino in entries:
        leader = seen.get(ino)
        if leader is None:
            seen[ino] = path
        sys.stdout.write(t.line(path, ino, leader) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Failure as e:
        print("fs_tree: %s" % e, file=sys.stderr)
        sys.exit(1)
