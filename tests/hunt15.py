#!/usr/bin/env python3
"""hunt15.py - helpers of tests/run-hunt15.sh.

  hunt15.py site REPORT_TXT 'FUNCTION (FILE:LINE)'
      prints "BYTES BLOCKS": the stacks of mprof-core's default text report
      that hold a frame naming that function at that line, summed.
  hunt15.py want OUT NAME
      prints "BYTES BLOCKS": the "site NAME SIZE" lines of a program's output.
  hunt15.py raw REPORT_TXT
      prints the frames (of either report) whose function still reads as a
      mangled Rust name or with a legacy hash, an escape or a crate
      disambiguator ("_ZN", "_R", "::h" and 16 hex digits, "$LT$",
      "alloc[fdfd2bd8633a6659]"), one a line.
  hunt15.py first REPORT_TXT
      prints each stack's first frame (its allocation site), one a line.
  hunt15.py leakpath LEAKS_TXT FUNCTION
      prints "BYTES BLOCKS": the rows of the memory leak table whose path
      names FUNCTION, summed.
"""
import re
import sys

HEAD = re.compile(r"^#\d+: ([\d,]+) bytes (?:\([^)]*\) )?in ([\d,]+) blocks?")
RAW = re.compile(r"(^|[\s<(])(_ZN\d|_R[A-Z])|::h[0-9a-f]{16}\b|\$(LT|GT|u7b|u20|C|RF)\$|\w\[[0-9a-f]{16}\]")


def site(path, frame):
    nbytes = nblocks = 0
    cur = None
    for line in open(path, errors="replace"):
        m = HEAD.match(line)
        if m:
            cur = [int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), False]
            continue
        if cur and not cur[2] and line.strip().startswith(frame + " "):
            nbytes += cur[0]
            nblocks += cur[1]
            cur[2] = True
    print(nbytes, nblocks)


def want(path, name):
    nbytes = nblocks = 0
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0] == "site" and f[1] == name:
            nbytes += int(f[2])
            nblocks += 1
    print(nbytes, nblocks)


def raw(path):
    for line in open(path, errors="replace"):
        if line.startswith("    ") and RAW.search(line):
            print(line.strip())

def first(path):
    want = False
    for line in open(path, errors="replace"):
        if HEAD.match(line):
            want = True
        elif want and line.startswith("    "):
            print(line.strip())
            want = False


def leakpath(path, function):
    nbytes = nblocks = 0
    rows = False
    for line in open(path, errors="replace"):
        if line.startswith("Memory leak table"):
            rows = True
        elif rows and not line.strip():
            break
        elif rows:
            f = line.split(None, 6)
            if len(f) == 7 and f[0][0].isdigit() and function in f[6].split(" <- "):
                nbytes += int(f[0].replace(",", ""))
                nblocks += int(f[2].replace(",", ""))
    print(nbytes, nblocks)


def main(argv):
    if len(argv) == 3 and argv[0] == "site":
        site(argv[1], argv[2])
    elif len(argv) == 3 and argv[0] == "want":
        want(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "raw":
        raw(argv[1])
    elif len(argv) == 2 and argv[0] == "first":
        first(argv[1])
    elif len(argv) == 3 and argv[0] == "leakpath":
        leakpath(argv[1], argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
