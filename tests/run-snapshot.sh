#!/bin/sh
# run-snapshot.sh - HEAPANN_SNAPSHOT (issue 13, part 1): libheapann writes cores of
# its own process, without core_pattern, ptrace or gdb. End to end:
#  - exit: tests/prog/lost_prog.c's exit core gives memcheck's at-exit loss records
#    exactly; gdb reads the core (threads, backtrace, globals, heap contents);
#  - signal: two SIGUSR2 between the steps of tests/prog/snap_grow.c give two cores
#    whose reports differ by exactly the step's growth; the program's output and
#    exit status are those of a run without snapshots (its read() is not
#    interrupted, waitpid(-1) sees no child); again with HEAPANN_SNAPSHOT_WAIT=0
#    (no child left behind), signal:SIGUSR1 and signal:SIGRTMIN+3;
#  - threads: 100 snapshots of tests/prog/snap_threads.c (8 threads allocating), no
#    deadlock; every 10th core reads without damage and records or names (the
#    HEAPANN stacks note, for a thread running) the stacks of all 9 threads; then one of the settled process finds every block it holds, and
#    has the 8 waiting threads (pc and stack pointer) for gdb and the lost report;
#  - abort: an overflow caught by HEAPANN_CHECK_INTERVAL (SIGABRT) and one that
#    crashes (SIGSEGV) leave our core, whose corruption report names the culprit,
#    and the kernel's core still follows;
#  - sparse: a 320 MiB heap of zeros gives a core that takes almost no disk;
#  - many threads: 1,000 blocked threads (tests/prog/snap_many.c, with and
#    without guard pages) all recorded, their blocks still reachable;
#  - options: HEAPANN_QUIET, an unknown item, a directory that does not exist.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "HEAPANN_SNAPSHOT is x86-64 only"
command -v python3 >/dev/null || skip "python3 not installed"
command -v gdb >/dev/null || sh scripts/install-deps.sh gdb
command -v valgrind >/dev/null || sh scripts/install-deps.sh valgrind
command -v gdb >/dev/null || skip "gdb not installed"
command -v valgrind >/dev/null || skip "valgrind not installed"

LIB=$TOP/$B/libheapann.so
for p in snap_grow snap_threads snap_sparse lost_prog; do
	cc -g -O2 -pthread -o "$TMP/$p" "tests/prog/$p.c" || skip "cannot compile tests/prog/$p.c"
done
cc -g -O0 -o "$TMP/corrupt_overflow" tests/prog/corrupt_overflow.c || skip "cannot compile corrupt_overflow.c"

# wait_for and sums: tests/lib.sh

# lost_sums JSON CATEGORY FUNCTION: "BLOCKS/BYTES" of the loss records of CATEGORY
# whose allocation site is FUNCTION.
lost_sums() {
	python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
b = y = 0
for r in d["lost"]["records"]:
    if r["category"] == sys.argv[2] and r["frames"] and r["frames"][0].get("function") == sys.argv[3]:
        b += r["blocks"]; y += r["bytes"]
print("%d/%d" % (b, y))
EOF
}

# ---- exit: the at-exit view is memcheck's ----
exe=$TMP/lost_prog
valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
	--num-callers=40 --log-file="$TMP/mc.log" "$exe"
check_eq "valgrind: lost_prog exits 0" 0 $?
mkdir "$TMP/exit"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/exit" LD_PRELOAD=$LIB "$exe" 2>"$TMP/exit.err"
check_eq "exit: lost_prog exits 0 under the preload" 0 $?
set -- "$TMP"/exit/lost_prog.*.1.core
core=$1
pid=$(basename "$core" | cut -d. -f2)
check "exit: DIR/PROG.PID.1.core written" test -s "$core"
check_eq "exit: one core, no temporary left" 1 "$(ls "$TMP/exit" | wc -l)"
check_eq "exit: the one line on stderr" "heapann: snapshot written to $core" "$(cat "$TMP/exit.err")"
"$B/mprof-core" --format=json --report=lost "$exe" "$core" >"$TMP/exit.json" 2>"$TMP/exit.jerr"
check_eq "exit: mprof-core reads the core" 0 $?
check "exit: loss records equal memcheck's at exit" python3 tests/lostcmp.py compare "$TMP/mc.log" "$TMP/exit.json"
check "exit: definitely lost 1302 blocks, 55264 bytes" python3 tests/lostcmp.py totals "$TMP/exit.json" "definitely lost" 1302 55264
check "exit: indirectly lost 200 blocks, 6400 bytes" python3 tests/lostcmp.py totals "$TMP/exit.json" "indirectly lost" 200 6400
check "exit: possibly lost 100 blocks, 6400 bytes" python3 tests/lostcmp.py totals "$TMP/exit.json" "possibly lost" 100 6400
check "exit: still reachable 650 blocks, 29200 bytes (main's frame is live in exit())" \
	python3 tests/lostcmp.py totals "$TMP/exit.json" "still reachable" 650 29200
gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' "$exe" "$core" \
	-ex 'info threads' -ex bt -ex 'print (int)((char *)g_kept[7])[39]' \
	-ex 'print (int)((char *)g_thread_kept[99])[0]' >"$TMP/gdb.out" 2>&1
check_grep "gdb: one thread, the process's" "^\* 1 +.*LWP $pid\)" "$TMP/gdb.out"
check_grep "gdb: bt reaches exit()" " in (__GI_)?exit \(" "$TMP/gdb.out"
check_grep "gdb: bt reaches main" " in main \(" "$TMP/gdb.out"
check_grep "gdb: g_kept[7]'s block holds 0x22 (heap memory read back)" '^\$1 = 34$' "$TMP/gdb.out"
check_grep "gdb: g_thread_kept[99]'s block holds 0x55 (the worker's arena)" '^\$2 = 85$' "$TMP/gdb.out"

# ---- signal: two snapshots while the program runs on ----
printf '\n\n' | "$TMP/snap_grow" >"$TMP/grow.ref"
echo $? >"$TMP/grow.refrc"
# run_grow TAG SIG ENV...: snap_grow under the preload with ENV, SIG sent at steps
# 1 and 2, each time waiting for the core before letting it go on. Cores land in
# $TMP/TAG; output in $TMP/TAG.out, stderr in .err, status in .rc, children of
# the process seen after each snapshot in .kids.
run_grow() {
	tag=$1; sig=$2; shift 2
	mkdir "$TMP/$tag"
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	env HEAPANN_SNAPSHOT_DIR="$TMP/$tag" LD_PRELOAD=$LIB "$@" "$TMP/snap_grow" \
		<"$TMP/fifo" >"$TMP/$tag.out" 2>"$TMP/$tag.err" &
	gpid=$!
	exec 9>"$TMP/fifo"
	: >"$TMP/$tag.kids"
	for step in 1 2; do
		wait_for "$TMP/$tag.out" "^step $step"
		kill -s "$sig" $gpid
		wait_for "$TMP/$tag/snap_grow.$gpid.$step.core"
		sleep 0.1
		ps -o pid= --ppid $gpid | wc -l >>"$TMP/$tag.kids"
		echo >&9
	done
	exec 9>&-
	wait $gpid
	echo $? >"$TMP/$tag.rc"
}
run_grow sig USR2 HEAPANN_SNAPSHOT=signal
check_eq "signal: exit status unchanged" "$(cat "$TMP/grow.refrc")" "$(cat "$TMP/sig.rc")"
check "signal: output unchanged (read() not interrupted, waitpid(-1) sees no child)" \
	cmp -s "$TMP/grow.ref" "$TMP/sig.out"
check_eq "signal: two lines on stderr" 2 "$(grep -c '^heapann: snapshot written to ' "$TMP/sig.err")"
c1=$TMP/sig/snap_grow.$gpid.1.core c2=$TMP/sig/snap_grow.$gpid.2.core
"$B/mprof-core" --format=json --top 0 "$TMP/snap_grow" "$c1" >"$TMP/s1.json" 2>/dev/null
check_eq "signal: core 1 reads" 0 $?
"$B/mprof-core" --format=json --top 0 "$TMP/snap_grow" "$c2" >"$TMP/s2.json" 2>/dev/null
check_eq "signal: core 2 reads" 0 $?
check_eq "signal: core 1 holds step 1" "grow_a=10/1000 grow_b=0/0 churn=0/0" \
	"$(sums "$TMP/s1.json" grow_a grow_b churn)"
check_eq "signal: core 2 holds steps 1 and 2 (+20 x 100 B, +5 x 1000 B, churn freed)" \
	"grow_a=30/3000 grow_b=5/5000 churn=0/0" "$(sums "$TMP/s2.json" grow_a grow_b churn)"
gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' "$TMP/snap_grow" "$c2" \
	-ex 'print g_na' -ex 'print g_nb' >"$TMP/gdb2.out" 2>&1
check_grep "signal: gdb: the core was made by SIGUSR2" "Program terminated with signal SIGUSR2" "$TMP/gdb2.out"
check_grep "signal: gdb: g_na = 30 in core 2" '^\$1 = 30$' "$TMP/gdb2.out"
check_grep "signal: gdb: g_nb = 5 in core 2" '^\$2 = 5$' "$TMP/gdb2.out"

# the program's first page (ELF header, build-id note) is in the core, as in a
# kernel core: a rebuilt program of the same name is refused by its build-id
mkdir "$TMP/rebuilt"
cc -g -O1 -o "$TMP/rebuilt/snap_grow" tests/prog/snap_grow.c
"$B/mprof-core" "$TMP/rebuilt/snap_grow" "$c2" >/dev/null 2>"$TMP/rebuilt.err"
check_eq "signal: a rebuilt program is refused (exit 1)" 1 $?
check_grep "signal: ... by the build-id read from the core" "rebuilt since the core was made" "$TMP/rebuilt.err"

run_grow nowait USR2 HEAPANN_SNAPSHOT=signal HEAPANN_SNAPSHOT_WAIT=0
check_eq "signal, WAIT=0: exit status unchanged" "$(cat "$TMP/grow.refrc")" "$(cat "$TMP/nowait.rc")"
check "signal, WAIT=0: output unchanged" cmp -s "$TMP/grow.ref" "$TMP/nowait.out"
check_eq "signal, WAIT=0: no child of the program left after either snapshot" "0 0" \
	"$(tr '\n' ' ' <"$TMP/nowait.kids" | sed 's/ *$//; s/  */ /g; s/^ //')"
"$B/mprof-core" --format=json --top 0 "$TMP/snap_grow" "$TMP/nowait/snap_grow.$gpid.2.core" >"$TMP/n2.json" 2>/dev/null
check_eq "signal, WAIT=0: core 2 holds steps 1 and 2" "grow_a=30/3000 grow_b=5/5000 churn=0/0" \
	"$(sums "$TMP/n2.json" grow_a grow_b churn)"

run_grow usr1 USR1 HEAPANN_SNAPSHOT=signal:SIGUSR1
check_eq "signal:SIGUSR1: output and status unchanged" "$(cat "$TMP/grow.refrc") 0" \
	"$(cat "$TMP/usr1.rc") $(cmp -s "$TMP/grow.ref" "$TMP/usr1.out"; echo $?)"
"$B/mprof-core" --format=json --top 0 "$TMP/snap_grow" "$TMP/usr1/snap_grow.$gpid.1.core" >"$TMP/u1.json" 2>/dev/null
check_eq "signal:SIGUSR1: core 1 holds step 1" "grow_a=10/1000 grow_b=0/0" "$(sums "$TMP/u1.json" grow_a grow_b)"
rt=$(python3 -c 'import signal; print(int(signal.SIGRTMIN) + 3)')
run_grow rt "$rt" HEAPANN_SNAPSHOT=signal:SIGRTMIN+3
check_eq "signal:SIGRTMIN+3: two cores, output and status unchanged" "2 $(cat "$TMP/grow.refrc") 0" \
	"$(ls "$TMP/rt" | grep -c '\.core$') $(cat "$TMP/rt.rc") $(cmp -s "$TMP/grow.ref" "$TMP/rt.out"; echo $?)"

# ---- threads: 100 snapshots of 8 threads allocating, then the settled process ----
mkdir "$TMP/thr"
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
timeout 300 env HEAPANN_SNAPSHOT=signal HEAPANN_SNAPSHOT_DIR="$TMP/thr" LD_PRELOAD=$LIB \
	"$TMP/snap_threads" <"$TMP/fifo" >"$TMP/thr.out" 2>"$TMP/thr.err" &
tpid=$!
exec 9>"$TMP/fifo"
wait_for "$TMP/thr.out" '^running'
# the program runs under timeout: its pid is timeout's child
ppid_prog=$(ps -o pid= --ppid $tpid | tr -d ' ')
t0=$(date +%s)
done_n=0 read_ok=0 read_damaged=0 all9=0
i=1
while [ $i -le 100 ]; do
	kill -USR2 "$ppid_prog" 2>/dev/null || break
	f=$TMP/thr/snap_threads.$ppid_prog.$i.core
	wait_for "$f" || break
	done_n=$i
	if [ $((i % 10)) -eq 0 ]; then
		"$B/mprof-core" -q --format=json --top 1 "$TMP/snap_threads" "$f" >"$TMP/t.json" 2>/dev/null
		rc=$?
		[ $rc -eq 0 ] && read_ok=$((read_ok + 1))
		# each of the 9 threads recorded, or named running by its stack
		[ "$("$B/tests/tools/cpdump" "$f" 2>/dev/null | grep -Ec '^(thread|stack_hint) ')" = 9 ] &&
			all9=$((all9 + 1))
		if [ $rc -eq 3 ]; then
			read_damaged=$((read_damaged + 1))
			# what was read as damage, for the log (a rare failure to diagnose)
			"$B/mprof-core" --report=corruption --top 5 "$TMP/snap_threads" "$f" 2>&1 |
				head -n 40 | sed "s/^/# core $i: /"
			readelf -n "$f" 2>/dev/null | grep -c NT_PRSTATUS | sed "s/^/# core $i: threads recorded: /"
		fi
	fi
	rm -f "$f"
	i=$((i + 1))
done
t1=$(date +%s)
check_eq "threads: 100 snapshots in a row" 100 $done_n
check_eq "threads: every 10th core reads without damage (no header caught mid-write)" "10 0" "$read_ok $read_damaged"
check_eq "threads: each of those 10 records or names the stack of all 9 threads" 10 $all9
echo "# threads: 100 snapshots in $((t1 - t0)) s; of 10 cores read, $read_damaged showed a header caught mid-write"
echo stop >&9
wait_for "$TMP/thr.out" '^settled'
kill -USR2 "$ppid_prog"
f=$TMP/thr/snap_threads.$ppid_prog.101.core
wait_for "$f"
check "threads: snapshot 101 of the settled process" test -s "$f"
echo go >&9
exec 9>&-
wait $tpid
check_eq "threads: no deadlock, the program ends normally" 0 $?
check_grep "threads: the program ran to its end" '^done$' "$TMP/thr.out"
want=$(sed -n 's/^settled blocks=\([0-9]*\) bytes=\([0-9]*\)$/\1\/\2/p' "$TMP/thr.out")
"$B/mprof-core" --format=json --top 0 --report=stacks,lost "$TMP/snap_threads" "$f" >"$TMP/t.json" 2>"$TMP/t.err"
check_eq "threads: settled core reads without damage" 0 $?
check_eq "threads: every settled block found ($want)" "settle_alloc=$want worker_alloc=0/0" \
	"$(sums "$TMP/t.json" settle_alloc worker_alloc)"
check_eq "threads: all still reachable from the 8 threads' stacks" "$want" \
	"$(lost_sums "$TMP/t.json" "still reachable" settle_alloc)"
# the workers wait in a system call (the barrier's futex): the core has their pc
# and stack pointer (/proc/self/task/TID/syscall), so gdb shows all 9 threads
check_eq "threads: 9 threads in the settled core" 9 \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"])' "$TMP/t.json")"
gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' "$TMP/snap_threads" "$f" \
	-ex 'thread apply all bt' >"$TMP/tgdb.out" 2>&1
check_eq "threads: gdb's backtrace of each of the 8 workers reaches worker()" 8 \
	"$(grep -c ' in worker (' "$TMP/tgdb.out")"

# ---- abort: our core before the default action; the kernel's still follows ----
kpat=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
ex=$TMP/corrupt_overflow
mkdir "$TMP/ab"
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR="$TMP/ab" \
	HEAPANN_CHECK_INTERVAL=4 HEAPANN_ABORT_ON_CORRUPTION=1 LD_PRELOAD=$LIB "$ex" interval \
	>"$TMP/ab.out" 2>"$TMP/ab.err"; echo $? >"$TMP/ab.rc") 2>/dev/null
check_eq "abort: the program still dies of SIGABRT" 134 "$(cat "$TMP/ab.rc")"
set -- "$TMP"/ab/corrupt_overflow.*.1.core
check "abort: our core written" test -s "$1"
check_grep "abort: said on stderr" "^heapann: snapshot written to $1$" "$TMP/ab.err"
if [ "$kpat" = core ]; then
	check "abort: the kernel's core follows (core_pattern 'core')" test -s "$TMP/core"
fi
"$B/mprof-core" --format=json "$ex" "$1" >"$TMP/ab.json" 2>/dev/null
check_eq "abort: mprof-core finds the corruption (exit 3)" 3 $?
check "abort: the report names the culprit's allocation site" python3 tests/jcheck.py "$TMP/ab.json" "$TMP/ab.out" \
	'fn(guard(o["culprit"])) == "alloc_culprit" and guard(o["culprit"])["overrun"] == 8'
gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' "$ex" "$1" -ex bt >"$TMP/abgdb.out" 2>&1
check_grep "abort: gdb: terminated with SIGABRT" "Program terminated with signal SIGABRT" "$TMP/abgdb.out"
check_grep "abort: gdb: bt shows abort() under alloc_after" " in alloc_after \(" "$TMP/abgdb.out"

mkdir "$TMP/segv"
(cd "$TMP" && ulimit -c 0 && HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR="$TMP/segv" LD_PRELOAD=$LIB \
	"$ex" overflow 24 200 crash >"$TMP/segv.out" 2>"$TMP/segv.err"; echo $? >"$TMP/segv.rc") 2>/dev/null
check_eq "crash: the program still dies of SIGSEGV" 139 "$(cat "$TMP/segv.rc")"
set -- "$TMP"/segv/corrupt_overflow.*.1.core
"$B/mprof-core" --format=json "$ex" "$1" >"$TMP/segv.json" 2>/dev/null
check_eq "crash: our core read, corruption found (exit 3)" 3 $?
check "crash: the overflowing block is named" python3 tests/jcheck.py "$TMP/segv.json" "$TMP/segv.out" \
	'fn(guard(o["culprit"])) == "alloc_culprit" and guard(o["culprit"])["overrun"] == 8'

# ---- sparse: zero pages are holes ----
mkdir "$TMP/sparse"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/sparse" LD_PRELOAD=$LIB "$TMP/snap_sparse" >"$TMP/sp.out" 2>/dev/null
check_eq "sparse: program exits 0" 0 $?
set -- "$TMP"/sparse/snap_sparse.*.1.core
size=$(stat -c %s "$1")
disk=$(( $(stat -c %b "$1") * $(stat -c %B "$1") ))
echo "# sparse: core of $size bytes takes $disk bytes on disk"
check "sparse: the core covers the 320 MiB heap ($size bytes)" test "$size" -gt $((320 << 20))
check "sparse: it takes under 16 MiB of disk ($disk bytes)" test "$disk" -lt $((16 << 20))
"$B/mprof-core" --format=json --top 0 "$TMP/snap_sparse" "$1" >"$TMP/sp.json" 2>/dev/null
check_eq "sparse: every block found" "sparse_calloc=1/268435456 sparse_zeroed=1/67108864 sparse_small=100/100000" \
	"$(sums "$TMP/sp.json" sparse_calloc sparse_zeroed sparse_small)"
rm -f "$1"

# ---- many threads: 1,000 blocked ones, every one recorded (64 KiB held 819) ----
cc -O1 -g -pthread -o "$TMP/snap_many" tests/prog/snap_many.c
for mode in default guard0; do
	rm -rf "$TMP/many" && mkdir "$TMP/many"
	(cd "$TMP/many" && HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR="$TMP/many" LD_PRELOAD=$LIB \
		"$TMP/snap_many" 1000 $mode >/dev/null 2>&1)
	set -- "$TMP"/many/snap_many.*.1.core
	check "many threads ($mode): abort snapshot written" test -s "$1"
	check_eq "many threads ($mode): all 1,001 threads in the core" 1001 \
		"$("$B/tests/tools/cpdump" "$1" 2>/dev/null | grep -c '^thread ')"
	"$B/mprof-core" --report=lost "$TMP/snap_many" "$1" >"$TMP/many.txt" 2>&1
	check_grep "many threads ($mode): the 1,000 blocks still reachable from their stacks" \
		'^#[0-9]+: 40,000 bytes in 1,000 blocks are still reachable$' "$TMP/many.txt"
	check_grep "many threads ($mode): nothing definitely lost" '^ *definitely lost: 0 bytes in 0 blocks$' "$TMP/many.txt"
done
rm -rf "$TMP/many"

# ---- options and failures ----
mkdir "$TMP/q"
(cd "$TMP/q" && HEAPANN_SNAPSHOT=exit,bogus HEAPANN_QUIET=1 LD_PRELOAD=$LIB "$TMP/snap_sparse" >/dev/null 2>"$TMP/q.err")
check_eq "HEAPANN_QUIET=1: only the warning about the unknown item" \
	"heapann: HEAPANN_SNAPSHOT: unknown item 'bogus' ignored" "$(cat "$TMP/q.err")"
check_eq "default directory: the current one" 1 "$(ls "$TMP/q" | grep -c '^snap_sparse\.[0-9]*\.1\.core$')"
mkdir "$TMP/q/sub"
(cd "$TMP/q" && HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=sub LD_PRELOAD=$LIB "$TMP/snap_sparse" >/dev/null 2>"$TMP/q.err")
check_grep "a relative directory is taken from the start directory" \
	"^heapann: snapshot written to $TMP/q/sub/snap_sparse\.[0-9]+\.1\.core$" "$TMP/q.err"
rm -rf "$TMP/q"
printf '\n\n' | HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/none" LD_PRELOAD=$LIB "$TMP/snap_grow" \
	>"$TMP/none.out" 2>"$TMP/none.err"
check_eq "missing directory: the program's status unchanged" "$(cat "$TMP/grow.refrc")" $?
check_grep "missing directory: one line names the file and the problem" \
	"^heapann: snapshot failed: $TMP/none/snap_grow\.[0-9]+\.1\.core\.part: No such file or directory$" "$TMP/none.err"
check_eq "missing directory: nothing else on stderr" 1 "$(wc -l <"$TMP/none.err")"
done_testing
