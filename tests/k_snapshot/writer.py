#!/usr/bin/python3
# writer.py --- k_snapshot's busy writer and its model
#
#   writer.py run DIR LOG PROGRESS   step until killed: create, append,
#                                    rename and delete files in DIR/d
#   writer.py check DIR LO HI        which state after a step in [LO, HI]
#                                    DIR/d is; exit 1 if none
#   writer.py each DIR LO HI         each file of DIR/d is as it was after
#                                    some step in [LO, HI] (a copy made
#                                    file by file, not at one point);
#                                    exit 1 if one is not
#
# Every step is content-defined, so the tree after step N is known
# without a copy of it: state(N) replays the same steps on a dict.  Each
# step changes DIR/d with one system call (a new file is written and
# fsynced in DIR/stage first, then renamed in), so a freeze lands between
# two steps; the data is fsynced before the step counts, so that a crash
# image (a copy without a freeze) also holds a whole number of steps.
# After step N, DIR/d is fsynced, which commits the journal with the
# step's rename or unlink in it, and then N is written to LOG (in an
# unencrypted directory of the same file system) and fsynced: the image
# itself says which steps it has.  (The fsync of LOG alone is not
# enough: an overwrite within one tick of the clock leaves its inode
# clean, and ext4 then writes the block without a commit, so a crash
# image could say N before it holds step N's rename.)  PROGRESS (outside the file system)
# tells the test how far the writer got.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import hashlib
import os
import sys

BLOCK = 4096
# creates turn into deletes beyond this many files: a fast machine must
# not fill the 64 MiB file system
MAX_FILES = 200


def content(n, size):
    seed = hashlib.sha256(b'k_snapshot %d' % n).digest()
    return (seed * (size // len(seed) + 1))[:size]


def step(files, n):
    """Step n on the model FILES (name -> bytes); returns the operation
    as (verb, name, arg) for the real writer to do."""
    names = sorted(files)
    op = n % 5
    if op in (0, 1) and len(names) >= MAX_FILES:
        op = 4
    if op in (0, 1) or len(names) < 3:
        name = 'f%d' % n
        # from empty to a few blocks, straddling block edges
        data = content(n, (n * 1237) % (3 * BLOCK + 7))
        files[name] = data
        return ('create', name, data)
    victim = names[n % len(names)]
    if op == 2:
        # whole blocks: a crash keeps all of an append or none of it
        data = content(n, BLOCK)
        files[victim] += data
        return ('append', victim, data)
    if op == 3:
        new = 'r%d-%s' % (n, victim.split('-')[-1])
        files[new] = files.pop(victim)
        return ('rename', victim, new)
    del files[victim]
    return ('delete', victim, None)


def state(k):
    files = {}
    for n in range(1, k + 1):
        step(files, n)
    return files


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def run(top, log, progress):
    d = os.path.join(top, 'd')
    stage = os.path.join(top, 'stage')
    os.makedirs(d, exist_ok=True)
    os.makedirs(stage, exist_ok=True)
    files = {}
    lfd = os.open(log, os.O_WRONLY | os.O_CREAT, 0o644)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    n = 0
    while True:
        n += 1
        verb, name, arg = step(files, n)
        path = os.path.join(d, name)
        if verb == 'create':
            tmp = os.path.join(stage, 'new')
            with open(tmp, 'wb') as f:
                f.write(arg)
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, path)
        elif verb == 'append':
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            assert os.write(fd, arg) == len(arg)
            os.fsync(fd)
            os.close(fd)
        elif verb == 'rename':
            os.rename(path, os.path.join(d, arg))
        else:
            os.unlink(path)
        os.fsync(dfd)
        os.pwrite(lfd, b'%10d\n' % n, 0)
        os.fsync(lfd)
        with open(progress + '.tmp', 'w') as f:
            f.write('%d\n' % n)
        os.rename(progress + '.tmp', progress)


def read_tree(top):
    """DIR/d as the model holds it: name -> bytes"""
    d = os.path.join(top, 'd')
    got = {}
    for name in os.listdir(d):
        with open(os.path.join(d, name), 'rb') as f:
            got[name] = f.read()
    return got


def check(top, lo, hi):
    got = read_tree(top)
    files = state(max(lo, 0))
    best = None
    for k in range(max(lo, 0), hi + 1):
        if k > max(lo, 0):
            step(files, k)
        if files == got:
            print('state %d' % k)
            return 0
        diff = set(files.items()) ^ set(got.items())
        if best is None or len(diff) < best[1]:
            best = (k, len(diff), sorted(n for n, _ in diff)[:6])
    print('no state in [%d, %d]: nearest %d, differing in %s (%d files)'
          % (lo, hi, best[0], ' '.join(best[2]), len(got)))
    return 1


def each(top, lo, hi):
    got = read_tree(top)
    files = state(max(lo, 0))
    left = dict(got)
    for k in range(max(lo, 0), hi + 1):
        if k > max(lo, 0):
            step(files, k)
        for name in [n for n in left if files.get(n) == left[n]]:
            del left[name]
    if left:
        print('%d of %d files as after no step in [%d, %d]: %s'
              % (len(left), len(got), lo, hi, ' '.join(sorted(left)[:6])))
        return 1
    print('%d files, each as after a step in [%d, %d]' % (len(got), lo, hi))
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'run':
        run(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == 'check':
        sys.exit(check(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    elif sys.argv[1] == 'each':
        sys.exit(each(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    else:
        sys.exit('usage: writer.py run DIR LOG PROGRESS | '
                 'check|each DIR LO HI')
