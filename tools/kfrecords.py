#!/usr/bin/env python3
"""kfrecords.py FILE: the records of a keyframes file (docs/formats.md,
src/trace/keyframe.h version 1) for tests and benchmarks: a first line
"upto N" (the parent's keyframes at steps <= N come first in the chain),
then one line "STEP NPAGES" per whole record, in file order."""
import struct
import sys

b = open(sys.argv[1], "rb").read()
print("upto %d" % struct.unpack_from("<Q", b, 48)[0])
off = 64
while off + 24 <= len(b):
    magic, npages, step, slen, _ = struct.unpack_from("<IIQII", b, off)
    if magic != 0x4D52464B:
        break
    print("%d %d" % (step, npages))
    off += 24 + (slen + 7) // 8 * 8 + npages * 40
