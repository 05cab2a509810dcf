#!/usr/bin/env python3
"""nounwind.py JSON SRC MODE - the frames of each block of tests/prog/nounwind.c
(see its comment for the sizes) in mprof-core's --format json --blocks report,
at the lines of SRC's MARK comments. MODE exact: every frame as the program
knows them, the stack whole to _start (or to the thread's clone3, or to the
coroutine's trampoline); MODE prefix (code without frame pointers either: the
walk may stop early): the frames there are the first ones of the exact list,
never another. Exits 1 with the wrong ones."""
import json
import os
import re
import sys

doc = json.load(open(sys.argv[1]))
marks = {}
for no, text in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"MARK:(\w+)", text)
    if m:
        marks[m.group(1)] = no
exact = sys.argv[3] == "exact"
START = ["__libc_start_call_main", "__libc_start_main_impl", "_start"]


def want(size):
    """The frames a block of SIZE has: 'fn:line', 'fn' (no line compared), or
    the token SORT* (any number of libc frames with 'sort' in the name)."""
    m = marks
    if size == 101:
        return ["leaf:%d" % m["leaf"], "mid:%d" % m["mid"], "top:%d" % m["top"],
                "main:%d" % m["main_top"]] + START
    if size == 202:
        return ["cmp:%d" % m["cmp"], "SORT*", "sort_it:%d" % m["sort_it"],
                "main:%d" % m["main_sort"]] + START
    if size == 303:
        return ["th_leaf:%d" % m["th_leaf"], "th_main:%d" % m["th_main"], "start_thread", "clone3"]
    if size == 404:
        return ["back_cb:%d" % m["back_cb"], "nu_via_lib", "main:%d" % m["main_lib"]] + START
    if size == 505:
        return ["co_leaf:%d" % m["co_leaf"], "co_entry:%d" % m["co_entry"], "__start_context?"]
    return None


def match(frames, w):
    """How many of FRAMES match W from the start (the SORT* token eats the
    libc frames it can), and whether all of W was used."""
    i = 0
    for tok in w:
        if tok == "SORT*":
            while i < len(frames) and "sort" in (frames[i].get("function") or "") and \
                    os.path.basename(frames[i].get("module") or "") != "prog":
                i += 1
            continue
        opt = tok.endswith("?")
        tok = tok.rstrip("?")
        if i == len(frames):
            return i, opt
        fn, _, line = tok.partition(":")
        f = frames[i]
        ok = f.get("function") == fn
        if ok and line:
            ok = str(f.get("line")) == line
        if not ok:
            if opt:
                continue
            return i, False
        i += 1
    return i, True


stacks = doc["stacks"]
bad, seen = [], set()
for b in doc["block_list"]:
    w = want(b["size"])
    if w is None:
        continue
    seen.add(b["size"])
    frames = stacks[b["stack"]]["frames"]
    n, whole = match(frames, w)
    got = ["%s:%s" % (f.get("function"), f.get("line")) for f in frames]
    if n < len(frames) or (exact and not whole) or not frames:
        bad.append("size %d: want %s%s, got %s" % (b["size"], w, "" if exact else " (a prefix)", got))
    if any(f.get("function") == "main" for f in frames) and b["size"] in (303, 505):
        bad.append("size %d: main's frames on another stack: %s" % (b["size"], got))
missing = {101, 202, 303, 404, 505} - seen
if missing:
    bad.append("blocks missing: %s" % sorted(missing))
if bad:
    sys.stderr.write("\n".join(bad) + "\n")
    sys.exit(1)
