#!/bin/sh
# run-symcache.sh - the libdw symbolizer's per-module index cache (sym/dw_cache.c,
# symdw --cache-dir; mprof-core's MPROF_CACHE_DIR and --no-cache): a run writes
# one file per module named by its build-id, a later run answers from it. The
# answers must be the reference path's (SYM_DW_REFERENCE), byte for byte, cold
# and warm, on every call site and on every byte of .text of a generated
# program (tests/prog/symgen.py), a C++ program, and a gcore'd process with
# libc; a cache of only some CUs is completed by a later run; a damaged,
# truncated, foreign or stale file is not believed (one note at most, right
# answers, rewritten); an unwritable directory only costs a note; four writers
# at once leave one good file.
. tests/lib.sh
SYMDW=$B/tests/tools/symdw
case $SYMDW in /*) ;; *) SYMDW=$TOP/$SYMDW ;; esac
[ -x "$SYMDW" ] || skip "no $SYMDW (make $SYMDW)"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
command -v objdump >/dev/null 2>&1 || skip "objdump not installed"
P=$TOP/tests/prog
ED="python3 $TOP/tests/symcache.py"
NF=400

# rets EXE: the address after every call instruction (a return address)
rets() {
	objdump -d --no-show-raw-insn "$1" | awk '
		/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); if (want) { print "0x" a; want = 0 }
			if ($2 ~ /^call/) want = 1 }'
}

# buildid EXE: its GNU build-id in hex
buildid() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }

# ndiff A B: lines of A not in B at the same place
ndiff() { diff "$1" "$2" | grep -c '^<'; }
# ndiffn A B: the same, the notes about the cache itself left out of A
ndiffn() { grep -v '^note: .*symbol cache' "$1" | diff - "$2" | grep -c '^<'; }

mkdir -p "$TMP/gen"
python3 "$P/symgen.py" $NF 4 "$TMP/gen" || skip "symgen.py failed"
(cd "$TMP/gen" && gcc -g -O2 -o prog gen0.c gen1.c gen2.c gen3.c main.c) || skip "cannot build the generated program"
exe=$TMP/gen/prog
id=$(buildid "$exe")
rets "$exe" >"$TMP/addrs"
n=$(wc -l <"$TMP/addrs")
# every byte of .text and 64 bytes either side: gaps between CUs and functions too
set -- $(readelf -SW "$exe" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".text" { print $3, $5 }')
python3 -c '
import sys
s, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
print("\n".join("0x%x" % a for a in range(s - 64, s + n + 64)))' "$1" "$2" >"$TMP/dense"
nd=$(wc -l <"$TMP/dense")

C=$TMP/cache
"$SYMDW" --reference --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/ref.res" 2>/dev/null
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/cold.res" 2>/dev/null
check_eq "one cache file, named by the build-id" "$id.symidx" "$(ls "$C")"
set -- $($ED info "$C/$id.symidx")
check_eq "cache: format version 3, the program's 5 CUs, no CU range table (gcc's aranges name every CU)" "3 5 0" "$1 $5 $6"
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/warm.res" 2>/dev/null
check_eq "all $n call sites named" "$n" "$(grep -c '^0x' "$TMP/warm.res")"
check_eq "cold run (writing the cache) = reference on $n call sites (lines differing)" 0 \
	"$(ndiff "$TMP/cold.res" "$TMP/ref.res")"
check_eq "warm run (from the cache) = reference on $n call sites (lines differing)" 0 \
	"$(ndiff "$TMP/warm.res" "$TMP/ref.res")"
check_eq "call sites two inlines deep, from the cache" $NF \
	"$(cut -f6 "$TMP/warm.res" | grep -c '^g[0-7]@.*\[i\] < h[0-7]@.*\[i\] < f[0-9]*@')"
"$SYMDW" --quiet --reference --addr-file "$TMP/dense" --raw-elf "$exe" >"$TMP/dref.res" 2>/dev/null
"$SYMDW" --quiet --cache-dir "$C" --addr-file "$TMP/dense" --raw-elf "$exe" >"$TMP/dwarm.res" 2>/dev/null
check_eq "warm = reference on every byte of .text ($nd addresses, lines differing)" 0 \
	"$(ndiff "$TMP/dwarm.res" "$TMP/dref.res")"

# the warm run really answers from the file: a name changed in it (checksum
# fixed) shows; the same edit without fixing the checksum does not
cp "$C/$id.symidx" "$TMP/saved"
$ED rename "$C/$id.symidx" f123 z123
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/edited.res" 2>"$TMP/edited.err"
check_eq "the warm run takes f123's name from the file (its 4 call sites show z123, no other line changes)" \
	"4 4" "$(grep -c 'z123' "$TMP/edited.res") $(ndiff "$TMP/edited.res" "$TMP/ref.res")"
rm -rf "$C"; mkdir "$C"

# ---- a cache of some CUs only, completed by a later run ----
head -n 100 "$TMP/addrs" >"$TMP/first"
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/first" --raw-elf "$exe" >/dev/null 2>&1
set -- $($ED info "$C/$id.symidx")
check_eq "the first 100 call sites (main.c's and gen0.c's functions): two CUs in the cache" 2 "$5"
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/mixed.res" 2>/dev/null
check_eq "cache of one CU + libdw for the others = reference (lines differing)" 0 \
	"$(ndiff "$TMP/mixed.res" "$TMP/ref.res")"
set -- $($ED info "$C/$id.symidx")
check_eq "that run completed the cache (5 CUs)" 5 "$5"
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/warm2.res" 2>/dev/null
check_eq "then warm = reference (lines differing)" 0 "$(ndiff "$TMP/warm2.res" "$TMP/ref.res")"

# ---- files not to be believed ----
# bad NAME: the cache file as prepared is not used: answers right, at most one
# note, and the run leaves a good file (the next run has no note)
bad() {
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/bad.res" 2>"$TMP/bad.err"
	rc=$?
	check_eq "$1: exit 0, answers = reference (lines differing)" "0 0" "$rc $(ndiffn "$TMP/bad.res" "$TMP/ref.res")"
	check "$1: at most one note about it ($(grep -c 'symbol cache' "$TMP/bad.res"))" \
		test "$(grep -c 'symbol cache' "$TMP/bad.res")" -le 1
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/bad2.res" 2>/dev/null
	check_eq "$1: rewritten: the next run has no note and the same answers" "0 0" \
		"$(grep -c 'symbol cache' "$TMP/bad2.res") $(ndiff "$TMP/bad2.res" "$TMP/ref.res")"
}
cp "$TMP/saved" "$C/$id.symidx"
$ED flip "$C/$id.symidx" global
bad "one byte flipped in the global part"
check_grep "one byte flipped in the global part: the note names the file and says why" \
	"^note: .*prog: symbol cache $C/$id.symidx ignored \(bad checksum\)" "$TMP/bad.res"
# a unit is checked when a lookup first uses it: a damaged one is named by
# libdw (the other units still from the file) and decoded again for the rewrite
cp "$TMP/saved" "$C/$id.symidx"
$ED flip "$C/$id.symidx" unit
bad "one byte flipped in the largest unit"
check_grep "one byte flipped in a unit: the note names the file and says why" \
	"^note: .*prog: symbol cache: a unit of $C/$id.symidx ignored \(bad checksum\); it will be rewritten" "$TMP/bad.res"
set -- $($ED info "$C/$id.symidx")
check_eq "...and the rewritten file has the same 5 units (the damaged one decoded again)" 5 "$5"
head -c 100000 "$TMP/saved" >"$C/$id.symidx"
bad "truncated to 100000 bytes"
check_grep "truncated: the note says so" "ignored \(truncated or extended\)" "$TMP/bad.res"
head -c 10 "$TMP/saved" >"$C/$id.symidx"
bad "10 bytes"
head -c 65536 /dev/urandom >"$C/$id.symidx"
bad "64 KiB of random bytes"
check_grep "random bytes: 'not a symbol cache file'" "ignored \(not a symbol cache file\)" "$TMP/bad.res"
: >"$C/$id.symidx"
bad "an empty file"
rm -f "$C/$id.symidx"; mkdir "$C/$id.symidx"
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/dir.res" 2>/dev/null
check_eq "a directory in the file's place: answers = reference" 0 "$(ndiffn "$TMP/dir.res" "$TMP/ref.res")"
rmdir "$C/$id.symidx"

# another program's cache under this build-id's name (a foreign file): its key
# differs, so it is rewritten quietly
mkdir -p "$TMP/other"
python3 "$P/symgen.py" 50 2 "$TMP/other" >/dev/null && (cd "$TMP/other" && gcc -g -O2 -o prog gen0.c gen1.c main.c)
oid=$(buildid "$TMP/other/prog")
"$SYMDW" --cache-dir "$TMP/oc" --raw-elf "$TMP/other/prog" $(head -n 20 "$TMP/addrs") >/dev/null 2>&1
cp "$TMP/oc/$oid.symidx" "$C/$id.symidx"
bad "another program's file"

# stale: the same path rebuilt (new build-id: a new file, the old one unused),
# and the same build-id with another size/mtime (a copy touched later)
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >/dev/null 2>&1
cp "$exe" "$TMP/prog.orig"
(cd "$TMP/gen" && sed -i '1i /* rebuilt */\n' gen0.c && gcc -g -O2 -o prog gen0.c gen1.c gen2.c gen3.c main.c)
id2=$(buildid "$exe")
rets "$exe" >"$TMP/addrs2"
"$SYMDW" --reference --addr-file "$TMP/addrs2" --raw-elf "$exe" >"$TMP/ref2.res" 2>/dev/null
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs2" --raw-elf "$exe" >"$TMP/new.res" 2>/dev/null
check "rebuilt at the same path: a new build-id ($id2)" test "$id2" != "$id"
check_eq "rebuilt: answers = the new program's reference (lines differing)" 0 "$(ndiff "$TMP/new.res" "$TMP/ref2.res")"
check_eq "rebuilt: gen0.c's lines moved by 2 (f16's call to h0: line 231 before, 233 now)" "1 1" \
	"$(grep -c "h0@$TMP/gen/gen0.c:36\[i\] < f16@$TMP/gen/gen0.c:231\$" "$TMP/ref.res") $(grep -c "h0@$TMP/gen/gen0.c:38\[i\] < f16@$TMP/gen/gen0.c:233\$" "$TMP/new.res")"
check "rebuilt: its own cache file beside the old one" test -f "$C/$id2.symidx" -a -f "$C/$id.symidx"
cp "$TMP/prog.orig" "$exe"      # the old build back, but with a new mtime
touch -d '2001-01-01' "$exe"
"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/touched.res" 2>/dev/null
check_eq "same build-id, other mtime: not used, answers = reference, no note" "0 0" \
	"$(ndiff "$TMP/touched.res" "$TMP/ref.res") $(grep -c 'symbol cache' "$TMP/touched.res")"
check_eq "...and the file now records the new mtime (a warm run equal too)" 0 \
	"$("$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" 2>/dev/null | ndiff - "$TMP/ref.res")"

# no build-id: nothing cached
(cd "$TMP/gen" && gcc -g -O2 -Wl,--build-id=none -o noid gen0.c gen1.c gen2.c gen3.c main.c)
"$SYMDW" --cache-dir "$TMP/nc" --addr-file "$TMP/addrs" --raw-elf "$TMP/gen/noid" >"$TMP/noid.res" 2>/dev/null
"$SYMDW" --reference --addr-file "$TMP/addrs" --raw-elf "$TMP/gen/noid" >"$TMP/noidref.res" 2>/dev/null
check_eq "a program without a build-id: no cache file, answers = reference" "0 0" \
	"$(ls "$TMP/nc" 2>/dev/null | wc -l) $(ndiff "$TMP/noid.res" "$TMP/noidref.res")"

# ---- an unwritable cache directory ----
: >"$TMP/plainfile"
"$SYMDW" --cache-dir "$TMP/plainfile/cache" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/unw.res" 2>/dev/null
check_eq "cache dir under a plain file: exit 0, answers = reference" "0 0" "$? $(ndiffn "$TMP/unw.res" "$TMP/ref.res")"
check_eq "...and one note saying it was not written" 1 "$(grep -c '^note: symbol cache not written (cannot create' "$TMP/unw.res")"
mkdir "$TMP/ro"; chmod 555 "$TMP/ro"
if [ "$(id -u)" != 0 ]; then
	"$SYMDW" --cache-dir "$TMP/ro" --addr-file "$TMP/addrs" --raw-elf "$exe" >"$TMP/ro.res" 2>/dev/null
	check_eq "read-only cache dir: answers = reference, one note" "0 1" \
		"$(ndiffn "$TMP/ro.res" "$TMP/ref.res") $(grep -c '^note: symbol cache not written' "$TMP/ro.res")"
fi

# ---- four writers at once ----
rm -rf "$C"
for k in 1 2 3 4; do
	"$SYMDW" --quiet --cache-dir "$C" --addr-file "$TMP/dense" --raw-elf "$exe" >"$TMP/par$k.res" 2>/dev/null &
done
wait
same=0
for k in 1 2 3 4; do [ "$(ndiff "$TMP/par$k.res" "$TMP/dref.res")" = 0 ] && same=$((same + 1)); done
check_eq "four writers at once: all four = reference on $nd addresses" 4 "$same"
check_eq "...one file left, no temporary files (the eviction's lock beside it)" "$id.symidx .lock" \
	"$(ls -A "$C" | LC_ALL=C sort -r | tr '\n' ' ' | sed 's/ $//')"
"$SYMDW" --quiet --cache-dir "$C" --addr-file "$TMP/dense" --raw-elf "$exe" >"$TMP/par.res" 2>/dev/null
check_eq "...and it is good: warm = reference, no note" "0 0" \
	"$(ndiff "$TMP/par.res" "$TMP/dref.res") $(grep -c 'symbol cache' "$TMP/par.res")"

# ---- C++ ----
if command -v g++ >/dev/null 2>&1 && g++ -g -O2 "$P/sym_cxx.cc" -o "$TMP/cxx" 2>/dev/null; then
	rets "$TMP/cxx" >"$TMP/cxx.addrs"
	"$SYMDW" --reference --addr-file "$TMP/cxx.addrs" --raw-elf "$TMP/cxx" >"$TMP/cxxref.res" 2>/dev/null
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/cxx.addrs" --raw-elf "$TMP/cxx" >/dev/null 2>&1
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/cxx.addrs" --raw-elf "$TMP/cxx" >"$TMP/cxxwarm.res" 2>/dev/null
	check_eq "C++: warm = reference on $(wc -l <"$TMP/cxx.addrs") call sites (lines differing)" 0 \
		"$(ndiff "$TMP/cxxwarm.res" "$TMP/cxxref.res")"
	check_grep "C++: a demangled member function from the cache" "	ns::Widget::plain\\(long\\)	" "$TMP/cxxwarm.res"
fi

# ---- clang: no .debug_aranges, CUs found by their own ranges ----
# The file keeps the CU range table (dw_cutable's), so a warm run answers from
# it. Compared with the fast path without a cache (the reference path finds no
# CU without .debug_aranges, so it has no lines here).
command -v clang-14 >/dev/null 2>&1 || sh scripts/install-deps.sh clang-14 >/dev/null 2>&1
if command -v clang-14 >/dev/null 2>&1; then
	mkdir -p "$TMP/cl"
	python3 "$P/symgen.py" $NF 4 "$TMP/cl" >/dev/null
	(cd "$TMP/cl" && clang-14 -g -O2 -Wl,--build-id -o prog gen0.c gen1.c gen2.c gen3.c main.c)
	cexe=$TMP/cl/prog
	cid=$(buildid "$cexe")
	rets "$cexe" >"$TMP/cl.addrs"
	cn=$(wc -l <"$TMP/cl.addrs")
	check_eq "clang: the program has no .debug_aranges (what this case is about)" 0 \
		"$(readelf -SW "$cexe" | grep -c '\.debug_aranges')"
	CC_=$TMP/clcache
	"$SYMDW" --addr-file "$TMP/cl.addrs" --raw-elf "$cexe" >"$TMP/cl.fast" 2>/dev/null
	"$SYMDW" --cache-dir "$CC_" --addr-file "$TMP/cl.addrs" --raw-elf "$cexe" >"$TMP/cl.cold" 2>/dev/null
	check_eq "clang: one cache file, named by the build-id" "$cid.symidx" "$(ls "$CC_")"
	set -- $($ED info "$CC_/$cid.symidx")
	check_eq "clang: its 5 CUs, no aranges, one CU range per CU" "5 0 5" "$5 $4 $6"
	"$SYMDW" --cache-dir "$CC_" --addr-file "$TMP/cl.addrs" --raw-elf "$cexe" >"$TMP/cl.warm" 2>/dev/null
	check_eq "clang: cold = warm = no cache on $cn call sites (lines differing)" "0 0" \
		"$(ndiff "$TMP/cl.cold" "$TMP/cl.fast") $(ndiff "$TMP/cl.warm" "$TMP/cl.fast")"
	check_eq "clang: from the file, every call site has a line but the 4 outside the program's CUs (_init, _start, __do_global_dtors_aux twice)" \
		"4 $((cn - 4))" "$(cut -f3 "$TMP/cl.warm" | grep -c '^?$') $(cut -f3 "$TMP/cl.warm" | grep -c ':[0-9][0-9]*$')"
	set -- $(readelf -SW "$cexe" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".text" { print $3, $5 }')
	python3 -c '
import sys
s, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
print("\n".join("0x%x" % a for a in range(s - 64, s + n + 64)))' "$1" "$2" >"$TMP/cl.dense"
	"$SYMDW" --quiet --addr-file "$TMP/cl.dense" --raw-elf "$cexe" >"$TMP/cl.dfast" 2>/dev/null
	"$SYMDW" --quiet --cache-dir "$CC_" --addr-file "$TMP/cl.dense" --raw-elf "$cexe" >"$TMP/cl.dwarm" 2>/dev/null
	check_eq "clang: warm = no cache on every byte of .text ($(wc -l <"$TMP/cl.dense") addresses, lines differing)" 0 \
		"$(ndiff "$TMP/cl.dwarm" "$TMP/cl.dfast")"
	# the warm run answers from the file: a name changed in it shows
	$ED rename "$CC_/$cid.symidx" f123 z123
	"$SYMDW" --cache-dir "$CC_" --addr-file "$TMP/cl.addrs" --raw-elf "$cexe" >"$TMP/cl.edited" 2>/dev/null
	check_eq "clang: the warm run takes f123's name from the file (z123 in $(grep -c 'f123' "$TMP/cl.fast") lines, no other change)" \
		"$(grep -c 'f123' "$TMP/cl.fast") $(grep -c 'f123' "$TMP/cl.fast")" \
		"$(grep -c 'z123' "$TMP/cl.edited") $(ndiff "$TMP/cl.edited" "$TMP/cl.fast")"
else
	check "clang-14 for the clang case" false
fi

# ---- a gcore'd process: the PIE at its load address and libc ----
gcore_bases "$exe" "$TMP/core"
gc=$?
if [ $gc -eq 0 ] && [ -n "$base" ] && [ -n "$libc" ]; then
	rets "$libc" >"$TMP/libcrets"
	python3 - "$base" "$lbase" "$TMP/addrs" "$TMP/libcrets" >"$TMP/core.addrs" <<'PY'
import sys
base, lbase = int(sys.argv[1], 16), int(sys.argv[2], 16)
out = ["0x%x" % (base + int(l, 16)) for l in open(sys.argv[3]) if l.strip()]
out += ["0x%x" % (lbase + int(l, 16)) for l in open(sys.argv[4]) if l.strip()]
print("\n".join(out))
PY
	n=$(wc -l <"$TMP/core.addrs")
	rm -rf "$C"
	"$SYMDW" --reference --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/coreref.res" 2>/dev/null
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/corecold.res" 2>/dev/null
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/corewarm.res" 2>/dev/null
	check_eq "core: two cache files (the program and libc)" 2 "$(ls "$C" | grep -c '\.symidx$')"
	check_eq "core: cold = reference on $n addresses, notes included (lines differing)" 0 \
		"$(ndiff "$TMP/corecold.res" "$TMP/coreref.res")"
	check_eq "core: warm = reference on $n addresses, notes included (lines differing)" 0 \
		"$(ndiff "$TMP/corewarm.res" "$TMP/coreref.res")"
	check "core: libc's addresses are named from the cache ($(grep -c 'libc\.so[^	]*+0x[0-9a-f]*	-	[^-]' "$TMP/corewarm.res"))" \
		test "$(grep -c 'libc\.so[^	]*+0x[0-9a-f]*	-	[^-]' "$TMP/corewarm.res")" -gt 1000
	# a cache written at the program's link addresses (raw, bias 0) answers for
	# the PIE loaded at 0x$base in the core: addresses are kept relative to the module
	rm -rf "$C"
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/addrs" --raw-elf "$exe" >/dev/null 2>&1
	"$SYMDW" --cache-dir "$C" --addr-file "$TMP/core.addrs" "$exe" "$TMP/core" >"$TMP/corebias.res" 2>/dev/null
	check_eq "core: the program's cache written by a raw run (bias 0) = reference at the load address" 0 \
		"$(ndiff "$TMP/corebias.res" "$TMP/coreref.res")"
else
	check "gcore of the generated program" false
fi

# ---- the reader on damaged files (tests/fuzz/regress-symcache, fuzz_symcache's code) ----
FZ=$B/tests/tools/fzrun
case $FZ in /*) ;; *) FZ=$TOP/$FZ ;; esac
if [ -x "$FZ" ]; then
	R=$TOP/tests/fuzz/regress-symcache
	grep -v '^#' "$R/EXPECT" | while read -r name why; do
		"$FZ" --symcache "$R/$name" >"$TMP/fz.out" 2>&1
		echo "$? $(sed "s|^$R/$name: ms=[0-9]* ||" "$TMP/fz.out")"
		echo "0 refused: $why" >&2
	done >"$TMP/fz.got" 2>"$TMP/fz.want"
	check_eq "$(grep -vc '^#' "$R/EXPECT") damaged files refused, each for its reason (lines differing)" 0 \
		"$(ndiff "$TMP/fz.got" "$TMP/fz.want")"
	check_eq "no file of the regression set left without an expectation" \
		"$(ls "$R" | grep -v '^EXPECT$' | sort)" "$(grep -v '^#' "$R/EXPECT" | cut -d' ' -f1 | sort)"
	"$FZ" --symcache "$TOP/tests/fuzz/corpus/symcache/seed-12funcs.symidx" >"$TMP/fz.seed" 2>&1
	check_grep "the seed itself is accepted: 3 CUs" ": ms=[0-9]+ accepted: 3 CUs, " "$TMP/fz.seed"
	"$FZ" --symcache "$TOP/tests/fuzz/corpus/symcache/seed-12funcs-clang.symidx" >"$TMP/fz.seed" 2>&1
	check_grep "the clang seed (CU range table) is accepted: 3 CUs" ": ms=[0-9]+ accepted: 3 CUs, " "$TMP/fz.seed"
fi

# ---- mprof-core: MPROF_CACHE_DIR, XDG_CACHE_HOME, HOME, --no-cache ----
if [ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] && command -v g++ >/dev/null 2>&1; then
	cc -g -O1 -fPIC -shared -o "$TMP/libe2e.so" "$P/e2e_lib.c"
	g++ -g -O1 -pie -fPIE -o "$TMP/e2e" "$P/e2e_main.cc" -L"$TMP" -le2e -Wl,-rpath,"$TMP" -pthread
	gcore_waiting "$TMP/e2e.core" "$TMP/e2e" wait >/dev/null 2>&1
	MP=$TOP/$B/mprof-core
	MPROF_CACHE_DIR=$TMP/mc "$MP" --no-cache "$TMP/e2e" "$TMP/e2e.core" >"$TMP/m0.txt" 2>"$TMP/m0.err"
	check_eq "mprof-core --no-cache: exit 0, no cache directory made" "0 no" "$? $([ -e "$TMP/mc" ] && echo yes || echo no)"
	MPROF_CACHE_DIR=off "$MP" "$TMP/e2e" "$TMP/e2e.core" >"$TMP/moff.txt" 2>/dev/null
	check_eq "MPROF_CACHE_DIR=off: same report, no directory named off" "0 no" \
		"$(ndiff "$TMP/moff.txt" "$TMP/m0.txt") $([ -e off ] && echo yes || echo no)"
	MPROF_CACHE_DIR=$TMP/mc "$MP" "$TMP/e2e" "$TMP/e2e.core" >"$TMP/m1.txt" 2>"$TMP/m1.err"
	# the program, libe2e.so, libc and libstdc++ (and libgcc_s, libm: whatever named a frame)
	nfiles=$(ls "$TMP/mc" | grep -c '\.symidx$')
	check "MPROF_CACHE_DIR: one file per module that named a frame ($nfiles, the program's among them)" \
		test "$nfiles" -ge 3 -a -f "$TMP/mc/$(buildid "$TMP/e2e").symidx" -a -f "$TMP/mc/$(buildid "$TMP/libe2e.so").symidx"
	MPROF_CACHE_DIR=$TMP/mc "$MP" "$TMP/e2e" "$TMP/e2e.core" >"$TMP/m2.txt" 2>"$TMP/m2.err"
	check_eq "report writing the cache = report from it = --no-cache report (lines differing)" "0 0" \
		"$(ndiff "$TMP/m1.txt" "$TMP/m0.txt") $(ndiff "$TMP/m2.txt" "$TMP/m0.txt")"
	check_eq "...and the same notes" "0 0" "$(ndiff "$TMP/m1.err" "$TMP/m0.err") $(ndiff "$TMP/m2.err" "$TMP/m0.err")"
	check_grep "the report names the inlined frame shapes::build" "shapes::build" "$TMP/m2.txt"
	mkdir -p "$TMP/xdg" "$TMP/home"
	env -u MPROF_CACHE_DIR XDG_CACHE_HOME="$TMP/xdg" "$MP" "$TMP/e2e" "$TMP/e2e.core" >/dev/null 2>&1
	check "no MPROF_CACHE_DIR: \$XDG_CACHE_HOME/mprof-core" test -f "$TMP/xdg/mprof-core/$(buildid "$TMP/e2e").symidx"
	env -u MPROF_CACHE_DIR -u XDG_CACHE_HOME HOME="$TMP/home" "$MP" "$TMP/e2e" "$TMP/e2e.core" >/dev/null 2>&1
	check "neither: ~/.cache/mprof-core" test -f "$TMP/home/.cache/mprof-core/$(buildid "$TMP/e2e").symidx"
fi
done_testing
