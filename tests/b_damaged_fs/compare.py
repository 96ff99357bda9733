#!/usr/bin/python3
# compare.py TOOLS BASE SPEC
#
# BASE is the manifest (tests/tools/manifest.py) of the tree extracted
# from the intact source.  Each line of SPEC is "CASE [-gone PATH]...
# [-free PATH]...": CASE.xtar and CASE.ximg were extracted from a damaged
# source, CASE.xr from the restore of CASE's archive.  The manifests are
# made here, in one process for all (python starts slowly).  Link counts
# are left out (a skipped name changes its inode's).  Every entry of
# BASE must be in CASE.xtar and CASE.ximg as it is, except:
#   -gone PATH   PATH and everything under it must be missing; with a
#                trailing '/', only what is under PATH
#   -free PATH   PATH and what is under it may be anything (a loop's
#                second name, say)
# and they must hold nothing else; CASE.xr must be just like CASE.xtar.
# Prints "ok CASE: ..." or "FAIL CASE ..." lines; exits 1 on any failure.
#
# This file may be redistributed under the terms of the GNU General
# Public License, version 2.

import importlib.util
import os
import re
import sys


def parse(lines):
    out = {}
    for line in lines:
        line = re.sub(rb" nlink=\d+", b"", line.rstrip(b"\n"))
        out[line.split(b" ", 1)[0].decode("ascii")] = line
    return out


def manifest(mod, top):
    top = os.fsencode(top)
    leader = {}
    return [mod.line(top, rel, st, leader).encode()
            for rel, st in mod.walk(top)]


def under(path, prefixes):
    for p in prefixes:
        if p.endswith("/"):
            if path.startswith(p):
                return True
        elif path == p or path.startswith(p + "/"):
            return True
    return False


def compare(base, result, gone, free):
    bad = []
    for p, line in base.items():
        if under(p, free):
            continue
        if under(p, gone):
            if p in result:
                bad.append("should be missing: " + p)
        elif p not in result:
            bad.append("missing: " + p)
        elif result[p] != line:
            bad.append("differs: %s\n  want %s\n  got  %s" %
                       (p, line.decode(errors="replace"),
                        result[p].decode(errors="replace")))
    for p in result:
        if p not in base and not under(p, free):
            bad.append("unexpected: " + p)
    return bad


def check(mod, base, case, gone, free):
    """the lines to print for one case, and whether it failed"""
    out, failed, trees = [], False, {}
    for src in ("xtar", "ximg", "xr"):
        d = "%s.%s" % (case, src)
        trees[src] = parse(manifest(mod, d)) if os.path.isdir(d) else None
    for src in ("xtar", "ximg"):
        m = trees[src]
        bad = ["not made"] if m is None else compare(base, m, gone, free)
        for b in bad[:10]:
            out.append("FAIL %s extract from the %s: %s" %
                       (case, src[1:], b))
        failed |= bool(bad)
        if not bad:
            out.append("ok %s: extract from the %s: %d entries as in the "
                       "intact tree, %d left out" %
                       (case, src[1:], len(m),
                        len([p for p in base if p not in m])))
    if trees["xr"] != trees["xtar"]:
        diff = sorted(set((trees["xr"] or {}).values()) ^
                      set((trees["xtar"] or {}).values()))
        out.append("FAIL %s the restored image extracts otherwise: %s" %
                   (case, diff[0].decode(errors="replace") if diff
                    else "not made"))
        failed = True
    else:
        out.append("ok %s: the restored image extracts the same" % case)
    return out, failed


def main():
    a = sys.argv[1:]
    spec = importlib.util.spec_from_file_location(
        "manifest", os.path.join(a[0], "manifest.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with open(a[1], "rb") as f:
        base = parse(f)
    nbad = 0
    with open(a[2]) as f:
        for line in f:
            w = line.split()
            gone = [w[i + 1] for i in range(1, len(w), 2) if w[i] == "-gone"]
            free = [w[i + 1] for i in range(1, len(w), 2) if w[i] == "-free"]
            out, failed = check(mod, base, w[0], gone, free)
            print("\n".join(out))
            nbad += failed
    sys.exit(1 if nbad else 0)


main()
