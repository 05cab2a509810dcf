#!/bin/sh
# run-hunt6b-tables.sh - the Massif tree (--report=tree, text and JSON) and
# mprof's leak table on tests/prog/hunt6b_tables.c, whose blocks are known:
# big 3 x 1,000 from one line of main and 1 x 1,000 from another, small 2 x 500,
# keep 4 x 100 + 4 x 200 through pair's two calls on one line; 6,200 bytes in 14
# blocks. The tree's entries add up to its root,
# blocks without frames included (HEAPANN_UNWIND=none; libstdc++'s own pool,
# made before libheapann's constructor, has its frames when built as C++); --call-sites keeps two calls on one line as one path, as
# the stacks report does; C++ types in the bin table have their scopes.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"

src=tests/prog/hunt6b_tables.c
line() { grep -n "MARK:$1 " "$src" | cut -d: -f1; }
Lkeep=$(line keep); Lpair=$(line pair-line); Lmpair=$(line main-pair)
Lbig=$(line big); Lmbig=$(line main-big); Lmbig2=$(line main-big2); Lsmall=$(line small); Lmsmall=$(line main-small)

# py FILE EXPR: print EXPR (Python) over the JSON report d; kids(n): a tree
# node's children as (function, line, bytes, blocks), "(no frames)" for that entry
py() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def kids(n):
    return [("(no frames)" if c.get("no_frames") else "(below)" if c.get("below_threshold") else c["function"], c["line"], c["bytes"], c["blocks"]) for c in n["children"]]
print(eval(sys.argv[2]))' "$1" "$2"
}

# core NAME ENV... CC ARGS...: build and run under the preload to its abort
core() {
	cn=$1; shift
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && env "$@" "LD_PRELOAD=$TOP/$B/libheapann.so" "$TMP/$cn" >/dev/null 2>&1)
	mv "$TMP/core" "$TMP/core.$cn" 2>/dev/null
	check "$cn: kernel core written" test -s "$TMP/core.$cn"
}

cc -g -O0 -o "$TMP/c" "$src"

# 1. every block without frames: the tree's one entry, not an empty root
core c HEAPANN_UNWIND=none
"$B/mprof-core" --report=tree "$TMP/c" "$TMP/core.c" >"$TMP/none.txt" 2>/dev/null
check_eq "no frames: exit 0" 0 $?
check_grep "no frames: the root holds 6,200 bytes" '^100\.00% \(6,200B\) \(heap allocation' "$TMP/none.txt"
check_grep "no frames: one entry of 6,200 bytes without frames" '^->100\.00% \(6,200B\) \(no frames recorded\)$' "$TMP/none.txt"
"$B/mprof-core" --format json --report=tree "$TMP/c" "$TMP/core.c" >"$TMP/none.json" 2>/dev/null
check_eq "no frames, JSON: the root's one child" "(6200, 14, [('(no frames)', None, 6200, 14)])" \
	"$(py "$TMP/none.json" '(d["tree"]["bytes"], d["tree"]["blocks"], kids(d["tree"]))')"
"$B/mprof-core" --format json --report=graph,direct "$TMP/c" "$TMP/core.c" >"$TMP/noneg.json" 2>/dev/null
check_eq "no frames, JSON: the graph's one node, as the direct table's one row" \
	"[('(no frames)', 6200, 6200, 14)] [('(no frames)', 6200, 14)]" \
	"$(py "$TMP/noneg.json" '"%s %s" % ([(g["function"], g["self"], g["total"], g["calls"]) for g in d["graph"]], [(x["function"], x["bytes"], x["calls"]) for x in d["direct"]])')"
"$B/mprof-core" --format json --report=tree --threshold 100 "$TMP/c" "$TMP/core.c" >"$TMP/none2.json" 2>/dev/null
check_eq "no frames, JSON, --threshold 100: the entry at 100% is kept" "(6200, [('(no frames)', None, 6200, 14)])" \
	"$(py "$TMP/none2.json" 'd["tree"]["bytes"], kids(d["tree"])')"

# 2. every block with frames: the tree as before, nothing without frames
core c
"$B/mprof-core" --format json --report=tree,leaks --call-sites "$TMP/c" "$TMP/core.c" >"$TMP/c.json" 2>/dev/null
check_eq "frames: exit 0" 0 $?
check_eq "frames, JSON: big 3,000, keep 1,200, small 1,000" \
	"[('big', $Lbig, 4000, 4), ('keep', $Lkeep, 1200, 8), ('small', $Lsmall, 1000, 2)]" \
	"$(py "$TMP/c.json" 'kids(d["tree"])')"
"$B/mprof-core" --report=tree,leaks --call-sites "$TMP/c" "$TMP/core.c" >"$TMP/c.txt" 2>/dev/null
check "frames: no entry without frames" sh -c "! grep -q 'no frames' '$TMP/c.txt'"

# 3. the leak table's call sites: pair's two calls of keep on one line are one
# path (1,200 bytes in 8 blocks), main's two lines calling big are two
check_eq "call sites, JSON: keep <- pair <- main one path, 8 blocks" \
	"[(1200, 8, 8, [$Lkeep, $Lpair, $Lmpair])]" \
	"$(py "$TMP/c.json" '[(l["kept_bytes"], l["kept_blocks"], l["allocs"], [x["line"] for x in l["sites"]]) for l in d["leaks"] if l["path"][0] == "keep"]')"
check_eq "call sites, JSON: big from two lines of main, two paths" \
	"[(3000, 3, [$Lbig, $Lmbig]), (1000, 1, [$Lbig, $Lmbig2])]" \
	"$(py "$TMP/c.json" '[(l["kept_bytes"], l["kept_blocks"], [x["line"] for x in l["sites"]]) for l in d["leaks"] if l["path"][0] == "big"]')"
check_eq "call sites, text: one row for keep" 1 "$(grep -c '^ *1,200 .* keep (hunt6b_tables.c:'"$Lkeep"') <- pair (hunt6b_tables.c:'"$Lpair"') <- main' "$TMP/c.txt")"
check_eq "call sites, text: 4 rows, 6,200 bytes kept" "4 6200" \
	"$(awk '/^Memory leak table/ { t = 1 } t && /<-|hunt6b_tables/ { n++; gsub(",", "", $1); s += $1 } END { print n, s }' "$TMP/c.txt")"
"$B/mprof-core" --format json --report=leaks "$TMP/c" "$TMP/core.c" >"$TMP/cf.json" 2>/dev/null
check_eq "functions, JSON: keep 1,200, big 4,000 in one path each" "[(['big', 'main'], 4000), (['keep', 'pair', 'main'], 1200), (['small', 'main'], 1000)]" \
	"$(py "$TMP/cf.json" 'sorted((l["path"], l["kept_bytes"]) for l in d["leaks"])')"

# 4. --ignore-fn pair: out of the leak table; the bins from the statistics region
# cannot leave it out (sizes are counted for all stacks together) and say so;
# the bins from the live blocks (HEAPANN_STATS=0) leave it out
"$B/mprof-core" --format json --report=leaks,bins --ignore-fn pair "$TMP/c" "$TMP/core.c" >"$TMP/ig.json" 2>/dev/null
check_eq "--ignore-fn, statistics: leaks 5,000 bytes; bins 6,200 and flagged" "5000 6200 True" \
	"$(py "$TMP/ig.json" '"%d %d %s" % (sum(l["kept_bytes"] for l in d["leaks"]), sum(b["kept_bytes"] for b in d["bins"]), d.get("bins_include_ignored"))')"
"$B/mprof-core" --report=bins --ignore-fn pair "$TMP/c" "$TMP/core.c" >"$TMP/ig.txt" 2>/dev/null
check_grep "--ignore-fn, statistics, text: the bins say it does not apply" '^\(--ignore-fn does not apply to the bins' "$TMP/ig.txt"
core c HEAPANN_STATS=0
"$B/mprof-core" --format json --report=bins --ignore-fn pair "$TMP/c" "$TMP/core.c" >"$TMP/ig0.json" 2>/dev/null
check_eq "--ignore-fn, live blocks: bins 5,000 without 100 and 200, not flagged" "5000 [500, 1000] None" \
	"$(py "$TMP/ig0.json" '"%d %s %s" % (sum(b["kept_bytes"] for b in d["bins"]), [b["size"] for b in d["bins"]], d.get("bins_include_ignored"))')"

# 5. C++ with libstdc++'s pool: its 72,704-byte block is made by libstdc++'s
# static initializer, which ld.so runs before libheapann's constructor; it has
# its frames (through _dl_init), the tree's entries and the graph's self bytes
# add up to all bytes, the massif export's root too
if command -v g++ >/dev/null; then
	g++ -g -O0 -x c++ -o "$TMP/cxx" "$src" -Wl,--no-as-needed -lstdc++
	core cxx
	"$B/mprof-core" --format json --report=stacks,tree --top 0 "$TMP/cxx" "$TMP/core.cxx" >"$TMP/cxx.json" 2>/dev/null
	check_eq "C++: every block has frames, the pool's through _dl_init" "0 [72704]" \
		"$(py "$TMP/cxx.json" '"%d %s" % (sum(s["bytes"] for s in d["stacks"] if not s["frames"]), [s["bytes"] for s in d["stacks"] if any(f.get("function") == "_dl_init" for f in s["frames"])])')"
	check_eq "C++, JSON: 78,904 bytes, the root's entries add up to it" "78904 78904" \
		"$(py "$TMP/cxx.json" '"%d %d" % (d["bytes"], sum(c["bytes"] for c in d["tree"]["children"]))')"
	"$B/mprof-core" --report=tree "$TMP/cxx" "$TMP/core.cxx" >"$TMP/cxx.txt" 2>/dev/null
	check_eq "C++, text: the root's entries add up to it" \
		"$(sed -n 's/^100\.00% (\([0-9,]*\)B) (heap.*/\1/p' "$TMP/cxx.txt" | tr -d ,)" \
		"$(sed -n 's/^->[0-9.]*% (\([0-9,]*\)B) .*/\1/p' "$TMP/cxx.txt" | tr -d , | awk '{ s += $1 } END { print s }')"
	"$B/mprof-core" --format json --report=graph,direct "$TMP/cxx" "$TMP/core.cxx" >"$TMP/cxxg.json" 2>/dev/null
	check_eq "C++, JSON: the graph's self bytes add up to all bytes, no '(no frames)' node" "78904 0" \
		"$(py "$TMP/cxxg.json" '"%d %d" % (sum(g["self"] for g in d["graph"] if not g["function"].startswith("<cycle")), len([g for g in d["graph"] if g["function"] == "(no frames)"]))')"
	"$B/mprof-core" --format json --report=tree --threshold 99 "$TMP/cxx" "$TMP/core.cxx" >"$TMP/cxx99.json" 2>/dev/null
	check_eq "C++, JSON, --threshold 99: all folded into one entry of 4 places (big, keep, small, the pool)" "78904 4" \
		"$(py "$TMP/cxx99.json" '"%d %d" % (d["tree"]["children"][0]["bytes"], d["tree"]["children"][0]["places"]) if len(d["tree"]["children"]) == 1 else d["tree"]["children"]')"
	"$B/mprof-core" --format massif -o "$TMP/cxx.massif" "$TMP/cxx" "$TMP/core.cxx" 2>/dev/null
	check_grep "C++, massif export: the last snapshot's root holds 78,904 bytes" "^n[0-9]+: 78904 " "$TMP/cxx.massif"

	# 6. the bins' types column names C++ types with their scopes: two W of 40
	# bytes are two names
	g++ -g -O0 -o "$TMP/types" tests/prog/hunt6b_types.cc
	core types
	"$B/mprof-core" --format json --report=bins "$TMP/types" "$TMP/core.types" >"$TMP/types.json" 2>/dev/null
	check_eq "C++ types: by size, with namespaces and classes" \
		"[(28, ['class ns::in::K']), (36, ['struct Top::Inner']), (40, ['struct a::W', 'struct b::W']), (52, ['struct (anonymous namespace)::Hid'])]" \
		"$(py "$TMP/types.json" '[(b["size"], sorted(b["types"])) for b in d["bins"] if b["size"] in (28, 36, 40, 52)]')"
else
	echo "# g++ not installed: C++ part skipped"
fi
done_testing
