#!/bin/sh
# run-hunt4-rebuilt.sh - a program and its own shared library built without a
# build-id (tests/prog/hunt4_rebuilt.c), gcore'd, then rebuilt with their code
# moved. A build-id comparison cannot catch that: the core only names the
# files. Before the rebuild both symbolizers must name main_site and lib_site at
# their MARK lines (3 x 40 and 2 x 24 bytes) and say nothing about the files;
# after it, each must say on stderr, per file, that it was modified after the
# core was written (gdb itself warns of the program only, and then loses the
# libraries), rather than print other functions' names without a word (libdw
# named the blocks register_tm_clones and __do_global_dtors_aux, silently).
. tests/lib.sh
M=$B/mprof-core
src=tests/prog/hunt4_rebuilt.c
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb >/dev/null 2>&1
command -v gdb >/dev/null 2>&1 || skip "gdb missing (gcore)"
build() {   # build [-DHUNT4_SHIFT]
	cc -g -O1 -fPIC -shared -Wl,--build-id=none -DHUNT4_LIB "$@" -o "$TMP/libh4r.so" $src &&
	cc -g -O1 -Wl,--build-id=none "$@" -o "$TMP/h4r" $src -L"$TMP" -lh4r -Wl,-rpath,"$TMP"
}
check "build without a build-id" build
check_eq "no build-id note in the program" "" "$(readelf -n "$TMP/h4r" | grep 'Build ID')"
gcore_waiting "$TMP/core" "$TMP/h4r"
check "gcore" test -s "$TMP/core"
ml=$(grep -n 'MARK:main_site' $src | cut -d: -f1)
ll=$(grep -n 'MARK:lib_site' $src | cut -d: -f1)
for sy in dw gdb; do
	$M --symbolizer=$sy "$TMP/h4r" "$TMP/core" >"$TMP/$sy.out" 2>"$TMP/$sy.err"
	check_eq "$sy: exit 0" 0 $?
	check_grep "$sy: main_site 120 bytes" "^#[0-9]+: 120 bytes" "$TMP/$sy.out"
	check_grep "$sy: main_site at its line" "^    main_site \\(hunt4_rebuilt.c:$ml\\) \\[h4r\\]" "$TMP/$sy.out"
	check_grep "$sy: lib_site at its line" "^    lib_site \\(hunt4_rebuilt.c:$ll\\) \\[libh4r.so\\]" "$TMP/$sy.out"
	check_eq "$sy: no note of a modified file" "" "$(grep 'modified after' "$TMP/$sy.err")"
done
# rebuild: the code moves, the names and the files' sizes stay
sleep 1
check "rebuild with the code moved" build -DHUNT4_SHIFT
for sy in dw gdb; do
	$M --symbolizer=$sy "$TMP/h4r" "$TMP/core" >"$TMP/$sy.out" 2>"$TMP/$sy.err"
	check_eq "$sy rebuilt: exit 0" 0 $?
	check_grep "$sy rebuilt: the program is said to be modified after the core" \
		"^$TMP/h4r: .*modified after the core was written" "$TMP/$sy.err"
done
check_grep "dw rebuilt: the library is said to be modified after the core" \
	"^$TMP/libh4r.so: .*modified after the core was written" "$TMP/dw.err"
check_eq "dw rebuilt: one note per file" 2 "$(grep -c 'modified after the core' "$TMP/dw.err")"
done_testing
