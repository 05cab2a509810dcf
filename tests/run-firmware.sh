#!/bin/sh
# run-firmware.sh - issue 8: raw RAM dumps of a firmware-like static program on
# 32-bit ARM (little-endian, glibc's malloc under the kit) and 32-bit MIPS
# (big-endian, a .bss pool under the kit through the ha_real_* hook), read with
# mprof-core --raw --elf --base. Always checks the committed fixtures/fw/ (only
# build/mprof-core needed); where the cross compilers, qemu-user and
# gdb-multiarch are installed, also regenerates them (fixtures/fw/regen.sh) into
# a scratch directory and checks the fresh ones the same way, and reads the
# qemu-user cores of the crashing ARM and MIPS programs. gdb-multiarch, when
# installed, symbolizes the fixtures and the cores too (--symbolizer=gdb).
# Every expected number is one the program left in fw_info for the debugger, or a
# MARK line of its source (NAME.info, written by regen.sh).
. tests/lib.sh
M=$B/mprof-core
case $M in /*) ;; *) M=$TOP/$M ;; esac
[ -x "$M" ] || skip "no $M (build first)"
command -v python3 >/dev/null || skip "python3 not installed"
command -v gzip >/dev/null || skip "gzip not installed"

# jcheck NAME JSON INFO EXPR: EXPR (Python) holds over the report d and the
# fixture's values I (I["culprit"], I["line.g"]: integers); the names EXPR sees
# are listed in tests/jcheck.py.
jcheck() {
	check "$1" python3 tests/jcheck.py "$2" "$3" "$4"
}

# val INFO KEY: KEY's value in a fixture's NAME.info
val() { sed -n "s/^$2=//p" "$1"; }

# massif LABEL JSON INFO: the stacks of examples/massif_example.c's pattern, exactly
massif() {
	Lg=$(val "$3" line.g) Lf=$(val "$3" line.f) Lfg=$(val "$3" line.f-calls-g)
	Lm=$(val "$3" line.main) Lmf=$(val "$3" line.main-calls-f) Lmg=$(val "$3" line.main-calls-g)
	check "$1: the program's 14 framed blocks, 20024 bytes (massif's 20000 + the culprit)" \
		python3 tests/jstack.py "$2" framed 14 20024
	check "$1: main's 10 x 1000 B" python3 tests/jstack.py "$2" stack 10000 10 "main:$Lm"
	check "$1: g from f" python3 tests/jstack.py "$2" stack 4000 1 "g:$Lg" "f:$Lfg" "main:$Lmf"
	check "$1: g from main" python3 tests/jstack.py "$2" stack 4000 1 "g:$Lg" "main:$Lmg"
	check "$1: f" python3 tests/jstack.py "$2" stack 2000 1 "f:$Lf" "main:$Lmf"
}

# fixture LABEL DIR NAME ENDIAN MACHINE: every report on DIR/NAME.{bin,elf.gz,info}
fixture() {
	label=$1 dir=$2 fx=$3 own=$4 mach=$5
	info=$dir/$fx.info bin=$dir/$fx.bin elf=$TMP/$label.elf
	for f in "$info" "$bin" "$dir/$fx.elf.gz"; do
		[ -s "$f" ] || { check "$label: $f present" false; return; }
	done
	gzip -dc "$dir/$fx.elf.gz" >"$elf" || { check "$label: ELF unpacks" false; return; }
	base=$(val "$info" base) culprit=$(val "$info" culprit) fblock=$(val "$info" fblock)
	check_eq "$label: neighbours adjacent (precondition)" 1 "$(val "$info" adjacent)"

	"$M" --format=json --raw "$bin" --elf "$elf" --base "$base" >"$TMP/$label.json" 2>"$TMP/$label.err"
	check_eq "$label: exit 3 (corruption found)" 3 $?
	J=$TMP/$label.json
	jcheck "$label: 4-byte words, $own-endian" "$J" "$info" \
		"d['kind'] == 'raw' and d['word_size'] == 4 and d['byte_order'] == '$own'"
	massif "$label" "$J" "$info"

	# the seeded overflow: the culprit by its allocation site, the neighbour by its END
	jcheck "$label: one broken guard, one damaged header" "$J" "$info" \
		'len(C["guards"]) == 1 and len(C["damaged"]) == 1'
	jcheck "$label: the culprit is named by its allocation site and line" "$J" "$info" \
		'hx(C["guards"][0]["address"]) == I["culprit"] and C["guards"][0]["size"] == 24 and fl(C["guards"][0]) == [("alloc_culprit", I["line.culprit"])] and C["guards"][0]["guard_bytes_differ"] == 8'
	jcheck "$label: the overflow reaches exactly as far as the program wrote" "$J" "$info" \
		'C["guards"][0]["overrun_if_contiguous"] == I["overrun"] and hx(C["guards"][0]["next_damaged"]) == hx(C["damaged"][0]["header"])'
	jcheck "$label: the neighbour's START is overwritten, its block still named" "$J" "$info" \
		'hx(C["damaged"][0]["address"]) == I["next"] and C["damaged"][0]["kind"] == "start" and C["damaged"][0]["size"] == 512 and fl(C["damaged"][0]) == [("alloc_next", I["line.next"])]'
	jcheck "$label: its suspect is the culprit, likely an overflow" "$J" "$info" \
		'hx(C["damaged"][0]["suspect"]["address"]) == I["culprit"] and C["damaged"][0]["likely"] == "overflow"'

	# text: summary, frames, overflow line
	"$M" --raw "$bin" --elf "$elf" --base "$base" >"$TMP/$label.txt" 2>&1
	check_grep "$label: text summary" "^$bin: raw dump, 32-bit $own-endian $mach\$" "$TMP/$label.txt"
	check_grep "$label: text frame" "^    g \(fw_app.c:$(val "$info" line.g)\) \[$label.elf\]\$" "$TMP/$label.txt"
	check_grep "$label: text overflow line" "^overflow: block $culprit \(24 bytes, seq [0-9]+\) wrote past its end: all 8 guard bytes differ" "$TMP/$label.txt"

	# --addr: 16 bytes into f's block, 3 bytes into the culprit's guard
	"$M" --format=json --addr $((fblock + 16)) --addr $((culprit + 27)) --raw "$bin" --elf "$elf" \
		--base "$base" >"$TMP/$label.addr.json" 2>/dev/null
	jcheck "$label: --addr in f's block" "$TMP/$label.addr.json" "$info" \
		'addr(I["fblock"] + 16)["what"] == "block" and addr(I["fblock"] + 16)["offset"] == 16 and hx(addr(I["fblock"] + 16)["block"]["address"]) == I["fblock"] and fl(addr(I["fblock"] + 16)["block"], 2) == [("f", I["line.f"]), ("main", I["line.main-calls-f"])]'
	jcheck "$label: --addr in the culprit's guard" "$TMP/$label.addr.json" "$info" \
		'addr(I["culprit"] + 27)["what"] == "guard" and addr(I["culprit"] + 27)["past_end"] == 3 and fl(addr(I["culprit"] + 27)["block"]) == [("alloc_culprit", I["line.culprit"])]'

	# tree, leak table, lost (roots: the dumped .data/.bss; main's array was on its stack)
	"$M" --format=json --report=tree,leaks,lost --raw "$bin" --elf "$elf" --base "$base" \
		>"$TMP/$label.tab.json" 2>/dev/null
	T=$TMP/$label.tab.json
	jcheck "$label: tree: g's 8000 bytes, 4000 of them through f" "$T" "$info" \
		'[(c["function"], c["line"], c["bytes"], [(k["function"], k["line"], k["bytes"]) for k in c["children"]]) for c in d["tree"]["children"] if c["function"] == "g"] == [("g", I["line.g"], 8000, [("f", I["line.f-calls-g"], 4000), ("main", I["line.main-calls-g"], 4000)])]'
	jcheck "$label: leak table paths" "$T" "$info" \
		'[(r["path"], r["kept_bytes"], r["kept_blocks"]) for r in d["leaks"] if r["path"]][:4] == [(["main"], 10000, 10), (["g", "f", "main"], 4000, 1), (["g", "main"], 4000, 1), (["f", "main"], 2000, 1)]'
	jcheck "$label: lost: main's 10 blocks (only its stack held them) definitely lost; f's and g's (in keep[]) reachable" "$T" "$info" \
		'lost("definitely lost", "main") == 10000 and lost("still reachable", "g") == 8000 and lost("still reachable", "f") == 2000'

	# what is likely wrong: byte order, base, ELF
	[ "$own" = big ] && other=little || other=big
	"$M" --endian "$other" --raw "$bin" --elf "$elf" --base "$base" >/dev/null 2>"$TMP/$label.e1"
	check_eq "$label: read as $other-endian: exit 1" 1 $?
	check_grep "$label: read as $other-endian: says try --endian $own" \
		"^mprof-core: $bin: no valid block found, but 18 headers in the other byte order: try --endian $own\$" "$TMP/$label.e1"
	"$M" --ptr-size 8 --endian "$other" --raw "$bin" --elf "$elf" --base "$base" >/dev/null 2>"$TMP/$label.e4"
	check_eq "$label: read as 64-bit $other-endian: exit 1" 1 $?
	check_grep "$label: read as 64-bit $other-endian: says try --ptr-size 4 --endian $own" \
		"^mprof-core: $bin: no valid block found, but 18 headers of 4-byte words: try --ptr-size 4 --endian $own\$" "$TMP/$label.e4"
	"$M" --raw "$bin" --elf "$elf" --base $((base + 0x100)) >/dev/null 2>"$TMP/$label.e2"
	check_eq "$label: wrong --base: exit 1" 1 $?
	check_grep "$label: wrong --base: says so" "no valid block found: [0-9]+ headers fail their check word.*is --base $(printf '0x%x' $((base + 0x100))) the address of the dump's first byte\?" "$TMP/$label.e2"
}

fixture arm fixtures/fw arm little ARM
fixture mips fixtures/fw mips big MIPS

# --elf of another program: the ARM dump with the MIPS ELF (byte order forced)
"$M" --endian little --raw fixtures/fw/arm.bin --elf "$TMP/mips.elf" --base "$(sed -n 's/^base=//p' fixtures/fw/arm.info)" \
	>/dev/null 2>"$TMP/e3"
check_eq "another program's ELF: exit 1" 1 $?
check_grep "another program's ELF: says --elf is likely wrong" \
	"none of the [0-9]+ return addresses falls in the code of $TMP/mips.elf: is --elf the program that made this dump\?" "$TMP/e3"

# fixture sizes stay small
for f in fixtures/fw/*.bin fixtures/fw/*.elf.gz; do
	check "$f is under 512 KiB" test "$(wc -c <"$f")" -lt 524288
done

# ---- gdb-multiarch as the symbolizer (chosen by the gdb backend for a foreign ELF) ----
if command -v gdb-multiarch >/dev/null 2>&1; then
	for n in arm mips; do
		"$M" --symbolizer=gdb --format=json --raw fixtures/fw/$n.bin --elf "$TMP/$n.elf" \
			--base "$(sed -n 's/^base=//p' fixtures/fw/$n.info)" >"$TMP/$n.gdb.json" 2>"$TMP/$n.gdb.err"
		check_eq "$n --symbolizer=gdb: exit 3" 3 $?
		massif "$n --symbolizer=gdb" "$TMP/$n.gdb.json" fixtures/fw/$n.info
	done
else
	echo "# no gdb-multiarch: --symbolizer=gdb on the fixtures not run"
fi

# ---- regenerate where the tools are; a qemu-arm core of the crashing program ----
have=1
for t in arm-linux-gnueabihf-gcc mips-linux-gnu-gcc qemu-arm qemu-mips gdb-multiarch pkg-config; do
	command -v "$t" >/dev/null 2>&1 || { echo "# no $t: fresh fixtures not made"; have=0; }
done
if [ $have = 1 ]; then
	sh fixtures/fw/regen.sh "$TMP/fresh" >"$TMP/regen.log" 2>&1
	check_eq "regen.sh: fresh fixtures made" 0 $?
	fixture fresh-arm "$TMP/fresh" arm little ARM
	fixture fresh-mips "$TMP/fresh" mips big MIPS

	# the program crashes (a null write after the stop): qemu-user writes its core
	for v in arm:ARM:little mips:MIPS:big; do
		n=${v%%:*} rest=${v#*:}
		L=${rest%%:*} order=${rest#*:}
		mkdir -p "$TMP/q"
		cp "$TMP/fresh-$n.elf" "$TMP/q/fw_$n" && chmod +x "$TMP/q/fw_$n"
		(cd "$TMP/q" && ulimit -c unlimited && qemu-$n -E GLIBC_TUNABLES=glibc.malloc.top_pad=0 \
			./fw_$n crash; true) >/dev/null 2>&1
		core=$(ls "$TMP"/q/qemu_fw_${n}_*.core 2>/dev/null | head -n 1)
		check "$L core: qemu-$n wrote the target's core" test -n "$core"
		if [ -n "$core" ]; then
			"$M" --format=json --report=stacks,lost "$TMP/q/fw_$n" "$core" >"$TMP/core.json" 2>"$TMP/core.err"
			check_eq "$L core: exit 3" 3 $?
			jcheck "$L core: a 32-bit $order-endian core with one thread" "$TMP/core.json" "$TMP/fresh/$n.info" \
				"d['kind'] == 'core' and d['word_size'] == 4 and d['byte_order'] == '$order' and d['threads'] == 1"
			massif "$L core" "$TMP/core.json" "$TMP/fresh/$n.info"
			jcheck "$L core: with the stack as a root, main's blocks are reachable" "$TMP/core.json" "$TMP/fresh/$n.info" \
				'lost("still reachable", "main") == 10000 and lost("definitely lost", "main") == 0'
			if command -v gdb-multiarch >/dev/null 2>&1; then
				"$M" --symbolizer=gdb --format=json "$TMP/q/fw_$n" "$core" >"$TMP/core.gdb.json" 2>"$TMP/core.gdb.err"
				check_eq "$L core, --symbolizer=gdb: exit 3" 3 $?
				massif "$L core, --symbolizer=gdb" "$TMP/core.gdb.json" "$TMP/fresh/$n.info"
			fi
		fi
		rm -rf "$TMP/q"   # qemu also leaves its own host core there
	done
fi
done_testing
