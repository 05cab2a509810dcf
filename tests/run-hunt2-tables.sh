#!/bin/sh
# run-hunt2-tables.sh - mprof's call graph, leak and direct tables for
# tests/prog/hunt2_cycles.c: a cycle of three functions (A, B, C) entered from
# main and from E, and D calling itself. Every number below follows from the
# program's four stacks through the cycle (100 + 1000 bytes from main -> A,
# 100 + 1000 from main -> E -> C) and D's two (7 bytes each, one through D three
# times); the same with the statistics region (a kernel core) and without it
# (HEAPANN_STATS=0: the tables from the live blocks).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/cycles
cc -g -O2 -fno-optimize-sibling-calls -fno-inline -no-pie -o "$exe" tests/prog/hunt2_cycles.c

# py FILE EXPR: print EXPR (Python) over the JSON report d; g(F): F's graph entry;
# e(L): a caller/callee list as sorted (function, bytes, calls)
py() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def g(f):
    return [x for x in d["graph"] if x["function"] == f][0]
def e(l):
    return sorted((c["function"], c["bytes"], c["calls"]) for c in l)
print(eval(sys.argv[2]))' "$1" "$2"
}

for mode in stats nostats; do
	rm -f "$TMP/core"
	if [ $mode = stats ]; then
		(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >/dev/null 2>&1)
		src=statistics
	else
		(cd "$TMP" && ulimit -c unlimited && HEAPANN_STATS=0 LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >/dev/null 2>&1)
		src=live_blocks
	fi
	check "$mode: kernel core written" test -s "$TMP/core"
	J=$TMP/$mode.json
	"$B/mprof-core" --format json --report=graph,leaks,direct --top 0 "$exe" "$TMP/core" >"$J" 2>"$J.err"
	check_eq "$mode: exit 0" 0 $?
	check_eq "$mode: tables from the $src" "$src" "$(py "$J" 'd["tables_source"]')"
	check_eq "$mode: one cycle, of A, B and C" "[['A', 'B', 'C']]" \
		"$(py "$J" '[sorted(x["members"]) for x in d["graph"] if x["function"].startswith("<cycle")]')"
	check_eq "$mode: the cycle as a whole: 2200 bytes its own, 4 calls, from main and E 1100 each" \
		"(2200, 2200, 4, [('E', 1100, 2), ('main', 1100, 2)])" \
		"$(py "$J" '(lambda c: (c["self"], c["total"], c["calls"], e(c["callers"])))(g("<cycle 1>"))')"
	check_eq "$mode: main: 2214 bytes under it; A 1100, E 1100, D 14" \
		"(0, 2214, 6, [('A', 1100, 2), ('D', 14, 2), ('E', 1100, 2)])" \
		"$(py "$J" '(lambda c: (c["self"], c["total"], c["calls"], e(c["callees"])))(g("main"))')"
	check_eq "$mode: A: 0 own, 2200 under it, 4+2 calls; called by B and main, calls B" \
		"(0, 2200, 4, 2, 1, [('B', 2200, 4), ('main', 1100, 2)], [('B', 2200, 4)])" \
		"$(py "$J" '(lambda c: (c["self"], c["total"], c["calls"], c["recursive_calls"], c["cycle"], e(c["callers"]), e(c["callees"])))(g("A"))')"
	check_eq "$mode: B: 200 own, 4+4 calls; called by A and C, calls A and C" \
		"(200, 2200, 4, 4, [('A', 2200, 4), ('C', 1100, 2)], [('A', 2200, 4), ('C', 2000, 2)])" \
		"$(py "$J" '(lambda c: (c["self"], c["total"], c["calls"], c["recursive_calls"], e(c["callers"]), e(c["callees"])))(g("B"))')"
	check_eq "$mode: C: 2000 own, 2100 under it, 3+1 calls; called by B and E, calls B" \
		"(2000, 2100, 3, 1, [('B', 2000, 2), ('E', 1100, 2)], [('B', 1100, 2)])" \
		"$(py "$J" '(lambda c: (c["self"], c["total"], c["calls"], c["recursive_calls"], e(c["callers"]), e(c["callees"])))(g("C"))')"
	check_eq "$mode: D calls itself, no cycle: 14 bytes, 2+2 calls" \
		"(14, 14, 2, 2, None, [('main', 14, 2)])" \
		"$(py "$J" '(lambda c: (c["self"], c["total"], c["calls"], c["recursive_calls"], c["cycle"], e(c["callers"])))(g("D"))')"
	check_eq "$mode: direct: C 2000 bytes in 2 calls, B 200 in 2, D 14 in 2" \
		"[('C', 2000, 2000, 2), ('B', 200, 200, 2), ('D', 14, 14, 2)]" \
		"$(py "$J" '[(x["function"], x["bytes"], x["kept_bytes"], x["calls"]) for x in d["direct"]]')"
	check_eq "$mode: leaks: six paths, 2214 bytes kept" \
		"(6, 2214, [1000, 1000, 100, 100, 7, 7])" \
		"$(py "$J" '(len(d["leaks"]), sum(l["kept_bytes"] for l in d["leaks"]), [l["kept_bytes"] for l in d["leaks"]])')"
	check_eq "$mode: leaks: D's two paths" "[['D', 'D', 'D', 'main'], ['D', 'main']]" \
		"$(py "$J" 'sorted(l["path"] for l in d["leaks"] if l["path"][0] == "D")')"
done
done_testing
