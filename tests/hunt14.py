#!/usr/bin/env python3
"""hunt14.py - helpers of tests/run-hunt14.sh.

  hunt14.py sum REPORT_TXT FILE:LINE CATEGORY
      prints "BYTES BLOCKS": the loss records of --report=lost's text report
      (or memcheck's log) in CATEGORY whose frames name FILE:LINE.
"""
import re
import sys

HEADS = (re.compile(r"^#\d+: ([\d,]+) bytes in ([\d,]+) blocks are (.+)$"),
         re.compile(r"^==\d+== (?:[\d,]+ \()?([\d,]+)(?: direct, [\d,]+ indirect\))? bytes in ([\d,]+) "
                    r"blocks are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record"))


def main(argv):
    if len(argv) != 4 or argv[0] != "sum":
        sys.stderr.write(__doc__)
        return 2
    where = "(" + argv[2] + ")"
    nbytes = nblocks = 0
    cur = None
    for line in open(argv[1], errors="replace"):
        m = HEADS[0].match(line) or HEADS[1].match(line)
        if m:
            cur = [m.group(3), int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), False]
            continue
        if cur is None:
            continue
        if where in line:
            if not cur[3] and cur[0] == argv[3]:
                nbytes += cur[1]
                nblocks += cur[2]
            cur[3] = True
        elif not line.strip("= 0123456789\n"):
            cur = None
    print(nbytes, nblocks)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
