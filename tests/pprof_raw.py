#!/usr/bin/env python3
# pprof_raw.py - checks over a pprof profile for tests/run-pprof.sh: reads the
# text that `go tool pprof -raw` prints (samples, locations with their lines,
# mappings), or decodes the gzip'd profile.proto itself (mode wire). Exits 0 when
# the check holds, 1 (with what it saw on stderr) when it does not.
#
#   pprof_raw.py RAW types T/U...           the sample types, in order
#   pprof_raw.py RAW sample V1,V2,.. F:L..  the samples whose frames (all lines of
#                                           all their locations, leaf first) begin
#                                           F:L.. (F alone: any line) have values
#                                           V1,V2.. in all (a call site unrolled
#                                           into several calls is one sample per
#                                           return address)
#   pprof_raw.py RAW total V1,V2,..         the sums of the values over all samples
#   pprof_raw.py RAW nsamples N             number of samples
#   pprof_raw.py RAW location F:L..         one location has exactly these lines
#   pprof_raw.py RAW mapping FILE BUILDID FLAGS  the mapping of FILE (path or
#                                           basename) has this build-id and flags
#   pprof_raw.py RAW comment REGEX          a comment matches REGEX
#   pprof_raw.py PB wire                    string_table[0] is "", mapping,
#                                           location and function ids are 1..n,
#                                           every sample has one value per type,
#                                           every id referenced exists
import gzip
import re
import sys


def parse_raw(path):
    prof = {"types": [], "samples": [], "locs": {}, "maps": [], "comments": []}
    section = None
    last = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("Comment: "):
            prof["comments"].append(line[len("Comment: "):])
            continue
        if line == "Samples:":
            section = "types"
            continue
        if line == "Locations":
            section = "locs"
            continue
        if line == "Mappings":
            section = "maps"
            continue
        if section == "types":
            prof["types"] = [t.replace("[dflt]", "") for t in line.split()]
            section = "samples"
        elif section == "samples":
            m = re.match(r"^\s*((?:-?\d+\s+)*-?\d+):\s*([\d ]*)$", line)
            if m:
                vals = [int(v) for v in m.group(1).split()]
                ids = [int(v) for v in m.group(2).split()]
                prof["samples"].append((vals, ids))
        elif section == "locs":
            m = re.match(r"^\s*(\d+): 0x([0-9a-f]+) (?:M=(\d+) )?(?:\[F\] )?(.*)$", line)
            if m:
                last = int(m.group(1))
                prof["locs"][last] = {"addr": int(m.group(2), 16),
                                      "map": int(m.group(3) or 0), "lines": []}
                rest = m.group(4)
            else:
                rest = line.strip()
            if rest and last is not None:
                lm = re.match(r"^(.*) (\S*):(-?\d+) s=\d+(?:\(.*\))?$", rest)
                if lm:
                    prof["locs"][last]["lines"].append((lm.group(1), lm.group(2), int(lm.group(3))))
                else:
                    prof["locs"][last]["lines"].append((rest, "", 0))
        elif section == "maps":
            m = re.match(r"^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S*) (\S*) ?(\S*)$", line)
            if m:
                prof["maps"].append({"id": int(m.group(1)), "start": int(m.group(2), 16),
                                     "limit": int(m.group(3), 16), "offset": int(m.group(4), 16),
                                     "file": m.group(5), "buildid": m.group(6),
                                     "flags": m.group(7)})
    return prof


def frames(prof, ids):
    out = []
    for i in ids:
        for fn, _file, line in prof["locs"][i]["lines"]:
            out.append((fn, line))
    return out


def frame_matches(have, want):
    fn, line = have
    if ":" in want and re.match(r".*:\d+$", want):
        wfn, wl = want.rsplit(":", 1)
        return fn == wfn and line == int(wl)
    return fn == want


def show(prof):
    for vals, ids in prof["samples"]:
        print("    sample %s: %s" % (vals, " ".join("%s:%d" % f for f in frames(prof, ids))),
              file=sys.stderr)


# ---- the wire format itself ----

def varint(b, i):
    v = 0
    shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        else:
            raise ValueError("unexpected wire type %d" % wt)
        yield num, wt, v


def packed(v, wt):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def check_wire(path):
    b = gzip.open(path).read()
    strs, types, samples = [], 0, []
    ids = {3: [], 4: [], 5: []}
    refs = {"map": [], "loc": [], "func": [], "str": []}
    for num, wt, v in fields(b):
        if num == 6:
            strs.append(v.decode())
        elif num == 1:
            types += 1
        elif num == 2:
            locs, vals = [], []
            for n2, w2, v2 in fields(v):
                if n2 == 1:
                    locs += packed(v2, w2)
                elif n2 == 2:
                    vals += packed(v2, w2)
            samples.append((locs, vals))
            refs["loc"] += locs
        elif num in ids:
            f = {n2: v2 for n2, w2, v2 in fields(v) if w2 == 0}
            ids[num].append(f.get(1, 0))
            if num == 3:
                refs["str"] += [f.get(5, 0), f.get(6, 0)]
            if num == 4:
                refs["map"].append(f.get(2, 0))
                for n2, w2, v2 in fields(v):
                    if n2 == 4:
                        ln = {n3: v3 for n3, w3, v3 in fields(v2)}
                        refs["func"].append(ln.get(1, 0))
            if num == 5:
                refs["str"] += [f.get(2, 0), f.get(3, 0), f.get(4, 0)]
    bad = []
    if not strs or strs[0] != "":
        bad.append("string_table[0] is not empty")
    for num, what in ((3, "mapping"), (4, "location"), (5, "function")):
        if ids[num] != list(range(1, len(ids[num]) + 1)):
            bad.append("%s ids are not 1..n: %s" % (what, ids[num][:20]))
    for locs, vals in samples:
        if len(vals) != types:
            bad.append("a sample has %d values for %d types" % (len(vals), types))
            break
    if any(m and m > len(ids[3]) for m in refs["map"]):
        bad.append("a location names a missing mapping")
    if any(l < 1 or l > len(ids[4]) for l in refs["loc"]):
        bad.append("a sample names a missing location")
    if any(f < 1 or f > len(ids[5]) for f in refs["func"]):
        bad.append("a line names a missing function")
    if any(s >= len(strs) for s in refs["str"]):
        bad.append("a string index is past the table")
    for m in bad:
        print("    " + m, file=sys.stderr)
    return not bad


def main():
    path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "wire":
        return 0 if check_wire(path) else 1
    prof = parse_raw(path)
    ok = False
    if mode == "types":
        ok = prof["types"] == args
        if not ok:
            print("    types: %s" % prof["types"], file=sys.stderr)
    elif mode == "sample":
        want_vals = [int(v) for v in args[0].split(",")]
        want = args[1:]
        hits = []
        for vals, ids in prof["samples"]:
            fr = frames(prof, ids)
            if len(fr) >= len(want) and all(frame_matches(fr[k], w) for k, w in enumerate(want)):
                hits.append(vals)
        sums = [sum(h[k] for h in hits) for k in range(len(want_vals))] if hits else None
        ok = sums == want_vals
        if not ok:
            print("    samples with frames %s: %s" % (want, hits), file=sys.stderr)
            show(prof)
    elif mode == "total":
        want_vals = [int(v) for v in args[0].split(",")]
        sums = [sum(s[0][k] for s in prof["samples"]) for k in range(len(prof["types"]))]
        ok = sums == want_vals
        if not ok:
            print("    totals: %s" % sums, file=sys.stderr)
    elif mode == "nsamples":
        ok = len(prof["samples"]) == int(args[0])
        if not ok:
            show(prof)
    elif mode == "location":
        for l in prof["locs"].values():
            fr = [(fn, line) for fn, _f, line in l["lines"]]
            if len(fr) == len(args) and all(frame_matches(fr[k], w) for k, w in enumerate(args)):
                ok = True
        if not ok:
            for i, l in sorted(prof["locs"].items()):
                print("    location %d: %s" % (i, l["lines"]), file=sys.stderr)
    elif mode == "mapping":
        want_file, want_id, want_flags = args[0], args[1], args[2] if len(args) > 2 else None
        ms = [m for m in prof["maps"]
              if m["file"] == want_file or m["file"].rsplit("/", 1)[-1] == want_file]
        ok = len(ms) >= 1 and all(m["buildid"] == want_id and
                                  (want_flags is None or m["flags"] == want_flags) for m in ms)
        if not ok:
            print("    mappings: %s" % prof["maps"], file=sys.stderr)
    elif mode == "comment":
        ok = any(re.search(args[0], c) for c in prof["comments"])
        if not ok:
            print("    comments: %s" % prof["comments"], file=sys.stderr)
    else:
        print("unknown mode " + mode, file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
