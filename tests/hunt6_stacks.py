#!/usr/bin/env python3
"""hunt6_stacks.py JSON SRC DEPTH TRAMP - every block of tests/prog/hunt6_stacks.c
in mprof-core's --format json --blocks report has the frames its size says
(see the program's comment), at the lines of SRC's MARK comments. DEPTH is
HEAPANN_DEPTH (frames kept of rec()'s 101). TRAMP=1: libc's symbol table is
there (libc6-dbg), so the signal trampoline and makecontext's are named
(__restore_rt, __start_context). Exits 1
with the first few wrong ones."""
import json
import re
import sys

doc = json.load(open(sys.argv[1]))
marks = {}
for no, text in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"MARK:(\w+)", text)
    if m:
        marks[m.group(1)] = no
depth = int(sys.argv[3])
# TRAMP=nofde: built without unwind tables, the coroutine's function stepped
# by its frame pointer: its return address, the trampoline's first byte,
# follows no call, so the stack ends at co_body (whole); the handler's as 1
nofde = sys.argv[4] == "nofde"
tramp = sys.argv[4] in ("1", "nofde")


def fl(f):
    return "%s:%s" % (f.get("function"), f.get("line"))


def want(size):
    """The frames a block of SIZE must have (a list of 'fn:line', or a
    function returning an error string for the frames)."""
    if size == 301:
        return ["after_jmp:%d" % marks["after_jmp"], "main:%d" % marks["main_jmp"]], False
    if size == 17:
        return ["rec:%d" % marks["rec_a"]] + ["rec:%d" % marks["rec_r"]] * (depth - 1), True
    if size == 99:
        w = ["handler:%d" % marks["handler"]]
        if tramp:
            w.append("__restore_rt:None")
        return w, False
    if 1000 <= size < 5000:
        d, n = (size % 1000) // 10, size % 10
        w = ["co_alloc:%d" % marks["co_alloc"],
             "co_rec:%d" % marks["co_rec_a" if n < 5 else "co_rec_b"]]
        w += ["co_rec:%d" % marks["co_rec_r"]] * d
        w.append("co_body:%d" % marks["co_body"])
        if nofde:
            return w, True
        if tramp:
            w.append("__start_context:None")
        return w, tramp
    return None, False


stacks = doc["stacks"]
bad, n, handled = [], 0, 0
for b in doc["block_list"]:
    w, whole = want(b["size"])
    if w is None:
        continue
    n += 1
    frames = stacks[b["stack"]]["frames"]
    got = [fl(f) for f in frames]
    ok = got[:len(w)] == w and (not whole or len(got) == len(w))
    if b["size"] == 99:
        handled += 1
        ok = ok and "main:%d" % marks["raise"] in got
    if not ok:
        bad.append("size %d: want %s%s, got %s" % (b["size"], w, " exactly" if whole else "", got))

if bad:
    sys.stderr.write("\n".join(bad[:5]) + "\n%d of %d blocks wrong\n" % (len(bad), n))
    sys.exit(1)
