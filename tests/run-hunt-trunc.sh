#!/bin/sh
# run-hunt-trunc.sh - a gcore of tests/prog/hunt_allocs.c cut at many points, as
# a full disk or a size limit leaves it. gcore writes its notes (threads, mapped
# files) after the memory, so a cut file loses them first: the report must say
# so rather than show "0 threads" and unnamed library frames without a word.
# Every cut: no crash, exit 0 with the truncation said, or exit 1 with one line
# naming the file.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/ha
cc -g -O0 -o "$exe" tests/prog/hunt_allocs.c
gcore_waiting "$TMP/core" "$exe"
check "gcore written" test -s "$TMP/core"
size=$(wc -c <"$TMP/core")
noteoff=$(( $(readelf -lW "$TMP/core" | awk '$1 == "NOTE" { print $2 }') ))
notesz=$(( $(readelf -lW "$TMP/core" | awk '$1 == "NOTE" { print $5 }') ))
check "gcore wrote its notes after the memory" test "$noteoff" -gt $((size / 2))

"$B/mprof-core" "$exe" "$TMP/core" >"$TMP/whole.out" 2>&1
check_eq "whole core: exit 0" 0 $?
check "whole core: no note of cut notes" sh -c "! grep -q 'notes cut off' '$TMP/whole.out'"

# cut right where the notes start: every block is there, the notes are not
head -c "$noteoff" "$TMP/core" >"$TMP/cut"
"$B/mprof-core" "$exe" "$TMP/cut" >"$TMP/cut.out" 2>"$TMP/cut.err"
check_eq "cut at the notes: exit 0" 0 $?
check_grep "cut at the notes: all 15 blocks still found" '^live blocks: 15, requested bytes: 10,493,368,' "$TMP/cut.out"
check_grep "cut at the notes: the file is said to be truncated" '\(the file is truncated\)' "$TMP/cut.out"
# no writable byte is missing: the line said "0 bytes of writable memory in 0
# segments (...): blocks there are not seen" (fifth bug hunt)
check_grep "cut at the notes: no writable memory is missing" '^missing from the image: no writable memory \(the file is truncated\)$' "$TMP/cut.out"
check_grep "cut at the notes: the lost notes are said" '^notes cut off by the truncation: threads and mapped files are missing' "$TMP/cut.out"
"$B/mprof-core" --format json "$exe" "$TMP/cut" >"$TMP/cut.json" 2>/dev/null
check "cut at the notes: JSON missing.notes_cut is true" \
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["missing"]["notes_cut"] is not True)' "$TMP/cut.json"
check "whole core: JSON missing.notes_cut is false" sh -c \
	"'$B/mprof-core' --format json '$exe' '$TMP/core' 2>/dev/null | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[\"missing\"][\"notes_cut\"] is not False)'"

# cut in the middle of the notes
head -c $((noteoff + notesz / 2)) "$TMP/core" >"$TMP/cut1"
"$B/mprof-core" "$exe" "$TMP/cut1" >"$TMP/cut1.out" 2>&1
check_eq "cut inside the notes: exit 0" 0 $?
check_grep "cut inside the notes: the cut notes are said" '^notes cut off by the truncation' "$TMP/cut1.out"

# inside the program headers: one line naming the file, exit 1
head -c 100 "$TMP/core" >"$TMP/cut100"
"$B/mprof-core" "$exe" "$TMP/cut100" >"$TMP/cut100.out" 2>"$TMP/cut100.err"
check_eq "cut at 100 bytes: exit 1" 1 $?
check_eq "cut at 100 bytes: one line on stderr" 1 "$(wc -l <"$TMP/cut100.err")"
check_grep "cut at 100 bytes: it names the file" "^mprof-core: .*cut100: truncated core" "$TMP/cut100.err"

# diff with a cut core as OLD: its side says what it lacks, in text and JSON
head -c $((size / 2)) "$TMP/core" >"$TMP/half"
"$B/mprof-core" diff "$exe" "$TMP/half" "$TMP/core" >"$TMP/diff.out" 2>&1
check_eq "diff, half a core as OLD: exit 0" 0 $?
check_grep "diff: the old side says it is truncated" '^old .*half: .*; missing from the image: [0-9,]+ bytes of writable memory \(the file is truncated\): blocks there are not seen' "$TMP/diff.out"
check_grep "diff: and that its notes are cut off" '^old .*half: .*notes cut off' "$TMP/diff.out"
check "diff: the new side, whole, says nothing of the kind" sh -c "! grep '^new ' '$TMP/diff.out' | grep -q 'missing from the image'"
"$B/mprof-core" diff --format json "$exe" "$TMP/half" "$TMP/core" >"$TMP/diff.json" 2>/dev/null
check "diff JSON: old.truncated true, new.truncated false" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["old"]["truncated"] is True and d["new"]["truncated"] is False and d["old"]["missing_writable_bytes"] > 0 and d["new"]["missing_writable_bytes"] == 0))' "$TMP/diff.json"

# sixteen cuts across the file: never a crash, every exit 0 or 1
bad=
for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	head -c $((size * k / 16)) "$TMP/core" >"$TMP/cutk"
	"$B/mprof-core" --report=all "$exe" "$TMP/cutk" >/dev/null 2>"$TMP/cutk.err"
	rc=$?
	[ $rc -le 1 ] || bad="$bad $k/16:$rc"
done
check_eq "16 cuts, --report=all: exit 0 or 1 each" "" "$bad"
done_testing
