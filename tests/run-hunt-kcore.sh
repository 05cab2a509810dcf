#!/bin/sh
# run-hunt-kcore.sh - a kernel core (ulimit -c unlimited, core_pattern "core")
# of tests/prog/hunt_threads.c, which aborts in one of its 5 threads: the thread
# count, each stack's exact bytes at its line, and the lost report's categories
# that the program knows (a dropped list: head definitely, the rest indirectly
# lost; a thread that exited: definitely lost; a global and TLS: reachable). A
# kernel core leaves out read-only file mappings, which hold no references: the
# lost report must not warn about them.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || skip "core_pattern is not 'core'"

src=tests/prog/hunt_threads.c
mark() { grep -n "/\* MARK:$1 \*/" $src | cut -d: -f1; }
exe=$TMP/hunt_threads
cc -g -O0 -pthread -o "$exe" $src
mkdir -p "$TMP/run"
(cd "$TMP/run" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" exec "$exe") 2>/dev/null
check_eq "the program aborted (134)" 134 $?
core=$(ls "$TMP"/run/core* 2>/dev/null | head -n 1)
[ -n "$core" ] && [ -s "$core" ] || skip "no kernel core written (ulimit -c, or a container's core_pattern)"

J=$TMP/k.json
"$B/mprof-core" --format json "$exe" "$core" >"$J" 2>"$J.err"
check_eq "json: exit 0" 0 $?
check_eq "json: 5 threads" 5 "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"])' "$J")"
check "main: 2222 bytes in 1 block" python3 tests/jstack.py "$J" stack 2222 1 "main:$(mark main)"
check "workers: 4006 bytes in 4 blocks" python3 tests/jstack.py "$J" stack 4006 4 "worker:$(mark tls)"
check "lists: 12 x 48 bytes" python3 tests/jstack.py "$J" stack 576 12 "leak_list:$(mark node)" "worker:$(mark leak)"
check "exited thread: 555 bytes" python3 tests/jstack.py "$J" stack 555 1 "shortlived:$(mark short)"

L=$TMP/lost.txt
"$B/mprof-core" --report=lost "$exe" "$core" >"$L" 2>"$L.err"
check_eq "lost: exit 0" 0 $?
check_grep "lost: main's global still reachable" '^#[0-9]+: 2,222 bytes in 1 blocks are still reachable$' "$L"
check_grep "lost: TLS still reachable" '^#[0-9]+: 4,006 bytes in 4 blocks are still reachable$' "$L"
check_grep "lost: 4 list heads definitely lost" '^#[0-9]+: 192 bytes in 4 blocks are definitely lost$' "$L"
check_grep "lost: 8 list nodes indirectly lost" '^#[0-9]+: 384 bytes in 8 blocks are indirectly lost$' "$L"
check_grep "lost: the exited thread's block definitely lost" '^#[0-9]+: 555 bytes in 1 blocks are definitely lost$' "$L"
check_grep "lost: 747 bytes definitely lost in all" '^ +definitely lost: 747 bytes in 5 blocks$' "$L"
check_grep "lost: 384 bytes indirectly lost in all" '^ +indirectly lost: 384 bytes in 8 blocks$' "$L"
check "lost: the core has no writable memory missing" \
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["missing"]["writable_bytes"] != 0)' "$J"
check "lost: no note about missing memory (only read-only file mappings are)" \
	sh -c "! grep -q 'are missing from the image' '$L'"
done_testing
