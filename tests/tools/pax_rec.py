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
