#!/usr/bin/env python3
"""lostcmp.py - --report=lost of tests/prog/lost_prog.c against valgrind memcheck,
shared by tests/run-lost.sh and tests/run-snapshot.sh (one copy of the harness).

  lostcmp.py compare MEMCHECK_LOG JSON   the loss records whose first frame is in
      lost_prog.c, keyed by category and the program's frames (function:line down to
      main), summed on each side (memcheck splits a record when one line has two
      call sites); prints the differences, exits 1 when there are some or nothing
      was compared.
  lostcmp.py totals JSON CATEGORY BLOCKS BYTES   the category's records whose first
      frame is in lost_prog.c add up to what the program knows.
"""
import json, re, sys
from collections import defaultdict


def compare(argv):
    def key_of(frames):
        out = []
        for fn, fl, ln in frames:
            if fl != "lost_prog.c":
                continue
            out.append("%s:%s" % (fn, ln))
            if fn == "main":
                break
        return tuple(out)

    mc = defaultdict(lambda: [0, 0])
    rec = None
    hdr = re.compile(r"==\d+== ([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes in ([\d,]+) blocks are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record")
    frm = re.compile(r"==\d+==    (?:at|by) 0x[0-9A-F]+: (\S+) \(([^:()]+):(\d+)\)")
    def flush(rec):
        if rec and rec[3] and rec[3][0][1] == "lost_prog.c":
            k = (rec[0], key_of(rec[3]))
            mc[k][0] += rec[1]
            mc[k][1] += rec[2]
    for line in open(argv[0]):
        m = hdr.match(line)
        if m:
            flush(rec)
            # "N (D direct, I indirect) bytes": the record's own bytes are D
            own = m.group(2) or m.group(1)
            rec = [m.group(4), int(m.group(3).replace(",", "")), int(own.replace(",", "")), []]
            continue
        m = frm.match(line)
        if m and rec is not None:
            if m.group(1) in ("malloc", "calloc", "realloc"):
                continue
            rec[3].append((m.group(1), m.group(2), m.group(3)))
            continue
        if rec is not None and not line.strip("= 0123456789\n"):
            flush(rec)
            rec = None
    flush(rec)

    ours = defaultdict(lambda: [0, 0])
    d = json.load(open(argv[1]))
    for r in d["lost"]["records"]:
        fr = [(f.get("function"), (f.get("file") or "").rsplit("/", 1)[-1], f.get("line")) for f in r["frames"]]
        if not fr or fr[0][1] != "lost_prog.c":
            continue
        k = (r["category"], key_of(fr))
        ours[k][0] += r["blocks"]
        ours[k][1] += r["bytes"]

    bad = 0
    for k in sorted(set(mc) | set(ours)):
        a, b = mc.get(k, [0, 0]), ours.get(k, [0, 0])
        if a != b:
            bad = 1
            print("    # %s %s: memcheck %d blocks %d bytes, mprof-core %d blocks %d bytes" %
                  (k[0], " < ".join(k[1]), a[0], a[1], b[0], b[1]))
    if not mc:
        print("    # no loss records of lost_prog.c in the memcheck log")
        bad = 1
    return bad


def totals(argv):
    d = json.load(open(argv[0]))
    b = y = 0
    for r in d["lost"]["records"]:
        if r["category"] == argv[1] and r["frames"] and (r["frames"][0].get("file") or "").endswith("/lost_prog.c"):
            b += r["blocks"]; y += r["bytes"]
    ok = (b, y) == (int(argv[2]), int(argv[3]))
    if not ok:
        print("    # %s: %d blocks %d bytes" % (argv[1], b, y))
    return 0 if ok else 1


if __name__ == "__main__":
    cmds = {"compare": compare, "totals": totals}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.stderr.write("usage: lostcmp.py compare LOG JSON | totals JSON CATEGORY BLOCKS BYTES\n")
        sys.exit(2)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]))
