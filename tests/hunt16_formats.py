#!/usr/bin/env python3
# hunt16_formats.py - one core through every report and every format must tell
# one story (tests/run-hunt16-formats.sh). Runs mprof-core on PROG CORE with
# each --report and --format, and checks that the totals and the per-stack
# figures agree with the JSON stacks report and with each other: the folded
# lines, the SVG's boxes, the pprof samples (decoded here from the protobuf),
# the massif file (last snapshot, peak, tree sums; ms_print when installed),
# the HTML page's data, the tree, mprof's four tables, the lost report, the
# types; the filters (--top, --threshold, --ignore-fn, --alloc-fn,
# --leak-depth) keep what they say.
#
#   hunt16_formats.py core M PROG CORE TAG     the checks on one core
#   hunt16_formats.py raw M ELF DUMP BASE TAG  the same on a raw dump
#   hunt16_formats.py diff M PROG OLD NEW TAG  diff OLD OLD is empty, diff OLD
#                                              NEW is NEW minus OLD per stack
# Prints "ok N - ..." / "not ok N - ..." lines and "N passed, N failed" last.
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

N = [0, 0]


def check(name, cond, detail=""):
    if cond:
        N[0] += 1
        print("ok %d - %s" % (N[0] + N[1], name))
    else:
        N[1] += 1
        print("not ok %d - %s%s" % (N[0] + N[1], name, " (" + detail + ")" if detail else ""))


def check_eq(name, want, got):
    check(name, want == got, "expected %r, got %r" % (want, got))


def run(m, args, binary=False):
    """mprof-core ARGS: (exit status, stdout)"""
    cmd = [m, "diff", "-q"] + args[1:] if args[:1] == ["diff"] else [m, "-q"] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout if binary else p.stdout.decode("utf-8", "replace")
    return p.returncode, out


def jrun(m, args):
    rc, out = run(m, args[:1] + ["--format", "json"] + args[1:] if args[:1] == ["diff"] else ["--format", "json"] + args)
    try:
        return rc, json.loads(out)
    except ValueError as e:
        return rc, {"_error": str(e)}


def fname(f, lines=False):
    """a frame's name as the folded format writes it (LINES: --folded-lines)"""
    if f.get("function"):
        n = f["function"].replace(";", ":")
        if lines and f.get("file"):
            n += " (%s%s)" % (os.path.basename(f["file"]), ":%d" % f["line"] if f.get("line") else "")
        return n
    if f.get("module"):
        return "%s+%s" % (os.path.basename(f["module"]), f["offset"])
    return f["addr"]


# ---- profile.proto: the wire reader of pprof_raw.py, the messages here ----

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pprof_raw import check_wire, fields as pb_gen, packed  # noqa: E402


def pb_fields(b):
    """(field number, wire type, value) of one message; value: int or bytes"""
    return list(pb_gen(b))


def pb_ints(wt, v):
    """a repeated integer field: packed (bytes) or one varint"""
    return packed(v, wt)


def pprof_decode(raw):
    """the profile: sample types, samples (values, location ids), locations
    (id -> [function ids of its lines]), functions (id -> name)"""
    msg = gzip.decompress(raw)
    strings, types, samples, locs, funcs = [], [], [], {}, {}
    for f, wt, v in pb_fields(msg):
        if f == 6:
            strings.append(v.decode("utf-8", "replace"))
    for f, wt, v in pb_fields(msg):
        if f == 1:
            t = dict((g, x) for g, _, x in pb_fields(v))
            types.append((strings[t.get(1, 0)], strings[t.get(2, 0)]))
        elif f == 2:
            ids, vals = [], []
            for g, w, x in pb_fields(v):
                if g == 1:
                    ids += pb_ints(w, x)
                elif g == 2:
                    vals += [y - (1 << 64) if y >= 1 << 63 else y for y in pb_ints(w, x)]
            samples.append((vals, ids))
        elif f == 4:
            lid, lines = 0, []
            for g, w, x in pb_fields(v):
                if g == 1:
                    lid = x
                elif g == 4:
                    ln = dict((h, y) for h, _, y in pb_fields(x))
                    lines.append(ln.get(1, 0))
            locs[lid] = lines
        elif f == 5:
            fl = dict((g, x) for g, _, x in pb_fields(v))
            funcs[fl.get(1, 0)] = strings[fl.get(2, 0)]
    return types, samples, locs, funcs


def pprof_comments(raw):
    """the profile's comments, as text"""
    msg = gzip.decompress(raw)
    strings, idx = [], []
    for f, wt, v in pb_fields(msg):
        if f == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif f == 13:
            idx += pb_ints(wt, v)
    return [strings[i] for i in idx]


def pprof_locations_mapped(raw):
    """the locations whose address lies outside the mapping they name (or that
    name none while mappings exist), as (id, address)"""
    msg = gzip.decompress(raw)
    maps, bad = {}, []
    for f, wt, v in pb_fields(msg):
        if f == 3:
            x = dict((g, y) for g, w, y in pb_fields(v) if w == 0)
            maps[x.get(1, 0)] = (x.get(2, 0), x.get(3, 0))
    for f, wt, v in pb_fields(msg):
        if f == 4:
            x = dict((g, y) for g, w, y in pb_fields(v) if w == 0)
            a, mid = x.get(3, 0), x.get(2, 0)
            if a and (mid not in maps or not maps[mid][0] <= a < maps[mid][1]):
                bad.append((x.get(1), hex(a)))
    return bad


def pprof_sums_said(m, base, extra, pbf):
    """(the alloc_* sums of the samples, the numbers the alloc_* comment gives)
    of the profile written with EXTRA options"""
    run(m, ["--format", "pprof", "-o", pbf] + extra + base)
    raw = open(pbf, "rb").read()
    types, samples, locs, funcs = pprof_decode(raw)
    tn = [t[0] for t in types]
    if "alloc_objects" not in tn:
        return None, None
    sums = (sum(x[0][tn.index("alloc_objects")] for x in samples), sum(x[0][tn.index("alloc_space")] for x in samples))
    said = None
    for c in pprof_comments(raw):
        mm = re.search(r"^alloc_\*: .*\(([\d,]+) allocations, ([\d,]+) bytes\)", c)
        if mm:
            said = (int(mm.group(1).replace(",", "")), int(mm.group(2).replace(",", "")))
    return sums, said


# ---- the checks of one core ----

def stacks_by_folded(d, weight="bytes", lines=False):
    """JSON stacks summed by their folded text (root first)"""
    out = {}
    for s in d["stacks"]:
        fr = [fname(f, lines) for f in s["frames"]]
        if not fr:
            fr = ["[no frames recorded]"]
        key = ";".join(reversed(fr))
        if s.get("cut"):
            key = "[more frames: cut at HEAPANN_DEPTH];" + key
        out[key] = out.get(key, 0) + s[weight]
    return out


def parse_folded(text):
    out = {}
    bad = 0
    for ln in text.splitlines():
        m = re.match(r"^(.*) (\d+)$", ln)
        if not m:
            bad += 1
            continue
        out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out, bad


def tree_sums(node, path, errs):
    """children's bytes and blocks never exceed their parent's; a node's
    percent is its bytes over the root's"""
    cb = sum(c["bytes"] for c in node.get("children", []))
    ck = sum(c["blocks"] for c in node.get("children", []))
    if node.get("children") and (cb > node["bytes"] or ck > node["blocks"]):
        errs.append("%s: children %d/%d > %d/%d" % (path, cb, ck, node["bytes"], node["blocks"]))
    for c in node.get("children", []):
        tree_sums(c, path + "/" + str(c.get("function")), errs)


def preorder(n, dep=0, out=None):
    """a JSON tree's nodes as (depth, bytes), in preorder"""
    out = [] if out is None else out
    out.append((dep, n["bytes"]))
    for c in n.get("children", []):
        preorder(c, dep + 1, out)
    return out


def canon(seq):
    """a tree given as (depth, bytes) in preorder, as nested tuples with each
    node's children sorted: two trees that differ only in the order of their
    siblings compare equal"""
    def build(i, dep):
        kids = []
        j = i + 1
        while j < len(seq) and seq[j][0] > dep:
            sub, j = build(j, seq[j][0])
            kids.append(sub)
        return (seq[i][1], tuple(sorted(kids))), j
    return build(0, seq[0][0])[0] if seq else None


def check_graph(tag, d, allocated):
    """the call graph of report d: self bytes add up to ALLOCATED, an arc is
    one line in its caller and one in its callee, a cycle's callees are its
    members' outside it, and outside cycles total = self + callees = callers"""
    G = d["graph"]
    nodes = [g for g in G if not g["function"].startswith("<cycle")]
    check_eq("%s: graph self bytes = all bytes allocated" % tag, allocated, sum(g["self"] for g in nodes))
    byidx = dict((g["index"], g) for g in G)
    arcs_bad = []
    for g in G:
        if g["function"].startswith("<cycle"):
            continue   # a cycle as a whole: its callees are its members' (checked below)
        for c in g["callees"]:
            callee = byidx.get(c["index"])
            back = [x for x in (callee or {}).get("callers", []) if x["index"] == g["index"]]
            if not back or (back[0]["bytes"], back[0]["calls"]) != (c["bytes"], c["calls"]):
                arcs_bad.append("%s->%s" % (g["function"], c["function"]))
    check("%s: graph arcs: a callee line is the callee's caller line" % tag, not arcs_bad, ", ".join(arcs_bad[:3]))
    cyc_bad = []
    for g in G:
        if not g["function"].startswith("<cycle"):
            continue
        mem = [x for x in G if x.get("cycle") == g.get("cycle") and x is not g]
        out = {}
        for x in mem:
            for c in x["callees"]:
                if byidx.get(c["index"], {}).get("cycle") != g.get("cycle"):
                    o = out.get(c["index"], (0, 0))
                    out[c["index"]] = (o[0] + c["bytes"], o[1] + c["calls"])
        mine = dict((c["index"], (c["bytes"], c["calls"])) for c in g["callees"])
        if out != mine or g["total"] != sum(v[0] for v in mine.values()) + g["self"]:
            cyc_bad.append("%s: members' callees %s, the cycle's %s" % (g["function"], out, mine))
    check("%s: graph cycles: callees = the members' callees outside it" % tag, not cyc_bad, "; ".join(cyc_bad[:2]))
    inc = []
    for g in G:
        if g.get("cycle") or g["function"].startswith("<cycle"):
            continue
        if g["self"] + sum(c["bytes"] for c in g["callees"]) != g["total"]:
            inc.append("%s: %d + %d != %d" % (g["function"], g["self"], sum(c["bytes"] for c in g["callees"]), g["total"]))
        ci = sum(c["bytes"] for c in g["callers"]) + g["cut_bytes"]
        if g["callers"] and ci != g["total"]:
            inc.append("%s: callers %d != %d" % (g["function"], ci, g["total"]))
    check("%s: graph: total = self + callees = callers (outside cycles)" % tag, not inc, "; ".join(inc[:3]))


def check_core(m, prog, core, tag, base=None):
    tmp = tempfile.mkdtemp(prefix="h16f.")
    base = base or [prog, core]
    rc, d = jrun(m, ["--report=all"] + base)
    check("%s: json --report=all parses" % tag, "_error" not in d, d.get("_error", ""))
    if "_error" in d:
        return
    B, K = d["bytes"], d["blocks"]
    # --ignore-fn: the caller of the largest stack's allocation site (not main);
    # --alloc-fn: the most frequent allocation site of the program's own
    ign, af = "no-such-function", "no-such-function"
    for s in d["stacks"]:
        fn = [f.get("function") for f in s["frames"]]
        if len(fn) > 2 and fn[1] and fn[1] != "main" and \
                os.path.basename(s["frames"][1].get("module") or "") == os.path.basename(prog):
            ign = fn[1]
            break
    sites = {}
    for s in d["stacks"]:
        fn = [f.get("function") for f in s["frames"]]
        if len(fn) > 2 and fn[0] and fn[1] and os.path.basename(s["frames"][0].get("module") or "") == os.path.basename(prog):
            sites[fn[0]] = sites.get(fn[0], 0) + 1
    # (a function that also calls another allocation site stays in those stacks)
    for s in d["stacks"]:
        for f in s["frames"][1:]:
            sites.pop(f.get("function"), None)
    if sites:
        af = max(sorted(sites), key=lambda k: sites[k])
    # without the statistics region the tables come from the live blocks
    st = d.get("statistics") or {"allocs": K, "frees": 0, "bytes": B, "live_bytes": B, "live_blocks": K,
                                 "peak_live_bytes": None}
    have_stats = "statistics" in d
    # what the per-stack tables count: a full stack table's unrecorded stacks
    # are their live blocks (allocations = live blocks, frees unknown)
    t_allocs = st["allocs"] - st.get("unrecorded_allocs", 0) + st.get("unrecorded_live_blocks", 0)
    t_bytes = st["bytes"] - st.get("unrecorded_bytes", 0) + st.get("unrecorded_live_bytes", 0)

    # the stacks add up to the header; text header agrees
    check_eq("%s: stacks sum to the header's bytes, blocks" % tag, (B, K),
             (sum(s["bytes"] for s in d["stacks"]), sum(s["blocks"] for s in d["stacks"])))
    check_eq("%s: distinct_stacks is the number of stacks" % tag, d["distinct_stacks"], len(d["stacks"]))
    rc, txt = run(m, ["--top", "0"] + base)
    mt = re.search(r"live blocks: ([\d,]+), requested bytes: ([\d,]+)", txt)
    check_eq("%s: text header = json" % tag, (K, B),
             tuple(int(x.replace(",", "")) for x in mt.groups()) if mt else None)
    tb = sum(int(x.replace(",", "")) for x in re.findall(r"^#\d+: ([\d,]+) bytes", txt, re.M))
    tk = sum(int(x.replace(",", "")) for x in re.findall(r"^#\d+: [\d,]+ bytes \([\d.]+%\) in ([\d,]+) block", txt, re.M))
    check_eq("%s: text stacks (--top 0) sum to the json totals" % tag, (B, K), (tb, tk))
    bad = [s for s in d["stacks"] if (B and abs(s["percent"] - 100.0 * s["bytes"] / B) > 0.001) or
           s["min_size"] > s["max_size"] or s["min_size"] * s["blocks"] > s["bytes"] or
           s["max_size"] * s["blocks"] < s["bytes"] or sum(z["count"] for z in s["sizes"]) > s["blocks"] or
           any(not s["min_size"] <= z["size"] <= s["max_size"] for z in s["sizes"])]
    check("%s: json stacks: percent, sizes within min..max" % tag, not bad, str(bad[:1])[:300])
    # (blocks the image lost, a header an overflow erased, are the statistics' only)
    lost_b, lost_k = st.get("live_bytes_not_in_image", 0), st.get("live_blocks_not_in_image", 0)
    check_eq("%s: statistics' live = the image's + not in the image" % tag, (B + lost_b, K + lost_k),
             (st["live_bytes"], st["live_blocks"]))

    # folded, both weights, and with --folded-lines
    want = stacks_by_folded(d)
    rc, f = run(m, ["--format", "folded"] + base)
    got, bad = parse_folded(f)
    got_folded = got
    check_eq("%s: folded lines all parse" % tag, 0, bad)
    check_eq("%s: folded sum = json bytes" % tag, B, sum(got.values()))
    check("%s: folded per stack = json per stack" % tag, got == want,
          "only folded: %s; only json: %s" % (sorted(set(got.items()) - set(want.items()))[:3],
                                              sorted(set(want.items()) - set(got.items()))[:3]))
    rc, f = run(m, ["--format", "folded", "--weight", "blocks"] + base)
    got, bad = parse_folded(f)
    check_eq("%s: folded --weight blocks = json per stack" % tag, stacks_by_folded(d, "blocks"), got)
    rc, f = run(m, ["--format", "folded", "--folded-lines"] + base)
    got, bad = parse_folded(f)
    check_eq("%s: folded --folded-lines = json per stack" % tag, (0, stacks_by_folded(d, lines=True)), (bad, got))

    # svg: well-formed, the root box is the whole heap, children within parents
    svgf = os.path.join(tmp, "h.svg")
    rc, _ = run(m, ["--format", "svg", "-o", svgf] + base)
    try:
        root = ET.parse(svgf).getroot()
        ok = True
    except ET.ParseError as e:
        ok = False
        root = None
    check("%s: svg is well-formed XML" % tag, ok)
    if root is not None:
        ns = "{http://www.w3.org/2000/svg}"
        titles = [g.find(ns + "title").text for g in root.iter(ns + "g") if g.find(ns + "title") is not None]
        allt = [t for t in titles if t.startswith("all: ")]
        mm = re.match(r"all: ([\d,]+) bytes in ([\d,]+) block", allt[0]) if allt else None
        check_eq("%s: svg's root box = json totals" % tag, (B, K),
                 (int(mm.group(1).replace(",", "")), int(mm.group(2).replace(",", ""))) if mm else None)

        # the boxes per row are the folded stacks' trie (frames of one function
        # under one caller are one box in both), less those under half a pixel,
        # which the note counts
        trie = {}
        for key, w in got_folded.items():
            node = trie
            for name in key.split(";"):
                e = node.setdefault(name, [0, {}])
                e[0] += w
                node = e[1]
        want_rows = {}

        def count_all(node):
            return sum(1 + count_all(sub) for w, sub in node.values())

        def rows(node, dep):
            """fill want_rows from row dep down; returns the boxes too narrow to draw"""
            narrow = 0
            for name, (w, sub) in node.items():
                if B and 1180.0 * w / B < 0.5:
                    narrow += 1 + count_all(sub)
                    continue
                want_rows.setdefault(dep, []).append(w)
                narrow += rows(sub, dep + 1)
            return narrow
        small = rows(trie, 1)
        got_rows = {}
        for g in root.iter(ns + "g"):
            r, t = g.find(ns + "rect"), g.find(ns + "title")
            if r is None or t is None or t.text.startswith("all: "):
                continue
            mm = re.search(r": ([\d,]+) bytes in ", t.text)
            got_rows.setdefault((int(r.get("y")) - 44) // 17, []).append(int(mm.group(1).replace(",", "")))
        note = re.search(r"(\d+) frames narrower than 0.5 px", open(svgf).read())
        check_eq("%s: svg rows = the folded trie's, the note counts the rest" % tag,
                 (dict((k, sorted(v)) for k, v in want_rows.items()), small),
                 (dict((k, sorted(v)) for k, v in got_rows.items()), int(note.group(1)) if note else 0))
        # box geometry: width = weight / total of 1180 pixels; a box's children
        # lie within it, one row below
        boxes = []
        for g in root.iter(ns + "g"):
            r, t = g.find(ns + "rect"), g.find(ns + "title")
            if r is None or t is None:
                continue
            mm = re.search(r": ([\d,]+) bytes in ([\d,]+) block", t.text)
            boxes.append((float(r.get("x")), float(r.get("y")), float(r.get("width")),
                          int(mm.group(1).replace(",", ""))))
        bad = [b for b in boxes if B and abs(b[2] - 1180.0 * b[3] / B) > 0.02]
        check("%s: svg box widths = bytes / total" % tag, boxes and not bad, str(bad[:3]))
        bad = []
        for b in boxes:
            kids = [k for k in boxes if k[1] == b[1] + 17 and b[0] - 0.02 <= k[0] < b[0] + b[2] - 0.02]
            if sum(k[3] for k in kids) > b[3] or any(k[0] + k[2] > b[0] + b[2] + 0.02 for k in kids):
                bad.append(b)
        check("%s: svg: children within their parent" % tag, not bad, str(bad[:3]))

    # pprof
    pbf = os.path.join(tmp, "h.pb.gz")
    rc, _ = run(m, ["--format", "pprof", "-o", pbf] + base)
    try:
        types, samples, locs, funcs = pprof_decode(open(pbf, "rb").read())
    except (ValueError, OSError, IndexError, KeyError) as e:
        types = None
        check("%s: pprof decodes" % tag, False, str(e))
    check("%s: pprof: ids 1..n, every reference exists" % tag, check_wire(pbf))
    bad = pprof_locations_mapped(open(pbf, "rb").read())
    check("%s: pprof: every location's address in its mapping" % tag, not bad, str(bad[:3]))
    if types is not None:
        tn = [t[0] for t in types]
        check_eq("%s: pprof sample types" % tag,
                 (["alloc_objects", "alloc_space"] if have_stats else []) + ["inuse_objects", "inuse_space"], tn)
        tot = [sum(s[0][i] for s in samples) for i in range(len(tn))]
        sums = dict(zip(tn, tot))
        check_eq("%s: pprof inuse totals = json" % tag, (K, B), (sums.get("inuse_objects"), sums.get("inuse_space")))
        if have_stats:
            bad = [x[0] for x in samples if x[0][tn.index("alloc_objects")] < x[0][tn.index("inuse_objects")] or
                   x[0][tn.index("alloc_space")] < x[0][tn.index("inuse_space")]]
            check("%s: pprof: no sample allocated less than it holds" % tag, not bad, str(bad[:3]))
        if have_stats:
            check_eq("%s: pprof alloc totals = the tables' (statistics)" % tag, (t_allocs, t_bytes),
                     (sums.get("alloc_objects"), sums.get("alloc_space")))
        # per stack, by the names of its frames (leaf first)
        pp = {}
        for vals, ids in samples:
            names = []
            for lid in ids:
                for fid in locs.get(lid, []):
                    names.append(funcs.get(fid, "?"))
            key = tuple(n for n in names if not n.startswith("(More stack frames"))
            iv = vals[tn.index("inuse_space")], vals[tn.index("inuse_objects")]
            o = pp.get(key, (0, 0))
            pp[key] = (o[0] + iv[0], o[1] + iv[1])
        js = {}
        for s in d["stacks"]:
            key = tuple(f["function"] or "" for f in s["frames"]) or ("(no frames recorded)",)
            o = js.get(key, (0, 0))
            js[key] = (o[0] + s["bytes"], o[1] + s["blocks"])
        named = dict((k, v) for k, v in js.items() if all(k))
        ppn = dict((k, v) for k, v in pp.items() if k in named)
        check("%s: pprof per stack (named frames) = json" % tag, ppn == named,
              "%s" % sorted(set(named.items()) - set(ppn.items()))[:2])
        # alloc_* per stack = the leak table's allocs and bytes per whole path
        if have_stats:
            rc, dl = jrun(m, ["--report=leaks", "--leak-depth", "256"] + base)
            lk = {}
            for x in dl["leaks"]:
                k = tuple(n for n in x["path"] if "+0x" not in n) if x["path"] else ("(no frames recorded)",)
                o = lk.get(k, (0, 0))
                lk[k] = (o[0] + x["allocs"], o[1] + x["bytes"])
            pa = {}
            for vals, ids in samples:
                names = [funcs.get(fid, "?") for lid in ids for fid in locs.get(lid, [])]
                names = [n for n in names if not n.startswith("(More stack frames")]
                if "main" in names:
                    names = names[:names.index("main") + 1]
                k = tuple(names)
                o = pa.get(k, (0, 0, 0))
                pa[k] = (o[0] + vals[tn.index("alloc_objects")], o[1] + vals[tn.index("alloc_space")],
                         o[2] + vals[tn.index("inuse_objects")])
            # the leak table leaves out the paths whose blocks were all freed
            bad = [(k[:2], pa.get(k), lk.get(k)) for k in set(lk) | set(pa)
                   if lk.get(k) != (pa[k][:2] if k in pa else None) and not (k not in lk and pa[k][2] == 0)]
            check("%s: pprof alloc_* per path = the leak table's (--leak-depth 256)" % tag, not bad, str(bad[:3]))

    # massif
    msf = os.path.join(tmp, "massif.out")
    rc, _ = run(m, ["--format", "massif", "-o", msf] + base)
    snaps = []
    cur = None
    for ln in open(msf, encoding="utf-8", errors="replace"):
        ln = ln.rstrip("\n")
        if ln.startswith("snapshot="):
            cur = {"n": int(ln[9:]), "tree": []}
            snaps.append(cur)
        elif cur is not None and "=" in ln and not ln.startswith(" ") and not ln.startswith("n"):
            k, v = ln.split("=", 1)
            cur[k] = v
        elif cur is not None and re.match(r"^ *n\d+: ", ln):
            cur["tree"].append(ln)
    last = snaps[-1] if snaps else {}
    check_eq("%s: massif last snapshot = live bytes, overhead" % tag, (str(B), str(d["overhead_bytes"])),
             (last.get("mem_heap_B"), last.get("mem_heap_extra_B")))
    now = st["bytes"] + st.get("bytes_freed", 0)
    # the image's moment is the last snapshot: at the peak, it is the peak
    check_eq("%s: massif peak = statistics' peak" % tag,
             B if not have_stats or st["peak_time"] == now else st["peak_live_bytes"],
             max(int(s.get("mem_heap_B", 0)) for s in snaps) if snaps else None)
    check_eq("%s: massif times never go back" % tag, True,
             all(int(a["time"]) <= int(b["time"]) for a, b in zip(snaps, snaps[1:])))
    # the tree: each node = sum of its children
    tr = last.get("tree", [])
    errs = []
    for i, ln in enumerate(tr):
        mm = re.match(r"^( *)n(\d+): (\d+) ", ln)
        ind, nk, by = len(mm.group(1)), int(mm.group(2)), int(mm.group(3))
        kids = []
        for ln2 in tr[i + 1:]:
            m2 = re.match(r"^( *)n\d+: (\d+) ", ln2)
            if len(m2.group(1)) <= ind:
                break
            if len(m2.group(1)) == ind + 1:
                kids.append(int(m2.group(2)))
        if len(kids) != nk or (nk and sum(kids) != by):
            errs.append("%s: %d kids %d bytes" % (ln.strip()[:60], len(kids), sum(kids)))
    check("%s: massif tree: each node = its children" % tag, tr and not errs, "; ".join(errs[:3]))
    check_eq("%s: massif tree root = live bytes" % tag, B,
             int(re.match(r"^n\d+: (\d+)", tr[0]).group(1)) if tr else None)
    for extra in ([], ["--threshold", "0"], ["--ignore-fn", ign], ["--alloc-fn", af]):
        mf = os.path.join(tmp, "m.out")
        run(m, ["--format", "massif", "-o", mf] + extra + base)
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ms_check.py"),
                            mf, "validate"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check_eq("%s: massif %s: massif-visualizer's grammar" % (tag, " ".join(extra)), (0, b""),
                 (p.returncode, p.stderr[:200]))
        if shutil.which("ms_print"):
            p = subprocess.run(["ms_print", mf], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            check_eq("%s: massif %s: ms_print reads it" % (tag, " ".join(extra)), (0, b""),
                     (p.returncode, p.stderr[:200]))

    # html: the embedded data parses and agrees
    hf = os.path.join(tmp, "h.html")
    rc, _ = run(m, ["--format", "html", "--report=lost", "--top", "0", "-o", hf] + base)
    page = open(hf, encoding="utf-8").read()
    mm = re.search(r'<script type="application/json" id="mprof-data">(.*?)</script>', page, re.S)
    try:
        h = json.loads(mm.group(1).replace("<\\/", "</"))
    except (ValueError, AttributeError) as e:
        h = None
        check("%s: html data parses" % tag, False, str(e))
    if h is not None:
        hs0 = h["summary"]
        check_eq("%s: html summary = json summary" % tag,
                 (B, K, B + d["overhead_bytes"], d["distinct_stacks"], d["freed_blocks"], d["damaged_headers"],
                  d["ignored_blocks"], d["ignored_bytes"], d["threads"] if d["kind"] == "core" else None),
                 (hs0["bytes"], hs0["blocks"], hs0.get("with_overhead"), hs0.get("stacks"), hs0.get("freed"),
                  hs0.get("damaged"), hs0.get("ignored_blocks"), hs0.get("ignored_bytes"), hs0.get("threads")))
        t = h["tree"]
        check_eq("%s: html tree root = json totals" % tag, (B, K), (t[2], t[3]))
        sums = {}
        for i in range(4, len(t), 4):
            o = sums.get(t[i], (0, 0))
            sums[t[i]] = (o[0] + t[i + 2], o[1] + t[i + 3])
        over = [(n, v, (t[4 * n + 2], t[4 * n + 3])) for n, v in sums.items()
                if v[0] > t[4 * n + 2] or v[1] > t[4 * n + 3]]
        check("%s: html tree: children within their parent" % tag, not over, str(over[:3]))
        kids = [i for i in range(0, len(t), 4) if i and t[i] == 0]
        check_eq("%s: html tree: the root's children sum to it" % tag, (B, K),
                 (sum(t[i + 2] for i in kids), sum(t[i + 3] for i in kids)))
        hs = h["stacks"]
        rest = h.get("stacks_rest") or [0, 0, 0]
        check_eq("%s: html stacks + rest = json totals" % tag, (B, K),
                 (sum(s[0] for s in hs) + rest[1], sum(s[1] for s in hs) + rest[2]))
        lt = (h.get("lost") or {}).get("lost", {}).get("totals")
        check_eq("%s: html lost totals = json lost totals" % tag, d["lost"]["totals"], lt)
        tl = h.get("timeline") or {}
        check_eq("%s: html timeline peak = statistics" % tag, st["peak_live_bytes"], tl.get("peak_live"))
        # the page's script adds the peak to its samples, as the JSON has it
        hp = list(zip(tl.get("time", []), tl.get("live", [])))
        if tl.get("peak_live") and (tl["peak_time"], tl["peak_live"]) not in hp:
            hp = sorted(hp + [(tl["peak_time"], tl["peak_live"])])
        check_eq("%s: html timeline = json timeline, now = live" % tag,
                 ([(x["time"], x["live_bytes"]) for x in d["timeline"]], st["live_bytes"] if have_stats else None),
                 (hp, tl.get("now_live")))

    # tree (JSON)
    t = d["tree"]
    check_eq("%s: tree root = json totals" % tag, (B, K), (t["bytes"], t["blocks"]))
    check_eq("%s: tree root's children sum to it" % tag, (B, K),
             (sum(c["bytes"] for c in t["children"]), sum(c["blocks"] for c in t["children"])))
    errs = []
    tree_sums(t, "", errs)
    check("%s: tree children within their parents" % tag, not errs, "; ".join(errs[:3]))
    rc, dt0 = jrun(m, ["--report=tree", "--threshold", "0"] + base)
    errs = []

    def exact(n, p):
        if n.get("children"):
            cb = sum(c["bytes"] for c in n["children"])
            ck = sum(c["blocks"] for c in n["children"])
            # a node may keep blocks of its own (stacks ending there: main)
            if cb > n["bytes"] or ck > n["blocks"]:
                errs.append(p)
        for c in n.get("children", []):
            exact(c, p + "/" + str(c.get("function")))
    exact(dt0["tree"], "")
    check("%s: tree --threshold 0 children within parents" % tag, not errs, "; ".join(errs[:3]))
    pe = []

    def pct(n):
        want = 100.0 * n["bytes"] / B if B else 0
        if abs(n["percent"] - want) > 0.001:
            pe.append("%s %s %s" % (n.get("function"), n["percent"], want))
        for c in n.get("children", []):
            pct(c)
    pct(t)
    check("%s: tree percents = bytes / total" % tag, not pe, "; ".join(pe[:3]))

    # the text tree shows the JSON tree's nodes, in its order
    for thr in ("1", "0", "20"):
        rc, tt = run(m, ["--report=tree", "--threshold", thr] + base)
        rc, tj = jrun(m, ["--report=tree", "--threshold", thr] + base)
        seq = preorder(tj["tree"])
        body = tt[tt.find("Allocation tree"):]
        got = []
        for ln in body.splitlines()[1:]:
            mm = re.match(r"^([| ]*)(->)?[\d.]+% \(([\d,]+)B\)", ln)
            if mm:
                got.append((len(mm.group(1)) // 2 + (1 if mm.group(2) else 0), int(mm.group(3).replace(",", ""))))
        check_eq("%s: tree --threshold %s: text = json" % (tag, thr), seq, got)

    # each node of the tree (--threshold 0) holds the stacks that begin with its
    # path of (function, line): the tree keeps call sites on one line apart by
    # address (as Massif), the stacks report merges them, so siblings of one
    # (function, line) are summed
    fk = []
    for sx in d["stacks"]:
        fr = [(f.get("function"), f.get("line")) for f in sx["frames"]]
        names = [f[0] for f in fr]
        if "main" in names:
            fr = fr[:names.index("main") + 1]
        fk.append((fr, sx["bytes"], sx["blocks"]))
    bad = []

    def paths(kids, pre):
        groups = {}
        for c in kids:
            if c.get("cut") or c.get("no_frames") or c.get("below_threshold"):
                continue
            g = groups.setdefault((c.get("function"), c.get("line")), [0, 0, []])
            g[0] += c["bytes"]
            g[1] += c["blocks"]
            g[2] += c.get("children", [])
        for key, (by, bl, sub) in groups.items():
            pth = pre + [key]
            inp = [(b, k) for f, b, k in fk if f[:len(pth)] == pth]
            if (sum(x[0] for x in inp), sum(x[1] for x in inp)) != (by, bl):
                bad.append("%s: %s, stacks %s" % ([x[0] for x in pth], (by, bl), inp))
            paths(sub, pth)
    paths(dt0["tree"]["children"], [])
    check("%s: tree --threshold 0: each node = the stacks through its path" % tag, not bad, "; ".join(bad[:2]))
    # massif's tree at --threshold 0 is the same tree
    seq = preorder(dt0["tree"])
    mf = os.path.join(tmp, "m0.out")
    run(m, ["--format", "massif", "--threshold", "0", "-o", mf] + base)
    body = open(mf).read()
    body = body[body.rindex("heap_tree="):]
    got = [(len(mm.group(1)), int(mm.group(2))) for mm in re.finditer(r"^( *)n\d+: (\d+) ", body, re.M)]
    check_eq("%s: massif tree = json tree at --threshold 0 (ties in any order)" % tag, canon(seq), canon(got))

    # leak table: kept sums to live; allocs and bytes to the statistics
    L = d["leaks"]
    check_eq("%s: leaks kept = live" % tag, (B, K), (sum(x["kept_bytes"] for x in L), sum(x["kept_blocks"] for x in L)))
    # (paths whose blocks were all freed are not in it: their allocs are the
    # direct table's, whose rows with nothing kept are left out here)
    dk = [x for x in d["direct"] if x["kept_bytes"] or x["kept_by_class"]]
    check("%s: leaks allocs, frees, bytes within the statistics" % tag,
          sum(x["allocs"] for x in L) <= st["allocs"] and sum(x["frees"] for x in L) <= st["frees"] and
          sum(x["bytes"] for x in L) <= st["bytes"] and all(x["kept_blocks"] for x in L))
    rc, lt = run(m, ["--report=leaks"] + base)
    rows = re.findall(r"^ +([\d,]+) +[\d.]+% +([\d,]+) +([\d,]+) +([\d,]+) +([\d,]+)  (.*)$", lt, re.M)
    check_eq("%s: leaks text rows = json" % tag,
             [(x["kept_bytes"], x["kept_blocks"], x["allocs"], x["frees"], x["bytes"]) for x in L],
             [tuple(int(v.replace(",", "")) for v in r[:5]) for r in rows])
    # bins
    Bn = d["bins"]
    # (the bins count frees as they happened: a live block the image lost is kept)
    check_eq("%s: bins kept = live + not in the image" % tag, (B + lost_b, K + lost_k),
             (sum(x["kept_bytes"] for x in Bn), sum(x["kept_blocks"] for x in Bn)))
    check_eq("%s: bins allocs, frees, bytes = statistics" % tag,
             (st["allocs"], st["frees"], st["bytes"]),
             (sum(x["allocs"] for x in Bn), sum(x["frees"] for x in Bn), sum(x["bytes"] for x in Bn)))
    check("%s: bins: each bin's kept <= allocated, allocs - frees = kept" % tag,
          all(x["allocs"] - x["frees"] == x["kept_blocks"] and x["kept_bytes"] <= x["bytes"] for x in Bn))
    # direct
    D = d["direct"]
    check_eq("%s: direct bytes, kept, calls = statistics" % tag, (t_bytes, B, t_allocs),
             (sum(x["bytes"] for x in D), sum(x["kept_bytes"] for x in D), sum(x["calls"] for x in D)))
    check("%s: direct: size classes add up to each row" % tag,
          all(sum(x["bytes_by_class"].values()) == x["bytes"] and sum(x["kept_by_class"].values()) == x["kept_bytes"] for x in D))
    rc, dt = run(m, ["--report=direct,graph,bins", "--top", "0"] + base)
    rows = re.findall(r"^ *[\d.]+% +([\d,]+) +([\d,]+) +([\d,]+) +(?:[\d.]+ +){8} (.*)$", dt, re.M)
    check_eq("%s: direct text rows = json" % tag,
             [(x["bytes"], x["kept_bytes"], x["calls"], x["function"]) for x in D],
             [(int(a.replace(",", "")), int(b.replace(",", "")), int(c.replace(",", "")), f) for a, b, c, f in rows])
    rows = re.findall(r"^\[(\d+)\] +[\d.]+% +([\d,]+) +([\d,]+) +([\d,]+)(?:\+([\d,]+))? +(.*) \[\d+\]$", dt, re.M)
    check_eq("%s: graph text primary lines = json" % tag,
             sorted((x["index"], x["self"], x["total"], x["calls"], x["recursive_calls"]) for x in d["graph"]),
             sorted((int(i), int(a.replace(",", "")), int(b.replace(",", "")), int(c.replace(",", "")), int((r or "0").replace(",", ""))) for i, a, b, c, r, f in rows))
    mm = re.search(r"^ total +([\d,]+) +([\d,]+) +([\d,]+)$", dt, re.M)
    check_eq("%s: bins text total line = json sums" % tag,
             (sum(x["allocs"] for x in Bn), sum(x["bytes"] for x in Bn), sum(x["kept_bytes"] for x in Bn)),
             tuple(int(v.replace(",", "")) for v in mm.groups()) if mm else None)
    check_graph(tag, d, t_bytes)
    # timeline
    tl = d["timeline"]
    # sampled once the timeline was halved: its last sample may come before now
    check("%s: timeline: times rise to now, the last sample at now is the live bytes" % tag,
          (not have_stats and not tl) or
          (all(a["time"] < b["time"] for a, b in zip(tl, tl[1:])) and tl[-1]["time"] <= now and
           (tl[-1]["time"] < now or tl[-1]["live_bytes"] == st["live_bytes"])))
    pk = [x for x in tl if x.get("peak")]
    check_eq("%s: timeline's peak sample = statistics" % tag, [st["peak_live_bytes"]] if have_stats and st["peak_live_bytes"] else [],
             [x["live_bytes"] for x in pk])
    # lost
    lo = d["lost"]
    tot = lo["totals"]
    check_eq("%s: lost totals = live" % tag, (B, K),
             (sum(v["bytes"] for v in tot.values()), sum(v["blocks"] for v in tot.values())))
    rc, dl = jrun(m, ["--report=lost", "--top", "0"] + base)
    recs = dl["lost"]["records"]
    bycat = {}
    for r in recs:
        o = bycat.get(r["category"], (0, 0))
        bycat[r["category"]] = (o[0] + r["bytes"], o[1] + r["blocks"])
    check_eq("%s: lost records (--top 0) per category = totals" % tag,
             dict((k, (v["bytes"], v["blocks"])) for k, v in tot.items() if v["blocks"]), bycat)
    rc, lt = run(m, ["--report=lost", "--top", "0"] + base)
    tcat = {}
    for mm in re.finditer(r"^#\d+: ([\d,]+) bytes in ([\d,]+) blocks are (definitely lost|indirectly lost|possibly lost|still reachable)", lt, re.M):
        o = tcat.get(mm.group(3), (0, 0))
        tcat[mm.group(3)] = (o[0] + int(mm.group(1).replace(",", "")), o[1] + int(mm.group(2).replace(",", "")))
    check_eq("%s: lost text records = json" % tag, bycat, tcat)
    # --why and --addr on every live block (at most 64 a run): the categories
    # add up to the lost report's totals; each block is found as itself, its
    # size and allocation site those of its stack in the JSON
    rc, db = jrun(m, ["--blocks", "--top", "0"] + base)
    bl = db.get("block_list", [])
    if 0 < len(bl) <= 64:
        rc, dw = jrun(m, sum([["--why", b["address"]] for b in bl], []) + base)
        cats = {}
        for w in dw.get("why", []):
            o = cats.get(w["category"], (0, 0))
            cats[w["category"]] = (o[0] + w["size"], o[1] + 1)
        check_eq("%s: --why on every block: categories = the lost totals" % tag,
                 dict((k, (v["bytes"], v["blocks"])) for k, v in tot.items() if v["blocks"]), cats)
        rc, da = jrun(m, sum([["--addr", b["address"]] for b in bl], []) + base)
        bad = []
        for b, a in zip(bl, da.get("addresses", [])):
            blk = a.get("block") or {}
            st_fr = db["stacks"][b["stack"]]["frames"] if b["stack"] is not None else []
            if (a["what"], blk.get("address"), blk.get("size"), blk.get("seq")) != ("block", b["address"], b["size"], b["seq"]) or \
                    [(f.get("function"), f.get("line")) for f in blk.get("frames", [])][:1] != \
                    [(f.get("function"), f.get("line")) for f in st_fr][:1]:
                bad.append((b, a.get("what")))
        check("%s: --addr on every block: the block itself, its site" % tag,
              len(da.get("addresses", [])) == len(bl) and not bad, str(bad[:2])[:300])
    # lost with folded: what does it write? the live heap, as documented for exports
    rc, f = run(m, ["--report=lost", "--format", "folded"] + base)
    got, bad = parse_folded(f)
    check_eq("%s: --report=lost --format folded: the live heap" % tag, want, got)
    # types
    ty = d["types"]
    check_eq("%s: types typed + untyped = live" % tag, (B, K),
             (ty["untyped_bytes"] + sum(x["bytes"] for x in ty["types"]),
              ty["untyped_blocks"] + sum(x["blocks"] for x in ty["types"])))
    check_eq("%s: types ntypes = len(types)" % tag, ty["ntypes"], len(ty["types"]))

    # filters
    rc, d3 = jrun(m, ["--top", "3"] + base)
    check_eq("%s: --top 3 keeps 3 stacks, the totals whole" % tag, (min(3, len(d["stacks"])), B, K),
             (len(d3["stacks"]), d3["bytes"], d3["blocks"]))
    check_eq("%s: --top 3 keeps the 3 largest" % tag, [s["bytes"] for s in d["stacks"][:3]],
             [s["bytes"] for s in d3["stacks"]])
    rc, d5 = jrun(m, ["--threshold", "5"] + base)
    check_eq("%s: --threshold 5 keeps stacks of 5%% and more" % tag,
             [s["bytes"] for s in d["stacks"] if not B or 100.0 * s["bytes"] / B >= 5],
             [s["bytes"] for s in d5["stacks"]])
    # --ignore-fn: the blocks under it leave every table; the ignored counts say so
    under = [s for s in d["stacks"] if any(f.get("function") == ign for f in s["frames"])]
    ib, ik = sum(s["bytes"] for s in under), sum(s["blocks"] for s in under)
    rc, di = jrun(m, ["--report=all", "--ignore-fn", ign] + base)
    check_eq("%s: --ignore-fn: bytes + ignored = all" % tag, (B, K, ib, ik),
             (di["bytes"] + di["ignored_bytes"], di["blocks"] + di["ignored_blocks"], di["ignored_bytes"], di["ignored_blocks"]))
    check_eq("%s: --ignore-fn: stacks sum to the bytes kept" % tag, (B - ib, K - ik),
             (sum(s["bytes"] for s in di["stacks"]), sum(s["blocks"] for s in di["stacks"])))
    check_eq("%s: --ignore-fn: tree root = bytes kept" % tag, (B - ib, K - ik), (di["tree"]["bytes"], di["tree"]["blocks"]))
    check_eq("%s: --ignore-fn: leak table kept = bytes kept" % tag, (B - ib, K - ik),
             (sum(x["kept_bytes"] for x in di["leaks"]), sum(x["kept_blocks"] for x in di["leaks"])))
    check_eq("%s: --ignore-fn: direct kept = bytes kept" % tag, B - ib, sum(x["kept_bytes"] for x in di["direct"]))
    check_graph(tag + " --ignore-fn", di, sum(x["bytes"] for x in di["direct"]))
    check_eq("%s: --ignore-fn: lost totals = bytes kept" % tag, (B - ib, K - ik),
             (sum(v["bytes"] for v in di["lost"]["totals"].values()), sum(v["blocks"] for v in di["lost"]["totals"].values())))
    check_eq("%s: --ignore-fn: types = bytes kept" % tag, (B - ib, K - ik),
             (di["types"]["untyped_bytes"] + sum(x["bytes"] for x in di["types"]["types"]),
              di["types"]["untyped_blocks"] + sum(x["blocks"] for x in di["types"]["types"])))
    rc, f = run(m, ["--format", "folded", "--ignore-fn", ign] + base)
    got, bad = parse_folded(f)
    check_eq("%s: --ignore-fn: folded = bytes kept" % tag, B - ib, sum(got.values()))
    rc, _ = run(m, ["--format", "pprof", "--ignore-fn", ign, "-o", pbf] + base)
    types, samples, locs, funcs = pprof_decode(open(pbf, "rb").read())
    tn = [t[0] for t in types]
    check_eq("%s: --ignore-fn: pprof inuse = bytes kept" % tag, (B - ib, K - ik),
             (sum(s[0][tn.index("inuse_space")] for s in samples), sum(s[0][tn.index("inuse_objects")] for s in samples)))
    sums, said = pprof_sums_said(m, base, ["--ignore-fn", ign], pbf)
    check_eq("%s: --ignore-fn: pprof's alloc_* comment = its samples' sums" % tag, sums, said)
    rc, _ = run(m, ["--format", "massif", "--ignore-fn", ign, "-o", msf] + base)
    mh = re.findall(r"^mem_heap_B=(\d+)", open(msf).read(), re.M)
    check_eq("%s: --ignore-fn: massif's last snapshot = bytes kept" % tag, str(B - ib), mh[-1] if mh else None)
    rc, _ = run(m, ["--format", "html", "--ignore-fn", ign, "-o", hf] + base)
    mm = re.search(r'<script type="application/json" id="mprof-data">(.*?)</script>', open(hf).read(), re.S)
    h = json.loads(mm.group(1).replace("<\\/", "</"))
    check_eq("%s: --ignore-fn: html summary, tree = bytes kept" % tag, (B - ib, K - ik, B - ib, K - ik),
             (h["summary"]["bytes"], h["summary"]["blocks"], h["tree"][2], h["tree"][3]))
    rc, _ = run(m, ["--format", "svg", "--ignore-fn", ign, "-o", svgf] + base)
    mm = re.search(r"<title>all: ([\d,]+) bytes in ([\d,]+) block", open(svgf).read())
    check_eq("%s: --ignore-fn: svg root = bytes kept" % tag, (B - ib, K - ik),
             (int(mm.group(1).replace(",", "")), int(mm.group(2).replace(",", ""))) if mm else None)
    # --alloc-fn: the totals stay, the named function leaves the stacks
    rc, da = jrun(m, ["--report=all", "--alloc-fn", af] + base)
    check_eq("%s: --alloc-fn: totals kept" % tag, (B, K), (da["bytes"], da["blocks"]))
    check_eq("%s: --alloc-fn: stacks sum to the totals" % tag, (B, K),
             (sum(s["bytes"] for s in da["stacks"]), sum(s["blocks"] for s in da["stacks"])))
    check("%s: --alloc-fn: no stack starts with it" % tag,
          not [s for s in da["stacks"] if s["frames"] and s["frames"][0].get("function") == af])
    check_eq("%s: --alloc-fn: tree root = totals" % tag, (B, K), (da["tree"]["bytes"], da["tree"]["blocks"]))
    check("%s: --alloc-fn: no direct row for it" % tag, not [x for x in da["direct"] if x["function"] == af])
    check_eq("%s: --alloc-fn: direct sums kept" % tag, (t_bytes, B, t_allocs),
             (sum(x["bytes"] for x in da["direct"]), sum(x["kept_bytes"] for x in da["direct"]), sum(x["calls"] for x in da["direct"])))
    check("%s: --alloc-fn: no graph node for it" % tag, not [x for x in da["graph"] if x["function"] == af])
    check_graph(tag + " --alloc-fn", da, t_bytes)
    check_eq("%s: --alloc-fn: leak table sums kept" % tag, (B, sum(x["allocs"] for x in d["leaks"])),
             (sum(x["kept_bytes"] for x in da["leaks"]), sum(x["allocs"] for x in da["leaks"])))
    check("%s: --alloc-fn: no leak path has it" % tag, not [x for x in da["leaks"] if af in x["path"]])
    rc, f = run(m, ["--format", "folded", "--alloc-fn", af] + base)
    got, bad = parse_folded(f)
    check_eq("%s: --alloc-fn: folded = json" % tag, stacks_by_folded(da), got)
    rc, _ = run(m, ["--format", "massif", "--alloc-fn", af, "-o", msf] + base)
    check("%s: --alloc-fn: massif tree without it" % tag, ": %s (" % af not in open(msf).read())
    rc, _ = run(m, ["--format", "pprof", "--alloc-fn", af, "-o", pbf] + base)
    types, samples, locs, funcs = pprof_decode(open(pbf, "rb").read())
    check("%s: --alloc-fn: pprof without it" % tag, af not in funcs.values())
    rc, _ = run(m, ["--format", "svg", "--alloc-fn", af, "-o", svgf] + base)
    check("%s: --alloc-fn: svg without it" % tag, "<title>%s " % af not in open(svgf).read())
    rc, _ = run(m, ["--format", "html", "--alloc-fn", af, "-o", hf] + base)
    mm = re.search(r'<script type="application/json" id="mprof-data">(.*?)</script>', open(hf).read(), re.S)
    h = json.loads(mm.group(1).replace("<\\/", "</"))
    check("%s: --alloc-fn: html: no frame of it" % tag,
          af not in [h["strings"][h["frames"][i]] for i in range(0, len(h["frames"]), 5)])
    rc, dl = jrun(m, ["--report=lost", "--alloc-fn", af] + base)
    check("%s: --alloc-fn: lost records without it" % tag,
          not [r for r in dl["lost"]["records"] if r["frames"] and r["frames"][0].get("function") == af])
    # --leak-depth
    for n in (1, 2, 8):
        rc, dd = jrun(m, ["--report=leaks", "--leak-depth", str(n)] + base)
        LL = dd["leaks"]
        check("%s: --leak-depth %d: paths of at most %d, kept sums to the live bytes" % (tag, n, n),
              all(len(x["path"]) <= n for x in LL) and
              (sum(x["kept_bytes"] for x in LL), sum(x["kept_blocks"] for x in LL)) == (B, K))
    rc, dd = jrun(m, ["--report=leaks", "--leak-depth", "1"] + base)
    want1 = {}
    for x in d["direct"]:
        if [y for y in d["leaks"] if (y["path"][0] if y["path"] else "(no frames)") == x["function"]]:
            want1[x["function"]] = want1.get(x["function"], 0) + x["kept_bytes"]
    got1 = {}
    for x in dd["leaks"]:
        k1 = x["path"][0] if x["path"] else "(no frames)"
        got1[k1] = got1.get(k1, 0) + x["kept_bytes"]
    check_eq("%s: --leak-depth 1 = the direct table's kept bytes" % tag, want1, got1)
    shutil.rmtree(tmp)


def check_diff(m, prog, old, new, tag):
    rc, a = jrun(m, ["--top", "0", prog, old])
    rc, b = jrun(m, ["--top", "0", prog, new])
    rc, dd = jrun(m, ["diff", "--top", "0", prog, old, old])
    ch = [s for s in dd["stacks"] if s["bytes_old"] != s["bytes_new"] or s["blocks_old"] != s["blocks_new"]]
    check_eq("%s: diff A A: no stack changed" % tag, [], ch)
    check_eq("%s: diff A A: old = new" % tag, (dd["old"]["bytes"], dd["old"]["blocks"]), (dd["new"]["bytes"], dd["new"]["blocks"]))
    rc, dd = jrun(m, ["diff", "--top", "0", prog, old, new])
    check_eq("%s: diff: old, new totals = the cores' json" % tag, (a["bytes"], a["blocks"], b["bytes"], b["blocks"]),
             (dd["old"]["bytes"], dd["old"]["blocks"], dd["new"]["bytes"], dd["new"]["blocks"]))
    check_eq("%s: diff: stacks sum to the totals" % tag,
             (a["bytes"], a["blocks"], b["bytes"], b["blocks"]),
             (sum(s["bytes_old"] for s in dd["stacks"]), sum(s["blocks_old"] for s in dd["stacks"]),
              sum(s["bytes_new"] for s in dd["stacks"]), sum(s["blocks_new"] for s in dd["stacks"])))

    def key(s):
        return tuple((f.get("function"), f.get("file"), f.get("line")) for f in s["frames"]) + (s.get("cut"),)
    per = {}
    for s in a["stacks"]:
        o = per.get(key(s), [0, 0, 0, 0])
        per[key(s)] = [o[0] + s["bytes"], o[1] + s["blocks"], o[2], o[3]]
    for s in b["stacks"]:
        o = per.get(key(s), [0, 0, 0, 0])
        per[key(s)] = [o[0], o[1], o[2] + s["bytes"], o[3] + s["blocks"]]
    got = {}
    for s in dd["stacks"]:
        o = got.get(key(s), [0, 0, 0, 0])
        got[key(s)] = [o[0] + s["bytes_old"], o[1] + s["blocks_old"], o[2] + s["bytes_new"], o[3] + s["blocks_new"]]
    got = dict((k, v) for k, v in got.items() if any(v))
    check("%s: diff per stack = the two cores' stacks" % tag, got == per,
          "%s" % [(k[0], per.get(k), got.get(k)) for k in set(per) | set(got) if per.get(k) != got.get(k)][:3])
    rc, f = run(m, ["diff", "--format", "folded", prog, old, new])
    so = sn = bad = 0
    for ln in f.splitlines():
        mm = re.match(r"^(.*) (\d+) (\d+)$", ln)
        if not mm:
            bad += 1
            continue
        so += int(mm.group(2))
        sn += int(mm.group(3))
    check_eq("%s: diff folded sums = the cores' bytes" % tag, (0, a["bytes"], b["bytes"]), (bad, so, sn))
    rc, f = run(m, ["diff", "--format", "folded", "--weight", "blocks", prog, old, new])
    so = sn = 0
    for ln in f.splitlines():
        mm = re.match(r"^(.*) (\d+) (\d+)$", ln)
        if mm:
            so += int(mm.group(2))
            sn += int(mm.group(3))
    check_eq("%s: diff folded --weight blocks sums = the cores' blocks" % tag, (a["blocks"], b["blocks"]), (so, sn))
    rc, t = run(m, ["diff", "--top", "0", prog, old, new])
    mm = re.search(r"^change: ([+-]?[\d,]+) blocks, ([+-]?[\d,]+) bytes", t, re.M)
    check_eq("%s: diff text change line = new - old" % tag, (b["blocks"] - a["blocks"], b["bytes"] - a["bytes"]),
             (int(mm.group(1).replace(",", "")), int(mm.group(2).replace(",", ""))) if mm else None)
    if dd.get("between"):
        # (null: a stack the statistics' full table did not record)
        bad = [s for s in dd["stacks"] if s["allocs_between"] is not None and
               s["allocs_between"] - s["frees_between"] != s["blocks_new"] - s["blocks_old"]]
        check("%s: diff in-between: allocs - frees = change in blocks per stack" % tag, not bad,
              str([(s["frames"][0].get("function") if s["frames"] else None, s["blocks_old"], s["blocks_new"],
                    s["allocs_between"], s["frees_between"]) for s in bad][:3]))


def main():
    mode, m = sys.argv[1], sys.argv[2]
    if mode == "core":
        check_core(m, sys.argv[3], sys.argv[4], sys.argv[5])
    elif mode == "raw":
        check_core(m, sys.argv[3], sys.argv[4], sys.argv[6],
                   ["--raw", sys.argv[4], "--elf", sys.argv[3], "--base", sys.argv[5]])
    else:
        check_diff(m, sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6])
    print("%d passed, %d failed" % (N[0], N[1]))
    sys.exit(1 if N[1] else 0)


main()
