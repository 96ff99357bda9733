#!/usr/bin/env python3
#
# check_archive.py --- compare an e2cryptbak archive with its source image
#
# An independent checker: it reads the archive with Python's tarfile
# module and the filesystem with debugfs (e2fsprogs' own tool) and plain
# reads of the image file, and shares no code with e2cryptbak.  For every
# entry of the archive it checks
#   - the E2CI inode record (layout: misc/archive.c) against
#     `debugfs -R "stat <ino>"`: type, mode, uid, gid, links, i_size,
#     flags, mtime (and rdev), and the tar header against the same;
#   - the 'e5' metadata blob: its crc16, i_size, and the context against
#     `debugfs -R "ea_get -x <ino> c"`;
#   - the 'ef'/'ed' name blob: its crc16, and the raw name against what
#     `debugfs -R "ls -l -r <parent>"` prints for the inode, unescaped;
#   - a regular file's data: the tar sparse map must equal the extents
#     that `debugfs -R "ex -l <ino>"` lists as initialized (holes and
#     Uninit extents must be holes), whole blocks for encrypted inodes and
#     unencrypted ones cut at i_size (doc/archive-format.txt 8.2), and
#     the bytes must equal those blocks read from the image;
#   - symlinks: the target (raw ciphertext in the e2cryptbak.symlink
#     record for encrypted ones, base64url of it as the tar link name)
#     against the bytes of i_block or of the target block;
#   - the other extended attributes against `ea_get -r -x`;
# and that every inode reachable from the backup root appears exactly
# once as a full entry and once more as a hard link per further name.
#
# Usage: check_archive.py [-q] [--debugfs PROG] IMAGE ARCHIVE
# Exit: 0 all equal, 1 a mismatch (reported on stderr), 2 other errors.

import base64
import os
import re
import struct
import subprocess
import sys
import hashlib
import tarfile
import tempfile

PROG = "check_archive"

ENCRYPT_FL = 0x800
EXTENTS_FL = 0x80000
INLINE_DATA_FL = 0x10000000

# e2cb_inode_rec.rflags (misc/archive.h)
IF_METADATA = 0x0001
IF_NAME = 0x0002
IF_XATTRS = 0x0004
IF_SYMLINK = 0x0008
IF_HARDLINK = 0x0010
IF_INLINE = 0x0100

S_IFMT = 0o170000
TYPES = {  # debugfs stat "Type:" -> S_IFMT bits
    "regular": 0o100000, "directory": 0o040000, "symlink": 0o120000,
    "block special": 0o060000, "character special": 0o020000,
    "FIFO": 0o010000, "socket": 0o140000,
}
TAR_TYPES = {  # S_IFMT -> tar typeflag e2cryptbak must use
    0o100000: tarfile.REGTYPE, 0o040000: tarfile.DIRTYPE,
    0o120000: tarfile.SYMTYPE, 0o060000: tarfile.BLKTYPE,
    0o020000: tarfile.CHRTYPE, 0o010000: tarfile.FIFOTYPE,
    0o140000: tarfile.REGTYPE,	# tar has no sockets
}
XATTR_PREFIX = {1: "user.", 2: "system.posix_acl_access",
                3: "system.posix_acl_default", 4: "trusted.",
                6: "security.", 7: "system.", 8: "system.richacl", 9: ""}
REC = "SCHILY.xattr.e2cryptbak."


class Mismatch(Exception):
    pass


class Failure(Exception):
    pass


def mismatch(what, *args):
    raise Mismatch(what % args if args else what)


# --- checksums --------------------------------------------------------------

def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C = _crc32c_table()


def crc32c(data, crc=0xFFFFFFFF):
    """crc32c as ext2fs_crc32c_le(~0, ...) computes it: no final xor."""
    for b in data:
        crc = CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def crc16(data):
    """The kernel's lib/crc16 (CRC-16/MODBUS), init 0xFFFF."""
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


assert crc16(b"123456789") == 0x4B37
assert crc32c(b"123456789") ^ 0xFFFFFFFF == 0xE3069283


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def b64url_decode(s):
    try:
        return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except ValueError:
        return None


# --- records ----------------------------------------------------------------

def sealed(buf, what):
    if len(buf) < 4:
        mismatch("%s record is too short (%d bytes)", what, len(buf))
    want, = struct.unpack_from("<I", buf, len(buf) - 4)
    if crc32c(buf[:-4]) != want:
        mismatch("%s record: bad crc32c", what)


def preamble(buf, magic, size, what):
    if buf[:4] != magic:
        mismatch("%s record: magic %r, not %r", what, buf[:4], magic)
    ver, fixed = struct.unpack_from("<HH", buf, 4)
    if ver not in (1, 2) or fixed != size:
        mismatch("%s record: version %d size %d", what, ver, fixed)
    sealed(buf, what)


def decode_header(buf):
    if len(buf) < 164:
        mismatch("header record: %d bytes", len(buf))
    preamble(buf, b"E2CH", 160, "header")
    h = {}
    h["block_size"], = struct.unpack_from("<I", buf, 8)
    h["uuid"] = buf[12:28]
    h["inode_size"], h["root_ino"] = struct.unpack_from("<II", buf, 80)
    plen, = struct.unpack_from("<H", buf, 128)
    if len(buf) != 164 + plen:
        mismatch("header record: length %d, path length %d", len(buf), plen)
    h["source_path"] = buf[160:160 + plen]
    return h


def decode_inode(buf):
    if len(buf) != 152:
        mismatch("inode record: %d bytes, not 152", len(buf))
    preamble(buf, b"E2CI", 152, "inode")
    r = {}
    (r["seq"], r["ino"], r["mode"], r["uid"], r["gid"], r["links"],
     r["size"], r["iflags"], r["projid"], r["generation"], r["rdev_major"],
     r["rdev_minor"]) = struct.unpack_from("<IIIIIIQIIIII", buf, 8)
    r["mtime"] = struct.unpack_from("<qI", buf, 72)
    r["rflags"], = struct.unpack_from("<I", buf, 108)
    r["path_crc"], = struct.unpack_from("<I", buf, 132)
    return r


def decode_trailer(buf):
    if len(buf) != 76:
        mismatch("trailer record: %d bytes, not 76", len(buf))
    preamble(buf, b"E2CT", 76, "trailer")
    t = {}
    t["seq"], t["tflags"] = struct.unpack_from("<II", buf, 8)
    (t["entries"], t["inodes"], t["encrypted"], t["data_bytes"],
     t["skipped"]) = struct.unpack_from("<QQQQQ", buf, 32)
    return t


def check_blob(buf, kind, what):
    """'e' KIND le16 crc16-with-crc-zeroed ..."""
    if len(buf) < 4 or buf[0:1] != b"e" or buf[1:2] != kind:
        mismatch("%s blob: bad magic %r", what, buf[:2])
    want, = struct.unpack_from("<H", buf, 2)
    if crc16(buf[:2] + b"\0\0" + buf[4:]) != want:
        mismatch("%s blob: bad crc16", what)


def decode_e5(buf):
    check_blob(buf, b"5", "metadata")
    if len(buf) < 12:
        mismatch("metadata blob: %d bytes", len(buf))
    lo, hi = struct.unpack_from("<II", buf, 4)
    return lo | hi << 32, buf[12:]


def decode_name(buf):
    """Returns (is_dir, mode, ctx, raw name)."""
    if buf[1:2] == b"d":
        check_blob(buf, b"d", "dirname")
        mode, clen = struct.unpack_from("<IH", buf, 4)
        ctx = buf[10:10 + clen]
        name = buf[10 + clen:]
        if len(ctx) != clen:
            mismatch("dirname blob: context runs past its end")
        return True, mode, ctx, name
    check_blob(buf, b"f", "filename")
    return False, None, None, buf[4:]


def xattr_entries(buf):
    sealed(buf, "xattrs")
    out, p, end = [], 0, len(buf) - 4
    while p < end:
        if end - p < 6:
            mismatch("xattrs record: truncated entry")
        index, nlen, vlen = struct.unpack_from("<BBI", buf, p)
        if p + 6 + nlen + vlen > end:
            mismatch("xattrs record: entry runs past the end")
        out.append((index, buf[p + 6:p + 6 + nlen],
                    buf[p + 6 + nlen:p + 6 + nlen + vlen]))
        p += 6 + nlen + vlen
    return out


# --- the archive ------------------------------------------------------------

def parse_raw_pax(fileobj, offset):
    """The records of the pax extended header at @offset, as raw bytes."""
    fileobj.seek(offset)
    hdr = fileobj.read(512)
    if len(hdr) != 512 or hdr[156:157] != tarfile.XHDTYPE:
        return None
    size = int(hdr[124:136].rstrip(b"\0 ").decode("ascii") or "0", 8)
    data = fileobj.read(size)
    recs, p = {}, 0
    while p < len(data):
        sp = data.index(b" ", p)
        n = int(data[p:sp])
        rec = data[p:p + n]
        if n <= 0 or len(rec) != n or rec[-1:] != b"\n":
            raise Failure("malformed pax record at offset %d" % (offset + p))
        eq = rec.index(b"=", sp - p)
        recs[rec[sp - p + 1:eq].decode("utf-8", "surrogateescape")] = \
            rec[eq + 1:-1]
        p += n
    return recs


def pax_time(s):
    """(sec, nsec) of a pax time.  libarchive writes tv_sec, '.', tv_nsec
    even when tv_sec is negative (1965-06-07 08:09:10.5 is
    "-144172250.5", where POSIX arithmetic would say -144172249.5), and
    GNU tar 1.34 and libarchive read it back that way: so do we."""
    m = re.match(r"^(-?\d+)(?:\.(\d{1,9}))?$", s)
    if not m:
        raise Mismatch("malformed pax time %r" % s)
    return int(m.group(1)), int((m.group(2) or "").ljust(9, "0"))


class Entry:
    pass


def read_archive(path, stats):
    members = []
    try:
        tf = tarfile.open(path, "r:*", encoding="utf-8",
                          errors="surrogateescape")
        while True:
            m = tf.next()
            if m is None:
                break
            members.append(m)
    except (tarfile.TarError, ValueError, EOFError, OSError) as e:
        where = "after member %d %r" % (len(members), members[-1].name) \
            if members else "at its start"
        raise Mismatch("tarfile cannot read the archive %s: %s: %s" %
                       (where, type(e).__name__, e))
    entries = []
    for m in members:
        e = Entry()
        e.m = m
        e.path = m.name
        raw = parse_raw_pax(tf.fileobj, m.offset)
        e.recs = {}
        for key, val in m.pax_headers.items():
            if not key.startswith(REC):
                continue
            b = val.encode("utf-8", "surrogateescape")
            if raw is not None:
                if raw.get(key) != b:
                    raise Mismatch("%s: pax value of %s differs between "
                                   "tarfile and the raw header" %
                                   (e.path, key))
                stats["pax_values"] += 1
            e.recs[key[len(REC):]] = b
        if raw is not None:
            for key in raw:
                if key.startswith(REC) and key[len(REC):] not in e.recs:
                    raise Mismatch("%s: tarfile lost the pax record %s" %
                                   (e.path, key))
        e.pax_mtime = m.pax_headers.get("mtime")
        entries.append(e)
    return tf, unfold_records(tf, entries, stats)


KINDS = {1: "inode", 2: "metadata", 3: "name", 4: "xattrs", 5: "symlink"}


def records_groups(data, first, count):
    """The groups of a records entry's data (format version 2, 3.6)."""
    groups, p = [], 0
    for i in range(count):
        if len(data) - p < 8:
            raise Mismatch("records entry ends in group %d" % i)
        seq, glen = struct.unpack_from("<II", data, p)
        if seq != first + i or glen > len(data) - p - 8:
            raise Mismatch("records entry: group %d: seq %d len %d" %
                           (i, seq, glen))
        recs, q, last = {}, p + 8, 0
        while q < p + 8 + glen:
            kind, r1, r2, r3, vlen = struct.unpack_from("<BBBBI", data, q)
            if kind not in KINDS or kind <= last or (r1, r2, r3) != (0,) * 3 \
                    or (not last and kind != 1) or q + 8 + vlen > p + 8 + glen:
                raise Mismatch("records entry: group %d: bad item" % i)
            recs[KINDS[kind]] = bytes(data[q + 8:q + 8 + vlen])
            q += 8 + vlen
            last = kind
        if not recs:
            raise Mismatch("records entry: group %d is empty" % i)
        groups.append(recs)
        p += 8 + glen
    if p != len(data):
        raise Mismatch("records entry: %d bytes after its groups" %
                       (len(data) - p))
    return groups


def unfold_records(tf, entries, stats):
    """Each entry with its records, the records entries taken out."""
    out, pending = [], []
    for e in entries:
        if "records" not in e.recs:
            if pending:
                if e.recs:
                    raise Mismatch("%s: records in its pax header and in "
                                   "a records entry" % e.path)
                e.recs = pending.pop(0)
                e.in_block = True
            out.append(e)
            continue
        if pending or len(e.recs) != 1 or e.m.type != tarfile.REGTYPE:
            raise Mismatch("a records entry where it may not be")
        rec = e.recs["records"]
        preamble(rec, b"E2CR", 40, "records")
        first, count, dlen = struct.unpack_from("<III", rec, 8)
        data = tf.extractfile(e.m).read()
        if len(data) != dlen or hashlib.sha256(data).digest()[:16] != \
                rec[20:36]:
            raise Mismatch("records entry: data of %d bytes, not its "
                           "digest" % len(data))
        pending = records_groups(data, first, count)
        stats["records_entries"] = stats.get("records_entries", 0) + 1
    if pending:
        raise Mismatch("records for %d entries that never came" %
                       len(pending))
    return out


# --- debugfs ----------------------------------------------------------------

class Debugfs:
    def __init__(self, prog, image):
        self.prog, self.image = prog, image
        self.calls = 0

    def run(self, cmds):
        """Run @cmds in one debugfs; returns {cmd: output bytes}."""
        out = {}
        if not cmds:
            return out
        cmds = list(dict.fromkeys(cmds))
        with tempfile.NamedTemporaryFile("w", suffix=".cmds") as f:
            f.write("".join(c + "\n" for c in cmds))
            f.flush()
            env = dict(os.environ, DEBUGFS_PAGER="__none__",
                       PAGER="__none__", TZ="UTC", LC_ALL="C")
            p = subprocess.run([self.prog, "-f", f.name, self.image],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
        self.calls += 1
        data = p.stdout
        marks = []
        pos = 0
        for c in cmds:
            tag = b"debugfs: " + c.encode() + b"\n"
            i = data.find(tag, pos)
            if i < 0:
                raise Failure("debugfs output lacks command '%s': %s" %
                              (c, p.stderr.decode(errors="replace")))
            marks.append((c, i, i + len(tag)))
            pos = i + len(tag)
        for k, (c, _, start) in enumerate(marks):
            end = marks[k + 1][1] if k + 1 < len(marks) else len(data)
            out[c] = data[start:end]
        return out


LS_RE = re.compile(rb"^(.)\s*(\d+)(.) +([0-7]+) \((\d+)\) +(-?\d+) +(-?\d+) +"
                   rb"(\d+) (.{17}) (.*)$")


def unescape_ls(s):
    """debugfs ls -r: bytes < 32, >= 127 and '\\' are printed as \\xHH."""
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i:i + 2] == b"\\x" and len(s) >= i + 4:
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif s[i] == 0x5C:
            raise Failure("unexpected backslash in debugfs ls output")
        else:
            out.append(s[i])
            i += 1
    return bytes(out)


def parse_ls(text):
    """[(ino, raw name)] of ls -l -r, without . and .. and empty slots."""
    res = []
    for line in text.split(b"\n"):
        if not line.strip():
            continue
        m = LS_RE.match(line)
        if not m:
            raise Failure("cannot parse debugfs ls line %r" % line)
        ino = int(m.group(2))
        name = unescape_ls(m.group(10))
        if ino == 0 or name in (b".", b".."):
            continue
        res.append((ino, name))
    return res


def parse_stat(text, ino):
    t = text.decode("utf-8", "surrogateescape")
    st = {}
    m = re.search(r"^Inode: (\d+)\s+Type: (.+?)\s+Mode:\s+(0[0-7]+)\s+"
                  r"Flags: (0x[0-9a-f]+)$", t, re.M)
    if not m or int(m.group(1)) != ino:
        raise Failure("cannot parse debugfs stat of inode %d: %r" %
                      (ino, t[:200]))
    if m.group(2) not in TYPES:
        raise Failure("inode %d: unknown type %s" % (ino, m.group(2)))
    st["mode"] = TYPES[m.group(2)] | int(m.group(3), 8)
    st["flags"] = int(m.group(4), 16)
    m = re.search(r"^User:\s+(-?\d+)\s+Group:\s+(-?\d+).*Size: (\d+)$",
                  t, re.M)
    st["uid"] = int(m.group(1)) & 0xFFFFFFFF
    st["gid"] = int(m.group(2)) & 0xFFFFFFFF
    st["size"] = int(m.group(3))
    st["links"] = int(re.search(r"^Links: (\d+)", t, re.M).group(1))
    m = re.search(r"^ mtime: 0x([0-9a-f]{8}):([0-9a-f]{8}) --", t, re.M)
    if m:
        lo, extra = int(m.group(1), 16), int(m.group(2), 16)
        st["mtime"] = (struct.unpack("<i", struct.pack("<I", lo))[0] +
                       ((extra & 3) << 32), extra >> 2)
    else:
        m = re.search(r"^mtime: 0x([0-9a-f]{8}) --", t, re.M)
        lo = int(m.group(1), 16)
        st["mtime"] = (struct.unpack("<i", struct.pack("<I", lo))[0], 0)
    m = re.search(r"Device major/minor number: (\d+):(\d+)", t)
    st["rdev"] = (int(m.group(1)), int(m.group(2))) if m else None
    m = re.search(r"^Size of inline data: (\d+)", t, re.M)
    st["inline_size"] = int(m.group(1)) if m else None
    # old-style block map, as "stat" prints it: (0-11):100-111, (IND):..
    m = re.search(r"^BLOCKS:\n(.*)$", t, re.M)
    st["blocks"] = []
    if m:
        for g in re.finditer(r"\((\d+)(?:-(\d+))?\):(\d+)(?:-(\d+))?",
                             m.group(1)):
            a = int(g.group(1))
            b = int(g.group(2)) if g.group(2) else a
            st["blocks"].append((a, b - a + 1, int(g.group(3)), False))
    return st


EX_RE = re.compile(r"^\s*\d+/\s*\d+\s+\d+/\s*\d+\s+(\d+) -\s+(\d+)\s+"
                   r"(\d+) -\s+(\d+)\s+(\d+) ?(Uninit)?\s*$")


def parse_extents(text):
    """Leaf extents of "ex -l": [(lblk, len, pblk, uninit)]."""
    res = []
    for line in text.decode().split("\n")[1:]:
        if not line.strip():
            continue
        m = EX_RE.match(line)
        if not m:
            raise Failure("cannot parse debugfs extent line %r" % line)
        lblk, pblk, n = int(m.group(1)), int(m.group(3)), int(m.group(5))
        if int(m.group(2)) - lblk + 1 != n:
            raise Failure("inconsistent extent line %r" % line)
        res.append((lblk, n, pblk, m.group(6) is not None))
    return res


def parse_ea_hex(text):
    """ea_get -x: "NAME (LEN) = hh hh .. " or "NAME (0)"."""
    t = text.decode("utf-8", "surrogateescape").strip("\n")
    m = re.match(r"^(.*) \((\d+)\)(?: = ([0-9a-f ]*))?$", t, re.S)
    if not m:
        return None
    val = bytes.fromhex(m.group(3) or "")
    if len(val) != int(m.group(2)):
        raise Failure("ea_get length mismatch in %r" % t)
    return val


def parse_ea_list(text):
    """Names of "ea_list": lines "  NAME (LEN)[ = ...]"."""
    names = []
    for line in text.decode("utf-8", "surrogateescape").split("\n"):
        m = re.match(r"^  (.*?) \((\d+)\)(?: = .*)?$", line)
        if m:
            names.append(m.group(1))
    return names


# --- the comparison ---------------------------------------------------------

class Checker:
    def __init__(self, image, archive, debugfs, quiet):
        self.image, self.archive = image, archive
        self.dbg = Debugfs(debugfs, image)
        self.quiet = quiet
        self.stats = dict(entries=0, full=0, hardlinks=0, encrypted=0,
                          contexts=0, names=0, files=0, blocks=0,
                          bytes=0, symlinks=0, xattrs=0, pax_values=0,
                          dirents=0)
        self.img = open(image, "rb")

    def read_blocks(self, pblk, count):
        self.img.seek(pblk * self.bs)
        data = self.img.read(count * self.bs)
        if len(data) != count * self.bs:
            raise Failure("image too short for block %d" % pblk)
        return data

    def fs_info(self):
        out = self.dbg.run(["stats -h"])["stats -h"].decode()
        self.bs = int(re.search(r"^Block size:\s+(\d+)", out, re.M).group(1))
        self.isize = int(re.search(r"^Inode size:\s+(\d+)", out,
                                   re.M).group(1))
        self.uuid = re.search(r"^Filesystem UUID:\s+(\S+)", out,
                              re.M).group(1)

    def resolve(self, path):
        """Inode of the archive's source path, looked up independently,
        with the directory and raw name of its last component (None,
        None for "/" and "<N>")."""
        ino, parent, raw = 2, None, None
        # "<N>": from inode N, as debugfs has it (paths too long to record)
        m = re.match(rb"<([0-9]+)>", path)
        if m:
            ino = int(m.group(1))
            path = path[m.end():]
        for comp in [c for c in path.split(b"/") if c]:
            cmd = "stat <%d>" % ino
            o = self.dbg.run([cmd, "ls -l -r <%d>" % ino])
            st = parse_stat(o[cmd], ino)
            if st["mode"] & S_IFMT != 0o040000:
                mismatch("source path %r: not a directory at inode %d",
                         path, ino)
            raw = comp
            if st["flags"] & ENCRYPT_FL:
                raw = b64url_decode(comp.decode("ascii", "replace"))
            hits = [i for i, n in parse_ls(o["ls -l -r <%d>" % ino])
                    if n == raw]
            if len(hits) != 1:
                mismatch("source path %r: component %r not found", path,
                         comp)
            ino, parent = hits[0], ino
        return ino, parent, raw

    def walk(self, root, only=None):
        """Every (parent, raw name, ino) reachable from @root, and the
        stat of every inode; of the root's names only @only's, if given:
        (ino, raw name or None for any)."""
        self.stat = {}
        self.dirents = []
        todo = [root]
        seen = set()
        while todo:
            cmds = []
            for ino in todo:
                cmds += ["stat <%d>" % ino, "ls -l -r <%d>" % ino]
            out = self.dbg.run(cmds)
            nxt = []
            for ino in todo:
                self.stat[ino] = parse_stat(out["stat <%d>" % ino], ino)
                for child, name in parse_ls(out["ls -l -r <%d>" % ino]):
                    if ino == root and only and (child != only[0] or
                                                 only[1] not in (None,
                                                                 name)):
                        continue
                    self.dirents.append((ino, name, child))
                    if child not in seen:
                        seen.add(child)
                        nxt.append(child)
            # stat the children; descend into directories
            cmds = ["stat <%d>" % c for c in nxt if c not in self.stat]
            out = self.dbg.run(cmds)
            todo = []
            for c in nxt:
                if c not in self.stat:
                    self.stat[c] = parse_stat(out["stat <%d>" % c], c)
                if self.stat[c]["mode"] & S_IFMT == 0o040000 and \
                   c != root:
                    todo.append(c)
        self.stats["dirents"] = len(self.dirents)

    def details(self, inos):
        """Contexts, extents, xattr lists and inode locations."""
        cmds = []
        for ino in inos:
            st = self.stat[ino]
            cmds.append("ea_list <%d>" % ino)
            if st["flags"] & ENCRYPT_FL:
                cmds.append("ea_get -x <%d> c" % ino)
            if st["flags"] & EXTENTS_FL:
                cmds.append("ex -l <%d>" % ino)
            if st["mode"] & S_IFMT == 0o120000:
                cmds.append("imap <%d>" % ino)
        return self.dbg.run(cmds)

    def i_block(self, ino):
        o = self.det["imap <%d>" % ino].decode()
        m = re.search(r"located at block (\d+), offset 0x([0-9a-f]+)", o)
        self.img.seek(int(m.group(1)) * self.bs + int(m.group(2), 16))
        raw = self.img.read(self.isize)
        return raw[40:100]

    def extents(self, ino):
        st = self.stat[ino]
        if st["flags"] & EXTENTS_FL:
            return parse_extents(self.det["ex -l <%d>" % ino])
        return st["blocks"]

    def expected_regions(self, ino):
        """Stored byte ranges [(off, len, pblk)] per the extent list."""
        st = self.stat[ino]
        enc = st["flags"] & ENCRYPT_FL
        size = st["size"]
        regs = []
        for lblk, n, pblk, uninit in self.extents(ino):
            if uninit:
                continue
            for k in range(n):
                off = (lblk + k) * self.bs
                ln = self.bs
                # doc/archive-format.txt 8.2: an encrypted file's blocks
                # are all kept whole; an unencrypted file's data ends at
                # i_size: the block straddling it is cut there, blocks
                # wholly past it (fs-verity) are not carried
                if not enc:
                    if off >= size:
                        continue
                    if off + ln > size:
                        ln = size - off
                regs.append((off, ln, pblk + k))
        regs.sort()
        return regs

    def check_data(self, e, tf):
        ino = e.rec["ino"]
        st = self.stat[ino]
        m = e.m
        if st["flags"] & INLINE_DATA_FL:
            if not e.rec["rflags"] & IF_INLINE:
                mismatch("inline data inode without the inline flag")
            o = self.dbg.run(["cat <%d>" % ino])["cat <%d>" % ino]
            want = o[:st["size"]]
            got = tf.extractfile(m).read()
            if got != want or m.sparse:
                mismatch("inline data differs from debugfs cat")
            self.stats["bytes"] += len(got)
            return len(got)
        regs = self.expected_regions(ino)
        want = []  # merged logical ranges
        for off, ln, _ in regs:
            if want and want[-1][0] + want[-1][1] == off:
                want[-1][1] += ln
            else:
                want.append([off, ln])
        if m.sparse is not None:
            got = []
            for off, ln in m.sparse:
                if ln == 0:
                    continue
                if got and got[-1][0] + got[-1][1] == off:
                    got[-1][1] += ln
                else:
                    got.append([off, ln])
        else:
            got = [[0, m.size]] if m.size else []
        if got != want:
            mismatch("tar sparse map %s, but the initialized extents are "
                     "%s (i_size %d)", [tuple(x) for x in got],
                     [tuple(x) for x in want], st["size"])
        end = want[-1][0] + want[-1][1] if want else 0
        if m.size != max(st["size"], end):
            mismatch("tar size %d, want max(i_size %d, end of data %d)",
                     m.size, st["size"], end)
        f = tf.extractfile(m)
        for off, ln, pblk in regs:
            f.seek(off)
            got = f.read(ln)
            img = self.read_blocks(pblk, 1)[:ln]
            if got != img:
                mismatch("data at offset %d (block %d) differs from the "
                         "image", off, pblk)
            self.stats["blocks"] += 1
            self.stats["bytes"] += ln
        return sum(ln for _, ln, _ in regs)

    def check_symlink(self, e):
        ino = e.rec["ino"]
        st = self.stat[ino]
        size = st["size"]
        if st["flags"] & INLINE_DATA_FL:
            raise Failure("inode %d: inline symlinks are not supported" %
                          ino)
        if st["flags"] & EXTENTS_FL:
            ext = [x for x in self.extents(ino) if x[0] == 0]
            if not ext:
                mismatch("slow symlink without block 0")
            target = self.read_blocks(ext[0][2], 1)[:size]
        elif size < 60:
            target = self.i_block(ino)[:size]
        else:
            blk, = struct.unpack_from("<I", self.i_block(ino), 0)
            target = self.read_blocks(blk, 1)[:size]
        link = e.m.linkname.encode("utf-8", "surrogateescape")
        if st["flags"] & ENCRYPT_FL:
            rec = e.recs.get("symlink")
            if rec is None:
                mismatch("encrypted symlink without a symlink record")
            sealed(rec, "symlink")
            if rec[:-4] != target:
                mismatch("symlink record %s, on disk %s", rec[:-4].hex(),
                         target.hex())
            if link != b64url(target).encode():
                mismatch("tar link name %r is not the base64url of the "
                         "target", link)
        else:
            if "symlink" in e.recs:
                mismatch("unencrypted symlink with a symlink record")
            if link != target:
                mismatch("tar link name %r, on disk %r", link, target)
        self.stats["symlinks"] += 1

    def check_xattrs(self, e):
        ino = e.rec["ino"]
        names = [n for n in parse_ea_list(self.det["ea_list <%d>" % ino])
                 if n not in ("c", "system.data")]
        rec = e.recs.get("xattrs")
        have = xattr_entries(rec) if rec is not None else []
        full = []
        for index, name, value in have:
            if index not in XATTR_PREFIX or index == 9:
                mismatch("xattr with index %d", index)
            full.append((XATTR_PREFIX[index] +
                         name.decode("utf-8", "surrogateescape"), value))
        if sorted(n for n, _ in full) != sorted(names):
            mismatch("xattrs %s in the archive, %s on disk",
                     sorted(n for n, _ in full), sorted(names))
        cmds = ["ea_get -r -x <%d> %s" % (ino, n) for n, _ in full]
        out = self.dbg.run(cmds)
        for (n, v), c in zip(full, cmds):
            if parse_ea_hex(out[c]) != v:
                mismatch("xattr %s differs from debugfs ea_get", n)
            self.stats["xattrs"] += 1

    def check_entry(self, e, parent, tf):
        r = e.rec
        ino = r["ino"]
        if ino not in self.stat:
            mismatch("inode %d is not reachable from the backup root", ino)
        st = self.stat[ino]
        m = e.m
        for k in ("mode", "uid", "gid", "links", "size"):
            if r[k] != st[k]:
                mismatch("record %s %o, debugfs stat says %o" if k == "mode"
                         else "record %s %d, debugfs stat says %d",
                         k, r[k], st[k])
        if r["iflags"] != st["flags"]:
            mismatch("record flags 0x%x, debugfs stat says 0x%x",
                     r["iflags"], st["flags"])
        if tuple(r["mtime"]) != st["mtime"]:
            mismatch("record mtime %s, debugfs stat says %s",
                     r["mtime"], st["mtime"])
        if st["rdev"] and (r["rdev_major"], r["rdev_minor"]) != st["rdev"]:
            mismatch("record rdev %d:%d, debugfs says %d:%d",
                     r["rdev_major"], r["rdev_minor"], *st["rdev"])
        # the tar header must tell ordinary tools the same
        if m.mode != st["mode"] & 0o7777 or m.uid != st["uid"] or \
           m.gid != st["gid"]:
            mismatch("tar header mode %o uid %d gid %d, debugfs says %o "
                     "%d %d", m.mode, m.uid, m.gid, st["mode"] & 0o7777,
                     st["uid"], st["gid"])
        have = pax_time(e.pax_mtime) if e.pax_mtime else (int(m.mtime), 0)
        # version 2: whole seconds in tar, the inode record has the rest
        if getattr(e, "in_block", False):
            have = (have[0], st["mtime"][1])
        if have != st["mtime"]:
            mismatch("tar mtime %s, debugfs says %s", have, st["mtime"])
        hard = bool(r["rflags"] & IF_HARDLINK)
        if hard != (m.type == tarfile.LNKTYPE):
            mismatch("hard link flag and tar type %r disagree", m.type)
        if not hard and m.type != TAR_TYPES[st["mode"] & S_IFMT]:
            mismatch("tar type %r for a %o inode", m.type,
                     st["mode"] & S_IFMT)
        if st["rdev"] and not hard and \
           (m.devmajor, m.devminor) != st["rdev"]:
            mismatch("tar device %d:%d, debugfs says %d:%d", m.devmajor,
                     m.devminor, *st["rdev"])
        # 'e5': present exactly for encrypted inodes
        enc = bool(st["flags"] & ENCRYPT_FL)
        if ("metadata" in e.recs) != enc or \
           bool(r["rflags"] & IF_METADATA) != enc:
            mismatch("metadata record present: %s; inode encrypted: %s",
                     "metadata" in e.recs, enc)
        ctx = None
        if enc:
            ctx = parse_ea_hex(self.det["ea_get -x <%d> c" % ino])
            if ctx is None:
                mismatch("debugfs shows no context for an encrypted inode")
            isz, bctx = decode_e5(e.recs["metadata"])
            if isz != st["size"]:
                mismatch("'e5' i_size %d, debugfs stat says %d", isz,
                         st["size"])
            if bctx != ctx:
                mismatch("'e5' context %s, debugfs ea_get says %s",
                         bctx.hex(), ctx.hex())
            self.stats["contexts"] += 1
        # the name
        if parent is not None:
            pst = self.stat[parent]
            comp = e.path.rsplit("/", 1)[-1].encode("utf-8",
                                                    "surrogateescape")
            penc = bool(pst["flags"] & ENCRYPT_FL)
            if ("name" in e.recs) != penc or \
               bool(r["rflags"] & IF_NAME) != penc:
                mismatch("name record present: %s; parent encrypted: %s",
                         "name" in e.recs, penc)
            if penc:
                is_dir, mode, dctx, raw = decode_name(e.recs["name"])
                if is_dir != (st["mode"] & S_IFMT == 0o040000):
                    mismatch("'e%s' blob for a %o inode",
                             "d" if is_dir else "f", st["mode"])
                if is_dir and (mode != st["mode"] or dctx != ctx):
                    mismatch("'ed' blob mode %o context %s, debugfs says "
                             "%o %s", mode, dctx.hex(), st["mode"],
                             ctx.hex() if ctx else None)
                if comp != b64url(raw).encode():
                    mismatch("path component is not the base64url of the "
                             "raw name %s", raw.hex())
                self.stats["names"] += 1
            else:
                raw = comp
            key = (parent, raw)
            if key not in self.names:
                mismatch("name %r is not in directory inode %d on disk "
                         "(debugfs ls -l -r)", raw, parent)
            if self.names[key] != ino:
                mismatch("name %r in directory %d is inode %d on disk, "
                         "%d in the archive", raw, parent, self.names[key],
                         ino)
            if key in self.used:
                mismatch("name %r in directory %d appears twice", raw,
                         parent)
            self.used.add(key)
        if hard:
            first = self.by_path.get(m.linkname)
            if first is None or first.rec["ino"] != ino:
                mismatch("hard link to %r, which is not inode %d",
                         m.linkname, ino)
            return 0
        # a full entry
        if ino in self.full:
            mismatch("inode %d has a second full entry (first: %s)", ino,
                     self.full[ino])
        self.full[ino] = e.path
        self.stats["full"] += 1
        if enc:
            self.stats["encrypted"] += 1
        self.check_xattrs(e)
        t = st["mode"] & S_IFMT
        if t == 0o120000:
            self.check_symlink(e)
        elif "symlink" in e.recs:
            mismatch("symlink record on a non-symlink")
        if t == 0o100000:
            self.stats["files"] += 1
            return self.check_data(e, tf)
        if m.size != 0:
            mismatch("tar size %d for a non-regular inode", m.size)
        return 0

    def run(self):
        self.fs_info()
        tf, entries = read_archive(self.archive, self.stats)
        if len(entries) < 3:
            mismatch("the archive has %d entries", len(entries))
        head, body, tail = entries[0], entries[1:-1], entries[-1]
        if head.path != "e2cryptbak.header" or "header" not in head.recs:
            mismatch("the first entry is %r, not the header", head.path)
        if tail.path != "e2cryptbak.trailer" or "trailer" not in tail.recs:
            mismatch("the last entry is %r, not the trailer", tail.path)
        h = decode_header(head.recs["header"])
        t = decode_trailer(tail.recs["trailer"])
        if h["block_size"] != self.bs or h["inode_size"] != self.isize:
            mismatch("header block/inode size %d/%d, fs %d/%d",
                     h["block_size"], h["inode_size"], self.bs, self.isize)
        uuid = h["uuid"].hex()
        uuid = "-".join((uuid[:8], uuid[8:12], uuid[12:16], uuid[16:20],
                         uuid[20:]))
        if uuid != self.uuid:
            mismatch("header UUID %s, filesystem %s", uuid, self.uuid)
        for e in body:
            where = "entry %r" % e.path
            try:
                if "inode" not in e.recs:
                    mismatch("no inode record")
                e.rec = decode_inode(e.recs["inode"])
            except Mismatch as x:
                raise Mismatch("%s: %s" % (where, x))
        if body[0].path != ".":
            mismatch("the first entry is %r, not '.'", body[0].path)
        root, parent, raw = self.resolve(h["source_path"])
        only = None
        cmd = "stat <%d>" % root
        if parse_stat(self.dbg.run([cmd])[cmd], root)["mode"] & S_IFMT != \
           0o040000:
            # a non-directory: its directory is '.', with that one name
            # (3.2); "<N>" alone: the directory the header names
            only = (root, raw)
            root = parent if parent is not None else h["root_ino"]
        if h["root_ino"] not in (0, root):
            mismatch("header root_ino %d; the source path %r is inode %d",
                     h["root_ino"], h["source_path"], root)
        if body[0].rec["ino"] != root:
            mismatch("'.' is inode %d; the source path %r is inode %d",
                     body[0].rec["ino"], h["source_path"], root)
        self.walk(root, only)
        if only and not any(p == root for p, _, _ in self.dirents):
            mismatch("directory inode %d holds no name of inode %d", root,
                     only[0])
        self.names = {(p, n): c for p, n, c in self.dirents}
        self.used = set()
        self.full = {}
        self.by_path = {}
        self.det = self.details(sorted({e.rec["ino"] for e in body
                                        if e.rec["ino"] in self.stat}))
        data_bytes = 0
        for seq, e in enumerate(body, 1):
            try:
                if e.rec["seq"] != seq:
                    mismatch("sequence number %d, want %d", e.rec["seq"],
                             seq)
                if e.rec["path_crc"] != crc32c(e.path.encode(
                        "utf-8", "surrogateescape")):
                    mismatch("path crc32c differs")
                parent = None
                if e.path != ".":
                    d = e.path.rsplit("/", 1)[0] if "/" in e.path else "."
                    pe = self.by_path.get(d)
                    if pe is None:
                        mismatch("its directory %r comes later or never",
                                 d)
                    parent = pe.rec["ino"]
                data_bytes += self.check_entry(e, parent, tf)
                self.by_path[e.path] = e
                self.stats["entries"] += 1
                if e.rec["rflags"] & IF_HARDLINK:
                    self.stats["hardlinks"] += 1
            except Mismatch as x:
                raise Mismatch("entry %d %r (inode %d): %s" %
                               (seq, e.path, e.rec["ino"], x))
        missing = [(p, n, c) for p, n, c in self.dirents
                   if (p, n) not in self.used]
        if only:
            # "<N>": any one of the names of N in its directory
            if sum(1 for p, _ in self.used if p == root) != 1:
                mismatch("the archive of a non-directory holds %d names",
                         sum(1 for p, _ in self.used if p == root))
            missing = [m for m in missing if m[0] != root]
        if missing:
            p, n, c = missing[0]
            mismatch("%d names on disk are missing from the archive, e.g. "
                     "%r in directory %d (inode %d)", len(missing), n, p, c)
        if root not in self.full:
            mismatch("the root has no full entry")
        if t["seq"] != len(body) + 1 or t["entries"] != len(body) or \
           t["inodes"] != self.stats["full"] or \
           t["encrypted"] != self.stats["encrypted"] or \
           t["data_bytes"] != data_bytes or t["skipped"] or t["tflags"]:
            mismatch("trailer %s; counted %d entries, %d inodes, %d "
                     "encrypted, %d data bytes", t, len(body),
                     self.stats["full"], self.stats["encrypted"],
                     data_bytes)
        s = self.stats
        if not self.quiet:
            print("%s: %s: OK: %d entries (%d inodes, %d hard links, %d "
                  "encrypted), %d contexts, %d names, %d dirents, %d files "
                  "with %d data blocks (%d bytes) compared, %d symlinks, "
                  "%d xattrs, %d pax values cross-checked, %d debugfs runs"
                  % (PROG, os.path.basename(self.archive), s["entries"],
                     s["full"], s["hardlinks"], s["encrypted"],
                     s["contexts"], s["names"], s["dirents"], s["files"],
                     s["blocks"], s["bytes"], s["symlinks"], s["xattrs"],
                     s["pax_values"], self.dbg.calls))


def main(argv):
    args = argv[1:]
    quiet = False
    debugfs = os.environ.get("DEBUGFS", "debugfs")
    while args and args[0].startswith("-"):
        if args[0] == "-q":
            quiet = True
            args = args[1:]
        elif args[0] == "--debugfs" and len(args) > 1:
            debugfs = args[1]
            args = args[2:]
        else:
            break
    if len(args) != 2:
        sys.stderr.write("Usage: %s [-q] [--debugfs PROG] IMAGE ARCHIVE\n"
                         % PROG)
        return 2
    try:
        Checker(args[0], args[1], debugfs, quiet).run()
    except Mismatch as x:
        sys.stderr.write("%s: MISMATCH: %s\n" % (PROG, x))
        return 1
    except (Failure, OSError) as x:
        sys.stderr.write("%s: error: %s\n" % (PROG, x))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
