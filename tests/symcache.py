#!/usr/bin/env python3
"""symcache.py - edit a libdw symbolizer cache file (sym/dw_cache.c) for
tests/run-symcache.sh, keeping it well-formed where asked.

usage: symcache.py rename FILE OLD NEW   replace the string OLD by NEW (same length)
                                         in a unit and store the matching checksums
       symcache.py flip FILE [unit|global]
                                         flip one byte (checksum left): in the middle
                                         of the largest unit (default), or of the
                                         global part (symbols, CU tables)
       symcache.py info FILE             print "version size nsyms naranges ncus ncuranges"
"""
import struct
import sys

M = (1 << 64) - 1


def mix(x):
    # dw_cache_mix
    x ^= x >> 31
    x = (x * 0xea8ff5f8d837115f) & M
    x ^= x >> 29
    x = (x * 0x50a74cff026f4c85) & M
    x ^= x >> 32
    return x


def csum(b):
    # dw_cache_sum: running sum of 64-bit words and the sum of those sums
    a, s = (0x6a09e667f3bcc909 ^ len(b)) & M, 0x9e3779b97f4a7c15
    n8 = len(b) // 8 * 8
    for (w,) in struct.iter_unpack("<Q", b[:n8]):
        a = (a + w) & M
        s = (s + a) & M
    for c in b[n8:]:
        a = (a + c) & M
        s = (s + a) & M
    return mix(a ^ mix(s))


cmd, path = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
version, hdrsize = struct.unpack_from("<II", data, 8)
# header (sym/dw_priv.h struct dw_chdr): magic 8, version 4, hdrsize 4, size 8,
# sum 8, key 88, dwdelta 8, dbg_size 8, dbg_mtime 8, dbg_path 4, pad 4, then
# syms, aranges, last_end, cus, strs, curanges, glob_end
OFF = 8 + 4 + 4 + 8 + 8 + 88 + 8 + 8 + 8 + 4 + 4
(syms_off, nsyms, ar_off, nar, last_end, cus_off, ncus, strs_off, strs_size,
 cur_off, ncur, glob_end) = struct.unpack_from("<12Q", data, OFF)
CU = 136   # struct dw_ccu; blob_off at 16, blob_size 24, blob_sum 32


def units():
    for i in range(ncus):
        blob_off, blob_size = struct.unpack_from("<QQ", data, cus_off + CU * i + 16)
        yield i, blob_off, blob_size


def fix_global():
    struct.pack_into("<Q", data, 24, csum(bytes(data[hdrsize:glob_end])))


if cmd == "rename":
    old, new = sys.argv[3].encode(), sys.argv[4].encode()
    assert len(old) == len(new)
    at = data.find(b"\0" + old + b"\0", glob_end)
    if at < 0:
        sys.exit("no string %s in a unit" % sys.argv[3])
    data[at + 1:at + 1 + len(old)] = new
    for i, bo, bs in units():
        if bo <= at < bo + bs:
            struct.pack_into("<Q", data, cus_off + CU * i + 32, csum(bytes(data[bo:bo + bs])))
    fix_global()
elif cmd == "flip":
    where = sys.argv[3] if len(sys.argv) > 3 else "unit"
    if where == "global":
        data[(hdrsize + glob_end) // 2] ^= 0x40
    else:
        i, bo, bs = max(units(), key=lambda u: u[2])
        data[bo + bs // 2] ^= 0x40
elif cmd == "info":
    print(version, len(data), nsyms, nar, ncus, ncur)
    sys.exit(0)
open(path, "wb").write(data)
