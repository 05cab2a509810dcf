#!/bin/sh
# run-hunt6b-addr.sh - --addr in memory an overflow ran through
# (tests/prog/hunt6b_overflow.c): the culprit's 40 bytes are overwritten up to
# 8 bytes into its neighbour, whose whole header is gone. An address in the
# neighbour is heap memory in no block (the scan cannot see it), and the answer
# says the block before it overflowed past its guard and may have written there;
# after a block with an intact guard it says nothing of the kind. Without guards
# the corruption report's suspect is not said to have an intact one.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"

exe=$TMP/ov
cc -g -O0 -o "$exe" tests/prog/hunt6b_overflow.c
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" >"$TMP/ov.out" 2>/dev/null)
check "kernel core written" test -s "$TMP/core"
addr() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/ov.out"; }
q=$(addr quiet); a=$(addr culprit); b=$(addr victim)
in_b=$(printf '0x%x' $((b + 20)))
after_q=$(printf '0x%x' $((q + 24 + 8 + 4)))

"$B/mprof-core" --addr "$in_b" --addr "$after_q" "$exe" "$TMP/core" >"$TMP/a.txt" 2>&1
check_eq "exit 3: corruption found" 3 $?
check_grep "the corruption report: the victim (seq 3) erased" 'the allocation between them, seq 3, is found nowhere in the image' "$TMP/a.txt"
check_grep "in the erased neighbour: heap memory in no block" "^address $in_b: heap memory in no annotated block\$" "$TMP/a.txt"
check_grep "... after the culprit, which overflowed past its guard" \
	"^  before it, $((b + 20 - a - 40)) bytes after its end: live block $a \\(40 bytes, seq 2\\), whose overflow ran past its guard and may have written here" "$TMP/a.txt"
check_grep "after the quiet block: heap memory in no block" "^address $after_q: heap memory in no annotated block\$" "$TMP/a.txt"
check_grep "... after the quiet block, its guard intact: no such note" \
	"^  before it, 12 bytes after its end: live block $q \\(24 bytes, seq 1\\)\$" "$TMP/a.txt"

# Without guards (HEAPANN_GUARD=0) a 40-byte overrun of a 24-byte block damages
# the next header's start: the suspect before it has no guard, which the report
# must not call intact (tests/prog/corrupt_overflow.c, a gcore while it waits)
if command -v gdb >/dev/null; then
	cc -g -O0 -o "$TMP/co" tests/prog/corrupt_overflow.c
	gcore_waiting "$TMP/co.core" env HEAPANN_GUARD=0 "$TMP/co" overflow 24 40 wait
	culprit=$(sed -n 's/^culprit=//p' "$TMP/out")
	"$B/mprof-core" --report=corruption "$TMP/co" "$TMP/co.core" >"$TMP/co.txt" 2>&1
	check_eq "no guards: exit 3" 3 $?
	check_grep "no guards: next's header damaged" '^damaged header at 0x[0-9a-f]+ \(start magic overwritten' "$TMP/co.txt"
	check_grep "no guards: the suspect has no guard, not an intact one" \
		"^  suspect: live block $culprit \\(24 bytes, seq [0-9]+\\) just before it, [0-9]+ bytes between its end and this header; it has no guard \\(HEAPANN_GUARD=0\\)" "$TMP/co.txt"
	check "no guards: no guard called intact" sh -c "! grep -q 'guard is intact' '$TMP/co.txt'"
else
	echo "# gdb not installed: the part without guards skipped"
fi
done_testing
