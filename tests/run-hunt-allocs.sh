#!/bin/sh
# run-hunt-allocs.sh - tests/prog/hunt_allocs.c (every entry point of the malloc
# family, libc's strdup/strndup, blocks above the mmap threshold) built with gcc
# -O0 and with clang -O2 -fomit-frame-pointer, its debug info also split off
# (.gnu_debuglink found under --debug-dir, and a build-id tree). Each gcore must
# show every block's exact size at its own function and line (MARK:NAME), with
# libc's strdup frames stripped like malloc's, and the totals the program knows.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

src=tests/prog/hunt_allocs.c
mark() { grep -n "MARK:$1 " $src | cut -d: -f1; }
# NAME BYTES: the MARK lines name the function a_NAME and its size
SITES="calloc:a_calloc:300 grow:a_grow:5000 shrink:a_shrink:40 rnull:a_rnull:77 pm:a_pm:1000
aa:a_aa:640 ma:a_ma:123 va:a_va:333 ra:a_ra:77 sd:a_sd:12 snd:a_snd:6 zero:a_zero:0
big:a_big:5242880 bigc:a_bigc:3145728 bigr:a_bigr:2097152"
TOTAL=10493368   # the sum of the sizes above
NBLK=15

# check_core NAME EXE CORE [OPTIONS]: every site exact in the JSON report
check_core() {
	cn=$1; exe=$2; core=$3; shift 3
	J=$TMP/$cn.json
	"$B/mprof-core" "$@" --format json "$exe" "$core" >"$J" 2>"$J.err"
	check_eq "$cn: exit 0" 0 $?
	check "$cn: $NBLK blocks, $TOTAL bytes" python3 tests/jstack.py "$J" total $NBLK $TOTAL
	check "$cn: $NBLK stacks, one per site" python3 tests/jstack.py "$J" nstacks $NBLK
	for s in $SITES; do
		m=${s%%:*}; rest=${s#*:}; fn=${rest%%:*}; bytes=${rest#*:}
		check "$cn: $fn, $bytes bytes at line $(mark $m)" \
			python3 tests/jstack.py "$J" stack "$bytes" 1 "$fn:$(mark $m)"
	done
}

# ---- gcc -O0 ----
exe=$TMP/ha_gcc
cc -g -O0 -o "$exe" $src
gcore_waiting "$TMP/gcc.core" "$exe"
check "gcc: gcore written" test -s "$TMP/gcc.core"
check_core gcc "$exe" "$TMP/gcc.core"

# ---- clang -O2 -fomit-frame-pointer: DWARF 5 and no .debug_aranges ----
command -v clang-14 >/dev/null 2>&1 || sh scripts/install-deps.sh clang-14 >/dev/null 2>&1
if command -v clang-14 >/dev/null 2>&1; then
	exe=$TMP/ha_clang
	clang-14 -g -O2 -fomit-frame-pointer -o "$exe" $src
	check "clang: no .debug_aranges (what this case is about)" \
		sh -c "! readelf -S '$exe' | grep -q debug_aranges"
	gcore_waiting "$TMP/clang.core" "$exe"
	check "clang: gcore written" test -s "$TMP/clang.core"
	check_core clang "$exe" "$TMP/clang.core"
	# again, with the symbol cache the first run may have written: a module
	# without .debug_aranges must not be answered from a cache that has no CUs
	check_core clang-warm "$exe" "$TMP/clang.core"

	# split debug info: the stripped program names its .debug through
	# .gnu_debuglink, found under --debug-dir
	mkdir -p "$TMP/dbg" "$TMP/bin" "$TMP/bid"
	objcopy --only-keep-debug "$exe" "$TMP/dbg/ha_clang.debug"
	cp "$exe" "$TMP/bin/ha_clang"
	objcopy --strip-debug --add-gnu-debuglink="$TMP/dbg/ha_clang.debug" "$TMP/bin/ha_clang"
	check_core clang-debuglink "$TMP/bin/ha_clang" "$TMP/clang.core" --debug-dir "$TMP/dbg"
	# and by build-id: DIR/.build-id/xx/rest.debug
	id=$(readelf -n "$exe" | sed -n 's/.*Build ID: //p')
	mkdir -p "$TMP/bid/.build-id/$(echo "$id" | cut -c1-2)"
	cp "$TMP/dbg/ha_clang.debug" "$TMP/bid/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
	cp "$exe" "$TMP/bin/ha_clang2"
	strip -g "$TMP/bin/ha_clang2"
	check_core clang-buildid "$TMP/bin/ha_clang2" "$TMP/clang.core" --debug-dir "$TMP/bid"
else
	echo "# clang-14 not installed: the clang cases are left out"
fi
done_testing
