#!/bin/sh
# run-diff.sh - mprof-core diff (issue 12) end to end: tests/prog/diff_prog.c under
# the preload, a gcore at each of its two "ready" moments, and the exact change per
# stack (blocks and bytes before and after, allocations and frees in between) in
# JSON, text and the two-column folded form; two separate runs (other addresses
# under ASLR) still pair their stacks; two builds are refused.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

src=tests/prog/diff_prog.c
cc -g -O0 -DVARIANT=1 -o "$TMP/diff_prog-v1" "$src" || skip "cannot compile the test program"
line() { grep -n "MARK:$1 " "$src" | cut -d: -f1; }

# gcore_two OUT1 OUT2 PROG...: run PROG under the preload; a gcore at its first
# "ready" (OUT1), then a line on its stdin, a gcore at its second "ready" (OUT2),
# another line, and its exit status. OUT2 "-" stops after OUT1.
gcore_two() {
	g1=$1 g2=$2; shift 2
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	: >"$TMP/out"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$@" <"$TMP/fifo" >"$TMP/out" &
	gpid=$!
	exec 9>"$TMP/fifo"
	for want in 1 2; do
		n=0
		while [ "$(grep -c '^ready' "$TMP/out")" -lt $want ] && [ $n -lt 200 ]; do
			sleep 0.05; n=$((n + 1))
		done
		if [ $want = 1 ]; then
			make_gcore $gpid "$g1"
		elif [ "$g2" != - ]; then
			make_gcore $gpid "$g2"
		fi
		echo >&9
	done
	exec 9>&-
	wait $gpid
}

# summary of a diff JSON: one line per stack in order,
# "innermost-function blocks_old blocks_new bytes_old bytes_new allocs frees"
rows() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["stacks"]:
    fn = s["frames"][0]["function"] if s["frames"] else "-"
    print(fn, s["blocks_old"], s["blocks_new"], s["bytes_old"], s["bytes_new"],
          s["allocs_between"], s["frees_between"])
print("old", d["old"]["blocks"], d["old"]["bytes"], "new", d["new"]["blocks"], d["new"]["bytes"],
      "between", d["between"])
EOF
}

# the two-column form read back: innermost frame, OLD, NEW (as difffolded.pl writes)
folded2() {
	python3 -c '
import sys
for l in open(sys.argv[1]):
    stack, old, new = l.rstrip("\n").rsplit(" ", 2)
    print(stack.split(";")[-1], int(old), int(new))
' "$1" | sort
}

# leak_frames JSON L1 L2 L3: leak_a's stack starts leak_a:L1, work:L2, main:L3
leak_frames() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [s for s in d["stacks"] if s["frames"][0]["function"] == "leak_a"][0]
f = [(x["function"], x["line"]) for x in s["frames"][:3]]
sys.exit(f != [("leak_a", int(sys.argv[2])), ("work", int(sys.argv[3])), ("main", int(sys.argv[4]))])
' "$@"
}

for opt in -O0 -O2; do
	exe=$TMP/diff_prog$opt
	cc -g $opt -o "$exe" "$src" || skip "cannot compile the test program"
	gcore_two "$TMP/c1$opt" "$TMP/c2$opt" "$exe"
	check_eq "program finished normally after two gcores$opt" 0 $?
	check "both gcores written$opt" test -s "$TMP/c1$opt" -a -s "$TMP/c2$opt"

	"$B/mprof-core" diff --format json "$exe" "$TMP/c1$opt" "$TMP/c2$opt" >"$TMP/d.json" 2>"$TMP/d.err"
	check_eq "diff json: exit 0$opt" 0 $?
	rows "$TMP/d.json" >"$TMP/rows"
	# new_e +1000, leak_a +400, then no growth (steady_c, churn_d: in the order of
	# their call lines in work), and temp_b -600 last
	expect=$(printf '%s\n' "new_e 0 1 0 1000 1 0" "leak_a 5 9 500 900 4 0" "steady_c 2 2 600 600 0 0" \
		"churn_d 0 0 0 0 7 7" "temp_b 3 0 600 0 0 3" "old 10 1700 new 12 2500 between True")
	check_eq "diff json: every stack's change, largest growth first$opt" "$expect" "$(cat "$TMP/rows")"
	check "diff json: frames like the stacks report (leak_a from work from main, with lines)$opt" \
		leak_frames "$TMP/d.json" "$(line leak_a)" "$(grep -n 'leak_a();' "$src" | cut -d: -f1)" "$(line work)"

	"$B/mprof-core" diff "$exe" "$TMP/c1$opt" "$TMP/c2$opt" >"$TMP/d.txt" 2>&1
	check_eq "diff text: exit 0$opt" 0 $?
	check_grep "diff text: totals$opt" '^change: \+2 blocks, \+800 bytes; 5 stacks: 2 grew, 1 shrank$' "$TMP/d.txt"
	check_grep "diff text: allocations and frees in between$opt" '^in between: 12 allocations, 10 frees$' "$TMP/d.txt"
	check_grep "diff text: #1 is new_e$opt" '^#1: \+1,000 bytes, \+1 blocks: 0 -> 1,000 bytes, 0 -> 1 blocks; in between 1 allocations, 0 frees$' "$TMP/d.txt"
	check_grep "diff text: leak_a's frame$opt" "^    leak_a \(diff_prog.c:$(line leak_a)\) \[diff_prog$opt\]$" "$TMP/d.txt"
	check_grep "diff text: temp_b shrank$opt" '^#5: -600 bytes, -3 blocks: 600 -> 0 bytes, 3 -> 0 blocks; in between 0 allocations, 3 frees$' "$TMP/d.txt"

	"$B/mprof-core" diff --format folded "$exe" "$TMP/c1$opt" "$TMP/c2$opt" >"$TMP/d.folded" 2>/dev/null
	check_eq "diff folded: exit 0$opt" 0 $?
	check_eq "diff folded: stack OLD NEW in bytes$opt" \
		"$(printf '%s\n' "churn_d 0 0" "leak_a 500 900" "new_e 0 1000" "steady_c 600 600" "temp_b 600 0")" \
		"$(folded2 "$TMP/d.folded")"
	check_grep "diff folded: root first$opt" '^_start;.*;main;work;leak_a 500 900$' "$TMP/d.folded"
	"$B/mprof-core" diff --format folded --weight blocks "$exe" "$TMP/c1$opt" "$TMP/c2$opt" >"$TMP/b.folded" 2>/dev/null
	check_eq "diff folded --weight blocks$opt" \
		"$(printf '%s\n' "churn_d 0 0" "leak_a 5 9" "new_e 0 1" "steady_c 2 2" "temp_b 3 0")" \
		"$(folded2 "$TMP/b.folded")"
	"$B/mprof-core" diff --format folded --folded-lines "$exe" "$TMP/c1$opt" "$TMP/c2$opt" >"$TMP/l.folded" 2>/dev/null
	check_grep "diff folded --folded-lines$opt" ";leak_a \(diff_prog.c:$(line leak_a)\) 500 900$" "$TMP/l.folded"
	"$B/mprof-core" diff --format json -o "$TMP/o.json" "$exe" "$TMP/c1$opt" "$TMP/c2$opt" 2>/dev/null
	check_eq "diff -o FILE: the same JSON$opt" "$(cat "$TMP/rows")" "$(rows "$TMP/o.json")"
done

# The same moments from two runs (of the -O2 build): other addresses under ASLR,
# the same stacks; the statistics of two processes say nothing about "in between".
gcore_two "$TMP/r1" - "$exe"
gcore_two "$TMP/skip" "$TMP/r2" "$exe"
"$B/mprof-core" --format json "$exe" "$TMP/r1" >"$TMP/r1.json" 2>/dev/null
"$B/mprof-core" --format json "$exe" "$TMP/r2" >"$TMP/r2.json" 2>/dev/null
aslr=$(python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
fa = {s["frames"][0]["addr"] for s in a["stacks"]}
fb = {s["frames"][0]["addr"] for s in b["stacks"]}
print("moved" if not fa & fb else "same")' "$TMP/r1.json" "$TMP/r2.json")
[ "$aslr" = moved ] || echo "# note: addresses did not move between the runs (ASLR off?)"
"$B/mprof-core" diff --format json "$exe" "$TMP/r1" "$TMP/r2" >"$TMP/r.json" 2>"$TMP/r.err"
check_eq "two runs: exit 0" 0 $?
check_eq "two runs: stacks paired by their frames, no in-between counts" \
	"$(printf '%s\n' "new_e 0 1 0 1000 None None" "leak_a 5 9 500 900 None None" \
		"steady_c 2 2 600 600 None None" "temp_b 3 0 600 0 None None" \
		"old 10 1700 new 12 2500 between False")" "$(rows "$TMP/r.json")"
check_grep "two runs: a note says why" 'not two moments of one process' "$TMP/r.err"

# Two builds of one source: refused, one line, exit 1.
gcore_two "$TMP/v1" - "$TMP/diff_prog-v1"
"$B/mprof-core" diff "$TMP/diff_prog-O0" "$TMP/c1-O0" "$TMP/v1" >"$TMP/v.out" 2>"$TMP/v.err"
check_eq "two builds: exit 1" 1 $?
check_grep "two builds: refused clearly" '^mprof-core: diff: .*/c1-O0 and .*/v1 are cores of different builds \(build-id [0-9a-f]+, build-id [0-9a-f]+\)' "$TMP/v.err"
check_eq "two builds: one line, nothing on stdout" "1 0" "$(wc -l <"$TMP/v.err") $(wc -c <"$TMP/v.out")"

# Usage errors: exit 2.
"$B/mprof-core" diff "$TMP/diff_prog-O0" "$TMP/c1-O0" >/dev/null 2>"$TMP/u.err"
check_eq "diff with one core: exit 2" 2 $?
check_grep "diff with one core: says what it needs" 'diff needs PROG OLD NEW' "$TMP/u.err"
"$B/mprof-core" diff --format svg "$TMP/diff_prog-O0" "$TMP/c1-O0" "$TMP/c2-O0" >/dev/null 2>"$TMP/u.err"
check_eq "diff --format svg: exit 2" 2 $?
"$B/mprof-core" diff "$TMP/diff_prog-O0" "$TMP/c1-O0" "$TMP/missing" >/dev/null 2>"$TMP/u.err"
check_eq "diff with a missing core: exit 1" 1 $?
check_grep "diff with a missing core: names it" "missing" "$TMP/u.err"
done_testing
