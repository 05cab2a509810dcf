#!/bin/sh
# run-massif-out.sh - --format massif end to end (issue 12): real programs under the
# preload, kernel cores and gcores, the massif.out read back by ms_print itself
# (Valgrind's, the reader the format is defined by) and by tests/ms_check.py (the
# grammar massif-visualizer's parser takes), and compared with what real Massif
# writes for the same program: the same bytes per stack in the snapshot where all
# blocks are live. Every expected number is one the test programs know: their
# sizes, their allocation order, their MARK lines.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v ms_print >/dev/null || sh scripts/install-deps.sh valgrind >/dev/null 2>&1
command -v ms_print >/dev/null || skip "ms_print (valgrind) not installed"

MS="python3 tests/ms_check.py"
src=examples/massif_example.c
msrc=tests/prog/ms_prog.c
csrc=tests/prog/ms_cxx.cc
line() { grep -n "MARK:$2\( \|\$\)" "$1" | cut -d: -f1; }
Lg=$(line $src g); Lf=$(line $src f); Lfg=$(line $src f-calls-g); Lm=$(line $src main)
Lmf=$(line $src main-calls-f); Lmg=$(line $src main-calls-g)

# pct PART WHOLE: ms_print's percentage (%05.2f)
pct() { python3 -c 'import sys; print("%05.2f" % (100.0 * int(sys.argv[1]) / int(sys.argv[2])))' "$1" "$2"; }
# field FILE NAME N: the value of NAME= in snapshot N (last: the last one)
field() {
	$MS "$1" snaps | { if [ "$3" = last ]; then tail -n 1; else sed -n "$(($3 + 1))p"; fi; } |
		awk -v f="$2" '{ print (f == "time" ? $2 : f == "heap" ? $3 : f == "extra" ? $4 : $5) }'
}
# overhead EXE CORE: header, pad and guard bytes of the live blocks (the JSON report)
overhead() {
	"$B/mprof-core" -q --format json "$1" "$2" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["overhead_bytes"])'
}
kcore() { # OUT EXE ARGS...: run under the preload until it aborts; its core is OUT
	kc_out=$1; shift
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$@" >/dev/null 2>&1)
	mv "$TMP/core" "$kc_out" 2>/dev/null
	[ -s "$kc_out" ]
}
# export NAME EXE CORE [OPTIONS]: write $TMP/NAME.massif, check the exit status
# (0, or 3 when EXPECT_STATUS says so), the grammar, and that ms_print reads it
export_ok() {
	en=$1 ee=$2 ec=$3; shift 3
	"$B/mprof-core" -q --format massif -o "$TMP/$en.massif" "$@" "$ee" "$ec" 2>"$TMP/$en.err"
	check_eq "$en: exit status ${EXPECT_STATUS:-0}" "${EXPECT_STATUS:-0}" $?
	check "$en: the grammar massif-visualizer reads" $MS "$TMP/$en.massif" validate
	ms_print "$TMP/$en.massif" >"$TMP/$en.ms" 2>"$TMP/$en.mserr"
	check_eq "$en: ms_print reads it" 0 $?
}

# ---- the Massif manual's example ----
for opt in -O0 -O2; do
	exe=$TMP/massif$opt
	cc -g $opt -o "$exe" "$src"
	for how in kernel gcore; do
		tn=ex$opt-$how
		if [ $how = kernel ]; then
			check "$tn: core written" kcore "$TMP/$tn.core" "$exe" abort
		else
			[ $opt = -O2 ] || continue
			gcore_waiting "$TMP/$tn.core" "$exe" wait
			check "$tn: gcore written" test -s "$TMP/$tn.core"
		fi
		export_ok $tn "$exe" "$TMP/$tn.core"
		ov=$(overhead "$exe" "$TMP/$tn.core")
		f=$TMP/$tn.massif
		check_grep "$tn: time unit B" '^time_unit: B$' "$f"
		# the core's command line (NT_PRPSINFO): gdb's gcore writes the program only
		if [ $how = kernel ]; then
			check_grep "$tn: cmd is the core's command line" "^cmd: .*/massif$opt abort\$" "$f"
		else
			check_grep "$tn: cmd is the core's program" "^cmd: .*/massif$opt( wait)?\$" "$f"
		fi
		# the timeline: the 13 allocations in order, nothing freed, one sample each;
		# the last one is the core's moment, the peak, with the tree
		check_eq "$tn: times are the running sums of the sizes" \
			"0 1000 2000 3000 4000 5000 6000 7000 8000 9000 10000 12000 16000 20000" \
			"$($MS "$f" snaps | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 }')"
		check_eq "$tn: live bytes equal the time (no free)" "" \
			"$($MS "$f" snaps | awk '$2 != $3')"
		check_eq "$tn: the last snapshot is the peak" "13 20000 20000 $ov peak" \
			"$($MS "$f" snaps | tail -n 1)"
		check_grep "$tn: desc says the image is the peak" '^desc: .*taken at the peak' "$f"
		check_eq "$tn: desc names no damage in a clean core" 0 "$(grep -c 'damaged' "$f")"
		# the tree in the file, Massif's node lines
		check_grep "$tn: root" '^n3: 20000 \(heap allocation functions\) malloc/new/new\[\], --alloc-fns, etc\.$' "$f"
		check_grep "$tn: main's 10 blocks" "^ n0: 10000 0x[0-9A-F]+: main \\(massif_example\\.c:$Lm\\)\$" "$f"
		check_grep "$tn: g" "^ n2: 8000 0x[0-9A-F]+: g \\(massif_example\\.c:$Lg\\)\$" "$f"
		check_grep "$tn: g from f" "^  n1: 4000 0x[0-9A-F]+: f \\(massif_example\\.c:$Lfg\\)\$" "$f"
		check_grep "$tn: f from main" "^   n0: 4000 0x[0-9A-F]+: main \\(massif_example\\.c:$Lmf\\)\$" "$f"
		check_grep "$tn: g from main" "^  n0: 4000 0x[0-9A-F]+: main \\(massif_example\\.c:$Lmg\\)\$" "$f"
		check_grep "$tn: f" "^ n1: 2000 0x[0-9A-F]+: f \\(massif_example\\.c:$Lf\\)\$" "$f"
		check_grep "$tn: f's caller" "^  n0: 2000 0x[0-9A-F]+: main \\(massif_example\\.c:$Lmf\\)\$" "$f"
		# ms_print's view of it: percentages of heap + extra, as ms_print computes them
		t=$((20000 + ov)); m=$TMP/$tn.ms
		check_grep "$tn: ms_print: 14 snapshots" '^Number of snapshots: 14$' "$m"
		check_grep "$tn: ms_print: the peak is detailed" '^ Detailed snapshots: \[13 \(peak\)\]$' "$m"
		check_grep "$tn: ms_print: the last row" \
			"^ 13 +20,000 +$(python3 -c "print(format($t, ','))") +20,000 +$(python3 -c "print(format($ov, ','))") +0\$" "$m"
		check_grep "$tn: ms_print: the root line" "^$(pct 20000 $t)% \\(20,000B\\) \\(heap allocation functions\\)" "$m"
		check_grep "$tn: ms_print: main" "^->$(pct 10000 $t)% \\(10,000B\\) 0x[0-9A-F]+: main \\(massif_example\\.c:$Lm\\)\$" "$m"
		check_grep "$tn: ms_print: g" "^->$(pct 8000 $t)% \\(8,000B\\) 0x[0-9A-F]+: g \\(massif_example\\.c:$Lg\\)\$" "$m"
		check_grep "$tn: ms_print: g <- f" "^\\| ->$(pct 4000 $t)% \\(4,000B\\) 0x[0-9A-F]+: f \\(massif_example\\.c:$Lfg\\)\$" "$m"
		check_grep "$tn: ms_print: f" "^->$(pct 2000 $t)% \\(2,000B\\) 0x[0-9A-F]+: f \\(massif_example\\.c:$Lf\\)\$" "$m"
		check_grep "$tn: ms_print: KB on both axes" '^     0 +[0-9.]+$' "$m"
	done
	# real Massif on the same executable: its peak snapshot (every block live, as
	# in the core) has the same bytes on the same paths
	$MS "$TMP/ex$opt-kernel.massif" paths last >"$TMP/ex$opt.paths"
	if command -v valgrind >/dev/null; then
		(cd "$TMP" && valgrind -q --tool=massif --massif-out-file="$TMP/vg$opt.massif" "$exe" >/dev/null 2>&1)
		$MS "$TMP/vg$opt.massif" paths peak >"$TMP/vg$opt.paths"
		check "valgrind$opt: Massif's peak has 7 paths" test "$(wc -l <"$TMP/vg$opt.paths")" -eq 7
		check "valgrind$opt: the same bytes per path as real Massif" cmp -s "$TMP/vg$opt.paths" "$TMP/ex$opt.paths"
		cmp -s "$TMP/vg$opt.paths" "$TMP/ex$opt.paths" || diff "$TMP/vg$opt.paths" "$TMP/ex$opt.paths" | sed 's/^/    # /'
	fi
done

# ---- --threshold: percent of heap + extra, folded lines as Massif writes them ----
exe=$TMP/massif-O2 c=$TMP/ex-O2-kernel.core
ov=$(overhead "$exe" "$c")
export_ok thr15 "$exe" "$c" --threshold 15
f=$TMP/thr15.massif
check_grep "threshold 15: f folded, alone" "^ n0: 2000 in 1 place, below massif's threshold \\(15\\.00%\\)\$" "$f"
check_grep "threshold 15: root has main, g and the folded line" '^n3: 20000 ' "$f"
check_grep "threshold 15: g's two callers still shown" '^  n1: 4000 .*: f ' "$f"
check_grep "threshold 15: ms_print shows the folded line" "^->$(pct 2000 $((20000 + ov)))% \\(2,000B\\) in 1 place, below massif's threshold \\(15\\.00%\\)\$" "$TMP/thr15.ms"
export_ok thr30 "$exe" "$c" --threshold 30
f=$TMP/thr30.massif
check_grep "threshold 30: g's callers folded, both" "^  n0: 8000 in 2 places, all below massif's threshold \\(30\\.00%\\)\$" "$f"
check_grep "threshold 30: g has only the folded line" '^ n1: 8000 .*: g ' "$f"
check_eq "threshold 30: 5 node lines" 5 "$(grep -c '^ *n[0-9]*:' "$f")"
export_ok thr0 "$exe" "$c" --threshold 0
check_eq "threshold 0: no folded line" 0 "$(grep -c 'below massif' "$TMP/thr0.massif")"
check_eq "threshold 0: 8 node lines" 8 "$(grep -c '^ *n[0-9]*:' "$TMP/thr0.massif")"

# ---- --ignore-fn: the tree without f's blocks, and the desc says so ----
export_ok ign "$exe" "$c" --ignore-fn f
check_grep "ignore-fn f: 14000 bytes in the tree" '^n2: 14000 ' "$TMP/ign.massif"
check_grep "ignore-fn f: desc names what was left out" '^desc: .*--ignore-fn left out 2 blocks \(6000 B\)' "$TMP/ign.massif"

# ---- a core path longer than massif-visualizer's 4 KiB line buffer allows ----
d=$TMP; while [ ${#d} -lt 3000 ]; do d=$d/dddddddddddddddddddddddddddddddddddddddddddddddddd; done
mkdir -p "$d" && cp "$c" "$d/core"
export_ok longpath "$exe" "$d/core"
check_eq "long path: desc line under 4 KiB, the path's end kept" yes \
	"$(awk 'NR == 1 { print (length($0) < 4000 && index($0, "desc: mprof-core --format massif ...ddd") == 1 && index($0, "/core;") ? "yes" : "no") }' "$TMP/longpath.massif")"

# ---- no statistics region: one detailed snapshot, time unknown ----
tn=nostats
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && HEAPANN_STATS=0 LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" abort >/dev/null 2>&1)
mv "$TMP/core" "$TMP/$tn.core"
export_ok $tn "$exe" "$TMP/$tn.core"
check_eq "$tn: one snapshot at time 0, the tree" "0 0 20000 $(overhead "$exe" "$TMP/$tn.core") detailed" "$($MS "$TMP/$tn.massif" snaps)"
check_grep "$tn: desc says there is no statistics region" '^desc: .*no statistics region in the image' "$TMP/$tn.massif"
$MS "$TMP/$tn.massif" paths >"$TMP/$tn.paths"
check "$tn: the same tree as with the statistics" cmp -s "$TMP/$tn.paths" "$TMP/ex-O2.paths"
check_grep "$tn: ms_print: 1 snapshot" '^Number of snapshots: 1$' "$TMP/$tn.ms"

# ---- a peak before the core: 5000 + 3000, free the 5000, then 1000 ----
exe=$TMP/ms_prog
cc -g -O2 -o "$exe" "$msrc"
La=$(line $msrc alloc_n); Lmid=$(line $msrc mid); Lsm=$(line $msrc small)
Lmm=$(line $msrc main-mid); Lms=$(line $msrc main-small)
tn=peak
check "$tn: core written" kcore "$TMP/$tn.core" "$exe" peak abort
export_ok $tn "$exe" "$TMP/$tn.core"
f=$TMP/$tn.massif
ov=$(overhead "$exe" "$TMP/$tn.core")
check_eq "$tn: the timeline, then the core's tree" \
	"0 0 0 0 empty|1 5000 5000 0 empty|2 8000 8000 0 empty|3 13000 3000 0 empty|4 14000 4000 $ov detailed" \
	"$($MS "$f" snaps | paste -sd '|')"
check_grep "$tn: desc: the peak has no tree, and why" \
	'^desc: .*peak 8000 B at time 8000: no heap tree \(the statistics do not record which stacks were live at the peak\)' "$f"
check_grep "$tn: alloc_n" "^ n2: 4000 0x[0-9A-F]+: alloc_n \\(ms_prog\\.c:$La\\)\$" "$f"
check_grep "$tn: alloc_mid" "^  n1: 3000 0x[0-9A-F]+: alloc_mid \\(ms_prog\\.c:$Lmid\\)\$" "$f"
check_grep "$tn: its caller" "^   n0: 3000 0x[0-9A-F]+: main \\(ms_prog\\.c:$Lmm\\)\$" "$f"
check_grep "$tn: alloc_small" "^  n1: 1000 0x[0-9A-F]+: alloc_small \\(ms_prog\\.c:$Lsm\\)\$" "$f"
check_grep "$tn: its caller" "^   n0: 1000 0x[0-9A-F]+: main \\(ms_prog\\.c:$Lms\\)\$" "$f"
check_eq "$tn: no alloc_big (freed)" 0 "$(grep -c alloc_big "$f")"
check_grep "$tn: ms_print: one detailed snapshot, not a peak" '^ Detailed snapshots: \[4\]$' "$TMP/$tn.ms"
check_grep "$tn: ms_print: the peak row" '^  2 +8,000 +8,000 +8,000 +0 +0$' "$TMP/$tn.ms"

# ---- more events than the timeline keeps: the peak in its place among the samples ----
tn=many
check "$tn: core written" kcore "$TMP/$tn.core" "$exe" many abort
export_ok $tn "$exe" "$TMP/$tn.core"
f=$TMP/$tn.massif
check_eq "$tn: the peak (40000 B at time 40000) once, the largest" "1 40000" \
	"$($MS "$f" snaps | awk '$2 == 40000 && $3 == 40000 { n++ } $3 > m { m = $3 } END { print n, m }')"
check_eq "$tn: the core's moment: 2000 x 10 B + 7 B at time 60007" "60007 20007 detailed" \
	"$($MS "$f" snaps | tail -n 1 | cut -d' ' -f2,3,5)"
# the snapshots before it are time 0 and the timeline of the JSON report (the
# samples and the peak in its place), one for one
"$B/mprof-core" -q --format json --report timeline "$exe" "$TMP/$tn.core" >"$TMP/$tn.json"
check "$tn: the snapshots are the JSON timeline's points, in order" python3 -c '
import json, subprocess, sys
tl = [(e["time"], e["live_bytes"]) for e in json.load(open(sys.argv[1]))["timeline"]]
snaps = [l.split() for l in subprocess.check_output(["python3", "tests/ms_check.py", sys.argv[2], "snaps"], text=True).splitlines()]
now = int(snaps[-1][1])
want = ([(0, 0)] if not tl or tl[0][0] > 0 else []) + [x for x in tl if x[0] < now]
got = [(int(x[1]), int(x[2])) for x in snaps[:-1]]
sys.exit(0 if got == want and len(got) > 1000 else 1)
' "$TMP/$tn.json" "$f"

# ---- inlined frames: one node per inline level, all with the call's address ----
tn=inline
check "$tn: core written" kcore "$TMP/$tn.core" "$exe" inline abort
export_ok $tn "$exe" "$TMP/$tn.core"
f=$TMP/$tn.massif
Ln=$(line $msrc make_node); Ll=$(line $msrc make_list); Lb=$(line $msrc build-list)
Ld=$(line $msrc build-direct); Lmb=$(line $msrc main-build)
check_grep "$tn: make_node" "^ n1: 3000 0x[0-9A-F]+: make_node \\(ms_prog\\.c:$Ln\\)\$" "$f"
check_grep "$tn: make_list, inlined" "^  n1: 3000 0x[0-9A-F]+: make_list \\(ms_prog\\.c:$Ll\\)\$" "$f"
check_grep "$tn: build, the function they are inlined into" "^   n1: 3000 0x[0-9A-F]+: build \\(ms_prog\\.c:$Lb\\)\$" "$f"
check_grep "$tn: main" "^    n0: 3000 0x[0-9A-F]+: main \\(ms_prog\\.c:$Lmb\\)\$" "$f"
check_grep "$tn: build's own call" "^ n1: 700 0x[0-9A-F]+: build \\(ms_prog\\.c:$Ld\\)\$" "$f"
check_eq "$tn: the three inline levels share one address" 1 \
	"$(grep -E '^ {1,3}n1: 3000 ' "$f" | sed 's/.*\(0x[0-9A-F]*\):.*/\1/' | sort -u | wc -l)"
check_grep "$tn: ms_print: make_list under make_node" "^\\| ->$(pct 3000 $((3700 + $(field "$f" extra last))))% \\(3,000B\\) 0x[0-9A-F]+: make_list " "$TMP/$tn.ms"
if command -v valgrind >/dev/null; then
	(cd "$TMP" && valgrind -q --tool=massif --massif-out-file="$TMP/vg-inline.massif" "$exe" inline wait </dev/null >/dev/null 2>&1)
	$MS "$TMP/vg-inline.massif" paths peak >"$TMP/vg-inline.paths"
	$MS "$f" paths >"$TMP/inline.paths"
	check "valgrind inline: Massif's peak has 6 paths" test "$(wc -l <"$TMP/vg-inline.paths")" -eq 6
	check "valgrind inline: the same inline chains and bytes as real Massif" \
		cmp -s "$TMP/vg-inline.paths" "$TMP/inline.paths"
fi

# ---- C++: operator new, new[], a member function, a template ----
exe=$TMP/ms_cxx
check "cxx: compiles (g++ is a build dependency)" c++ -g -O0 -o "$exe" "$csrc"
tn=cxx
gcore_waiting "$TMP/$tn.core" "$exe" wait
check "$tn: gcore written" test -s "$TMP/$tn.core"
export_ok $tn "$exe" "$TMP/$tn.core" --threshold 0
f=$TMP/$tn.massif
check_grep "$tn: new[] in a namespace" "^ n1: 3000 0x[0-9A-F]+: shop::buffer\\(unsigned long\\) \\(ms_cxx\\.cc:$(line $csrc buffer)\\)\$" "$f"
check_grep "$tn: a template" "^ n1: 2000 0x[0-9A-F]+: double\\* shop::make_array<double>\\(unsigned long\\) \\(ms_cxx\\.cc:$(line $csrc make_array)\\)\$" "$f"
check_grep "$tn: operator new in a member function, 10 x 48" "^ n1: 480 0x[0-9A-F]+: shop::Store::add\\(\\) \\(ms_cxx\\.cc:$(line $csrc add)\\)\$" "$f"
check_grep "$tn: its caller" "^  n0: 480 0x[0-9A-F]+: main \\(ms_cxx\\.cc:$(line $csrc main-add)\\)\$" "$f"
check_grep "$tn: new Store in main" "^ n0: 136 0x[0-9A-F]+: main \\(ms_cxx\\.cc:$(line $csrc main-store)\\)\$" "$f"
check_eq "$tn: no allocator frame in the tree" 0 "$(grep -c 'operator new\|: malloc ' "$f")"
# libstdc++'s emergency pool, allocated by its static initializer (before
# libheapann's constructor, under its own frames), is a top-level entry of its
# own: the program's entries and the others add up to the root
heap=$(field "$f" heap last)
check_eq "$tn: the program's 5616 bytes plus the other top-level entries are the heap" "$heap" \
	"$((5616 + $(grep '^ n[0-9]*: ' "$f" | grep -v '(ms_cxx\.cc:' | awk '{ s += $2 } END { print s + 0 }')))"
if command -v valgrind >/dev/null; then
	(cd "$TMP" && valgrind -q --tool=massif --threshold=0 --massif-out-file="$TMP/vg-cxx.massif" "$exe" wait </dev/null >/dev/null 2>&1)
	$MS "$TMP/vg-cxx.massif" paths peak ms_cxx.cc >"$TMP/vg-cxx.paths"
	$MS "$f" paths last ms_cxx.cc >"$TMP/cxx.paths"
	check "valgrind C++: Massif's peak has the program's 7 paths" test "$(wc -l <"$TMP/vg-cxx.paths")" -eq 7
	check "valgrind C++: the same functions and bytes as real Massif" cmp -s "$TMP/vg-cxx.paths" "$TMP/cxx.paths"
	cmp -s "$TMP/vg-cxx.paths" "$TMP/cxx.paths" || diff "$TMP/vg-cxx.paths" "$TMP/cxx.paths" | sed 's/^/    # /'
fi

# ---- a core with a damaged header: the export is partial and says so ----
exe=$TMP/corrupt_overflow
cc -g -O0 -o "$exe" tests/prog/corrupt_overflow.c
tn=damaged
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" overflow 100 40 wait <"$TMP/fifo" >"$TMP/$tn.out" &
pid=$!
exec 9>"$TMP/fifo"
k=0; while ! grep -q '^ready' "$TMP/$tn.out" 2>/dev/null && [ $k -lt 200 ]; do sleep 0.05; k=$((k + 1)); done
make_gcore $pid "$TMP/$tn.core"
echo >&9; exec 9>&-
wait $pid
EXPECT_STATUS=3 export_ok $tn "$exe" "$TMP/$tn.core" --threshold 0
f=$TMP/$tn.massif
"$B/mprof-core" -q --format json "$exe" "$TMP/$tn.core" >"$TMP/$tn.json"
jv() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$TMP/$tn.json" "$1"; }
check_eq "$tn: the JSON report sees 1 damaged header (precondition)" 1 "$(jv damaged_headers)"
check_grep "$tn: desc says a damaged header's block is left out" '^desc: .*; 1 damaged headers: their blocks are not in the tree' "$f"
check_eq "$tn: the tree holds the live bytes the stacks report counts" "$(jv bytes) $(jv overhead_bytes)" \
	"$(field "$f" heap last) $(field "$f" extra last)"
check_grep "$tn: the culprit, 100 bytes" '^ n1: 100 0x[0-9A-F]+: alloc_culprit ' "$f"
check_grep "$tn: the block before it" '^ n1: 48 0x[0-9A-F]+: alloc_prev ' "$f"
check_grep "$tn: the block after the damaged one" '^ n1: 64 0x[0-9A-F]+: alloc_after ' "$f"
check_eq "$tn: the damaged block is not in the tree" 0 "$(grep -c alloc_next "$f")"

# ---- bad output path: one line naming it, exit 1 ----
"$B/mprof-core" -q --format massif -o "$TMP/no/such/dir/x.massif" "$TMP/massif-O2" "$TMP/ex-O2-kernel.core" 2>"$TMP/bad.err"
check_eq "unwritable -o: exit 1" 1 $?
check_grep "unwritable -o: names the file" "^mprof-core: $TMP/no/such/dir/x.massif: No such file or directory\$" "$TMP/bad.err"
# ---- a full disk: the write error is reported, not a truncated file passed as good ----
if [ -w /dev/full ]; then
	"$B/mprof-core" -q --format massif -o /dev/full "$TMP/massif-O2" "$TMP/ex-O2-kernel.core" 2>"$TMP/full.err"
	check_eq "/dev/full: exit 1" 1 $?
	check_grep "/dev/full: one line naming it" '^mprof-core: error writing /dev/full$' "$TMP/full.err"
fi
done_testing
