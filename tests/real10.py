#!/usr/bin/env python3
"""real10.py - the four categories of --report=lost against memcheck's, for
tests/run-real10.sh (real programs at exit).

  real10.py cats OURS_TXT MEMCHECK_LOG [SKIP_FN]
      prints one line per side, "CATEGORY BYTES BLOCKS;" four times, summed over
      the loss records (ours: '#N: X bytes in K blocks are CAT' and its frames;
      memcheck's: 'X bytes in K blocks are CAT in loss record' and its frames),
      leaving out the records whose stack holds the function SKIP_FN on both
      sides (a block whose category depends on where malloc put it).
      Exits 1, printing nothing, when OURS_TXT has no loss summary or
      MEMCHECK_LOG no "in use at exit" line.
"""
import re
import sys

CATS = ("definitely lost", "indirectly lost", "possibly lost", "still reachable")


def records(path, head, frame):
    """[(category, bytes, blocks, [function, ...])] of a report."""
    out, cur = [], None
    for line in open(path, errors="replace"):
        m = head.match(line)
        if m:
            cur = [m.group(3), int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), []]
            out.append(cur)
            continue
        f = frame.match(line) if cur else None
        if f:
            cur[3].append(f.group(1))
        elif cur and not line.strip():
            cur = None
    return out


def sums(recs, skip):
    tot = {c: [0, 0] for c in CATS}
    for cat, nbytes, nblocks, frames in recs:
        if skip and skip in frames:
            continue
        tot[cat][0] += nbytes
        tot[cat][1] += nblocks
    return "".join("%s %d %d;" % (c, tot[c][0], tot[c][1]) for c in CATS)


def main(argv):
    if len(argv) < 3 or argv[0] != "cats":
        sys.stderr.write(__doc__)
        return 2
    skip = argv[3] if len(argv) > 3 else None
    ours = records(argv[1],
                   re.compile(r"^#\d+: ([\d,]+) bytes in ([\d,]+) blocks are (definitely lost|indirectly lost|possibly lost|still reachable)$"),
                   re.compile(r"^    (\S+) "))
    mc = records(argv[2],
                 re.compile(r"^==\d+== (?:[\d,]+ \()?([\d,]+)(?: direct, [\d,]+ indirect\))? bytes in ([\d,]+) blocks are "
                            r"(definitely lost|indirectly lost|possibly lost|still reachable) in loss record"),
                 re.compile(r"^==\d+==    (?:at|by) 0x[0-9A-Fa-f]+: (\S+) "))
    # an empty side (a failed report, memcheck not run) must not compare
    # equal to another empty one
    if not any(re.match(r"^   still reachable: [\d,]+ bytes in [\d,]+ blocks$", l)
               for l in open(argv[1], errors="replace")):
        sys.stderr.write("real10.py: %s: no loss summary (the report failed?)\n" % argv[1])
        return 1
    if not any(re.match(r"^==\d+== +in use at exit: ", l) for l in open(argv[2], errors="replace")):
        sys.stderr.write("real10.py: %s: no 'in use at exit' line (memcheck did not run?)\n" % argv[2])
        return 1
    print(sums(ours, skip))
    print(sums(mc, skip))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
