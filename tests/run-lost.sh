#!/bin/sh
# run-lost.sh - --report=lost against valgrind memcheck: tests/prog/lost_prog.c runs
# once under valgrind --leak-check=full and once under libheapann with a core at
# its end (a kernel core from abort(), and a gcore while it waits); the loss
# records of the program's own allocation stacks (blocks and bytes per category
# and stack) must be the same. Also: --why on a kept block names the global array
# (and on a block held by main's frame, the stack; on one held by a live second
# thread, that thread's stack), --refs on a list node names its predecessor, on
# a block held only by a dead frame the word below main's stack pointer, text
# and JSON; two thread stacks with no guard between them (one mapping): each
# dead frame's block definitely lost, the program's data merged with them a
# root; a stack in .bss (a thread's, a coroutine's): the globals below its
# stack pointer roots; a raw dump of data and heap with the ELF's data as roots.
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

# stacks with no guard between them: the kernel merges them into one mapping,
# and the lower thread's stack must end at the top of its own (its TCB's
# stackblock), or the upper thread's dead frames read as its live ones.
# setstack: one mmap split in two, the stacks always touch, a page of the
# program's data below and above them (a root, not a stack); guard0: glibc's
# stacks with guardsize 0, which touch when the kernel places them so. A kernel
# core and libheapann's abort snapshot (other threads' registers partial: the
# lower TCB is found below the upper stack's base).
cc -g -O1 -pthread -o "$TMP/lost_adjstack" tests/prog/lost_adjstack.c
# adj_check NAME IMAGE OUT: the 262 dead bytes definitely lost, each dead slot
# below its own thread's stack pointer, each live block kept by its own stack
adj_check() {
	"$B/mprof-core" --report=lost --refs "$(addr_of hi-dead "$3")" --refs "$(addr_of lo-dead "$3")" \
		--why "$(addr_of hi-live "$3")" --why "$(addr_of lo-live "$3")" "$TMP/lost_adjstack" "$2" \
		>"$TMP/adj.txt" 2>&1
	check_grep "$1: both dead blocks (203 + 59 bytes) definitely lost" \
		'^ *definitely lost: 262 bytes in 2 blocks$' "$TMP/adj.txt"
	# each stack read once: the lower one's no longer runs through the upper
	# one's 256 KiB (before: 283,184 bytes of stacks, now about 16,000)
	n=$(sed -n 's/^roots: .*, stacks of 3 threads \([0-9,]*\) bytes,.*/\1/p' "$TMP/adj.txt" | tr -d ,)
	check "$1: the roots hold less than 128 KiB of stacks (${n:-?} bytes)" test "${n:-999999}" -lt 131072
	for w in hi lo; do
		t=$(sed -n "/^why $(addr_of $w-live "$3"):/,/^\$/s/.*<- start pointer at 0x[0-9a-f]*, stack of thread \([0-9]*\) .*, sp+0x[0-9a-f]*\$/\1/p" "$TMP/adj.txt")
		check "$1: the $w thread's live block kept by a stack" test -n "$t"
		[ $w = lo ] && check "$1: the two live blocks kept by two stacks" test "$t" != "$t_hi"
		t_hi=$t
		check_grep "$1: the $w thread's dead slot is below its own stack pointer" \
			"start pointer at $(addr_of $w-slot "$3"), stack of thread $t \\(tid [0-9]+\\), sp-0x[0-9a-f]+, below the stack pointer \\(not in use, not a root\\)\$" "$TMP/adj.txt"
	done
	if grep -q '^below ' "$3"; then
		"$B/mprof-core" --report=lost --why "$(addr_of below "$3")" --why "$(addr_of above "$3")" \
			"$TMP/lost_adjstack" "$2" >"$TMP/adj-why.txt" 2>&1
		for w in below above; do
			check_grep "$1: the block held by the page $w the stacks still reachable" \
				"^why $(addr_of $w "$3"): block $(addr_of $w "$3") \\([0-9]+ bytes, seq [0-9]+, still reachable\\)\$" "$TMP/adj-why.txt"
			check_eq "$1: the page $w the stacks is read as an anonymous mapping, not a stack" "1" \
				"$(sed -n "/^why $(addr_of $w "$3"):/,/^\$/p" "$TMP/adj-why.txt" | grep -c '<- start pointer at 0x[0-9a-f]*, anonymous mapping$')"
		done
	fi
	"$B/mprof-core" --addr "$(addr_of hi-slot "$3")" "$TMP/lost_adjstack" "$2" >"$TMP/adj-addr.txt" 2>&1
	check_grep "$1: --addr: the upper dead slot is in a stack, not in use" \
		"^address $(addr_of hi-slot "$3"): in the stack of thread [0-9]+ \\(tid [0-9]+\\), [0-9,]+ bytes below its stack pointer 0x[0-9a-f]+ \\(not in use\\)\$" "$TMP/adj-addr.txt"
}
for mode in setstack guard0; do
	rm -rf "$TMP/core" "$TMP/s.adj"; mkdir "$TMP/s.adj"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./lost_adjstack $mode >"$TMP/adj-$mode.out"; :) 2>/dev/null
	check "adjacent stacks $mode: kernel core written" test -s "$TMP/core"
	if [ $mode = setstack ]; then
		check_grep "adjacent stacks $mode: the stacks touch" '^adjacent 1$' "$TMP/adj-$mode.out"
	elif ! grep -q '^adjacent 1$' "$TMP/adj-$mode.out"; then
		echo "note: adjacent stacks guard0: the kernel did not place the stacks together (checked anyway)"
	fi
	adj_check "adjacent stacks $mode, kernel core" "$TMP/core" "$TMP/adj-$mode.out"
	(cd "$TMP" && HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR="$TMP/s.adj" LD_PRELOAD="$TOP/$B/libheapann.so" \
		./lost_adjstack $mode >"$TMP/adjs-$mode.out"; :) 2>/dev/null
	snap=$(ls "$TMP"/s.adj/*.core 2>/dev/null | head -n 1)
	check "adjacent stacks $mode: abort snapshot written" test -s "$snap"
	adj_check "adjacent stacks $mode, snapshot" "$snap" "$TMP/adjs-$mode.out"
done

# a stack that is a static array in .bss: a thread's (pthread_attr_setstack)
# and a ucontext coroutine's (no TCB there); the globals below its stack
# pointer are module data, roots (before, in the coroutine's case, read as the
# stack's dead part: both blocks definitely lost)
cc -g -O1 -pthread -o "$TMP/lost_bssstack" tests/prog/lost_bssstack.c
for mode in thread coro; do
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./lost_bssstack $mode >"$TMP/bss.out"; :) 2>/dev/null
	check "stack in .bss ($mode): kernel core written" test -s "$TMP/core"
	"$B/mprof-core" --report=lost --why "$(addr_of data "$TMP/bss.out")" --why "$(addr_of bss "$TMP/bss.out")" \
		--why "$(addr_of live "$TMP/bss.out")" "$TMP/lost_bssstack" "$TMP/core" >"$TMP/bss.txt" 2>&1
	check_grep "stack in .bss ($mode): nothing definitely lost" '^ *definitely lost: 0 bytes in 0 blocks$' "$TMP/bss.txt"
	for g in data bss; do
		check_eq "stack in .bss ($mode): g_$g's block kept by g_$g, module data" 1 \
			"$(sed -n "/^why $(addr_of $g "$TMP/bss.out"):/,/^\$/p" "$TMP/bss.txt" |
				grep -c "<- start pointer at 0x[0-9a-f]*, g_$g+0x0 in lost_bssstack (module data)\$")"
	done
	check_eq "stack in .bss ($mode): the live local's block kept by the stack" 1 \
		"$(sed -n "/^why $(addr_of live "$TMP/bss.out"):/,/^\$/p" "$TMP/bss.txt" |
			grep -c '<- start pointer at 0x[0-9a-f]*, stack of thread [0-9]* (tid [0-9]*), sp+0x[0-9a-f]*$')"
done

# the text forms, on the last kernel core
"$B/mprof-core" --report=lost "$exe" "$TMP/kcore-O0" >"$TMP/lost.txt" 2>&1
check_grep "text: a loss record" '^#[0-9]+: 48,000 bytes in 1,000 blocks are definitely lost$' "$TMP/lost.txt"
check_grep "text: its first frame" '^    drop_blocks \(lost_prog.c:[0-9]+\)' "$TMP/lost.txt"
check_grep "text: summary" '^ *indirectly lost: 6,400 bytes in 200 blocks$' "$TMP/lost.txt"
"$B/mprof-core" --why "$kept" --refs "$node" "$exe" "$TMP/kcore-O0" >"$TMP/why.txt" 2>&1
check_grep "text --why: the global" "<- start pointer at 0x[0-9a-f]+, g_kept\+0x38 in lost_prog-O0 \(module data\)" "$TMP/why.txt"
check_grep "text --refs: the predecessor" "start pointer at $pred, 0 bytes into block $pred \(32 bytes, indirectly lost\)" "$TMP/why.txt"
done_testing
