#!/bin/sh
# runall.sh - run every unit test binary and every tests/run-*.sh script, show
# their "ok"/"not ok" lines, and end with the total "N passed, N failed".
# A test that exits 77 is skipped (a tool it needs is missing). Logs: $B/tests/log/.
# Each script's name is printed before it runs, and every HEARTBEAT seconds (15)
# while it does, so that no long stretch is silent.
# Usage: B=build [SKIP="name ..."] [HEARTBEAT=SECONDS] sh tests/runall.sh [NAME-FILTER]
B=${B:-build}
filter=${1:-}
skip_names=${SKIP:-}
log=$B/tests/log
mkdir -p "$log"
passed=0 failed=0 skipped=0
run_one() {
	name=$1; shift
	case "$name" in *"$filter"*) ;; *) return ;; esac
	for sk in $skip_names; do [ "$sk" = "$name" ] && return; done
	out=$log/$name.out
	# the scripts can run for minutes: say which one is running, and every
	# HEARTBEAT seconds (default 15) that it still is
	hb=""
	case "$name" in run-*)
		echo "$name ..."
		( n=0; while sleep "${HEARTBEAT:-15}" </dev/null >/dev/null 2>&1; do
			n=$((n + ${HEARTBEAT:-15}))
			echo "$name ... ${n}s, $(grep -c '^ok' "$out" 2>/dev/null) checks passed so far"
		done ) &
		hb=$!
	esac
	t0=$(date +%s)
	"$@" >"$out" 2>"$log/$name.err" </dev/null
	rc=$?
	[ -n "$hb" ] && { kill "$hb" 2>/dev/null; wait "$hb" 2>/dev/null; }
	secs=$(( $(date +%s) - t0 ))
	if [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "skip $name: $(tail -n 1 "$log/$name.err")"
		return
	fi
	p=$(tail -n 1 "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
	f=$(tail -n 1 "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
	grep '^not ok' "$out" | sed "s/^/$name: /"
	if [ -z "$p" ]; then
		echo "not ok $name: exited $rc without a summary line (see $log/$name.err)"
		tail -n 5 "$log/$name.err" | sed 's/^/    /'
		failed=$((failed + 1))
		return
	fi
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok $name: exited $rc"
		f=1
	fi
	echo "$name: $p passed, $f failed (${secs}s)"
	passed=$((passed + p)); failed=$((failed + f))
}
for t in "$B"/tests/t_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for s in tests/run-*.sh; do
	[ -f "$s" ] || continue
	run_one "$(basename "$s" .sh)" env B="$B" sh "$s"
done
[ $skipped -gt 0 ] && echo "($skipped test programs skipped)"
echo "(full output of each test: $log/NAME.out and NAME.err)"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
