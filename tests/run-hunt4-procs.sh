#!/bin/sh
# run-hunt4-procs.sh - child processes of a program under the preload
# (tests/prog/hunt4_procs.c): a forked child, a posix_spawn'd, a vfork+exec'd
# and a system() child (LD_PRELOAD inherited: the exec'd program runs
# annotated), and a daemon's grandchild (fork, fork, setsid). Each child is
# gcore'd while its parent waits: the report must hold exactly the child's
# blocks (a forked child also the parent's 4 x 100, which it shares; an exec'd
# one none of them), no damage, and the statistics of that process (its calls
# per site). Then the launcher on a program whose children write exit
# snapshots too: it reports the parent's own and says how many others there
# are (it said "1 more snapshots").
. tests/lib.sh
M=$B/mprof-core
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb >/dev/null 2>&1
command -v gdb >/dev/null 2>&1 || skip "gdb missing (gcore)"
src=tests/prog/hunt4_procs.c
exe=$TMP/procs
check "build" cc -g -O0 -o "$exe" $src
cl=$(grep -n 'MARK:child_site' $src | cut -d: -f1)
pl=$(grep -n 'MARK:parent_site' $src | cut -d: -f1)

# gcore_child MODE OUT: run the program in MODE under the preload, gcore the
# child that prints "ready PID", then let it go and end the parent.
gcore_child() {
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" "$1" <"$TMP/fifo" >"$TMP/$1.out" &
	pp=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q '^ready' "$TMP/$1.out" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	cpid=$(awk '/^ready/ { print $2; exit }' "$TMP/$1.out")
	[ -n "$cpid" ] && make_gcore "$cpid" "$2"
	echo >&9; exec 9>&-
	[ "$1" = daemon ] && { sleep 0.2; kill "$pp" 2>/dev/null; }
	wait "$pp"
	[ -n "$cpid" ] && [ "$cpid" != "$pp" ] && [ -s "$2" ]
}

# MODE CHILD_BLOCKS CHILD_SIZE PARENT_BLOCKS
for c in "fork 5 222 4" "spawn 7 333 0" "vfork 7 333 0" "system 7 333 0" "daemon 6 111 4"; do
	set -- $c
	mode=$1 cb=$2 cs=$3 pb=$4
	check "$mode: gcore of the child" gcore_child $mode "$TMP/$mode.core"
	$M --format json --report=stacks,direct "$exe" "$TMP/$mode.core" >"$TMP/$mode.json" 2>"$TMP/$mode.err"
	check_eq "$mode: exit 0" 0 $?
	check_eq "$mode: the child's blocks, and the parent's it shares" \
		"child_site=$cb/$((cb * cs)) parent_site=$pb/$((pb * 100))" \
		"$(sums "$TMP/$mode.json" child_site parent_site)"
	check_eq "$mode: no damage" "0 0" "$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(d['damaged_headers'], d['freed_blocks'])" "$TMP/$mode.json")"
	# the statistics region is the process's own: the direct table's calls per site
	check_eq "$mode: calls per site in the statistics" "child_site=$cb parent_site=$pb" "$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r['function']: r['calls'] for r in d['direct']}
print('child_site=%d parent_site=%d' % (rows.get('child_site', 0), rows.get('parent_site', 0)))" "$TMP/$mode.json")"
	$M "$exe" "$TMP/$mode.core" >"$TMP/$mode.txt" 2>&1
	check_grep "$mode: child_site at its line" "^    child_site \\(hunt4_procs.c:$cl\\) \\[procs\\]" "$TMP/$mode.txt"
done

# the launcher: its report is the parent's own exit snapshot, not a child's
# (a forked child that ends with _exit writes none: README, Known limits)
for c in "system 1" "spawn 1" "fork 0"; do
	set -- $c
	mode=$1 more=$2
	$B/heapann --report=stacks "$exe" $mode nowait >"$TMP/l$mode.out" 2>"$TMP/l$mode.err"
	check_eq "launcher $mode: exit 0" 0 $?
	check_grep "launcher $mode: the parent's blocks" "^    parent_site \\(hunt4_procs.c:$pl\\) \\[procs\\]" "$TMP/l$mode.out"
	check_eq "launcher $mode: no child block in the parent's report" 0 "$(grep -c child_site "$TMP/l$mode.out")"
	if [ $more = 1 ]; then
		check_grep "launcher $mode: one more snapshot, said so" \
			"^heapann: 1 more snapshot, of a child process, in .*--keep-core keeps it\)$" "$TMP/l$mode.err"
	else
		check_eq "launcher $mode: no other snapshot" 0 "$(grep -c 'more snapshot' "$TMP/l$mode.err")"
	fi
done
done_testing
