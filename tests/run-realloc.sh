#!/bin/sh
# run-realloc.sh - libheapann's realloc and aligned paths leave nothing of an old
# header behind (issue 14). tests/prog/annot_realloc.c reallocates blocks of every
# allocator from stacks of other depths (the header start moves within the raw
# block) and prints its live set; its gcore must show exactly those blocks live,
# with their sizes and no damaged header, and mprof-core must exit
# 0. Then the reproducer (a posix_memalign'd block reallocated in place one
# frame shallower, then abort()) in a kernel core: no damaged header, exit 0.
# Last, a gcore taken inside the aligned family's moved realloc (glibc's memalign
# of the new block, tests/prog/realloc_aligned_window.c under gdb): the image's
# live blocks must be the statistics' (the old block read live, its free
# already counted, until its header was marked freed up front).
. tests/lib.sh
SO=$TOP/$B/libheapann.so
[ -f "$SO" ] && [ -x "$B/tests/tools/cpdump" ] || skip "build first"
CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer"
cc $CFLAGS -o "$TMP/realloc" tests/prog/annot_realloc.c || skip "cannot compile annot_realloc.c"

for depth in 32 3; do
	HEAPANN_DEPTH=$depth gcore_waiting "$TMP/core$depth" "$TMP/realloc"
	check_eq "depth $depth: program exits 0" 0 $?
	cp "$TMP/out" "$TMP/live$depth"
	check_grep "depth $depth: the program printed its live set" '^total [0-9]+ [0-9]+$' "$TMP/live$depth"
	"$B/tests/tools/cpdump" "$TMP/core$depth" >"$TMP/scan$depth" 2>&1
	check_eq "depth $depth: cpdump exits 0" 0 $?
	# every block the program holds is live in the core with its size; none else
	# of the program's addresses is missing; the count and the bytes agree
	liveset_cmp "$TMP/live$depth" "$TMP/scan$depth" >"$TMP/cmp$depth"
	read -r n found b bytes left <"$TMP/cmp$depth"
	check_eq "depth $depth: all $n live blocks found" "$n" "$found"
	check_eq "depth $depth: their $b requested bytes" "$b" "$bytes"
	check_eq "depth $depth: none of the program's blocks missing" 0 "$left"
	check_grep "depth $depth: no damaged header" ' damaged=0 ' "$TMP/scan$depth"
	"$B/mprof-core" "$TMP/realloc" "$TMP/core$depth" >"$TMP/rep$depth" 2>&1
	check_eq "depth $depth: mprof-core exits 0 (no corruption)" 0 $?
done

# The reproducer of the issue: in a kernel core at its abort().
cc $CFLAGS -o "$TMP/fp" tests/prog/annot_fp_aligned_realloc.c || skip "cannot compile the reproducer"
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$SO" "$TMP/fp"; :) 2>/dev/null
if [ -s "$TMP/core" ]; then
	"$B/mprof-core" "$TMP/fp" "$TMP/core" >"$TMP/fp.txt" 2>&1
	check_eq "posix_memalign + realloc in place from a shallower stack: exit 0" 0 $?
	check_grep "... and no damaged header" 'damaged headers: 0$' "$TMP/fp.txt"
	check_grep "... the block is live with its new size" '^live blocks: [0-9]+, requested bytes: [0-9,]+' "$TMP/fp.txt"
	"$B/tests/tools/cpdump" "$TMP/core" >"$TMP/fp.scan" 2>&1
	check_grep "... cpdump: the 90-byte block live" '^block live .* size=90 ' "$TMP/fp.scan"
else
	echo "# no kernel core written (core_pattern: $(cat /proc/sys/kernel/core_pattern)): reproducer left out"
fi

# The aligned family's moved realloc, caught in glibc's memalign for the new
# block: the old block's free is counted by then, so the core must hold it
# freed, not live (the image's live blocks = the statistics' live blocks).
if command -v gdb >/dev/null 2>&1; then
	cc $CFLAGS -o "$TMP/raw_win" tests/prog/realloc_aligned_window.c || skip "cannot compile realloc_aligned_window.c"
	gdb -batch -nx -ex "set startup-with-shell off" -ex "set environment LD_PRELOAD=$SO" \
		-ex "break mark" -ex run -ex "break __libc_memalign" -ex continue \
		-ex "gcore $TMP/raw_win.core" -ex kill "$TMP/raw_win" >"$TMP/raw_win.gdb" 2>&1
	check "aligned realloc, moved: gcore written in the new block's memalign" test -s "$TMP/raw_win.core"
	"$B/mprof-core" --report=bins "$TMP/raw_win" "$TMP/raw_win.core" >"$TMP/raw_win.txt" 2>&1
	img=$(sed -n 's/^live blocks: \([0-9,]*\),.*/\1/p' "$TMP/raw_win.txt")
	st=$(sed -n 's/.*live: [0-9,]* bytes in \([0-9,]*\) blocks.*/\1/p' "$TMP/raw_win.txt" | head -n 1)
	check_eq "aligned realloc, moved, in memalign: the image's live blocks are the statistics' ($st)" \
		"${st:-none}" "${img:-none}"
fi
done_testing
