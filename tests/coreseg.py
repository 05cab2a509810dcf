#!/usr/bin/env python3
"""coreseg.py CORE ADDR OUT - write the bytes of the PT_LOAD of the ELF64
little-endian core CORE that holds address ADDR to OUT (a raw dump, as a probe
would take of that memory), and print its start address in hex. For tests that
turn a real core into a raw dump (tests/run-hunt-raw.sh)."""
import struct
import sys


def main():
    core, addr, out = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
    with open(core, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit("coreseg: %s: not an ELF64 little-endian file" % core)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _flags, off, vaddr, _pa, filesz, _memsz, _al = \
            struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and vaddr <= addr < vaddr + filesz:
            with open(out, "wb") as o:
                o.write(data[off:off + filesz])
            print("0x%x" % vaddr)
            return
    sys.exit("coreseg: %s: no segment holds 0x%x" % (core, addr))


main()
