#!/usr/bin/env python3
#
# hold_open.py --- keep files of every encrypted directory open, read
#
# Usage: hold_open.py MOUNTPOINT READY [PER_DIR]
#
# With the owner's keys loaded: every encrypted directory under
# MOUNTPOINT is opened, and up to PER_DIR (3) of its regular files are
# opened and read to their end (their plaintext is in the page cache),
# and all of them are held open.  Then one line per encrypted
# directory at the top, "TOP DIRS FILES BYTES", goes to the file READY
# and the process waits for SIGTERM.  An encrypted file that cannot be
# opened or read (no key) is an error: exit 1 before READY is written.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import fcntl
import os
import signal
import stat
import struct
import sys

FS_IOC_GETFLAGS = 0x80086601
ENCRYPT_FL = 0x800


def encrypted(fd):
    buf = fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8)
    return bool(struct.unpack_from("<I", buf)[0] & ENCRYPT_FL)


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write("Usage: hold_open.py MOUNTPOINT READY "
                         "[PER_DIR]\n")
        return 2
    top, ready = argv[1].encode(), argv[2]
    per_dir = int(argv[3]) if len(argv) == 4 else 3
    held, counts = [], {}
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(0))
    for d, dirs, files in os.walk(top):
        dirs.sort()
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        if not encrypted(fd):
            os.close(fd)
            continue
        held.append(fd)
        rel = os.path.relpath(d, top).split(b"/")[0]
        c = counts.setdefault(rel, [0, 0, 0])
        c[0] += 1
        n = 0
        for f in sorted(files):
            p = os.path.join(d, f)
            if n == per_dir or not stat.S_ISREG(os.lstat(p).st_mode):
                continue
            try:
                ffd = os.open(p, os.O_RDONLY)
                while True:
                    b = os.read(ffd, 1 << 20)
                    if not b:
                        break
                    c[2] += len(b)
            except OSError as e:
                sys.stderr.write("hold_open: %r: %s\n" % (p, e))
                return 1
            held.append(ffd)
            c[1] += 1
            n += 1
    with open(ready + ".tmp", "w") as f:
        for rel in sorted(counts):
            f.write("%s %d %d %d\n" % (rel.decode("utf-8", "replace"),
                                       *counts[rel]))
    os.rename(ready + ".tmp", ready)
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
