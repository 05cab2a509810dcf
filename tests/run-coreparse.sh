#!/bin/sh
# run-coreparse.sh - coreparse on real cores of tests/prog/cp_blocks.c run under
# libheapann: a kernel core (abort) and a gdb gcore of the same program. cpdump must
# find exactly the blocks the program printed (address, size, seq, depth, guard),
# its freed blocks, its 5-byte overrun, its two damaged headers, its threads, its
# build-id; the same result with 1 and 2 threads; a core cut by ulimit -c opens and
# says it is truncated.
. tests/lib.sh
LIB=$TOP/$B/libheapann.so
DUMP=$TOP/$B/tests/tools/cpdump
[ -f "$LIB" ] || skip "no $B/libheapann.so yet"
[ -x "$DUMP" ] || skip "no $DUMP (make $B/tests/tools/cpdump)"
prog=$TMP/cp_blocks
${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g -Iinclude -pthread -o "$prog" tests/prog/cp_blocks.c || exit 1
other=$TMP/other
printf 'int main(void){return 0;}\n' >"$TMP/other.c" && ${CC:-cc} -o "$other" "$TMP/other.c" || exit 1
buildid=$(readelf -n "$prog" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')

# verify LABEL OUT DUMP [FNAME [QEMU]]: every fact the program printed (OUT) is in
# cpdump's DUMP; FNAME is the program's name in NT_PRPSINFO; QEMU: a qemu-user core
# (no NT_FILE, so no build-id from it)
verify() {
	label=$1 out=$2 dump=$3 fname=${4:-cp_blocks} nofiles=${5:-} fnx=
	# the kernel keeps 15 bytes of the name, qemu 16
	[ -n "$nofiles" ] && fnx=.?
	verify_blocks "$label" "$out" "$dump"
	for t in $(sed -n 's/^tid //p' "$out"); do
		check_grep "$label: thread $t" "^thread tid=$t " "$dump"
	done
	check_grep "$label: 2 threads" "threads=2 " "$dump"
	check_grep "$label: pr_fname" "^prpsinfo fname=$fname$fnx args=" "$dump"
	[ -z "$nofiles" ] && check_grep "$label: main module is the program" "^main $prog\$" "$dump"
	if [ -n "$buildid" ] && [ -z "$nofiles" ]; then
		check_grep "$label: build-id of the program from the core" "^file 0x[0-9a-f]*-0x[0-9a-f]* off=0x0 $prog buildid=$buildid\$" "$dump"
	fi
}

# verify_blocks LABEL OUT DUMP [RAW]: the blocks part of verify; RAW: a dump of
# [heap] only, without the second thread's arena ("tlive" blocks)
verify_blocks() {
	label=$1 out=$2 dump=$3 raw=${4:-} want=41
	pat='^t?live '
	[ -n "$raw" ] && pat='^live ' want=36
	nlive=$(grep -Ec "$pat" "$out")
	# each live block exactly once, with its size, seq, depth and guard; the
	# overrun block with 5 differing guard bytes, the others intact
	missing=$(awk -v dump="$dump" -v pat="$pat" '
		/^overrun / { ovr[$2] = $3 }
		$0 ~ pat { live[$2] = $0 }
		END {
			while ((getline l < dump) > 0) {
				if (l !~ /^block live /) continue
				split(l, f, /[ =]/)
				seen[f[4]]++
				line[f[4]] = l
			}
			bad = 0
			for (p in live) {
				split(live[p], v, " ")
				o = (p in ovr) ? ovr[p] : 0
				want = "block live user=" p " size=" v[3] " seq=" v[4] " depth=" v[5] " stack="
				tail = " guard=" v[6] " diff=" o " overrun=" o " flags=" (o ? 1 : 0) " "
				if (seen[p] != 1 || index(line[p], want) != 1 || index(line[p], tail) == 0) {
					print "missing or wrong: " live[p] " -> " line[p] > "/dev/stderr"
					bad++
				}
			}
			print bad
		}' "$out")
	check_eq "$label: all $nlive live blocks found once, with size/seq/depth/guard" 0 "$missing"
	check "$label: the program made $want live blocks" test "$nlive" -eq "$want"
	# freed: tcache took START and INFO; found by END, proven by the check word
	nfreed=$(sed -n 's/^freed \(0x[0-9a-f]*\) \([0-9]*\)$/\1 \2/p' "$out" | while read -r p sz; do
		grep -q "^block freed user=$p size=$sz .* flags=0 " "$dump" && echo x
	done | wc -l)
	check_eq "$label: its 4 freed blocks are freed, size proven" 4 "$nfreed"
	p=$(sed -n 's/^dmg-start //p' "$out")
	check_grep "$label: START-damaged header" "^damage start hdr=0x[0-9a-f]* user=$p " "$dump"
	set -- $(sed -n 's/^dmg-end //p' "$out")
	check_grep "$label: END-damaged header keeps size and seq" "^damage end hdr=0x[0-9a-f]* user=$1 size=$2 seq=$3 known=15 " "$dump"
	check_grep "$label: no other damage" "^scan .* damaged=2 " "$dump"
}

# regs_vs_gdb LABEL GDB PROG CORE DUMP: every thread's sp and pc as gdb reads them
# from the core are in cpdump's thread lines
regs_vs_gdb() {
	command -v "$2" >/dev/null 2>&1 || return 0
	timeout 120 "$2" -batch -nx -iex 'set auto-load off' -ex 'thread apply all info registers sp pc' "$3" "$4" 2>/dev/null |
		awk '/^sp[: ]/ { for (i = 2; i <= NF; i++) if ($i ~ /^0x/) { sp = $i; break } }
		     /^pc[: ]/ { for (i = 2; i <= NF; i++) if ($i ~ /^0x/) { print "pc=" $i " sp=" sp; break } }' >"$TMP/regs"
	n=0 bad=0
	while read -r pair; do
		n=$((n + 1))
		grep -q "^thread tid=[0-9]* signo=[0-9]* $pair\$" "$5" || bad=$((bad + 1))
	done <"$TMP/regs"
	check "$1: threads' pc and sp as gdb reads them ($n threads)" test "$n" -eq 2 -a "$bad" -eq 0
}

# ---- kernel core (where the kernel writes "core" into the cwd) ----
kpat=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
kcores=0
if [ "$kpat" = core ]; then
	kcores=1
else
	echo "# core_pattern is '$kpat', not 'core': kernel core parts skipped"
fi
rm -f "$TMP/core"
[ $kcores = 1 ] && (cd "$TMP" && ulimit -c unlimited && HEAPANN_GUARD=16 LD_PRELOAD=$LIB "$prog" abort >"$TMP/k.out" 2>/dev/null)
[ $kcores = 1 ] && check "kernel core written" test -s "$TMP/core"
if [ -s "$TMP/core" ]; then
	mv "$TMP/core" "$TMP/kcore"
	"$DUMP" -e "$prog" "$TMP/kcore" >"$TMP/k.dump" 2>"$TMP/k.err"
	check_eq "kernel core: cpdump exit 0" 0 $?
	verify "kernel core" "$TMP/k.out" "$TMP/k.dump"
	check_grep "kernel core: SIGABRT" "^thread tid=[0-9]* signo=6 " "$TMP/k.dump"
	regs_vs_gdb "kernel core" gdb "$prog" "$TMP/kcore" "$TMP/k.dump"
	check_grep "kernel core: not truncated" "truncated=0 truncated_bytes=0\$" "$TMP/k.dump"
	check_grep "kernel core: libheapann's statistics region signature, once" "^scan .* sigs=1\$" "$TMP/k.dump"
	check_grep "kernel core: is a core of the program" "^exe ok" "$TMP/k.dump"
	"$DUMP" -q -e "$other" "$TMP/kcore" >"$TMP/k2.dump" 2>&1
	check_grep "kernel core: not a core of another program" "^exe mismatch code=3: $TMP/kcore: core of another program: $prog " "$TMP/k2.dump"
	# cut in half: everything past the cut is reported missing, to the byte
	size=$(stat -c %s "$TMP/kcore")
	head -c $((size / 2)) "$TMP/kcore" >"$TMP/half"
	"$DUMP" -q "$TMP/half" >"$TMP/h.dump" 2>&1
	check_eq "half a kernel core: opens and scans (exit 0)" 0 $?
	check_grep "half a kernel core: the missing half, to the byte" "truncated=1 truncated_bytes=$((size - size / 2))\$" "$TMP/h.dump"
	"$DUMP" -t 1 "$TMP/kcore" >"$TMP/k1.dump" 2>&1
	"$DUMP" -t 2 -c 4096 "$TMP/kcore" >"$TMP/k3.dump" 2>&1
	check "kernel core: same scan with 1 thread and with 2 threads in 4 KiB chunks" cmp -s "$TMP/k1.dump" "$TMP/k3.dump"
fi

# ---- gcore of the same program, stopped ----
if command -v gdb >/dev/null 2>&1; then
	HEAPANN_GUARD=16 LD_PRELOAD=$LIB "$prog" stop >"$TMP/g.out" 2>/dev/null &
	pid=$!
	i=0
	while ! grep -q '^ready' "$TMP/g.out" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	make_gcore "$pid" "$TMP/gcore"
	check "gcore written" test -s "$TMP/gcore"
	# a raw dump of the same process's heap, for cp_image_open_raw
	set -- $(awk '/\[heap\]/ { split($1, r, "-"); print "0x" r[1], "0x" r[2] }' /proc/$pid/maps)
	heap_lo=${1:-} heap_hi=${2:-}
	[ -n "$heap_lo" ] && gdb -batch -nx -q -iex 'set auto-load off' -p "$pid" \
		-ex "dump binary memory $TMP/heap.bin $heap_lo $heap_hi" -ex detach >/dev/null 2>&1
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ -s "$TMP/gcore" ]; then
		"$DUMP" -e "$prog" "$TMP/gcore" >"$TMP/g.dump" 2>"$TMP/g.err"
		check_eq "gcore: cpdump exit 0" 0 $?
		verify "gcore" "$TMP/g.out" "$TMP/g.dump"
		check_grep "gcore: is a core of the program" "^exe ok" "$TMP/g.dump"
		regs_vs_gdb "gcore" gdb "$prog" "$TMP/gcore" "$TMP/g.dump"
	fi
	check "raw heap dump written" test -s "$TMP/heap.bin"
	if [ -s "$TMP/heap.bin" ]; then
		"$DUMP" --raw "$heap_lo" 8 little "$TMP/heap.bin" >"$TMP/r.dump" 2>"$TMP/r.err"
		check_eq "raw dump: cpdump exit 0" 0 $?
		check_grep "raw dump: one segment at the heap's address" "^image kind=raw wsize=8 endian=little " "$TMP/r.dump"
		verify_blocks "raw dump" "$TMP/g.out" "$TMP/r.dump" raw
	fi
else
	echo "# no gdb: gcore part skipped"
fi

# ---- 32-bit cores of either byte order: qemu-user dumps the target's own core ----
# cross kit: TARGET QEMU: build libheapann.a for TARGET, link cp_blocks statically,
# run it under QEMU until abort(); qemu writes qemu_PROG_DATE_PID.core
cross() {
	target=$1 qemu=$2 label=$3
	if ! command -v "$target-gcc" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1; then
		echo "# no $target-gcc or $qemu: $label part skipped"
		return
	fi
	make -s TARGET="$target" B="$TMP/x" cross >"$TMP/x.log" 2>&1 || { check "$label: cross kit builds" false; return; }
	xprog=$TMP/cp_blocks_$target
	$target-gcc -std=c11 -D_GNU_SOURCE -O1 -g -Iinclude -funwind-tables -pthread -static -o "$xprog" \
		tests/prog/cp_blocks.c $(PKG_CONFIG_PATH="$TMP/x/$target" pkg-config --libs heapann-static) \
		>"$TMP/x.log" 2>&1 || { check "$label: test program links" false; return; }
	mkdir -p "$TMP/q" && rm -f "$TMP"/q/*
	(cd "$TMP/q" && ulimit -c unlimited && HEAPANN_GUARD=16 "$qemu" "$xprog" abort >"$TMP/x.out" 2>/dev/null)
	xcore=$(ls "$TMP"/q/qemu_*.core 2>/dev/null | head -n 1)
	check "$label: qemu wrote the target's core" test -n "$xcore"
	[ -n "$xcore" ] || return
	"$DUMP" "$xcore" >"$TMP/x.dump" 2>&1
	check_eq "$label: cpdump exit 0" 0 $?
	check_grep "$label: word size and byte order" "$4" "$TMP/x.dump"
	verify "$label" "$TMP/x.out" "$TMP/x.dump" "$(basename "$xprog" | cut -c1-15)" nofiles
	check_grep "$label: SIGABRT" "^thread tid=[0-9]* signo=6 " "$TMP/x.dump"
	regs_vs_gdb "$label" gdb-multiarch "$xprog" "$xcore" "$TMP/x.dump"
	rm -rf "$TMP/q"   # qemu dumps its own (host) core next to the target's
}
cross arm-linux-gnueabihf qemu-arm "ARM32 LE core" "^image kind=core wsize=4 endian=little machine=40\$"
cross mips-linux-gnu qemu-mips "MIPS32 BE core" "^image kind=core wsize=4 endian=big machine=8\$"

# ---- a kernel core cut by the size limit ----
rm -f "$TMP/core"
[ $kcores = 1 ] && (cd "$TMP" && ulimit -c 256 && HEAPANN_GUARD=16 LD_PRELOAD=$LIB "$prog" abort >"$TMP/t.out" 2>/dev/null)
if [ -s "$TMP/core" ]; then
	"$DUMP" -q "$TMP/core" >"$TMP/t.dump" 2>"$TMP/t.err"
	check_eq "size-limited core: opens and scans (exit 0)" 0 $?
	check_grep "size-limited core: says it is truncated, with missing bytes" "missing_bytes=[1-9][0-9]* missing_segs=[1-9][0-9]* truncated=1 truncated_bytes=[1-9]" "$TMP/t.dump"
else
	echo "# the kernel wrote no size-limited core: part skipped"
fi
done_testing
