#!/bin/sh
# run-hunt2-fw.sh - mprof's tables from a firmware's RAM dump that holds the
# statistics region: tests/prog/tab_static.c (the region in a buffer of its own,
# heapann_stats_buffer) linked with the static kit for 32-bit MIPS (big-endian)
# and 32-bit ARM, run under qemu-user until abort(). The qemu core is read, then
# RAM ranges cut out of it as a probe would dump them (tests/ramcut.py): the
# whole writable run (the region's exact counts: make_item's 300 allocations,
# 120 frees, bin 48), the heap without the region (the tables from the live
# blocks), and a dump that stops in the middle of the heap: the statistics then
# count live blocks the dump does not hold, and the report must say how many
# instead of silently counting them as freed. Skips without the cross tools.
. tests/lib.sh
M=$B/mprof-core
case $M in /*) ;; *) M=$TOP/$M ;; esac
[ -x "$M" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
command -v pkg-config >/dev/null || skip "pkg-config not installed"

# py FILE EXPR: print EXPR (Python) over the JSON report d
py() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
ran=0
for v in mips:mips-linux-gnu arm:arm-linux-gnueabihf; do
	n=${v%%:*} target=${v#*:}
	if ! command -v $target-gcc >/dev/null 2>&1 || ! command -v qemu-$n >/dev/null 2>&1; then
		echo "# no $target-gcc or qemu-$n: $n not run"
		continue
	fi
	ran=1
	make -s TARGET=$target B="$TMP/kit" cross >"$TMP/kit.log" 2>&1
	check_eq "$n: the kit builds" 0 $?
	exe=$TMP/ts_$n
	$target-gcc -std=gnu11 -O1 -g -fno-optimize-sibling-calls -static -o "$exe" tests/prog/tab_static.c \
		$(PKG_CONFIG_PATH="$TMP/kit/$target" pkg-config --cflags --libs heapann-static) >"$TMP/cc.log" 2>&1
	check_eq "$n: tab_static links" 0 $?
	rm -rf "$TMP/q"; mkdir -p "$TMP/q"
	(cd "$TMP/q" && ulimit -c unlimited && exec qemu-$n -E GLIBC_TUNABLES=glibc.malloc.top_pad=0 "$exe" \
		</dev/null >"$TMP/q/out" 2>/dev/null)
	core=$(ls "$TMP"/q/qemu_*.core 2>/dev/null | head -n 1)
	check "$n: qemu-$n wrote a core" test -n "$core"
	[ -n "$core" ] || continue
	set -- $(cat "$TMP/q/out")   # buffer ADDR allocs A frees F size S
	buf=$2 A=$4 F=$6 S=$8
	K=$((A - F))

	# the core itself
	"$M" --format json --report=leaks,bins "$exe" "$core" >"$TMP/c.json" 2>/dev/null
	check_eq "$n core: make_item $K kept ($((K * S)) bytes), $A allocs, $F frees" "[($K, $((K * S)), $A, $F)]" \
		"$(py "$TMP/c.json" "[(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:2] == ['make_item', 'main']]")"

	set -- $(python3 tests/ramcut.py "$core" "$buf")
	lo=$1 hi=$2
	# the whole writable run: .data, .bss with the region, the heap
	python3 tests/ramcut.py "$core" "$lo" "$hi" "$TMP/ram.bin"
	J=$TMP/ram.json
	"$M" --format json --blocks --report=stacks,leaks,bins --raw "$TMP/ram.bin" --elf "$exe" --base "$lo" >"$J" 2>"$J.err"
	check_eq "$n RAM dump: exit 0" 0 $?
	check_eq "$n RAM dump: 32-bit, statistics found" "4 statistics" "$(py "$J" "d['word_size'], d['tables_source']" | tr -d "(),'")"
	check_eq "$n RAM dump: make_item $K kept, $A allocs, $F frees" "[($K, $((K * S)), $A, $F)]" \
		"$(py "$J" "[(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:2] == ['make_item', 'main']]")"
	check_eq "$n RAM dump: bin $S: $A allocs, $F frees, $K kept" "[($A, $((A * S)), $F, $K)]" \
		"$(py "$J" "[(b['allocs'], b['bytes'], b['frees'], b['kept_blocks']) for b in d['bins'] if b['size'] == $S]")"
	check_eq "$n RAM dump: every live block the statistics count is in it" "0 0" \
		"$(py "$J" "d['statistics']['live_blocks_not_in_image'], d['statistics']['live_bytes_not_in_image']" | tr -d '(),')"
	LIVE=$(py "$J" "d['statistics']['live_blocks']")

	# the heap alone, from past the region: the tables from the live blocks
	hb=$(py "$J" "'0x%x' % (max(int(b['address'], 16) for b in d['block_list'] if b['size'] == $S) - 4096 & ~4095)")
	hb=$(python3 -c "import sys; print('0x%x' % max(int(sys.argv[1], 0), int(sys.argv[2], 0) + 4096))" "$hb" "$buf")
	python3 tests/ramcut.py "$core" "$hb" "$hi" "$TMP/heap.bin"
	"$M" --format json --blocks --report=stacks,leaks --raw "$TMP/heap.bin" --elf "$exe" --base "$hb" >"$TMP/h.json" 2>/dev/null
	NH=$(py "$TMP/h.json" "len([b for b in d['block_list'] if b['size'] == $S])")
	check_eq "$n top of the heap, without the region: the tables from its $NH live $S-byte blocks" "live_blocks [($NH, $NH, 0)]" \
		"$(py "$TMP/h.json" "d['tables_source'], [(l['kept_blocks'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:2] == ['make_item', 'main']]" | tr -d "'" | sed 's/^(//; s/)$//; s/, \[/ [/')"

	# the region's RAM alone, up to the end of its 256 KiB buffer (tab_static.c),
	# no block: the whole run's counters, bins and calls, and the live blocks
	# said to be outside the dump; exit 0 (the region is something to show)
	rend=$(printf '0x%x' $((buf + 256 * 1024)))
	python3 tests/ramcut.py "$core" "$lo" "$rend" "$TMP/region.bin"
	R=$TMP/region.json
	"$M" --format json --report=leaks,bins,direct --raw "$TMP/region.bin" --elf "$exe" --base "$lo" >"$R" 2>"$R.err"
	check_eq "$n region alone: exit 0" 0 $?
	check_eq "$n region alone: no block, statistics found, all $LIVE live blocks outside the dump" \
		"0 statistics $LIVE" "$(py "$R" "d['blocks'], d['tables_source'], d['statistics']['live_blocks_not_in_image']" | tr -d "(),'")"
	check_eq "$n region alone: bin $S: $A allocs, $F frees, $K kept" "[($A, $((A * S)), $F, $K)]" \
		"$(py "$R" "[(b['allocs'], b['bytes'], b['frees'], b['kept_blocks']) for b in d['bins'] if b['size'] == $S]")"
	check_eq "$n region alone: direct: make_item called malloc $A times for $((A * S)) bytes" "[($A, $((A * S)))]" \
		"$(py "$R" "[(x['calls'], x['bytes']) for x in d['direct'] if x['function'] == 'make_item']")"

	# a dump that stops at the user address of the middle make_item block (its
	# header dumped, its data not): the blocks above are not in it
	set -- $(py "$J" "' '.join(b['address'] for b in sorted(d['block_list'], key=lambda b: int(b['address'], 16)) if b['size'] == $S)")
	mid=$(eval echo \${$(( ($# + 1) / 2 ))})
	python3 tests/ramcut.py "$core" "$lo" "$mid" "$TMP/cut.bin"
	C=$TMP/cut.json
	"$M" --format json --blocks --report=stacks,leaks --raw "$TMP/cut.bin" --elf "$exe" --base "$lo" >"$C" 2>"$C.err"
	check_eq "$n cut in the heap: exit 0" 0 $?
	NC=$(py "$C" "len([b for b in d['block_list'] if b['size'] == $S])")
	check_eq "$n cut in the heap: $(( ($# + 1) / 2 )) of the $K make_item blocks in it" "$(( ($# + 1) / 2 ))" "$NC"
	MISS=$((LIVE - $(py "$C" "d['blocks']")))
	check_eq "$n cut in the heap: the statistics' $LIVE live blocks less those found are said to be missing" \
		"$MISS" "$(py "$C" "d['statistics']['live_blocks_not_in_image']")"
	check_eq "$n cut in the heap: make_item's row keeps what the dump holds" "[($NC, $((NC * S)), $A, $((A - NC)))]" \
		"$(py "$C" "[(l['kept_blocks'], l['kept_bytes'], l['allocs'], l['frees']) for l in d['leaks'] if l['path'][:2] == ['make_item', 'main']]")"
	"$M" --report=leaks --raw "$TMP/cut.bin" --elf "$exe" --base "$lo" >"$TMP/cut.txt" 2>&1
	check_grep "$n cut in the heap: text says so" \
		"^the statistics count $MISS live blocks \([0-9,]+ bytes\) that the image does not hold \(memory not dumped, damaged or cut-off headers\): the leak, direct and graph tables count them as freed; the size bins, whose frees were counted as they happened, keep them\$" "$TMP/cut.txt"
done
[ $ran = 1 ] || skip "no cross compiler with its qemu-user"
done_testing
