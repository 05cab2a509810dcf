#!/usr/bin/env python3
"""symgen.py - write a C program with many functions and inlined calls, for the
symbolizer's tests and benchmark (tests/run-symfast.sh, bench/symbolizers.sh).

usage: symgen.py NFUNCS NFILES OUTDIR
Writes OUTDIR/gen.h, OUTDIR/gen0.c .. gen{NFILES-1}.c, OUTDIR/main.c and
OUTDIR/expect.txt. Every f<i> (noinline) calls f<(7i+1) mod N>, inlines h<i%8>
(which inlines g<(i+1)%8>) and calls sink(); sink() lives in main.c so that no
call to it can be inlined. expect.txt has one line per f<i>: the function name,
then the chain (innermost first, "fn@FILE:LINE" joined by " < ", inlined frames
ending in "[i]") expected at each of its four call sites, tab-separated.
main() prints "ready", waits for a line on stdin and exits.
"""
import os
import sys

nf, nfiles, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
per = (nf + nfiles - 1) // nfiles
with open(os.path.join(out, "gen.h"), "w") as h:
    h.write("int sink(int);\n")
    for i in range(nf):
        h.write("int f%d(int);\n" % i)
expect = []
for k in range(nfiles):
    path = os.path.join(out, "gen%d.c" % k)
    lines = ['#include "gen.h"']
    gline, hgline, hsline = {}, {}, {}
    for j in range(8):
        lines.append("static inline int g%d(int x)" % j)
        lines.append("{")
        lines.append("\treturn sink(x + %d) * 3;" % j)
        gline[j] = len(lines)
        lines.append("}")
    for j in range(8):
        lines.append("static inline int h%d(int x)" % j)
        lines.append("{")
        lines.append("\tint r = g%d(x ^ %d);" % ((j + 1) % 8, j))
        hgline[j] = len(lines)
        lines.append("\tr += sink(r - %d);" % j)
        hsline[j] = len(lines)
        lines.append("\treturn r;")
        lines.append("}")
    for i in range(k * per, min(nf, (k + 1) * per)):
        j = i % 8
        lines.append("__attribute__((noinline)) int f%d(int x)" % i)
        lines.append("{")
        lines.append("\tint r = 0;")
        lines.append("\tif (x > %d)" % (i % 97))
        lines.append("\t\tr += f%d(x - 1);" % ((i * 7 + 1) % nf))
        lrec = len(lines)
        lines.append("\tr += h%d(x);" % j)
        lh = len(lines)
        lines.append("\tr += sink(r + %d);" % i)
        ls = len(lines)
        lines.append("\treturn r;")
        lines.append("}")
        g = (j + 1) % 8
        expect.append("\t".join([
            "f%d" % i,
            "f%d@%s:%d" % (i, path, lrec),
            "g%d@%s:%d[i] < h%d@%s:%d[i] < f%d@%s:%d" % (g, path, gline[g], j, path, hgline[j], i, path, lh),
            "h%d@%s:%d[i] < f%d@%s:%d" % (j, path, hsline[j], i, path, lh),
            "f%d@%s:%d" % (i, path, ls)]))
    with open(path, "w") as c:
        c.write("\n".join(lines) + "\n")
with open(os.path.join(out, "main.c"), "w") as m:
    m.write('#include <stdio.h>\n#include "gen.h"\n'
            "int sink(int x) { return x * 2 + 1; }\n"
            "int main(int argc, char **argv)\n{\n"
            '\tputs("ready");\n\tfflush(stdout);\n\tgetchar();\n'
            "\treturn argc > 5 ? f0(argc) : 0;\n}\n")
with open(os.path.join(out, "expect.txt"), "w") as e:
    e.write("\n".join(expect) + "\n")
