#!/bin/sh
# run-hunt-addr.sh - --addr on addresses tests/prog/hunt_addr.c prints: inside a
# block (first byte, interior, last byte), its guard, past the guard, its
# header, the pad before an aligned block's header, the last byte of a 4 MiB
# block, a global (symbol+offset) and libc's code, which a gcore leaves out
# entirely (no PT_LOAD) though NT_FILE says it is mapped: "not dumped", in libc,
# never "not mapped". Text and JSON, exact offsets.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/hunt_addr
cc -g -O0 -o "$exe" tests/prog/hunt_addr.c
gcore_waiting "$TMP/core" "$exe"
check "gcore written" test -s "$TMP/core"
read -r blk big al glob code _ <"$TMP/out"
hex() { printf '0x%x' $(($1)); }
A() { "$B/mprof-core" -q --addr "$1" "$exe" "$TMP/core" 2>&1 | grep '^address'; }

check_eq "block start" "address $blk: 0 bytes into live block $blk (100 bytes, seq 1)" "$(A $blk)"
check_eq "block interior" "address $(hex "$blk + 50"): 50 bytes into live block $blk (100 bytes, seq 1)" "$(A $(hex "$blk + 50"))"
check_eq "block last byte" "address $(hex "$blk + 99"): 99 bytes into live block $blk (100 bytes, seq 1)" "$(A $(hex "$blk + 99"))"
A $(hex "$blk + 100") >"$TMP/g0"
check_grep "guard: first byte past the end" "^address $(hex "$blk + 100"): 0 bytes past the end of block $blk \(100 bytes, seq 1\), in its 8-byte guard" "$TMP/g0"
A $(hex "$blk + 108") >"$TMP/g8"
check_grep "past the guard: heap memory in no block" "^address $(hex "$blk + 108"): heap memory in no annotated block" "$TMP/g8"
A $(hex "$blk - 8") >"$TMP/h"
check_grep "header: its last word" "^address $(hex "$blk - 8"): [0-9]+ bytes into the header of block $blk \(100 bytes, seq 1\)" "$TMP/h"
A $(hex "$al - 2048") >"$TMP/pad"
check_grep "pad before an aligned block's header" "^address $(hex "$al - 2048"): in the alignment pad before the header of block $al \(64 bytes, seq 3\)" "$TMP/pad"
check_eq "4 MiB block, last byte" "address $(hex "$big + 4194303"): 4,194,303 bytes into live block $big (4,194,304 bytes, seq 2)" "$(A $(hex "$big + 4194303"))"
A $(hex "$glob + 4") >"$TMP/glob"
check_grep "a global: g_table+28" "^address $(hex "$glob + 4"): .*g_table\+(28|0x1c)" "$TMP/glob"
# libc's code: mapped (NT_FILE), not in the gcore
A "$code" >"$TMP/code"
check_grep "libc code: mapped but not dumped" "^address $code: mapped \(0x[0-9a-f]+-0x[0-9a-f]+\) but not dumped in the image" "$TMP/code"
check_grep "libc code: named puts in libc" "puts.*libc|libc.*puts" "$TMP/code"
"$B/mprof-core" -q --format json --addr "$code" "$exe" "$TMP/core" >"$TMP/code.json" 2>/dev/null
check_eq "libc code, JSON: kind not-dumped" not-dumped \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); a=d["addresses"][0] if "addresses" in d else d["addr"][0]; print(a.get("kind") or a.get("what"))' "$TMP/code.json" 2>&1)"
check_eq "address 0x10: not mapped" "address 0x10: not mapped in the image" "$(A 0x10)"
done_testing
