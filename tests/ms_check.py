#!/usr/bin/env python3
"""ms_check.py - read a massif.out file for tests/run-massif-out.sh.

  ms_check.py FILE validate
      exit 0 when FILE follows the grammar massif-visualizer's parser takes (it
      is stricter than ms_print): exactly one "desc: " line, "cmd: ", "time_unit: "
      (i, ms or B), then per snapshot "#-----------", "snapshot=N" (0, 1, 2...),
      "#-----------", time=, mem_heap_B=, mem_heap_extra_B=, mem_stacks_B=,
      heap_tree=empty|detailed|peak, and for a tree its node lines: "nK: BYTES
      LABEL" indented by one space per depth, K lines below each (nothing else, no
      blank line). Also checks what ms_print asserts (a node never exceeds the
      snapshot's total), that times never decrease, that there is at most one peak,
      and that the children of a node add up to no more than the node.
  ms_check.py FILE snaps
      one line per snapshot: "N TIME HEAP EXTRA TREE".
  ms_check.py FILE paths [last|peak|N] [SUBSTR]
      one line per node of that snapshot's tree (default: the last): "BYTES PATH",
      PATH being the node's label and its ancestors' joined by " <- ", labels
      without their "0xADDR: " (addresses differ between tools); only paths whose
      every label contains SUBSTR when given. Sorted, for comparison with diff.
"""
import re
import sys

SEP = "#-----------"
NODE = re.compile(r"^( *)n(\d+): (\d+) (.*)$")


def fail(msg):
    sys.stderr.write("ms_check: %s\n" % msg)
    sys.exit(1)


def parse(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        fail("the file does not end with a newline")
    if len(lines) < 3:
        fail("too short")
    if not lines[0].startswith("desc: "):
        fail("line 1 is not 'desc: ...'")
    if not lines[1].startswith("cmd: "):
        fail("line 2 is not 'cmd: ...' (one desc line only)")
    m = re.match(r"^time_unit: (i|ms|B)$", lines[2])
    if not m:
        fail("line 3 is not 'time_unit: i|ms|B'")
    snaps = []
    i = 3
    fields = ["time", "mem_heap_B", "mem_heap_extra_B", "mem_stacks_B"]
    while i < len(lines):
        if lines[i] != SEP or i + 2 >= len(lines) or lines[i + 2] != SEP:
            fail("line %d: expected the snapshot separator" % (i + 1))
        m = re.match(r"^snapshot=(\d+)$", lines[i + 1])
        if not m or int(m.group(1)) != len(snaps):
            fail("line %d: expected snapshot=%d" % (i + 2, len(snaps)))
        s = {"n": len(snaps)}
        i += 3
        for f in fields:
            m = re.match(r"^%s=(\d+)$" % f, lines[i] if i < len(lines) else "")
            if not m:
                fail("line %d: expected %s=NUMBER" % (i + 1, f))
            s[f] = int(m.group(1))
            i += 1
        m = re.match(r"^heap_tree=(empty|detailed|peak)$", lines[i] if i < len(lines) else "")
        if not m:
            fail("line %d: expected heap_tree=empty|detailed|peak" % (i + 1))
        s["tree_kind"] = m.group(1)
        i += 1
        s["tree"] = None
        if s["tree_kind"] != "empty":
            total = s["mem_heap_B"] + s["mem_heap_extra_B"] + s["mem_stacks_B"]
            s["tree"], i = read_node(lines, i, 0, total)
            if s["tree"]["bytes"] != s["mem_heap_B"]:
                fail("snapshot %d: the tree's root is not mem_heap_B" % s["n"])
        snaps.append(s)
    if not snaps:
        fail("no snapshot")
    for a, b in zip(snaps, snaps[1:]):
        if b["time"] < a["time"]:
            fail("snapshot %d: time goes back" % b["n"])
    if sum(1 for s in snaps if s["tree_kind"] == "peak") > 1:
        fail("more than one peak")
    return m, snaps


def read_node(lines, i, depth, total):
    if i >= len(lines):
        fail("the tree ends early")
    m = NODE.match(lines[i])
    if not m or len(m.group(1)) != depth:
        fail("line %d: expected a node line at depth %d" % (i + 1, depth))
    node = {"k": int(m.group(2)), "bytes": int(m.group(3)), "label": m.group(4), "children": []}
    if node["bytes"] > total:
        fail("line %d: a node above the snapshot's total (ms_print dies)" % (i + 1))
    i += 1
    for _ in range(node["k"]):
        child, i = read_node(lines, i, depth + 1, total)
        node["children"].append(child)
    if sum(c["bytes"] for c in node["children"]) > node["bytes"]:
        fail("line %d: children add up to more than their node" % (i + 1))
    return node, i


def strip_addr(label):
    return re.sub(r"^0x[0-9A-Fa-f]+: ", "", label)


def paths(node, up, sub, out):
    for c in node["children"]:
        lab = strip_addr(c["label"])
        p = [lab] + up
        if sub is None or all(sub in x for x in p):
            out.append("%d %s" % (c["bytes"], " <- ".join(p)))
        paths(c, p, sub, out)


def main():
    if len(sys.argv) < 3:
        fail("usage: ms_check.py FILE validate|snaps|paths [last|peak|N] [SUBSTR]")
    _, snaps = parse(sys.argv[1])
    what = sys.argv[2]
    if what == "validate":
        return
    if what == "snaps":
        for s in snaps:
            print(s["n"], s["time"], s["mem_heap_B"], s["mem_heap_extra_B"], s["tree_kind"])
        return
    if what == "paths":
        which = sys.argv[3] if len(sys.argv) > 3 else "last"
        sub = sys.argv[4] if len(sys.argv) > 4 else None
        if which == "last":
            s = snaps[-1]
        elif which == "peak":
            s = [x for x in snaps if x["tree_kind"] == "peak"][0]
        else:
            s = snaps[int(which)]
        if s["tree"] is None:
            fail("snapshot %d has no tree" % s["n"])
        out = []
        paths(s["tree"], [], sub, out)
        for line in sorted(out):
            print(line)
        return
    fail("unknown command " + what)


main()
