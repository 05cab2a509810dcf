#!/usr/bin/env python3
"""mk_symcache_regress.py - write damaged copies of a symbolizer cache file
(sym/dw_cache.c, layout in sym/dw_priv.h) for tests/fuzz/regress-symcache/: each
breaks one rule that dw_cache_check must enforce. Size and checksum are left as
they are: fzrun --symcache and fuzz_symcache store the right ones before checking.

usage: mk_symcache_regress.py SEED OUTDIR
The committed files came from
  mk_symcache_regress.py tests/fuzz/corpus/symcache/seed-12funcs.symidx tests/fuzz/regress-symcache
where the seed is the cache symdw --cache-dir wrote for tests/prog/symgen.py 12 2
built with gcc -g -O2 (gen0.c gen1.c main.c), named at its call sites.
"""
import os
import struct
import sys

seed, out = sys.argv[1], sys.argv[2]
base = open(seed, "rb").read()
HDR = 224
syms_off, nsyms, ar_off, nar, last_end, cus_off, ncus, strs_off, strs_size = struct.unpack_from("<9Q", base, 152)
CU = 96
cu0 = cus_off
rows_off, nrows, files_off, nfiles, scopes_off, nscopes, ranges_off, nranges, sorted_off = \
    struct.unpack_from("<9Q", base, cu0 + 16)


def put(name, edits, cut=None):
    b = bytearray(base)
    for fmt, off, val in edits:
        struct.pack_into(fmt, b, off, val)
    if cut is not None:
        b = b[:cut]
    open(os.path.join(out, name), "wb").write(bytes(b))


put("truncated-header", [], cut=100)
put("hdrsize-huge", [("<I", 12, 0xffffffff)])
put("version-2", [("<I", 8, 2)])
put("nsyms-overflow", [("<Q", 160, 1 << 61)])
put("syms-misaligned", [("<Q", 152, syms_off + 4)])
put("cu-count-past-end", [("<Q", 200, len(base))])
put("cu0-rows-past-end", [("<Q", cu0 + 16, len(base) + 8)])
put("cu0-row-file-oob", [("<I", rows_off + 8, nfiles)])
put("cu0-rows-unsorted", [("<I", rows_off, 0xffffffff)])
put("cu0-scope-parent-self", [("<i", scopes_off + 32 * 1, 1)])
put("cu0-scope-name-oob", [("<I", scopes_off + 8, strs_size)])
put("cu0-scope-ranges-oob", [("<I", scopes_off + 28, nranges + 1)])
put("cu0-sorted-scope-oob", [("<I", sorted_off + 16, nscopes)])
put("arange-cu-oob", [("<I", ar_off + 16, ncus)])
put("aranges-unsorted", [("<Q", ar_off, 0xffffffffffff)])
put("strs-unterminated", [("<B", strs_off + strs_size - 1, ord("x"))])
put("strs-size-zero", [("<Q", 216, 0)])
put("dbg-path-oob", [("<I", 144, strs_size + 100)])
