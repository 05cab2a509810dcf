#!/bin/sh
# run-raw.sh - a static program linked through heapann-static.pc, its heap written
# with gdb's "dump binary memory" (the way a JTAG probe dumps RAM), read back with
# mprof-core --raw --elf --base: exact stacks, bytes and lines.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/heapann-static.pc" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || skip "no static libc (libc6-dev)"

src=examples/massif_example.c
line() { grep -n "MARK:$1 " "$src" | cut -d: -f1; }
Lg=$(line g); Lf=$(line f); Lfg=$(line f-calls-g); Lm=$(line main)
Lmf=$(line main-calls-f); Lmg=$(line main-calls-g)

exe=$TMP/massif-static
cc -g -O1 -static -o "$exe" "$src" $(PKG_CONFIG_PATH=$B pkg-config --libs heapann-static)
check "static link through heapann-static.pc" test -x "$exe"

check "heap dumped" heap_dump "$exe" "$TMP/heap.bin"

"$B/mprof-core" --format=json --raw "$TMP/heap.bin" --elf "$exe" --base "$start" >"$TMP/r.json" 2>"$TMP/r.err"
check_eq "raw: exit 0" 0 $?
check "raw: the program's 13 blocks, 20000 bytes" python3 tests/jstack.py "$TMP/r.json" framed 13 20000
check "raw: main's 10 x 1000 B" python3 tests/jstack.py "$TMP/r.json" stack 10000 10 "main:$Lm"
check "raw: g from f" python3 tests/jstack.py "$TMP/r.json" stack 4000 1 "g:$Lg" "f:$Lfg" "main:$Lmf"
check "raw: g from main" python3 tests/jstack.py "$TMP/r.json" stack 4000 1 "g:$Lg" "main:$Lmg"
check "raw: f" python3 tests/jstack.py "$TMP/r.json" stack 2000 1 "f:$Lf" "main:$Lmf"
"$B/mprof-core" --raw "$TMP/heap.bin" --elf "$exe" --base "$start" >"$TMP/r.txt" 2>&1
check_grep "raw text: 64-bit little-endian raw dump" "raw dump, 64-bit little-endian x86-64" "$TMP/r.txt"

# The wrong byte order or a wrong base finds nothing valid: say what is likely wrong.
"$B/mprof-core" --endian big --raw "$TMP/heap.bin" --elf "$exe" --base "$start" >"$TMP/w.txt" 2>"$TMP/w.err"
check "wrong byte order: non-zero exit" test $? -ne 0
check_grep "wrong byte order: says so" "no valid block.*(byte order|--endian)" "$TMP/w.err"
"$B/mprof-core" --raw "$TMP/heap.bin" --elf "$exe" --base 0x1000 >"$TMP/b.txt" 2>"$TMP/b.err"
check "wrong base: non-zero exit" test $? -ne 0
check_grep "wrong base: says so" "no valid block.*--base" "$TMP/b.err"
done_testing
