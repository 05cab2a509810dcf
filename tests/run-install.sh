#!/bin/sh
# run-install.sh - make install / make uninstall (issue 13 part 3): every file in
# its place under PREFIX (and under DESTDIR, with PREFIX's paths inside the
# files); the installed pkg-config file links a static program whose core the
# installed mprof-core reports exactly; the launcher works from a prefix moved
# elsewhere (nothing points back into the build tree); the man pages render
# without a warning; the completions complete; --version on both commands; and
# uninstall leaves no file behind.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -x "$B/heapann" ] || skip "build first"
command -v pkg-config >/dev/null 2>&1 || skip "pkg-config not installed (make deps)"
command -v man >/dev/null 2>&1 || sh scripts/install-deps.sh man-db
# make install builds nothing new (make check built it all), only the .pc file
case $B in build-san) MK="make -s SANITIZE=1" ;; *) MK="make -s B=$B" ;; esac
V=$(cat VERSION)

files() { (cd "$1" && find . ! -type d | sort); }
cat >"$TMP/want" <<'EOF'
./bin/heapann
./bin/mprof-core
./lib/libheapann.a
./lib/libheapann.so
./lib/pkgconfig/heapann-static.pc
./share/bash-completion/completions/heapann
./share/bash-completion/completions/mprof-core
./share/doc/heapann/LICENSE
./share/doc/heapann/README.md
./share/man/man1/heapann.1
./share/man/man1/mprof-core.1
./share/man/man7/libheapann.7
EOF

# ---- install into a prefix --------------------------------------------------------
A=$TMP/prefix-a
$MK install PREFIX="$A" >"$TMP/inst.out" 2>&1
check_eq "install: exit 0" 0 $?
files "$A" >"$TMP/got"
check "install: exactly the 12 files" cmp -s "$TMP/want" "$TMP/got" || diff "$TMP/want" "$TMP/got" | sed 's/^/    # /'
check "install: programs executable" test -x "$A/bin/heapann" -a -x "$A/bin/mprof-core"
check_eq "install: LICENSE is the project's" "$(cat LICENSE)" "$(cat "$A/share/doc/heapann/LICENSE")"
check_eq "mprof-core --version" "mprof-core $V" "$("$A/bin/mprof-core" --version)"
check_eq "heapann --version" "heapann $V" "$("$A/bin/heapann" --version)"
check "no build-tree path in the installed programs and .pc" \
	sh -c "! grep -q '$TOP/$B' '$A/bin/heapann' '$A/bin/mprof-core' '$A/lib/pkgconfig/heapann-static.pc'"

# ---- the pkg-config file: installed paths, and it links a static program ---------------
PC="env PKG_CONFIG_PATH=$A/lib/pkgconfig pkg-config"
check_eq "pc: libdir is the installed one" "$A/lib" "$($PC --variable=libdir heapann-static)"
check_eq "pc: version" "$V" "$($PC --modversion heapann-static)"
$PC --libs heapann-static >"$TMP/libs"
check_grep "pc: links the installed archive" " $A/lib/libheapann\.a " "$TMP/libs"
src=examples/massif_example.c
line() { grep -n "MARK:$1 " "$src" | cut -d: -f1; }
exe=$TMP/massif-static
# shellcheck disable=SC2046
cc -static -g -O1 -o "$exe" "$src" $($PC --cflags --libs heapann-static) 2>"$TMP/cc.err"
check_eq "pc: a static program links with it" 0 $?
if [ -x "$exe" ] && command -v gdb >/dev/null 2>&1; then
	gcore_waiting "$TMP/static.core" "$exe" wait
	"$A/bin/mprof-core" --format=json "$exe" "$TMP/static.core" >"$TMP/s.json" 2>"$TMP/s.err"
	check_eq "static: the installed mprof-core reports its core (exit 0)" 0 $?
	# a static libc allocates a few blocks at start-up, before any unwinder: no frames
	check "static: the program's 13 framed blocks, 20000 bytes" python3 tests/jstack.py "$TMP/s.json" framed 13 20000
	check "static: main's 10 x 1000 B" python3 tests/jstack.py "$TMP/s.json" stack 10000 10 "main:$(line main)"
	check "static: g from f" python3 tests/jstack.py "$TMP/s.json" stack 4000 1 "g:$(line g)" "f:$(line f-calls-g)" "main:$(line main-calls-f)"
	check "static: g from main" python3 tests/jstack.py "$TMP/s.json" stack 4000 1 "g:$(line g)" "main:$(line main-calls-g)"
	check "static: f" python3 tests/jstack.py "$TMP/s.json" stack 2000 1 "f:$(line f)" "main:$(line main-calls-f)"
else
	echo "# no gdb: the static program's core is not checked"
fi

# ---- man pages render without a warning ---------------------------------------------------
for page in man1/heapann.1 man1/mprof-core.1 man7/libheapann.7; do
	MANWIDTH=80 man --warnings -l -Tutf8 "$A/share/man/$page" >/dev/null 2>"$TMP/man.err"
	check_eq "man -l $page: no warning" "" "$(cat "$TMP/man.err")"
	MANWIDTH=80 man -l "$A/share/man/$page" >"$TMP/man.out" 2>/dev/null
	check_grep "man -l $page: rendered" '^NAME$' "$TMP/man.out"
done
MANWIDTH=80 man -l "$A/share/man/man7/libheapann.7" 2>/dev/null >"$TMP/man7"
for v in HEAPANN_DEPTH HEAPANN_UNWIND HEAPANN_GUARD HEAPANN_ABORT_ON_CORRUPTION HEAPANN_CHECK_INTERVAL \
	HEAPANN_CHECK_SLOTS HEAPANN_STATS HEAPANN_STATS_STACKS HEAPANN_SNAPSHOT HEAPANN_SNAPSHOT_DIR \
	HEAPANN_SNAPSHOT_WAIT; do
	check_grep "libheapann(7) describes $v" "^       $v\$" "$TMP/man7"
done
# and no variable the library reads is left out of it
grep -ohE '"HEAPANN_[A-Z_]+' annotate/*.c | tr -d '"' | sort -u >"$TMP/vars"
while read -r v; do
	check_grep "libheapann(7) has $v, which annotate/ reads" "^       $v\$" "$TMP/man7"
done <"$TMP/vars"

# ---- bash completion ---------------------------------------------------------------------------
if command -v bash >/dev/null 2>&1; then
	C=$A/share/bash-completion/completions
	bash -c ". '$C/heapann'; COMP_WORDS=(heapann --keep); COMP_CWORD=1; _heapann; echo \"\${COMPREPLY[*]}\"" >"$TMP/c1" 2>&1
	check_eq "completion: heapann --keep" "--keep-core" "$(cat "$TMP/c1")"
	bash -c ". '$C/heapann'; COMP_WORDS=(heapann --report tree,le); COMP_CWORD=2; _heapann; echo \"\${COMPREPLY[*]}\"" >"$TMP/c2" 2>&1
	check_eq "completion: heapann --report tree,le" "tree,leaks" "$(cat "$TMP/c2")"
	bash -c ". '$C/mprof-core'; COMP_WORDS=(mprof-core snapshot --pr); COMP_CWORD=2; _mprof_core; echo \"\${COMPREPLY[*]}\"" >"$TMP/c3" 2>&1
	check_eq "completion: mprof-core snapshot --pr" "--prog" "$(cat "$TMP/c3")"
	bash -c ". '$C/mprof-core'; COMP_WORDS=(mprof-core --format p); COMP_CWORD=2; _mprof_core; echo \"\${COMPREPLY[*]}\"" >"$TMP/c4" 2>&1
	check_eq "completion: mprof-core --format p" "pprof" "$(cat "$TMP/c4")"
fi

# ---- the launcher from a moved prefix ------------------------------------------------------------
# install to A, move it to M: heapann must find M/lib/libheapann.so and
# M/bin/mprof-core by its own location, nothing in the build tree
M=$TMP/prefix-moved
mv "$A" "$M"
"$M/bin/heapann" -o "$TMP/rep" grep -m1 -o '/[^ ]*libheapann\.so' /proc/self/maps >"$TMP/out" 2>"$TMP/e"
check_eq "moved: the program gets the moved prefix's library" "$M/lib/libheapann.so" "$(cat "$TMP/out")"
"$M/bin/heapann" sh -c 'exit 3' 2>"$TMP/e"
check_eq "moved: the program's status" 3 $?
if strings "$M/lib/libheapann.so" | grep -q HEAPANN_SNAPSHOT; then
	cc -g -O1 -fno-omit-frame-pointer -o "$TMP/massif" "$src"
	(ulimit -c 0; TMPDIR=$TMP "$M/bin/heapann" --snapshot exit,signal,abort --format=json "$TMP/massif" abort >"$TMP/m.json" 2>"$TMP/m.err")
	check_eq "moved: heapann PROG: the program's status (abort)" 134 $?
	check "moved: heapann PROG: 13 blocks, 20000 bytes" python3 tests/jstack.py "$TMP/m.json" total 13 20000
	check "moved: heapann PROG: main's 10 x 1000 B" python3 tests/jstack.py "$TMP/m.json" stack 10000 10 "main:$(line main)"
else
	echo "# $B/libheapann.so writes no snapshots yet (issue 13 part 1): the moved launcher's report is not checked"
fi
mv "$M" "$A"

# ---- uninstall ---------------------------------------------------------------------------------------
$MK uninstall PREFIX="$A" >"$TMP/un.out" 2>&1
check_eq "uninstall: exit 0" 0 $?
check_eq "uninstall: no file left in the prefix" "" "$(files "$A")"

# ---- DESTDIR: staged under it, PREFIX's paths inside ----------------------------------------------
S=$TMP/stage
$MK install DESTDIR="$S" PREFIX=/opt/heapann-test >"$TMP/inst2.out" 2>&1
check_eq "DESTDIR install: exit 0" 0 $?
files "$S/opt/heapann-test" >"$TMP/got2"
check "DESTDIR install: the 12 files under DESTDIR/PREFIX" cmp -s "$TMP/want" "$TMP/got2"
check_grep "DESTDIR install: the .pc file names PREFIX, not DESTDIR" '^libdir=/opt/heapann-test/lib$' "$S/opt/heapann-test/lib/pkgconfig/heapann-static.pc"
$MK uninstall DESTDIR="$S" PREFIX=/opt/heapann-test >"$TMP/un2.out" 2>&1
check_eq "DESTDIR uninstall: no file left" "" "$(files "$S")"
done_testing
