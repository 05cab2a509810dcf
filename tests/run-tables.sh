#!/bin/sh
# run-tables.sh - mprof's tables, Massif's tree and the timeline end to end: real
# programs under the preload, real cores (kernel cores by abort, a gcore, a raw
# dump of the heap alone), and exact numbers that the programs print themselves.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"

CFLAGS_T="-g -O2 -fno-optimize-sibling-calls -fno-inline -no-pie"

# jq-like assertions in python: jcheck NAME FILE 'python expression over d'
jcheck() {
	name=$1 file=$2 expr=$3
	check "$name" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    sys.stderr.write("failed: %s\n" % sys.argv[2])
sys.exit(0 if ok else 1)
' "$file" "$expr"
}

fmtn() { python3 -c 'import sys; print(format(int(sys.argv[1]), ","))' "$1"; }

kcore() { # DIR EXE ARGS...: run under the preload until it aborts; the core is DIR/core
	dir=$1; shift
	rm -f "$dir/core"
	(cd "$dir" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$@" >"$dir/out" 2>/dev/null)
	[ -s "$dir/core" ]
}

# ---- producer/consumer --------------------------------------------------------
exe=$TMP/widgets
cc $CFLAGS_T -o "$exe" tests/prog/tab_widgets.c
check "widgets: kernel core written" kcore "$TMP" "$exe" abort
mv "$TMP/core" "$TMP/wcore"
set -- $(cat "$TMP/out")   # widgets N red R blue B size S reallocs K buffer BUF
N=$2 RED=$4 BLUE=$6 SZ=$8 NREAL=${10} BUF=${12}
check_eq "widgets: 204-byte widgets" 204 "$SZ"
check "widgets: both colors drawn" test "$RED" -gt 0 -a "$BLUE" -gt 0
"$B/mprof-core" --format=json --report=all --top 0 "$exe" "$TMP/wcore" >"$TMP/w.json" 2>"$TMP/w.err"
check_eq "widgets: mprof-core exit 0" 0 $?
J=$TMP/w.json
jcheck "widgets: statistics found" "$J" 'd["tables_source"] == "statistics"'
jcheck "widgets: one leaking path through make_red_widget" "$J" \
	'len([l for l in d["leaks"] if "make_red_widget" in l["path"]]) == 1'
jcheck "widgets: no leaking path through make_blue_widget" "$J" \
	'not [l for l in d["leaks"] if "make_blue_widget" in l["path"]]'
jcheck "widgets: leak path make_widget <- make_red_widget <- main" "$J" \
	'[l["path"] for l in d["leaks"] if "make_red_widget" in l["path"]][0] == ["make_widget", "make_red_widget", "main"]'
jcheck "widgets: leak of $RED blocks, $((RED * 204)) bytes, allocs $RED, frees 0" "$J" \
	"[(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees'], l['bytes']) for l in d['leaks'] if 'make_red_widget' in l['path']][0] == ($RED, $RED * 204, $RED, 0, $RED * 204)"
jcheck "widgets: bin 204 has $N allocs, $BLUE frees, $RED kept" "$J" \
	"[(b['allocs'], b['bytes'], b['frees'], b['kept_blocks'], b['kept_bytes']) for b in d['bins'] if b['size'] == 204][0] == ($N, $N * 204, $BLUE, $RED, $RED * 204)"
jcheck "widgets: bin 204's types name struct widget" "$J" \
	"'struct widget' in [b for b in d['bins'] if b['size'] == 204][0]['types']"
jcheck "widgets: direct: make_widget made every widget" "$J" \
	"[(x['bytes'], x['kept_bytes'], x['calls']) for x in d['direct'] if x['function'] == 'make_widget'][0] == ($N * 204, $RED * 204, $N)"
jcheck "widgets: graph: make_red_widget requests the kept bytes from make_widget" "$J" \
	"[(c['bytes'], c['calls']) for g in d['graph'] if g['function'] == 'make_red_widget' for c in g['callees'] if c['function'] == 'make_widget'] == [($RED * 204, $RED)]"
jcheck "widgets: graph: make_widget's self bytes" "$J" \
	"[g['self'] for g in d['graph'] if g['function'] == 'make_widget'] == [$N * 204]"
jcheck "widgets: statistics agree with the scan (blocks, bytes)" "$J" \
	'd["statistics"]["allocs"] - d["statistics"]["frees"] == d["blocks"] and d["statistics"]["live_bytes"] == d["bytes"]'
jcheck "widgets: calls: every malloc and free of the program counted" "$J" \
	"d['statistics']['calls']['malloc'] >= $N + 2 and d['statistics']['calls']['free'] >= $BLUE"
jcheck "widgets: $NREAL reallocs counted as a free and an allocation each" "$J" \
	"d['statistics']['calls']['realloc'] == $NREAL and [(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'] == ['main']] == [(1, $BUF, $NREAL + 1, $NREAL)]"
jcheck "widgets: timeline has at least 1000 samples" "$J" 'len(d["timeline"]) >= 1000'
jcheck "widgets: timeline marks one peak, the statistics' peak" "$J" \
	'[s["live_bytes"] for s in d["timeline"] if s.get("peak")] == [d["statistics"]["peak_live_bytes"]] and max(s["live_bytes"] for s in d["timeline"]) == d["statistics"]["peak_live_bytes"]'
jcheck "widgets: timeline in time order" "$J" \
	'all(a["time"] <= b["time"] for a, b in zip(d["timeline"], d["timeline"][1:]))'
jcheck "widgets: tree: make_widget then make_red_widget hold the kept bytes" "$J" \
	"[(c['function'], c['bytes'], [(g['function'], g['bytes']) for g in c['children']][:1]) for c in d['tree']['children']][0] == ('make_widget', $RED * 204, [('make_red_widget', $RED * 204)])"

# --leak-depth 1: one path make_widget, blue's allocs and frees included
"$B/mprof-core" --format=json --report=leaks --leak-depth 1 "$exe" "$TMP/wcore" >"$TMP/w1.json" 2>/dev/null
jcheck "widgets --leak-depth 1: make_widget with all $N allocs and $BLUE frees" "$TMP/w1.json" \
	"[(l['kept_blocks'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'] == ['make_widget']] == [($RED, $N, $BLUE)]"

# text
"$B/mprof-core" --report=leaks,bins,tree,timeline "$exe" "$TMP/wcore" >"$TMP/w.txt" 2>&1
check_grep "text: leak row" "^ +[0-9,]+ +[0-9.]+% +$(fmtn "$RED") .* make_widget <- make_red_widget <- main\$" "$TMP/w.txt"
check_grep "text: bin row with the type" "^  204 .* struct widget\$" "$TMP/w.txt"
check_grep "text: tree line" "^->[0-9.]+% \([0-9,]+B\) 0x[0-9A-F]+: make_widget \(tab_widgets.c:[0-9]+\)" "$TMP/w.txt"
check_grep "text: timeline peak" "^peak \(#\): " "$TMP/w.txt"
check_grep "text: statistics line" "^statistics \(whole run\): $(fmtn $((N + 2 + NREAL))) allocations" "$TMP/w.txt"

# ---- a raw dump of the heap alone: live blocks only, and the report says so ----
if command -v gdb >/dev/null; then
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" wait <"$TMP/fifo" >"$TMP/wout" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while [ ! -s "$TMP/wout" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	heap=$(grep '\[heap\]' /proc/$pid/maps | head -n 1)
	start=0x${heap%%-*}; rest=${heap#*-}; end=0x${rest%% *}
	gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' -p $pid \
		-ex "dump binary memory $TMP/heap.bin $start $end" -ex detach >/dev/null 2>&1
	make_gcore $pid "$TMP/wgcore"
	echo >&9; exec 9>&-
	wait $pid
	set -- $(cat "$TMP/wout"); RED2=$4
	check "gcore written" test -s "$TMP/wgcore"
	"$B/mprof-core" --format=json --report=leaks "$exe" "$TMP/wgcore" >"$TMP/gc.json" 2>/dev/null
	jcheck "gcore: statistics found and agree with the scan" "$TMP/gc.json" \
		'd["tables_source"] == "statistics" and d["statistics"]["allocs"] - d["statistics"]["frees"] == d["blocks"] and d["statistics"]["live_bytes"] == d["bytes"]'
	jcheck "gcore: the red leak ($RED2 blocks)" "$TMP/gc.json" \
		"[(l['kept_blocks'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'] == ['make_widget', 'make_red_widget', 'main']] == [($RED2, $RED2, 0)]"
	check "raw heap dump written" test -s "$TMP/heap.bin"
	"$B/mprof-core" --format=json --report=leaks,bins,timeline --raw "$TMP/heap.bin" --elf "$exe" \
		--base "$start" >"$TMP/r.json" 2>"$TMP/r.err"
	check_eq "raw: exit 0" 0 $?
	jcheck "raw: tables from the live blocks only" "$TMP/r.json" 'd["tables_source"] == "live_blocks" and "statistics" not in d'
	jcheck "raw: the red leak, from live blocks ($RED2 blocks)" "$TMP/r.json" \
		"[(l['kept_blocks'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:3] == ['make_widget', 'make_red_widget', 'main']] == [($RED2, $RED2, 0)]"
	jcheck "raw: bin 204 counts live blocks" "$TMP/r.json" \
		"[b['allocs'] for b in d['bins'] if b['size'] == 204] == [$RED2]"
	jcheck "raw: no timeline" "$TMP/r.json" 'd["timeline"] == []'
	"$B/mprof-core" --report=leaks --raw "$TMP/heap.bin" --elf "$exe" --base "$start" >"$TMP/r.txt" 2>&1
	check_grep "raw text: says so" "NO STATISTICS REGION in the image: built from the live blocks only" "$TMP/r.txt"
else
	echo "# gdb not installed: raw dump case skipped"
fi

# ---- recursion: main -> F -> G -> F -> G -> malloc(10) ------------------------
exe=$TMP/recurse
cc $CFLAGS_T -o "$exe" tests/prog/tab_recurse.c
check "recurse: kernel core written" kcore "$TMP" "$exe"
mv "$TMP/core" "$TMP/rcore"
check_eq "recurse: program output" "bytes 10" "$(cat "$TMP/out")"
"$B/mprof-core" --format=json --report=graph "$exe" "$TMP/rcore" >"$TMP/g.json" 2>/dev/null
J=$TMP/g.json
jcheck "recurse: exactly one cycle" "$J" \
	'[x["function"] for x in d["graph"] if x["function"].startswith("<cycle")] == ["<cycle 1>"]'
jcheck "recurse: F and G in cycle 1" "$J" \
	'[(g["function"], g["cycle"]) for g in d["graph"] if g["function"] in ("F", "G")] in ([("F", 1), ("G", 1)], [("G", 1), ("F", 1)])'
jcheck "recurse: the cycle requested exactly 10 bytes" "$J" \
	'[(g["total"], g["self"], sorted(g["members"])) for g in d["graph"] if g["function"] == "<cycle 1>"] == [(10, 10, ["F", "G"])]'
jcheck "recurse: main credited with exactly 10 bytes" "$J" \
	'[(g["total"], g["self"]) for g in d["graph"] if g["function"] == "main"] == [(10, 0)]'
jcheck "recurse: main -> F 10 bytes, main -> <cycle 1> 10 bytes" "$J" \
	'[c["bytes"] for g in d["graph"] if g["function"] == "main" for c in g["callees"]] == [10] and [c["bytes"] for g in d["graph"] if g["function"] == "<cycle 1>" for c in g["callers"] if c["function"] == "main"] == [10]'
jcheck "recurse: F and G 10 bytes each, G's own" "$J" \
	'sorted((g["function"], g["total"], g["self"]) for g in d["graph"] if g["function"] in ("F", "G")) == [("F", 10, 0), ("G", 10, 10)]'
"$B/mprof-core" --report=graph "$exe" "$TMP/rcore" >"$TMP/g.txt" 2>&1
check_grep "recurse text: cycle entry" '^\[[0-9]+\] +100\.0% +10 +10 +1 +<cycle 1 as a whole> \[[0-9]+\]' "$TMP/g.txt"
check_grep "recurse text: member marked" ' F <cycle 1> \[[0-9]+\]$' "$TMP/g.txt"

# ---- threads: statistics agree with the scan ----------------------------------
exe=$TMP/threads
cc $CFLAGS_T -pthread -o "$exe" tests/prog/tab_threads.c
check "threads: kernel core written" kcore "$TMP" "$exe"
mv "$TMP/core" "$TMP/tcore"
set -- $(cat "$TMP/out")   # threads T allocs A kept_blocks K kept_bytes KB
T=$2 A=$4 K=$6 KB=$8
"$B/mprof-core" --format=json --report=leaks,bins,direct --top 0 "$exe" "$TMP/tcore" >"$TMP/t.json" 2>/dev/null
J=$TMP/t.json
jcheck "threads: statistics found" "$J" 'd["tables_source"] == "statistics"'
jcheck "threads: live blocks and bytes agree with the scan" "$J" \
	'd["statistics"]["allocs"] - d["statistics"]["frees"] == d["blocks"] and d["statistics"]["live_bytes"] == d["bytes"]'
jcheck "threads: no stack went unrecorded" "$J" 'd["statistics"]["unrecorded_allocs"] == 0'
jcheck "threads: worker_alloc made $A blocks and keeps $K ($KB bytes)" "$J" \
	"[(x['calls'], x['kept_bytes']) for x in d['direct'] if x['function'] == 'worker_alloc'] == [($A, $KB)]"
jcheck "threads: leak through worker_alloc <- worker: $K blocks, $((A - K)) frees" "$J" \
	"[(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:2] == ['worker_alloc', 'worker']] == [($K, $KB, $A, $A - $K)]"
jcheck "threads: bins add up to the statistics" "$J" \
	'sum(b["allocs"] for b in d["bins"]) == d["statistics"]["allocs"] and sum(b["kept_bytes"] for b in d["bins"]) == d["statistics"]["live_bytes"]'
# ---- stacks that share outer frames: every allocation under its own ---------
# (written for a lookup that reuses the walker's outer frames, dropped:
# doc/performance.md, sixth round; it holds for any lookup): nothing is freed,
# so each stack's allocations from the statistics must be its kept blocks from
# the headers; once at the default depth, once cut at 6 frames (the walk's
# joins then cut too)
exe=$TMP/reuse
cc $CFLAGS_T -pthread -o "$exe" tests/prog/tab_reuse.c
for dep in 32 6; do
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && HEAPANN_DEPTH=$dep LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >"$TMP/out" 2>/dev/null)
	check "reuse d$dep: kernel core written" test -s "$TMP/core"
	set -- $(cat "$TMP/out")   # blocks N bytes B
	N=$2 BY=$4
	"$B/mprof-core" --format=json --report=leaks --leak-depth 16 --top 0 "$exe" "$TMP/core" >"$TMP/r.json" 2>/dev/null
	check_eq "reuse d$dep: mprof-core exit 0" 0 $?
	J=$TMP/r.json
	jcheck "reuse d$dep: statistics found, no stack unrecorded" "$J" \
		'd["tables_source"] == "statistics" and d["statistics"]["unrecorded_allocs"] == 0'
	jcheck "reuse d$dep: the stacks through leaf_a hold all $N blocks, $BY bytes" "$J" \
		"[sum(l[k] for l in d['leaks'] if 'leaf_a' in l['path']) for k in ('allocs', 'kept_blocks', 'kept_bytes')] == [$N, $N, $BY]"
	jcheck "reuse d$dep: each stack's allocations are its kept blocks and bytes" "$J" \
		"all(l['allocs'] == l['kept_blocks'] and l['bytes'] == l['kept_bytes'] for l in d['leaks'] if 'leaf_a' in l['path'])"
	cp "$J" "$TMP/r$dep.json"
done
jcheck "reuse d6: 6 frames at most" "$J" "all(len(l['path']) <= 6 for l in d['leaks'] if 'leaf_a' in l['path'])"
jcheck "reuse d32: 32 stacks (8 depths, 2 leaves, 2 threads)" "$TMP/r32.json" \
	"len([l for l in d['leaks'] if 'leaf_a' in l['path']]) == 32"

# ---- a stack table too small: the rest is "unrecorded", never a crash ---------
exe=$TMP/stacks
cc $CFLAGS_T -o "$exe" tests/prog/tab_stacks.c
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && HEAPANN_STATS_STACKS=16 LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >"$TMP/out" 2>/dev/null)
check "stacks: kernel core written with a 16-slot table" test -s "$TMP/core"
set -- $(cat "$TMP/out")   # stacks S blocks NB bytes BY
NB=$4 BY=$6
"$B/mprof-core" --format=json --report=leaks,bins --top 0 "$exe" "$TMP/core" >"$TMP/s.json" 2>/dev/null
check_eq "stacks: mprof-core exit 0" 0 $?
J=$TMP/s.json
jcheck "stacks: bin 8 counts all $NB blocks" "$J" "[b['allocs'] for b in d['bins'] if b['size'] == 8] == [$NB]"
jcheck "stacks: some stacks unrecorded, the rest in the table" "$J" \
	'd["statistics"]["unrecorded_allocs"] > 0 and d["statistics"]["stacks"] <= 14'
# the unrecorded stacks' live blocks come from the image: nothing kept is left out
jcheck "stacks: the leak table holds every live block and byte, unrecorded stacks' from the image" "$J" \
	"sum(l['kept_bytes'] for l in d['leaks']) == d['statistics']['live_bytes'] == d['bytes'] and sum(l['kept_blocks'] for l in d['leaks']) == d['blocks']"
jcheck "stacks: the unrecorded stacks' live blocks are all of the unrecorded allocations (the program frees nothing)" "$J" \
	"(d['statistics']['unrecorded_live_blocks'], d['statistics']['unrecorded_live_bytes']) == (d['statistics']['unrecorded_allocs'], d['statistics']['unrecorded_bytes'])"
jcheck "stacks: level()'s rows keep all its $NB blocks, $BY bytes" "$J" \
	"(sum(l['kept_blocks'] for l in d['leaks'] if l['path'][0] == 'level'), sum(l['kept_bytes'] for l in d['leaks'] if l['path'][0] == 'level')) == ($NB, $BY)"
"$B/mprof-core" --format=json --report=direct "$exe" "$TMP/core" >"$TMP/sd.json" 2>/dev/null
jcheck "stacks: direct: level() called malloc $NB times for $BY bytes, all kept" "$TMP/sd.json" \
	"[(x['calls'], x['bytes'], x['kept_bytes']) for x in d['direct'] if x['function'] == 'level'] == [($NB, $BY, $BY)]"
"$B/mprof-core" --report=leaks "$exe" "$TMP/core" >"$TMP/s.txt" 2>&1
check_grep "stacks text: says the table was full and where the live blocks come from" \
	'^stack table full: [0-9,]+ allocations \([0-9,]+ bytes\) under unrecorded stacks; the tables show their [0-9,]+ live blocks \([0-9,]+ bytes\) from the image, without their frees$' "$TMP/s.txt"
# ---- the static kit with the region in a buffer of the program's own ----------
echo 'int main(void) { return 0; }' >"$TMP/hello.c"
if [ -f "$B/heapann-static.pc" ] && command -v pkg-config >/dev/null &&
	cc -static -o "$TMP/hello" "$TMP/hello.c" 2>/dev/null; then
	exe=$TMP/static
	cc -g -O2 -fno-optimize-sibling-calls -static -o "$exe" tests/prog/tab_static.c \
		$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static)
	check "static: kernel core written" kcore "$TMP" "$exe"
	set -- $(cat "$TMP/out")   # buffer ADDR allocs A frees F size S
	SA=$4 SF=$6
	"$B/mprof-core" --format=json --report=leaks "$exe" "$TMP/core" >"$TMP/st.json" 2>"$TMP/st.err"
	check_eq "static: exit 0" 0 $?
	jcheck "static: statistics found in the program's buffer, agree with the scan" "$TMP/st.json" \
		'd["tables_source"] == "statistics" and d["statistics"]["allocs"] - d["statistics"]["frees"] == d["blocks"] and d["statistics"]["live_bytes"] == d["bytes"]'
	jcheck "static: make_item made $SA, $SF freed" "$TMP/st.json" \
		"[(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:2] == ['make_item', 'main']] == [($SA - $SF, ($SA - $SF) * 48, $SA, $SF)]"
else
	echo "# static libc or pkg-config missing: static kit case skipped"
fi
done_testing
