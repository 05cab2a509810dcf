#!/bin/sh
# run-hunt3-runtime.sh - heap damage that libheapann catches while the program
# runs but that a later core cannot show by itself (tests/prog/hunt3_freed.c): a
# block overflowed and then freed or reallocated (free and realloc check the
# guard, then the block is gone), a double free and a realloc of a freed block.
# libheapann counts them in its statistics region; mprof-core must report them
# (the last broken block by its allocation stack while its freed header is in the
# image) and exit 3, as it does for damage it finds in the image itself.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/hunt3_freed
cc -g -O0 -o "$exe" tests/prog/hunt3_freed.c || skip "cannot compile the test program"

for mode in clean guard double both; do
	gcore_waiting "$TMP/$mode.core" "$exe" $mode 2>"$TMP/$mode.err"
	check_eq "$mode: the program ran to its end" 0 $?
	cp "$TMP/out" "$TMP/$mode.out"
	"$B/mprof-core" "$exe" "$TMP/$mode.core" >"$TMP/$mode.txt" 2>/dev/null
	echo $? >"$TMP/$mode.rc"
	"$B/mprof-core" --format json "$exe" "$TMP/$mode.core" >"$TMP/$mode.json" 2>/dev/null
done

# the program's own view, from libheapann's lines on its stderr
check_eq "clean: libheapann said nothing" 0 "$(grep -c '^heapann:' "$TMP/clean.err")"
check_eq "guard: libheapann saw two broken guards" 2 "$(grep -c '^heapann: guard overwritten' "$TMP/guard.err")"
check_eq "double: libheapann saw a double free and a realloc of a freed block" 2 \
	"$(grep -c '^heapann: \(free\|realloc\) of an already freed block' "$TMP/double.err")"

check_eq "clean: exit 0" 0 "$(cat "$TMP/clean.rc")"
check_eq "clean: no run-time line" 0 "$(grep -c 'at run time' "$TMP/clean.txt")"
for mode in guard double both; do
	check_eq "$mode: exit 3 (corruption found)" 3 "$(cat "$TMP/$mode.rc")"
done
check_grep "guard: the counts" \
	'^libheapann found at run time: 2 broken guards \(checked at free or realloc\), 0 frees or reallocs of a freed or damaged block$' "$TMP/guard.txt"
check_grep "double: the counts" \
	'^libheapann found at run time: 0 broken guards \(checked at free or realloc\), 2 frees or reallocs of a freed or damaged block$' "$TMP/double.txt"
check_grep "both: the counts" \
	'^libheapann found at run time: 2 broken guards \(checked at free or realloc\), 2 frees or reallocs of a freed or damaged block$' "$TMP/both.txt"
a=$(sed -n 's/^culprit=//p' "$TMP/guard.out")
check_grep "guard: the last broken block is named, freed since" \
	"^last broken guard: block $(printf '0x%x' "$a") \(40 bytes, seq 2\), freed since; allocated at:$" "$TMP/guard.txt"
check_grep "guard: its allocation stack" '^        alloc_culprit \(hunt3_freed.c:15\) \[hunt3_freed\]$' "$TMP/guard.txt"
check_grep "guard: the header line counts no block in the image" \
	'^heap corruption: 0 blocks overflowed their guard, 0 damaged headers$' "$TMP/guard.txt"

# JSON: corruption.runtime
jq() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$@"
}
check_eq "json clean: no corruption section" False "$(jq "$TMP/clean.json" '"corruption" in d')"
check_eq "json guard: found" True "$(jq "$TMP/guard.json" 'd["corruption"]["found"]')"
check_eq "json guard: counts" "2 0 2" \
	"$(jq "$TMP/guard.json" '"%d %d %d" % (d["corruption"]["runtime"]["guards"], d["corruption"]["runtime"]["bad_frees"], d["corruption"]["runtime"]["last_guard_seq"])')"
check_eq "json guard: the last block" "$a 40 freed alloc_culprit" \
	"$(jq "$TMP/guard.json" '"%d %d %s %s" % (int(d["corruption"]["runtime"]["last_guard_block"]["address"], 16), d["corruption"]["runtime"]["last_guard_block"]["size"], d["corruption"]["runtime"]["last_guard_block"]["state"], d["corruption"]["runtime"]["last_guard_block"]["frames"][0]["function"])')"
check_eq "json double: counts" "0 2 None" \
	"$(jq "$TMP/double.json" '"%d %d %s" % (d["corruption"]["runtime"]["guards"], d["corruption"]["runtime"]["bad_frees"], d["corruption"]["runtime"]["last_guard_block"])')"

# HTML: the corruption section says it too (rendered by Chromium when installed)
if command -v chromium >/dev/null; then
	"$B/mprof-core" --format html -o "$TMP/guard.html" "$exe" "$TMP/guard.core" 2>/dev/null
	check_eq "html guard: exit 3" 3 $?
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TMP/profile.XXXXXX")" --hide-scrollbars \
		--dump-dom "file://$TMP/guard.html" >"$TMP/guard.dom" 2>/dev/null
	python3 tests/html_dom.py "$TMP/guard.dom" >"$TMP/guard.domtxt"
	check_grep "html guard: the run-time counts" \
		'^section corruption: libheapann found at run time: 2 broken guards \(checked at free or realloc\), 0 frees or reallocs of a freed or damaged block$' "$TMP/guard.domtxt"
	check_grep "html guard: the last block" \
		"^section corruption: last broken guard: block $(printf '0x%x' "$a") \(40 bytes, seq 2\), freed since; allocated at:$" "$TMP/guard.domtxt"
fi
done_testing
