#!/bin/sh
# run-hunt7-fw.sh - a firmware-like static program (tests/prog/hunt7_fw.c: the
# static kit over a bump pool in .bss, the seven ha_real_* functions) with the
# aligned family, realloc of a plain and of an aligned block, calloc, freed
# blocks and one dropped pointer, built for x86-64 (a kernel core), for
# 32-bit big-endian MIPS and for 32-bit ARM (qemu-user cores). Its RAM (.data, .bss, the pool) is
# dumped out of each core with gdb's `dump binary memory`, as from a probe, and
# read with --raw: every site's exact bytes at its line, the alignments kept,
# the lost report (the dropped block definitely lost, the rest reachable from
# keep[] in .bss), --addr of keep[] named as the variable. A qemu core has no
# NT_FILE: --addr there must still name keep[] (it said "heap memory" before),
# and keep[] must be a root of the lost report (every block it held read as
# definitely lost before).
# --addr of a function's code, outside a raw dump (RAM only), names the function
# (it said "not mapped in the image"). The bin table's types column names none of the kit's own structs (struct
# ha_hdr_view for 48 bytes on x86-64): they are not the program's.
# Skips a part whose tools are missing.
. tests/lib.sh
M=$B/mprof-core
case $M in /*) ;; *) M=$TOP/$M ;; esac
[ -x "$M" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
src=tests/prog/hunt7_fw.c
mark() { grep -n "MARK:$1 " $src | cut -d: -f1; }

# check_fw N EXE JSON: every site of hunt7_fw.c in the JSON stacks report
check_fw() {
	for s in pm:f_pm:1000:1 aa:f_aa:640:1 ma:f_ma:123:1 rma:f_rma:3000:1 grow:f_grow:500:1 \
		cal:f_cal:63:1 few:f_few:144:3 drop:f_drop:333:1; do
		set -- $(echo $s | tr : ' ')
		check "$N: $2, $3 bytes in $4 blocks at line $(mark $1)" python3 tests/jstack.py "$J" stack "$3" "$4" "$2:$(mark $1)"
	done
	check_eq "$N: 4 freed blocks seen (2 freed, 2 left by realloc)" 4 \
		"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["freed_blocks"])' "$J")"
}

# check_lost WHAT [SAYS TOTALS]: in $J, the definitely, indirectly and possibly
# lost bytes and blocks; by default f_drop's 333 bytes definitely lost and no
# other block (keep[] in .bss holds the others)
check_lost() {
	check_eq "$1 lost: ${2:-f_drop's 333 bytes definitely lost, nothing else lost}" "${3:-333 1 0 0 0 0}" \
		"$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["lost"]["totals"]; print(*[s[k + " lost"][x] for k in ("definitely","indirectly","possibly") for x in ("bytes","blocks")])' "$J")"
}

# run_part N EXE CORE GDB: the core, then the RAM dumped from it
run_part() {
	N=$1 exe=$2 core=$3 gdb=$4
	set -- $(head -n 1 "$TMP/$N.out")   # ram LO HI pool ADDR
	lo=$2 hi=$3
	kp=$(printf 0x%x 0x$(nm "$exe" | awk '$3 == "keep" { print $1 }'))
	blocks=$(sed -n 's/^block //p' "$TMP/$N.out" | tr '\n' ' ')
	set -- $blocks
	check_eq "$N: alignments kept (256, 64, 4096, 128 after realloc)" "0 0 0 0" \
		"$(($1 % 256)) $(($2 % 64)) $(($3 % 4096)) $(($4 % 128))"
	J=$TMP/$N.core.json
	"$M" --format json --blocks --report=stacks,lost "$exe" "$core" >"$J" 2>"$J.err"
	check_eq "$N core: exit 0" 0 $?
	check_fw
	check_lost "$N core"
	"$M" --format json --report=bins "$exe" "$core" >"$TMP/$N.bins.json" 2>/dev/null
	check_eq "$N core: no bin names a type of the kit's (its structs are not the program's)" "[]" \
		"$(python3 -c 'import json,re,sys; print([(b["size"], t) for b in json.load(open(sys.argv[1]))["bins"] for t in b["types"] if re.match("(struct |union )?(ha_|heapann)", t)])' "$TMP/$N.bins.json")"
	"$M" --addr "$kp" --addr $((kp + 4)) "$exe" "$core" >"$TMP/$N.caddr" 2>&1
	check_grep "$N core: --addr names keep[]" "^address $kp: keep\+0x0 \(variable of [0-9]+ bytes\) in ${exe##*/}" "$TMP/$N.caddr"
	check_grep "$N core: --addr keep+4 too" "^address 0x[0-9a-f]+: keep\+0x4 " "$TMP/$N.caddr"

	$gdb -batch -nx -q -iex 'set auto-load off' "$exe" "$core" -ex "dump binary memory $TMP/$N.bin $lo $hi" >/dev/null 2>&1
	check_eq "$N: gdb dumped $lo..$hi" $((hi - lo)) "$(stat -c %s "$TMP/$N.bin" 2>/dev/null)"
	J=$TMP/$N.raw.json
	"$M" --format json --report=stacks,lost --raw "$TMP/$N.bin" --elf "$exe" --base "$lo" >"$J" 2>"$J.err"
	check_eq "$N raw: exit 0" 0 $?
	check_fw
	check_lost "$N raw"
	"$M" --addr "$kp" --addr "$1" --raw "$TMP/$N.bin" --elf "$exe" --base "$lo" >"$TMP/$N.raddr" 2>&1
	check_grep "$N raw: --addr names keep[]" "^address $kp: keep\+0x0 \(variable of [0-9]+ bytes\)" "$TMP/$N.raddr"
	tb=0; [ "$N" = arm ] && tb=1   # a Thumb function's symbol value has bit 0 set
	fp=$(printf 0x%x $(( (0x$(nm "$exe" | awk '$3 == "f_pm" { print $1 }') & ~tb) + 4 )))
	"$M" --addr "$fp" --raw "$TMP/$N.bin" --elf "$exe" --base "$lo" >"$TMP/$N.faddr" 2>&1
	check_grep "$N raw: --addr in f_pm's code, outside the dump, names it" \
		"^address $fp: in the ELF but not in the dump; f_pm\+0x4 \(function of [0-9]+ bytes\) in ${exe##*/}" "$TMP/$N.faddr"
	check_grep "$N raw: --addr of the posix_memalign block" "^address $(printf 0x%x $1): 0 bytes into live block $(printf 0x%x $1) \(1,000 bytes" "$TMP/$N.raddr"
	"$M" --raw "$TMP/$N.bin" --elf "$exe" --base $((lo + 4096)) >/dev/null 2>"$TMP/$N.wrong"
	check_eq "$N raw, --base one page off: exit 1" 1 $?
	check_grep "$N raw, --base one page off: says to check --base" "is --base 0x[0-9a-f]+ the address of the dump's first byte\?" "$TMP/$N.wrong"
}

ran=0
if [ "$(uname -m)" = x86_64 ] && command -v gdb >/dev/null && [ -f "$B/heapann-static.pc" ]; then
	exe=$TMP/fw_x86
	gcc -std=gnu11 -O1 -g -fno-optimize-sibling-calls -static -o "$exe" $src \
		$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static) >"$TMP/cc.log" 2>&1
	check_eq "x86-64: hunt7_fw links with the static kit" 0 $?
	mkdir -p "$TMP/kx"
	(cd "$TMP/kx" && ulimit -c unlimited && exec "$exe" >"$TMP/x86.out" 2>/dev/null)
	core=$(ls "$TMP"/kx/core* 2>/dev/null | head -n 1)
	if [ -n "$core" ]; then
		ran=1
		run_part x86 "$exe" "$core" gdb
		# glibc's own heap under the kit (tests/prog/hunt_allocs.c keeps every
		# block in keep[]): libc's start-up blocks are held by its variables
		# in .bss, which the core read only in part (200 bytes in 2 lost)
		gcc -std=gnu11 -O1 -g -static -DHUNT_ABORT -o "$TMP/ha_x86" tests/prog/hunt_allocs.c \
			$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static) >"$TMP/cc.log" 2>&1
		mkdir -p "$TMP/kh"
		(cd "$TMP/kh" && ulimit -c unlimited && exec "$TMP/ha_x86" >/dev/null 2>&1)
		J=$TMP/ha.json
		"$M" --format json --report=lost "$TMP/ha_x86" "$(ls "$TMP"/kh/core* | head -n 1)" >"$J" 2>/dev/null
		check_lost "x86 hunt_allocs static core" "nothing lost" "0 0 0 0 0 0"
	else
		echo "# no kernel core written (core_pattern must be core): x86-64 not run"
	fi
fi
for v in mips:mips-linux-gnu arm:arm-linux-gnueabihf; do
	n=${v%%:*} target=${v#*:}
	if ! command -v $target-gcc >/dev/null 2>&1 || ! command -v qemu-$n >/dev/null 2>&1 ||
		! command -v gdb-multiarch >/dev/null 2>&1; then
		echo "# no $target-gcc, qemu-$n or gdb-multiarch: $n not run"
		continue
	fi
	make -s TARGET=$target B="$TMP/kit" cross >"$TMP/kit.log" 2>&1
	check_eq "$n: the kit builds" 0 $?
	exe=$TMP/fw_$n
	$target-gcc -std=gnu11 -O1 -g -fno-optimize-sibling-calls -static -o "$exe" $src \
		$(PKG_CONFIG_PATH="$TMP/kit/$target" pkg-config --cflags --libs heapann-static) >"$TMP/cc.log" 2>&1
	check_eq "$n: hunt7_fw links with the static kit" 0 $?
	rm -rf "$TMP/q"; mkdir -p "$TMP/q"
	(cd "$TMP/q" && ulimit -c unlimited && exec qemu-$n "$exe" >"$TMP/$n.out" 2>/dev/null)
	core=$(ls "$TMP"/q/qemu_*.core 2>/dev/null | head -n 1)
	if [ -n "$core" ]; then
		ran=1
		run_part $n "$exe" "$core" gdb-multiarch
	else
		echo "# qemu-$n wrote no core: $n not run"
	fi
done
[ $ran = 1 ] || skip "neither a kernel core nor a qemu core"
done_testing
