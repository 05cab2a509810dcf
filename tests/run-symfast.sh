#!/bin/sh
# run-symfast.sh - the libdw symbolizer's fast path (line tables and scope
# indexes decoded from the section bytes: sym/dw_line.c, sym/dw_die.c) against
# known answers and against the reference path (SYM_DW_REFERENCE: libdw asked
# per address, as before), on every call site of real programs:
#  - a generated C program (tests/prog/symgen.py: 400 functions, each with a
#    plain call, a call in a function inlined twice deep and one inlined once;
#    the generator writes the chain expected at each call site), as DWARF 5 and
#    DWARF 4, PIE in raw mode and inside a gcore'd process together with libc;
#  - the C++ program of run-symdw (namespaces, anonymous namespaces, members);
#  - the ARM (Thumb) and MIPS firmware ELFs of fixtures/fw, every 6th byte of
#    their code (gcc's ARM line tables end some sequences on a zero-length row);
#  - eu-addr2line -f -i (elfutils), when it can be installed, on the C program.
. tests/lib.sh
SYMDW=$B/tests/tools/symdw
case $SYMDW in /*) ;; *) SYMDW=$TOP/$SYMDW ;; esac
[ -x "$SYMDW" ] || skip "no $SYMDW (make $SYMDW)"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
command -v objdump >/dev/null 2>&1 || skip "objdump not installed"
P=$TOP/tests/prog
NF=400

# rets EXE: "ADDR FUNCTION" for the instruction after every call (a return address)
rets() {
	objdump -d --no-show-raw-insn "$1" | awk '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn) }
		/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); if (want) { print "0x" a, wfn; want = 0 }
			if ($2 ~ /^call/) { want = 1; wfn = fn } }'
}

# known FILE.res NAME: for each f<i>, the sorted chains symdw gave at its call
# sites must be the sorted chains of expect.txt; prints how many functions match
known() {
	python3 - "$1" "$TMP/gen/expect.txt" <<'PY'
import sys
got = {}
for l in open(sys.argv[1]):
    f = l.rstrip("\n").split("\t")
    if len(f) >= 6 and f[5] != "-":
        outer = f[5].split(" < ")[-1].split("@")[0]
        got.setdefault(outer, []).append(f[5])
ok = 0
for l in open(sys.argv[2]):
    f = l.rstrip("\n").split("\t")
    if sorted(got.get(f[0], [])) == sorted(f[1:]):
        ok += 1
    elif ok < 3:
        print("mismatch %s: %s" % (f[0], sorted(got.get(f[0], []))), file=sys.stderr)
print(ok)
PY
}

mkdir -p "$TMP/gen"
python3 "$P/symgen.py" $NF 4 "$TMP/gen" || skip "symgen.py failed"
(cd "$TMP/gen" && gcc -g -O2 -o prog5 gen0.c gen1.c gen2.c gen3.c main.c &&
	gcc -gdwarf-4 -O2 -o prog4 gen0.c gen1.c gen2.c gen3.c main.c) || skip "cannot build the generated program"

for v in 5 4; do
	exe=$TMP/gen/prog$v
	rets "$exe" >"$TMP/rets$v"
	cut -d' ' -f1 "$TMP/rets$v" >"$TMP/addrs$v"
	n=$(wc -l <"$TMP/addrs$v")
	check "DWARF $v: at least 4 call sites per function ($n)" test "$n" -ge $((NF * 4))
	"$SYMDW" --addr-file "$TMP/addrs$v" --raw-elf "$exe" >"$TMP/fast$v.res" 2>"$TMP/fast$v.err"
	check_eq "DWARF $v: fast path names every address" "$n" "$(grep -c '^0x' "$TMP/fast$v.res")"
	"$SYMDW" --reference --addr-file "$TMP/addrs$v" --raw-elf "$exe" >"$TMP/ref$v.res" 2>"$TMP/ref$v.err"
	check_eq "DWARF $v: reference path names every address" "$n" "$(grep -c '^0x' "$TMP/ref$v.res")"
	check_eq "DWARF $v: fast and reference identical on all $n addresses (lines differing)" 0 \
		"$(diff "$TMP/fast$v.res" "$TMP/ref$v.res" | grep -c '^<')"
	check_eq "DWARF $v: all $NF functions with the 4 expected chains (names, files, lines, inlining)" \
		$NF "$(known "$TMP/fast$v.res")"
	check_eq "DWARF $v: call sites two inlines deep" $NF \
		"$(cut -f6 "$TMP/fast$v.res" | grep -c '^g[0-7]@.*\[i\] < h[0-7]@.*\[i\] < f[0-9]*@')"
done

# ---- a gcore'd process: the PIE at its load address, and libc's call sites ----
# (libc's debug info is compressed and separate when libc6-dbg is installed)
exe=$TMP/gen/prog5
gcore_bases "$exe" "$TMP/core"
gc=$?
if [ $gc -eq 0 ] && [ -n "$base" ] && [ -n "$libc" ]; then
	rets "$libc" | cut -d' ' -f1 >"$TMP/libcrets"
	python3 - "$base" "$lbase" "$TMP/addrs5" "$TMP/libcrets" >"$TMP/core.addrs" <<'PY'
import sys
base, lbase = int(sys.argv[1], 16), int(sys.argv[2], 16)
out = ["0x%x" % (base + int(l, 16)) for l in open(sys.argv[3]) if l.strip()]
out += ["0x%x" % (lbase + int(l, 16)) for l in open(sys.argv[4]) if l.strip()]
print("\n".join(out))
PY
	n=$(wc -l <"$TMP/core.addrs")
	"$SYMDW" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/corefast.res" 2>/dev/null
	"$SYMDW" --reference --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/coreref.res" 2>/dev/null
	check_eq "core: fast path names all $n addresses (program and libc)" "$n" "$(grep -c '^0x' "$TMP/corefast.res")"
	check_eq "core: fast and reference identical, notes included (lines differing)" 0 \
		"$(diff "$TMP/corefast.res" "$TMP/coreref.res" | grep -c '^<')"
	check_eq "core: all $NF functions with the 4 expected chains at the load address" \
		$NF "$(known "$TMP/corefast.res")"
	check "core: libc's addresses are named ($(grep -c 'libc\.so[^	]*+0x[0-9a-f]*	-	[^-]' "$TMP/corefast.res"))" \
		test "$(grep -c 'libc\.so[^	]*+0x[0-9a-f]*	-	[^-]' "$TMP/corefast.res")" -gt 1000
	# threads (sym/dw_pool.c): libc's debug sections inflated one per thread,
	# the units of both modules decoded in parallel; 1 is the sequential path
	for t in 1 3; do
		MPROF_THREADS=$t "$SYMDW" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/coret$t.res" 2>/dev/null
		check "core, MPROF_THREADS=$t: the same output byte for byte, notes included" \
			cmp -s "$TMP/coret$t.res" "$TMP/corefast.res"
		rm -rf "$TMP/tcache$t"
		MPROF_THREADS=$t "$SYMDW" --cache-dir "$TMP/tcache$t" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" \
			>"$TMP/coretc$t.res" 2>/dev/null
		MPROF_THREADS=$t "$SYMDW" --cache-dir "$TMP/tcache$t" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" \
			>"$TMP/coretw$t.res" 2>/dev/null
		check "core, MPROF_THREADS=$t: cache cold and warm give the same output" \
			sh -c "cmp -s '$TMP/coretc$t.res' '$TMP/corefast.res' && cmp -s '$TMP/coretw$t.res' '$TMP/corefast.res'"
	done
else
	check "gcore of the generated program" false
fi

# ---- C++: qualified and demangled names, inline chains --------------------------
if command -v g++ >/dev/null 2>&1 && g++ -g -O2 "$P/sym_cxx.cc" -o "$TMP/cxx" 2>/dev/null; then
	rets "$TMP/cxx" | cut -d' ' -f1 >"$TMP/cxx.addrs"
	n=$(wc -l <"$TMP/cxx.addrs")
	"$SYMDW" --addr-file "$TMP/cxx.addrs" --raw-elf "$TMP/cxx" >"$TMP/cxxfast.res" 2>/dev/null
	"$SYMDW" --reference --addr-file "$TMP/cxx.addrs" --raw-elf "$TMP/cxx" >"$TMP/cxxref.res" 2>/dev/null
	check_eq "C++: fast path names all $n addresses" "$n" "$(grep -c '^0x' "$TMP/cxxfast.res")"
	check_eq "C++: fast and reference identical (lines differing)" 0 \
		"$(diff "$TMP/cxxfast.res" "$TMP/cxxref.res" | grep -c '^<')"
	check_grep "C++: a demangled member function" "	ns::Widget::plain\\(long\\)	" "$TMP/cxxfast.res"
fi

# ---- the firmware fixtures (ARM Thumb, big-endian MIPS; raw mode): every 6th byte of .text ----
for a in arm mips; do
	[ -f "$TOP/fixtures/fw/$a.elf.gz" ] || continue
	gunzip -c "$TOP/fixtures/fw/$a.elf.gz" >"$TMP/$a.elf"
	set -- $(readelf -SW "$TMP/$a.elf" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".text" { print $3, $5 }')
	python3 -c '
import sys
s, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
print("\n".join("0x%x" % a for a in range(s + 2, s + n, 6)))' "$1" "$2" >"$TMP/$a.addrs"
	n=$(wc -l <"$TMP/$a.addrs")
	"$SYMDW" --addr-file "$TMP/$a.addrs" --raw-elf "$TMP/$a.elf" >"$TMP/$a.fast" 2>/dev/null
	"$SYMDW" --reference --addr-file "$TMP/$a.addrs" --raw-elf "$TMP/$a.elf" >"$TMP/$a.ref" 2>/dev/null
	check_eq "firmware $a: fast and reference identical on $n addresses (lines differing)" 0 \
		"$(diff "$TMP/$a.fast" "$TMP/$a.ref" | grep -c '^<')"
	check "firmware $a: most addresses named ($(grep -c '@/' "$TMP/$a.fast"))" \
		test "$(grep -c '@/' "$TMP/$a.fast")" -gt 1000
done

# ---- eu-addr2line (elfutils) as a third opinion ---------------------------------
command -v eu-addr2line >/dev/null 2>&1 || sh scripts/install-deps.sh elfutils >/dev/null 2>&1
if command -v eu-addr2line >/dev/null 2>&1; then
	# the byte before each return address, as the symbolizer looks it up
	python3 -c '
import sys
for l in open(sys.argv[1]):
    if l.strip(): print("0x%x" % (int(l, 16) - 1))' "$TMP/addrs5" >"$TMP/addrs5m1"
	eu-addr2line -a -f -i -e "$TMP/gen/prog5" $(cat "$TMP/addrs5m1") >"$TMP/eu.out" 2>/dev/null
	# one chain per address: "fn@file:line" innermost first, inlined ones "[i]"
	# (eu-addr2line prints file:line:column, or ??:0 when it knows no line)
	awk '
		function flush() { if (na) { s = ""; for (k = 1; k <= nf; k++) s = s (k > 1 ? " < " : "") fr[k] (k < nf ? "[i]" : ""); print s } nf = 0 }
		/^0x/ { flush(); na = 1; state = 0; next }
		state == 0 { fn = $1; state = 1; next }
		state == 1 { loc = $0; if (loc == "??:0") loc = "?:0"; else if (loc ~ /:[0-9]+:[0-9]+$/) sub(/:[0-9]+$/, "", loc)
			fr[++nf] = fn "@" loc; state = 0 }
		END { flush() }' "$TMP/eu.out" >"$TMP/eu.chains"
	cut -f6 "$TMP/fast5.res" >"$TMP/fast5.chains"
	n=$(wc -l <"$TMP/addrs5")
	check_eq "eu-addr2line: one chain per address" "$n" "$(wc -l <"$TMP/eu.chains")"
	# libdw gives an address past the end of a unit's code (_start and crt's
	# __do_global_dtors_aux after main's .text.startup) the line that ends the
	# code before it; mprof-core gives it no line, as binutils' addr2line does
	# ("crtstuff.c:?"): such an address counts as agreeing when addr2line has
	# no line for it
	check_eq "eu-addr2line: same chains (functions, files, lines, inlining) on all $n addresses (differing)" 0 \
		"$(python3 - "$TMP/eu.chains" "$TMP/fast5.chains" "$TMP/addrs5m1" "$TMP/gen/prog5" <<'PY'
import subprocess, sys
eu, fast, addrs = (open(f).read().split("\n") for f in sys.argv[1:4])
diff = [i for i in range(len(eu)) if eu[i] != fast[i]]
nol = [i for i in diff if "<" not in fast[i] and fast[i].endswith("@?:0")]
ok = set()
if nol:
    out = subprocess.run(["addr2line", "-e", sys.argv[4]] + [addrs[i] for i in nol],
                         capture_output=True, text=True).stdout.split("\n")
    ok = {i for i, l in zip(nol, out) if l.split(" ")[0].endswith((":?", ":0"))}
for i in diff:
    if i not in ok:
        sys.stderr.write("%s: eu-addr2line %s, mprof-core %s\n" % (addrs[i], eu[i], fast[i]))
print(len(diff) - len(ok))
PY
)"
else
	echo "# eu-addr2line not available: third-opinion check skipped"
fi

# ---- a dwz alternate file next to a compressed build-id debug file ----------------
# An unstripped program whose DWARF refers to a dwz -m common file (comp_dir is
# a DW_FORM_GNU_strp_alt there): libdwfl's first find_debuginfo call for it
# seeks that alt file, which must not be answered with the program's own
# compressed .build-id debug file (DWARF 4, so file names hang on comp_dir).
command -v dwz >/dev/null 2>&1 || apt-get install -y dwz >/dev/null 2>&1
if command -v dwz >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1; then
	D=$TMP/dwz
	mkdir -p "$D"
	printf '#include <stdlib.h>\nstatic void *keep[4];\n__attribute__((noinline)) void *p3(int n) { void *p = malloc(16 * (unsigned)n); keep[n & 3] = p; return p; }\n' >"$D/a.c"
	printf '#include <stdlib.h>\nvoid *p3(int n);\nint main(int argc, char **argv) { (void)argv; free(p3(argc)); return 0; }\n' >"$D/m.c"
	(cd "$D" && gcc -gdwarf-4 -O1 -o prog1 a.c m.c && gcc -gdwarf-4 -O1 -DOTHER -o prog2 a.c m.c &&
		dwz -m common.debug prog1 prog2) >/dev/null 2>&1
	id=$(readelf -n "$D/prog1" 2>/dev/null | awk '/Build ID/ { print $3 }')
	if [ -n "$id" ] && readelf -SW "$D/prog1" | grep -q gnu_debugaltlink; then
		mkdir -p "$D/dbg/.build-id/$(echo "$id" | cut -c1-2)"
		objcopy --only-keep-debug --compress-debug-sections=zlib "$D/prog1" \
			"$D/dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
		rets "$D/prog1" | grep -E ' (main|p3)$' | cut -d' ' -f1 >"$D/addrs"
		"$SYMDW" --debug-dir "$D/dbg" --addr-file "$D/addrs" --raw-elf "$D/prog1" >"$D/fast" 2>/dev/null
		"$SYMDW" --reference --debug-dir "$D/dbg" --addr-file "$D/addrs" --raw-elf "$D/prog1" >"$D/ref" 2>/dev/null
		check_eq "dwz alt file: fast and reference identical ($(wc -l <"$D/addrs") addresses)" "" \
			"$(diff "$D/fast" "$D/ref")"
		check_grep "dwz alt file: p3's call of malloc at $D/a.c:3 (comp_dir read from the alt file)" \
			"	p3@$D/a.c:3\$" "$D/fast"
		check_grep "dwz alt file: main's call of p3 at $D/m.c:3" "	main@$D/m.c:3\$" "$D/fast"
	else
		check "dwz -m gives the program a .gnu_debugaltlink" false
	fi
fi

# ---- MPROF_THREADS it cannot use: one note, every CPU, the same answers ---------------
"$SYMDW" --addr-file "$TMP/addrs5" --raw-elf "$TMP/gen/prog5" >"$TMP/thr.ok" 2>/dev/null
for v in -1 99999999999999999999 4x 0; do
	MPROF_THREADS=$v "$SYMDW" --addr-file "$TMP/addrs5" --raw-elf "$TMP/gen/prog5" >"$TMP/thr.res" 2>/dev/null
	check_eq "MPROF_THREADS=$v: one note naming it" 1 \
		"$(grep -c "^note: MPROF_THREADS=$v is not a number of threads; the symbolizer uses every usable CPU" "$TMP/thr.res")"
	check_eq "MPROF_THREADS=$v: the same $(grep -c '^0x' "$TMP/thr.ok") lines otherwise" "" \
		"$(grep -v '^note: MPROF_THREADS' "$TMP/thr.res" | diff - "$TMP/thr.ok")"
done
MPROF_THREADS=100 "$SYMDW" --addr-file "$TMP/addrs5" --raw-elf "$TMP/gen/prog5" >"$TMP/thr.res" 2>/dev/null
check "MPROF_THREADS=100 (more than the 64 used): no note, the same output" cmp -s "$TMP/thr.res" "$TMP/thr.ok"

# ---- bad input stays bad input ------------------------------------------------------
"$SYMDW" --raw-elf "$TMP/gen/main.c" 0x1 >"$TMP/bad1" 2>&1
check "not an ELF: fails" test $? -ne 0
done_testing
