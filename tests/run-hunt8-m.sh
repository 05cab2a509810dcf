#!/bin/sh
# run-hunt8-m.sh - bare-metal Cortex-M3 firmware (tests/prog/hunt8_m.c, its memory
# map hunt8_m.ld): newlib's malloc under the static kit built for arm-none-eabi,
# Thumb-2 code at -O0 and -O2, with and without frame pointers, run on
# qemu-system-arm's mps2-an385 (semihosting; and a Cortex-M4 with hard float
# on mps2-an386, a Cortex-M0 build) until it halts, its RAM saved with
# the monitor's pmemsave (as a probe dumps it) and the whole board with
# dump-guest-memory (an ELF core; tests/qemu_fw.py). Every report on the dump:
# each site's bytes, blocks, functions and lines (the recursion's five frames),
# the lost report (the dropped block definitely lost, the rest held by globals),
# the overflow into the neighbour's header, --addr of a block's byte, of a
# global, of the freed block a global still points to, of code, the folded,
# Massif and JSON exports, the tables, gdb's symbolizer.
# Skips when arm-none-eabi-gcc, newlib or qemu-system-arm is missing.
. tests/lib.sh
arm_fw_setup tests/prog/hunt8_m.c

make -s TARGET=arm-none-eabi XCFLAGS="$CPU" B="$TMP/kit" cross >"$TMP/kit.log" 2>&1
check_eq "the kit builds for arm-none-eabi (Cortex-M3, Thumb-2, newlib)" 0 $?
[ -f "$TMP/kit/arm-none-eabi/libheapann.a" ] || { sed 's/^/# /' "$TMP/kit.log" | head -n 20; done_testing; }
BOARD=mps2-an385 KIT=$TMP/kit

# check_sites N J: every site of hunt8_m.c in the JSON stacks report J
check_sites() {
	cs_n=$1 cs_j=$2 r=$(mark recur)
	check "$cs_n: f_rec, 100 bytes in 1 block, five frames of the recursion" python3 tests/jstack.py "$cs_j" stack 100 1 \
		"f_rec:$(mark rec)" "f_rec:$r" "f_rec:$r" "f_rec:$r" "f_rec:$r" "main:$(grep -n '^	f_rec(4);' $src | cut -d: -f1)"
	for s in pool:f_pool:192:6 grow:f_grow:400:1 cal:f_cal:60:1 few:f_few:48:2 leak:f_leak:333:1 \
		fence:f_stale:80:1 over:f_over:120:1 held:f_held:200:1; do
		set -- $(echo $s | tr : ' ')
		check "$cs_n: $2, $3 bytes in $4 blocks at line $(mark $1)" python3 tests/jstack.py "$cs_j" stack "$3" "$4" "$2:$(mark $1)"
	done
	check "$cs_n: 15 blocks, 1,533 bytes (the neighbour's header is overwritten)" python3 tests/jstack.py "$cs_j" total 15 1533
}

# lost_totals J: definitely, indirectly, possibly lost bytes and blocks
lost_totals() {
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["lost"]["totals"]; print(*[s[k + " lost"][x] for k in ("definitely","indirectly","possibly") for x in ("bytes","blocks")])' "$1"
}

# run_fw N CFLAGS...: build, run, dump, report
run_fw() {
	fw_n=$1
	shift
	arm_fw_run "$fw_n" "$BOARD" "" "$@"
	[ -s "$TMP/$N.bin" ] || return
	val() { sed -n "s/^$1 //p" "$TMP/$N.out" | head -n 1; }
	R="--raw $TMP/$N.bin --elf $exe --base $RAM"

	J=$TMP/$N.json
	"$M" --format json --report=stacks,lost,corruption $R >"$J" 2>"$J.err"
	check_eq "$N raw: exit 3 (the overflow)" 3 $?
	check_sites "$N raw" "$J"
	check_eq "$N raw lost: f_leak's 333 bytes and f_held's 200 definitely lost (no stack in a raw dump), the rest held by keep[] and pool[]" \
		"533 2 0 0 0 0" "$(lost_totals "$J")"
	check_eq "$N raw corruption: f_over's block overflowed into the next block's header, nothing else damaged" \
		"$(val over) $(val nb) 0" \
		"$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["corruption"]; print(*[(g["address"], g["lost_neighbour"]["address"]) for g in c["guards"]][0], len(c["damaged"]))' "$J" 2>&1)"

	"$M" --format folded $R >"$TMP/$N.folded" 2>/dev/null
	check_eq "$N raw folded: the eight stacks" "fw_reset;main;f_cal 60
fw_reset;main;f_few 48
fw_reset;main;f_grow 400
fw_reset;main;f_held 200
fw_reset;main;f_leak 333
fw_reset;main;f_over 120
fw_reset;main;f_pool 192
fw_reset;main;f_rec;f_rec;f_rec;f_rec;f_rec 100
fw_reset;main;f_stale 80" "$(cat "$TMP/$N.folded")"
	"$M" --format massif -o "$TMP/$N.massif" $R 2>/dev/null
	check "$N raw massif: valid" python3 tests/ms_check.py "$TMP/$N.massif" validate
	check_eq "$N raw massif: last snapshot 1,533 bytes" 1533 \
		"$(python3 tests/ms_check.py "$TMP/$N.massif" snaps | tail -n 1 | cut -d' ' -f3)"

	kp=$(printf 0x%x 0x$(arm-none-eabi-nm "$exe" | awk '$3 == "keep" { print $1 }'))
	# f_leak's first byte (nm prints it; its symbol's value has the Thumb bit)
	f0=$(printf 0x%x $(( 0x$(arm-none-eabi-nm "$exe" | awk '$3 == "f_leak" { print $1 }') & ~1 )))
	fl=$(printf 0x%x $((f0 + 4)))
	b1=$(val block)
	st=$(val stale)
	sp=$(val stack)
	"$M" --addr $((b1 + 4)) --addr "$kp" --addr "$st" --addr "$fl" --addr "$sp" --addr "$f0" $R >"$TMP/$N.addr" 2>&1
	check_grep "$N raw --addr: a byte of f_rec's block" "^address $(printf 0x%x $((b1 + 4))): 4 bytes into live block $b1 \(100 bytes" "$TMP/$N.addr"
	check_grep "$N raw --addr: keep[]" "^address $kp: keep\+0x0 \(variable of 64 bytes\)" "$TMP/$N.addr"
	check_grep "$N raw --addr: the stale pointer's freed block" "^address $st: 0 bytes into freed block $st \(64 bytes" "$TMP/$N.addr"
	check_grep "$N raw --addr: the freed block's stack" "^        f_stale \(hunt8_m.c:$(mark stale)\)" "$TMP/$N.addr"
	check_grep "$N raw --addr: code in flash, outside the dump, 4 bytes into f_leak" "^address $fl: in the ELF but not in the dump; f_leak\+0x4 \(function" "$TMP/$N.addr"
	check_grep "$N raw --addr: f_leak's first byte is f_leak's, not the function before it" "^address $f0: in the ELF but not in the dump; f_leak\+0x0 \(function" "$TMP/$N.addr"
	check_grep "$N raw --addr: a local of fw_halt, on the stack, is not called heap (no stack pointer in a raw dump)" \
		"^address $sp: memory in no annotated block \(heap, or a stack: a raw dump holds no stack pointer\)" "$TMP/$N.addr"

	"$M" --report=bins,leaks $R >"$TMP/$N.tables" 2>&1
	case " $* " in
	*" -DFW_NO_STATS "*)
		check_grep "$N raw tables: no statistics region, said so" "^statistics: none in the image" "$TMP/$N.tables" ;;
	*)
		check_grep "$N raw tables: whole run 20 allocations, 4 frees, 1,805 and 152 bytes" \
			"^statistics \(whole run\): 20 allocations, 4 frees, 1,805 bytes allocated, 152 bytes freed" "$TMP/$N.tables"
		check_grep "$N raw leak table: f_rec's path" "^ +100 .* f_rec <- f_rec <- f_rec <- f_rec <- f_rec$" "$TMP/$N.tables" ;;
	esac

	# the ELF core of the whole board (qemu's dump-guest-memory): no load map,
	# no auxv, every RAM region and its aliases (mps2-an385 shows its 4 MiB
	# SSRAMs again 4 MiB higher), the flash with the kit's code in it
	J=$TMP/$N.core.json
	"$M" --format json --report=stacks,lost,corruption "$exe" "$TMP/$N.core" >"$J" 2>"$J.err"
	check_eq "$N core: exit 3 (the overflow)" 3 $?
	check_sites "$N core" "$J"
	check_eq "$N core lost: f_leak's 333 bytes definitely lost, f_held's block held by main's frame" \
		"333 1 0 0 0 0" "$(lost_totals "$J")"
	check_eq "$N core: the blocks and freed blocks of the dump, no other damage" \
		"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["blocks"], d["freed_blocks"], d["damaged_headers"])' "$TMP/$N.json")" \
		"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["blocks"], d["freed_blocks"], d["damaged_headers"])' "$J")"
	"$M" --addr "$kp" --addr "$st" --addr "$sp" --addr "$f0" "$exe" "$TMP/$N.core" >"$TMP/$N.caddr" 2>&1
	check_grep "$N core --addr: f_leak's first byte, in the flash the core holds" "^address $f0: f_leak\+0x0 \(function" "$TMP/$N.caddr"
	check_grep "$N core --addr: fw_halt's local on the stack (the core has the registers)" \
		"^address $sp: on the stack of thread 1 \(tid 1\), [0-9]+ bytes above its stack pointer" "$TMP/$N.caddr"
	check_grep "$N core --addr: keep[]" "^address $kp: keep\+0x0 \(variable of 64 bytes\)" "$TMP/$N.caddr"
	check_grep "$N core --addr: the freed block's stack" "^        f_stale \(hunt8_m.c:$(mark stale)\)" "$TMP/$N.caddr"

	if command -v gdb-multiarch >/dev/null; then
		"$M" --format json --symbolizer gdb $R >"$TMP/$N.gdb.json" 2>/dev/null
		check_sites "$N raw, gdb's symbolizer" "$TMP/$N.gdb.json"
		"$M" --format json --symbolizer gdb "$exe" "$TMP/$N.core" >"$TMP/$N.cgdb.json" 2>/dev/null
		check_sites "$N core, gdb's symbolizer" "$TMP/$N.cgdb.json"
	fi
}

run_fw O0 -O0
run_fw O2 -O2
run_fw O2fp -O2 -fno-omit-frame-pointer
# no heapann_stats_buffer (a part with less than 64 KiB to spare): no mmap on
# bare metal, so no statistics region; the blocks are all found
run_fw nostats -O2 -DFW_NO_STATS
# a Cortex-M4 with its FPU, hard-float ABI (the kit built with the same flags),
# on mps2-an386
if qemu-system-arm -M help | grep -q '^mps2-an386 '; then
	CPU="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" BOARD=mps2-an386 KIT=$TMP/kit4
	make -s TARGET=arm-none-eabi XCFLAGS="$CPU" B="$KIT" cross >"$TMP/kit4.log" 2>&1
	check_eq "the kit builds for a Cortex-M4 with hard float" 0 $?
	run_fw M4 -O2
else
	echo "# this qemu-system-arm has no mps2-an386: the Cortex-M4 part not run"
fi
# a Cortex-M0 (ARMv6-M: no LDREX/STREX, so GCC calls libatomic for the kit's
# atomics), its code run by the Cortex-M3 of mps2-an385 (v6-M is a subset)
CPU="-mcpu=cortex-m0 -mthumb" BOARD=mps2-an385 KIT=$TMP/kit0
make -s TARGET=arm-none-eabi XCFLAGS="$CPU" B="$KIT" cross >"$TMP/kit0.log" 2>&1
check_eq "the kit builds for a Cortex-M0" 0 $?
run_fw M0 -O2

# more than 16 runs of read-only sections (cli_target kept only the first 16,
# unsorted): 24 sections a page apart, then one whose constant is a live START
# magic; a raw dump of them must not report it as a damaged header
if command -v cc >/dev/null; then
	{
		for n in $(seq 1 24); do
			echo "__attribute__((section(\".ro$n\"), aligned(4096), used)) static const unsigned long long r$n[1] = { $n };"
		done
		echo '__attribute__((section(".romagic"), aligned(4096), used)) static const unsigned long long magic[8] = { 0xA110CA7E5EEDB10CULL, 1, 2, 3, 4, 5, 6, 7 };'
		echo 'int main(void) { return 0; }'
	} >"$TMP/ro.c"
	cc -no-pie -O0 -o "$TMP/ro" "$TMP/ro.c" 2>"$TMP/ro.cc.err"
	rob=$(python3 -c 'import sys,subprocess
for l in subprocess.run(["readelf","-lW",sys.argv[1]],capture_output=True,text=True).stdout.splitlines():
	f=l.split()
	if f and f[0]=="LOAD" and f[-2]=="R" and int(f[2],16)>=0x402000: print(f[1], f[2], f[4]); break' "$TMP/ro")
	set -- $rob
	dd if="$TMP/ro" of="$TMP/ro.bin" bs=1 skip=$(($1)) count=$(($3)) status=none
	"$M" --raw "$TMP/ro.bin" --elf "$TMP/ro" --base "$2" >"$TMP/ro.out" 2>&1
	check_grep "25 read-only section runs: the 25th's magic literal skipped, not a damaged header" \
		"no valid block found: is it memory" "$TMP/ro.out"
fi
done_testing
