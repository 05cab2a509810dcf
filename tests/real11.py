#!/usr/bin/env python3
"""real11.py - helpers of tests/run-real11.sh.

  real11.py nocr SRC DST [SRC DST ...]
      copies each x86-64 shared library SRC to DST with every valgrind client
      request (the 16-byte rotate preamble followed by xchg %rbx,%rbx) turned
      into 19 one-byte NOPs, and prints "DST N" (N requests removed). The
      preamble rotates %rdi by 128 bits in all, and the request's default
      result is in %rdx before it, so natively the copy runs as the original;
      under valgrind RUNNING_ON_VALGRIND is then 0 and VALGRIND_MALLOCLIKE_BLOCK
      does nothing: memcheck sees the program as it runs without valgrind.
      Exits 1 when a SRC holds no request.

  real11.py catsdiff OURS_TXT MEMCHECK_LOG
      prints "CATEGORY BYTES BLOCKS;" four times: ours less memcheck's, the
      sums of tests/real10.py cats (exit 1 as there when a side is empty).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real10  # noqa: E402

PREAMBLE = bytes.fromhex("48c1c70348c1c70d48c1c73d48c1c733")
REQUEST = PREAMBLE + bytes.fromhex("4887db")


def nocr(src, dst):
    """Copy src to dst without client requests; return how many there were."""
    data = bytearray(open(src, "rb").read())
    n = 0
    i = data.find(REQUEST)
    while i >= 0:
        data[i:i + len(REQUEST)] = b"\x90" * len(REQUEST)
        n += 1
        i = data.find(REQUEST, i + len(REQUEST))
    with open(dst, "wb") as f:
        f.write(data)
    return n


def catsdiff(ours_txt, mc_log):
    """The four categories' bytes and blocks, ours less memcheck's, or None."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if real10.main(["cats", ours_txt, mc_log]) != 0:
            return None
    lines = out.getvalue().splitlines()
    num = re.compile(r"([a-z ]+) (\d+) (\d+);")
    ours, mc = num.findall(lines[0]), num.findall(lines[1])
    return "".join("%s %d %d;" % (o[0], int(o[1]) - int(m[1]), int(o[2]) - int(m[2]))
                   for o, m in zip(ours, mc))


def main(argv):
    if len(argv) == 3 and argv[0] == "catsdiff":
        d = catsdiff(argv[1], argv[2])
        if d is None:
            return 1
        print(d)
        return 0
    if len(argv) < 3 or argv[0] != "nocr" or len(argv) % 2 != 1:
        sys.stderr.write(__doc__)
        return 2
    rc = 0
    for src, dst in zip(argv[1::2], argv[2::2]):
        n = nocr(src, dst)
        print(dst, n)
        if n == 0:
            sys.stderr.write("real11.py: %s: no valgrind client request found\n" % src)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
