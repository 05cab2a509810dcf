#!/usr/bin/env python3
"""jstack.py - assertions on mprof-core's JSON output, for the shell tests.

  jstack.py FILE total BLOCKS BYTES         the report's "blocks" and "bytes"
  jstack.py FILE stack BYTES BLOCKS F:L ... a stack with exactly these bytes and
                                            blocks whose innermost frames are the
                                            functions F at lines L (file basename
                                            ignored), in this order
  jstack.py FILE nstacks N                  number of stacks
  jstack.py FILE framed BLOCKS BYTES        blocks and bytes of the stacks that
                                            have frames (a static program's libc
                                            allocates a few blocks at start-up,
                                            before any unwinder can run)
Exit 0 when it holds; otherwise print why on stderr and exit 1."""
import json
import sys


def frames_match(frames, want):
    if len(frames) < len(want):
        return False
    for fr, w in zip(frames, want):
        fn, _, line = w.rpartition(":")
        if fr.get("function") != fn or str(fr.get("line")) != line:
            return False
    return True


def main():
    doc = json.load(open(sys.argv[1]))
    what = sys.argv[2]
    args = sys.argv[3:]
    if what == "total":
        got = (doc["blocks"], doc["bytes"])
        if got != (int(args[0]), int(args[1])):
            sys.exit("total: want blocks=%s bytes=%s, got %s" % (args[0], args[1], got))
        return
    if what == "framed":
        st = [s for s in doc["stacks"] if s["frames"]]
        got = (sum(s["blocks"] for s in st), sum(s["bytes"] for s in st))
        if got != (int(args[0]), int(args[1])):
            sys.exit("framed: want blocks=%s bytes=%s, got %s" % (args[0], args[1], got))
        return
    if what == "nstacks":
        if len(doc["stacks"]) != int(args[0]):
            sys.exit("nstacks: want %s, got %d" % (args[0], len(doc["stacks"])))
        return
    if what == "stack":
        nbytes, nblocks, want = int(args[0]), int(args[1]), args[2:]
        for st in doc["stacks"]:
            if st["bytes"] == nbytes and st["blocks"] == nblocks and frames_match(st["frames"], want):
                return
        sys.stderr.write("no stack with %d bytes, %d blocks, frames %s; stacks are:\n" % (nbytes, nblocks, want))
        for st in doc["stacks"]:
            fr = ["%s:%s" % (f.get("function"), f.get("line")) for f in st["frames"][:len(want) + 1]]
            sys.stderr.write("  %d bytes %d blocks %s\n" % (st["bytes"], st["blocks"], fr))
        sys.exit(1)
    sys.exit("unknown check " + what)


main()
