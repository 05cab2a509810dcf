#!/bin/sh
# run-hunt4-threads.sh - threads under the preload (tests/prog/hunt4_threads.c).
# busy: 16 threads, each with its own stack depth, keep (t + 1) x 10 blocks of
# 16 + t bytes and then allocate and free without pause; four gcores taken
# while they are inside malloc must each show the 16 stacks with exactly those
# blocks, at most one churn block per thread (its own size), 17 threads and no
# damaged header (a header caught half-written is "being written", not damage).
# exits: 100 threads that end while others run, each allocating from a
# pthread key destructor after it returned, and 8 threads cancelled in their
# malloc/free loop: the statistics' calls per site and the live blocks exact.
. tests/lib.sh
M=$B/mprof-core
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb >/dev/null 2>&1
command -v gdb >/dev/null 2>&1 || skip "gdb missing (gcore)"
src=tests/prog/hunt4_threads.c
exe=$TMP/threads
check "build" cc -g -O1 -pthread -o "$exe" $src

for i in 1 2 3 4; do
	gcore_waiting "$TMP/busy$i.core" "$exe" busy
	$M --format json "$exe" "$TMP/busy$i.core" >"$TMP/busy$i.json" 2>"$TMP/busy$i.err"
	check_eq "busy $i: exit 0" 0 $?
	check_eq "busy $i: every thread's kept blocks at its own stack, no damage" \
		"threads=17 keep=16 damaged=0 churn=ok" "$(python3 - "$TMP/busy$i.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keep, churn = {}, {}
for s in d["stacks"]:
    fr = [f.get("function") for f in s["frames"]]
    if not fr:
        continue
    t = fr.count("rec") - 1      # thread t recursed t times below its first rec()
    if fr[0] == "keep_site":
        keep[t] = keep.get(t, (0, 0))
        keep[t] = (keep[t][0] + s["blocks"], keep[t][1] + s["bytes"])
    elif fr[0] == "churn_site":
        churn[t] = (s["blocks"], s["bytes"])
ok = sum(1 for t, (b, y) in keep.items() if 0 <= t < 16 and b == (t + 1) * 10 and y == b * (16 + t))
bad = [t for t, (b, y) in churn.items() if not (0 <= t < 16 and b == 1 and y == 5000 + t)]
print("threads=%d keep=%d damaged=%d churn=%s" % (d["threads"], ok, d["damaged_headers"], "ok" if not bad else bad))
PY
)"
done

gcore_waiting "$TMP/exits.core" "$exe" exits
$M --format json --report=stacks,direct "$exe" "$TMP/exits.core" >"$TMP/exits.json" 2>"$TMP/exits.err"
check_eq "exits: exit 0" 0 $?
check_eq "exits: live blocks per site" \
	"keep_site=395/17370 dtor_site=100/7700 churn_site=0/0 cancel_site=0/0" \
	"$(sums "$TMP/exits.json" keep_site dtor_site churn_site cancel_site)"
check_eq "exits: the statistics' calls and kept bytes per site" \
	"churn_site 100000 0 dtor_site 100 7700 keep_site 395 17370" "$(python3 - "$TMP/exits.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s %d %d" % (r["function"], r["calls"], r["kept_bytes"])
               for r in sorted(d["direct"], key=lambda r: r["function"])
               if r["function"] in ("keep_site", "churn_site", "dtor_site")))
PY
)"
check_eq "exits: one thread left, no damage" "1 0" "$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(d['threads'], d['damaged_headers'])" "$TMP/exits.json")"
l=$(grep -n 'MARK:dtor' $src | cut -d: -f1)
$M "$exe" "$TMP/exits.core" >"$TMP/exits.txt" 2>&1
check_grep "exits: the destructor's blocks at their line" "^    dtor_site \\(hunt4_threads.c:$l\\) \\[threads\\]" "$TMP/exits.txt"
done_testing
