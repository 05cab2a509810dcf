#!/bin/sh
# run-hunt17-review.sh - what the review of the seventeenth hunt's features
# found (temporary allocations, --addr's types, Rust's allocation layer):
# 1. A Rust program's own #[global_allocator] (tests/prog/hunt17_ga.rs, a
#    counting wrapper of System) is the allocator: its blocks' sites are the
#    program's (Vec's and Box's code it called), with libdw's names of legacy
#    and v0 builds. Before, every such block's site read
#    <hunt17_ga::Counting as core::alloc::global::GlobalAlloc>::alloc.
# 2. Temporary allocations through every entry point of the malloc family
#    (tests/prog/hunt17_temp.c knows each site's count): calloc, realloc of
#    NULL, shrunk, grown, to 0, failing, reallocarray, the aligned family and
#    its realloc, a signal handler allocating between a malloc and its free,
#    70 threads (beyond the 64 call shards), a fork; the exit snapshot, and
#    again with a 16-slot stack table (the total the same).
# 3. --report=types and --addr on arrays of over-aligned classes
#    (tests/prog/hunt17_arr.cc): LD[] (16-byte cookie), A32[] (32-byte), P[];
#    no row for an element class no block has by itself (before: the
#    over-aligned arrays untyped, and a row "0 0 P").
# Each part is skipped when its tool is missing.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
M=$TOP/$B/mprof-core
PRE=$TOP/$B/libheapann.so

# ---- 1. a Rust #[global_allocator] ------------------------------------------
RUSTC=${RUSTC:-$(command -v rustc || { [ -x "$HOME/.cargo/bin/rustc" ] && echo "$HOME/.cargo/bin/rustc"; })}
if [ -z "$RUSTC" ]; then
	skip_check "Rust global allocator" "no rustc"
elif [ "$(cat /proc/sys/kernel/core_pattern)" != core ]; then
	skip_check "Rust global allocator" "core_pattern is not 'core'"
else
	for mangling in legacy v0; do
		d=$TMP/ga-$mangling; mkdir -p "$d"
		mflag=""
		[ $mangling = v0 ] && mflag="-C symbol-mangling-version=v0"
		# shellcheck disable=SC2086
		"$RUSTC" -g -O $mflag -o "$d/ga" tests/prog/hunt17_ga.rs >"$d/cc" 2>&1 || {
			skip_check "Rust global allocator, $mangling names" "rustc failed: $(head -n 1 "$d/cc")"
			continue
		}
		(cd "$d" && ulimit -c unlimited && LD_PRELOAD=$PRE ./ga abort >/dev/null 2>&1; :) 2>/dev/null
		[ -s "$d/core" ] || { skip_check "Rust global allocator, $mangling names" "no core"; continue; }
		"$M" --format json --top 0 "$d/ga" "$d/core" >"$d/s.json" 2>"$d/s.err"
		check_eq "Rust global allocator, $mangling names: exit 0" 0 $?
		# the first frame of the stacks through make_vec and make_box, and
		# whether any stack starts in a GlobalAlloc impl
		check_eq "Rust global allocator, $mangling names: the sites are Vec's and Box's, none the allocator's" \
			"make_vec 500 Vec with_capacity_in
make_box 72 Box new
False" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ga = False
for s in d["stacks"]:
    fr = [f.get("function") or "" for f in s["frames"]]
    ga = ga or "GlobalAlloc" in fr[0]
    for want, kind in (("make_vec", "Vec"), ("make_box", "Box")):
        if any(f == "hunt17_ga::" + want for f in fr):
            first = fr[0]
            print(want, s["bytes"], kind if kind in first else first,
                  first.split("::")[-1].split("<")[0].split(" ")[0])
print(ga)' "$d/s.json" | sort -r)"
	done
	# -O0 under gdb's names: the impl is "hunt17_ga::{impl#0}::alloc" in the
	# debug info (sym/gdb.c now takes the symbol table's, which names the
	# trait) and the shim "hunt17_ga::_::__rust_alloc"; before, every site
	# read one of them
	d=$TMP/ga-O0; mkdir -p "$d"
	if ! command -v gdb >/dev/null; then
		skip_check "Rust global allocator, -O0, gdb's names" "gdb not installed"
	elif "$RUSTC" -g -C opt-level=0 -o "$d/ga" tests/prog/hunt17_ga.rs >"$d/cc" 2>&1; then
		(cd "$d" && ulimit -c unlimited && LD_PRELOAD=$PRE ./ga abort >/dev/null 2>&1; :) 2>/dev/null
		"$M" --symbolizer gdb --format json --top 0 "$d/ga" "$d/core" >"$d/g.json" 2>/dev/null
		check_eq "Rust global allocator, -O0, gdb's names: make_vec's and make_box's blocks, no site in the allocator" \
			"make_box 72
make_vec 500
False" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
bad, out = False, []
for s in d["stacks"]:
    fr = [f.get("function") or "" for f in s["frames"]]
    bad = bad or any(k in fr[0] for k in ("GlobalAlloc", "{impl#", "__rust_"))
    for want in ("make_vec", "make_box"):
        if "hunt17_ga::" + want in fr:
            out.append("%s %d" % (want, s["bytes"]))
print("\n".join(sorted(out)))
print(bad)' "$d/g.json")"
	else
		skip_check "Rust global allocator, -O0, gdb's names" "rustc failed"
	fi
fi

# ---- 2. temporary allocations, every entry point ----------------------------
d=$TMP/temp; mkdir -p "$d/snap" "$d/full"
if cc -g -O0 -pthread -o "$d/t" tests/prog/hunt17_temp.c 2>"$d/cc"; then
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/snap HEAPANN_QUIET=1 LD_PRELOAD=$PRE "$d/t" >"$d/out" 2>/dev/null
	pid=$(sed -n 's/^pid //p' "$d/out")
	"$M" --report=temporary --top 0 --format json "$d/t" "$d/snap/t.$pid.1.core" >"$d/s.json" 2>/dev/null
	check_eq "every entry point: exit 0" 0 $?
	# the temporary allocations of the stacks starting at each site
	per_site() {
		python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["temporary"]
for line in open(sys.argv[2]):
    f = line.split()
    if f[:1] == ["site"]:
        print(f[1], sum(s["temporary"] for s in t["stacks"]
                        if s["frames"] and s["frames"][0].get("function") == f[1]))' "$1" "$2"
	}
	check_eq "every entry point: each site's temporary allocations" \
		"$(sed -n 's/^site //p' "$d/out")" "$(per_site "$d/s.json" "$d/out")"
	HEAPANN_STATS_STACKS=16 HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/full HEAPANN_QUIET=1 \
		LD_PRELOAD=$PRE "$d/t" >"$d/fout" 2>/dev/null
	pid=$(sed -n 's/^pid //p' "$d/fout")
	"$M" --report=temporary --format json "$d/t" "$d/full/t.$pid.1.core" >"$d/f.json" 2>/dev/null
	check_eq "a 16-slot stack table: the same total, the whole run's allocations" "True True" \
		"$(python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
print(a["temporary"]["temporary"] == b["temporary"]["temporary"],
      b["temporary"]["allocs"] == b["statistics"]["allocs"])' "$d/s.json" "$d/f.json")"
else
	check "every entry point: builds" false
fi

# ---- 3. arrays of over-aligned classes ---------------------------------------
d=$TMP/arr; mkdir -p "$d/snap"
if ! command -v g++ >/dev/null; then
	skip_check "arrays" "g++ not installed"
elif g++ -g -O0 -o "$d/a" tests/prog/hunt17_arr.cc 2>"$d/cc"; then
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/snap HEAPANN_QUIET=1 LD_PRELOAD=$PRE "$d/a" >"$d/out" 2>/dev/null
	check_eq "arrays: the alignments the test assumes" "alignof 16 32" "$(cat "$d/out")"
	set -- "$d"/snap/*.core
	"$M" --report=types --top 0 --format json "$d/a" "$1" >"$d/t.json" 2>/dev/null
	check_eq "arrays: A32[], LD[], P[], one block each, no other row, ntypes 3" \
		"A32[] 1 96; LD[] 1 112; P[] 1 72; 3" "$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["types"]
print("; ".join("%s %d %d" % (x["type"], x["blocks"], x["bytes"]) for x in sorted(t["types"], key=lambda x: x["type"])) + "; %d" % t["ntypes"])' "$d/t.json")"
	"$M" --report=types "$d/a" "$1" >"$d/t.txt" 2>/dev/null
	check_grep "arrays, text: 3 types" "^typed: 280 bytes in 3 blocks of 3 types; " "$d/t.txt"
	addrs=$("$M" --blocks --format json "$d/a" "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join("--addr %d" % (int(b["address"], 16) + 8) for b in d["block_list"] if b["size"] in (72, 96, 112)))')
	# shellcheck disable=SC2086
	"$M" --format json $addrs "$d/a" "$1" >"$d/a.json" 2>/dev/null
	check_eq "arrays, --addr: each block's type" "A32[] LD[] P[]" "$(python3 -c '
import json, sys
print(" ".join(sorted(a["block"]["type"] or "None" for a in json.load(open(sys.argv[1]))["addresses"])))' "$d/a.json")"
else
	check "arrays: builds" false
fi
done_testing
