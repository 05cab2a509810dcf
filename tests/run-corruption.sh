#!/bin/sh
# run-corruption.sh - heap overflows end to end (issue 6): tests/prog/corrupt_overflow.c
# overruns culprit blocks of 1, 24, 100, 4096 and 100000 bytes by 1, 8, 40 and 200
# bytes, underruns a block into its own END word, writes into freed memory, and
# crashes on an overwritten pointer. Under the preload, from a gcore or a kernel
# core, mprof-core must name the culprit's allocation site, give the overrun the
# guard shows, name the damaged neighbour, explain --addr addresses, and exit 3.
# Every expected number is one the program printed (name=value lines).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/corrupt_overflow
cc -g -O0 -o "$exe" tests/prog/corrupt_overflow.c || skip "cannot compile the test program"

# jcheck NAME JSON OUT EXPR: EXPR (Python) holds over the report d and the program's
# printed values o (o["culprit"] etc., integers; o(prefix, name) for prefixed ones);
# the names EXPR sees are listed in tests/jcheck.py.
jcheck() {
	check "$1" python3 tests/jcheck.py "$2" "$3" "$4"
}

# run_wait OUT CORE ARGS...: run the program under the preload until it prints
# "ready", take a gcore, let it finish.
run_wait() {
	out=$1; core=$2; shift 2
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" "$@" <"$TMP/fifo" >"$out" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q '^ready' "$out" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	make_gcore $pid "$core"
	echo >&9; exec 9>&-
	wait $pid
}

# ---- every size with every overrun, one process, one gcore ----
run_wait "$TMP/all.out" "$TMP/all.core" all
check "all: gcore written" test -s "$TMP/all.core"
"$B/mprof-core" --format=json "$exe" "$TMP/all.core" >"$TMP/all.json" 2>"$TMP/all.err"
check_eq "all: exit status 3 (corruption found)" 3 $?
"$B/mprof-core" "$exe" "$TMP/all.core" >"$TMP/all.txt" 2>&1
check_eq "all: text exit status 3" 3 $?
J=$TMP/all.json; O=$TMP/all.out
jcheck "all: 21 broken guards, a damaged header per 40-byte overrun" $J $O \
	'len(C["guards"]) == 21 and all(damaged(o["c%d_40_next" % s]) for s in (1, 24, 100, 4096, 100000))'
# 64 bytes from a 24-byte block: the neighbour's DEPTH word is gone, its END is not
x="(damaged(o['c24_64_next']) or guard(o['c24_64_culprit'])['lost_neighbour'])"
jcheck "size 24 overrun 64: the neighbour is named, with its allocation site" $J $O \
	"fn(guard(o['c24_64_culprit'])) == 'alloc_culprit' and hx($x['address']) == o['c24_64_next'] and fn($x) == 'alloc_next'"
for s in 1 24 100 4096 100000; do
	for k in 1 8 40 200; do
		p=c${s}_${k}_
		t="size $s overrun $k"
		g="guard(o('$p','culprit'))"
		jcheck "$t: neighbours adjacent (precondition)" $J $O "o('$p','adjacent') == 1"
		jcheck "$t: culprit named by its allocation site" $J $O \
			"$g and fn($g) == 'alloc_culprit' and $g['size'] == $s"
		if [ $k -lt 8 ]; then
			jcheck "$t: overrun $k, exact" $J $O \
				"$g['overrun'] == $k and $g['overrun_exact'] and $g['guard_bytes_differ'] == $k"
		else
			jcheck "$t: overrun at least 8 (whole guard)" $J $O \
				"$g['overrun'] == 8 and not $g['overrun_exact'] and $g['guard_bytes_differ'] == 8"
		fi
		case $k in
		1) jcheck "$t: nothing else damaged" $J $O \
			"damaged(o('$p','next')) is None and $g['next_header'] is None" ;;
		8) jcheck "$t: next header is the intact neighbour" $J $O \
			"hx($g['next_block']) == o('$p','next') and $g['lost_seqs'] == 0 and damaged(o('$p','next')) is None" ;;
		40)
			x="damaged(o('$p','next'))"
			jcheck "$t: neighbour's header damaged, still named" $J $O \
				"$x and $x['kind'] == 'start' and fn($x) == 'alloc_next'"
			# size and seq survive unless the overrun reached the SIZE word (header + 16)
			jcheck "$t: neighbour's size kept unless its SIZE word was hit" $J $O \
				"$x['size'] == (None if hx($x['header']) + 16 < o('$p','culprit') + $s + 40 else 512)"
			jcheck "$t: its suspect is the culprit" $J $O \
				"hx($x['suspect']['address']) == o('$p','culprit') and fn($x['suspect']) == 'alloc_culprit' and $x['suspect']['guard_broken'] and $x['likely'] == 'overflow'"
			jcheck "$t: guard leads to it; reach within the overrun" $J $O \
				"hx($g['next_damaged']) == hx($x['header']) and 8 < $g['overrun_if_contiguous'] <= 40"
			;;
		200)
			jcheck "$t: neighbour's header erased; it lies before the next header found" $J $O \
				"o('$p','reaches_next_data') == 1 and o('$p','culprit') + $s < o('$p','next') < hx($g['next_header']) and hx($g['next_block']) == o('$p','after') and damaged(o('$p','next')) is None"
			jcheck "$t: its sequence number is the one missing" $J $O \
				"$g['lost_seqs'] == 1 and $g['first_lost_seq'] == $g['seq'] + 1"
			;;
		esac
	done
done
c=$(sed -n 's/^c24_40_culprit=//p' "$O")
check_grep "text: overflow line" "^overflow: block $c \(24 bytes, seq [0-9]+\) wrote past its end: all 8 guard bytes differ" "$TMP/all.txt"
check_grep "text: culprit's frame" "^        alloc_culprit \(corrupt_overflow.c:[0-9]+\)" "$TMP/all.txt"
check_grep "text: suspect line" "^  suspect: live block $c \(24 bytes" "$TMP/all.txt"
# --addr in the slack after an intact guard, and on a neighbour's END word
c=$(sed -n 's/^c24_1_culprit=//p' "$O"); n=$(sed -n 's/^c24_1_next=//p' "$O")
"$B/mprof-core" --format=json --addr $((c + 24 + 8 + 2)) --addr $((n - 8)) "$exe" "$TMP/all.core" \
	>"$TMP/b.json" 2>/dev/null
jcheck "addr: 2 bytes after a guard is between the culprit and its neighbour" "$TMP/b.json" $O \
	"addr($c + 34)['what'] == 'between' and hx(addr($c + 34)['before']['address']) == $c and hx(addr($c + 34)['after']['address']) == $n and fn(addr($c + 34)['after']) == 'alloc_next'"
jcheck "addr: the END word is the neighbour's header" "$TMP/b.json" $O \
	"addr($n - 8)['what'] == 'header' and addr($n - 8)['part'] == 'header' and hx(addr($n - 8)['block']['address']) == $n"
# --addr in the data of a neighbour whose header is damaged: still its block
n1=$(sed -n 's/^c24_40_next=//p' "$O"); n2=$(sed -n 's/^c4096_40_next=//p' "$O")
"$B/mprof-core" --format=json --addr $((n1 + 100)) --addr $((n2 + 100)) "$exe" "$TMP/all.core" \
	>"$TMP/dn.json" 2>/dev/null
jcheck "addr: data of a damaged-header neighbour is its block, allocated by alloc_next" "$TMP/dn.json" $O \
	"all(addr(a)['what'] == 'block' and hx(addr(a)['block']['address']) == a - 100 and addr(a)['offset'] == 100 and fn(addr(a)['block']) == 'alloc_next' for a in ($n1 + 100, $n2 + 100))"
jcheck "addr: its size as far as its header proves it" "$TMP/dn.json" $O \
	"all(addr(a + 100)['block']['size'] == damaged(a)['size'] for a in ($n1, $n2))"
"$B/mprof-core" --report=stacks --format=json "$exe" "$TMP/all.core" >"$TMP/st.json" 2>/dev/null
check_eq "--report=stacks: still exit 3" 3 $?
check "--report=stacks: no corruption section" python3 -c \
	'import json,sys; sys.exit("corruption" in json.load(open(sys.argv[1])))' "$TMP/st.json"

# ---- the same heap as a raw dump (a firmware's view: one region, a base address) ----
c=$(sed -n 's/^c24_40_culprit=//p' "$O")
base=$(python3 - "$TMP/all.core" "$c" "$TMP/heap.bin" <<'PY'
import struct, sys
core, addr, out = sys.argv[1], int(sys.argv[2], 16), sys.argv[3]
f = open(core, "rb")
h = f.read(64)
phoff, phentsize, phnum = struct.unpack_from("<Q", h, 32)[0], *struct.unpack_from("<HH", h, 54)
for i in range(phnum):
    f.seek(phoff + i * phentsize)
    typ, flags, off, vaddr, paddr, filesz, memsz = struct.unpack("<IIQQQQQ", f.read(48))
    if typ == 1 and vaddr <= addr < vaddr + filesz:
        f.seek(off)
        open(out, "wb").write(f.read(filesz))
        print(hex(vaddr))
        break
PY
)
"$B/mprof-core" --format=json --raw "$TMP/heap.bin" --elf "$exe" --base "$base" \
	--report=corruption --addr $((c + 24 + 3)) >"$TMP/raw.json" 2>/dev/null
check_eq "raw dump of the heap: exit 3" 3 $?
jcheck "raw dump: the same 21 broken guards and damaged headers" "$TMP/raw.json" $O \
	'len(C["guards"]) == 21 and all(damaged(o["c%d_40_next" % s]) for s in (1, 24, 100, 4096, 100000))'
jcheck "raw dump: the neighbour's damaged header names the culprit" "$TMP/raw.json" $O \
	'hx(damaged(o["c24_40_next"])["suspect"]["address"]) == o["c24_40_culprit"] and guard(o["c24_40_culprit"])["overrun"] == 8'
jcheck "raw dump: --addr 3 past the culprit's end is its guard" "$TMP/raw.json" $O \
	'addr(o["c24_40_culprit"] + 27)["what"] == "guard" and hx(addr(o["c24_40_culprit"] + 27)["block"]["address"]) == o["c24_40_culprit"]'

# ---- underrun: 8 bytes before a block, over its own END word ----
run_wait "$TMP/u.out" "$TMP/u.core" underrun
"$B/mprof-core" --format=json "$exe" "$TMP/u.core" >"$TMP/u.json" 2>/dev/null
check_eq "underrun: exit 3" 3 $?
J=$TMP/u.json; O=$TMP/u.out
jcheck "underrun: adjacent (precondition)" $J $O 'o["adjacent"] == 1'
jcheck "underrun: victim identified by its partial header" $J $O \
	'damaged(o["victim"]) and damaged(o["victim"])["kind"] == "end" and damaged(o["victim"])["size"] == 64 and fn(damaged(o["victim"])) == "alloc_victim"'
jcheck "underrun: previous block named as the other suspect" $J $O \
	'hx(damaged(o["victim"])["suspect"]["address"]) == o["prev"] and fn(damaged(o["victim"])["suspect"]) == "alloc_prev"'
jcheck "underrun: no broken guard" $J $O 'C["guards"] == []'
jcheck "underrun: likely an underrun" $J $O 'damaged(o["victim"])["likely"] == "underrun"'

jcheck "underrun: no frame lost" $J $O 'damaged(o["victim"])["frames_overwritten"] == 0'
# 16 bytes: the END word and the outermost return address
run_wait "$TMP/u16.out" "$TMP/u16.core" underrun 16
"$B/mprof-core" --format=json "$exe" "$TMP/u16.core" >"$TMP/u16.json" 2>/dev/null
jcheck "underrun 16: identified, the overwritten outer frame left out" "$TMP/u16.json" "$TMP/u16.out" \
	'damaged(o["victim"])["kind"] == "end" and fn(damaged(o["victim"])) == "alloc_victim" and damaged(o["victim"])["frames_overwritten"] == 1 and all(f["module"] for f in damaged(o["victim"])["frames"])'
"$B/mprof-core" "$exe" "$TMP/u16.core" >"$TMP/u16.txt" 2>/dev/null
check_grep "underrun 16 text: one outer frame overwritten" '^        \(1 outer frame overwritten\)$' "$TMP/u16.txt"

# ---- --addr: a guard byte, freed memory, a global, a stack variable, nothing ----
run_wait "$TMP/a.out" "$TMP/a.core" addr
v() { sed -n "s/^$1=//p" "$TMP/a.out"; }
past=$(v past); freed=$(v freed); glob=$(v global); stk=$(v stack)
"$B/mprof-core" --format=json --addr $((past + 27)) --addr $((freed + 16)) --addr $((glob + 16)) \
	--addr "$stk" --addr 0x10 "$exe" "$TMP/a.core" >"$TMP/a.json" 2>/dev/null
check_eq "addr: exit 0 (a write into freed memory is not header damage)" 0 $?
J=$TMP/a.json; O=$TMP/a.out
jcheck "addr: 3 past the end is the guard, overflow at least 4" $J $O \
	'addr(o["past"] + 27)["what"] == "guard" and addr(o["past"] + 27)["past_end"] == 3 and addr(o["past"] + 27)["overflow_at_least"] == 4 and hx(addr(o["past"] + 27)["block"]["address"]) == o["past"] and fn(addr(o["past"] + 27)["block"]) == "alloc_past"'
jcheck "addr: freed block, offset 16, old allocation stack" $J $O \
	'addr(o["freed"] + 16)["what"] == "freed" and addr(o["freed"] + 16)["offset"] == 16 and hx(addr(o["freed"] + 16)["block"]["address"]) == o["freed"] and fn(addr(o["freed"] + 16)["block"]) == "alloc_freed"'
jcheck "addr: global_table+16" $J $O \
	'addr(o["global"] + 16)["what"] == "module" and addr(o["global"] + 16)["symbol"] == "global_table" and addr(o["global"] + 16)["symbol_offset"] == 16'
jcheck "addr: main thread's stack" $J $O \
	'addr(o["stack"])["what"] == "stack" and not addr(o["stack"])["below_sp"]'
jcheck "addr: 0x10 unmapped" $J $O 'addr(0x10)["what"] == "unmapped"'
jcheck "addr: no corruption section when none is found" $J $O '"corruption" not in d'
"$B/mprof-core" --addr $((past + 27)) --addr $((freed + 16)) "$exe" "$TMP/a.core" >"$TMP/a.txt" 2>&1
check_grep "addr text: guard" "^address $(printf '0x%x' $((past + 27))): 3 bytes past the end of block $past \(24 bytes" "$TMP/a.txt"
check_grep "addr text: freed" "^address $(printf '0x%x' $((freed + 16))): 16 bytes into freed block $freed \(100 bytes" "$TMP/a.txt"

# ---- a C++ global: named demangled ----
if command -v g++ >/dev/null; then
	g++ -g -O0 -o "$TMP/cxx" tests/prog/corrupt_cxx.cc
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./cxx >"$TMP/cxx.out"
	 echo $? >"$TMP/cxx.rc") 2>/dev/null
	t=$(sed -n 's/^table=//p' "$TMP/cxx.out")
	"$B/mprof-core" --format=json --addr $((t + 24)) "$TMP/cxx" "$TMP/core" >"$TMP/cxx.json" 2>/dev/null
	jcheck "addr: a C++ global is app::table+24" "$TMP/cxx.json" "$TMP/cxx.out" \
		'addr(o["table"] + 24)["what"] == "module" and addr(o["table"] + 24)["symbol"] == "app::table" and addr(o["table"] + 24)["symbol_offset"] == 24'
fi

# ---- the overflow crashes the program later: a kernel core ----
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" overflow 24 200 crash >"$TMP/k.out"
 echo $? >"$TMP/k.rc") 2>/dev/null
rc=$(cat "$TMP/k.rc")
check_eq "crash: killed by SIGSEGV" 139 $rc
check "crash: kernel core written" test -s "$TMP/core"
"$B/mprof-core" --format=json "$exe" "$TMP/core" >"$TMP/k.json" 2>/dev/null
check_eq "crash: exit 3" 3 $?
J=$TMP/k.json; O=$TMP/k.out
jcheck "crash: the overflowing block is named" $J $O \
	'fn(guard(o["culprit"])) == "alloc_culprit" and guard(o["culprit"])["overrun"] == 8'
f=$(sed -n 's/^libc_fn=//p' "$O")
"$B/mprof-core" --format=json --addr "$f" "$exe" "$TMP/core" >"$TMP/kf.json" 2>/dev/null
jcheck "crash: libc code is mapped but not in a kernel core, named abort+0" "$TMP/kf.json" $O \
	'addr(o["libc_fn"])["what"] == "not-dumped" and addr(o["libc_fn"])["symbol"] == "abort" and addr(o["libc_fn"])["symbol_offset"] == 0'
jcheck "crash: the erased neighbour lies before the next header" $J $O \
	'o["culprit"] + 24 < o["next"] < hx(guard(o["culprit"])["next_header"]) and guard(o["culprit"])["first_lost_seq"] == guard(o["culprit"])["seq"] + 1'
# ---- HEAPANN_CHECK_INTERVAL: the damage is caught within N allocations ----
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" HEAPANN_CHECK_INTERVAL=4 \
	HEAPANN_ABORT_ON_CORRUPTION=1 "$exe" interval >"$TMP/i.out" 2>"$TMP/i.err"
 echo $? >"$TMP/i.rc") 2>/dev/null
check_eq "interval 4: aborted (SIGABRT)" 134 "$(cat "$TMP/i.rc")"
last=$(sed -n 's/^after=//p' "$TMP/i.out" | tail -n 1)
check "interval 4: within 4 allocations of the overflow (last: ${last:-none})" test "${last:-0}" -le 3
c=$(sed -n 's/^culprit=//p' "$TMP/i.out")
check_grep "interval 4: the guard report names the culprit" "^heapann: guard overwritten after block $c size 40: 8 of 8 guard bytes differ" "$TMP/i.err"
check "interval 4: kernel core written" test -s "$TMP/core"
"$B/mprof-core" --format=json "$exe" "$TMP/core" >"$TMP/i.json" 2>/dev/null
check_eq "interval 4: mprof-core exit 3" 3 $?
jcheck "interval 4: the core names the culprit" "$TMP/i.json" "$TMP/i.out" \
	'fn(guard(o["culprit"])) == "alloc_culprit" and guard(o["culprit"])["overrun"] == 8'
LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" interval >"$TMP/i0.out" 2>"$TMP/i0.err"
check_eq "no interval (default): runs to the end" "0 1" "$? $(sed -n 's/^survived=//p' "$TMP/i0.out")"
check_eq "no interval: nothing reported" 0 "$(grep -c heapann "$TMP/i0.err")"
LD_PRELOAD="$TOP/$B/libheapann.so" HEAPANN_CHECK_INTERVAL=4 "$exe" interval >"$TMP/i1.out" 2>"$TMP/i1.err"
check_eq "interval 4 without abort: runs to the end" "0 1" "$? $(sed -n 's/^survived=//p' "$TMP/i1.out")"
check_eq "interval 4 without abort: reported once in 25 checks" 1 "$(grep -c "^heapann: guard overwritten after block $(sed -n 's/^culprit=//p' "$TMP/i1.out")" "$TMP/i1.err")"
# an underrun (END word) is caught too, at the next allocation (stdout's buffer)
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" HEAPANN_CHECK_INTERVAL=1 \
	HEAPANN_ABORT_ON_CORRUPTION=1 "$exe" underrun >"$TMP/iu.out" 2>"$TMP/iu.err"
 echo $? >"$TMP/iu.rc") 2>/dev/null
check_eq "interval 1, underrun: aborted at the next allocation" "134 0" "$(cat "$TMP/iu.rc") $(grep -c . "$TMP/iu.out")"
v=$(sed -n 's/^heapann: HEAPANN_CHECK_INTERVAL: damaged header of live block \(0x[0-9a-f]*\)$/\1/p' "$TMP/iu.err")
check "interval 1, underrun: the damaged header is reported (${v:-none})" test -n "$v"
"$B/mprof-core" --format=json "$exe" "$TMP/core" >"$TMP/iu.json" 2>/dev/null
check_eq "interval 1, underrun: mprof-core exit 3" 3 $?
echo "victim=$v" >"$TMP/iu.vals"
jcheck "interval 1, underrun: the core shows the same block, allocated by alloc_victim" "$TMP/iu.json" "$TMP/iu.vals" \
	'damaged(o["victim"])["kind"] == "end" and fn(damaged(o["victim"])) == "alloc_victim"'

# ---- HEAPANN_CHECK_INTERVAL under threads: frees (and munmaps) race with the checks ----
cc -g -O2 -pthread -o "$TMP/ct" tests/prog/corrupt_threads.c
LD_PRELOAD="$TOP/$B/libheapann.so" HEAPANN_CHECK_INTERVAL=7 HEAPANN_ABORT_ON_CORRUPTION=1 \
	"$TMP/ct" >"$TMP/ct.out" 2>"$TMP/ct.err"
check_eq "threads, interval 7: 4 x 10000 frees, exit 0" "0 done=40000" "$? $(cat "$TMP/ct.out")"
check_eq "threads, interval 7: no false report" 0 "$(grep -c heapann "$TMP/ct.err")"
done_testing
