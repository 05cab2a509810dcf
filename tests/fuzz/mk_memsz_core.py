#!/usr/bin/env python3
# mk_memsz_core.py SRC DST MEMSZ: copy the ELF64 LE core SRC to DST with p_memsz of
# its last writable PT_LOAD with data set to MEMSZ (the reproducer of issue 14:
# --report=lost used to walk such a claim per 4 KiB page). tests/run-fuzz-regress.sh.
import struct, sys
src, dst, memsz = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
d = bytearray(open(src, 'rb').read())
phoff, = struct.unpack_from('<Q', d, 0x20); n, = struct.unpack_from('<H', d, 0x38)
last = None
for i in range(n):
    o = phoff + i * 56
    t, fl, off, va, pa, fsz, msz, al = struct.unpack_from('<IIQQQQQQ', d, o)
    if t == 1 and fl & 2 and fsz:
        last = o
struct.pack_into('<Q', d, last + 40, memsz)
open(dst, 'wb').write(d)
