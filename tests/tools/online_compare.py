#!/usr/bin/env python3
#
# online_compare.py --- what the keyless backup ioctls returned online
# against an e2cryptbak archive of the same filesystem made offline
#
# Usage: online_compare.py WALK DATADIR ARCHIVE [PLAIN]
#
# WALK is the output of "online_ioctl walk DIR DATADIR" on the mounted
# filesystem; ARCHIVE is "e2cryptbak backup" of the unmounted image, of
# the same DIR.  Checks that
#   - the raw names (parent inode, name bytes, inode) are the same sets;
#   - every inode's mode and 'e5' blob (context and i_size) are the same;
#   - every encrypted symlink's stored target is the same;
#   - every regular file's runs of data are the archive's sparse map and
#     its ciphertext blocks are the archive's bytes (which check_archive.py
#     holds to the device's blocks);
# and, with PLAIN (lines "N HEXNAME", "T HEXTARGET", "F INO FILE" written
# while the key was loaded), that no name, target or data block returned
# online is the plaintext.
# Exit: 0 all equal, 1 a mismatch (each on stderr).

import os
import struct
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_archive as ca  # noqa: E402

errors = 0
IF_DIRENT_HASH = 0x0020


def bad(msg, *args):
    global errors
    errors += 1
    sys.stderr.write("online_compare: " + (msg % args) + "\n")


def read_walk(path):
    names, meta, runs = set(), {}, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "N":
                names.add((int(w[1]), bytes.fromhex(w[2]), int(w[3]),
                           None if w[5] == "-" else w[5]))
            elif w[0] == "M":
                meta[int(w[1])] = (int(w[2], 8),
                                   b"" if w[3] == "-" else bytes.fromhex(w[3]),
                                   b"" if w[4] == "-" else bytes.fromhex(w[4]))
            elif w[0] == "R":
                rl = [] if w[4] == "-" else w[4].split(",")
                runs[int(w[1])] = (int(w[2]), int(w[3]), rl)
    return names, meta, runs


def main(argv):
    walk, datadir, archive = argv[1:4]
    plain = argv[4] if len(argv) > 4 else None
    names, meta, runs = read_walk(walk)

    stats = {"pax_values": 0}
    tf, entries = ca.read_archive(archive, stats)
    path_ino = {}
    anames, ameta, atarget, adata = set(), {}, {}, {}
    for e in entries:
        if "inode" not in e.recs:
            continue
        r = ca.decode_inode(e.recs["inode"])
        path = e.path.rstrip("/") or "."
        path_ino[path] = r["ino"]
        e.ino = r["ino"]
        e.mode = r["mode"]
    for e in entries:
        if "inode" not in e.recs:
            continue
        path = e.path.rstrip("/") or "."
        if "name" in e.recs:
            parent = path.rsplit("/", 1)[0] if "/" in path else "."
            _, _, _, raw = ca.decode_name(e.recs["name"])
            r = ca.decode_inode(e.recs["inode"])
            h = None
            if r["rflags"] & IF_DIRENT_HASH:
                h = "%08x/%08x" % struct.unpack_from("<II",
                                                     e.recs["inode"], 112)
            anames.add((path_ino[parent], bytes(raw), e.ino, h))
        ameta.setdefault(e.ino, (e.mode,
                                 bytes(e.recs.get("metadata", b""))))
        if "symlink" in e.recs:
            atarget[e.ino] = bytes(e.recs["symlink"][:-4])
        if e.m.isreg() and e.mode & 0o170000 == 0o100000:
            sparse = e.m.sparse
            adata[e.ino] = (tf.extractfile(e.m).read(), sparse, e.m.size)

    print("online: %d names, %d inodes, %d files; archive: %d names, "
          "%d inodes" % (len(names), len(meta), len(runs), len(anames),
                         len(ameta)))
    for n in sorted(names - anames, key=str):
        bad("online only: name %s ino %d hash %s in dir %d", n[1].hex(),
            n[2], n[3], n[0])
    for n in sorted(anames - names, key=str):
        bad("archive only: name %s ino %d hash %s in dir %d", n[1].hex(),
            n[2], n[3], n[0])
    nhash = sum(1 for n in names if n[3] is not None)
    if nhash:
        print("%d names with a stored hash" % nhash)

    for ino, (mode, e5, target) in sorted(meta.items()):
        if ino not in ameta:
            bad("inode %d: not in the archive", ino)
            continue
        amode, ae5 = ameta[ino]
        if mode != amode:
            bad("inode %d: mode %o online, %o in the archive", ino, mode,
                amode)
        if e5 != ae5:
            bad("inode %d: e5 %s online, %s in the archive", ino, e5.hex(),
                ae5.hex())
        if (mode & 0o170000) == 0o120000 and target != atarget.get(ino):
            bad("inode %d: symlink target %s online, %s in the archive",
                ino, target.hex(), (atarget.get(ino) or b"").hex())
    for ino in sorted(set(ameta) - set(meta)):
        bad("inode %d: in the archive only", ino)

    nblocks_total = 0
    for ino, (bs, size, rl) in sorted(runs.items()):
        if ino not in adata:
            bad("file %d: no data in the archive", ino)
            continue
        want, sparse, tsize = adata[ino]
        with open(os.path.join(datadir, str(ino)), "rb") as f:
            got = f.read()
        nb = (size + bs - 1) // bs
        nblocks_total += nb
        if len(got) != nb * bs:
            bad("file %d: %d bytes read online, %d blocks of %d", ino,
                len(got), nb, bs)
        if got != want[:len(got)] or want[len(got):].strip(b"\0"):
            bad("file %d: the ciphertext read online is not the archive's",
                ino)
        dblocks = set()
        nxt = 0
        for run in rl:
            kind, rest = run.split(":")
            lblk, n = map(int, rest.split("+"))
            if lblk != nxt:
                bad("file %d: run %s does not follow block %d", ino, run,
                    nxt)
            nxt = lblk + n
            if kind == "D":
                dblocks.update(range(lblk, lblk + n))
        if nxt != nb:
            bad("file %d: runs end at block %d, not %d", ino, nxt, nb)
        ablocks = set()
        if sparse is None:
            ablocks = set(range((tsize + bs - 1) // bs))
        else:
            for off, ln in sparse:
                ablocks.update(range(off // bs, (off + ln + bs - 1) // bs))
        if dblocks != ablocks:
            bad("file %d: data blocks %s online, %s in the archive", ino,
                sorted(dblocks), sorted(ablocks))
    print("compared %d files, %d blocks" % (len(runs), nblocks_total))

    if plain:
        rawnames = {n[1] for n in names}
        targets = [m[2] for m in meta.values() if m[2]]
        nplain = 0
        with open(plain) as f:
            for line in f:
                w = line.split()
                if w[0] == "N":
                    p = bytes.fromhex(w[1])
                    if p in rawnames and p not in (b".", b".."):
                        bad("the plaintext name %r came back raw", p)
                elif w[0] == "T":
                    p = bytes.fromhex(w[1])
                    if any(t[2:].rstrip(b"\0") == p or
                           (len(p) >= 16 and p in t) for t in targets):
                        bad("the plaintext target %r came back", p)
                elif w[0] == "F" and int(w[1]) in runs:
                    bs = runs[int(w[1])][0]
                    with open(w[2], "rb") as pf:
                        pdata = pf.read()
                    with open(os.path.join(datadir, w[1]), "rb") as gf:
                        got = gf.read()
                    for i in range(0, len(pdata), bs):
                        blk = pdata[i:i + bs]
                        # shorter ones could match ciphertext by chance
                        if len(blk.rstrip(b"\0")) >= 16 and \
                                got[i:i + len(blk)] == blk:
                            bad("file %s: block %d came back plaintext",
                                w[1], i // bs)
                    nplain += 1
        print("plaintext never returned (%d files checked)" % nplain)
    return 1 if errors else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (ca.Mismatch, ca.Failure) as e:
        sys.stderr.write("online_compare: %s\n" % e)
        sys.exit(1)
