#!/bin/sh
# run-types.sh - --report=types: the live blocks by C++ dynamic type, from the
# vtable pointer at each block's start (tests/prog/vtypes.cc knows what it
# made): 100 Circle, 50 Square and 12 Holder (whose first member is a Square:
# read as Square, a known limit), 20 ns::Tri<int>, 10 Both (two polymorphic
# bases: its own vtable), 2 arrays Circle[3] (new[]: the element count first),
# 7 make_shared control blocks, 30 Plain (no virtual functions: untyped). In a
# kernel core of g++ -O2 and clang++ -O0 builds, and libheapann's exit
# snapshot; text and JSON; a stripped program has no vtable names (untyped).
# --addr names the type of the block it lands in (data, header, guard).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v g++ >/dev/null || skip "g++ not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || skip "core_pattern is not 'core'"
src=tests/prog/vtypes.cc

# types JSON: "TYPE BLOCKS BYTES; ..." of the program's own types, the
# make_shared blocks as "shared", then the untyped blocks
types() {
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["types"]
out = []
for x in t["types"]:
    n = x["type"]
    if n.startswith("std::_Sp_counted_ptr_inplace<Circle,"):
        n = "shared"
    elif n not in ("Circle", "Square", "ns::Tri<int>", "Both", "Circle[]", "Plain", "Holder"):
        continue
    out.append("%s %d %d" % (n, x["blocks"], x["bytes"]))
print("; ".join(sorted(out)))
print(t["ntypes"] == len(t["types"]))' "$1"
}
W="Both 10 240; Circle 100 2400; Circle[] 2 160; Square 62 1584; ns::Tri<int> 20 480; shared 7 280
True"

# one BUILD: g++ or clang++ with flags
one() {
	n=$1 cxx=$2; shift 2
	command -v "$cxx" >/dev/null || { echo "# $cxx not installed: $n left out"; return; }
	d=$TMP/$n; mkdir -p "$d"
	$cxx -g "$@" -o "$d/prog" $src || { check "$n: builds" false; return; }
	rm -f "$d/core"
	(cd "$d" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./prog abort >"$d/out" 2>/dev/null; true) 2>/dev/null
	check_eq "$n: the sizes the test assumes, a kernel core" "sizes 24 24 24 24 24 32 yes" \
		"$(cat "$d/out") $(test -s "$d/core" && echo yes)"
	"$B/mprof-core" --report=types --format json "$d/prog" "$d/core" >"$d/t.json" 2>"$d/t.err"
	check_eq "$n: exit 0" 0 $?
	check_eq "$n: blocks and bytes of each type" "$W" "$(types "$d/t.json")"
	"$B/mprof-core" --report=types --top 3 "$d/prog" "$d/core" >"$d/t.txt" 2>/dev/null
	check_grep "$n text: Circle first" "^ +2,400 +100  Circle$" "$d/t.txt"
	check_grep "$n text: Square (with the Holders) second" "^ +1,584 +62  Square$" "$d/t.txt"
	check_grep "$n text: --top 3 leaves the rest" "^\.\.\. [0-9]+ more types \(--top 0 shows all\)$" "$d/t.txt"
	check_grep "$n text: the summary line" "^typed: [0-9,]+ bytes in [0-9,]+ blocks of [0-9]+ types; untyped: [0-9,]+ bytes in [0-9,]+ blocks$" "$d/t.txt"
}
one g++-O2 g++ -O2
one clang++-O0 clang++ -O0

# the exit snapshot of the g++ build: after the static destructors, which
# freed the make_shared blocks (the vector of shared_ptrs), not the rest
d=$TMP/g++-O2
mkdir -p "$d/snap"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/snap HEAPANN_QUIET=1 LD_PRELOAD="$TOP/$B/libheapann.so" "$d/prog" >/dev/null 2>&1
set -- "$d"/snap/*.core
"$B/mprof-core" --report=types --format json "$d/prog" "$1" >"$d/s.json" 2>/dev/null
check_eq "exit snapshot: blocks and bytes of each type" "${W%; shared*}
True" "$(types "$d/s.json")"

# --addr names a live block's type too (block, header and guard answers, text
# and JSON): one block of each kind the program made, found by its line
d=$TMP/g++-O2
# pick LINE...: the first block allocated at each line of vtypes.cc, "ADDR SIZE"
pick() {
	"$B/mprof-core" --blocks --format json "$d/prog" "$d/core" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for line in sys.argv[1:]:
    for b in d["block_list"]:
        fr = [f for f in d["stacks"][b["stack"]]["frames"] if (f.get("file") or "").endswith("/vtypes.cc")]
        if fr and fr[0].get("line") == int(line):
            print(b["address"], b["size"])
            break
    else:
        print("none 0")' "$@"
}
src_line() { grep -n "$1" $src | head -n 1 | cut -d: -f1; }
if [ -s "$d/core" ]; then
	blocks=$(pick "$(src_line 'new Circle);')" "$(src_line 'new Square);')" "$(src_line 'new Circle\[3\]')" "$(src_line 'new Plain()')" "$(src_line 'new Holder()')")
	set -- $blocks
	c=$1 cs=$2 q=$3 a=$5 pl=$7 h=$9
	"$B/mprof-core" --addr $((c + 8)) --addr $((c - 16)) --addr $((c + cs)) --addr $((q + 4)) \
		--addr $((a + 8)) --addr $((pl + 4)) --addr $((h + 4)) "$d/prog" "$d/core" >"$d/a.txt" 2>/dev/null
	check_eq "--addr: exit 0" 0 $?
	check_eq "--addr text: Circle (inside, its header, its guard), Square, Circle[], Plain untyped, Holder as Square" \
		"type Circle)
type Circle)
type Circle), in its
type Square)
type Circle[])
seq
type Square)" \
		"$(grep '^address' "$d/a.txt" | sed -e 's/.*\(type [^)]*)\(, in its\)*\).*/\1/' -e 's/.*(.* bytes, \(seq\) [0-9]*).*/\1/')"
	"$B/mprof-core" --format json --addr $((c + 8)) --addr $((pl + 4)) --addr $((c + cs + 40)) "$d/prog" "$d/core" >"$d/a.json" 2>/dev/null
	check_eq "--addr JSON: the block's type, null when untyped" "Circle None" \
		"$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["addresses"]; print(a[0]["block"]["type"], a[1]["block"]["type"])' "$d/a.json")"
fi

# stripped: no vtable symbols in the program, so none of its objects is typed
cp "$d/prog" "$d/stripped" && strip --strip-all "$d/stripped"
"$B/mprof-core" --report=types --format json "$d/stripped" "$d/core" >"$d/x.json" 2>/dev/null
check_eq "stripped: exit 0, none of the program's types named" "0
True" "$?$(types "$d/x.json")"
done_testing
