#!/bin/sh
# snapshot.sh - the cost of HEAPANN_SNAPSHOT against gdb's gcore on the same process
# (called from bench/run.sh, section "snapshot"). For each heap size, bench/snapshot.c
# builds a heap of that many MiB (1 MiB blocks, every page non-zero) under
# libheapann and takes:
#   - a snapshot with HEAPANN_SNAPSHOT_WAIT=0: the program's pause (its raise()
#     of SIGUSR2: register capture and clone) and when the core is complete;
#   - a snapshot with the default (the thread waits for the writer): its pause;
#   - the same two with HEAPANN_SNAPSHOT_COMPRESS=zstd (the core piped through the
#     zstd program into PROG.PID.N.core.zst), and both ways again on a heap of
#     random bytes (zstd's worst case: nothing to squeeze);
#   - gcore of the same process (gdb -batch -p: attach, gcore, detach; the process
#     is stopped throughout, so its pause is the whole time).
# One run, side by side; every core is deleted right after it is measured.
# Environment: B [build], BENCH_SNAP_MB ["100 1024"] (heap sizes in MiB; the machine
# is shared: the 1 GiB case runs once), BENCH_SNAP_DIR [a mktemp dir in /tmp].
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
CC=${CC:-cc}
BB=$B/bench
LIB=${BENCH_LIB:-$(pwd)/$B/libheapann.so}
SIZES=${BENCH_SNAP_MB:-"100 1024"}

mkdir -p "$BB" || exit 1
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$BB/snapbench" bench/snapshot.c || exit 1
$CC -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$BB/runner" bench/runner.c || exit 1
D=${BENCH_SNAP_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mprof-snapbench.XXXXXX")} || exit 1
mkdir -p "$D"
trap 'rm -rf "$D"' EXIT
trap 'exit 130' INT TERM

if [ "$(uname -m)" != x86_64 ] || ! [ -f "$LIB" ]; then
	echo "== snapshot: needs x86-64 and $B/libheapann.so: skipped"
	exit 0
fi

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# wait_line FILE PATTERN: until FILE has a line matching PATTERN (120 s at most).
wait_line() {
	n=0
	while ! grep -q -- "$2" "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -gt 12000 ] && return 1
		sleep 0.01
	done
}

# start MODE MB [COMPRESS [FILL]]: snapbench MB FILL under the preload,
# HEAPANN_SNAPSHOT_WAIT=MODE (1 or 0), HEAPANN_SNAPSHOT_COMPRESS=COMPRESS [none];
# sets $pid; the program reads commands from fd 9.
start() {
	rm -f "$D/fifo" "$D/out"
	mkfifo "$D/fifo"
	HEAPANN_SNAPSHOT_COMPRESS=${3:-none} HEAPANN_SNAPSHOT=signal HEAPANN_SNAPSHOT_WAIT=$1 HEAPANN_SNAPSHOT_DIR=$D HEAPANN_QUIET=1 \
		LD_PRELOAD=$LIB "$BB/snapbench" "$2" ${4:-} <"$D/fifo" >"$D/out" 2>"$D/err" &
	pid=$!
	exec 9>"$D/fifo"
	wait_line "$D/out" '^ready'
}

stop() {
	echo quit >&9
	exec 9>&-
	wait $pid 2>/dev/null
}

# sizes FILE: "apparent MB / on-disk MB"
sizes() {
	awk -v a="$(stat -c %s "$1")" -v b="$(( $(stat -c %b "$1") * $(stat -c %B "$1") ))" \
		'BEGIN { printf "%.1f MB / %.1f MB", a / 1e6, b / 1e6 }'
}

row() { printf "%-8s | %-26s | %-13s | %-13s | %-19s | %s\n" "$@"; }

ms() { awk -v v="$1" 'BEGIN { if (v == "") print "-"; else printf "%.0f ms", v / 1000 }'; }

# snap_row MB LABEL WAIT [COMPRESS [FILL]]: one snapshot of a fresh snapbench MB;
# prints its row.
snap_row() {
	start "$3" "$1" "${4:-none}" "${5:-}" || { echo "bench: snapbench $1 did not start"; return 1; }
	echo "snap 1" >&9
	wait_line "$D/out" '^ready_us='
	get() { sed -n "s/^$1=//p" "$D/out" | tail -n 1; }
	c=$D/snapbench.$pid.1.core
	[ "${4:-none}" = zstd ] && c=$c.zst
	cpu="$(ms "$(get self_cpu_us)") + "
	if [ "$3" = 1 ]; then cpu="$cpu$(ms "$(get child_cpu_us)")"; else cpu="${cpu}-"; fi
	row "$1 MiB" "$2" "$(ms "$(get pause_us)")" "$(ms "$(get ready_us)")" "$cpu" "$(sizes "$c")"
	rm -f "$c"
}

echo "== snapshot cost: HEAPANN_SNAPSHOT=signal against gcore of the same process"
echo "   heap in 1 MiB blocks, every page non-zero; cores in $D"
row heap method "program pause" "core complete" "CPU: program + writer" "core size / on disk"
row -------- -------------------------- ------------- ------------- ------------------- -------------------
ZSTD_OK=0
command -v zstd >/dev/null 2>&1 && ZSTD_OK=1
[ $ZSTD_OK = 1 ] || echo "   (zstd not on PATH: the COMPRESS=zstd rows are left out)"
for mb in $SIZES; do
	snap_row "$mb" "snapshot, default (waits)" 1
	stop
	if [ $ZSTD_OK = 1 ]; then
		snap_row "$mb" "snapshot, zstd (waits)" 1 zstd
		stop
		snap_row "$mb" "snapshot, zstd, WAIT=0" 0 zstd
		stop
		snap_row "$mb" "random heap: plain (waits)" 1 none random
		stop
		snap_row "$mb" "random heap: zstd (waits)" 1 zstd random
		stop
	fi
	snap_row "$mb" "snapshot, WAIT=0" 0 || continue
	: >"$D/r.txt"
	"$BB/runner" "$D/r.txt" gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' \
		-p $pid -ex "gcore $D/gcore" -ex detach >"$D/gdb.log" 2>&1
	wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$D/r.txt")
	cpu=$(sed -n 's/^cpu_s=\([0-9.]*\).*/\1/p' "$D/r.txt")
	if [ -s "$D/gcore" ]; then
		row "$mb MiB" "gcore (gdb -batch -p)" "$(ms "$(awk -v w="$wall" 'BEGIN { print w * 1e6 }')")" \
			"$(ms "$(awk -v w="$wall" 'BEGIN { print w * 1e6 }')")" \
			"gdb $(ms "$(awk -v c="$cpu" 'BEGIN { print c * 1e6 }')")" "$(sizes "$D/gcore")"
	else
		row "$mb MiB" "gcore (gdb -batch -p)" "failed" "-" "-" "$(tail -n 1 "$D/gdb.log")"
	fi
	rm -f "$D/gcore"
	stop
done
echo "   program pause: the snapshot thread's raise(SIGUSR2) (capture and clone; by"
echo "   default also the write); gcore stops the whole process from attach to detach,"
echo "   gdb's start-up included. Core complete: until the core is renamed into place."
echo "   CPU: the program's during the pause + the writer's (reaped by the program when"
echo "   it waits; with WAIT=0 init reaps it: not measured); gcore: gdb's. With zstd"
echo "   the writer's CPU includes zstd's (the writer reaps it); zstd runs -3 -T0."
echo "   The heap's pattern (one non-zero byte in 64) compresses far better than most."
