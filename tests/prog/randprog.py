#!/usr/bin/env python3
"""randprog.py - write a random C program whose heap at its end the generator
knows exactly, for tests/hunt9.py (tests/run-hunt9-gen.sh).

usage: randprog.py SEED OUTDIR [cxx]

A seed gives: a call tree of named functions over several files (some static,
some static inline, one recursion), allocation sites at known lines (malloc,
calloc, realloc, posix_memalign, aligned_alloc, strdup; sizes 0, odd, and
above 128 KiB), some blocks freed, pointer links between blocks, holders
(globals, TLS, main's stack, a thread's stack), up to 3 threads, and an end
state: "gcore" (prints ready, waits for a line on stdin), "abort" (a kernel
core) or "exit" (returns from main: HEAPANN_SNAPSHOT=exit). With "cxx" the
files are C++ (.cc) and sites also use new[] and new of a 48-byte struct (freed
with delete[] and delete).

Writes OUTDIR/gen.h, gen*.c, main.c and OUTDIR/truth.json: per block its id,
site, size, whether live and its category (memcheck's), the sites (function,
file, line, call chain up to main or the thread's function: innermost first,
"fn@file:line"), and the allocation log (event, size) in program order for
the statistics. At run time the program writes "ID ADDR" per live block and
"sym NAME ADDR" for its globals to the file named by $HUNT9_ADDRS, so that a
checker can tie block_list entries and --addr answers to ids.
"""
import json
import os
import random
import sys

seed, out = int(sys.argv[1]), sys.argv[2]
cxx = "cxx" in sys.argv[3:]
# h10 (tests/hunt10.py): the features of hunt10 besides, drawn only then so
# that a seed without it is the program it always was
h10 = "h10" in sys.argv[3:]
R = random.Random(seed)

SIZES = [0, 1, 3, 7, 13, 24, 37, 40, 64, 100, 255, 257, 1000, 1023, 1024,
         1025, 2049, 5003, 131073, 200003]
nfiles = R.randint(2, 4)
nfuncs = R.randint(6, 18)
nthreads = R.choice([0, 2, 3, 4, 6, 8]) if h10 else R.choice([0, 0, 1, 2, 3])
end = R.choice(["gcore", "abort", "exit"])

# functions: name, file, kind (plain/static/inline), parent, calls
funcs = []
for i in range(nfuncs):
    kind = R.choice(["plain", "plain", "static", "inline"])
    funcs.append({"name": "h9_f%d" % i, "kind": kind, "file": None,
                  "children": [], "sites": [], "parent": None})
# roots: main and each thread's function; every function gets one parent
roots = ["main"] + ["h9_thr%d" % t for t in range(nthreads)]
rootch = {r: [] for r in roots}
for i, f in enumerate(funcs):
    # parent: a root or an earlier function
    if i == 0 or R.random() < 0.3:
        r = R.choice(roots)
        rootch[r].append(i)
        f["parent"] = r
    else:
        p = R.randrange(i)
        funcs[p]["children"].append(i)
        f["parent"] = p
# what main or a thread's function calls is never inlined: inlined there, its
# locals could stay in the root's live frame and hold a block the truth has lost
for f in funcs:
    if isinstance(f["parent"], str) and f["kind"] == "inline":
        f["kind"] = "static"
# static and inline functions must live in their caller's file
for i, f in enumerate(funcs):
    p = f["parent"]
    if f["kind"] != "plain":
        if isinstance(p, int):
            f["file"] = funcs[p]["file"] if funcs[p]["file"] is not None else None
        else:
            f["file"] = "main.c"
    if f["file"] is None:
        f["file"] = "gen%d.c" % R.randrange(nfiles)
# the recursion: one plain function recursing to a depth before its sites
recf = R.randrange(nfuncs)
funcs[recf]["kind"] = "plain" if funcs[recf]["kind"] == "inline" else funcs[recf]["kind"]
recdepth = R.randint(1, 4)
for i, f in enumerate(funcs):
    # a static function's callers must be in its file; fix children's files
    pass


def fix_files():
    changed = True
    while changed:
        changed = False
        for f in funcs:
            for c in f["children"]:
                cf = funcs[c]
                if cf["kind"] != "plain" and cf["file"] != f["file"]:
                    cf["file"] = f["file"]
                    changed = True
        for r in roots:
            for c in rootch[r]:
                cf = funcs[c]
                if cf["kind"] != "plain" and cf["file"] != "main.c":
                    cf["file"] = "main.c"
                    changed = True


fix_files()

# sites
blocks = []      # id, site, size, kind
sites = []
ALLOC = ["malloc", "malloc", "malloc", "calloc", "realloc", "posix_memalign",
         "aligned_alloc", "strdup"] + (["new", "newobj"] if cxx else [])
if h10:
    ALLOC += ["realloc_null", "reallocarray", "reallocarray", "memalign", "valloc",
              "pvalloc", "calloc", "realloc"]
for i, f in enumerate(funcs):
    for k in range(R.randint(0, 3)):
        kind = R.choice(ALLOC)
        cnt = R.choice([1, 1, 1, 2, 3, 5])
        size = R.choice(SIZES)
        if size >= 131072 and cnt > 2:
            cnt = 1
        s = {"id": len(sites), "func": i, "kind": kind, "count": cnt, "size": size}
        if kind == "calloc":
            n = R.choice([1, 2, 3, 5])
            s["nmemb"] = n
            s["esize"] = max(size // n, 0)
            s["size"] = n * s["esize"]
            if h10:
                s["ovf"] = R.random() < 0.5
        elif kind == "realloc":
            s["size0"] = R.choice(SIZES)
        elif kind == "reallocarray":
            # from a malloc'd block, or from NULL; n * esize, 0 frees the block
            s["size0"] = R.choice(SIZES) if R.random() < 0.7 else None
            n = R.choice([1, 2, 3, 7])
            s["nmemb"] = n
            s["esize"] = size // n
            s["size"] = n * s["esize"]
            s["ovf"] = R.random() < 0.5
        elif kind == "memalign":
            s["align"] = R.choice([8, 16, 32, 48, 64, 4096])
        elif kind == "pvalloc":
            # libheapann asks for whole pages (annotate/core.c ha_pvalloc)
            s["asked"] = size
            s["size"] = (size + 4095) // 4096 * 4096
            if s["size"] > 200000:
                cnt = s["count"] = 1
        elif kind == "posix_memalign":
            s["align"] = R.choice([16, 32, 64, 128, 4096])
        elif kind == "aligned_alloc":
            s["align"] = R.choice([16, 32, 64, 256])
        elif kind == "strdup":
            s["size"] = R.choice([1, 2, 9, 40, 100, 1000])
        elif kind == "newobj":
            s["size"] = 48
        elif kind == "new" and size == 0:
            # libstdc++'s operator new asks malloc for 1 byte for 0 (README,
            # Known limits): the block records 1
            s["size"] = 1
            s["asked"] = 0
        s["first"] = len(blocks)
        for j in range(cnt):
            blocks.append({"id": len(blocks), "site": s["id"], "size": s["size"]})
        sites.append(s)
        f["sites"].append(s["id"])

# fates: live (held in g_slot) or freed or lost/held otherwise
for b in blocks:
    b["fate"] = R.choice(["keep", "keep", "free", "free", "lost", "stack", "tls",
                          "interior", "viablock"] +
                         (["tstack", "ttls"] if h10 and nthreads else []))
    if b["fate"] in ("tstack", "ttls"):
        # held only in thread T's stack or its own TLS (h9_tls of that thread)
        b["thread"] = R.randrange(nthreads)
    if b["fate"] == "stack" and end == "exit":
        b["fate"] = "keep"
    if b["fate"] == "interior" and b["size"] < 2:
        b["fate"] = "lost"
# realloc(p, 0) frees p and returns NULL (glibc): no block
for b in blocks:
    s = sites[b["site"]]
    if s["kind"] in ("realloc", "reallocarray") and s["size"] == 0 and \
            s.get("size0", 0) is not None:
        b["fate"] = "gone"
# links: a block of 8+ bytes points at another (start pointer, word 0)
links = []       # (from, to)
holders = [b for b in blocks if b["size"] >= 8 and b["fate"] in ("keep", "lost")]
for b in blocks:
    if b["fate"] == "viablock":
        if not holders:
            b["fate"] = "lost"
            continue
        h = R.choice(holders)
        if h is b:
            b["fate"] = "lost"
            continue
        links.append((h["id"], b["id"]))
# a chain of lost blocks: A -> B -> C -> B (cycle below a definitely lost root)
lostbig = [b for b in blocks if b["fate"] == "lost" and b["size"] >= 16]
if len(lostbig) >= 3 and R.random() < 0.7:
    a, bb, c = R.sample(lostbig, 3)
    bb["fate"] = "viablock"
    c["fate"] = "viablock"
    links.append((a["id"], bb["id"]))
    links.append((bb["id"], c["id"]))
    links.append((c["id"], bb["id"]))
# a link is word k of the holder: each holder's links use distinct words
used = {}
lk = []
for (h, t) in links:
    w = used.get(h, 0)
    if (w + 1) * 8 > blocks[h]["size"]:
        # no room: the target is then lost on its own
        if blocks[t]["fate"] == "viablock":
            blocks[t]["fate"] = "lost"
        continue
    used[h] = w + 1
    lk.append((h, t, w))
links = lk
# a viablock target whose holders were all dropped is lost
held = {t for (_, t, _) in links}
for b in blocks:
    if b["fate"] == "viablock" and b["id"] not in held:
        b["fate"] = "lost"

# h10, a gcore: one kept block held at the core only in a register (rdi at the
# first instruction of h9_leaf, where gdb stops: tests/hunt9.py)
regblk = None
if h10 and end == "gcore" and R.random() < 0.6:
    kb = [b for b in blocks if b["fate"] == "keep"]
    if kb:
        regblk = R.choice(kb)
        regblk["fate"] = "reg"
# h10: one freed block of 24+ bytes (not mmap'd) is reused by a smaller one,
# allocated after the frees by h9_reuser (called from h9_fates)
reuse = None
if h10:
    fb = [b for b in blocks if b["fate"] == "free" and 24 <= b["size"] < 100000 and
          sites[b["site"]]["kind"] in ("malloc", "calloc", "strdup")]
    if fb:
        fr = R.choice(fb)
        reuse = {"of": fr["id"], "size": fr["size"] - R.choice([1, 8, 16]),
                 "id": len(blocks), "site": len(sites)}
        sites.append({"id": len(sites), "func": None, "kind": "malloc", "count": 1,
                      "size": reuse["size"], "first": len(blocks)})
        blocks.append({"id": len(blocks), "site": reuse["site"], "size": reuse["size"],
                       "fate": "keep"})
REACH = ("keep", "stack", "tls", "tstack", "ttls", "reg")
# h10: a fork()ed child allocates K blocks of one size (frees the first F of
# them) and takes its own signal snapshot (with HUNT10_SNAP)
child = None
if h10 and R.random() < 0.6:
    k = R.randint(1, 4)
    child = {"size": R.choice(SIZES), "count": k, "frees": R.randint(0, k - 1)}
# categories (memcheck's), from the roots: keep/stack/tls -> reachable start
live = [b for b in blocks if b["fate"] not in ("free", "gone")]
cat = {}
for b in live:
    if b["fate"] in REACH:
        cat[b["id"]] = "still reachable"
    elif b["fate"] == "interior":
        cat[b["id"]] = "possibly lost"
# propagate from reachable via start pointers
changed = True
while changed:
    changed = False
    for (h, t, w) in links:
        if cat.get(h) == "still reachable" and cat.get(t) != "still reachable":
            cat[t] = "still reachable"
            changed = True
for b in live:
    if b["id"] in cat:
        continue
    cat[b["id"]] = "definitely lost" if b["id"] not in held else None
changed = True
while changed:
    changed = False
    for (h, t, w) in links:
        if cat.get(h) in ("definitely lost", "indirectly lost") and cat.get(t) is None:
            cat[t] = "indirectly lost"
            changed = True
for b in live:
    if cat.get(b["id"]) is None:
        cat[b["id"]] = "definitely lost"
for b in blocks:
    b["live"] = b["fate"] not in ("free", "gone")
    b["category"] = cat.get(b["id"]) if b["live"] else None

# ---- write the sources ----
files = {"main.c": []}
for k in range(nfiles):
    files["gen%d.c" % k] = []
lines_of = {}    # (file) -> list of lines


def decl(f):
    st = {"plain": "", "static": "static ", "inline": "static inline "}[f["kind"]]
    attr = "" if f["kind"] == "inline" else "__attribute__((noinline)) "
    if funcs.index(f) == recf:
        return "%s%sint %s(int d)" % (attr, st, f["name"])
    return "%s%sint %s(void)" % (attr, st, f["name"])


site_line = {}
call_line = {}     # (caller name, callee index) -> line
rec_line = None
slot_n = len(blocks)


def emit_func(fi, L, fname):
    f = funcs[fi]
    L.append(decl(f))
    L.append("{")
    L.append("\tint acc = 0;")
    if fi == recf:
        L.append("\tif (d > 0) {")
        L.append("\t\tacc += %s(d - 1);" % f["name"])
        global rec_line
        rec_line = len(L)
        L.append("\t\treturn acc + h9_sink(acc);")
        L.append("\t}")
    for sid in f["sites"]:
        s = sites[sid]
        L.append("\tfor (int i = 0; i < %d; i++) {" % s["count"])
        L.append("\t\tvoid *p = 0;")
        k = s["kind"]
        if k == "malloc":
            line = "\t\tp = malloc(h9_n(%d));" % s["size"]
        elif k == "calloc":
            if s.get("ovf"):
                # n * size overflows: NULL, one more calloc call, no block
                # (through a volatile: clang -O2 drops an allocation whose
                # result is only tested, and takes it as not NULL)
                L.append("\t\tif ((h9_sinkp = calloc(h9_n((size_t)1 << 62), h9_n(8)))) abort();")
            line = "\t\tp = calloc(h9_n(%d), h9_n(%d));" % (s["nmemb"], s["esize"])
        elif k == "realloc_null":
            # (a constant NULL: the compiler makes realloc(0, n) a malloc)
            line = "\t\tp = realloc(h9_null, h9_n(%d));" % s["size"]
        elif k == "reallocarray":
            if s["size0"] is not None:
                L.append("\t\tp = malloc(h9_n(%d));" % s["size0"])
                s["line0"] = len(L)
                L.append("\t\th9_fill(p, %d, 0);" % s["size0"])
            if s["ovf"]:
                L.append("\t\tif ((h9_sinkp = reallocarray(p, h9_n((size_t)1 << 62), h9_n(8)))) abort();")
            line = "\t\tp = reallocarray(%s, h9_n(%d), h9_n(%d));" % (
                "p" if s["size0"] is not None else "h9_null", s["nmemb"], s["esize"])
        elif k == "memalign":
            line = "\t\tp = memalign(%d, h9_n(%d));" % (s["align"], s["size"])
        elif k == "valloc":
            line = "\t\tp = valloc(h9_n(%d));" % s["size"]
        elif k == "pvalloc":
            line = "\t\tp = pvalloc(h9_n(%d));" % s["asked"]
        elif k == "realloc":
            L.append("\t\tp = malloc(h9_n(%d));" % s["size0"])
            s["line0"] = len(L)
            L.append("\t\th9_fill(p, %d, 0);" % s["size0"])
            line = "\t\tp = realloc(p, h9_n(%d));" % s["size"]
        elif k == "posix_memalign":
            line = "\t\tif (posix_memalign(&p, %d, h9_n(%d))) p = 0;" % (s["align"], s["size"])
        elif k == "aligned_alloc":
            line = "\t\tp = aligned_alloc(%d, h9_n(%d));" % (s["align"], s["size"])
        elif k == "strdup":
            line = "\t\tp = strdup(h9_str + %d);" % (5000 - (s["size"] - 1))
        elif k == "new":
            line = "\t\tp = new char[h9_n(%d)];" % s.get("asked", s["size"])
        elif k == "newobj":
            line = "\t\tp = new H9Obj;"
        L.append(line)
        site_line[sid] = len(L)
        L.append("\t\th9_put(%d + i, p, %d, %d);" % (s["first"], s["size"],
                 1 if k in ("calloc", "strdup") else 0))
        L.append("\t\tacc += i;")
        L.append("\t}")
    for c in f["children"]:
        if c == recf:
            L.append("\tacc += %s(%d);" % (funcs[c]["name"], recdepth))
        else:
            L.append("\tacc += %s();" % funcs[c]["name"])
        call_line[(fi, c)] = len(L)
    L.append("\treturn acc + h9_sink(acc);")
    L.append("}")
    L.append("")


# order: in each file, a function after the static/inline ones it calls
hdr = ["#include <stddef.h>", "void h9_put(int id, void *p, size_t n, int filled);",
       "size_t h9_n(size_t n);", "int h9_sink(int x);", "void h9_fill(void *p, size_t n, int c);",
       "extern char h9_str[];"]
if h10:
    hdr.append("extern void *volatile h9_null;")
    hdr.append("extern void *volatile h9_sinkp;")
if cxx:
    hdr.append("struct H9Obj { char c[48]; };")
for i, f in enumerate(funcs):
    if f["kind"] == "plain":
        hdr.append(decl(f).replace("__attribute__((noinline)) ", "") + ";")
for fn in files:
    L = files[fn]
    L += ["#define _GNU_SOURCE", "#include <stdlib.h>", "#include <string.h>",
          '#include "gen.h"', ""]
    if h10:
        L.insert(3, "#include <malloc.h>")
    # forward declarations of static ones
    for i, f in enumerate(funcs):
        if f["file"] == fn and f["kind"] != "plain":
            L.append(decl(f) + ";")
    L.append("")
    if fn == "main.c":
        continue
    for i, f in enumerate(funcs):
        if f["file"] == fn:
            emit_func(i, L, fn)

M = files["main.c"]
M += (["#include <sys/wait.h>"] if h10 else []) + [
      "#include <pthread.h>", "#include <signal.h>", "#include <stdio.h>",
      "#include <unistd.h>", "#include <fcntl.h>", "#include <stdint.h>", ""]
M.append("void *h9_slot[%d];" % max(slot_n, 1))
M.append("__thread void *h9_tls[%d];" % max(slot_n, 1))
if h10:
    M.append("void *volatile *h9_tstk[8];")
    M.append("void **h9_ttls[8];")
    M.append("void *volatile h9_null;")
    M.append("void *volatile h9_sinkp;")
    M.append("int h9_tid[8];")
    M.append("static int h9_snap;")
    M.append("static const signed char h9_own[] = {%s0};" % "".join(
        "%d, " % b.get("thread", -1) for b in blocks))
M.append("char h9_str[5001];")
M.append("static volatile size_t h9_one = 1;")
M.append("size_t h9_n(size_t n) { return n * h9_one; }")
M.append("int h9_sink(int x) { return (int)(x * h9_one) & 1; }")
M.append("void h9_fill(void *p, size_t n, int c) { if (p) memset(p, 0xa5 + c, n); }")
M.append("void h9_put(int id, void *p, size_t n, int filled)")
M.append("{")
M.append("\tif (!filled && p)")
M.append("\t\tmemset(p, 0xa5, n);")
M.append("\th9_slot[id] = p;")
M.append("}")
M.append("")
for i, f in enumerate(funcs):
    if f["file"] == "main.c":
        emit_func(i, M, "main.c")
# fate tables
frees = [b["id"] for b in blocks if b["fate"] == "free"]
M.append("static const int h9_links[][3] = {%s{-1, -1, -1}};" %
         "".join("{%d, %d, %d}, " % l for l in links))
M.append("static const char h9_fate[] = \"%s\";" % "".join(
    {"keep": "k", "free": "FfO"[(sites[b["site"]]["kind"] != "new") + (sites[b["site"]]["kind"] == "newobj")], "lost": "l", "stack": "s", "tls": "t",
     "interior": "i", "viablock": "v", "gone": "g", "tstack": "T", "ttls": "U",
     "reg": "r"}[b["fate"]] for b in blocks))
M.append("static int h9_addrfd = -1;")
M.append("static void h9_say(const char *name, long id, const void *p)")
M.append("{")
M.append("\tchar buf[128];")
M.append("\tint n = snprintf(buf, sizeof buf, \"%s %ld %p\\n\", name, id, p);")
M.append("\tif (h9_addrfd >= 0 && write(h9_addrfd, buf, n) != n) abort();")
M.append("}")
if reuse:
    M.append("__attribute__((noinline)) static void *h9_reuser(void)")
    M.append("{")
    M.append("\tvoid *p = malloc(h9_n(%d));" % reuse["size"])
    reuse_line = len(M)
    M.append("\th9_fill(p, %d, 0);" % reuse["size"])
    M.append("\treturn p;")
    M.append("}")
if regblk:
    M.append("__attribute__((noinline)) static void *h9_take(int i)")
    M.append("{")
    M.append("\tvoid *p = h9_slot[i];")
    M.append("\th9_slot[i] = 0;")
    M.append("\treturn p;")
    M.append("}")
    M.append("__attribute__((noinline, used)) void h9_leaf(void *p)")
    M.append("{")
    M.append("\t__asm__ volatile(\"\" : : \"r\"(p) : \"memory\");")
    M.append("}")
if child:
    M.append("void *h9_cslot[%d];" % child["count"])
    M.append("__attribute__((noinline)) static void h9_child(const char *an)")
    M.append("{")
    M.append("\tchar buf[4200];")
    M.append("\tint fd = -1;")
    M.append("\tif (an) {")
    M.append("\t\tsnprintf(buf, sizeof buf, \"%s.child\", an);")
    M.append("\t\tfd = open(buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);")
    M.append("\t}")
    M.append("\tfor (int i = 0; i < %d; i++) {" % child["count"])
    M.append("\t\tvoid *p = malloc(h9_n(%d));" % child["size"])
    child["line"] = len(M)
    M.append("\t\th9_fill(p, %d, 0);" % child["size"])
    M.append("\t\th9_cslot[i] = p;")
    M.append("\t\tint n = snprintf(buf, sizeof buf, \"cblk %d %p\\n\", i, p);")
    M.append("\t\tif (fd >= 0 && write(fd, buf, n) != n) abort();")
    M.append("\t}")
    M.append("\tfor (int i = 0; i < %d; i++) {" % child["frees"])
    M.append("\t\tfree(h9_cslot[i]);")
    M.append("\t\th9_cslot[i] = 0;")
    M.append("\t}")
    M.append("\tif (fd >= 0) close(fd);")
    M.append("}")
M.append("__attribute__((noinline)) static void h9_fates(void **loc)")
M.append("{")
M.append("\tint i;")
M.append("\tfor (i = 0; i < %d; i++)" % len(blocks))
M.append("\t\tif (h9_slot[i]) h9_say(\"blk\", i, h9_slot[i]);")
M.append("\tfor (i = 0; h9_links[i][0] >= 0; i++)")
M.append("\t\t((void **)h9_slot[h9_links[i][0]])[h9_links[i][2]] = h9_slot[h9_links[i][1]];")
M.append("\tfor (i = 0; i < %d; i++) {" % len(blocks))
M.append("\t\tswitch (h9_fate[i]) {")
M.append("\t\tcase 'f': free(h9_slot[i]); h9_slot[i] = 0; break;")
if cxx:
    M.append("\t\tcase 'F': delete[] (char *)h9_slot[i]; h9_slot[i] = 0; break;")
    M.append("\t\tcase 'O': delete (H9Obj *)h9_slot[i]; h9_slot[i] = 0; break;")
M.append("\t\tcase 'l': case 'v': h9_slot[i] = 0; break;")
M.append("\t\tcase 's': loc[i] = h9_slot[i]; h9_slot[i] = 0; break;")
M.append("\t\tcase 't': h9_tls[i] = h9_slot[i]; h9_slot[i] = 0; break;")
M.append("\t\tcase 'i': h9_slot[i] = (char *)h9_slot[i] + 1; break;")
if h10:
    M.append("\t\tcase 'T': h9_tstk[h9_own[i]][i] = h9_slot[i]; h9_slot[i] = 0; break;")
    M.append("\t\tcase 'U': h9_ttls[h9_own[i]][i] = h9_slot[i]; h9_slot[i] = 0; break;")
M.append("\t\t}")
M.append("\t}")
if reuse:
    M.append("\th9_slot[%d] = h9_reuser();" % reuse["id"])
    reuse_call = len(M)
    M.append("\th9_say(\"blk\", %d, h9_slot[%d]);" % (reuse["id"], reuse["id"]))
M.append("}")
M.append("__attribute__((noinline)) static void h9_scrub(void)")
M.append("{")
M.append("\tvolatile char buf[65536];")
M.append("\tfor (size_t i = 0; i < sizeof buf; i++) buf[i] = 0;")
M.append("}")
M.append("static pthread_mutex_t h9_mu = PTHREAD_MUTEX_INITIALIZER;")
M.append("static pthread_cond_t h9_cv = PTHREAD_COND_INITIALIZER;")
M.append("static int h9_started, h9_go;")
thread_sites = {}
for t in range(nthreads):
    M.append("__attribute__((noinline)) void *h9_thr%d(void *arg)" % t)
    M.append("{")
    M.append("\tint acc = 0;")
    for c in rootch["h9_thr%d" % t]:
        if c == recf:
            M.append("\tacc += %s(%d);" % (funcs[c]["name"], recdepth))
        else:
            M.append("\tacc += %s();" % funcs[c]["name"])
        call_line[("h9_thr%d" % t, c)] = len(M)
    if h10:
        M.append("\tvoid *volatile tloc[%d];" % max(slot_n, 1))
        M.append("\tfor (int i = 0; i < %d; i++) tloc[i] = 0;" % max(slot_n, 1))
        M.append("\th9_tstk[%d] = tloc;" % t)
        M.append("\th9_ttls[%d] = h9_tls;" % t)
        M.append("\th9_tid[%d] = gettid();" % t)
    M.append("\th9_scrub();")
    M.append("\tpthread_mutex_lock(&h9_mu);")
    M.append("\th9_started++;")
    M.append("\tpthread_cond_broadcast(&h9_cv);")
    M.append("\twhile (!h9_go) pthread_cond_wait(&h9_cv, &h9_mu);")
    M.append("\tpthread_mutex_unlock(&h9_mu);")
    M.append("\treturn (void *)(intptr_t)acc;")
    M.append("}")
M.append("int main(int argc, char **argv)")
M.append("{")
M.append("\tvoid *volatile loc[%d];" % max(slot_n, 1))
M.append("\tint acc = 0;")
M.append("\tpthread_t th[%d];" % max(nthreads, 1))
M.append("\tconst char *an = getenv(\"HUNT9_ADDRS\");")
M.append("\tfor (int i = 0; i < 5000; i++) h9_str[i] = 'a' + i % 26;")
M.append("\tif (an) h9_addrfd = open(an, O_WRONLY | O_CREAT | O_TRUNC, 0644);")
M.append("\tfor (int i = 0; i < %d; i++) loc[i] = 0;" % max(slot_n, 1))
if h10:
    # HUNT10_SNAP: a signal snapshot after main's first call, one after the fates
    M.append("\th9_snap = getenv(\"HUNT10_SNAP\") != 0;")
for c in rootch["main"]:
    if c == recf:
        M.append("\tacc += %s(%d);" % (funcs[c]["name"], recdepth))
    else:
        M.append("\tacc += %s();" % funcs[c]["name"])
    call_line[("main", c)] = len(M)
    if h10 and c == rootch["main"][0]:
        M.append("\tif (h9_snap) raise(SIGUSR2);")
if h10 and not rootch["main"]:
    M.append("\tif (h9_snap) raise(SIGUSR2);")
for t in range(nthreads):
    M.append("\tpthread_create(&th[%d], 0, h9_thr%d, 0);" % (t, t))
M.append("\tpthread_mutex_lock(&h9_mu);")
M.append("\twhile (h9_started < %d) pthread_cond_wait(&h9_cv, &h9_mu);" % nthreads)
M.append("\tpthread_mutex_unlock(&h9_mu);")
M.append("\th9_fates((void **)loc);")
fates_call = len(M)
if h10:
    for t in range(nthreads):
        M.append("\th9_say(\"ttls\", %d, h9_ttls[%d]);" % (t, t))
        M.append("\th9_say(\"tstk\", %d, (void *)h9_tstk[%d]);" % (t, t))
        M.append("\th9_say(\"tid\", %d, (void *)(intptr_t)h9_tid[%d]);" % (t, t))
    M.append("\th9_say(\"tid\", -1, (void *)(intptr_t)getpid());")
M.append("\th9_say(\"sym\", 0, h9_slot);")
M.append("\th9_say(\"tls\", 0, h9_tls);")
M.append("\th9_say(\"loc\", 0, (void *)loc);")
M.append("\tif (h9_addrfd >= 0) close(h9_addrfd);")
M.append("\th9_scrub();")
if h10:
    M.append("\tif (h9_snap) raise(SIGUSR2);")
if child:
    M.append("\tif (h9_snap) {")
    M.append("\t\tpid_t pid = fork();")
    M.append("\t\tif (pid == 0) {")
    M.append("\t\t\th9_child(an);")
    child["call"] = len(M)
    M.append("\t\t\traise(SIGUSR2);")
    M.append("\t\t\t_exit(0);")
    M.append("\t\t}")
    M.append("\t\tif (pid > 0) waitpid(pid, 0, 0);")
    M.append("\t}")
if regblk:
    M.append("\th9_leaf(h9_take(%d));" % regblk["id"])
if end == "gcore":
    M.append("\tif (write(1, \"ready\\n\", 6) != 6) return 1;")
    M.append("\tchar c;")
    M.append("\tif (read(0, &c, 1) < 0) return 1;")
elif end == "abort":
    M.append("\tabort();")
M.append("\tif (loc[0] == (void *)1) acc++;")
M.append("\treturn acc & 0;")
M.append("}")

for fn, L in files.items():
    with open(os.path.join(out, fn + ("c" if cxx else "")), "w") as fh:
        fh.write("\n".join(L) + "\n")
with open(os.path.join(out, "gen.h"), "w") as fh:
    fh.write("\n".join(hdr) + "\n")


# chains: innermost first, up to the root; the recursion's extra frames
def chain_of(fi):
    ch = []
    cur = fi
    while True:
        f = funcs[cur]
        p = f["parent"]
        pname = p if isinstance(p, str) else funcs[p]["name"]
        pfile = "main.c" if isinstance(p, str) else funcs[p]["file"]
        ln = call_line[(p, cur)]
        if cur == recf:
            # the recursion: d frames at rec_line, the entry at its parent's call
            ch.extend([(f["name"], f["file"], rec_line)] * recdepth)
        ch.append((pname, pfile, ln))
        if isinstance(p, str):
            return ch
        cur = p


truth_sites = []
for s in sites:
    if s["func"] is None:
        # the reuse block (h10), allocated by h9_reuser in h9_fates
        ch = [("h9_reuser", "main.c", reuse_line), ("h9_fates", "main.c", reuse_call),
              ("main", "main.c", fates_call)]
        truth_sites.append({"id": s["id"], "kind": "malloc", "function": "h9_reuser",
                            "file": "main.c", "line": reuse_line, "chain": ch,
                            "size": s["size"], "count": 1, "fkind": "static"})
        continue
    f = funcs[s["func"]]
    chain = [(f["name"], f["file"], site_line[s["id"]])] + chain_of(s["func"])
    d = {"id": s["id"], "kind": s["kind"], "function": f["name"], "file": f["file"],
         "line": site_line[s["id"]], "chain": chain, "size": s["size"],
         "count": s["count"], "fkind": f["kind"]}
    if "line0" in s:
        d["line0"] = s["line0"]
        d["size0"] = s["size0"]
        d["chain0"] = [(f["name"], f["file"], s["line0"])] + chain_of(s["func"])
    if "align" in s:
        d["align"] = s["align"]
    truth_sites.append(d)
# the allocation log in program order: events (op, site, size)
# program order: main's subtree depth first, then each thread's (run after)
log = []
# h10: the calls of each entry point (the statistics' "calls"), and where in
# the log the first signal snapshot falls (after main's first call)
calls = {}
snap1 = 0


def call(name, n=1):
    calls[name] = calls.get(name, 0) + n


def walk(fi):
    f = funcs[fi]
    if fi == recf:
        pass
    for sid in f["sites"]:
        s = sites[sid]
        for j in range(s["count"]):
            k = s["kind"]
            if k in ("realloc", "reallocarray") and s.get("size0") is not None:
                log.append(("alloc", sid, s["size0"], "malloc", True))
                log.append(("free", sid, s["size0"], k, True))
                if s["size"]:
                    log.append(("alloc", sid, s["size"], k, False))
                call("malloc")
                call(k)
            else:
                log.append(("alloc", sid, s["size"], s["kind"], False))
                call({"strdup": "malloc", "new": "malloc", "newobj": "malloc",
                      "realloc_null": "realloc"}.get(k, k))
            if s.get("ovf"):
                call(k)
    for c in f["children"]:
        walk(c)


for r in roots:
    for c in rootch[r]:
        walk(c)
        if r == "main" and c == rootch["main"][0]:
            snap1 = len(log)
for b in blocks:
    if b["fate"] == "free":
        log.append(("free", b["site"], b["size"], "free", False))
        call("free")
if reuse:
    log.append(("alloc", reuse["site"], reuse["size"], "malloc", False))
    call("malloc")
truth = {"seed": seed, "end": end, "links": links, "threads": nthreads, "sites": truth_sites,
         "blocks": blocks, "log": log, "recf": funcs[recf]["name"],
         "recdepth": recdepth, "h10": h10, "calls": calls, "snap1": snap1,
         "reg": regblk["id"] if regblk else None, "reuse": reuse, "child": child,
         "functions": {f["name"]: {"file": f["file"], "kind": f["kind"]} for f in funcs}}
if cxx:
    for d in truth_sites:
        for k in ("chain", "chain0"):
            if k in d:
                d[k] = [(c[0], c[1] + "c", c[2]) for c in d[k]]
        d["file"] += "c"
with open(os.path.join(out, "truth.json"), "w") as fh:
    json.dump(truth, fh, indent=1)
