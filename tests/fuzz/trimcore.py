#!/usr/bin/env python3
# trimcore.py SRC DST [CAP]: a small fuzz seed from an ELF64 LE core (tests/fuzz/mkseeds.sh).
# Keeps the ELF header, the program headers and the notes; of each PT_LOAD keeps the
# pages that hold a libheapann block header word, the statistics region (whole) or
# a thread's stack pointer (with one page around each), at most CAP bytes (default
# 160 KiB) in all; the rest of each segment is left out as a core truncated by design
# would (p_filesz cut, p_memsz kept), so the seed is still a valid core.
import struct, sys

src, dst = sys.argv[1], sys.argv[2]
cap = int(sys.argv[3], 0) if len(sys.argv) > 3 else 160 * 1024
d = open(src, 'rb').read()
PAGE = 4096
# START_LIVE64, START_FREED64, and the statistics region's MAGIC0_64
MAGICS = [struct.pack('<Q', m) for m in (0xA110CA7E5EEDB10C, 0xF4EEDB10C0DEADDF, 0x57A75C0DE5A110C8)]

phoff, = struct.unpack_from('<Q', d, 0x20)
phentsize, phnum = struct.unpack_from('<HH', d, 0x36)
phs = [list(struct.unpack_from('<IIQQQQQQ', d, phoff + i * phentsize)) for i in range(phnum)]

# stack pointers from NT_PRSTATUS (x86-64: pr_reg at 112, rsp is word 19)
sps = []
for t, fl, off, va, pa, fsz, msz, al in phs:
    if t != 4:
        continue
    p, end = off, off + fsz
    while p + 12 <= end:
        nsz, dsz, typ = struct.unpack_from('<III', d, p)
        desc = p + 12 + ((nsz + 3) & ~3)
        if typ == 1 and dsz >= 112 + 27 * 8:
            sps.append(struct.unpack_from('<Q', d, desc + 112 + 19 * 8)[0])
        p = desc + ((dsz + 3) & ~3)

budget = cap
out = bytearray(d[:phoff + phnum * phentsize])
# notes first, in place after the program headers
for ph in phs:
    if ph[0] == 4:
        blob = d[ph[2]:ph[2] + ph[5]]
        ph[2] = len(out)
        out += blob
# what each PT_LOAD needs (up to the last wanted page, plus one), and its priority:
# the statistics region first, then the stacks, then the heap (budget permitting)
need = {}
for n, ph in enumerate(phs):
    t, fl, off, va, pa, fsz, msz, al = ph
    if t != 1:
        continue
    seg = d[off:off + fsz]
    wanted, prio = set(), 2
    for m in MAGICS[:2]:
        i = seg.find(m)
        while i >= 0 and len(wanted) < 64:
            wanted.add(i // PAGE)
            i = seg.find(m, i + 8)
    i = seg.find(MAGICS[2])   # the statistics region: keep all of it (TOTAL, word 5)
    if i >= 0 and i + 48 <= len(seg):
        total, = struct.unpack_from('<Q', seg, i + 40)
        if total < cap:
            wanted.add((i + total) // PAGE)
            prio = 0
    for sp in sps:
        if va <= sp < va + fsz and sp - va < 64 * 1024:   # a prefix is kept: small stacks only
            wanted.add((sp - va) // PAGE)
            prio = min(prio, 1)
    if wanted:
        need[n] = (prio, min(fsz, (max(wanted) + 2) * PAGE))
keep = {}
for n in sorted(need, key=lambda k: need[k][0]):
    keep[n] = min(need[n][1], budget)
    budget -= keep[n]
for n, ph in enumerate(phs):
    if ph[0] != 1:
        continue
    k = keep.get(n, 0)
    blob = d[ph[2]:ph[2] + k]
    ph[2] = len(out)
    ph[5] = k
    out += blob
for i, ph in enumerate(phs):
    struct.pack_into('<IIQQQQQQ', out, phoff + i * phentsize, *ph)
open(dst, 'wb').write(b'\x12' + bytes(out))   # the core selector of tests/fuzz/fz.h
