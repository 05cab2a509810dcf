#!/usr/bin/env python3
"""mk_symcache_regress.py - write damaged copies of a symbolizer cache file
(sym/dw_cache.c, layout in sym/dw_priv.h) for tests/fuzz/regress-symcache/: each
breaks one rule that dw_cache_check (the header and global part) or
dw_cache_unit_ok (a unit) must enforce. Size and checksums are left as they
are: fzrun --symcache and fuzz_symcache store the right ones before checking.

usage: mk_symcache_regress.py SEED CLANG_SEED OUTDIR
The committed files came from
  mk_symcache_regress.py tests/fuzz/corpus/symcache/seed-12funcs.symidx \
      tests/fuzz/corpus/symcache/seed-12funcs-clang.symidx tests/fuzz/regress-symcache
where the seeds are the caches symdw --cache-dir wrote for tests/prog/symgen.py 12 2
built with gcc -g -O2 and with clang-14 -g -O2 -Wl,--build-id (gen0.c gen1.c
main.c), named at their call sites.
When the cache format went to version 3 (split-DWARF units read, same layout)
the version word (offset 8) of the seeds and of every file here that had 2 was
set to 3.
"""
import os
import struct
import sys

seed, cseed, out = sys.argv[1], sys.argv[2], sys.argv[3]
HOFF = 152   # syms_off, nsyms, aranges_off, naranges, last_end, cus_off, ncus,
             # strs_off, strs_size, curanges_off, ncuranges, glob_end
CU = 136


def layout(b):
    h = dict(zip("syms_off nsyms ar_off nar last_end cus_off ncus strs_off strs_size cur_off ncur glob_end".split(),
                 struct.unpack_from("<12Q", b, HOFF)))
    cu0 = h["cus_off"]
    u = dict(zip("blob_off blob_size blob_sum rows_off nrows files_off nfiles scopes_off nscopes ranges_off "
                 "nranges sorted_off rows_base strs_off strs_size".split(), struct.unpack_from("<15Q", b, cu0 + 16)))
    return h, cu0, u


def put(base, name, edits, cut=None):
    b = bytearray(base)
    for fmt, off, val in edits:
        struct.pack_into(fmt, b, off, val)
    if cut is not None:
        b = b[:cut]
    open(os.path.join(out, name), "wb").write(bytes(b))


base = open(seed, "rb").read()
h, cu0, u = layout(base)
blob = u["blob_off"]
put(base, "truncated-header", [], cut=100)
put(base, "hdrsize-huge", [("<I", 12, 0xffffffff)])
put(base, "version-1", [("<I", 8, 1)])
put(base, "nsyms-overflow", [("<Q", 160, 1 << 61)])
put(base, "syms-misaligned", [("<Q", 152, h["syms_off"] + 4)])
put(base, "cu-count-past-end", [("<Q", 200, len(base))])
put(base, "glob-end-past-end", [("<Q", 240, len(base) + 8)])
put(base, "cu0-blob-past-end", [("<Q", cu0 + 24, len(base) - blob + 8)])
put(base, "cu0-blob-in-global", [("<Q", cu0 + 16, h["glob_end"] - 8)])
put(base, "cu0-rows-past-end", [("<Q", cu0 + 40, u["blob_size"] + 8)])
put(base, "cu0-row-file-oob", [("<I", blob + u["rows_off"] + 8, u["nfiles"])])
put(base, "cu0-rows-unsorted", [("<I", blob + u["rows_off"], 0xffffffff)])
put(base, "cu0-scope-parent-self", [("<i", blob + u["scopes_off"] + 32 * 1, 1)])
put(base, "cu0-scope-name-oob", [("<I", blob + u["scopes_off"] + 8, u["strs_size"])])
put(base, "cu0-scope-callfile-oob", [("<I", blob + u["scopes_off"] + 12, u["nfiles"])])
put(base, "cu0-scope-ranges-oob", [("<I", blob + u["scopes_off"] + 28, u["nranges"] + 1)])
put(base, "cu0-sorted-scope-oob", [("<I", blob + u["sorted_off"] + 16, u["nscopes"])])
put(base, "cu0-file-name-oob", [("<I", blob + u["files_off"], u["strs_size"])])
put(base, "cu0-strs-unterminated", [("<B", blob + u["strs_off"] + u["strs_size"] - 1, ord("x"))])
put(base, "arange-cu-oob", [("<I", h["ar_off"] + 16, h["ncus"])])
put(base, "aranges-unsorted", [("<Q", h["ar_off"], 0xffffffffffff)])
put(base, "strs-unterminated", [("<B", h["strs_off"] + h["strs_size"] - 1, ord("x"))])
put(base, "strs-size-zero", [("<Q", 216, 0)])
put(base, "dbg-path-oob", [("<I", 144, h["strs_size"] + 100)])

# the CU range table of a clang-built module (no .debug_aranges)
cbase = open(cseed, "rb").read()
ch, _, _ = layout(cbase)
put(cbase, "curange-cu-oob", [("<I", ch["cur_off"] + 24, ch["ncus"])])
put(cbase, "curange-empty", [("<Q", ch["cur_off"] + 8, struct.unpack_from("<Q", cbase, ch["cur_off"])[0])])
put(cbase, "curanges-unsorted", [("<Q", ch["cur_off"], 0xffffffffffff), ("<Q", ch["cur_off"] + 8, 0xfffffffffffff)])
put(cbase, "curanges-past-end", [("<Q", 232, len(cbase))])
