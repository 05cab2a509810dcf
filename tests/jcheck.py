#!/usr/bin/env python3
"""jcheck.py - a Python expression over mprof-core's JSON output and a test
program's KEY=VALUE facts, for the shell tests (run-corruption, run-firmware).

  jcheck.py JSON INFO EXPR

EXPR sees:
  d                the JSON document
  I, o             INFO's values (integers where they parse, else strings; lines
                   starting with # left out); o(prefix, key) is I[prefix + key]
  C                d["corruption"] (or {})
  hx(s)            a hex string as an integer (None for None)
  guard(a), damaged(a)
                   the corruption report's guard / damaged-header entry at a
  addr(a)          the --addr entry for a
  fn(x)            x's innermost function; fl(x, n): its first n (function, line)
  lost(cat, f)     bytes of the lost records of category cat whose innermost
                   function is f
Exit 0 when EXPR is true; otherwise say why on stderr and exit 1."""
import json
import sys


class Facts(dict):
    def __call__(self, prefix, key):
        return self[prefix + key]


def main():
    path, info, expr = sys.argv[1:4]
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit("%s: %s" % (path, e))
    I = Facts()
    for line in open(info):
        k, _, v = line.strip().partition("=")
        if not v or k.startswith("#"):
            continue
        try:
            I[k] = int(v, 0)
        except ValueError:
            I[k] = v
    C = d.get("corruption", {})

    def hx(s):
        return int(s, 16) if s else None

    def guard(a):
        return next((g for g in C.get("guards", []) if hx(g["address"]) == a), None)

    def damaged(a):
        return next((x for x in C.get("damaged", []) if hx(x["address"]) == a), None)

    def addr(a):
        return next((x for x in d.get("addresses", []) if hx(x["addr"]) == a), None)

    def fn(x):
        return x["frames"][0]["function"] if x and x.get("frames") else None

    def fl(x, n=1):
        return [(f["function"], f["line"]) for f in x["frames"][:n]] if x and x.get("frames") else None

    def lost(cat, f):
        return sum(r["bytes"] for r in d["lost"]["records"]
                   if r["category"] == cat and r["frames"] and r["frames"][0]["function"] == f)

    names = dict(d=d, I=I, o=I, C=C, hx=hx, guard=guard, damaged=damaged, addr=addr,
                 fn=fn, fl=fl, lost=lost)
    try:
        ok = eval(expr, names)
    except (KeyError, TypeError, IndexError, ValueError) as e:
        ok = False
        sys.stderr.write("%s: %r\n" % (type(e).__name__, e))
    if not ok:
        sys.stderr.write("failed: %s\n" % expr)
    sys.exit(0 if ok else 1)


main()
