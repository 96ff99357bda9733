#!/usr/bin/env python3
#
# mutate.py ARCHIVE OUTDIR --- write systematically damaged copies of an
# uncompressed e2cryptbak archive: truncations, bit flips in tar headers,
# pax records, e2cryptbak records and data, reordered, duplicated and
# removed entries, and absurd sizes and lengths.  Every offset is derived
# from the archive's own layout, so each run makes the same mutants.
# Prints one line per mutant: "FILE CLASS SEQ PATH WHAT", SEQ being the
# 1-based index of the inode entry damaged (0: the header, the trailer
# or the tar end), PATH its tar path with backslash escapes (or "-").
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import os
import sys
import tarfile

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
ms = tarfile.open(src, encoding="utf-8",
                  errors="surrogateescape").getmembers()
TRAILER = len(ms) - 1
count = 0


def end_of(i):
    return ms[i + 1].offset if i + 1 < len(ms) else ms[i].offset_data


def where(i):
    if 0 < i < TRAILER:
        return i, ms[i].name.encode("utf-8", "surrogateescape") \
            .decode("latin-1").encode("unicode_escape").decode()
    return 0, "-"


def emit(cls, i, what, buf):
    global count
    count += 1
    name = "m%03d.tar" % count
    with open(os.path.join(out, name), "wb") as f:
        f.write(buf)
    seq, path = where(i)
    print("%s %s %d %s %s" % (name, cls, seq, path, what))


def flipped(off, bit=0x01):
    b = bytearray(data)
    b[off] ^= bit
    return bytes(b)


def replaced(off, new):
    b = bytearray(data)
    b[off:off + len(new)] = new
    return bytes(b)


def pax_records(m):
    """(key, offset of the record, offset of its value, value length)"""
    start = m.offset + 512
    hdr = data[start:m.offset_data - 512]
    recs, p = [], 0
    while p < len(hdr) and hdr[p:p + 1] != b"\0":
        sp = hdr.index(b" ", p)
        n = int(hdr[p:sp])
        eq = hdr.index(b"=", sp)
        recs.append((hdr[sp + 1:eq].decode(), start + p, start + eq + 1,
                     p + n - 1 - (eq + 1)))
        p += n
    return recs


def spread(lo, hi, n):
    """n indices spread over [lo, hi)"""
    if hi <= lo:
        return []
    return sorted({lo + (hi - lo) * k // n for k in range(n)})


entries = spread(1, TRAILER, 8)
files = [i for i in range(1, TRAILER) if ms[i].size > 0]
files = [files[k] for k in spread(0, len(files), 4)]

# 1. Truncation inside each part of a few entries, at an entry boundary,
#    inside the trailer and in the end-of-archive blocks (whose loss is
#    harmless only if the reader needs none of it).
for i in [0] + entries + files + [TRAILER]:
    m = ms[i]
    cuts = [("pax-ustar", m.offset + 100), ("pax-records", m.offset + 530),
            ("ustar", m.offset_data - 300)]
    if m.size:
        cuts.append(("data", m.offset_data + m.size // 2))
    if i:
        cuts.append(("boundary", m.offset))
    for part, off in cuts:
        emit("truncate", i, "cut at %d in the %s" % (off, part), data[:off])
tar_end = end_of(TRAILER) + ((ms[TRAILER].size + 511) & ~511)
emit("truncate", 0, "cut at %d just after the trailer" % tar_end,
     data[:tar_end])
emit("truncate", 0, "cut at %d in the end blocks" % (tar_end + 512),
     data[:tar_end + 512])
emit("truncate", 0, "cut at %d before the blocking pad" % (tar_end + 1024),
     data[:tar_end + 1024])
emit("truncate", 0, "empty file", b"")

# 2. Bit flips in the pax records: length, keyword, value of every record
#    of a few entries (mtime's value included).
for i in [0] + entries[:5] + [TRAILER]:
    for key, roff, voff, vlen in pax_records(ms[i]):
        emit("pax", i, "bit in the length of %s" % key, flipped(roff, 0x02))
        emit("pax", i, "bit in the keyword %s" % key,
             flipped(roff + (voff - roff) - 3, 0x20))
        if not key.startswith("SCHILY.xattr.e2cryptbak."):
            emit("pax", i, "bit in the value of %s" % key,
                 flipped(voff + vlen // 2))

# 3. Bit flips in our records: magic, version, length, first, middle and
#    last byte of each kind of record.
seen = {}
for i in range(TRAILER + 1):
    for key, roff, voff, vlen in pax_records(ms[i]):
        if not key.startswith("SCHILY.xattr.e2cryptbak."):
            continue
        kind = key.rsplit(".", 1)[1]
        if seen.get(kind, 0) >= 2:
            continue
        seen[kind] = seen.get(kind, 0) + 1
        for what, off in (("start", 0), ("byte 4", 4), ("byte 6", 6),
                          ("middle", vlen // 2), ("end", vlen - 1)):
            if off < vlen:
                emit("record", i, "bit in the %s of the %s record" %
                     (what, kind), flipped(voff + off, 0x04))

# 4. Bit flips in the ustar headers and in the data, and in the padding
#    after data (harmless unless something reads it).
for i in [0] + entries[:4] + [TRAILER]:
    h = ms[i].offset_data - 512
    for what, off in (("name", 0), ("mode", 103), ("size", 130),
                      ("mtime", 140), ("checksum", 150), ("typeflag", 156),
                      ("magic", 257), ("unused tail", 505)):
        emit("ustar", i, "bit in the ustar %s" % what, flipped(h + off))
for i in files:
    m = ms[i]
    for off in (0, m.size // 2, m.size - 1):
        emit("data", i, "bit in data byte %d" % off,
             flipped(m.offset_data + off, 0x80))
    if m.size % 512:
        emit("data", i, "bit in the tar padding after the data",
             flipped(m.offset_data + m.size + 3))

# 5. Entries swapped, removed, duplicated, moved.
def entry(i):
    return data[ms[i].offset:end_of(i)]


def without(i):
    return data[:ms[i].offset] + data[end_of(i):]


for i in entries[:6]:
    if i + 1 < TRAILER:
        emit("order", i, "swapped with the next entry",
             data[:ms[i].offset] + entry(i + 1) + entry(i) +
             data[end_of(i + 1):])
    emit("order", i, "removed", without(i))
    emit("order", i, "duplicated", data[:end_of(i)] + entry(i) +
         data[end_of(i):])
    emit("order", i, "moved before the trailer",
         without(i)[:ms[TRAILER].offset - len(entry(i))] + entry(i) +
         data[ms[TRAILER].offset:])
emit("order", 0, "header duplicated", entry(0) + data)
emit("order", 0, "header removed", without(0))
emit("order", 0, "trailer duplicated",
     data[:end_of(TRAILER)] + entry(TRAILER) + data[end_of(TRAILER):])
emit("order", 0, "trailer removed", without(TRAILER))
emit("order", 0, "archive appended to itself", data[:tar_end] + data)

# 6. Absurd sizes: ustar size fields, pax size and length fields, and the
#    length fields of our records.
def ustar_size(i, field):
    b = bytearray(data)
    h = ms[i].offset_data - 512
    b[h + 124:h + 136] = field
    s = sum(b[h:h + 148]) + 8 * 32 + sum(b[h + 156:h + 512])
    b[h + 148:h + 156] = b"%06o\0 " % s
    return bytes(b)


for i in [0] + files[:2] + [TRAILER]:
    emit("size", i, "ustar size 077777777777",
         ustar_size(i, b"77777777777\0"))
    emit("size", i, "ustar size base-256 2^63-1",
         ustar_size(i, b"\x80\0\0\0\x7f" + b"\xff" * 7))
    emit("size", i, "ustar size off by 512",
         ustar_size(i, b"%011o\0" % (ms[i].size + 512)))
for i in [0] + entries[:3]:
    key, roff, voff, vlen = pax_records(ms[i])[0]
    emit("size", i, "pax record length 99999999",
         replaced(roff, b"9" * (voff - roff - len(key) - 2)))
    emit("size", i, "pax record length 0",
         replaced(roff, b"0" * (voff - roff - len(key) - 2)))
    # the pax header's own ustar size field
    b = bytearray(data)
    h = ms[i].offset
    b[h + 124:h + 136] = b"77777777777\0"
    s = sum(b[h:h + 148]) + 8 * 32 + sum(b[h + 156:h + 512])
    b[h + 148:h + 156] = b"%06o\0 " % s
    emit("size", i, "pax header size 077777777777", bytes(b))
done = set()
for i in range(TRAILER + 1):
    for key, roff, voff, vlen in pax_records(ms[i]):
        if not key.startswith("SCHILY.xattr.e2cryptbak."):
            continue
        kind = key.rsplit(".", 1)[1]
        if kind in done or data[voff + 4:voff + 5] != b"\x01":
            continue
        done.add(kind)
        for v in (b"\xff\xff", b"\0\0", b"\x08\0"):
            emit("size", i, "%s record length field %s" % (kind, v.hex()),
                 replaced(voff + 6, v))
print("%d mutants" % count, file=sys.stderr)
