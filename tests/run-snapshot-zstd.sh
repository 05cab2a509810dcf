#!/bin/sh
# run-snapshot-zstd.sh - HEAPANN_SNAPSHOT_COMPRESS=zstd (issue 13, point 1's last
# piece): the writer pipes the core through the zstd program into
# PROG.PID.N.core.zst. End to end:
#  - exit: tests/prog/lost_prog.c's .zst exit core gives the same report as its
#    plain exit core (blocks, bytes, stacks, the four loss categories, exactly);
#    zstd -t accepts it; gdb reads it after zstd -d; only the .zst is left;
#  - fallback: zstd not on PATH, HEAPANN_ZSTD naming a missing program or one that
#    fails: one line says why, and the plain core is written and reads; a program
#    with stdin and stdout closed still gets its .zst;
#  - options: none, zstd:LEVEL, unknown values warned about;
#  - holes: a 320 MiB heap of zeros (tests/prog/snap_sparse.c) goes through the
#    pipe as zeros and takes almost no disk;
#  - threads: SIGUSR2 snapshots of tests/prog/snap_threads.c while its 8 threads
#    allocate, then of the settled process: every block, all 9 threads;
#  - heapann --compress=zstd and the variable passed through: the same report.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "HEAPANN_SNAPSHOT is x86-64 only"
command -v python3 >/dev/null || skip "python3 not installed"
command -v zstd >/dev/null || sh scripts/install-deps.sh zstd
command -v gdb >/dev/null || sh scripts/install-deps.sh gdb
command -v zstd >/dev/null || skip "zstd not installed"
command -v gdb >/dev/null || skip "gdb not installed"

export TMPDIR="$TMP"   # heapann's private directories
LIB=$TOP/$B/libheapann.so
ZSTD=$(command -v zstd)
for p in snap_threads snap_sparse lost_prog; do
	cc -g -O2 -pthread -o "$TMP/$p" "tests/prog/$p.c" || skip "cannot compile tests/prog/$p.c"
done
cc -g -O1 -fno-omit-frame-pointer -o "$TMP/massif_example" examples/massif_example.c ||
	skip "cannot compile examples/massif_example.c"

# wait_for and sums: tests/lib.sh

# report EXE CORE OUT: the text report of stacks and losses, less the two lines
# that name the file or depend on where the stack was (the first, and the roots')
report() {
	"$B/mprof-core" --report=stacks,lost --top 0 "$1" "$2" >"$3.full" 2>"$3.err"
	r=$?
	sed '1d; /^roots: /d' "$3.full" >"$3"
	return $r
}

# ---- exit: the .zst core's report is the plain core's ----
exe=$TMP/lost_prog
mkdir "$TMP/plain" "$TMP/z"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/plain" LD_PRELOAD=$LIB "$exe" 2>/dev/null
check_eq "plain: lost_prog exits 0" 0 $?
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_SNAPSHOT_DIR="$TMP/z" LD_PRELOAD=$LIB \
	"$exe" 2>"$TMP/z.err"
check_eq "zstd: lost_prog exits 0" 0 $?
set -- "$TMP"/plain/lost_prog.*.1.core; plain=$1
set -- "$TMP"/z/lost_prog.*.1.core.zst; zc=$1
pid=$(basename "$zc" | cut -d. -f2)
check "zstd: DIR/PROG.PID.1.core.zst written" test -s "$zc"
check_eq "zstd: only the .zst in the directory (no .part, no plain core)" \
	"lost_prog.$pid.1.core.zst" "$(ls "$TMP/z")"
check_eq "zstd: the one line on stderr names it" "heapann: snapshot written to $zc" "$(cat "$TMP/z.err")"
check_eq "zstd: a private file, as the plain core (mode 600)" 600 "$(stat -c %a "$zc")"
zstd -q -t "$zc"
check_eq "zstd -t accepts it" 0 $?
check_eq "zstd: its magic is zstd's" "28b52ffd" "$(od -An -tx1 -N4 "$zc" | tr -d ' ')"
report "$exe" "$plain" "$TMP/plain.txt"
check_eq "plain: mprof-core reads the plain core" 0 $?
report "$exe" "$zc" "$TMP/z.txt"
check_eq "zstd: mprof-core reads the .zst core" 0 $?
check_grep "zstd: the report says it was compressed" '^[^ ]*\.core\.zst: core \(zstd-compressed, [0-9,]+ bytes uncompressed\)' "$TMP/z.txt.full"
check "zstd: the same report as the plain core's (stacks, losses)" cmp -s "$TMP/plain.txt" "$TMP/z.txt"
"$B/mprof-core" --format=json --report=lost "$exe" "$zc" >"$TMP/z.json" 2>/dev/null
check "zstd: definitely lost 1302 blocks, 55264 bytes" python3 tests/lostcmp.py totals "$TMP/z.json" "definitely lost" 1302 55264
check "zstd: indirectly lost 200 blocks, 6400 bytes" python3 tests/lostcmp.py totals "$TMP/z.json" "indirectly lost" 200 6400
check "zstd: possibly lost 100 blocks, 6400 bytes" python3 tests/lostcmp.py totals "$TMP/z.json" "possibly lost" 100 6400
check "zstd: still reachable 650 blocks, 29200 bytes" python3 tests/lostcmp.py totals "$TMP/z.json" "still reachable" 650 29200
zstd -q -d -o "$TMP/z.core" "$zc"
check_eq "zstd -d decompresses it" 0 $?
check_eq "zstd -d: as long as the core's last segment says" \
	"$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", d, 32); n, = struct.unpack_from("<H", d, 56)
print(max(o + s for t, f, o, v, p, s, m, a in (struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i) for i in range(n))))' "$TMP/z.core")" \
	"$(stat -c %s "$TMP/z.core")"
gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' "$exe" "$TMP/z.core" \
	-ex 'info threads' -ex bt -ex 'print (int)((char *)g_kept[7])[39]' >"$TMP/gdb.out" 2>&1
check_grep "gdb: the decompressed core's thread is the process's" "^\* 1 +.*LWP $pid\)" "$TMP/gdb.out"
check_grep "gdb: bt reaches main" " in main \(" "$TMP/gdb.out"
check_grep "gdb: g_kept[7]'s block holds 0x22 (heap memory through the pipe)" '^\$1 = 34$' "$TMP/gdb.out"
rm -f "$TMP/z.core"

# ---- fallback: the snapshot is never lost to compression ----
# fallback TAG WANT-LINE ENV...: lost_prog's exit snapshot with ENV; checks that
# the first line on stderr is WANT-LINE, the second names the plain core, and that
# core's report is the plain one's.
fallback() {
	tag=$1 want=$2; shift 2
	mkdir "$TMP/$tag"
	env HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_SNAPSHOT_DIR="$TMP/$tag" \
		LD_PRELOAD=$LIB "$@" "$exe" 2>"$TMP/$tag.err"
	check_eq "$tag: the program's status unchanged" 0 $?
	f=$(ls "$TMP/$tag")
	check_eq "$tag: the plain core written, nothing else" 1 "$(echo "$f" | grep -c '^lost_prog\.[0-9]*\.1\.core$')"
	check_eq "$tag: the first line says why and that the plain core follows" "$want" "$(sed -n 1p "$TMP/$tag.err")"
	check_eq "$tag: the second names it; nothing else" \
		"heapann: snapshot written to $TMP/$tag/$f|2" "$(sed -n 2p "$TMP/$tag.err")|$(wc -l <"$TMP/$tag.err")"
	report "$exe" "$TMP/$tag/$f" "$TMP/$tag.txt"
	check "$tag: its report is the plain core's" cmp -s "$TMP/plain.txt" "$TMP/$tag.txt"
}
fallback nopath "heapann: snapshot: zstd not found on PATH (HEAPANN_ZSTD names it); writing the plain core instead" \
	PATH=/nonexistent
fallback missing "heapann: snapshot: cannot run $TMP/no-zstd; writing the plain core instead" \
	HEAPANN_ZSTD="$TMP/no-zstd"
fallback fails "heapann: snapshot: /bin/false failed with status 1; writing the plain core instead" \
	HEAPANN_ZSTD=/bin/false
printf '#!/bin/sh\nexec "%s" "$@"\n' "$ZSTD" >"$TMP/myzstd"; chmod +x "$TMP/myzstd"
mkdir "$TMP/named"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_ZSTD="$TMP/myzstd" PATH=/nonexistent \
	HEAPANN_SNAPSHOT_DIR="$TMP/named" LD_PRELOAD=$LIB "$exe" 2>/dev/null
check_eq "HEAPANN_ZSTD names the program, PATH not needed" 1 "$(ls "$TMP/named" | grep -c '\.1\.core\.zst$')"
# a program that closed its stdin and stdout: the pipe and the file get fds 0 and 1
mkdir "$TMP/closed"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_SNAPSHOT_DIR="$TMP/closed" LD_PRELOAD=$LIB \
	"$exe" <&- >&- 2>"$TMP/closed.err"
set -- "$TMP"/closed/lost_prog.*.1.core.zst
check "stdin and stdout closed: the .zst written, zstd -t accepts it" zstd -q -t "$1"
report "$exe" "$1" "$TMP/closed.txt"
check "stdin and stdout closed: the same report" cmp -s "$TMP/plain.txt" "$TMP/closed.txt"
# a program that ignores SIGCHLD (daemons do; an ignored disposition survives
# exec; bash passes it on, dash does not): the kernel would reap zstd itself and
# the writer's wait would fail
mkdir "$TMP/sigign"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_SNAPSHOT_DIR="$TMP/sigign" LD_PRELOAD=$LIB \
	bash -c "trap '' CHLD; exec '$exe'" 2>"$TMP/sigign.err"
check_eq "SIGCHLD ignored: the .zst written, no fallback" \
	"1 0" "$(ls "$TMP/sigign" | grep -c '\.1\.core\.zst$') $(grep -c 'plain core instead' "$TMP/sigign.err")"
mkdir "$TMP/quiet"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_QUIET=1 PATH=/nonexistent \
	HEAPANN_SNAPSHOT_DIR="$TMP/quiet" LD_PRELOAD=$LIB "$exe" 2>"$TMP/quiet.err"
check_eq "HEAPANN_QUIET=1: the fallback is silent, the plain core written" "0 1" \
	"$(wc -c <"$TMP/quiet.err") $(ls "$TMP/quiet" | grep -c '\.1\.core$')"

# ---- options ----
# opt TAG VALUE: lost_prog's exit snapshot with HEAPANN_SNAPSHOT_COMPRESS=VALUE in
# $TMP/TAG; stderr in $TMP/TAG.err
opt() {
	mkdir "$TMP/$1"
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=$2 HEAPANN_SNAPSHOT_DIR="$TMP/$1" \
		LD_PRELOAD=$LIB "$exe" 2>"$TMP/$1.err"
}
opt none none
check_eq "none: the plain core, one line" "1 1" \
	"$(ls "$TMP/none" | grep -c '\.1\.core$') $(wc -l <"$TMP/none.err")"
opt lz4 lz4
check_eq "unknown value: one warning" \
	"heapann: HEAPANN_SNAPSHOT_COMPRESS: unknown value 'lz4' ignored (zstd, zstd:LEVEL or none): the cores are not compressed" \
	"$(sed -n 1p "$TMP/lz4.err")"
check_eq "unknown value: the plain core" 1 "$(ls "$TMP/lz4" | grep -c '\.1\.core$')"
opt lvl0 zstd:0
check_grep "zstd:0: level out of range warned about" "^heapann: HEAPANN_SNAPSHOT_COMPRESS: zstd level not 1 to 19 in 'zstd:0' ignored" "$TMP/lvl0.err"
opt lvl19 zstd:19
set -- "$TMP"/lvl19/*.core.zst
report "$exe" "$1" "$TMP/lvl19.txt"
check "zstd:19: the same report" cmp -s "$TMP/plain.txt" "$TMP/lvl19.txt"
opt lvl1 zstd:1
set -- "$TMP"/lvl1/*.core.zst
s1=$(stat -c %s "$1"); s19=$(stat -c %s "$TMP"/lvl19/*.core.zst)
echo "# lost_prog's core: $s1 bytes at level 1, $s19 at level 19"
check "zstd:1 and zstd:19 reach zstd (level 19's file is smaller: $s19 < $s1)" test "$s19" -lt "$s1"

# ---- holes: zeros through the pipe ----
mkdir "$TMP/sparse"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_SNAPSHOT_DIR="$TMP/sparse" LD_PRELOAD=$LIB \
	"$TMP/snap_sparse" >/dev/null 2>&1
check_eq "sparse: program exits 0" 0 $?
set -- "$TMP"/sparse/snap_sparse.*.1.core.zst
size=$(stat -c %s "$1")
full=$(zstd -l -v "$1" 2>/dev/null | sed -n 's/.*Decompressed Size:.*(\([0-9]*\) B).*/\1/p')
echo "# sparse: $size bytes of .zst"
check "sparse: the 320 MiB heap of zeros takes under 1 MiB of .zst ($size bytes)" test "$size" -lt $((1 << 20))
"$B/mprof-core" --format=json --top 0 "$TMP/snap_sparse" "$1" >"$TMP/sp.json" 2>/dev/null
check_eq "sparse: every block found" "sparse_calloc=1/268435456 sparse_zeroed=1/67108864 sparse_small=100/100000" \
	"$(sums "$TMP/sp.json" sparse_calloc sparse_zeroed sparse_small)"
rm -f "$1"

# ---- threads: signal snapshots compressed while 8 threads allocate ----
mkdir "$TMP/thr"
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
timeout 300 env HEAPANN_SNAPSHOT=signal HEAPANN_SNAPSHOT_COMPRESS=zstd HEAPANN_SNAPSHOT_DIR="$TMP/thr" \
	LD_PRELOAD=$LIB "$TMP/snap_threads" <"$TMP/fifo" >"$TMP/thr.out" 2>"$TMP/thr.err" &
tpid=$!
exec 9>"$TMP/fifo"
wait_for "$TMP/thr.out" '^running'
prog=$(ps -o pid= --ppid $tpid | tr -d ' ')
done_n=0 read_ok=0
i=1
while [ $i -le 10 ]; do
	kill -USR2 "$prog" 2>/dev/null || break
	f=$TMP/thr/snap_threads.$prog.$i.core.zst
	wait_for "$f" || break
	done_n=$i
	"$B/mprof-core" -q --format=json --top 1 "$TMP/snap_threads" "$f" >/dev/null 2>&1 &&
		zstd -q -t "$f" && read_ok=$((read_ok + 1))
	rm -f "$f"
	i=$((i + 1))
done
check_eq "threads: 10 compressed snapshots while the threads allocate" 10 $done_n
check_eq "threads: each passes zstd -t and reads without damage" 10 $read_ok
echo stop >&9
wait_for "$TMP/thr.out" '^settled'
kill -USR2 "$prog"
f=$TMP/thr/snap_threads.$prog.11.core.zst
wait_for "$f"
check "threads: snapshot 11 of the settled process" test -s "$f"
echo go >&9
exec 9>&-
wait $tpid
check_eq "threads: no deadlock, the program ends normally" 0 $?
check_eq "threads: no zstd left running, no .part left" "0 0" \
	"$(pgrep -P "$prog" 2>/dev/null | wc -l) $(ls "$TMP/thr" | grep -c part)"
want=$(sed -n 's/^settled blocks=\([0-9]*\) bytes=\([0-9]*\)$/\1\/\2/p' "$TMP/thr.out")
"$B/mprof-core" --format=json --top 0 "$TMP/snap_threads" "$f" >"$TMP/t.json" 2>/dev/null
check_eq "threads: settled core reads without damage" 0 $?
check_eq "threads: every settled block found ($want)" "settle_alloc=$want worker_alloc=0/0" \
	"$(sums "$TMP/t.json" settle_alloc worker_alloc)"
check_eq "threads: 9 threads in the settled core" 9 \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"])' "$TMP/t.json")"

# ---- heapann: --compress=zstd, and the variable passed through ----
H=$B/heapann
if [ -x "$H" ]; then
	mx=$TMP/massif_example
	(ulimit -c 0; "$H" --snapshot exit,signal,abort "$mx" abort >"$TMP/h0.txt" 2>/dev/null)
	(ulimit -c 0; "$H" --compress=zstd --snapshot exit,signal,abort "$mx" abort >"$TMP/h1.txt" 2>"$TMP/h1.err")
	check_eq "heapann --compress=zstd: the program's status, 128+6" 134 $?
	check_grep "heapann --compress=zstd: the .zst snapshot is the one reported" \
		"^heapann: snapshot written to $TMP/heapann\.[A-Za-z0-9]+/massif_example\.[0-9]+\.1\.core\.zst\$" "$TMP/h1.err"
	check_grep "heapann --compress=zstd: read as compressed" '^[^ ]*\.core\.zst: core \(zstd-compressed' "$TMP/h1.txt"
	sed 1d "$TMP/h0.txt" >"$TMP/h0.body"; sed 1d "$TMP/h1.txt" >"$TMP/h1.body"
	check "heapann --compress=zstd: the same report as without" cmp -s "$TMP/h0.body" "$TMP/h1.body"
	check_grep "heapann --compress=zstd: 13 blocks, 20,000 bytes" '^live blocks: 13, requested bytes: 20,000' "$TMP/h1.txt"
	check_eq "heapann --compress=zstd: four stacks" 4 "$(grep -c '^#[0-9]*: ' "$TMP/h1.txt")"
	HEAPANN_SNAPSHOT_COMPRESS=zstd "$H" --no-report --keep-core "$TMP/keep" "$mx" >/dev/null 2>"$TMP/h2.err"
	check_eq "heapann: HEAPANN_SNAPSHOT_COMPRESS from the environment reaches the program" 1 \
		"$(ls "$TMP/keep" | grep -c '^massif_example\.[0-9]*\.1\.core\.zst$')"
	check_grep "heapann: and the kept .zst is named with the command to report it" \
		"^heapann: snapshot kept: $TMP/keep/massif_example\.[0-9]+\.1\.core\.zst; report it with: " "$TMP/h2.err"
	HEAPANN_SNAPSHOT_COMPRESS=zstd "$H" --compress=none --no-report --keep-core "$TMP/keep2" "$mx" >/dev/null 2>&1
	check_eq "heapann --compress=none overrides the environment" 1 \
		"$(ls "$TMP/keep2" | grep -c '^massif_example\.[0-9]*\.1\.core$')"
	"$H" --compress=lz4 "$mx" >/dev/null 2>"$TMP/h3.err"
	check_eq "heapann --compress=lz4: bad usage (2), before the program runs" \
		"2|heapann: --compress takes zstd, zstd:LEVEL (1 to 19) or none, not lz4 (see heapann --help)" \
		"$?|$(cat "$TMP/h3.err")"
else
	echo "# $H not built: the launcher's part not run"
fi
done_testing
