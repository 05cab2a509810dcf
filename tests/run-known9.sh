#!/bin/sh
# run-known9.sh - defects an earlier session noticed and left:
#  1. a stack cut at HEAPANN_DEPTH (the walk stopped at the limit, not at the
#     outermost frame) is marked as cut, in the header (block format 2) and in
#     the statistics region's slot, and every output says so: text and the
#     other reports (gdb's "(More stack frames follow...)" line), JSON ("cut"),
#     folded and svg (a root frame), massif and the tree (a node), HTML, pprof.
#     tests/prog/known9_depth.c under HEAPANN_DEPTH=8: 3 blocks 13 calls deep
#     from two callers whose stacks differ only below the cut (one cluster,
#     marked), 2 whole stacks of 7 frames and one of exactly 8 (not marked).
#  3. an exception object (__cxa_allocate_exception's malloc) live in a core:
#     its stack starts at the throw site, libstdc++'s frame stripped as the
#     allocator's (tests/prog/known9_throw.cc).
#  4. mprof-core diff with --raw and a core's operands: one line saying why
#     (before: 'unexpected argument' or '--raw needs --elf'), exit 2.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (frame counts of glibc's start code)"
command -v python3 >/dev/null || skip "python3 not installed"
command -v gdb >/dev/null || skip "gdb not installed"

cc -g -O2 -o "$TMP/depth" tests/prog/known9_depth.c || skip "cannot compile tests/prog/known9_depth.c"

# ---- 1. stacks cut at HEAPANN_DEPTH ----
HEAPANN_DEPTH=8 gcore_waiting "$TMP/d.core" "$TMP/depth"
check_eq "depth: the program ran" 0 $?
M="$B/mprof-core"
"$M" "$TMP/depth" "$TMP/d.core" >"$TMP/d.txt" 2>&1
check_eq "depth: text report exit 0" 0 $?
# the cluster of the 3 deep blocks: its 8 deep() frames, then the cut line
awk '/^#[0-9]+: 3,000 bytes .* in 3 blocks/ { on = 1; next } on && /^$/ { on = 0 } on' \
	"$TMP/d.txt" >"$TMP/deep.txt"
check_eq "depth: the deep blocks are one cluster of 8 deep() frames" 8 "$(grep -c '^    deep (known9_depth.c:' "$TMP/deep.txt")"
check_eq "depth: the deep cluster ends with the cut line" \
	"    (More stack frames follow: cut at HEAPANN_DEPTH=8)" "$(tail -n 1 "$TMP/deep.txt")"
for sz in 2,000 2,500; do
	awk -v s="$sz" '$0 ~ "^#[0-9]+: " s " bytes" { on = 1; next } on && /^$/ { on = 0 } on' \
		"$TMP/d.txt" >"$TMP/whole.txt"
	check_eq "depth: the $sz-byte stack ends at _start" "    _start [depth]" "$(tail -n 1 "$TMP/whole.txt")"
done
check_eq "depth: no whole stack has the cut line" 0 \
	"$(awk '/^#[0-9]+: 2,[05]00 bytes/ { on = 1; next } on && /^$/ { on = 0 } on' "$TMP/d.txt" | grep -c 'More stack frames')"
check_eq "depth: the 8-frame whole stack shows 8 frames" 8 "$(wc -l <"$TMP/whole.txt")"

"$M" --format json "$TMP/depth" "$TMP/d.core" >"$TMP/d.json" 2>"$TMP/d.err"
check_eq "depth: json exit 0" 0 $?
check_eq "depth: json: cut by stack bytes" "2000:False 2000:False 2500:False 3000:True" "$(python3 - "$TMP/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted("%d:%s" % (s["bytes"], s["cut"]) for s in d["stacks"]
                      if s["bytes"] in (2000, 2500, 3000))))
PY
)"

"$M" --format folded "$TMP/depth" "$TMP/d.core" >"$TMP/d.folded" 2>/dev/null
check_eq "depth: folded: the deep stack under the cut root" \
	"[more frames: cut at HEAPANN_DEPTH];deep;deep;deep;deep;deep;deep;deep;deep 3000" \
	"$(grep '^\[more frames' "$TMP/d.folded" | grep ';deep 3000$')"
check_eq "depth: folded: the whole stacks have no cut root" "" \
	"$(grep -E ' (2000|2500)$' "$TMP/d.folded" | grep 'more frames')"

"$M" --report tree --threshold 0 "$TMP/depth" "$TMP/d.core" >"$TMP/d.tree" 2>/dev/null
check_grep "depth: tree: a cut node of 3,000 bytes" \
	'->[0-9.]+% \(3,000B\) \(More stack frames follow: cut at HEAPANN_DEPTH\)$' "$TMP/d.tree"
# stdio's two cut stacks pass through main, where the tree stops (as Massif's)
check_eq "depth: tree: one cut node, the deep stack's" 1 \
	"$(grep -c 'More stack frames follow' "$TMP/d.tree")"

"$M" --format massif --threshold 0 "$TMP/depth" "$TMP/d.core" >"$TMP/d.massif" 2>/dev/null
check_grep "depth: massif: a cut node of 3000 bytes" \
	'^ *n0: 3000 \(More stack frames follow: cut at HEAPANN_DEPTH\)$' "$TMP/d.massif"

"$M" --format html "$TMP/depth" "$TMP/d.core" >"$TMP/d.html" 2>/dev/null
check_eq "depth: html: exit 0" 0 $?
check_grep "depth: html: the cut label is in the page's data" \
	'More stack frames follow: cut at HEAPANN_DEPTH' "$TMP/d.html"

"$M" --format pprof -o "$TMP/d.pb.gz" "$TMP/depth" "$TMP/d.core" 2>/dev/null
check_eq "depth: pprof: the cut location's name" 1 \
	"$(gzip -dc "$TMP/d.pb.gz" | grep -ac 'More stack frames follow: cut at HEAPANN_DEPTH')"

# the statistics region: blocks freed before the core, whose cut stack only
# the region keeps (HEAPANN_DEPTH=12: stdio's stacks are whole, deep's are not)
HEAPANN_DEPTH=12 gcore_waiting "$TMP/f.core" "$TMP/depth" freed
check_eq "depth, freed: the program ran" 0 $?
"$M" "$TMP/depth" "$TMP/f.core" >"$TMP/f.txt" 2>&1
check_eq "depth, freed: no live stack is cut" 0 "$(grep -c 'More stack frames' "$TMP/f.txt")"
"$M" --format pprof -o "$TMP/f.pb.gz" "$TMP/depth" "$TMP/f.core" 2>/dev/null
check_eq "depth, freed: pprof's allocation samples carry the cut (statistics region)" 1 \
	"$(gzip -dc "$TMP/f.pb.gz" | grep -ac 'More stack frames follow: cut at HEAPANN_DEPTH')"

# ---- 1b. a damaged header of a cut stack: the check word still proves its size ----
# (the check covers the whole DEPTH word, HEAPANN_DEPTH_CUT included; the
# corruption report's recovery used END's frame count alone, so it lost the
# size and seq of every damaged header on a cut stack)
cc -g -O0 -o "$TMP/dmg" tests/prog/known9_dmg.c
check_eq "damaged cut header: tests/prog/known9_dmg.c compiles" 0 $?
if [ -x "$TMP/dmg" ]; then
	HEAPANN_DEPTH=4 gcore_waiting "$TMP/g.core" "$TMP/dmg"
	cut_blk=$(sed -n '1s/^block //p' "$TMP/out")
	whole_blk=$(sed -n '2s/^block //p' "$TMP/out")
	"$M" --report corruption "$TMP/dmg" "$TMP/g.core" >"$TMP/g.txt" 2>&1
	check_eq "damaged cut header: size and seq proved by its check word" 1 \
		"$(grep -c "damaged header at .*: block $cut_blk, 1,100 bytes, seq 3 (its check word still proves them)" "$TMP/g.txt")"
	check_eq "damaged whole header: size and seq proved by its check word" 1 \
		"$(grep -c "damaged header at .*: block $whole_blk, 888 bytes, seq 4 (its check word still proves them)" "$TMP/g.txt")"
	"$M" --addr "$cut_blk" "$TMP/dmg" "$TMP/g.core" >"$TMP/ga.txt" 2>&1
	check_eq "--addr of the damaged cut block: its size and seq" 1 \
		"$(grep -c "^address $cut_blk: 0 bytes into block $cut_blk (1100 bytes, seq 3)" "$TMP/ga.txt")"
fi

# ---- 3. the exception object's stack starts at the throw site ----
if command -v g++ >/dev/null && g++ -g -O2 -o "$TMP/throw" tests/prog/known9_throw.cc; then
	gcore_waiting "$TMP/t.core" "$TMP/throw"
	check_eq "throw: the program ran" 0 $?
	tl=$(grep -n '// THROW' tests/prog/known9_throw.cc | cut -d: -f1)
	"$M" --format json "$TMP/throw" "$TMP/t.core" >"$TMP/t.json" 2>/dev/null
	check_eq "throw: the live exception object's stack starts at k9_thrower:$tl" \
		"k9_thrower(int) known9_throw.cc:$tl" "$(python3 - "$TMP/t.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for s in d["stacks"]:
    names = [f["function"] or "" for f in s["frames"]]
    if any(n.startswith("k9_thrower") for n in names):
        f = s["frames"][0]
        print(f["function"], "%s:%s" % (os.path.basename(f["file"] or "?"), f["line"]))
PY
)"
	"$M" "$TMP/throw" "$TMP/t.core" >"$TMP/t.txt" 2>&1
	check_eq "throw: __cxa_allocate_exception is not in the text report" 0 \
		"$(grep -c '__cxa_allocate_exception' "$TMP/t.txt")"
else
	echo "# g++ missing or failed: the exception case is not checked"
fi

# ---- 4. diff with --raw and a core's operands: one line saying why, exit 2 ----
# (diff of two raw dumps works: run-rawdiff.sh; a dump and cores are refused)
for args in "--raw $TMP/x.bin --elf $TMP/depth --base 0x10000 $TMP/depth $TMP/d.core $TMP/d.core" \
	"$TMP/depth --raw $TMP/x.bin --elf $TMP/depth --base 0x10000 $TMP/d.core $TMP/d.core" \
	"--raw $TMP/x.bin $TMP/depth $TMP/d.core $TMP/d.core"; do
	"$M" diff $args >"$TMP/r.out" 2>"$TMP/r.err"
	check_eq "diff $args: exit 2" 2 $?
	check_eq "diff with --raw and PROG OLD NEW: one line, saying why" "1 yes" \
		"$(wc -l <"$TMP/r.err") $(grep -Eq '^mprof-core: (unexpected argument .* with --raw|--raw needs --elf ELF) \(see mprof-core --help\)$' "$TMP/r.err" && echo yes)"
done

done_testing
