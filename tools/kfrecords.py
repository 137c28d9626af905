#!/usr/bin/env python3
"""kfrecords.py [--pages] FILE: the records of a keyframes file (docs/formats.md,
src/trace/keyframe.h version 1) for tests and benchmarks: a first line
"upto N" (the parent's keyframes at steps <= N come first in the chain),
then one line "STEP NPAGES" per whole record, in file order; with --pages,
also one line "STEP PFN NAME" per page a record names (NAME in hex)."""
import struct
import sys

args = sys.argv[1:]
pages = bool(args) and args[0] == "--pages"
if pages:
    args = args[1:]
b = open(args[0], "rb").read()
print("upto %d" % struct.unpack_from("<Q", b, 48)[0])
off = 64
while off + 24 <= len(b):
    magic, npages, step, slen, _ = struct.unpack_from("<IIQII", b, off)
    if magic != 0x4D52464B:
        break
    print("%d %d" % (step, npages))
    p = off + 24 + (slen + 7) // 8 * 8
    off = p + npages * 40
    if pages:
        for i in range(npages):
            if p + 40 * (i + 1) > len(b):
                break
            (pfn,) = struct.unpack_from("<Q", b, p + 40 * i)
            print("%d %d %s" % (step, pfn, b[p + 40 * i + 8 : p + 40 * i + 40].hex()))
