#!/bin/sh
# run-symdw.sh - the libdw symbolizer (sym/dw.c) through tests/tools/symdw on
# real cores: PIE and non-PIE at -O0/-O2, a shared library (load map from the
# core), C++ inline chains with demangled names, a static binary in raw mode,
# a rebuilt library (build-id mismatch), --sysroot, separate debug info found by
# build-id under --debug-dir, symtab-only binaries, blocks written by
# libheapann, and bad input. Expected lines come from marker comments (grep -n).
. tests/lib.sh
SYMDW=$B/tests/tools/symdw
case $SYMDW in /*) ;; *) SYMDW=$TOP/$SYMDW ;; esac
[ -x "$SYMDW" ] || skip "no $SYMDW (make $SYMDW)"
command -v gdb >/dev/null 2>&1 || skip "gdb not installed"
command -v g++ >/dev/null 2>&1 || skip "g++ not installed"
P=$TOP/tests/prog

line_of() { grep -n -- "$2" "$1" | head -n 1 | cut -d: -f1; }

# run_core OUT CORE CMD...: start CMD writing OUT, wait for "ready", gcore it, kill it.
# With RC_FILTER set, the process's coredump_filter is set to it first (gdb honours it).
run_core() {
	rc_out=$1 rc_core=$2; shift 2
	"$@" >"$rc_out" 2>&1 &
	rc_pid=$!
	rc_i=0
	while ! grep -q ready "$rc_out" 2>/dev/null; do
		sleep 0.1
		rc_i=$((rc_i + 1))
		[ $rc_i -lt 100 ] || break
	done
	[ -z "${RC_FILTER:-}" ] || echo "$RC_FILTER" >/proc/$rc_pid/coredump_filter
	make_gcore $rc_pid "$rc_core"
	rc_ok=$?
	kill $rc_pid 2>/dev/null
	wait $rc_pid 2>/dev/null
	return $rc_ok
}

# has WORD STRING: STRING contains WORD.
has() { case "$2" in *"$1"*) return 0 ;; esac; return 1; }

addr_of() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }

# fld RESULT ADDR N: field N (tab-separated) of the line for ADDR.
fld() { awk -F'\t' -v a="$2" -v n="$3" '$1 == a { print $n }' "$1"; }

LA=$(line_of "$P/sym_basic.c" '/\* MARK_A \*/')
LB=$(line_of "$P/sym_basic.c" '/\* MARK_B \*/')

# ---- plain C: PIE and non-PIE, -O0 and -O2 ---------------------------------
for v in pie0:-O0 pie2:-O2 nopie0:"-O0 -no-pie -fno-pie" nopie2:"-O2 -no-pie -fno-pie"; do
	name=${v%%:*} flags=${v#*:}
	# shellcheck disable=SC2086
	gcc -g $flags "$P/sym_basic.c" -o "$TMP/$name" || { check "$name builds" false; continue; }
	if ! run_core "$TMP/$name.out" "$TMP/$name.core" "$TMP/$name"; then
		check "$name gcore" false
		continue
	fi
	a=$(addr_of first_caller "$TMP/$name.out")
	b=$(addr_of second_caller "$TMP/$name.out")
	"$SYMDW" "$TMP/$name" "$TMP/$name.core" "$a" "$b" >"$TMP/$name.res" 2>"$TMP/$name.err"
	check_eq "$name: first_caller named" first_caller "$(fld "$TMP/$name.res" "$a" 2)"
	check_eq "$name: first_caller line" "$P/sym_basic.c:$LA" "$(fld "$TMP/$name.res" "$a" 3)"
	check_eq "$name: static second_caller named" second_caller "$(fld "$TMP/$name.res" "$b" 2)"
	check_eq "$name: second_caller line" "$P/sym_basic.c:$LB" "$(fld "$TMP/$name.res" "$b" 3)"
	check_eq "$name: no flags" "-" "$(fld "$TMP/$name.res" "$a" 5)"
	check_eq "$name: module is the program" "$TMP/$name" "$(fld "$TMP/$name.res" "$a" 4 | sed 's/+0x[0-9a-f]*$//')"
done
# module+offset: for the PIE the offset is the file address, as nm shows it
a=$(addr_of first_caller "$TMP/pie2.out")
off=$(fld "$TMP/pie2.res" "$a" 4 | sed 's/.*+//')
fc=$(nm "$TMP/pie2" | awk '$3 == "first_caller" { print $1 }')
check "pie2: module offset lies in first_caller (nm)" \
	test $((off)) -gt $((0x$fc)) -a $((off)) -lt $((0x$fc + 64))
# past the last function symbol's section: _fini has no size, and named
# every address after it (a return address of a library dlclose'd before the
# core, another one loaded there since: run-real11); now only past .fini's
# end in the same page, no function, module+offset
fe=$(readelf -SW "$TMP/pie2" | awk '$2 == ".fini" { print $4, $6 }')
past=$(printf '0x%x' $((a - off + 0x${fe% *} + 0x${fe#* } + 4)))
"$SYMDW" "$TMP/pie2" "$TMP/pie2.core" "$past" >"$TMP/past.res" 2>/dev/null
check_eq "pie2: 4 bytes past .fini's end: no function (was _fini)" "?" "$(fld "$TMP/past.res" "$past" 2)"
check_eq "pie2: 4 bytes past .fini's end: module+offset" "$TMP/pie2+$(printf '0x%x' $((0x${fe% *} + 0x${fe#* } + 4)))" \
	"$(fld "$TMP/past.res" "$past" 4)"
# ...but a sizeless function symbol in a section not marked executable (a
# firmware's code, an old -z noseparate-code link) still covers what follows
# it, as before that bound: rofn, in an allocated, non-executable section
printf '\t.section .rodata.rofn,"a"\n\t.globl rofn\n\t.type rofn,@function\nrofn:\n\t.quad 0, 0\n' >"$TMP/rofn.s"
if gcc -g -O2 "$P/sym_basic.c" "$TMP/rofn.s" -o "$TMP/rofn" 2>/dev/null &&
	run_core "$TMP/rofn.out" "$TMP/rofn.core" "$TMP/rofn"; then
	ra=$(addr_of first_caller "$TMP/rofn.out")
	"$SYMDW" "$TMP/rofn" "$TMP/rofn.core" "$ra" >"$TMP/rofn1.res" 2>/dev/null
	roff=$(fld "$TMP/rofn1.res" "$ra" 4 | sed 's/.*+//')
	rq=$(printf '0x%x' $((ra - roff + 0x$(nm "$TMP/rofn" | awk '$3 == "rofn" { print $1 }') + 2)))
	"$SYMDW" "$TMP/rofn" "$TMP/rofn.core" "$rq" >"$TMP/rofn.res" 2>/dev/null
	check_eq "sizeless rofn in a non-executable section: rofn+2 named rofn" rofn "$(fld "$TMP/rofn.res" "$rq" 2)"
else
	check "rofn program and its gcore" false
fi
# an address in no module
"$SYMDW" "$TMP/pie2" "$TMP/pie2.core" 0x10 >"$TMP/nomod.res" 2>/dev/null
check_eq "address in no module flagged" nomodule "$(fld "$TMP/nomod.res" 0x10 5)"

# ---- shared library: load map from the core; then rebuilt (build-id) --------
mkdir -p "$TMP/lib"
LL=$(line_of "$P/sym_libpart.c" '/\* MARK_LIB \*/')
gcc -g -O2 -fPIC -shared "$P/sym_libpart.c" -o "$TMP/lib/libsym_libpart.so" &&
	gcc -g -O2 "$P/sym_lib.c" -o "$TMP/sym_lib" -L"$TMP/lib" -lsym_libpart -Wl,-rpath,"$TMP/lib"
if run_core "$TMP/lib.out" "$TMP/lib.core" "$TMP/sym_lib"; then
	a=$(addr_of lib_entry "$TMP/lib.out")
	p=$(addr_of puts "$TMP/lib.out")
	"$SYMDW" "$TMP/sym_lib" "$TMP/lib.core" "$a" "$p" >"$TMP/lib.res" 2>&1
	check_eq "shared lib: function" lib_entry "$(fld "$TMP/lib.res" "$a" 2)"
	check_eq "shared lib: line" "$P/sym_libpart.c:$LL" "$(fld "$TMP/lib.res" "$a" 3)"
	check_eq "shared lib: module" "$TMP/lib/libsym_libpart.so" \
		"$(fld "$TMP/lib.res" "$a" 4 | sed 's/+0x[0-9a-f]*$//')"
	good_off=$(fld "$TMP/lib.res" "$a" 4 | sed 's/.*+//')
	check "libc: a point inside puts is named puts" has puts "$(fld "$TMP/lib.res" "$p" 2)"

	# --sysroot: the library moved under a sysroot directory
	mkdir -p "$TMP/sysroot$TMP/lib"
	mv "$TMP/lib/libsym_libpart.so" "$TMP/sysroot$TMP/lib/"
	"$SYMDW" "$TMP/sym_lib" "$TMP/lib.core" "$a" >"$TMP/nosys.res" 2>&1
	check_eq "library missing: no name" "?" "$(fld "$TMP/nosys.res" "$a" 2)"
	check_eq "library missing: module+offset kept" "$TMP/lib/libsym_libpart.so+$good_off" "$(fld "$TMP/nosys.res" "$a" 4)"
	check_grep "library missing: noted" "^note: $TMP/lib/libsym_libpart.so: no usable file" "$TMP/nosys.res"
	"$SYMDW" --sysroot "$TMP/sysroot" "$TMP/sym_lib" "$TMP/lib.core" "$a" >"$TMP/sys.res" 2>&1
	check_eq "--sysroot: function" lib_entry "$(fld "$TMP/sys.res" "$a" 2)"
	check_eq "--sysroot: line" "$P/sym_libpart.c:$LL" "$(fld "$TMP/sys.res" "$a" 3)"
	check_eq "--sysroot: module is the file used" "$TMP/sysroot$TMP/lib/libsym_libpart.so" \
		"$(fld "$TMP/sys.res" "$a" 4 | sed 's/+0x[0-9a-f]*$//')"
	mv "$TMP/sysroot$TMP/lib/libsym_libpart.so" "$TMP/lib/"

	# rebuilt with a change: another build-id; must be flagged, never misnamed
	core_id=$(readelf -n "$TMP/lib/libsym_libpart.so" | awk '/Build ID/ { print $3 }')
	cp "$TMP/lib/libsym_libpart.so" "$TMP/sysroot$TMP/lib/"
	gcc -g -O2 -fPIC -shared -DSYM_VARIANT=2 "$P/sym_libpart.c" -o "$TMP/lib/libsym_libpart.so"
	new_id=$(readelf -n "$TMP/lib/libsym_libpart.so" | awk '/Build ID/ { print $3 }')
	check "rebuilt library has another build-id" test "$core_id" != "$new_id"
	moved=$(nm "$TMP/lib/libsym_libpart.so" | awk '$3 == "lib_moved_in" { print $1 }')
	check "rebuilt library: the old offset now lies in lib_moved_in (a wrong name to avoid)" \
		test $((good_off)) -gt $((0x$moved)) -a $((good_off)) -lt $((0x$moved + 32))
	"$SYMDW" "$TMP/sym_lib" "$TMP/lib.core" "$a" "$p" >"$TMP/mis.res" 2>&1
	check_eq "mismatch: flagged" buildid "$(fld "$TMP/mis.res" "$a" 5)"
	check_eq "mismatch: no name" "?" "$(fld "$TMP/mis.res" "$a" 2)"
	check_eq "mismatch: no frames" "-" "$(fld "$TMP/mis.res" "$a" 6)"
	check_eq "mismatch: module+offset as before" "$TMP/lib/libsym_libpart.so+$good_off" "$(fld "$TMP/mis.res" "$a" 4)"
	check_grep "mismatch: note names both build-ids" \
		"^note: $TMP/lib/libsym_libpart.so: build-id in core $core_id differs from file on disk $new_id; showing module\+offset" "$TMP/mis.res"
	check "mismatch: other modules still named" has puts "$(fld "$TMP/mis.res" "$p" 2)"
	# a core without the pages that hold build-ids (coredump_filter without bit 4):
	# the rebuilt file cannot be told apart; say so instead of staying silent
	if RC_FILTER=0x3 run_core "$TMP/lib3.out" "$TMP/lib3.core" "$TMP/sym_lib"; then
		a3=$(addr_of lib_entry "$TMP/lib3.out")
		"$SYMDW" "$TMP/sym_lib" "$TMP/lib3.core" "$a3" >"$TMP/lib3.res" 2>&1
		check_grep "no build-id in the core: noted as unchecked" \
			"^note: $TMP/lib/libsym_libpart.so: build-id not in the core; the file on disk could not be checked" "$TMP/lib3.res"
	else
		check "gcore with coredump_filter 0x3" false
	fi
	# a container's core: the host has another file at the path, the sysroot the right one
	"$SYMDW" --sysroot "$TMP/sysroot" "$TMP/sym_lib" "$TMP/lib.core" "$a" >"$TMP/sys2.res" 2>&1
	check_eq "--sysroot over a different host file: function" "lib_entry@$P/sym_libpart.c:$LL" \
		"$(fld "$TMP/sys2.res" "$a" 6)"
	check_eq "--sysroot over a different host file: no flags" "-" "$(fld "$TMP/sys2.res" "$a" 5)"
else
	check "shared lib gcore" false
fi

# ---- C++: inline chain and demangled names -------------------------------------
LI=$(line_of "$P/sym_cxx.cc" '// MARK_INL')
LC=$(line_of "$P/sym_cxx.cc" '// MARK_CALL')
LP=$(line_of "$P/sym_cxx.cc" '// MARK_PLAIN')
LH=$(line_of "$P/sym_cxx.cc" '// MARK_HID')
LQ=$(line_of "$P/sym_cxx.cc" '// MARK_QUIET')
LQC=$(line_of "$P/sym_cxx.cc" '// MARK_QCALL')
for o in 0 2; do
	name=cxx$o
	g++ -g -O$o "$P/sym_cxx.cc" -o "$TMP/$name" || { check "$name builds" false; continue; }
	run_core "$TMP/$name.out" "$TMP/$name.core" "$TMP/$name" || { check "$name gcore" false; continue; }
	a=$(addr_of poke "$TMP/$name.out")
	b=$(addr_of plain "$TMP/$name.out")
	"$SYMDW" "$TMP/$name" "$TMP/$name.core" "$a" "$b" >"$TMP/$name.res" 2>&1
	check_eq "$name: inline chain, innermost first, caller at the call line" \
		"ns::Widget::poke(int)@$P/sym_cxx.cc:$LI[i] < run_widget(int)@$P/sym_cxx.cc:$LC" \
		"$(fld "$TMP/$name.res" "$a" 6)"
	check_eq "$name: demangled member function" \
		"ns::Widget::plain(long)@$P/sym_cxx.cc:$LP" "$(fld "$TMP/$name.res" "$b" 6)"
	h=$(addr_of hidden "$TMP/$name.out")
	q=$(addr_of quiet "$TMP/$name.out")
	"$SYMDW" "$TMP/$name" "$TMP/$name.core" "$h" "$q" >"$TMP/$name.anon" 2>&1
	check_eq "$name: anonymous namespace, no linkage name: qualified, parameters from the symbols" \
		"(anonymous namespace)::hidden(long)@$P/sym_cxx.cc:$LH" "$(fld "$TMP/$name.anon" "$h" 6)"
	check_eq "$name: inlined from an anonymous namespace: qualified" \
		"ns::(anonymous namespace)::quiet@$P/sym_cxx.cc:$LQ[i] < run_widget(int)@$P/sym_cxx.cc:$LQC" \
		"$(fld "$TMP/$name.anon" "$q" 6)"
done

# ---- static non-PIE binary, raw mode (no core) ---------------------------------------
if gcc -g -O2 -static -no-pie "$P/sym_basic.c" -o "$TMP/static" 2>/dev/null; then
	"$TMP/static" exit >"$TMP/static.out"
	a=$(addr_of first_caller "$TMP/static.out")
	b=$(addr_of second_caller "$TMP/static.out")
	"$SYMDW" --raw-elf "$TMP/static" "$a" "$b" >"$TMP/static.res" 2>&1
	check_eq "raw static: first_caller" "first_caller@$P/sym_basic.c:$LA" "$(fld "$TMP/static.res" "$a" 6)"
	check_eq "raw static: second_caller" "second_caller@$P/sym_basic.c:$LB" "$(fld "$TMP/static.res" "$b" 6)"
	check_eq "raw static: module+offset is the address" "$TMP/static+$a" "$(fld "$TMP/static.res" "$a" 4)"
else
	echo "# no static libc: raw-mode checks skipped"
fi

# ---- cross-built static firmware-like binaries, raw mode (ARM Thumb-2 and ARM, MIPS) ----
# A Thumb return address has bit 0 set: it must be cleared before address-1.
for v in arm-thumb:arm-linux-gnueabihf-gcc:qemu-arm:-mthumb arm-arm:arm-linux-gnueabihf-gcc:qemu-arm:-marm \
	mips:mips-linux-gnu-gcc:qemu-mips:; do
	name=${v%%:*} rest=${v#*:}
	cc=${rest%%:*} rest=${rest#*:}
	qemu=${rest%%:*} mflag=${rest#*:}
	if ! command -v "$cc" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1; then
		echo "# no $cc or $qemu: $name checks skipped"
		continue
	fi
	# shellcheck disable=SC2086
	"$cc" -g -O2 $mflag -static -no-pie "$P/sym_basic.c" -o "$TMP/$name" 2>/dev/null || continue
	"$qemu" "$TMP/$name" exit >"$TMP/$name.out" 2>/dev/null || continue
	a=$(addr_of first_caller "$TMP/$name.out")
	b=$(addr_of second_caller "$TMP/$name.out")
	"$SYMDW" --raw-elf "$TMP/$name" "$a" "$b" >"$TMP/$name.res" 2>&1
	check_eq "raw $name: first_caller" "first_caller@$P/sym_basic.c:$LA" "$(fld "$TMP/$name.res" "$a" 6)"
	check_eq "raw $name: second_caller" "second_caller@$P/sym_basic.c:$LB" "$(fld "$TMP/$name.res" "$b" 6)"
done

# ---- debug info: symtab only, and separate debug file by build-id -----------------
a=$(addr_of first_caller "$TMP/pie2.out")
b=$(addr_of second_caller "$TMP/pie2.out")
cp "$TMP/pie2" "$TMP/pie2.nodebug" && strip --strip-debug "$TMP/pie2.nodebug"
"$SYMDW" "$TMP/pie2.nodebug" "$TMP/pie2.core" "$a" "$b" >"$TMP/nodebug.res" 2>&1
check_eq "no DWARF: name from the symbol table" first_caller "$(fld "$TMP/nodebug.res" "$a" 2)"
# gcc may clone the static function (second_caller.isra.0): expect what nm says
sc=$(nm "$TMP/pie2" | awk '$3 ~ /^second_caller/ { print $3 }' | head -n 1)
check_eq "no DWARF: local symbol too ($sc)" "$sc" "$(fld "$TMP/nodebug.res" "$b" 2)"
check_eq "no DWARF: flagged" nodebug "$(fld "$TMP/nodebug.res" "$a" 5)"
check_eq "no DWARF: no line" "?" "$(fld "$TMP/nodebug.res" "$a" 3)"
check_grep "no DWARF: noted" "^note: .*pie2.nodebug: no debug info" "$TMP/nodebug.res"

id=$(readelf -n "$TMP/pie2" | awk '/Build ID/ { print $3 }')
mkdir -p "$TMP/dbg/.build-id/$(echo "$id" | cut -c1-2)"
objcopy --only-keep-debug "$TMP/pie2" "$TMP/dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
cp "$TMP/pie2" "$TMP/pie2.stripped" && strip --strip-all "$TMP/pie2.stripped"
"$SYMDW" --debug-dir "$TMP/dbg" "$TMP/pie2.stripped" "$TMP/pie2.core" "$a" "$b" >"$TMP/sepdbg.res" 2>&1
check_eq "--debug-dir: found by build-id" "first_caller@$P/sym_basic.c:$LA" "$(fld "$TMP/sepdbg.res" "$a" 6)"
check_eq "--debug-dir: static function" "second_caller@$P/sym_basic.c:$LB" "$(fld "$TMP/sepdbg.res" "$b" 6)"
(cd "$TMP" && "$SYMDW" --debug-dir dbg pie2.stripped pie2.core "$a") >"$TMP/reldbg.res" 2>&1
check_eq "--debug-dir given relative to the cwd" "first_caller@$P/sym_basic.c:$LA" "$(fld "$TMP/reldbg.res" "$a" 6)"
"$SYMDW" "$TMP/pie2.stripped" "$TMP/pie2.core" "$a" >"$TMP/nodbgdir.res" 2>&1
check_eq "stripped, no --debug-dir: not named" "?" "$(fld "$TMP/nodbgdir.res" "$a" 2)"
# .gnu_debuglink: DIR/<the program's directory>/<link name>
mkdir -p "$TMP/dbg2$TMP"
objcopy --only-keep-debug "$TMP/pie2" "$TMP/dbg2$TMP/pie2.dbg"
cp "$TMP/pie2.stripped" "$TMP/pie2.linked"
objcopy --add-gnu-debuglink="$TMP/dbg2$TMP/pie2.dbg" "$TMP/pie2.linked"
"$SYMDW" --debug-dir "$TMP/dbg2" "$TMP/pie2.linked" "$TMP/pie2.core" "$a" >"$TMP/dbglink.res" 2>&1
check_eq "--debug-dir: found by .gnu_debuglink" "first_caller@$P/sym_basic.c:$LA" "$(fld "$TMP/dbglink.res" "$a" 6)"

# C++ without DWARF: symbol-table names are demangled too
if [ -f "$TMP/cxx2" ]; then
	b=$(addr_of plain "$TMP/cxx2.out")
	cp "$TMP/cxx2" "$TMP/cxx2.nodebug" && strip --strip-debug "$TMP/cxx2.nodebug"
	"$SYMDW" "$TMP/cxx2.nodebug" "$TMP/cxx2.core" "$b" >"$TMP/cxxnd.res" 2>&1
	check_eq "C++ symtab name demangled" "ns::Widget::plain(long)" "$(fld "$TMP/cxxnd.res" "$b" 2)"
fi

# ---- the program given is not the one in the core -------------------------------
# while the core's own program is still at its path, libdwfl takes that one:
# right names, and a note says the program given was not used
"$SYMDW" "$TMP/pie0" "$TMP/pie2.core" "$a" >"$TMP/wrongexe.res" 2>&1
check_eq "other program given, core's on disk: named from the core's" first_caller "$(fld "$TMP/wrongexe.res" "$a" 2)"
check_grep "other program given: noted" "^note: $TMP/pie0: build-id [0-9a-f]+ is not the one of the core's program" "$TMP/wrongexe.res"
# once it is gone: the right program under another name is used (core from
# another machine), a wrong one gives only module+offset and the mismatch
mv "$TMP/pie2" "$TMP/pie2.away"
mkdir -p "$TMP/elsewhere" && cp "$TMP/pie2.away" "$TMP/elsewhere/prog"
"$SYMDW" "$TMP/elsewhere/prog" "$TMP/pie2.core" "$a" >"$TMP/moved.res" 2>&1
check_eq "program moved: named through the path given" "first_caller@$P/sym_basic.c:$LA" "$(fld "$TMP/moved.res" "$a" 6)"
check_eq "program moved: module is the path given" "$TMP/elsewhere/prog" "$(fld "$TMP/moved.res" "$a" 4 | sed 's/+0x[0-9a-f]*$//')"
"$SYMDW" "$TMP/pie0" "$TMP/pie2.core" "$a" >"$TMP/wrongexe2.res" 2>&1
mv "$TMP/pie2.away" "$TMP/pie2"
check_eq "other program only: flagged" buildid "$(fld "$TMP/wrongexe2.res" "$a" 5)"
check_eq "other program only: not named" "?" "$(fld "$TMP/wrongexe2.res" "$a" 2)"
check_grep "other program only: note names the file" \
	"^note: $TMP/pie2: build-id in core $id differs from file on disk [0-9a-f]+ \\($TMP/pie0\\)" "$TMP/wrongexe2.res"

# ---- blocks written by libheapann, addresses from the coreparse scan ------------------
if [ -f "$B/libheapann.so" ]; then
	LM=$(line_of "$P/sym_alloc.c" '/\* MARK_M \*/')
	gcc -g -O2 "$P/sym_alloc.c" -o "$TMP/alloc"
	if run_core "$TMP/alloc.out" "$TMP/alloc.core" env LD_PRELOAD="$(cd "$B" && pwd)/libheapann.so" "$TMP/alloc"; then
		"$SYMDW" --scan "$TMP/alloc" "$TMP/alloc.core" >"$TMP/alloc.res" 2>&1
		check_grep "scan: malloc call site named with its line" \
			"	alloc_site	$P/sym_alloc.c:$LM	$TMP/alloc\+0x" "$TMP/alloc.res"
	else
		check "alloc gcore" false
	fi
fi

# ---- kernel core ------------------------------------------------------------------
mkdir -p "$TMP/kc" && cp "$TMP/cxx2" "$TMP/kc/"
(cd "$TMP/kc" && ulimit -c unlimited && exec ./cxx2 >out 2>&1) &
kpid=$!
i=0
while ! grep -q ready "$TMP/kc/out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -SEGV $kpid 2>/dev/null
wait $kpid 2>/dev/null
kcore=$(ls "$TMP/kc"/core* 2>/dev/null | head -n 1)
if [ -n "$kcore" ]; then
	a=$(addr_of poke "$TMP/kc/out")
	"$SYMDW" "$TMP/kc/cxx2" "$kcore" "$a" >"$TMP/kc.res" 2>&1
	check_eq "kernel core: inline chain" \
		"ns::Widget::poke(int)@$P/sym_cxx.cc:$LI[i] < run_widget(int)@$P/sym_cxx.cc:$LC" \
		"$(fld "$TMP/kc.res" "$a" 6)"
else
	echo "# no kernel core written (core_pattern/ulimit): kernel-core check skipped"
fi

# ---- bad input ------------------------------------------------------------------------
"$SYMDW" "$TMP/pie2" "$TMP/missing.core" 0x1 >"$TMP/bad1" 2>&1
check "missing core: fails" test $? -ne 0
check_grep "missing core: one line naming the file" "^symdw: $TMP/missing.core: No such file" "$TMP/bad1"
"$SYMDW" "$TMP/pie2" "$TMP/pie2" 0x1 >"$TMP/bad2" 2>&1
check "exe given as core: fails" test $? -ne 0
check_grep "exe given as core: says it is not a core" "^symdw: $TMP/pie2: not a core file" "$TMP/bad2"
printf 'garbage' >"$TMP/garbage"
"$SYMDW" "$TMP/pie2" "$TMP/garbage" 0x1 >"$TMP/bad3" 2>&1
check_grep "garbage core: not an ELF file" "^symdw: $TMP/garbage: not an ELF file" "$TMP/bad3"
"$SYMDW" "$TMP/nonexistent" "$TMP/pie2.core" 0x1 >"$TMP/bad4" 2>&1
check_grep "missing program: named" "^symdw: $TMP/nonexistent: No such file" "$TMP/bad4"
head -c 200 "$TMP/pie2.core" >"$TMP/trunc.core"
"$SYMDW" "$TMP/pie2" "$TMP/trunc.core" 0x1 >"$TMP/bad6" 2>&1
check_grep "core cut inside its headers: named" "^symdw: $TMP/trunc.core: truncated core" "$TMP/bad6"
"$SYMDW" --raw-elf "$TMP/pie2.core" 0x1 >"$TMP/bad7" 2>&1
check_grep "raw mode given a core: named" "^symdw: $TMP/pie2.core: is a core file, not the program" "$TMP/bad7"
"$SYMDW" "$TMP/garbage" "$TMP/pie2.core" 0x1 >"$TMP/bad8" 2>&1
check_grep "program not an ELF file: named" "^symdw: $TMP/garbage: not an ELF file" "$TMP/bad8"
"$SYMDW" --raw-elf "$TMP/garbage" 0x1 >"$TMP/bad5" 2>&1
check_grep "raw mode, not an ELF: named" "^symdw: $TMP/garbage: " "$TMP/bad5"

done_testing
