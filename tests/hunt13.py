#!/usr/bin/env python3
"""hunt13.py - tests/hunt10.py's generated programs and checks, built in more
ways (tests/run-hunt13.sh): extra compiler flags, the other symbolizer, and an
after-step on the built program.

usage: hunt13.py [--cflags FLAGS] [--symbolizer dw|gdb]
                 [--post none|debuglink|gz|strip|stripall] [--truth full|names]
                 [hunt10.py's options] SEED...
--cflags: added to hunt9.py's "-g -ON -pthread" (e.g. "-flto", "-gdwarf-4",
"-fomit-frame-pointer", "-gsplit-dwarf"); --post debuglink: the debug info
moved to prog.debug (objcopy --only-keep-debug), the program stripped and
given a .gnu_debuglink to it; --post gz: the debug sections compressed by
objcopy --compress-debug-sections=zlib; strip: strip --strip-debug (the
symbol table stays); stripall: strip --strip-all. --truth names: the truth's
chains keep function names only (a build without -g, or stripped).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hunt9  # noqa: E402
import hunt10  # noqa: E402


def post_debuglink(d, exe):
    dbg = exe + ".debug"
    subprocess.run(["objcopy", "--only-keep-debug", exe, dbg], check=True)
    subprocess.run(["objcopy", "--strip-debug", "--strip-unneeded",
                    "--add-gnu-debuglink=" + dbg, exe], check=True, cwd=d)


def post_gz(d, exe):
    subprocess.run(["objcopy", "--compress-debug-sections=zlib", exe], check=True)


def post_strip(d, exe):
    subprocess.run(["strip", "--strip-debug", exe], check=True)


def post_stripall(d, exe):
    subprocess.run(["strip", "--strip-all", exe], check=True)


def truth_names(T):
    """No debug info: frames are named from the symbol table, with no file or
    line; the fork child's check (its lines) is left out."""
    for s in T["sites"]:
        for k in ("chain", "chain0"):
            if k in s:
                s[k] = [(c[0], "", None) for c in s[k]]
    T["child"] = None


POSTS = {"strip": post_strip, "stripall": post_stripall, "none": None, "debuglink": post_debuglink, "gz": post_gz}


def main():
    av = sys.argv[1:]
    own = {"--cflags": "", "--symbolizer": "dw", "--post": "none", "--truth": "full"}
    rest = []
    i = 0
    while i < len(av):
        if av[i] in own:
            own[av[i]] = av[i + 1]
            i += 2
        else:
            rest.append(av[i])
            i += 1
    sys.argv[1:] = rest
    if own["--symbolizer"] != "dw":
        hunt9.MPARGS[:] = ["--symbolizer", own["--symbolizer"]]
    tagx = " ".join(x for x in (own["--cflags"],
                                "sym=" + own["--symbolizer"] if own["--symbolizer"] != "dw" else "",
                                "post=" + own["--post"] if own["--post"] != "none" else "") if x)

    def setup(a):
        hunt10.setup(a)
        a.cflags = own["--cflags"]
        a.post = POSTS[own["--post"]]
        a.tagx = tagx
        if own["--truth"] == "names":
            a.fixtruth = truth_names
    hunt9.main(prefix="hunt13.", setup=setup, more=hunt10.extra)


if __name__ == "__main__":
    main()
