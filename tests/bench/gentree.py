#!/usr/bin/env python3
#
# gentree.py --- the file trees of the e2cryptbak benchmark
#
# Usage: gentree.py params SHAPE SCALE   print "IMAGE_MIB INODES ENTRIES
#                                         DATA_BYTES" for mke2fs
#        gentree.py write SHAPE SCALE DIR  make the tree under DIR
#
# One process writes the whole tree (200,000 files take a minute or two
# through an encrypted mount, not hours of one process per file).  The
# tree is a pure function of SHAPE and SCALE (a seeded generator), so
# the image cache of tests/bench/bench stays valid while this file does
# not change.
#
# Shapes:
#   small      many small files: mostly < 16 KiB, deep trees, and a few
#              directories big enough for a deep htree index
#   large      a few large files, one of them sparse
#   home       a home directory: caches, sources, documents, pictures,
#              a couple of videos, symlinks, hard links, xattrs
#   wide       one directory of many small files (20,000 quick, 200,000
#              full; 0-8 KiB, about 4 KiB each) beside one sparse giant
#              (2 GiB quick, 20 GiB full, 4 MiB of data): the per-entry
#              cost (issue 25)
#   inodes-N   N inodes, nearly all empty files (for peak RSS)
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import os
import random
import sys

MIB = 1 << 20
BLOCK = 4096

# Entries: ("d", path) | ("f", path, size) | ("sparse", path, apparent,
# [(offset, length), ...]) | ("l", path, target) | ("h", path, existing)
# | ("x", path, name, value)


def small(scale, rnd):
    n = 5000 if scale == "quick" else 200000
    out = []
    dirs = [""]
    # deep trees: directories nested up to 8 levels
    ndirs = max(20, n // 60)
    for i in range(ndirs):
        parent = rnd.choice(dirs)
        if parent.count("/") >= 7:
            parent = ""
        d = (parent + "/" if parent else "") + "dir%05d" % i
        dirs.append(d)
        out.append(("d", d))
    # three big directories for a deep htree index: 10% of the files
    big = []
    for i in range(3):
        d = "htree%d" % i
        out.append(("d", d))
        big.append(d)
    for i in range(n):
        r = rnd.random()
        if r < 0.15:
            size = 0
        elif r < 0.55:
            size = rnd.randint(1, 1023)
        elif r < 0.95:
            size = rnd.randint(1024, 16383)
        else:
            size = rnd.randint(16384, 65535)
        if i % 10 == 0:
            d = big[i % 3]
        else:
            d = rnd.choice(dirs)
        name = "f%07d-%s" % (i, "x" * rnd.randint(0, 24))
        p = (d + "/" if d else "") + name
        if i % 50 == 1:
            out.append(("l", p, "../" * rnd.randint(0, 3) + "target-" +
                        "t" * rnd.randint(0, 80)))
        else:
            out.append(("f", p, size))
    return out


def large(scale, rnd):
    if scale == "quick":
        dense = [40, 24, 8]
        apparent, extents, ext_len = 64, 4, 4
    else:
        dense = [1280, 1024, 256]
        apparent, extents, ext_len = 3072, 8, 64
    out = [("d", "big")]
    for i, m in enumerate(dense):
        out.append(("f", "big/dense%d.bin" % i, m * MIB))
    step = apparent // extents
    out.append(("sparse", "big/sparse.img", apparent * MIB,
                [(j * step * MIB, ext_len * MIB) for j in range(extents)]))
    for i in range(8):
        out.append(("f", "note%d.txt" % i, rnd.randint(100, 20000)))
    return out


def home(scale, rnd):
    n = 2000 if scale == "quick" else 40000
    video = 8 if scale == "quick" else 192
    out = []
    top = {".cache": 0.42, ".config": 0.05, "src": 0.36,
           "Documents": 0.158, "Pictures": 0.01, "Music": 0.002}
    sub = {}
    for t in top:
        out.append(("d", t))
        sub[t] = [t]
        for i in range(max(2, int(top[t] * n / 150))):
            parent = rnd.choice(sub[t])
            if parent.count("/") >= 5:
                parent = t
            d = parent + "/%s%03d" % (t.strip(".")[:3].lower(), i)
            out.append(("d", d))
            sub[t].append(d)
    files = []
    for i in range(n):
        r = rnd.random()
        acc = 0.0
        for t, share in top.items():
            acc += share
            if r < acc:
                break
        if t == ".cache" or t == ".config":
            size = rnd.randint(0, 8191)
        elif t == "src":
            size = int(rnd.lognormvariate(8.0, 1.2))
        elif t == "Documents":
            size = rnd.randint(1024, 131071)
        elif t == "Pictures":
            size = rnd.randint(100 * 1024, 4 * MIB)
        else:
            size = rnd.randint(3 * MIB, 8 * MIB)
        p = rnd.choice(sub[t]) + "/file%06d.%s" % (i, t[-3:].lower())
        files.append(p)
        out.append(("f", p, size))
    out.append(("d", "Videos"))
    for i in range(2):
        out.append(("f", "Videos/clip%d.mp4" % i, video * MIB))
    for i in range(n // 200):
        out.append(("l", "src/link%04d" % i, rnd.choice(files)))
        out.append(("h", "Documents/hard%04d" % i, rnd.choice(files)))
    for i in range(n // 100):
        out.append(("x", rnd.choice(files), "user.tag%d" % i,
                    b"v" * rnd.randint(1, 200)))
    return out


def wide(scale, rnd):
    n = 20000 if scale == "quick" else 200000
    giant = (2 if scale == "quick" else 20) << 30
    out = [("d", "wide")]
    for i in range(n):
        out.append(("f", "wide/f%07d" % i, rnd.randint(0, 8191)))
    # 4 MiB of data in 4 extents of 1 MiB spread over the apparent size
    out.append(("sparse", "giant.img", giant,
                [(j * (giant // 4), MIB) for j in range(4)]))
    return out


def inodes(count):
    out = []
    per_dir = 1000
    ndirs = max(1, (count + per_dir) // (per_dir + 1))
    made = 0
    for d in range(ndirs):
        out.append(("d", "d%04d" % d))
        made += 1
    i = 0
    while made < count:
        p = "d%04d/e%09d" % (i % ndirs, i)
        out.append(("f", p, 100 if i % 20 == 0 else 0))
        i += 1
        made += 1
    return out


def plan(shape, scale):
    rnd = random.Random("%s/%s" % (shape, scale))
    if shape == "small":
        return small(scale, rnd)
    if shape == "large":
        return large(scale, rnd)
    if shape == "home":
        return home(scale, rnd)
    if shape == "wide":
        return wide(scale, rnd)
    if shape.startswith("inodes-") and shape[7:].isdigit():
        return inodes(int(shape[7:]))
    sys.exit("gentree: unknown shape %s" % shape)


def blocks(size):
    return (size + BLOCK - 1) // BLOCK


def params(entries):
    data = 0
    nblocks = 0
    for e in entries:
        if e[0] == "f":
            data += e[2]
            nblocks += blocks(e[2])
        elif e[0] == "sparse":
            for _, length in e[3]:
                data += length
                nblocks += blocks(length)
        elif e[0] == "d":
            nblocks += 1
    # generous: directories grow, extent blocks, xattr blocks, journal
    ninodes = int(len(entries) * 1.2) + 4096
    mib = (nblocks * BLOCK * 5 // 4 + ninodes * 256) // MIB + 256
    return mib, ninodes, len(entries), data


class Filler:
    """Incompressible bytes, a little different for every file."""

    def __init__(self):
        self.pool = os.urandom(8 * MIB)
        self.n = 0

    def chunk(self, size):
        self.n += 1
        off = (self.n * 7919) % (len(self.pool) - MIB)
        tag = b"%d:" % self.n
        if size <= MIB - len(tag):
            return (tag + self.pool[off:off + size])[:size]
        return None


def write_data(fd, filler, length):
    tag = 0
    while length > 0:
        n = min(length, 4 * MIB)
        tag += 1
        off = (tag * 104729 + filler.n * 31) % (len(filler.pool) - n)
        buf = b"%d/%d:" % (filler.n, tag) + filler.pool[off:off + n]
        length -= os.write(fd, buf[:n])


def write(entries, top):
    filler = Filler()
    os.chdir(top)
    for e in entries:
        kind, p = e[0], e[1]
        if kind == "d":
            os.mkdir(p, 0o755)
        elif kind == "f":
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            if e[2] > 0:
                small_buf = filler.chunk(e[2])
                if small_buf is not None:
                    os.write(fd, small_buf)
                else:
                    filler.n += 1
                    write_data(fd, filler, e[2])
            os.close(fd)
        elif kind == "sparse":
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            for off, length in e[3]:
                os.lseek(fd, off, os.SEEK_SET)
                filler.n += 1
                write_data(fd, filler, length)
            os.ftruncate(fd, e[2])
            os.close(fd)
        elif kind == "l":
            os.symlink(e[2], p)
        elif kind == "h":
            os.link(e[2], p)
        elif kind == "x":
            os.setxattr(p, e[2], e[3])


def main(argv):
    if len(argv) < 4 or argv[1] not in ("params", "write") or \
       argv[3] not in ("quick", "full") or \
       (argv[1] == "write") != (len(argv) == 5):
        print("Usage: gentree.py params|write SHAPE quick|full [DIR]",
              file=sys.stderr)
        return 2
    entries = plan(argv[2], argv[3])
    if argv[1] == "params":
        print("%d %d %d %d" % params(entries))
    else:
        write(entries, argv[4])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
