#!/bin/sh
# run-lost.sh - --report=lost against valgrind memcheck: tests/prog/lost_prog.c runs
# once under valgrind --leak-check=full and once under libheapann with a core at
# its end (a kernel core from abort(), and a gcore while it waits); the loss
# records of the program's own allocation stacks (blocks and bytes per category
# and stack) must be the same. Also: --why on a kept block names the global array
# (and on a block held by main's frame, the stack; on one held by a live second
# thread, that thread's stack), --refs on a list node names its predecessor, on
# a block held only by a dead frame the word below main's stack pointer, text
# and JSON; a raw dump of data and heap with the ELF's data as roots.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v valgrind >/dev/null || skip "valgrind not installed"
command -v python3 >/dev/null || skip "python3 not installed"

src=tests/prog/lost_prog.c

# compare MEMCHECK_LOG JSON: the loss records whose first frame is in lost_prog.c,
# keyed by category and the program's frames, must be memcheck's (tests/lostcmp.py).
compare() { python3 tests/lostcmp.py compare "$1" "$2"; }

# totals JSON CATEGORY BLOCKS BYTES: the category's records whose first frame is in
# lost_prog.c add up to what the program knows.
totals() { python3 tests/lostcmp.py totals "$@"; }

# jq-free JSON probes for --why and --refs
json_probe() {
	python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
what = sys.argv[2]
if what == "why-global":      # first link comes from symbol+offset in module data
    w = d["why"][0]; c = w["chain"][0]["from"]
    ok = (w["category"] == "still reachable" and w["chain"][0]["start_pointer"] and
          c["kind"] == "data" and c["symbol"] == sys.argv[3] and c["symbol_offset"] == int(sys.argv[4]))
elif what == "why-stack":
    w = d["why"][0]; c = w["chain"][-1]["from"]
    ok = w["category"] == "still reachable" and c["kind"] == "stack" and c["thread"] == 1
elif what == "refs-pred":    # exactly one reference: the start of the predecessor node
    r = d["refs"][0]["references"]
    ok = (len(r) == 1 and r[0]["start_pointer"] and r[0]["where"]["kind"] == "block" and
          int(r[0]["where"]["block"], 16) == int(sys.argv[3], 16) and r[0]["where"]["offset"] == 0)
else:
    ok = False
if not ok:
    print("    # " + json.dumps(d.get("why") or d.get("refs"))[:600])
sys.exit(0 if ok else 1)
EOF
}

addr_of() { sed -n "s/^$1 0x\([0-9a-f]*\)$/0x\1/p" "$2"; }

for opt in -O2 -O0; do
	exe=$TMP/lost_prog$opt
	cc -g $opt -pthread -o "$exe" "$src" || skip "cannot compile $src"

	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
		--num-callers=40 --log-file="$TMP/mc$opt.log" "$exe"
	check_eq "valgrind$opt: program exits 0" 0 $?
	check_grep "valgrind$opt: leak summary written" 'LEAK SUMMARY' "$TMP/mc$opt.log"

	# kernel core at the point memcheck checks (the end of main)
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && LOST_ABORT=1 LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >"$TMP/addrs$opt"; :) 2>/dev/null
	check "kernel core$opt written" test -s "$TMP/core"
	mv "$TMP/core" "$TMP/kcore$opt"
	"$B/mprof-core" --format=json --report=lost "$exe" "$TMP/kcore$opt" >"$TMP/k$opt.json" 2>"$TMP/k$opt.err"
	check_eq "kernel core$opt: exit 0" 0 $?
	check "kernel core$opt: loss records equal memcheck's" compare "$TMP/mc$opt.log" "$TMP/k$opt.json"
	check "kernel core$opt: definitely lost 1302 blocks, 55264 bytes" totals "$TMP/k$opt.json" "definitely lost" 1302 55264
	check "kernel core$opt: indirectly lost 200 blocks, 6400 bytes" totals "$TMP/k$opt.json" "indirectly lost" 200 6400
	check "kernel core$opt: possibly lost 100 blocks, 6400 bytes" totals "$TMP/k$opt.json" "possibly lost" 100 6400
	check "kernel core$opt: still reachable 650 blocks, 29200 bytes" totals "$TMP/k$opt.json" "still reachable" 650 29200

	kept=$(addr_of kept7 "$TMP/addrs$opt")
	node=$(addr_of node100 "$TMP/addrs$opt")
	pred=$(addr_of pred100 "$TMP/addrs$opt")
	held=$(addr_of held0 "$TMP/addrs$opt")
	"$B/mprof-core" --format=json --why "$kept" "$exe" "$TMP/kcore$opt" >"$TMP/why$opt.json" 2>/dev/null
	check "--why$opt on g_kept[7]: a start pointer at g_kept+56" json_probe "$TMP/why$opt.json" why-global g_kept 56
	"$B/mprof-core" --format=json --why "$held" "$exe" "$TMP/kcore$opt" >"$TMP/whys$opt.json" 2>/dev/null
	check "--why$opt on a block held by main: thread 1's stack" json_probe "$TMP/whys$opt.json" why-stack
	"$B/mprof-core" --format=json --refs "$node" "$exe" "$TMP/kcore$opt" >"$TMP/refs$opt.json" 2>/dev/null
	check "--refs$opt on list node 100: its predecessor only" json_probe "$TMP/refs$opt.json" refs-pred "$pred"

	# gcore while it waits at the end
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LOST_ABORT=2 LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" <"$TMP/fifo" >"$TMP/gaddrs$opt" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q held0 "$TMP/gaddrs$opt" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	if command -v gdb >/dev/null; then
		make_gcore $pid "$TMP/gcore$opt"
		check "gcore$opt written" test -s "$TMP/gcore$opt"
	fi
	echo go >&9; exec 9>&-
	wait $pid
	if [ -s "$TMP/gcore$opt" ]; then
		"$B/mprof-core" --format=json --report=lost "$exe" "$TMP/gcore$opt" >"$TMP/g$opt.json" 2>"$TMP/g$opt.err"
		check_eq "gcore$opt: exit 0" 0 $?
		check "gcore$opt: loss records equal memcheck's" compare "$TMP/mc$opt.log" "$TMP/g$opt.json"
	fi
done

# A raw dump (firmware-like): a non-PIE build without ASLR keeps its data, bss and
# brk heap in one contiguous range; dump it with gdb and read it with --raw --elf.
# The roots are then the ELF's writable segments only: the blocks main's frame
# holds show as definitely lost, and the second thread's arena is not in the dump.
if command -v gdb >/dev/null && command -v setarch >/dev/null &&
   cc -g -O2 -no-pie -pthread -o "$TMP/lost_np" "$src" 2>/dev/null; then
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LOST_ABORT=2 LD_PRELOAD="$TOP/$B/libheapann.so" setarch "$(uname -m)" -R "$TMP/lost_np" \
		<"$TMP/fifo" >"$TMP/np.out" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q held0 "$TMP/np.out" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	# from the program's writable file mapping to the end of [heap], without holes
	range=$(python3 - "$TMP/lost_np" /proc/$pid/maps <<'EOF'
import sys
start = end = None
for line in open(sys.argv[2]):
    f = line.split()
    s, e = (int(x, 16) for x in f[0].split("-"))
    path = f[5] if len(f) > 5 else ""
    if start is None:
        if f[1].startswith("rw") and path == sys.argv[1]:
            start, end = s, e
        continue
    if s != end:
        break
    end = e
    if path == "[heap]":
        print("0x%x 0x%x" % (start, end))
        break
EOF
)
	if [ -n "$range" ]; then
		set -- $range
		gdb -batch -nx -q -iex 'set auto-load off' -p $pid \
			-ex "dump binary memory $TMP/raw.bin $1 $2" -ex detach >/dev/null 2>&1
	fi
	echo go >&9; exec 9>&-
	wait $pid
	if [ -s "$TMP/raw.bin" ]; then
		"$B/mprof-core" --format=json --report=lost --raw "$TMP/raw.bin" --elf "$TMP/lost_np" \
			--base "$1" >"$TMP/raw.json" 2>"$TMP/raw.err"
		check_eq "raw dump: exit 0" 0 $?
		check "raw dump: definitely lost 1052 blocks (main's 50 too), 51664 bytes" totals "$TMP/raw.json" "definitely lost" 1052 51664
		check "raw dump: indirectly lost 200 blocks, 6400 bytes" totals "$TMP/raw.json" "indirectly lost" 200 6400
		check "raw dump: possibly lost 100 blocks, 6400 bytes" totals "$TMP/raw.json" "possibly lost" 100 6400
		check "raw dump: still reachable 500 blocks, 20000 bytes" totals "$TMP/raw.json" "still reachable" 500 20000
		rkept=$(addr_of kept7 "$TMP/np.out")
		"$B/mprof-core" --why "$rkept" --raw "$TMP/raw.bin" --elf "$TMP/lost_np" --base "$1" >"$TMP/rwhy.txt" 2>&1
		check_grep "raw dump --why: g_kept+0x38" "<- start pointer at 0x[0-9a-f]+, g_kept\+0x38 in lost_np" "$TMP/rwhy.txt"
	else
		echo "# raw dump: no contiguous data+heap range to dump here: not tested"
	fi
fi

# a block held only by a live second thread's stack: --why names that thread
cc -g -O2 -pthread -o "$TMP/lost_threads" tests/prog/lost_threads.c
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./lost_threads >"$TMP/th.out"; :) 2>/dev/null
check "threads: kernel core written" test -s "$TMP/core"
theld=$(addr_of held "$TMP/th.out")
ttid=$(sed -n 's/^tid //p' "$TMP/th.out")
"$B/mprof-core" --why "$theld" "$TMP/lost_threads" "$TMP/core" >"$TMP/twhy.txt" 2>&1
check_grep "threads: --why names the second thread's stack" \
	"<- start pointer at 0x[0-9a-f]+, stack of thread 2 \(tid $ttid\), sp\+0x[0-9a-f]+$" "$TMP/twhy.txt"

# a block whose only pointer is in a dead frame below main's stack pointer:
# definitely lost, and --refs says where the word is (not "heap or unmapped")
cc -g -O1 -o "$TMP/lost_dead" tests/prog/lost_dead.c
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./lost_dead >"$TMP/dead.out"; :) 2>/dev/null
check "dead frame: kernel core written" test -s "$TMP/core"
dead=$(addr_of dead "$TMP/dead.out")
slot=$(addr_of slot "$TMP/dead.out")
"$B/mprof-core" --report=lost --refs "$dead" "$TMP/lost_dead" "$TMP/core" >"$TMP/dead.txt" 2>&1
check_grep "dead frame: the 777 bytes definitely lost" '^#[0-9]+: 777 bytes in 1 blocks are definitely lost$' "$TMP/dead.txt"
check_grep "dead frame: --refs names the slot in main's stack, below its stack pointer" \
	"start pointer at $slot, stack of thread 1 \(tid [0-9]+\), sp-0x[0-9a-f]+, below the stack pointer \(not in use, not a root\)\$" "$TMP/dead.txt"
"$B/mprof-core" --format=json --refs "$dead" "$TMP/lost_dead" "$TMP/core" >"$TMP/dead.json" 2>/dev/null
check_eq "dead frame: JSON --refs: the slot's word: kind stack, thread 1, not in use, a negative sp_offset" \
	"stack 1 False True" \
	"$(python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["refs"][0]["references"]; w = [x["where"] for x in r if int(x["where"].get("address", "0"), 16) == int(sys.argv[2], 16)]; print(*(w and (w[0]["kind"], w[0]["thread"], w[0]["in_use"], w[0]["sp_offset"] < 0)))' "$TMP/dead.json" "$slot" 2>&1)"

# the text forms, on the last kernel core
"$B/mprof-core" --report=lost "$exe" "$TMP/kcore-O0" >"$TMP/lost.txt" 2>&1
check_grep "text: a loss record" '^#[0-9]+: 48,000 bytes in 1,000 blocks are definitely lost$' "$TMP/lost.txt"
check_grep "text: its first frame" '^    drop_blocks \(lost_prog.c:[0-9]+\)' "$TMP/lost.txt"
check_grep "text: summary" '^ *indirectly lost: 6,400 bytes in 200 blocks$' "$TMP/lost.txt"
"$B/mprof-core" --why "$kept" --refs "$node" "$exe" "$TMP/kcore-O0" >"$TMP/why.txt" 2>&1
check_grep "text --why: the global" "<- start pointer at 0x[0-9a-f]+, g_kept\+0x38 in lost_prog-O0 \(module data\)" "$TMP/why.txt"
check_grep "text --refs: the predecessor" "start pointer at $pred, 0 bytes into block $pred \(32 bytes, indirectly lost\)" "$TMP/why.txt"
done_testing
