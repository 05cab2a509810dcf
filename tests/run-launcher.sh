#!/bin/sh
# run-launcher.sh - heapann [OPTIONS] PROG (issue 13 part 2), what does not need
# libheapann's own snapshots: the program's exit status (128+N for a signal),
# signals sent to heapann reaching the program, the environment it gets (the
# absolute library path ahead of an LD_PRELOAD already set, HEAPANN_SNAPSHOT,
# HEAPANN_DEPTH), its arguments untouched, the pid it announces, errors (126, 127,
# 2), and the private directory removed. With a stand-in that writes its
# snapshots with gcore (tests/prog/snap_standin.c) while the library cannot: the
# last core is reported with the options given, the others are named, -o and
# --keep-core work. The real snapshots: run-launcher-snapshot.sh.
. tests/lib.sh
H=$B/heapann
[ -x "$H" ] && [ -f "$B/libheapann.so" ] && [ -x "$B/mprof-core" ] || skip "build first"
LIB=$TOP/$B/libheapann.so
export TMPDIR="$TMP"    # heapann's private directories go here, to be looked at

# ---- exit status ------------------------------------------------------------------
"$H" sh -c 'exit 3' 2>"$TMP/e"
check_eq "exit status of the program (3)" 3 $?
"$H" true 2>"$TMP/e"
check_eq "exit status of the program (0)" 0 $?
"$H" sh -c 'kill -KILL $$' 2>"$TMP/e"
check_eq "killed by SIGKILL: 128+9" 137 $?
check_grep "killed by SIGKILL: says so" '^heapann: sh was killed by signal 9 ' "$TMP/e"
(ulimit -c 0; "$H" sh -c 'kill -SEGV $$' 2>"$TMP/e")
check_eq "killed by SIGSEGV: 128+11" 139 $?

# ---- signals sent to heapann reach the program --------------------------------------
# heapann leaves a signal it was started with ignored ignored, for itself and the
# program (as nohup and a shell's & mean): a caller that ignores HUP or TERM
# (nohup make check) would have the program ignore the signal these checks send,
# and one that ignores INT or QUIT (a shell without job control running
# '( make check ) &') would fail the foreground check. SigIgn in /proc/PID/status:
# bit N-1 is signal N, so HUP 0x1, INT 0x2, QUIT 0x4, TERM 0x4000.
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
ign=$((0x${ign#"${ign%????}"} & 0x4007))
DFL=
if [ $ign -ne 0 ]; then
	if env --default-signal=HUP,INT,QUIT,TERM true 2>/dev/null; then
		DFL="env --default-signal=HUP,INT,QUIT,TERM"
		printf '# the caller ignores signals (SigIgn & 0x4007 = 0x%x): heapann is started with HUP, INT, QUIT and TERM set to default\n' $ign
	else
		printf '# the caller ignores signals (SigIgn & 0x4007 = 0x%x) and env has no --default-signal\n' $ign
	fi
fi
# sigcheck MASK NAME...: true when the checks NAME... of the signals in MASK
# (SigIgn bits) can run; else each is counted as skipped, with a message (they
# would wait for a program that ignores the signal sent)
sigcheck() {
	_m=$1; shift
	if [ $((ign & _m)) -eq 0 ] || [ -n "$DFL" ]; then return 0; fi
	for _s; do skip_check "$_s" "signal ignored by the caller"; done
	return 1
}
# the program traps TERM and exits 5: heapann's status 5 proves it got the signal
cat >"$TMP/trap.sh" <<'EOF'
trap 'exit 5' TERM
echo ready
while :; do sleep 0.05; done
EOF
if sigcheck 0x4000 "SIGTERM to heapann: the program's handler ran (exit 5)"; then
$DFL "$H" sh "$TMP/trap.sh" >"$TMP/out" 2>"$TMP/e" &
hp=$!
n=0; while [ ! -s "$TMP/out" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
kill -TERM $hp
wait_max $hp 20 "$TMP/e"
check_eq "SIGTERM to heapann: the program's handler ran (exit 5)" 5 $?
fi
# no handler: the program dies of it, heapann lives on to say so and returns 128+15
printf 'echo ready\nwhile :; do sleep 0.05; done\n' >"$TMP/loop.sh"
rm -f "$TMP/out"
if sigcheck 0x1 "SIGHUP to heapann: the program died of it (128+1)" \
	    "SIGHUP to heapann: heapann lived to report it"; then
$DFL "$H" sh "$TMP/loop.sh" >"$TMP/out" 2>"$TMP/e" &
hp=$!
n=0; while [ ! -s "$TMP/out" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
kill -HUP $hp
wait_max $hp 20 "$TMP/e"
check_eq "SIGHUP to heapann: the program died of it (128+1)" 129 $?
check_grep "SIGHUP to heapann: heapann lived to report it" '^heapann: sh was killed by signal 1 ' "$TMP/e"
fi
# run with & by a shell, heapann starts with INT ignored: so does the program
# (as it would without heapann), and heapann does not die of it either
# (SigIgn: bit 1 is SIGINT, bit 2 SIGQUIT): intquit FILE says which of the two
# the SigIgn line in FILE has ignored
intquit() {
	v=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$1")
	[ -n "$v" ] || { echo unread; return; }
	v=${v#"${v%????}"}   # the low 16 signals are enough
	case $((0x${v:-ffff} & 6)) in 0) echo none ;; 2) echo INT ;; 4) echo QUIT ;; *) echo both ;; esac
}
if sigcheck 0x6 "INT and QUIT: not ignored in the program run in the foreground"; then
$DFL "$H" -o "$TMP/rep" grep SigIgn /proc/self/status >"$TMP/out" 2>"$TMP/e"
check_eq "INT and QUIT: not ignored in the program run in the foreground" none "$(intquit "$TMP/out")"
fi
# the & of a shell started with them set to default, so that it is the & that ignores them
if sigcheck 0x6 "INT and QUIT ignored by the shell (&): the job ended" \
	    "INT and QUIT ignored by the shell (&): ignored in the program too"; then
$DFL sh -c '"$1" -o "$2/rep" grep SigIgn /proc/self/status >"$2/out" 2>"$2/e" & wait $!' sh "$H" "$TMP" &
wait_max $! 20
check_eq "INT and QUIT ignored by the shell (&): the job ended" 0 $?
check_eq "INT and QUIT ignored by the shell (&): ignored in the program too" both "$(intquit "$TMP/out")"
fi

# ---- what the program gets -------------------------------------------------------------
"$H" -o "$TMP/rep" -- sh -c 'echo "$LD_PRELOAD"' >"$TMP/out" 2>"$TMP/e"
check_eq "LD_PRELOAD: the library's absolute path" "$LIB" "$(cat "$TMP/out")"
LD_PRELOAD=libother.so "$H" -o "$TMP/rep" sh -c 'echo "$LD_PRELOAD"' >"$TMP/out" 2>"$TMP/e"
check_eq "LD_PRELOAD: one already set stays, after ours" "$LIB:libother.so" "$(cat "$TMP/out")"
"$H" -o "$TMP/rep" grep -m1 -o '/[^ ]*libheapann\.so' /proc/self/maps >"$TMP/out" 2>"$TMP/e"
check_eq "the library is really loaded in the program" "$LIB" "$(cat "$TMP/out")"
HEAPANN_SNAPSHOT_WAIT=0 "$H" -o "$TMP/rep" sh -c 'echo "$HEAPANN_SNAPSHOT ${HEAPANN_SNAPSHOT_WAIT-unset} $HEAPANN_DEPTH"; test -d "$HEAPANN_SNAPSHOT_DIR"' >"$TMP/out" 2>"$TMP/e"
check_eq "HEAPANN_SNAPSHOT=exit,signal, WAIT passed on, its directory exists" "exit,signal 0 " "$(cat "$TMP/out")"
"$H" -o "$TMP/rep" --depth 7 --snapshot exit sh -c 'echo "$HEAPANN_SNAPSHOT $HEAPANN_DEPTH"' >"$TMP/out" 2>"$TMP/e"
check_eq "--depth 7 --snapshot exit" "exit 7" "$(cat "$TMP/out")"
check "--snapshot exit: no kill -USR2 advice" sh -c "! grep -q 'kill -' '$TMP/e'"
"$H" --snapshot signal:SIGUSR1 true 2>"$TMP/e"
check_grep "--snapshot signal:SIGUSR1: the advice names USR1" 'take one now with: kill -USR1 [0-9]+$' "$TMP/e"
# arguments reach the program untouched; options after PROG are the program's
"$H" -o "$TMP/rep" -- printf '%s|' a 'b c' --report -- "" >"$TMP/out" 2>"$TMP/e"
check_eq "arguments untouched" "a|b c|--report|--||" "$(cat "$TMP/out")"
"$H" -o "$TMP/rep" --top 3 printf '%s|' --depth x >"$TMP/out" 2>"$TMP/e"
check_eq "options after PROG are the program's" "--depth|x|" "$(cat "$TMP/out")"
# the pid it announces is the program's, with the advice to snapshot it
"$H" -o "$TMP/rep" sh -c 'echo $$' >"$TMP/out" 2>"$TMP/e"
p=$(cat "$TMP/out")
check_grep "announces the program's pid and kill -USR2 PID" "^heapann: sh runs as pid $p; snapshots go to $TMP/heapann\.[A-Za-z0-9]+; take one now with: kill -USR2 $p\$" "$TMP/e"
d=$(sed -n 's/.*snapshots go to \([^;]*\);.*/\1/p' "$TMP/e")
check "its private directory is gone afterwards" test ! -e "$d"
check_eq "no private directory left at all" "" "$(ls -d "$TMP"/heapann.* 2>/dev/null)"

# ---- errors -------------------------------------------------------------------------------
"$H" "$TMP/no-such-prog" 2>"$TMP/e"
check_eq "missing PROG: 127" 127 $?
check_grep "missing PROG: says so" "^heapann: $TMP/no-such-prog: no such file$" "$TMP/e"
"$H" no-such-command-heapann 2>"$TMP/e"
check_eq "PROG not on PATH: 127" 127 $?
: >"$TMP/noexec"
"$H" "$TMP/noexec" 2>"$TMP/e"
check_eq "PROG not executable: 126" 126 $?
"$H" 2>"$TMP/e"
check_eq "no PROG: usage, 2" 2 $?
check_grep "no PROG: says so" '^heapann: no program to run' "$TMP/e"
"$H" --no-such-option true 2>"$TMP/e"
check_eq "bad option: 2" 2 $?
"$H" --depth 300 true 2>"$TMP/e"
check_eq "--depth 300: 2" 2 $?
check_eq "--version" "heapann $(cat VERSION)" "$("$H" --version)"
"$H" --help >"$TMP/out"
check_grep "--help names the passed-on options" '^  --report LIST  --format FMT  -o, --output FILE' "$TMP/out"

# ---- heapann's side of the report, with a stand-in for the snapshots -------------------
if strings "$B/libheapann.so" | grep -q HEAPANN_SNAPSHOT; then
	echo "# libheapann.so writes its own snapshots: run-launcher-snapshot.sh tests the report; no stand-in"
	done_testing
fi
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb
command -v gdb >/dev/null 2>&1 || { echo "# no gdb: the stand-in cannot write cores"; done_testing; }
cc -g -O1 -fno-omit-frame-pointer -o "$TMP/snap_standin" tests/prog/snap_standin.c
src=tests/prog/snap_standin.c
La=$(grep -n 'MARK:a ' $src | cut -d: -f1); Lb=$(grep -n 'MARK:b ' $src | cut -d: -f1)

# two early snapshots and the exit one, kept in DIR; exit status 4
"$H" --keep-core "$TMP/keep" --format=json "$TMP/snap_standin" 2 4 >"$TMP/j" 2>"$TMP/e"
check_eq "stand-in: the program's status (4) after the report" 4 $?
p=$(sed -n 's/.*runs as pid \([0-9]*\);.*/\1/p' "$TMP/e")
check_grep "stand-in: three snapshots, the last reported" "^heapann: 3 snapshots of pid $p; this is the last, $TMP/keep/snap_standin\.$p\.3\.core\$" "$TMP/e"
check_grep "stand-in: how to report the first" "^heapann:   the others: mprof-core $TMP/snap_standin $TMP/keep/snap_standin\.$p\.1\.core\$" "$TMP/e"
check "stand-in: exit core: 2 blocks, 4000 bytes" python3 tests/jstack.py "$TMP/j" total 2 4000
check "stand-in: exit core: alloc_a's 1000" python3 tests/jstack.py "$TMP/j" stack 1000 1 "alloc_a:$La"
check "stand-in: exit core: alloc_b's 3000" python3 tests/jstack.py "$TMP/j" stack 3000 1 "alloc_b:$Lb"
check_eq "stand-in: --keep-core keeps all three" 3 "$(ls "$TMP/keep" | grep -c "^snap_standin\.$p\.[123]\.core\$")"
"$B/mprof-core" --format=json "$TMP/snap_standin" "$TMP/keep/snap_standin.$p.1.core" >"$TMP/j1" 2>"$TMP/e1"
check "stand-in: the first snapshot, as advised: 3 blocks, 7000 bytes" python3 tests/jstack.py "$TMP/j1" total 3 7000

# the private directory: report options and -o pass through, the cores are removed
"$H" --report=stacks -o "$TMP/report.txt" --top 1 "$TMP/snap_standin" 0 0 >"$TMP/out" 2>"$TMP/e"
check_eq "stand-in: -o: exit 0" 0 $?
check_grep "stand-in: -o FILE got the report" '^live blocks: 2, requested bytes: 4,000' "$TMP/report.txt"
check_eq "stand-in: --top 1: one stack shown" 1 "$(grep -c '^#[0-9]' "$TMP/report.txt")"
check_eq "stand-in: nothing on stdout with -o" 0 "$(wc -c <"$TMP/out")"
d=$(sed -n 's/.*snapshots go to \([^;]*\);.*/\1/p' "$TMP/e")
check "stand-in: the private directory and its core are removed" test ! -e "$d"
# --no-report keeps them and says how to report
"$H" --no-report "$TMP/snap_standin" 0 0 >"$TMP/out" 2>"$TMP/e"
d=$(sed -n 's/.*snapshots go to \([^;]*\);.*/\1/p' "$TMP/e")
check_grep "stand-in: --no-report says how to report" "^heapann: snapshot kept: $d/snap_standin\.[0-9]+\.1\.core; report it with: mprof-core " "$TMP/e"
check "stand-in: --no-report keeps the core" test -s "$d"/snap_standin.*.1.core
rm -rf "$d"
done_testing
