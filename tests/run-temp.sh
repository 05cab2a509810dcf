#!/bin/sh
# run-temp.sh - --report=temporary: blocks freed by the thread that allocated
# them before it allocated again (heaptrack's temporary allocations, counted
# per thread in the statistics region, version 3). tests/prog/temp_prog.c
# knows each site's count: malloc then free at once, a block freed after
# another was allocated (not temporary), a realloc of the last block (both
# the old block's site and the realloc's), kept blocks, blocks another thread
# frees, two threads freeing their own blocks at once. A kernel core at abort
# and the exit snapshot; text and JSON; HEAPANN_STATS=0 (not counted).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the exit snapshot)"
M=$TOP/$B/mprof-core
PRE=$TOP/$B/libheapann.so
d=$TMP/temp
mkdir -p "$d"
cc -g -O0 -pthread -o "$d/tp" tests/prog/temp_prog.c || { check "builds" false; done_testing; }

# sites JSON OUT: for each "site NAME ALLOCS TEMPORARY" line of the program's
# OUT, NAME and what the report says of the stacks starting at NAME: its
# allocations and temporary allocations ("0 0" when it lists none of them),
# then the total and whether the stacks listed sum to it
sites() {
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["temporary"]
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) != 4 or f[0] != "site":
        continue
    a = n = 0
    for s in t["stacks"]:
        if s["frames"] and s["frames"][0].get("function") == f[1]:
            a += s["allocs"]
            n += s["temporary"]
    print(f[1], a if n else 0, n)
print("total", t["temporary"] == sum(s["temporary"] for s in t["stacks"]))' "$1" "$2"
}
# want OUT: the program's own lines, as sites() prints them
want() {
	awk '$1 == "site" { print $2, ($4 ? $3 : 0), $4 }' "$1"
	echo "total True"
}

rm -f "$d/core"
(cd "$d" && ulimit -c unlimited && LD_PRELOAD=$PRE ./tp abort >"$d/kout" 2>/dev/null; :) 2>/dev/null
if [ -s "$d/core" ]; then
	"$M" --report=temporary --top 0 --format json "$d/tp" "$d/core" >"$d/k.json" 2>"$d/k.err"
	check_eq "kernel core: exit 0" 0 $?
	check_eq "kernel core: each site's allocations and temporary ones" "$(want "$d/kout")" \
		"$(sites "$d/k.json" "$d/kout")"
	check_eq "kernel core: the statistics' total is the stacks' sum, at least the program's" "True True" \
		"$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["statistics"]["temporary"] == d["temporary"]["temporary"], d["temporary"]["temporary"] >= 2700)' "$d/k.json")"
	"$M" --report=temporary "$d/tp" "$d/core" >"$d/k.txt" 2>/dev/null
	check_grep "kernel core, text: the total line" "^temporary: [0-9,]+ of [0-9,]+ allocations \([0-9.]+%\)$" "$d/k.txt"
	check_grep "kernel core, text: the first stack, the two threads' pairs" \
		"^#1: 1,000 temporary of 1,000 allocations \(100\.00%\), 56,000 bytes allocated$" "$d/k.txt"
	check_grep "kernel core, text: its frames" "^    tmp_pair \(temp_prog\.c:[0-9]+\) \[tp\]$" "$d/k.txt"
else
	skip_check "kernel core" "none written (core_pattern $(cat /proc/sys/kernel/core_pattern))"
fi

# the exit snapshot: the same counts
mkdir -p "$d/snap"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/snap HEAPANN_QUIET=1 LD_PRELOAD=$PRE "$d/tp" >"$d/sout" 2>/dev/null
set -- "$d"/snap/*.core
"$M" --report=temporary --top 0 --format json "$d/tp" "$1" >"$d/s.json" 2>/dev/null
check_eq "exit snapshot: each site's allocations and temporary ones" "$(want "$d/sout")" \
	"$(sites "$d/s.json" "$d/sout")"
# rows a --threshold cut: the hint names --threshold 0 too, as the other
# tables' (before: '--top 0 shows all', which showed no more)
"$M" --report=temporary --threshold 30 "$d/tp" "$1" >"$d/th.txt" 2>/dev/null
check_grep "--threshold: the hint under the rows names --threshold 0" \
	"^\.\.\. [0-9]+ more stacks \(--top 0 --threshold 0 show all\)$" "$d/th.txt"

# a full stack table (HEAPANN_STATS_STACKS=16): the temporaries of the stacks
# that found no slot are still counted, in the total and the statistics, and
# the report says how many no row shows (before, they were lost: the total
# fell from the program's 2,790 and more to what the recorded stacks held)
mkdir -p "$d/full"
HEAPANN_STATS_STACKS=16 HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/full HEAPANN_QUIET=1 \
	LD_PRELOAD=$PRE "$d/tp" many >/dev/null 2>&1
set -- "$d"/full/*.core
"$M" --report=temporary --format json "$d/tp" "$1" >"$d/f.json" 2>/dev/null
check_eq "full stack table: the whole run's temporaries, in the statistics and the report" \
	"True True True" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); s = d["statistics"]; t = d["temporary"]
print(s["temporary"] == t["temporary"], t["temporary"] >= 2790,
      t["unrecorded_temporary"] > 0 and t["allocs"] == s["allocs"])' "$d/f.json")"
"$M" --report=temporary "$d/tp" "$1" >"$d/f.txt" 2>/dev/null
check_grep "full stack table, text: the line on the unrecorded stacks' temporaries" \
	"^stack table full: [0-9,]+ of them under unrecorded stacks, in no row below$" "$d/f.txt"

# no statistics region: not counted, said so
mkdir -p "$d/nost"
HEAPANN_STATS=0 HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$d/nost HEAPANN_QUIET=1 LD_PRELOAD=$PRE "$d/tp" >/dev/null 2>&1
set -- "$d"/nost/*.core
"$M" --report=temporary "$d/tp" "$1" >"$d/n.txt" 2>/dev/null
check_grep "HEAPANN_STATS=0: not counted, and why" "^    \(not counted: no statistics region in the image\)$" "$d/n.txt"
"$M" --report=temporary --format json "$d/tp" "$1" >"$d/n.json" 2>/dev/null
check_eq "HEAPANN_STATS=0, JSON: temporary null" "None" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["temporary"])' "$d/n.json")"
done_testing
