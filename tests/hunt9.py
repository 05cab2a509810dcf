#!/usr/bin/env python3
"""hunt9.py - differential check of mprof-core against programs written by
tests/prog/randprog.py, whose heap the generator knows (tests/run-hunt9-gen.sh).

usage: hunt9.py [--cc CC] [--opt N] [--pie|--no-pie] [--depth N] [--keep DIR]
                SEED [SEED...]
Per seed: generate, build, run under libheapann to its end state (gcore, a
kernel core from abort, or the exit snapshot), then compare mprof-core's JSON
(stacks with --blocks, lost, direct, bins, leaks, statistics) and --addr
answers with the generator's truth. Prints "ok N - ..." / "not ok N - ..." per
check and, last, "N passed, N failed". Environment: B (build dir, default
build), TOP (the tree, default cwd).
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("TOP", os.getcwd())
B = os.path.join(TOP, os.environ.get("B", "build"))
MP = os.path.join(B, "mprof-core")
LIB = os.path.join(B, "libheapann.so")
npass = nfail = 0
MPARGS = []   # more mprof-core options for every call (--symbolizer gdb)


def check(name, ok, detail=""):
    global npass, nfail
    if ok:
        npass += 1
        print("ok %d - %s" % (npass + nfail, name))
    else:
        nfail += 1
        print("not ok %d - %s%s" % (npass + nfail, name, " (" + detail + ")" if detail else ""))
    return ok


def snap_cores(d, pid=None):
    """The snapshots libheapann wrote in d (prog.PID.N.core), in order of N;
    with pid, only that process's (a fork()ed child writes its own)."""
    cs = [f for f in os.listdir(d) if f.startswith("prog.") and f.endswith(".core") and
          (pid is None or f.split(".")[1] == str(pid))]
    return [os.path.join(d, f) for f in sorted(cs, key=lambda f: int(f.split(".")[-2]))]


def run_prog(d, exe, end, env, snap=False, reg=False):
    """Run exe in d under the preload to its end state; return the core's path.
    snap: HUNT10_SNAP set, with signal snapshots (snap_cores gives them); reg:
    run under gdb to the first instruction of h9_leaf and gcore there."""
    env = dict(env)
    env["LD_PRELOAD"] = LIB
    env["HUNT9_ADDRS"] = os.path.join(d, "addrs.txt")
    if snap:
        env["HUNT10_SNAP"] = "1"
        env["HEAPANN_SNAPSHOT"] = "signal,exit" if end == "exit" else "signal"
        env["HEAPANN_QUIET"] = "1"
    for f in os.listdir(d):
        if f.startswith("core") or f.endswith(".core"):
            os.unlink(os.path.join(d, f))
    if reg:
        core = os.path.join(d, "core.g")
        cmd = ["gdb", "-batch", "-nx", "-q", "-iex", "set auto-load off",
               "-iex", "set debuginfod enabled off", "-iex", "set startup-with-shell off",
               "-ex", "handle SIGUSR2 nostop noprint pass"]
        for k in ("LD_PRELOAD", "HUNT9_ADDRS", "HUNT10_SNAP", "HEAPANN_SNAPSHOT",
                  "HEAPANN_QUIET", "HEAPANN_DEPTH"):
            if k in env:
                cmd += ["-ex", "set environment %s=%s" % (k, env[k])]
        cmd += ["-ex", "break *h9_leaf", "-ex", "run", "-ex", "gcore " + core, "-ex", "kill", exe]
        e2 = {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "HEAPANN_SNAPSHOT")}
        subprocess.run(cmd, cwd=d, env=e2, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=180)
        return core if os.path.exists(core) else None
    if end == "exit":
        env["HEAPANN_SNAPSHOT"] = "signal,exit" if snap else "exit"
        p = subprocess.Popen([exe], cwd=d, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        p.wait(timeout=120)
        cs = [os.path.basename(f) for f in snap_cores(d, pid=p.pid)[-1:]]
    elif end == "abort":
        def lim():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,
                                                      resource.RLIM_INFINITY))
        subprocess.run([exe], cwd=d, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, preexec_fn=lim, timeout=120)
        cs = [f for f in os.listdir(d) if f == "core" or f.startswith("core.")]
    else:
        p = subprocess.Popen([exe], cwd=d, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = p.stdout.readline()
        core = os.path.join(d, "core.g")
        if line.strip() == b"ready":
            subprocess.run(["gdb", "-batch", "-nx", "-q", "-iex", "set auto-load off",
                            "-iex", "set debuginfod enabled off", "-p", str(p.pid),
                            "-ex", "gcore " + core, "-ex", "detach"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        p.stdin.write(b"\n")
        p.stdin.close()
        p.wait(timeout=60)
        cs = ["core.g"] if os.path.exists(core) else []
    return os.path.join(d, cs[0]) if cs else None


def mprof(args):
    r = subprocess.run([MP, "-q", "--format", "json"] + MPARGS + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    try:
        return json.loads(r.stdout), r
    except ValueError:
        return None, r


def fname(fn):
    """A C++ frame's function without its parameter list (h9_f1() is h9_f1)."""
    return fn.split("(")[0] if fn else fn


def key_frames(frames, roots):
    """The frames from the allocation site to the root (main, a thread's
    function), as (function, file, line)."""
    k = []
    for f in frames:
        k.append((fname(f.get("function")), os.path.basename(f.get("file") or ""), f.get("line")))
        if fname(f.get("function")) in roots:
            break
    return tuple(k)


def match_chain(mk, chain, lines, complete):
    """Does mprof's key mk fit the truth chain? complete: mk must be all of it."""
    if complete and len(mk) != len(chain):
        return False
    if len(mk) > len(chain):
        return False
    for a, b in zip(mk, chain):
        if a[0] != b[0] or a[1] != b[1]:
            return False
        if lines and a[2] != b[2]:
            return False
    return True


def memcheck_categories(blocks, links, addrs):
    """Set each live block's "category" as memcheck's algorithm gives it."""
    out = {}
    for b in blocks:
        b.pop("category", None)
    live = {b["id"]: b for b in blocks if b["live"]}
    succ = {}
    for (h, t, w) in links:
        succ.setdefault(h, []).append(t)
    st = {}
    work = []
    for b in live.values():
        if b["fate"] in ("keep", "stack", "tls", "tstack", "ttls", "reg"):
            st[b["id"]] = "still reachable"
            work.append(b["id"])
        elif b["fate"] == "interior":
            st[b["id"]] = "possibly lost"
    while work:
        k = work.pop()
        for t in succ.get(k, []):
            if st.get(t) != "still reachable":
                st[t] = "still reachable"
                work.append(t)
    leaders = set()
    for k in sorted(live, key=lambda i: addrs.get(i, 0)):
        if k in st:
            continue
        st[k] = "definitely lost"
        leaders.add(k)
        work = [k]
        while work:
            x = work.pop()
            for t in succ.get(x, []):
                # an earlier leader is unreached still: a later clique takes it
                if t != k and (t not in st or (st[t] == "definitely lost" and t in leaders)):
                    st[t] = "indirectly lost"
                    work.append(t)
    for k, b in live.items():
        b["category"] = st[k]


def run_seed(seed, a, work, more=None):
    """Generate, build, run and check one seed; more(ctx), when given, runs
    more checks on it (tests/hunt10.py) before its directory is removed."""
    h10 = getattr(a, "h10", False)
    d = os.path.join(work, "s%d" % seed)
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(TOP, "tests/prog/randprog.py"),
                    str(seed), d] + (["cxx"] if a.cxx else []) + (["h10"] if h10 else []),
                   check=True)
    T = json.load(open(os.path.join(d, "truth.json")))
    if getattr(a, "fixtruth", None):
        # what this build can tell (tests/hunt13.py: no -g, no file or line)
        a.fixtruth(T)
    tag = "seed %d %s%s -O%s %s depth %s %s" % (seed, a.cc, " C++" if a.cxx else "", a.opt, "pie" if a.pie else "no-pie",
                                           a.depth, T["end"])
    if getattr(a, "tagx", ""):
        tag += " " + a.tagx
    exe = os.path.join(d, "prog")
    cflags = ["-g", "-O%s" % a.opt, "-pthread"]
    cflags += ["-fPIE", "-pie"] if a.pie else ["-fno-pie", "-no-pie"]
    cflags += (getattr(a, "cflags", None) or "").split()
    srcs = sorted(f for f in os.listdir(d) if f.endswith(".cc" if a.cxx else ".c"))
    cc = {"gcc": "g++", "clang-14": "clang++-14"}.get(a.cc, a.cc) if a.cxx else a.cc
    r = subprocess.run([cc] + cflags + ["-o", exe] + srcs, cwd=d,
                       stderr=subprocess.PIPE)
    if not check("%s: builds" % tag, r.returncode == 0, r.stderr.decode()[:300]):
        return
    if getattr(a, "post", None):
        # the build's after-step (tests/hunt13.py: strip with a debuglink)
        a.post(d, exe)
    env = dict(os.environ)
    if a.depth:
        env["HEAPANN_DEPTH"] = str(a.depth)
    core = run_prog(d, exe, T["end"], env, snap=h10, reg=T.get("reg") is not None)
    if not check("%s: core written" % tag, core is not None):
        return
    addrs = {}
    syms = {}
    for l in open(os.path.join(d, "addrs.txt")):
        w = l.split()
        if w[0] == "blk":
            addrs[int(w[1])] = int(w[2], 16)
        elif w[0] in ("ttls", "tstk", "tid"):
            syms["%s%s" % (w[0], w[1])] = int(w[2], 16)
        else:
            syms[w[0]] = int(w[2], 16)
    roots = {"main"} | {"h9_thr%d" % t for t in range(T["threads"])}
    depth = a.depth or 32
    lines = True
    sites = T["sites"]
    blocks = T["blocks"]
    chains = {s["id"]: [tuple(c) for c in s["chain"]] for s in sites}

    J, r = mprof(["--blocks", "--report", "stacks,lost,direct,bins,leaks",
                  exe, core])
    if not check("%s: mprof-core json" % tag, J is not None and r.returncode == 0,
                 r.stderr.decode()[:300]):
        return
    # 1. every live block at its address with its size and stack; freed ones gone
    byaddr = {b["address"] if isinstance(b["address"], int) else int(b["address"], 16): b
              for b in J["block_list"]}
    bad = []
    truncated_ok = []
    for b in blocks:
        ad = addrs.get(b["id"])
        if ad is None:
            if b["live"]:
                bad.append("block %d: the program printed no address" % b["id"])
            continue
        e = byaddr.get(ad)
        if not b["live"]:
            # (unless a live block of the program now starts there: h10's reuse)
            if e is not None and not any(addrs.get(o["id"]) == ad for o in blocks if o["live"]):
                mk = key_frames(J["stacks"][e["stack"]]["frames"], roots)
                if mk and mk[0][0] and mk[0][0].startswith("h9_"):
                    bad.append("freed block %d at %#x still listed" % (b["id"], ad))
            continue
        if e is None:
            bad.append("live block %d (%d bytes) at %#x not found" % (b["id"], b["size"], ad))
            continue
        if e["size"] != b["size"]:
            bad.append("block %d: size %d, want %d" % (b["id"], e["size"], b["size"]))
        mk = key_frames(J["stacks"][e["stack"]]["frames"], roots)
        ch = chains[b["site"]]
        complete = len(mk) > 0 and mk[-1][0] in roots
        # strdup's own frame in libc is one of the HEAPANN_DEPTH kept, then
        # stripped as an allocator frame
        room = depth - (sites[b["site"]]["kind"] == "strdup")
        if not match_chain(mk, ch, lines, complete) or (not complete and len(mk) < min(room, len(ch))):
            bad.append("block %d: stack %s, want %s" % (b["id"], mk, ch))
    check("%s: live blocks by address, size and stack" % tag, not bad, "; ".join(bad[:4]))

    # 2. stacks: the program's clusters, blocks and bytes
    want = {}
    for b in blocks:
        if b["live"]:
            k = tuple(chains[b["site"]])
            w = want.setdefault(k, [0, 0])
            w[0] += 1
            w[1] += b["size"]
    got = {}
    for s in J["stacks"]:
        mk = key_frames(s["frames"], roots)
        if not mk or not (mk[0][0] or "").startswith("h9_"):
            continue
        g = got.setdefault(mk, [0, 0])
        g[0] += s["blocks"]
        g[1] += s["bytes"]
    if depth >= 32:
        check("%s: stacks: clusters, blocks, bytes" % tag, got == {k: v for k, v in want.items()},
              str([(k, got.get(k), want.get(k)) for k in set(got) | set(want)
                   if got.get(k) != want.get(k)][:3]))
    else:
        # truncated: each cluster's bytes are those of the chains it prefixes
        agg = {}
        for k, v in got.items():
            agg[k] = [0, 0]
        for ck, v in want.items():
            ms = [k for k in got if match_chain(k, ck, lines, k[-1][0] in roots)]
            for k in ms[:1]:
                agg[k][0] += v[0]
                agg[k][1] += v[1]
        check("%s: stacks (depth %d): clusters, blocks, bytes" % (tag, depth), agg == got,
              str([(k, got[k], agg[k]) for k in got if got[k] != agg[k]][:3]))

    # 3. lost: categories per stack. The generator's categories assume the
    # root of a lost structure leads it; memcheck (and mprof-core) take the
    # unreached blocks in address order, each leading a clique of those it
    # reaches that are still unreached: in A -> B <-> C with C below A, C
    # leads, A then takes nothing of it. Recompute with the real addresses.
    memcheck_categories(blocks, T["links"], addrs)
    want = {}
    for b in blocks:
        if b["live"]:
            k = (tuple(chains[b["site"]]), b["category"])
            w = want.setdefault(k, [0, 0])
            w[0] += 1
            w[1] += b["size"]
    got = {}
    for rec in J["lost"]["records"]:
        mk = key_frames(rec["frames"], roots)
        if not mk or not (mk[0][0] or "").startswith("h9_"):
            continue
        g = got.setdefault((mk, rec["category"]), [0, 0])
        g[0] += rec["blocks"]
        g[1] += rec["bytes"]
    if depth >= 32:
        diff = [(k, got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)]
        if diff:
            # per block, with --why: which blocks, and from which root
            lb = [b for b in blocks if b["live"] and b["id"] in addrs]
            args = []
            for b in lb:
                args += ["--why", "%#x" % addrs[b["id"]]]
            JW, r = mprof(args + [exe, core])
            for b, w in zip(lb, (JW or {}).get("why", [])):
                if w.get("category") == b["category"]:
                    continue
                fr = [((c.get("from") or {}).get("symbol") or (c.get("from") or {}).get("kind"))
                      for c in w.get("chain") or []]
                print("#   block %d: %s, want %s; chain from %s" % (
                    b["id"], w.get("category"), b["category"], fr))
        check("%s: lost: categories per stack" % tag, not diff, str(diff[:3]))
        # per block, from the ids: which blocks are in the wrong category
        if diff:
            for b in blocks:
                if b["live"]:
                    print("#   block %d site %d size %d fate %s category %s at %#x" % (
                        b["id"], b["site"], b["size"], b["fate"], b["category"], addrs.get(b["id"], 0)))
    # 4. tables from the statistics region: direct, bins, leaks, statistics
    dw = {}
    bins = {}
    for ev in T["log"]:
        op, sid, size = ev[0], ev[1], ev[2]
        s = sites[sid]
        fn = s["function"]
        bn = min(size, 1025)
        bb = bins.setdefault(bn, {"allocs": 0, "bytes": 0, "frees": 0})
        if op == "alloc":
            w = dw.setdefault(fn, [0, 0, 0])
            w[0] += size
            w[2] += 1
            bb["allocs"] += 1
            bb["bytes"] += size
        else:
            bb["frees"] += 1
    for b in blocks:
        if b["live"]:
            dw[sites[b["site"]]["function"]][1] += b["size"]
    gd = {fname(x["function"]): [x["bytes"], x["kept_bytes"], x["calls"]] for x in J["direct"]
          if (x["function"] or "").startswith("h9_")}
    diff = [(k, gd.get(k), dw.get(k)) for k in set(gd) | set(dw) if gd.get(k) != dw.get(k)]
    check("%s: direct: bytes, kept, calls per function" % tag, not diff, str(diff[:4]))
    # bins: only sizes the program uses; libc's own blocks may share one
    for b in blocks:
        if b["live"]:
            bb = bins[min(b["size"], 1025)]
            bb["kept_blocks"] = bb.get("kept_blocks", 0) + 1
            bb["kept_bytes"] = bb.get("kept_bytes", 0) + b["size"]
    gb = {x["size"]: x for x in J["bins"]}
    diff = []
    for sz, w in bins.items():
        g = gb.get(sz, {})
        for f in ("allocs", "bytes", "frees", "kept_blocks", "kept_bytes"):
            if g.get(f, 0) != w.get(f, 0):
                diff.append((sz, f, g.get(f), w.get(f, 0)))
    if T["threads"] or a.cxx:
        # pthread_create's own blocks (and libstdc++'s pool) (the dtv, by calloc) share bins with ours
        extra = {sz for sz in bins if sz in (0, 1025) or any(
            (s["frames"] and not (s["frames"][0].get("function") or "").startswith("h9_"))
            and sz in (s["min_size"], s["max_size"]) for s in J["stacks"])}
        diff = [x for x in diff if x[0] not in extra]
    check("%s: bins of the program's sizes" % tag, not diff, str(diff[:4]))
    # leaks: paths of 5 functions
    wl = {}
    for ev in T["log"]:
        op, sid, size = ev[0], ev[1], ev[2]
        ch = chains[sid]
        path = []
        for c in ch:
            path.append(c[0])
            if c[0] == "main":
                break
        path = tuple(path[:5])
        w = wl.setdefault(path, [0, 0, 0, 0, 0])
        if op == "alloc":
            w[2] += 1
            w[4] += size
        else:
            w[3] += 1
    for b in blocks:
        if b["live"]:
            ch = chains[b["site"]]
            path = []
            for c in ch:
                path.append(c[0])
                if c[0] == "main":
                    break
            w = wl[tuple(path[:5])]
            w[0] += b["size"]
            w[1] += 1
    # the table lists only the paths that keep something (analysis/tables.c)
    wl = {k: v for k, v in wl.items() if v[1]}
    gl = {}
    for x in J["leaks"]:
        if x["path"] and (x["path"][0] or "").startswith("h9_"):
            p = []
            for f in x["path"]:
                f = fname(f)
                p.append(f)
                if f == "main":
                    break
            if T["threads"] and p[-1] != "main":
                # a thread's path: the generator's chain ends at its function
                while p and not p[-1].startswith("h9_"):
                    p.pop()
            g = gl.setdefault(tuple(p), [0, 0, 0, 0, 0])
            for i, f in enumerate(("kept_bytes", "kept_blocks", "allocs", "frees", "bytes")):
                g[i] += x[f]
    if depth >= 32:
        diff = [(k, gl.get(k), wl.get(k)) for k in set(gl) | set(wl) if gl.get(k) != wl.get(k)]
        check("%s: leaks: kept, allocs, frees, bytes per path" % tag, not diff, str(diff[:3]))
    if not T["threads"] and not a.cxx:
        # (a C++ program's libstdc++ allocates its emergency pool before main)
        st = J["statistics"]
        live = peak = allocs = frees = nb = nbf = 0
        for ev in T["log"]:
            if ev[0] == "alloc":
                allocs += 1
                nb += ev[2]
                live += ev[2]
                peak = max(peak, live)
            else:
                frees += 1
                nbf += ev[2]
                live -= ev[2]
        w = {"allocs": allocs, "frees": frees, "bytes": nb, "bytes_freed": nbf,
             "live_bytes": live, "peak_live_bytes": peak}
        g = {k: st.get(k) for k in w}
        check("%s: statistics: allocs, frees, bytes, live, peak" % tag, g == w,
              "got %s want %s" % (g, w))
    if h10:
        # the calls of each entry point; malloc, calloc and free also from
        # pthread_create and libstdc++: only in a C program without threads
        # the calls of each entry point. "calls" also counts those served
        # without a header (README, Known limits: the unwinder's own, libc's
        # in pthread_create, libstdc++'s): malloc, calloc and free at least
        # the program's, the others exactly
        wc = T["calls"]
        gc = {k: v for k, v in (J["statistics"].get("calls") or {}).items() if v}
        diff = [(k, gc.get(k, 0), wc.get(k, 0)) for k in set(gc) | set(wc)
                if (gc.get(k, 0) < wc.get(k, 0) if k in ("malloc", "calloc", "free")
                    else gc.get(k, 0) != wc.get(k, 0))]
        check("%s: statistics: calls per entry point" % tag, not diff, str(diff))

    # 4b. the call graph: per function its own bytes and those under it; the
    # Massif tree's allocation sites (no threshold); the folded export
    Jg, r = mprof(["--report", "graph,tree", "--threshold", "0", exe, core])
    if check("%s: graph, tree json" % tag, Jg is not None and r.returncode == 0,
             r.stderr.decode()[:300]):
        wg = {}
        for ev in T["log"]:
            if ev[0] != "alloc":
                continue
            ch = chains[ev[1]]
            w = wg.setdefault(ch[0][0], [0, 0])
            w[0] += ev[2]
            for fn in {c[0] for c in ch}:
                wg.setdefault(fn, [0, 0])[1] += ev[2]
        gg = {fname(x["function"]): [x["self"], x["total"]] for x in Jg["graph"]
              if x.get("cycle") is None and fname(x["function"]) in wg}
        diff = [(k, gg.get(k), wg.get(k)) for k in wg if gg.get(k) != wg[k]
                and not (k == "main" and T["threads"])]
        if depth >= 32:   # (cut stacks credit fewer callers)
            check("%s: graph: self and total bytes per function" % tag, not diff, str(diff[:4]))
        wt = {}
        for b in blocks:
            if b["live"]:
                c = chains[b["site"]][0]
                w = wt.setdefault((c[0], c[2]), [0, 0])
                w[0] += b["size"]
                w[1] += 1
        gt = {}
        for c in Jg["tree"]["children"]:
            fn = fname(c.get("function"))
            if fn and fn.startswith("h9_"):
                g = gt.setdefault((fn, c.get("line")), [0, 0])
                g[0] += c["bytes"]
                g[1] += c["blocks"]
        diff = [(k, gt.get(k), wt.get(k)) for k in set(gt) | set(wt) if gt.get(k) != wt.get(k)]
        if depth >= 32:
            check("%s: tree: bytes and blocks per allocation site" % tag, not diff, str(diff[:4]))
    rf = subprocess.run([MP, "-q", "--format", "folded"] + MPARGS + [exe, core], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, timeout=300)
    if depth >= 32 and check("%s: folded export" % tag, rf.returncode == 0, rf.stderr.decode()[:300]):
        wf = {}
        for b in blocks:
            if b["live"]:
                k = tuple(c[0] for c in chains[b["site"]])
                wf[k] = wf.get(k, 0) + b["size"]
        gf = {}
        for l in rf.stdout.decode().splitlines():
            st, _, n = l.rpartition(" ")
            fr = [fname(x) for x in st.split(";")]
            ri = [i for i, x in enumerate(fr) if x in roots]
            if not ri or not fr[-1].startswith("h9_"):
                continue
            k = tuple(reversed(fr[ri[-1]:]))
            gf[k] = gf.get(k, 0) + int(n)
        diff = [(k, gf.get(k), wf.get(k)) for k in set(gf) | set(wf) if gf.get(k) != wf.get(k)]
        check("%s: folded: bytes per call chain" % tag, not diff, str(diff[:3]))

    # 5. --addr: inside a block, its guard, its header, a global, TLS, main's stack
    qs = []
    plain_hdr = []   # per header query: the block is not over-aligned
    live = [b for b in blocks if b["live"] and b["id"] in addrs]
    import random
    R = random.Random(seed)
    for b in R.sample(live, min(4, len(live))):
        ad = addrs[b["id"]]
        if b["size"]:
            off = R.randrange(b["size"])
            qs.append((ad + off, {"what": "block", "offset": off}))
        # the address malloc(0) returned is its block's (offset 0), as the
        # lost report takes a start pointer to a 0-byte block (analysis/addr.c)
        qs.append((ad + b["size"], {"what": "guard"} if b["size"] else
                   {"what": "block", "offset": 0}))
        qs.append((ad - 1, {"what": "header"}))
        plain_hdr.append(sites[b["site"]]["kind"] in ("malloc", "calloc", "strdup", "new",
                                                       "newobj", "realloc"))
    if "sym" in syms:
        k = R.randrange(max(1, len(blocks)))
        qs.append((syms["sym"] + 8 * k, {"what": "module", "symbol": "h9_slot",
                                         "symbol_offset": 8 * k}))
    if "tls" in syms:
        k = R.randrange(max(1, len(blocks)))
        qs.append((syms["tls"] + 8 * k, {"what": "tls", "symbol": "h9_tls",
                                         "symbol_offset": 8 * k}))
    if "loc" in syms and T["end"] != "exit":
        qs.append((syms["loc"], {"what": "stack"}))
    args = []
    for q in qs:
        args += ["--addr", "%#x" % q[0]]
    JA, r = mprof(args + [exe, core])
    if check("%s: --addr json" % tag, JA is not None and r.returncode == 0,
             r.stderr.decode()[:300]):
        diff = []
        for (ad, w), g in zip(qs, JA["addresses"]):
            for k, v in w.items():
                if g.get(k) != v:
                    diff.append((hex(ad), k, g.get(k), v))
        check("%s: --addr answers" % tag, not diff, str(diff[:4]))
        # glibc's size word before a block's raw start (its header, rounded
        # down to glibc's 16 bytes: the pad is under 16) is in no block
        q2 = []
        ph = iter(plain_hdr)
        for (ad, w), g in zip(qs, JA["addresses"]):
            if w.get("what") == "header" and next(ph) and g.get("block"):
                h = int(g["block"]["header"], 16)
                q2.append((h & ~15) - 4)
        if q2:
            args = []
            for q in q2:
                args += ["--addr", "%#x" % q]
            JB, r = mprof(args + [exe, core])
            got = [x.get("what") for x in (JB or {}).get("addresses", [])]
            check("%s: --addr before a block's header: between" % tag,
                  got == ["between"] * len(q2), "%s %s" % ([hex(q) for q in q2], got))
    # 6. --why for a lost-category sample (the first two live blocks of each
    # category the generator expects): its answer names the block and the
    # category the lost report gave; a reachable block has a chain from a root
    # and no lost root, a definitely lost block no chain and is its own lost
    # root, an indirectly lost one has another block as its lost root
    if depth >= 32:
        per = {}
        for b in blocks:
            if b["live"] and b["id"] in addrs and len(per.setdefault(b["category"], [])) < 2:
                per[b["category"]].append(b)
        sample = [b for c in sorted(per) for b in per[c]]
        if sample:
            args = []
            for b in sample:
                args += ["--why", "%#x" % addrs[b["id"]]]
            JW, r = mprof(args + [exe, core])
            ws = (JW or {}).get("why", [])
            bad = []
            for b, w in zip(sample, ws):
                c = w.get("category")
                lr = int((w.get("lost_root") or {}).get("block") or "0", 16)
                if (int(w.get("block") or "0", 16) != addrs[b["id"]] or
                        (c == "still reachable" and (not w.get("chain") or lr)) or
                        (c == "definitely lost" and (w.get("chain") or lr not in (0, addrs[b["id"]]))) or
                        (c == "indirectly lost" and lr in (0, addrs[b["id"]]))):
                    bad.append((b["id"], b["category"], c, len(w.get("chain") or []),
                                bool(w.get("lost_root"))))
            check("%s: --why: chain for reachable, lost root for indirectly lost" % tag,
                  JW is not None and r.returncode == 0 and len(ws) == len(sample) and not bad,
                  str(bad[:3]))
    if more:
        more(dict(d=d, exe=exe, core=core, T=T, addrs=addrs, syms=syms, J=J, tag=tag,
                   roots=roots, chains=chains, a=a, depth=depth))
    if not a.keep:
        shutil.rmtree(d, ignore_errors=True)


def main(prefix="hunt9.", setup=None, more=None):
    """Parse the command line (usage above), run each seed (run_seed with MORE,
    after SETUP(args) has adjusted the arguments), print the totals and exit:
    1 when a check failed. PREFIX names the work directory. hunt10.py runs
    this with its own setup and checks."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--opt", default="0")
    ap.add_argument("--pie", action="store_true", default=True)
    ap.add_argument("--no-pie", dest="pie", action="store_false")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--cxx", action="store_true")
    ap.add_argument("seeds", nargs="+", type=int)
    a = ap.parse_args()
    if setup:
        setup(a)
    work = a.keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    try:
        for s in a.seeds:
            run_seed(s, a, work, more=more)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (npass, nfail))
    sys.exit(1 if nfail else 0)


if __name__ == "__main__":
    main()
