#!/usr/bin/env python3
#
# raw_tree.py --- the output of "online_ioctl walk DIR DATADIR" without
# inode numbers, so that two filesystems can be compared as stored
#
# Usage: raw_tree.py WALK DATADIR
#
# Each inode is named by the raw names of its first path from DIR (hex,
# joined by "/"); prints, sorted, one line per entry (parent, raw name,
# the inode's path, DT_ type, stored hash), one per inode (mode, the
# 'e5' blob -- for directories only the context, their i_size being
# the filesystem's -- and the stored symlink target) and one per regular
# file (block size, i_size, the runs of data and holes, the sha256 of
# the ciphertext).
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import hashlib
import os
import sys


def main(argv):
    walk, datadir = argv[1:3]
    lines = [line.split() for line in open(walk)]
    root = int(lines[0][1])
    path = {root: "."}
    for w in lines:
        if w[0] == "N":
            parent, ino = int(w[1]), int(w[3])
            if ino not in path:
                path[ino] = path[parent] + "/" + w[2]
    out = []
    for w in lines:
        if w[0] == "N":
            out.append("N %s %s %s %s %s" % (path[int(w[1])], w[2],
                                              path[int(w[3])], w[4], w[5]))
        elif w[0] == "M":
            mode = int(w[2], 8)
            blob = w[3]
            if (mode & 0o170000) == 0o040000 and blob != "-":
                blob = blob[24:]
            out.append("M %s %o %s %s" % (path[int(w[1])], mode, blob, w[4]))
        elif w[0] == "R":
            ino = int(w[1])
            f = os.path.join(datadir, str(ino))
            h = hashlib.sha256(open(f, "rb").read()).hexdigest()
            out.append("R %s %s %s %s %s" % (path[ino], w[2], w[3], w[4], h))
    for line in sorted(set(out)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
