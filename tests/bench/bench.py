#!/usr/bin/env python3
#
# bench.py --- the timing, correctness and report half of "make bench"
#
# Run by tests/bench/bench, which checks root, loop devices and fscrypt,
# holds the cache lock, makes WORK and sweeps mounts and loops away on
# exit.  The knobs (BENCH_SCALE, BENCH_REPS, ...) are described there.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(BENCH, "..", "tools")
SRCDIR = os.path.abspath(os.path.join(BENCH, "..", ".."))

E2CRYPTBAK = os.environ["E2CRYPTBAK"]
HELPER = os.environ["FSCRYPT_HELPER"]
# another build of e2cryptbak to time beside this one ("vs" rows)
VS = os.environ.get("BENCH_VS") or None
WORK = os.environ["BENCH_WORK"]
CACHE = os.environ["BENCH_CACHE"]
SCALE = os.environ.get("BENCH_SCALE", "quick")
SHAPES = os.environ.get("BENCH_SHAPES", "small large home wide").split()
MODES = os.environ.get("BENCH_MODES", "warm cold").split()
REPS = int(os.environ.get("BENCH_REPS") or (3 if SCALE == "quick" else 5))
RSS_COUNTS = [int(n) for n in os.environ.get(
    "BENCH_RSS_INODES",
    "2000 10000 50000" if SCALE == "quick" else
    "10000 100000 1000000").split()]
SSL_SECONDS = 1 if SCALE == "quick" else 3
# "within a few tens of MiB of libext2fs's own bitmaps"
RSS_ALLOWANCE_MIB = 32
MB = 1e6

# The targets of issue 6: (op, peer, shape) -> (relation, bound).
# Times: ours/peer, lower is better; "thru": ours/peer throughput.
TARGETS = {
    ("backup", "e2image", "large"): ("<=", 1.2),
    ("backup", "e2image", "small"): ("<=", 1.5),
    # issue 25: the per-entry cost, on one directory of many files
    ("backup", "e2image", "wide"): ("<=", 1.0),
    ("extract", "tar -x", "wide"): ("<=", 1.0),
    ("backup", "tar", None): ("<", 1.0),
    ("restore", "mke2fs -d", None): ("<=", 1.0),
    ("extract", "openssl", "large"): (">=", 0.8),
}

mounts = []
# archive bytes per (who, shape): the per-entry overhead of the format
archive_bytes = {}


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def die(msg):
    log("ERROR: " + msg)
    raise SystemExit(1)


def on_signal(signum, frame):
    raise SystemExit(128 + signum)


def sh(argv, **kw):
    """Run an untimed helper command; abort loudly if it fails."""
    p = subprocess.run(argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        die("%s: exit %d: %s" % (" ".join(argv), p.returncode,
                                 p.stderr.decode(errors="replace")[-2000:]))
    return p.stdout.decode(errors="replace")


def rm(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


class Mount:
    """The image mounted read-only with its key added: the kernel's view."""

    def __init__(self, img, key, mnt):
        self.mnt = mnt
        os.makedirs(mnt, exist_ok=True)
        sh(["mount", "-t", "ext4", "-o", "loop,ro,noload", img, mnt])
        mounts.append(self)
        self.keyid = sh([HELPER, "add_key", mnt, key]).strip()

    def close(self):
        if self in mounts:
            mounts.remove(self)
            subprocess.run([HELPER, "remove_key", self.mnt, self.keyid],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            sh(["umount", self.mnt])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def cleanup_mounts():
    for m in list(reversed(mounts)):
        try:
            m.close()
        except BaseException:
            subprocess.run(["umount", "-l", m.mnt])


class Run:
    def __init__(self, wall, rss_kib, cpu, mbps=None):
        self.wall, self.rss_kib, self.cpu = wall, rss_kib, cpu
        self.mbps = mbps


def timed(argv, cold, what):
    """One timed child: wall time, peak RSS and CPU time from wait4."""
    errpath = os.path.join(WORK, "stderr")
    rsspath = os.path.join(WORK, "rss")
    os.sync()
    if cold:
        drop_caches()
    # A child forked from this Python starts with Python's pages counted
    # in its ru_maxrss; GNU time forks from a small process, and so
    # gives the command's own peak.
    with open(errpath, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rsspath]
                             + argv, stdout=subprocess.DEVNULL, stderr=err,
                             stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    try:
        with open(rsspath) as f:
            ru_maxrss = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        ru_maxrss = 0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        with open(errpath, "rb") as f:
            msg = f.read().decode(errors="replace")[-2000:]
        die("%s failed (exit %d): %s\n%s" % (what, p.returncode,
                                              " ".join(argv), msg))
    log("  %-34s %8.3f s  %8d KiB" % (what, wall, ru_maxrss))
    return Run(wall, ru_maxrss, ru.ru_utime + ru.ru_stime)


def script_version():
    h = hashlib.sha256()
    for f in ("gentree.py", "mkimage"):
        with open(os.path.join(BENCH, f), "rb") as fd:
            h.update(fd.read())
    return h.hexdigest()[:10]


def image(shape):
    """The cached kernel-made image of SHAPE, made on first use."""
    scale = "any" if shape.startswith("inodes-") else SCALE
    d = os.path.join(CACHE, "img-%s-%s-%s" % (shape, scale, script_version()))
    if not os.path.exists(os.path.join(d, "info")):
        log("making the %s image (%s scale; cached in %s)" %
            (shape, scale, d))
        t0 = time.perf_counter()
        p = subprocess.run([os.path.join(BENCH, "mkimage"), shape,
                            "quick" if scale == "any" else scale, d])
        if p.returncode != 0:
            die("mkimage %s failed" % shape)
        log("  made in %.0f s" % (time.perf_counter() - t0))
    info = {}
    with open(os.path.join(d, "info")) as f:
        for line in f:
            k, v = line.split()
            info[k] = int(v)
    with open(os.path.join(d, "mkfs")) as f:
        mkfs = f.read().split()
    return {"dir": d, "img": os.path.join(d, "image"),
            "key": os.path.join(d, "key"), "plain": os.path.join(d, "plain"),
            "manifest": os.path.join(d, "manifest"), "mkfs": mkfs,
            "info": info, "shape": shape}


def manifest(tree, out):
    sh(["sh", "-c", 'python3 "$1" "$2" >"$3"', "manifest",
        os.path.join(TOOLS, "manifest.py"), tree, out])


def check_tree(im, tree, what):
    """Abort unless TREE is, line for line, what the kernel read."""
    got = os.path.join(WORK, "manifest.got")
    manifest(tree, got)
    p = subprocess.run(["diff", "-u", im["manifest"], got],
                       stdout=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write(p.stdout.decode(errors="replace")[:4000])
        die("WRONG RESULT: %s differs from the kernel's plaintext of the "
            "%s image" % (what, im["shape"]))
    log("  correct: %s matches the kernel's plaintext (%d lines)" %
        (what, sum(1 for _ in open(got))))
    os.unlink(got)


def fresh_target(im, path, populate=None):
    rm(path)
    with open(path, "wb") as f:
        f.truncate(im["info"]["image_bytes"])
    argv = ["mke2fs", "-q", "-F"] + im["mkfs"]
    if populate:
        argv += ["-d", populate]
    return argv + [path]


def orders(rep, runs):
    """Alternate who goes first, so drift hits ours and the peers alike."""
    return runs if rep % 2 == 0 else list(reversed(runs))


# ---------------------------------------------------------------- phases

def bench_backup(im, mode, rep, res, archive):
    out = os.path.join(WORK, "out")
    mnt = os.path.join(WORK, "mnt")
    cold = mode == "cold"

    def ours(prog=E2CRYPTBAK, archive=archive, who="e2cryptbak"):
        r = timed([prog, "backup", "-o", out, im["img"]], cold,
                  "backup " + who)
        if not os.path.exists(archive):
            os.rename(out, archive)
            archive_bytes[(who, im["shape"])] = os.path.getsize(archive)
            sh([prog, "verify", archive])
            if prog != E2CRYPTBAK:
                sh([E2CRYPTBAK, "verify", archive])
            log("  correct: %s verify passes" % who)
        return r

    # Ours fsyncs the archive before it renames it into place; the
    # peers' outputs are synced too, so each time runs until the copy
    # is on disk.
    def e2image():
        return timed(["sh", "-c", 'e2image -ra -a "$1" "$2" && sync "$2"',
                      "e2image", im["img"], out], cold,
                     "backup e2image -ra -a")

    def tar():
        with Mount(im["img"], im["key"], mnt):
            return timed(["sh", "-c", 'tar -cf "$2" -C "$1" . && '
                          'sync "$2"', "tar", mnt, out], cold,
                         "backup tar (kernel, key added)")

    runs = [("ours", ours), ("e2image", e2image), ("tar", tar)]
    if VS:
        runs.insert(1, ("vs", lambda: ours(VS, vs_archive(archive), "vs")))
    for name, fn in orders(rep, runs):
        rm(out)
        res.setdefault(("backup", name, im["shape"], mode), []).append(fn())
        rm(out)


def bench_restore(im, mode, rep, res, archive, checked):
    tgt = os.path.join(WORK, "target.img")
    mnt = os.path.join(WORK, "mnt")
    cold = mode == "cold"

    def ours(prog=E2CRYPTBAK, archive=archive, who="e2cryptbak"):
        sh(fresh_target(im, tgt))
        r = timed([prog, "restore", archive, tgt], cold,
                  "restore " + who)
        if not checked.get(("restore", im["shape"], who)):
            sh(["e2fsck", "-fn", tgt])
            with Mount(tgt, im["key"], mnt):
                check_tree(im, mnt, "the image restored by %s, mounted"
                           % who)
            checked[("restore", im["shape"], who)] = True
        return r

    def mke2fs_d():
        return timed(fresh_target(im, tgt, im["plain"]), cold,
                     "restore mke2fs -d")

    runs = [("ours", ours), ("mke2fs -d", mke2fs_d)]
    # mke2fs -d (1.47.0) scans a directory for each name it adds: 30 s
    # for the 20,000 names of wide/quick, an hour or so for 200,000
    if im["shape"] == "wide" and SCALE == "full" and \
            not os.environ.get("BENCH_WIDE_MKE2FS"):
        if rep == 0 and mode == MODES[0]:
            log("  wide/full: mke2fs -d skipped (quadratic in a "
                "directory's names; BENCH_WIDE_MKE2FS=1 runs it)")
        runs = runs[:1]
    if VS:
        runs.insert(1, ("vs", lambda: ours(VS, vs_archive(archive), "vs")))
    for name, fn in orders(rep, runs):
        res.setdefault(("restore", name, im["shape"], mode),
                       []).append(fn())
        rm(tgt)


def openssl_mbps():
    p = subprocess.run(["openssl", "speed", "-evp", "aes-256-xts", "-bytes",
                        "4096", "-seconds", str(SSL_SECONDS)],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for line in p.stdout.decode().splitlines():
        f = line.split()
        if f and f[0].lower() == "aes-256-xts" and len(f) >= 2:
            v = float(f[1].rstrip("k")) * 1000 / MB
            log("  %-34s %8.1f MB/s" % ("openssl speed aes-256-xts 4096",
                                        v))
            return v
    die("no AES-256-XTS figure from openssl speed")


def bench_extract(im, mode, rep, res, archive, checked):
    out = os.path.join(WORK, "extracted")
    mnt = os.path.join(WORK, "mnt")
    cold = mode == "cold"

    def ours(src, what, prog=E2CRYPTBAK, who="e2cryptbak"):
        def run():
            r = timed([prog, "extract", "-k", im["key"], "-C", out,
                       src], cold, "extract %s %s" % (who, what))
            if not checked.get(("extract", what, im["shape"], who)):
                check_tree(im, out, "extract by %s from the %s" %
                           (who, what))
                checked[("extract", what, im["shape"], who)] = True
            return r
        return run

    def tar():
        with Mount(im["img"], im["key"], mnt):
            os.mkdir(out)
            return timed(["bash", "-o", "pipefail", "-c",
                          'tar -cf - -C "$1" . | tar -xf - -C "$2"',
                          "tar", mnt, out], cold,
                         "extract tar|tar (kernel, key added)")

    def ssl():
        return Run(None, None, None, openssl_mbps())

    # the plaintext tree's own tar (made once, untimed), extracted
    def tar_x():
        plain_tar = os.path.join(WORK, "plain-%s.tar" % im["shape"])
        if not os.path.exists(plain_tar):
            sh(["tar", "-cf", plain_tar, "-C", im["plain"], "."])
        os.mkdir(out)
        return timed(["tar", "-xf", plain_tar, "-C", out], cold,
                     "extract GNU tar -x (plain tree)")

    # -O: the decryption without the page cache's copy of the output
    def ours_stdout(src, what):
        def run():
            if not checked.get(("extract -O", what, im["shape"])):
                check_stream(im, src, what)
                checked[("extract -O", what, im["shape"])] = True
            return timed(["sh", "-c", '"$0" extract -k "$1" -O "$2" '
                          '>/dev/null', E2CRYPTBAK, im["key"], src], cold,
                         "extract -O e2cryptbak " + what)
        return run

    # the ceiling of any extract into files: writing as many bytes
    def dd():
        mib = im["info"]["data_bytes"] // 2**20
        return timed(["dd", "if=/dev/zero", "of=" + out, "bs=1M",
                      "count=%d" % mib, "status=none"], cold,
                     "dd of the same bytes")

    # the ceiling of any extract from the image: reading it
    def cat():
        return timed(["sh", "-c", 'cat "$0" >/dev/null', im["img"]], cold,
                     "cat of the image")

    runs = [("ours image", ours(im["img"], "image")),
            ("ours archive", ours(archive, "archive")), ("tar", tar)]
    if VS:
        runs[1:1] = [("vs image", ours(im["img"], "image", VS, "vs"))]
        runs[3:3] = [("vs archive", ours(vs_archive(archive), "archive",
                                         VS, "vs"))]
    if im["shape"] == "wide":
        runs.append(("tar -x", tar_x))
    if im["shape"] == "large":
        runs += [("openssl", ssl),
                 ("ours image -O", ours_stdout(im["img"], "image")),
                 ("ours archive -O", ours_stdout(archive, "archive")),
                 ("dd", dd), ("cat", cat)]
    for name, fn in orders(rep, runs):
        rm(out)
        res.setdefault(("extract", name, im["shape"], mode),
                       []).append(fn())
        rm(out)


def check_stream(im, src, what):
    """extract -O gives each regular file's size once: the kernel's sum."""
    want = 0
    with open(im["manifest"], "rb") as f:
        for line in f:
            m = re.search(rb" type=f .*nlink=(\d+).* size=(\d+)", line)
            if m:
                want += int(m.group(2)) // int(m.group(1))
    p = subprocess.Popen([E2CRYPTBAK, "extract", "-k", im["key"], "-O", src],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    got = 0
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        got += len(b)
    if p.wait() != 0 or got != want:
        die("extract -O from the %s: %d bytes (exit %d), want %d" %
            (what, got, p.returncode, want))
    log("  correct: extract -O from the %s gives the %d bytes of the "
        "files" % (what, want))


def vs_archive(archive):
    return os.path.splitext(archive)[0] + "-vs.tar"


def list_path(line):
    """The path of a line of list -k, in 0.1.8's format or the older one."""
    if "  =  " in line:
        # up to 0.1.7: CIPHER  =  PLAIN  ->  TARGET  [NOTE]  [hard link]
        return re.split(r"  (?:->  |\[)", line.split("  =  ", 1)[-1], 1)[0]
    # PATH[ link to FIRST| -> TARGET][ [NOTE]][ [encrypted[: STORED]]]
    line = re.sub(r" \[encrypted(?:: .*)?\]$", "", line)
    line = re.sub(r"(?: \[[^]]*\])+$", "", line)
    return re.split(r" (?:->|link to) ", line, 1)[0]


def check_list(im, argv, who):
    """list -k names every path the kernel shows, no other."""
    want = set()
    with open(im["manifest"], "rb") as f:
        for line in f:
            want.add(line.split(b" ", 1)[0].decode(errors="replace"))
    got = set()
    for line in sh(argv).splitlines():
        if re.search(r": \d+ entries listed", line):
            continue
        got.add(list_path(line))
    if got != want:
        die("WRONG RESULT: list -k by %s: %d paths, the kernel %d; "
            "e.g. %s" % (who, len(got), len(want),
                         sorted(got ^ want)[:5]))
    log("  correct: list -k by %s names the kernel's %d paths" %
        (who, len(want)))


def bench_list(im, mode, rep, res, archive, checked):
    """list -k and verify, this build and BENCH_VS, each of its archive."""
    cold = mode == "cold"

    def run(op, prog, arch, who):
        def fn():
            argv = [prog, op] + (["-k", im["key"]] if op == "list" else [])
            if op == "list" and not checked.get(("list", im["shape"], who)):
                check_list(im, argv + [arch], who)
                checked[("list", im["shape"], who)] = True
            return timed(argv + [arch], cold, "%s %s" % (op, who))
        return fn

    for op in ("list", "verify"):
        runs = [("ours", run(op, E2CRYPTBAK, archive, "e2cryptbak")),
                ("vs", run(op, VS, vs_archive(archive), "vs"))]
        for name, fn in orders(rep, runs):
            res.setdefault((op, name, im["shape"], mode), []).append(fn())


def count_entries(top):
    n = 0
    for _, dirs, files in os.walk(top):
        n += len(dirs) + len(files)
    return n


def bench_rss(rss):
    """Peak RSS of backup, restore and extract against the inode count."""
    archive = os.path.join(WORK, "rss.tar")
    tgt = os.path.join(WORK, "rss-target.img")
    out = os.path.join(WORK, "rss-extracted")
    for n in RSS_COUNTS:
        im = image("inodes-%d" % n)
        log("peak RSS at %d inodes" % n)
        rm(archive)
        b = timed([E2CRYPTBAK, "backup", "-o", archive, im["img"]], False,
                  "backup e2cryptbak")
        sh(fresh_target(im, tgt))
        r = timed([E2CRYPTBAK, "restore", archive, tgt], False,
                  "restore e2cryptbak")
        sh(["e2fsck", "-fn", tgt])
        rm(tgt)
        rm(out)
        x = timed([E2CRYPTBAK, "extract", "-k", im["key"], "-C", out,
                   im["img"]], False, "extract e2cryptbak image")
        got = count_entries(out)
        if got != im["info"]["entries"]:
            die("WRONG RESULT: extract made %d entries of the %d the "
                "kernel shows" % (got, im["info"]["entries"]))
        log("  correct: %d entries extracted, restored image e2fsck clean"
            % got)
        rm(out)
        rm(archive)
        info = im["info"]
        rss.append({"inodes_used": n, "blocks": info["blocks"],
                    "inodes": info["inodes"],
                    "bitmaps_kib": (info["blocks"] // 8 +
                                    info["inodes"] // 8) / 1024,
                    "backup": b.rss_kib, "restore": r.rss_kib,
                    "extract": x.rss_kib})


# ---------------------------------------------------------------- report

def fmt_t(s):
    return "%.2f s" % s if s >= 1 else "%.0f ms" % (s * 1000)


def target_for(op, peer, shape):
    for key in ((op, peer, shape), (op, peer, None)):
        if key in TARGETS:
            return TARGETS[key]
    return None


def mark(t, v):
    if t is None:
        return ""
    rel, bound = t
    ok = {"<=": v <= bound, "<": v < bound, ">=": v >= bound}[rel]
    return "pass" if ok else "**MISS**"


def rows(res, images):
    """(comparison, shape, cache, ratios, target, ours, peer) per row."""
    out = []
    comps = [("backup", "ours", "e2image", "backup vs `e2image -ra -a`"),
             ("backup", "ours", "tar", "backup vs tar (kernel)"),
             ("restore", "ours", "mke2fs -d", "restore vs `mke2fs -d`"),
             ("extract", "ours image", "tar",
              "extract image vs tar\\|tar (kernel)"),
             ("extract", "ours archive", "tar",
              "extract archive vs tar\\|tar (kernel)"),
             ("extract", "ours image", "tar -x",
              "extract image vs GNU `tar -x` of the plain tree"),
             ("extract", "ours archive", "tar -x",
              "extract archive vs GNU `tar -x` of the plain tree"),
             ("extract", "ours image", "openssl",
              "extract image MB/s vs openssl 1 core"),
             ("extract", "ours archive", "openssl",
              "extract archive MB/s vs openssl 1 core"),
             ("extract", "ours image -O", "openssl",
              "extract -O image >/dev/null MB/s vs openssl 1 core"),
             ("extract", "ours archive -O", "openssl",
              "extract -O archive >/dev/null MB/s vs openssl 1 core"),
             ("extract", "dd", "openssl",
              "(ceiling) dd of as many bytes MB/s vs openssl 1 core"),
             ("extract", "cat", "openssl",
              "(ceiling) cat of the image MB/s vs openssl 1 core")]
    if VS:
        comps += [("backup", "ours", "vs", "backup vs BENCH_VS"),
                  ("restore", "ours", "vs", "restore vs BENCH_VS"),
                  ("extract", "ours image", "vs image",
                   "extract image vs BENCH_VS"),
                  ("extract", "ours archive", "vs archive",
                   "extract archive vs BENCH_VS"),
                  ("list", "ours", "vs", "list -k vs BENCH_VS"),
                  ("verify", "ours", "vs", "verify vs BENCH_VS")]
    for op, us, peer, label in comps:
        for shape in SHAPES:
            for mode in MODES:
                a = res.get((op, us, shape, mode))
                b = res.get((op, peer, shape, mode))
                if not a or not b:
                    continue
                data = images[shape]["info"]["data_bytes"]
                if peer == "openssl":
                    ratios = [data / x.wall / MB / y.mbps
                              for x, y in zip(a, b)]
                    ours_t = statistics.median(x.wall for x in a)
                    ssl = statistics.median(y.mbps for y in b)
                    peer_s = "%.0f MB/s" % ssl
                    tgt = None if us in ("dd", "cat") else \
                        target_for(op, peer, shape)
                else:
                    ratios = [x.wall / y.wall for x, y in zip(a, b)]
                    ours_t = statistics.median(x.wall for x in a)
                    peer_t = statistics.median(y.wall for y in b)
                    peer_s = "%s, %.0f MB/s" % (fmt_t(peer_t),
                                                data / peer_t / MB)
                    tgt = target_for(op, peer, shape)
                ours_s = "%s, %.0f MB/s" % (fmt_t(ours_t),
                                            data / ours_t / MB)
                out.append((label, shape, mode, ratios, tgt, ours_s,
                            peer_s))
    return out


def machine():
    def first(path, key):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(key):
                        return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return "?"

    mem = first("/proc/meminfo", "MemTotal")
    src = subprocess.run(["findmnt", "-no", "SOURCE,FSTYPE", "-T", CACHE],
                         stdout=subprocess.PIPE).stdout.decode().split()
    disk = " ".join(src) if src else "?"
    if src:
        dev = src[0]
        p = subprocess.run(["lsblk", "-dno", "MODEL,ROTA,SIZE", dev],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        f = p.stdout.decode().split()
        if f:
            model = " ".join(f[:-2]) or "no model"
            disk += " (%s, %s, %s)" % (model, "rotational" if f[-2] == "1"
                                       else "non-rotational", f[-1])
    return [("kernel", platform.release()),
            ("CPU", "%s, %d cores" % (first("/proc/cpuinfo", "model name"),
                                      os.cpu_count())),
            ("RAM", "%.1f GiB" % (int(mem.split()[0]) / 1024 / 1024)),
            ("disk (images, outputs)", "%s, %s" % (CACHE, disk))]


def tool_versions():
    def one(argv):
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        lines = p.stdout.decode(errors="replace").strip().splitlines()
        return lines[0] if lines else "?"
    vs = [("BENCH_VS", "%s: %s" % (VS, one([VS, "-V"])))] if VS else []
    return [("e2cryptbak", one([E2CRYPTBAK, "-V"]))] + vs + [
            ("e2fsprogs", one(["mke2fs", "-V"])),
            ("tar", one(["tar", "--version"])),
            ("openssl", one(["openssl", "version"]))]


def git_commit():
    p = subprocess.run(["git", "-C", SRCDIR, "describe", "--always",
                        "--dirty", "--abbrev=12"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return p.stdout.decode().strip() or "unknown"


def report(res, images, rss, started, load0):
    L = []
    w = L.append
    w("# e2cryptbak benchmark (%s scale)" % SCALE)
    w("")
    w("Ratio = ours/peer wall time over %d alternating repetitions "
      "(lower is better), except the openssl rows: ours/peer throughput "
      "(higher is better).  The mark judges the median.  MB = 10^6 bytes "
      "of file data (allocated bytes of the regular files)." % REPS)
    w("")
    w("| comparison | shape | cache | min | median | max | target | "
      "mark | ours (median) | peer (median) |")
    w("|---|---|---|---:|---:|---:|---|---|---:|---:|")
    for label, shape, mode, ratios, tgt, ours_s, peer_s in rows(res,
                                                                  images):
        med = statistics.median(ratios)
        w("| %s | %s | %s | %.2f | %.2f | %.2f | %s | %s | %s | %s |" %
          (label, shape, mode, min(ratios), med, max(ratios),
           "%s %.1f" % (tgt[0].replace("<=", "≤").replace(">=", "≥"),
                        tgt[1]) if tgt else "—",
           mark(tgt, med) or "—", ours_s, peer_s))
    if rss:
        hi, lo = rss[-1], rss[0]
        for op in ("backup", "restore", "extract"):
            slope = ((hi[op] - lo[op]) * 1024 /
                     max(1, hi["inodes_used"] - lo["inodes_used"]))
            at = hi[op]
            n = hi["inodes_used"]
            note = ""
            if n < 1000000:
                at = hi[op] + slope * (1000000 - n) / 1024
                note = " (extrapolated from %d)" % n
            over = (at - hi["bitmaps_kib"]) / 1024
            w("| peak RSS %s at 1M inodes%s | inodes | warm | | | | "
              "≤ bitmaps + %d MiB | %s | %.0f KiB, %.0f B/inode | "
              "bitmaps %.0f KiB |" %
              (op, note, RSS_ALLOWANCE_MIB,
               "pass" if over <= RSS_ALLOWANCE_MIB else "**MISS**",
               at, slope, hi["bitmaps_kib"]))
    w("")
    if rss:
        w("Peak RSS (GNU time's %M of the command, KiB) against the inode count; "
          "bitmaps = blocks/8 + inodes/8 bytes of the image; slope = "
          "(RSS at the largest count - RSS at the smallest) / inodes:")
        w("")
        w("| inodes used | fs blocks | fs inodes | bitmaps KiB | backup | "
          "restore | extract |")
        w("|---:|---:|---:|---:|---:|---:|---:|")
        for p in rss:
            w("| %d | %d | %d | %.0f | %d | %d | %d |" %
              (p["inodes_used"], p["blocks"], p["inodes"], p["bitmaps_kib"],
               p["backup"], p["restore"], p["extract"]))
        w("")
    w("Shapes (kernel-made: a fresh `mke2fs -O encrypt` image, a v2 key "
      "added with FS_IOC_ADD_ENCRYPTION_KEY, a v2 AES-256-XTS policy with "
      "padding 32 on /enc, the tree written through the mount):")
    w("")
    for shape in SHAPES:
        i = images[shape]["info"]
        w("- %s: %d entries, %.1f MiB of file data, %d MiB image "
          "(`mke2fs %s`)" % (shape, i["entries"], i["data_bytes"] / 2**20,
                             i["image_bytes"] // 2**20,
                             " ".join(images[shape]["mkfs"])))
    w("")
    w("Archive size per entry beyond the file data ((archive bytes - "
      "data bytes) / entries), the headers and records of the format:")
    w("")
    for shape in SHAPES:
        i = images[shape]["info"]
        for who in ("e2cryptbak", "vs"):
            n = archive_bytes.get((who, shape))
            if n is not None:
                w("- %s, %s: %d bytes, %.0f B/entry" %
                  (shape, "this build" if who == "e2cryptbak" else
                   "BENCH_VS", n,
                   (n - i["data_bytes"]) / max(1, i["entries"])))
    w("")
    w("Machine and run:")
    w("")
    for k, v in machine() + tool_versions():
        w("- %s: %s" % (k, v))
    w("- date: %s, %.0f min" % (started.strftime("%Y-%m-%d %H:%M UTC"),
                                (time.time() - started.timestamp()) / 60))
    w("- git commit: %s" % git_commit())
    w("- scale: %s; repetitions: %d; cache modes: %s" %
      (SCALE, REPS, ", ".join(MODES)))
    w("- niceness %d; load average %.2f at the start, %.2f at the end: "
      "the machine is shared with other jobs, and ours and the peers "
      "alternate (the first of each repetition changes), so the ratios "
      "stay fair while the absolute times wander." %
      (os.nice(0), load0, os.getloadavg()[0]))
    w("")
    w("Method: before every timed command `sync`; for cold also `echo 3 "
      ">/proc/sys/vm/drop_caches`.  Warm means the image's (and the "
      "archive's) pages are in the page cache; every tar run gets a fresh "
      "read-only mount with the key added (untimed), so the kernel "
      "decrypts again like e2cryptbak does.  Outputs are files on the "
      "same disk as the images, removed untimed after each run; backup "
      "outputs are flushed to disk inside the timed command (ours "
      "fsyncs its archive, the peers get `sync OUT`).  The "
      "restore targets are fresh sparse files of the image's size; ours "
      "is made by `mke2fs` untimed, while `mke2fs -d` is timed whole, "
      "formatting included.  Every run checks correctness: `e2cryptbak "
      "verify` of the archive, the extracted trees (from the image and "
      "the archive) and the restored image (mounted with the key) are "
      "compared with the kernel's manifest of the plaintext "
      "(tests/tools/manifest.py), restored images pass `e2fsck -fn`; a "
      "mismatch aborts the run.")
    w("")
    w("Commands (IMG the image, KEY its raw key file, MNT the image "
      "mounted `-o loop,ro,noload` with the key added, MKFS the image's "
      "mke2fs options above, TARGET a sparse file of the image's size):")
    w("")
    for c in ["e2cryptbak backup -o OUT IMG (fsyncs OUT, renames it "
              "into place)",
              "e2image -ra -a IMG OUT && sync OUT",
              "tar -cf OUT -C MNT . && sync OUT",
              "mke2fs -q -F MKFS TARGET; e2cryptbak restore ARCHIVE TARGET "
              "(only the restore timed)",
              "mke2fs -q -F MKFS -d PLAIN TARGET (PLAIN: `cp -a` of MNT)",
              "e2cryptbak extract -k KEY -C DIR IMG",
              "e2cryptbak extract -k KEY -C DIR ARCHIVE",
              "tar -cf - -C MNT . | tar -xf - -C DIR",
              "tar -xf PLAIN.tar -C DIR (wide only; PLAIN.tar: `tar -cf` "
              "of PLAIN, untimed)",
              "e2cryptbak extract -k KEY -O IMG|ARCHIVE >/dev/null "
              "(large files only)",
              "dd if=/dev/zero of=OUT bs=1M count=DATA_MIB (large files "
              "only: the page cache's write ceiling)",
              "cat IMG >/dev/null (large files only: the disk's read "
              "ceiling, the whole image read, its MB/s counted on the "
              "files' bytes as for the others)",
              "openssl speed -evp aes-256-xts -bytes 4096 -seconds %d "
              "(single core)" % SSL_SECONDS,
              "RSS: the same e2cryptbak backup, restore and extract (from "
              "the image) on the inodes-N images, warm, once each"]:
        w("    " + c)
    if VS:
        w("")
        w("BENCH_VS rows: this build/BENCH_VS wall time, the two run one "
          "after the other in the same repetition (who goes first "
          "alternates), each on its own archive of its own backup, with "
          "the same checks (both verify the old build's archive); also "
          "`e2cryptbak list -k KEY ARCHIVE` (its paths checked against "
          "the kernel's) and `e2cryptbak verify ARCHIVE`.")
    return "\n".join(L) + "\n"


def main():
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = os.getloadavg()[0]
    res = {}
    images = {}
    rss = []
    checked = {}
    try:
        for shape in SHAPES:
            images[shape] = image(shape)
        for shape in SHAPES:
            im = images[shape]
            archive = os.path.join(WORK, "archive-%s.tar" % shape)
            log("%s: backup" % shape)
            for rep in range(REPS):
                for mode in MODES:
                    bench_backup(im, mode, rep, res, archive)
            log("%s: restore" % shape)
            for rep in range(REPS):
                for mode in MODES:
                    bench_restore(im, mode, rep, res, archive, checked)
            log("%s: extract" % shape)
            for rep in range(REPS):
                for mode in MODES:
                    bench_extract(im, mode, rep, res, archive, checked)
            if VS:
                log("%s: list, verify" % shape)
                for rep in range(REPS):
                    for mode in MODES:
                        bench_list(im, mode, rep, res, archive, checked)
                rm(vs_archive(archive))
            rm(archive)
        if RSS_COUNTS:
            bench_rss(rss)
    finally:
        cleanup_mounts()
        for shape in SHAPES:
            rm(os.path.join(WORK, "plain-%s.tar" % shape))
    text = report(res, images, rss, started, load0)
    out = os.environ.get("BENCH_OUT") or os.path.join(
        "bench", "results-%s.md" % started.strftime("%Y%m%d-%H%M"))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    raw = {"%s|%s|%s|%s" % k: [vars(r) for r in v] for k, v in res.items()}
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump({"runs": raw, "rss": rss, "scale": SCALE}, f, indent=1)
    sys.stdout.write("\n" + text)
    log("written to %s" % out)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
