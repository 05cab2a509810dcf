#!/usr/bin/env python3
"""ramcut.py CORE LO HI OUT - write the memory [LO, HI) of the ELF core CORE
(ELF32 or ELF64, either byte order) to OUT as a raw dump, zeros where the core
holds nothing: what a JTAG probe's "dump memory" of that range gives.
ramcut.py CORE ADDR - print "LO HI": the run of address-contiguous, dumped
PT_LOAD segments that holds ADDR (tests/run-hunt2-fw.sh)."""
import struct
import sys


def loads(d):
    cls, en = d[4], "<" if d[5] == 1 else ">"
    if cls == 1:
        phoff, = struct.unpack_from(en + "I", d, 0x1c)
        phentsize, phnum = struct.unpack_from(en + "HH", d, 0x2a)
    else:
        phoff, = struct.unpack_from(en + "Q", d, 0x20)
        phentsize, phnum = struct.unpack_from(en + "HH", d, 0x36)
    for i in range(phnum):
        o = phoff + i * phentsize
        if cls == 1:
            t, off, va, _pa, fsz, _msz = struct.unpack_from(en + "IIIIII", d, o)
        else:
            t, _fl, off, va, _pa, fsz, _msz = struct.unpack_from(en + "IIQQQQQ", d, o)
        if t == 1 and fsz:
            yield off, va, fsz


def main():
    d = open(sys.argv[1], "rb").read()
    if d[:4] != b"\x7fELF":
        sys.exit("ramcut: %s: not an ELF file" % sys.argv[1])
    segs = sorted(loads(d), key=lambda s: s[1])
    if len(sys.argv) == 3:
        addr = int(sys.argv[2], 0)
        for i, (_off, va, fsz) in enumerate(segs):
            if va <= addr < va + fsz:
                lo, hi = va, va + fsz
                for _o, v2, f2 in segs[i + 1:]:
                    if v2 != hi:
                        break
                    hi = v2 + f2
                for _o, v2, f2 in reversed(segs[:i]):
                    if v2 + f2 != lo:
                        break
                    lo = v2
                print("0x%x 0x%x" % (lo, hi))
                return
        sys.exit("ramcut: no dumped segment holds 0x%x" % addr)
    lo, hi = int(sys.argv[2], 0), int(sys.argv[3], 0)
    buf = bytearray(hi - lo)
    for off, va, fsz in segs:
        a, b = max(va, lo), min(va + fsz, hi)
        if a < b:
            buf[a - lo:b - lo] = d[off + a - va:off + b - va]
    with open(sys.argv[4], "wb") as o:
        o.write(buf)


main()
