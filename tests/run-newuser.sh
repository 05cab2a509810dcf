#!/bin/sh
# run-newuser.sh - the friction a new user met (issue 13 parts 4 and 5): make
# checks its dependencies and names the Debian package instead of installing it;
# install-deps.sh on a system without dpkg; a core of a program that ran without
# libheapann is an error naming the cause found in the core (no preload, a
# relative LD_PRELOAD, a static program); snapshot --prog FILE for a program
# rebuilt since it started; runall.sh names each script before it runs.
. tests/lib.sh
[ -x "$B/mprof-core" ] || skip "build first"
M=$B/mprof-core

# ---- build dependencies: checked, never installed by make ----------------------------------
sh scripts/check-build-deps.sh libelf:libelf-dev libdw:libdw-dev >"$TMP/out" 2>"$TMP/err"
check_eq "deps: all there: exit 0" 0 $?
check_eq "deps: all there: silent" "" "$(cat "$TMP/out" "$TMP/err")"
sh scripts/check-build-deps.sh libelf:libelf-dev no-such-lib-heapann:libnosuch-dev >"$TMP/out" 2>"$TMP/err"
check_eq "deps: one missing: exit 1" 1 $?
check_grep "deps: names it and its Debian package" '^make: library no-such-lib-heapann not found by pkg-config \(Debian package libnosuch-dev\)$' "$TMP/err"
check "deps: libelf (present) is not named" sh -c "! grep -q 'libelf' '$TMP/err'"
CC=no-such-cc-heapann sh scripts/check-build-deps.sh libelf:libelf-dev >"$TMP/out" 2>"$TMP/err"
check_eq "deps: no compiler: exit 1" 1 $?
check_grep "deps: no compiler: says so" "^make: no C compiler: 'no-such-cc-heapann' not found \(Debian package gcc" "$TMP/err"
# make's own rules: the first build checks, nothing runs apt-get or install-deps
make -n B="$TMP/fresh" all >"$TMP/plan" 2>&1
check_grep "make: a fresh build checks the dependencies first" 'check-build-deps\.sh libelf:libelf-dev libdw:libdw-dev' "$TMP/plan"
check "make: a fresh build installs nothing" sh -c "! grep -Eq 'apt-get|install-deps' '$TMP/plan'"
make -n deps >"$TMP/plan" 2>&1
check_grep "make deps: installs the build dependencies' packages" 'install-deps\.sh .*libelf-dev libdw-dev' "$TMP/plan"
make -n check-deps >"$TMP/plan" 2>&1
check_grep "make check-deps: the test tools" 'install-deps\.sh .*gdb valgrind python3 perl' "$TMP/plan"
# without dpkg/apt-get: not an error, and it says what it would have wanted
mkdir "$TMP/nodpkg"
PATH=$TMP/nodpkg /bin/sh scripts/install-deps.sh gdb >"$TMP/out" 2>"$TMP/err"
check_eq "install-deps without dpkg: exit 0" 0 $?
check_grep "install-deps without dpkg: says so" '^install-deps: no dpkg/apt-get here .*: gdb$' "$TMP/err"

# ---- a core of a program that ran without the library ---------------------------------------
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb
if command -v gdb >/dev/null 2>&1; then
	cc -g -o "$TMP/prog" examples/massif_example.c
	# coreof OUT PRELOAD PROG: gcore of PROG waiting, run with LD_PRELOAD=PRELOAD
	coreof() {
		rm -f "$TMP/fifo" "$TMP/o"; mkfifo "$TMP/fifo"
		(cd "$TMP" && LD_PRELOAD=$2 exec "$3" wait) <"$TMP/fifo" >"$TMP/o" 2>/dev/null &
		cpid=$!
		exec 9>"$TMP/fifo"
		n=0; while [ ! -s "$TMP/o" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
		make_gcore $cpid "$1"
		echo >&9; exec 9>&-
		wait $cpid
	}
	coreof "$TMP/c.plain" "" "$TMP/prog"
	"$M" "$TMP/prog" "$TMP/c.plain" >"$TMP/out" 2>"$TMP/err"
	check_eq "no preload: exit 1" 1 $?
	check_grep "no preload: says so and how" "^mprof-core: $TMP/c.plain: no block annotated by libheapann and no statistics region: the program ran without libheapann: run it as heapann $TMP/prog or with LD_PRELOAD=/absolute/path/libheapann.so" "$TMP/err"
	check_eq "no preload: one line" 1 "$(wc -l <"$TMP/err")"
	# relative to the repository, but the program runs in $TMP: the loader skips it
	coreof "$TMP/c.rel" "$B/libheapann.so" "$TMP/prog"
	"$M" "$TMP/prog" "$TMP/c.rel" >"$TMP/out" 2>"$TMP/err"
	check_eq "relative LD_PRELOAD: exit 1" 1 $?
	check_grep "relative LD_PRELOAD: names it" "^mprof-core: $TMP/c.rel: no block annotated .*: its environment has LD_PRELOAD=$B/libheapann\\.so, a relative path .*; give an absolute path, or run heapann $TMP/prog\$" "$TMP/err"
	coreof "$TMP/c.abs" "$TMP/nowhere/libheapann.so" "$TMP/prog"
	"$M" "$TMP/prog" "$TMP/c.abs" >"$TMP/out" 2>"$TMP/err"
	check_grep "absolute LD_PRELOAD not there: names it" "its environment has LD_PRELOAD=$TMP/nowhere/libheapann\\.so, but the loader did not load it" "$TMP/err"
	if cc -static -g -o "$TMP/sprog" examples/massif_example.c 2>/dev/null; then
		coreof "$TMP/c.static" "$TOP/$B/libheapann.so" "$TMP/sprog"
		"$M" "$TMP/sprog" "$TMP/c.static" >"$TMP/out" 2>"$TMP/err"
		check_eq "static program: exit 1" 1 $?
		check_grep "static program: says the kit is needed" "^mprof-core: $TMP/c.static: no block annotated .*: $TMP/sprog is statically linked, so LD_PRELOAD cannot reach it: link it with the static kit" "$TMP/err"
	fi
	# with the library: the same program's core reports, exit 0 (the rule is not too wide)
	coreof "$TMP/c.ok" "$TOP/$B/libheapann.so" "$TMP/prog"
	"$M" "$TMP/prog" "$TMP/c.ok" >"$TMP/out" 2>"$TMP/err"
	check_eq "with the library: exit 0" 0 $?
	check_grep "with the library: its 13 blocks" '^live blocks: 13, requested bytes: 20,000' "$TMP/out"

	# every block freed (an exit snapshot's usual state): a note points at the statistics
	cat >"$TMP/freed.c" <<'EOF'
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	void *p[7];
	char c;

	for (int i = 0; i < 7; i++)
		p[i] = malloc(100 + i);
	for (int i = 0; i < 7; i++)
		free(p[i]);
	if (write(1, "ready\n", 6) != 6)
		return 1;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	return 0;
}
EOF
	cc -g -o "$TMP/freed" "$TMP/freed.c"
	coreof "$TMP/c.freed" "$TOP/$B/libheapann.so" "$TMP/freed"
	"$M" "$TMP/freed" "$TMP/c.freed" >"$TMP/out" 2>"$TMP/err"
	check_eq "all freed: exit 0" 0 $?
	check_grep "all freed: no live block" '^live blocks: 0, requested bytes: 0,' "$TMP/out"
	check_eq "all freed: a note says where the run is" "mprof-core: note: no live block in $TMP/c.freed (all 7 allocations were freed); the whole run: --report=direct,leaks,graph,timeline" "$(cat "$TMP/err")"
	"$M" --report=direct "$TMP/freed" "$TMP/c.freed" >"$TMP/out" 2>"$TMP/err"
	check_grep "all freed: --report=direct: main's 7 calls, 721 bytes" '^ *100\.00% +721 +0 +7 .* main$' "$TMP/out"
	check_eq "all freed: no note once a report is chosen" "" "$(cat "$TMP/err")"
	"$M" -q "$TMP/freed" "$TMP/c.freed" >"$TMP/out" 2>"$TMP/err"
	check_eq "all freed: -q: no note" "" "$(cat "$TMP/err")"

	# ---- snapshot --prog: the program file replaced since the process started ------------------
	cp "$TMP/prog" "$TMP/prog.copy"
	rm -f "$TMP/fifo" "$TMP/o"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$TMP/prog" wait <"$TMP/fifo" >"$TMP/o" 2>/dev/null &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while [ ! -s "$TMP/o" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	rm -f "$TMP/prog"   # "rebuilt": the running file is gone
	"$M" snapshot "$pid" -o "$TMP/s.core" >"$TMP/out" 2>"$TMP/err"
	check_eq "snapshot of a deleted program: exit 1" 1 $?
	check_grep "snapshot of a deleted program: advises --prog" "was deleted or replaced since it started: .* \(mprof-core snapshot --prog FILE $pid\)\$" "$TMP/err"
	"$M" snapshot --prog "$TMP/prog.copy" "$pid" -o "$TMP/s.core" >"$TMP/out" 2>"$TMP/err"
	check_eq "snapshot --prog FILE: exit 0" 0 $?
	check_grep "snapshot --prog FILE: reports its 13 blocks" '^live blocks: 13, requested bytes: 20,000' "$TMP/out"
	"$M" snapshot --prog="$TMP/other" "$pid" --no-report -o "$TMP/s2.core" >"$TMP/out" 2>"$TMP/err"
	check_eq "snapshot --prog=FILE --no-report: writes the core" "wrote $TMP/s2.core" "$(cat "$TMP/out")"
	echo >&9; exec 9>&-
	wait $pid
else
	echo "# no gdb: the cores of this part are not made"
fi

# ---- runall.sh names a script before it runs ---------------------------------------------------
mkdir -p "$TMP/r/tests"
cp tests/runall.sh "$TMP/r/tests/"
cat >"$TMP/r/tests/run-slow.sh" <<'EOF'
n=0; while [ ! -e go ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
[ -e go ] && echo "ok 1 - went" && echo "1 passed, 0 failed" && exit 0
echo "not ok 1 - went"; echo "0 passed, 1 failed"; exit 1
EOF
(cd "$TMP/r" && B=b HEARTBEAT=1 sh tests/runall.sh >out 2>&1) &
rp=$!
n=0; while ! grep -q '^run-slow \.\.\.$' "$TMP/r/out" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
check "runall: 'run-slow ...' shown while it runs" grep -q '^run-slow \.\.\.$' "$TMP/r/out"
n=0; while ! grep -q '^run-slow \.\.\. 2s' "$TMP/r/out" && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
check_grep "runall: and that it still runs, every HEARTBEAT seconds" '^run-slow \.\.\. 2s, 0 checks passed so far$' "$TMP/r/out"
touch "$TMP/r/go"
wait $rp
check_grep "runall: then its result" '^run-slow: 1 passed, 0 failed' "$TMP/r/out"
check_grep "runall: says where the logs are" '^\(full output of each test: b/tests/log/NAME\.out and NAME\.err\)$' "$TMP/r/out"
done_testing
