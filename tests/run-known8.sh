#!/bin/sh
# run-known8.sh - defects an earlier session noticed and left:
#  1. mprof-core snapshot PID -o NAME.zst writes a real zstd frame (zstd -t
#     accepts it, zstd -d gives a core), whose report is the plain snapshot's;
#     -o NAME.gz / NAME.xz are refused (snapshot compresses with zstd only).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (snapshots, TLS layout)"
command -v python3 >/dev/null || skip "python3 not installed"
command -v gdb >/dev/null || sh scripts/install-deps.sh gdb
command -v zstd >/dev/null || sh scripts/install-deps.sh zstd
command -v gdb >/dev/null || skip "gdb not installed"
command -v zstd >/dev/null || skip "zstd not installed"

LIB=$TOP/$B/libheapann.so
cc -g -O2 -pthread -o "$TMP/tls" tests/prog/known8_tls.c || skip "cannot compile tests/prog/known8_tls.c"

# start_waiting PROG ARGS...: run PROG under the preload until it prints "ready"
# (its output in $TMP/out, its pid in $pid); finish_waiting lets it end.
start_waiting() {
	rm -f "$TMP/fifo" "$TMP/out"; mkfifo "$TMP/fifo"
	LD_PRELOAD=$LIB "$@" <"$TMP/fifo" >"$TMP/out" &
	pid=$!
	exec 9>"$TMP/fifo"
	wait_for "$TMP/out" '^ready$'
}
finish_waiting() {
	echo >&9; exec 9>&-
	wait $pid
}

# ---- 1. mprof-core snapshot -o NAME.zst ----
start_waiting "$TMP/tls"
check "snapshot: the program is ready" test $? -eq 0
"$B/mprof-core" snapshot $pid -o "$TMP/s.core" --no-report >"$TMP/s.out" 2>&1
check_eq "snapshot -o s.core: exit 0" 0 $?
"$B/mprof-core" snapshot $pid -o "$TMP/s.core.zst" --no-report >"$TMP/z.out" 2>&1
check_eq "snapshot -o s.core.zst: exit 0" 0 $?
check_eq "snapshot -o s.core.zst: says what it wrote" "wrote $TMP/s.core.zst" "$(cat "$TMP/z.out")"
check_eq "snapshot -o s.core.zst: zstd's magic" "28b52ffd" "$(od -An -tx1 -N4 "$TMP/s.core.zst" | tr -d ' ')"
zstd -q -t "$TMP/s.core.zst"
check_eq "snapshot -o s.core.zst: zstd -t accepts it" 0 $?
zstd -q -d -o "$TMP/d.core" "$TMP/s.core.zst"
check_eq "snapshot -o s.core.zst: zstd -d decompresses it" 0 $?
check_eq "snapshot -o s.core.zst: zstd -d gives an ELF core" "7f454c46 0004" \
	"$(od -An -tx1 -N4 "$TMP/d.core" | tr -d ' ') $(od -An -tx2 -j16 -N2 "$TMP/d.core" | tr -d ' ')"
check "snapshot -o s.core.zst: no temporary left beside it" \
	test "$(ls "$TMP" | grep -c '^s\.core')" -eq 2
"$B/mprof-core" snapshot $pid -o "$TMP/r.core.zst" >"$TMP/r.txt" 2>"$TMP/r.err"
check_eq "snapshot -o r.core.zst with a report: exit 0" 0 $?
check_grep "snapshot -o r.core.zst: the report reads it as zstd" \
	'^[^ ]*r\.core\.zst: core \(zstd-compressed, [0-9,]+ bytes uncompressed\)' "$TMP/r.txt"
for f in s.core s.core.zst; do
	"$B/mprof-core" --report=stacks --top 0 "$TMP/tls" "$TMP/$f" | sed 1d >"$TMP/$f.txt"
done
check "snapshot: the .zst core's report is the plain one's" cmp -s "$TMP/s.core.txt" "$TMP/s.core.zst.txt"
"$B/mprof-core" --format json "$TMP/tls" "$TMP/s.core.zst" >"$TMP/s.json"
check_eq "snapshot: the .zst core has the three threads' blocks (3,300 bytes)" \
	"k8_setup=3/3300" "$(sums "$TMP/s.json" k8_setup)"
for ext in gz xz; do
	"$B/mprof-core" snapshot $pid -o "$TMP/s.core.$ext" --no-report >"$TMP/$ext.out" 2>&1
	check_eq "snapshot -o s.core.$ext: refused (exit 2)" 2 $?
	check_eq "snapshot -o s.core.$ext: one line says why" \
		"mprof-core: snapshot: cannot write $TMP/s.core.$ext: only zstd compression is written (name it .zst, or without a suffix for a plain core) (see mprof-core --help)" \
		"$(cat "$TMP/$ext.out")"
	check "snapshot -o s.core.$ext: no file" test ! -e "$TMP/s.core.$ext"
done
finish_waiting
check_eq "snapshot: the program ends normally" 0 $?

done_testing
