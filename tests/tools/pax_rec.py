# pax_rec.py --- the e2cryptbak records of a tarfile member, for the
# forgers of the tests (r_forged_fields/repax.py, v_bounds/forge.py):
# read one as bytes, put one back, seal one again as backup does.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import struct

from check_archive import crc32c

PRE = "SCHILY.xattr.e2cryptbak."


def raw(m, rec):
    return bytearray(m.pax_headers[PRE + rec].encode("utf-8",
                                                     "surrogateescape"))


def put(m, rec, value):
    m.pax_headers[PRE + rec] = bytes(value).decode("utf-8",
                                                   "surrogateescape")


def seal32(buf):
    buf[-4:] = struct.pack("<I", crc32c(bytes(buf[:-4])))
    return buf


def _pax_line(key, value):
    """One pax record "LEN KEY=VALUE\n", LEN counting itself"""
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(b"%d" % n) + len(body) != n:
        n += 1
    return b"%d" % n + body


def _x_header(template, size):
    """A pax 'x' header block of @size bytes of records, from the ustar
    header @template"""
    h = bytearray(template)
    h[0:100] = b"PaxHeader".ljust(100, b"\0")
    h[124:136] = b"%011o\0" % size
    h[156:157] = b"x"
    h[157:257] = bytes(100)
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def _with_mtime(pax, inode):
    """@pax with the mtime of @inode, nanoseconds and all, as libarchive
    writes it for an entry that carries its records"""
    sec, nsec = struct.unpack_from("<qI", inode, 72)
    lines, p = [], 0
    while p < len(pax):
        n = int(pax[p:pax.index(b" ", p)])
        if b" mtime=" not in pax[p:p + n]:
            lines.append(pax[p:p + n])
        p += n
    if nsec or not 0 <= sec < 8 ** 11:
        lines.append(_pax_line(b"mtime", b"%d.%09d" % (sec, nsec)
                               if nsec else b"%d" % sec))
    return b"".join(lines)


def unfold_bytes(data):
    """The bytes of an uncompressed archive with the records of its
    records entries (format version 2) put back into the pax headers of
    the entries they describe and the records entries left out: the same
    archive as a version 2 writer that writes no records entry would
    make, for forgers that work on pax headers.  Made on the bytes
    themselves: sparse maps and every other header stay as they are,
    only the records move."""
    import io
    import tarfile
    from check_archive import records_groups
    ms = tarfile.open(fileobj=io.BytesIO(data), mode="r:",
                      encoding="utf-8", errors="surrogateescape").getmembers()
    out, pending = bytearray(data[:ms[0].offset]), []
    for k, m in enumerate(ms):
        end = ms[k + 1].offset if k + 1 < len(ms) else \
            m.offset_data + (m.size + 511) // 512 * 512
        if PRE + "records" in m.pax_headers:
            rec = raw(m, "records")
            first, count = struct.unpack_from("<II", rec, 8)
            pending = records_groups(
                data[m.offset_data:m.offset_data + m.size], first, count)
            continue
        if not pending:
            out += data[m.offset:end]
            continue
        # the ustar header: after the pax header (a sparse map may
        # follow it: tarfile's offset_data is past that)
        pax, hdr = b"", m.offset
        if data[m.offset + 156:m.offset + 157] == b"x":
            size = int(data[m.offset + 124:m.offset + 136]
                       .rstrip(b"\0 ") or b"0", 8)
            pax = data[m.offset + 512:m.offset + 512 + size]
            hdr = m.offset + 512 + (size + 511) // 512 * 512
        recs = pending.pop(0)
        for key, value in recs.items():
            pax += _pax_line((PRE + key).encode(), value)
        pax = _with_mtime(pax, recs["inode"])
        out += _x_header(data[hdr:hdr + 512], len(pax))
        out += pax + bytes(-len(pax) % 512)
        out += data[hdr:end]
    out += data[end:]
    return bytes(out)


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 3:
        sys.exit("usage: pax_rec.py IN OUT: the records entries unfolded")
    with open(sys.argv[1], "rb") as f:
        folded = f.read()
    with open(sys.argv[2], "wb") as f:
        f.write(unfold_bytes(folded))
