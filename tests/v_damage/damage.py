#!/usr/bin/env python3
#
# damage.py ARCHIVE OUTDIR --- write damaged copies of an uncompressed
# e2cryptbak archive, one per kind of damage, at offsets derived only
# from the archive's own layout (so every run damages the same bytes).
# Prints one line per copy: "FILE ENTRY-INDEX PATH-OR-- WHAT", where
# ENTRY-INDEX is the 1-based index of the damaged inode entry (the seq
# e2cryptbak reports), or 0 when the damage is not in one entry.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import os
import sys
import tarfile

src, out = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
tf = tarfile.open(src, encoding="utf-8", errors="surrogateescape")
ms = tf.getmembers()
# members[0] is the header entry, members[-1] the trailer: member i is
# inode entry i (seq i)
trailer = ms[-1]


def end_of(i):
    """Offset just past member i (its pax header, header and data)."""
    return ms[i + 1].offset if i + 1 < len(ms) else None


def write(name, buf, idx, what):
    with open(os.path.join(out, name), "wb") as f:
        f.write(buf)
    path = ms[idx].name if 0 < idx < len(ms) - 1 else "-"
    print("%s %d %s %s" % (name, idx, path.encode("unicode_escape").decode(),
                           what))


def flip(off, bit=0x10):
    b = bytearray(data)
    b[off] ^= bit
    return bytes(b)


def record_value_offset(m, key):
    """File offset of the value of pax record @key in m's pax header."""
    hdr = data[m.offset + 512:m.offset_data]
    tag = (" %s=" % key).encode()
    i = hdr.find(tag)
    if i < 0:
        return None
    return m.offset + 512 + i + len(tag)


def nth(pred, n):
    hits = [i for i, m in enumerate(ms[1:-1], 1) if pred(m)]
    return hits[min(n, len(hits) - 1)] if hits else None


# 1. Truncation at ten offsets spread over the entries, some on 512-byte
#    boundaries and some not.
span = trailer.offset - 512
for k in range(10):
    off = 512 + span * k // 10 + (k % 3) * 167
    idx = max(i for i, m in enumerate(ms) if m.offset <= off)
    if idx == len(ms) - 1:
        idx = 0
    write("trunc%d.tar" % k, data[:off], idx, "truncated at %d" % off)

# 2. A flipped bit in record values: a name blob, an inode record, a
#    metadata blob, an xattr record, a symlink record.
for key, n in (("name", 4), ("inode", 9), ("metadata", 6), ("xattrs", 0),
               ("symlink", 1)):
    rec = "SCHILY.xattr.e2cryptbak." + key
    i = nth(lambda m: rec in m.pax_headers, n)
    if i is None:
        continue
    off = record_value_offset(ms[i], rec)
    write("flip-%s.tar" % key, flip(off + 6), i, "bit in the %s record" % key)

# 3. A path changed in the ustar name field (header checksum fixed):
#    only path_crc can tell.
i = nth(lambda m: "path" not in m.pax_headers and m.isfile() and
        not m.sparse and len(m.name) > 3, 7)
if i is not None:
    h = ms[i].offset_data - 512
    b = bytearray(data)
    c = b[h + 1]
    b[h + 1] = ord("A") if c != ord("A") else ord("B")
    b[h + 148:h + 156] = b" " * 8
    b[h + 148:h + 155] = ("%06o\0" % sum(b[h:h + 512])).encode()
    write("path.tar", bytes(b), i, "a changed path")

# 4. A flipped bit in a data block: of a plain entry, and of a sparse
#    entry past its map; and a block of zeros where data was.
i = nth(lambda m: m.isfile() and not m.sparse and m.size >= 2048, 3)
if i is not None:
    write("flip-data.tar", flip(ms[i].offset_data + 1000, 0x01), i,
          "bit in the data")
i = nth(lambda m: m.isfile() and m.sparse and
        sum(ln for _, ln in m.sparse) >= 1024, 2)
if i is not None:
    # the stored regions end the entry's data: damage its last
    # non-zero 512-byte block
    last = end_of(i) - 512
    while last > ms[i].offset_data and data[last:last + 512] == bytes(512):
        last -= 512
    write("flip-sparse.tar", flip(last + 7, 0x80), i,
          "bit in sparse data")
i = nth(lambda m: m.isfile() and not m.sparse and m.size >= 4096, 5)
if i is not None:
    b = bytearray(data)
    b[ms[i].offset_data + 512:ms[i].offset_data + 1024] = bytes(512)
    write("zero-block.tar", bytes(b), i, "a data block zeroed")

# 5. A flipped bit in the trailer record.
off = record_value_offset(trailer, "SCHILY.xattr.e2cryptbak.trailer")
write("flip-trailer.tar", flip(off + 40), 0, "bit in the trailer record")

# 6. An entry removed, an entry duplicated, two entries swapped, and an
#    entry appended after the trailer.
i = len(ms) // 2
a, b_, c = ms[i].offset, ms[i + 1].offset, ms[i + 2].offset
write("removed.tar", data[:a] + data[b_:], i, "entry removed")
write("duplicated.tar", data[:b_] + data[a:b_] + data[b_:], i + 1,
      "entry duplicated")
write("swapped.tar", data[:a] + data[b_:c] + data[a:b_] + data[c:], i,
      "entries swapped")
# the trailer has no data: its member ends where its header ends
tend = trailer.offset_data
write("appended.tar", data[:tend] + data[a:b_] + bytes(10240), 0,
      "entry after the trailer")
