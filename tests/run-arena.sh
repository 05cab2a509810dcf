#!/bin/sh
# run-arena.sh - glibc's main_arena is no root of the lost report, wherever it
# lives, and a leaked malloc(0) has no pointer from glibc's free lists, whatever
# HEAPANN_GUARD is. tcache is off (GLIBC_TUNABLES) so that freed chunks go to
# main_arena's bins. Cores by gcore while the program waits.
#  - tests/prog/arena_remainder.c: main_arena's last_remainder (main_arena+0x68)
#    points inside a 2,980-byte block the program dropped: definitely lost (as
#    memcheck says), with main_arena left out (the text roots line and JSON's
#    "excluded" member, "what": "main_arena"). Built dynamic (libc.so.6, and
#    libc.so.6 a link to libc-2.31.so, the file name before glibc 2.34) and
#    static with the static kit (main_arena in the program's own data).
#  - tests/prog/arena_zero.c: a leaked malloc(0) then a freed 1,000-byte block,
#    at HEAPANN_GUARD 0, 4, 7, 8, 16: --refs finds no word pointing at the
#    0-byte block (glibc's next chunk starts after it) and it is definitely lost.
# The dynamic cases skip when libc's symbols (libc6-dbg) are missing, the
# static one when no static libc or main_arena symbol is there.
. tests/lib.sh
M=$B/mprof-core
[ -x "$M" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
GLIBC_TUNABLES=glibc.malloc.tcache_count=0; export GLIBC_TUNABLES

cc -g -O0 -o "$TMP/rem" tests/prog/arena_remainder.c
cc -g -O0 -o "$TMP/zero" tests/prog/arena_zero.c

# has_libc_syms: libc6-dbg's file for the loaded libc, by its build id
libc=$(ldd "$TMP/rem" | awk '$1 ~ /^libc\.so/ { print $3 }')
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
dbg=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug

# remainder TAG EXE: the 2,980-byte block definitely lost, main_arena left out
remainder() {
	check "$1: core written" test -s "$TMP/$1.core"
	"$M" --report=lost "$2" "$TMP/$1.core" >"$TMP/$1.txt" 2>"$TMP/$1.err"
	check_eq "$1: exit 0" 0 $?
	check_grep "$1: the dropped block definitely lost" '^   definitely lost: 2,980 bytes in 1 blocks$' "$TMP/$1.txt"
	check_grep "$1: nothing possibly lost" '^     possibly lost: 0 bytes in 0 blocks$' "$TMP/$1.txt"
	check_grep "$1: roots line: main_arena left out" \
		"^roots: .*; left out: glibc's main_arena at 0x[0-9a-f]+ \([0-9,]+ bytes\)" "$TMP/$1.txt"
	"$M" --format=json --report=lost "$2" "$TMP/$1.core" >"$TMP/$1.json" 2>"$TMP/$1.err"
	check "$1: JSON excluded names main_arena, its extent the text's" python3 tests/jcheck.py \
		"$TMP/$1.json" /dev/null \
		"[(x['what'], hx(x['end']) - hx(x['start'])) for x in d['lost']['excluded'] if x['what'] == 'main_arena'] == [('main_arena', $(sed -n "s/.*glibc's main_arena at 0x[0-9a-f]* (\([0-9,]*\) bytes).*/\1/p" "$TMP/$1.txt" | tr -d ,))]"
}

if [ -n "$bid" ] && [ -f "$dbg" ]; then
	gcore_waiting "$TMP/dyn.core" "$TMP/rem"
	remainder dyn "$TMP/rem"
	# before glibc 2.34 libc's file is libc-2.31.so, libc.so.6 a link to it
	mkdir "$TMP/lib"
	cp "$libc" "$TMP/lib/libc-2.31.so"
	ln -s libc-2.31.so "$TMP/lib/libc.so.6"
	LD_LIBRARY_PATH=$TMP/lib gcore_waiting "$TMP/old.core" "$TMP/rem"
	remainder old "$TMP/rem"
	check "old: libc's data root is libc-2.31.so's" python3 tests/jcheck.py "$TMP/old.json" /dev/null \
		"any((r.get('module') or '').endswith('/libc-2.31.so') for r in d['lost']['roots'])"
else
	echo "ok # skip dynamic main_arena cases: no symbols for $libc (install libc6-dbg)"
fi

if [ -f "$B/heapann-static.pc" ] && command -v pkg-config >/dev/null &&
	cc -g -O0 -static -o "$TMP/srem" tests/prog/arena_remainder.c \
		$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static) 2>/dev/null &&
	nm "$TMP/srem" | grep -q ' main_arena$'; then
	gcore_waiting "$TMP/static.core" "$TMP/srem"
	remainder static "$TMP/srem"
else
	echo "ok # skip static main_arena case: no static libc, pkg-config or main_arena symbol"
fi

for g in 0 4 7 8 16; do
	HEAPANN_GUARD=$g gcore_waiting "$TMP/z$g.core" "$TMP/zero"
	a=$(head -n 1 "$TMP/out")
	"$M" --report=lost --refs "$a" "$TMP/zero" "$TMP/z$g.core" >"$TMP/z$g.txt" 2>"$TMP/z$g.err"
	check_eq "guard $g: exit 0" 0 $?
	check_grep "guard $g: no word points at the leaked malloc(0)" \
		"^refs $a: block $a \(0 bytes, seq 1, definitely lost\): 0 references$" "$TMP/z$g.txt"
	check_grep "guard $g: it is definitely lost" '^   definitely lost: 0 bytes in 1 blocks$' "$TMP/z$g.txt"
done
done_testing
