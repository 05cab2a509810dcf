#!/usr/bin/env python3
"""folded.py - a small reader of folded stacks (flamegraph.pl's input) for
tests/run-folded.sh: checks the form of every line, then answers one question.

  folded.py FILE total          sum of the weights
  folded.py FILE lines          number of lines
  folded.py FILE weight FRAMES  weight of the one line whose stack ends with the
                                ';'-separated FRAMES (error when none or several)
  folded.py FILE roots          the distinct first frames, sorted, one per line

Form: "frame;frame;... WEIGHT", WEIGHT an integer after the last space, no empty
frame, no stack twice (identical stacks must have been aggregated). Exits 1 with
a message on stderr when the file or the question fails."""
import re
import sys


def fail(msg):
    sys.stderr.write("folded.py: %s\n" % msg)
    sys.exit(1)


def read(path):
    stacks = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.fullmatch(r"(.+) (\d+)\n", line)
            if not m:
                fail("%s:%d: not 'stack weight': %r" % (path, n, line))
            frames = m.group(1).split(";")
            if any(not fr for fr in frames):
                fail("%s:%d: empty frame" % (path, n))
            key = tuple(frames)
            if key in stacks:
                fail("%s:%d: stack repeated (not aggregated)" % (path, n))
            stacks[key] = int(m.group(2))
    return stacks


def main():
    if len(sys.argv) < 3:
        fail("usage: folded.py FILE total|lines|weight FRAMES|roots")
    stacks = read(sys.argv[1])
    q = sys.argv[2]
    if q == "total":
        print(sum(stacks.values()))
    elif q == "lines":
        print(len(stacks))
    elif q == "roots":
        print("\n".join(sorted({k[0] for k in stacks})))
    elif q == "weight" and len(sys.argv) == 4:
        want = tuple(sys.argv[3].split(";"))
        hits = [w for k, w in stacks.items() if k[-len(want):] == want]
        if len(hits) != 1:
            fail("%d lines end with %s" % (len(hits), sys.argv[3]))
        print(hits[0])
    else:
        fail("unknown question %s" % q)


main()
