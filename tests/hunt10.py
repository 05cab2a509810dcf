#!/usr/bin/env python3
"""hunt10.py - tests/hunt9.py's checks on programs randprog.py writes with
"h10" (tests/run-hunt10-gen.sh), and the checks of what those add.

usage: hunt10.py [--cc CC] [--opt N] [--pie|--no-pie] [--depth N] [--keep DIR]
                 [--cxx] SEED [SEED...]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hunt9  # noqa: E402
from hunt9 import check, mprof, key_frames  # noqa: E402


def hexint(v):
    return v if isinstance(v, int) else int(v or "0", 16)


def chain_ok(frames, chain, roots):
    """Do a block's frames from mprof-core name the truth chain (function,
    file, line) from the allocation site to the root?"""
    mk = key_frames(frames or [], roots)
    return hunt9.match_chain(mk, [tuple(c) for c in chain], True, True)


def unlisted(c, t):
    """Is thread t (the generator's number) missing from the core's threads?
    libheapann's snapshots leave out a thread that was running (README: its
    /proc syscall file gives no stack pointer); its stack is then no root."""
    ad = c["syms"].get("tstk%d" % t)
    if ad is None or c["T"]["end"] != "exit":
        return False
    return not any(r["kind"] == "stack" and hexint(r["start"]) <= ad < hexint(r["end"])
                   for r in c["J"]["lost"]["roots"])


def check_roots(c):
    """1. A block held only in a thread's stack, a thread's TLS, main's stack
    or TLS, or a register: --why names that root, its kind and thread."""
    T, addrs, syms = c["T"], c["addrs"], c["syms"]
    kinds = {"stack": "stack", "tls": "tls", "tstack": "stack", "ttls": "tls", "reg": "register"}
    bs = [b for b in T["blocks"] if b["fate"] in kinds and b["id"] in addrs]
    if not bs:
        return
    args = []
    for b in bs:
        args += ["--why", "%#x" % addrs[b["id"]]]
    JW, r = mprof(args + [c["exe"], c["core"]])
    ws = (JW or {}).get("why", [])
    bad = []
    for b, w in zip(bs, ws):
        fr = (w.get("chain") or [{}])[0].get("from") or {}
        want = kinds[b["fate"]]
        tid = syms.get("tid%d" % b["thread"]) if "thread" in b else syms.get("tid-1")
        ok = w.get("category") == "still reachable" and fr.get("kind") == want
        if want == "tls" and fr.get("symbol") != "h9_tls":
            ok = False
        if want == "tls" and fr.get("symbol_offset") != 8 * b["id"]:
            ok = False
        if want != "register" and tid is not None and fr.get("tid") != tid:
            ok = False
        if want == "register" and fr.get("register") not in ("rdi", "rax"):
            # (h9_take returned it in rax, main passed it in rdi)
            ok = False
        if (want == "register" and c["a"].opt == "0" and fr.get("kind") == "stack" and
                (fr.get("sp_offset") or 0) < 0 and fr.get("tid") == tid):
            # at -O0 h9_take's dead frame keeps it in the red zone below sp,
            # which is read as a root (memcheck's rule too)
            ok = w.get("category") == "still reachable"
        if not ok and "thread" in b and unlisted(c, b["thread"]):
            print("# block %d: thread %d was running at the snapshot: not listed" % (b["id"], b["thread"]))
            ok = w.get("category") == "still reachable"
        if not ok:
            bad.append((b["id"], b["fate"], b.get("thread"), tid, w.get("category"), fr))
    check("%s: --why names the root kind of blocks held in stacks, TLS, a register" % c["tag"],
          JW is not None and r.returncode == 0 and len(ws) == len(bs) and not bad, str(bad[:3]))


# a freed header's END word (heapann_block.h), the depth in its low 9 bits
END_FREED64 = 0xE4DFEEDB10C00000


def core_word(core, addr):
    """The 8-byte little-endian word at ADDR in the ELF64 core CORE, or None
    when no PT_LOAD holds it."""
    import struct
    with open(core, "rb") as f:
        hd = f.read(64)
        phoff, = struct.unpack_from("<Q", hd, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", hd, 0x36)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
        for i in range(phnum):
            p_type, _fl, off, vaddr, _pa, filesz, _ms, _al = \
                struct.unpack_from("<IIQQQQQQ", ph, i * phentsize)
            if p_type == 1 and vaddr <= addr and addr + 8 <= vaddr + filesz:
                f.seek(off + addr - vaddr)
                return struct.unpack("<Q", f.read(8))[0]
    return None


def end_word_intact(core, user):
    """Whether the freed header before USER still holds its END word and a
    SEQ word (then the scan finds it by its END and the check word proves it:
    `between` is wrong). A chunk glibc split or merged since may start inside
    the old header, its fd_nextsize and bk_nextsize (NULL in the unsorted bin)
    over SEQ: nothing proves that block."""
    v = core_word(core, user - 8)
    if v is None or (v & ~0x1FF) != END_FREED64:
        return False
    seq = core_word(core, user - (6 + (v & 0x1FF) + 1) * 8 + 4 * 8)
    return bool(seq)


def check_addr_freed(c):
    """2. --addr on freed blocks (intact, reused by a smaller one), inside their
    former range, and past the end of live blocks into the guard and beyond."""
    import random
    T, addrs = c["T"], c["addrs"]
    R = random.Random(T["seed"] * 7 + 1)
    live = [b for b in T["blocks"] if b["live"] and b["id"] in addrs]
    spans = [(addrs[b["id"]], b["size"], b) for b in live]
    freed = [b for b in T["blocks"] if b["fate"] == "free" and b["id"] in addrs]
    qs = []
    for b in R.sample(freed, min(5, len(freed))):
        ad = addrs[b["id"]]
        for off in {0, R.randrange(max(b["size"], 1)), b["size"] + R.randrange(8)}:
            qs.append(("freed", b, ad + off))
    if T.get("reuse"):
        b = T["blocks"][T["reuse"]["of"]]
        ad = addrs[b["id"]]
        for off in (0, b["size"] - 1, b["size"] + 3):
            qs.append(("freed", b, ad + off))
    for b in R.sample(live, min(4, len(live))):
        ad = addrs[b["id"]]
        qs.append(("past", b, ad + b["size"] + R.randrange(1, 8) if b["size"] else ad + 7))
        qs.append(("after", b, ad + b["size"] + 8))
    if not qs:
        return
    args = []
    for q in qs:
        args += ["--addr", "%#x" % q[2]]
    JA, r = mprof(args + [c["exe"], c["core"]])
    got = (JA or {}).get("addresses", [])
    if not check("%s: --addr on freed blocks and past ends: json" % c["tag"],
                 JA is not None and r.returncode == 0 and len(got) == len(qs),
                 r.stderr.decode()[:300]):
        return
    bad = []
    roots = c["roots"]
    for (kind, b, q), g in zip(qs, got):
        w = g.get("what")
        bl = g.get("block") or {}
        # a live block of the program over q: its data or guard
        over = [(a, n, o) for (a, n, o) in spans if a <= q < a + n + 8 or (n == 0 and q == a)]
        if over:
            a, n, o = over[0]
            ww = "block" if q < a + n or (n == 0 and q == a) else "guard"
            off = q - a if ww == "block" else q - a - n
            if w != ww or hexint(bl.get("address")) != a or g.get("offset") != off:
                bad.append((kind, b["id"], hex(q), w, g.get("offset"), "want %s of %d at %d" % (ww, o["id"], off)))
            continue
        if kind == "freed":
            ad = addrs[b["id"]]
            if w == "freed":
                # (a 0-byte block's own address is its data, offset 0)
                part = "data" if q < ad + b["size"] or q == ad else "guard"
                off = q - ad if part == "data" else q - ad - b["size"]
                if (hexint(bl.get("address")) != ad or bl.get("size") != b["size"] or
                        g.get("part") != part or g.get("offset") != off or
                        not chain_ok(bl.get("frames"), c["chains"][b["site"]], roots)):
                    bad.append((kind, b["id"], hex(q), w, g.get("part"), g.get("offset"), bl.get("size")))
            elif w == "header" and hexint(bl.get("header")) <= q < hexint(bl.get("address")):
                pass    # a reuse block's header (its data starts later)
            elif w == "between" and end_word_intact(c["core"], ad):
                # glibc wrote over the header's start, but the scan finds a
                # freed header by its END, and the check word proves it
                bad.append((kind, b["id"], hex(q), w, "its END and SEQ words are intact"))
            elif not (w in ("between", "unmapped")):
                # (glibc trims a thread arena's top: freed memory may be gone)
                bad.append((kind, b["id"], hex(q), w, bl.get("address")))
        elif kind == "past":
            bad.append((kind, b["id"], hex(q), w, "want guard"))
        else:
            # past the guard: glibc's pad and chunk header, then the next header
            ad = addrs[b["id"]]
            bf = hexint((g.get("before") or {}).get("address"))
            if not ((w == "between" and bf == ad) or
                    (w in ("header", "freed") and hexint(bl.get("address")) > ad and
                     (hexint(bl.get("header")) <= q or g.get("part") == "pad")) or
                    (b["size"] >= 120000 and w in ("unmapped", "other", "between"))):
                bad.append((kind, b["id"], hex(q), w, bf and hex(bf), bl.get("address")))
    check("%s: --addr on freed blocks and past ends" % c["tag"], not bad, str(bad[:4]))


def check_diff(c):
    """3. mprof-core diff of the two signal snapshots: per stack the blocks and
    bytes at each, and the allocations and frees in between, from the log."""
    snaps = hunt9.snap_cores(c["d"], c["syms"].get("tid-1"))
    if not check("%s: two signal snapshots" % c["tag"], len(snaps) >= 2, str(snaps)):
        return
    T, roots, chains = c["T"], c["roots"], c["chains"]
    ch0 = {s["id"]: [tuple(x) for x in s["chain0"]] for s in T["sites"] if "chain0" in s}
    want = {}
    live = {}
    for i, ev in enumerate(T["log"]):
        k = tuple(ch0[ev[1]] if ev[4] else chains[ev[1]])
        w = want.setdefault(k, [0, 0, 0, 0, 0, 0])
        sign = 1 if ev[0] == "alloc" else -1
        if i < T["snap1"]:
            w[0] += sign
            w[2] += sign * ev[2]
        else:
            w[4 if ev[0] == "alloc" else 5] += 1
        w[1] += sign
        w[3] += sign * ev[2]
    want = {k: v for k, v in want.items() if any(v)}
    r = subprocess.run([hunt9.MP, "diff", "-q", "--format", "json", "--top", "0", c["exe"],
                        snaps[0], snaps[1]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    try:
        JD = json.loads(r.stdout)
    except ValueError:
        JD = None
    if not check("%s: diff json" % c["tag"], JD is not None and r.returncode == 0,
                 r.stderr.decode()[:300]):
        return
    check("%s: diff: in-between counts known" % c["tag"], JD.get("between") is True)
    got = {}
    for s in JD["stacks"]:
        mk = key_frames(s["frames"], roots)
        if not mk or not (mk[0][0] or "").startswith("h9_"):
            continue
        g = got.setdefault(mk, [0, 0, 0, 0, 0, 0])
        for i, f in enumerate(("blocks_old", "blocks_new", "bytes_old", "bytes_new",
                               "allocs_between", "frees_between")):
            g[i] += s.get(f) or 0
    got = {k: v for k, v in got.items() if any(v)}
    diff = [(k[0], got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)]
    check("%s: diff: blocks, bytes and in-between calls per stack" % c["tag"], not diff,
          str(diff[:3]))


def check_tls_addr(c):
    """--addr in each thread's TLS (h9_tls of that thread) and its stack."""
    T, syms = c["T"], c["syms"]
    qs = []
    for t in range(T["threads"]):
        if unlisted(c, t):
            continue
        if "ttls%d" % t in syms:
            k = (T["seed"] + t) % max(1, len(T["blocks"]))
            qs.append((syms["ttls%d" % t] + 8 * k, {"what": "tls", "symbol": "h9_tls",
                                                   "symbol_offset": 8 * k,
                                                   "thread": syms.get("tid%d" % t)}))
        if "tstk%d" % t in syms and T["end"] != "exit":
            qs.append((syms["tstk%d" % t], {"what": "stack", "thread": syms.get("tid%d" % t)}))
    if not qs:
        return
    args = []
    for q in qs:
        args += ["--addr", "%#x" % q[0]]
    JA, r = mprof(args + [c["exe"], c["core"]])
    diff = []
    for (ad, w), g in zip(qs, (JA or {}).get("addresses", [])):
        for k, v in w.items():
            if g.get(k) != v:
                diff.append((hex(ad), k, g.get(k), v))
    check("%s: --addr in threads' TLS and stacks" % c["tag"],
          JA is not None and len(JA.get("addresses", [])) == len(qs) and not diff, str(diff[:4]))


def check_child(c):
    """5. A fork()ed child's own snapshot: the parent's live blocks at their
    addresses, the child's blocks, and its statistics less the parent's last
    snapshot's: exactly the child's calls."""
    T, syms = c["T"], c["syms"]
    ch = T.get("child")
    if not ch:
        return
    pid = syms.get("tid-1")
    kids = [f for f in os.listdir(c["d"]) if f.startswith("prog.") and f.endswith(".core") and
            f.split(".")[1] != str(pid)]
    if not check("%s: fork: the child's snapshot" % c["tag"], len(kids) == 1, str(kids)):
        return
    kc = os.path.join(c["d"], kids[0])
    ca = {}
    for l in open(os.path.join(c["d"], "addrs.txt.child")):
        w = l.split()
        ca[int(w[1])] = int(w[2], 16)
    JK, r = mprof(["--blocks", "--report", "stacks", c["exe"], kc])
    if not check("%s: fork: child json" % c["tag"], JK is not None and r.returncode == 0,
                 r.stderr.decode()[:300]):
        return
    by = {hexint(b["address"]): b for b in JK["block_list"]}
    bad = []
    for b in T["blocks"]:
        if b["live"] and b["id"] in c["addrs"]:
            e = by.get(c["addrs"][b["id"]])
            if e is None or e["size"] != b["size"]:
                bad.append(("parent", b["id"], e and e["size"], b["size"]))
    chain = [("h9_child", "main.c" + ("c" if c["a"].cxx else ""), ch["line"]),
             ("main", "main.c" + ("c" if c["a"].cxx else ""), ch["call"])]
    for i in range(ch["count"]):
        e = by.get(ca.get(i))
        if i < ch["frees"]:
            if e is not None and (key_frames(JK["stacks"][e["stack"]]["frames"], c["roots"]) or
                                  [("",)])[0][0] == "h9_child":
                bad.append(("freed child block", i))
            continue
        if e is None or e["size"] != ch["size"] or \
                list(key_frames(JK["stacks"][e["stack"]]["frames"], c["roots"])) != chain:
            bad.append(("child", i, e and e["size"], ch["size"]))
    check("%s: fork: the child's blocks and the parent's" % c["tag"], not bad, str(bad[:4]))
    snaps = hunt9.snap_cores(c["d"], pid)
    # (the parent's snapshot before the fork: the program takes two signal
    # snapshots around its middle, the child is forked after them)
    if not check("%s: fork: the parent's snapshot before the child's" % c["tag"], len(snaps) >= 2,
                 str(snaps)):
        return
    JP, r = mprof(["--report", "direct", c["exe"], snaps[1]])
    JK2, r2 = mprof(["--report", "direct", c["exe"], kc])
    if JP is None or JK2 is None:
        check("%s: fork: statistics json" % c["tag"], False, (r.stderr + r2.stderr).decode()[:300])
        return
    sp, sk = JP["statistics"], JK2["statistics"]
    got = {k: sk.get(k, 0) - sp.get(k, 0) for k in ("allocs", "frees", "bytes", "bytes_freed")}
    want = {"allocs": ch["count"], "frees": ch["frees"], "bytes": ch["count"] * ch["size"],
            "bytes_freed": ch["frees"] * ch["size"]}
    gc = {k: (sk.get("calls") or {}).get(k, 0) - (sp.get("calls") or {}).get(k, 0)
          for k in ("malloc", "free")}
    wc = {"malloc": ch["count"], "free": ch["frees"]}
    check("%s: fork: the child's statistics less the parent's snapshot" % c["tag"],
          got == want and gc == wc, "got %s %s want %s %s" % (got, gc, want, wc))


def extra(c):
    check_roots(c)
    check_child(c)
    check_addr_freed(c)
    check_tls_addr(c)
    check_diff(c)


def setup(a):
    a.h10 = True


def main():
    hunt9.main(prefix="hunt10.", setup=setup, more=extra)


if __name__ == "__main__":
    main()
