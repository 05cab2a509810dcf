#!/bin/sh
# zcore.sh - the compressed-core benchmark (bench/run.sh section "zcore"): a kernel
# core of about 1 GB from bench/mkcore under libheapann (4M live blocks of mixed
# sizes, their bytes filled, plus freed ones: a heap, not zeros), compressed with
# the zstd CLI; then, in one run and from the page cache, mprof-core's default
# report on the .zst, `zstd -d -c > /dev/null` alone, mprof-core on the plain core,
# and the manual way (zstd -d to a file, then mprof-core on it). Prints the times
# and their ratios; checks the reports agree.
# Big files: run it once, niced; they are deleted at the end (KEEP=1 keeps them).
# Environment: B [build], BENCH_ZCORE_BLOCKS [4000000], BENCH_ZCORE_LEVEL [3].
set -u
# the symbol index cache would make every round after the first warm (and the
# old binary has none): each run names its frames from the debug info
MPROF_CACHE_DIR=${MPROF_CACHE_DIR-off}; export MPROF_CACHE_DIR
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
CC=${CC:-cc}
BB=$B/bench
NBLOCKS=${BENCH_ZCORE_BLOCKS:-4000000}
LEVEL=${BENCH_ZCORE_LEVEL:-3}
MPROF=$(pwd)/$B/mprof-core
RUNNER=$(pwd)/$BB/runner

echo "== compressed core: $NBLOCKS live blocks, zstd -$LEVEL"
if ! command -v zstd >/dev/null 2>&1; then
	sh scripts/install-deps.sh zstd
	command -v zstd >/dev/null 2>&1 || { echo "   skipped: zstd not installed"; exit 0; }
fi
if ! [ -x "$MPROF" ] || ! "$MPROF" --help >/dev/null 2>&1; then
	echo "   skipped: $B/mprof-core missing"
	exit 0
fi
mkdir -p "$BB" || exit 1
$CC -std=c11 -D_GNU_SOURCE -O2 -o "$RUNNER" bench/runner.c || exit 1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-zcore-bench.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
mkdir "$TMP/tmp"   # mprof-core's $TMPDIR: the decompressed copy goes here

MK=$(B=$B nice sh bench/core.sh --make-core "$NBLOCKS" "$TMP") || { echo "   skipped: no core made"; exit 0; }
echo "   $(head -n 1 "$TMP/mkcore.out")"
t0=$(date +%s.%N)
nice zstd -q -T1 -"$LEVEL" -c "$TMP/core" >"$TMP/core.zst" || { echo "   skipped: zstd failed"; exit 0; }
t1=$(date +%s.%N)
size=$(stat -c %s "$TMP/core")
zsize=$(stat -c %s "$TMP/core.zst")
awk -v s="$size" -v z="$zsize" -v d="$(du -k "$TMP/core" | cut -f1)" -v t0="$t0" -v t1="$t1" 'BEGIN {
	printf "   core: %.2f GB (%.2f GB on disk: the kernel leaves unmapped pages as holes); core.zst: %.1f MB, %.1fx smaller (compressed in %.1f s)\n",
		s / 1e9, d * 1024 / 1e9, z / 1e6, s / z, t1 - t0 }'

# warm the page cache so that every run reads from memory, not the disk
cat "$TMP/core" "$TMP/core.zst" >/dev/null

# run LABEL OUT CMD...: one timed run; prints a row and sets W (wall s) and C (CPU s)
run() {
	label=$1 out=$2
	shift 2
	: >"$TMP/r.txt"
	"$RUNNER" "$TMP/r.txt" "$@" >"$out" 2>"$out.err"
	rc=$?
	W=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	C=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$TMP/r.txt")
	rss=$(sed -n 's/.*tree_maxrss_kb=\([0-9]*\).*/\1/p' "$TMP/r.txt")
	printf "   %-40s | %-7s | %-7s | %-11s | %s\n" "$label" "$W" "$C" \
		"$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')" "$rc"
	[ $rc -eq 0 ] || sed 's/^/      /' "$out.err" | tail -n 3
}

printf "   %-40s | %-7s | %-7s | %-11s | %s\n" "run" "wall s" "CPU s" "peak RSS MB" "exit"
printf "   %-40s-+-%-7s-+-%-7s-+-%-11s-+-%s\n" "----------------------------------------" "-------" "-------" "-----------" "----"
run "mprof-core, core.zst" "$TMP/z.txt" env TMPDIR="$TMP/tmp" nice "$MPROF" "$MK" "$TMP/core.zst"
wz=$W cz=$C
left=$(ls -A "$TMP/tmp")
# the same with the temporary file in memory (tmpfs): no file system to allocate
# blocks for it and no writeback to wait for when it is dropped
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	run "mprof-core, core.zst, TMPDIR=/dev/shm" "$TMP/s.txt" env TMPDIR=/dev/shm nice "$MPROF" "$MK" "$TMP/core.zst"
	shm=$W cshm=$C
fi
run "zstd -d -c core.zst > /dev/null" "$TMP/d.txt" nice sh -c 'zstd -q -d -c "$1" >/dev/null' sh "$TMP/core.zst"
wd=$W cd=$C
run "mprof-core, plain core" "$TMP/p.txt" nice "$MPROF" "$MK" "$TMP/core"
wp=$W cp=$C
# what one would do by hand without this: decompress to a file, then read that
run "zstd -d core.zst -o FILE (in \$TMPDIR)" "$TMP/f.txt" nice zstd -q -f -d "$TMP/core.zst" -o "$TMP/tmp/unz"
wf=$W cf=$C
run "mprof-core, FILE" "$TMP/u.txt" nice "$MPROF" "$MK" "$TMP/tmp/unz"
wf=$(awk -v a="$wf" -v b="$W" 'BEGIN { print a + b }') cf=$(awk -v a="$cf" -v b="$C" 'BEGIN { print a + b }')
rm -f "$TMP/tmp/unz"
tail -n +2 "$TMP/z.txt" >"$TMP/z.rest"
tail -n +2 "$TMP/p.txt" >"$TMP/p.rest"
same=NO
cmp -s "$TMP/z.rest" "$TMP/p.rest" && same=yes
echo "   reports of core.zst and core equal but for the header line: $same"
echo "   header: $(head -n 1 "$TMP/z.txt")"
echo "   \$TMPDIR left empty by mprof-core: $([ -z "$left" ] && echo yes || echo NO)"
awk -v z="$wz" -v d="$wd" -v p="$wp" -v cz="$cz" -v cd="$cd" -v cp="$cp" -v wf="$wf" -v cf="$cf" -v shm="${shm:-0}" -v cshm="${cshm:-0}" 'BEGIN {
	if (p <= 0 || d <= 0 || cp <= 0 || cd <= 0) exit
	printf "   ratios (wall; CPU): core.zst / plain core %.2fx; %.2fx\n", z / p, cz / cp
	printf "                       core.zst / zstd -d alone %.2fx; %.2fx\n", z / d, cz / cd
	printf "                       (core.zst - plain core) / zstd -d alone %.2fx; %.2fx\n", (z - p) / d, (cz - cp) / cd
	printf "   (the last: what decompressing costs inside mprof-core, its temporary file included, against zstd alone)\n"
	if (shm > 0 && cshm > 0)
		printf "                       core.zst with TMPDIR=/dev/shm / plain core %.2fx; %.2fx\n", shm / p, cshm / cp
	if (wf > 0 && cf > 0)
		printf "                       core.zst / (zstd -d to a file, then mprof-core on it) %.2fx; %.2fx\n", z / wf, cz / cf
}'
