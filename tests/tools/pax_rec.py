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


def unfolded(tin):
    """(member, data file) of each entry of @tin, the records of a
    records entry (format version 2) put back into the pax headers of
    the entries it describes and the records entry left out: the same
    archive as a version 2 writer that writes no records entry would
    make, for forgers that work on pax headers."""
    from check_archive import records_groups
    pending = []
    for m in tin:
        f = tin.extractfile(m) if m.isreg() else None
        if PRE + "records" in m.pax_headers:
            rec = raw(m, "records")
            first, count = struct.unpack_from("<II", rec, 8)
            pending = records_groups(f.read(), first, count)
            continue
        if pending:
            for key, value in pending.pop(0).items():
                put(m, key, value)
        yield m, f


def unfold(src, dst):
    """@src rewritten by unfolded() into @dst"""
    import tarfile
    tin = tarfile.open(src, "r:", encoding="utf-8",
                       errors="surrogateescape")
    tout = tarfile.open(dst, "w:", format=tarfile.PAX_FORMAT,
                        encoding="utf-8", errors="surrogateescape")
    for m, f in unfolded(tin):
        tout.addfile(m, f)
    tout.close()


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 3:
        sys.exit("usage: pax_rec.py IN OUT: the records entries unfolded")
    unfold(sys.argv[1], sys.argv[2])
