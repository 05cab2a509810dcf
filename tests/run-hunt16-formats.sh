#!/bin/sh
# run-hunt16-formats.sh - one core through every report and every format must
# tell one story. tests/prog/hunt16f.cc (threads, C++ new/new[], a realloc
# chain, recursion through two functions, stacks deeper than HEAPANN_DEPTH,
# blocks above the mmap threshold, 0-byte blocks, leaks) gives a gcore at each
# of its two "ready" moments (a diff pair) and a kernel core at its abort; then
# runs without the statistics region and without frames, a run whose timeline
# is sampled, a core with a block whose header an overflow erased, and
# libheapann's own abort snapshot at --depth 8. tests/hunt16_formats.py checks every report and
# export of each core against the JSON stacks and the program's own counts.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v g++ >/dev/null || skip "g++ not installed"
command -v gdb >/dev/null || skip "gdb not installed"
[ -x /usr/bin/python3 ] || skip "python3 not installed"
M=$TOP/$B/mprof-core
PY="/usr/bin/python3 $TOP/tests/hunt16_formats.py"

g++ -g -O1 -pthread -o "$TMP/prog" tests/prog/hunt16f.cc
check_eq "builds" 0 $?
# one arena: the threads' arenas would make each core 64 MiB larger
export GLIBC_TUNABLES=glibc.malloc.arena_max=1

# py ARGS...: hunt16_formats.py's checks, counted as ours
py() {
	$PY "$@" >"$TMP/py.out" 2>&1
	cat "$TMP/py.out"
	T_PASS=$((T_PASS + $(grep -c '^ok ' "$TMP/py.out")))
	T_FAIL=$((T_FAIL + $(grep -c '^not ok ' "$TMP/py.out")))
	grep -q ' passed, ' "$TMP/py.out" || { T_FAIL=$((T_FAIL + 1)); echo "not ok - hunt16_formats.py $* did not finish"; }
}

# kcore NAME ENV...: run to the abort under the preload with ENV; its core is NAME
kcore() {
	kn=$1; shift
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && printf '\n\n' |
		env "$@" LD_PRELOAD="$TOP/$B/libheapann.so" ./prog >"$TMP/$kn.out" 2>/dev/null)
	mv "$TMP/core" "$TMP/$kn" 2>/dev/null
	check "$kn: kernel core written" test -s "$TMP/$kn"
}

# gpair NAME ENV...: a run under the preload with ENV, a gcore at each of its
# two "ready" moments (NAME1, NAME2), then its kernel core (NAME.k); its
# output in NAME.out
gpair() {
	gp=$1; shift
	rm -f "$TMP/fifo" "$TMP/core"; mkfifo "$TMP/fifo"
	(cd "$TMP" && ulimit -c unlimited && exec env "$@" LD_PRELOAD="$TOP/$B/libheapann.so" ./prog \
		<fifo >"$TMP/$gp.out" 2>/dev/null) &
	gp_pid=$!
	exec 9>"$TMP/fifo"
	wait_for "$TMP/$gp.out" '^ready '
	make_gcore "$gp_pid" "$TMP/${gp}1"
	echo >&9
	wait_for "$TMP/$gp.out" '^ready2 '
	make_gcore "$gp_pid" "$TMP/${gp}2"
	echo >&9; exec 9>&-
	wait $gp_pid
	mv "$TMP/core" "$TMP/$gp.k" 2>/dev/null
}

gpair g
mv "$TMP/g.k" "$TMP/kcore"; mv "$TMP/g.out" "$TMP/run.out"
check "gcores and the kernel core written" test -s "$TMP/g1" -a -s "$TMP/g2" -a -s "$TMP/kcore"
# the program's own count of its blocks ("ready live BLOCKS BYTES"): the
# stacks whose allocation site is in its source
for c in g1 g2; do
	want=$(sed -n "$([ $c = g1 ] && echo 1 || echo 2)p" "$TMP/run.out" | awk '{ print $3, $4 }')
	got=$("$M" -q --format json "$TMP/prog" "$TMP/$c" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
own = [s for s in d["stacks"] if s["frames"] and (s["frames"][0].get("file") or "").endswith("hunt16f.cc")]
print(sum(s["blocks"] for s in own), sum(s["bytes"] for s in own))')
	check_eq "$c: the program's blocks and bytes, by their allocation sites" "$want" "$got"
done

# the C++ objects by dynamic type: 4 Sq, one array of 3 Sq (8 + 72 bytes)
check_eq "g1: types: Sq x4 and Sq[] x1" "[('Sq', 4, 96), ('Sq[]', 1, 80)]" \
	"$("$M" -q --format json --report=types "$TMP/prog" "$TMP/g1" | /usr/bin/python3 -c '
import json, sys
print(sorted((t["type"], t["blocks"], t["bytes"]) for t in json.load(sys.stdin)["types"]["types"]))')"

# --threshold leaves rows out that --top 0 does not bring back: the "... N
# more" lines must say what does
"$M" -q --report=stacks,leaks,direct,graph --threshold 5 --top 0 "$TMP/prog" "$TMP/g2" >"$TMP/thr.txt"
"$M" -q --format html --threshold 5 --top 0 -o "$TMP/thr.html" "$TMP/prog" "$TMP/g2"
check_eq "--threshold 5 --top 0: 4 lines of rows left out, none says --top 0 shows all" "4 0" \
	"$(grep -c '^\.\.\. [0-9]* more' "$TMP/thr.txt") $(grep -c 'top 0 shows all' "$TMP/thr.txt")"
check_eq "--threshold 5 --top 0: each names --threshold 0" 4 "$(grep -c '^\.\.\. .*--threshold 0' "$TMP/thr.txt")"
check_grep "--threshold 5 --top 0, html: the hint names --threshold 0" '"stacks_rest_hint":"--top 0 --threshold 0 show all"' "$TMP/thr.html"

py core "$M" "$TMP/prog" "$TMP/g1" g1
py core "$M" "$TMP/prog" "$TMP/g2" g2
py core "$M" "$TMP/prog" "$TMP/kcore" kcore
py diff "$M" "$TMP/prog" "$TMP/g1" "$TMP/g2" diff
# with the statistics' stack table full, what a stack it did not record made
# in between is not known: no count, rather than 0
gpair f HEAPANN_STATS_STACKS=16
py diff "$M" "$TMP/prog" "$TMP/f1" "$TMP/f2" diff-full
check_eq "diff, full stack table: the stacks of big_blocks() grew, their counts in between unknown" \
	"[(1, None, None), (1, None, None)]" "$("$M" diff -q --format json "$TMP/prog" "$TMP/f1" "$TMP/f2" |
	/usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted((s["blocks_new"] - s["blocks_old"], s["allocs_between"], s["frees_between"]) for s in d["stacks"]
             if any(f.get("function") == "big_blocks()" for f in s["frames"])))')"
# diff compares stacks: the options of the other reports are refused, not ignored
for opt in --report=lost "--threshold 5" --blocks "--leak-depth 2" --call-sites "--addr 0x10" \
	"--why 0x10" "--refs 0x10"; do
	"$M" diff -q $opt "$TMP/prog" "$TMP/g1" "$TMP/g2" >"$TMP/d.out" 2>"$TMP/d.err"
	check_eq "diff $opt: refused (exit 2, nothing written)" "2 0" "$? $(wc -c <"$TMP/d.out")"
done
"$M" diff --threshold 5 "$TMP/prog" "$TMP/g1" "$TMP/g2" >/dev/null 2>"$TMP/d.err"
check_grep "diff --threshold: the message names it" "diff does not take --threshold" "$TMP/d.err"

kcore nostats HEAPANN_STATS=0
py core "$M" "$TMP/prog" "$TMP/nostats" nostats
kcore noframes HEAPANN_UNWIND=none
py core "$M" "$TMP/prog" "$TMP/noframes" noframes
kcore depth1 HEAPANN_DEPTH=1
py core "$M" "$TMP/prog" "$TMP/depth1" depth1
# a statistics stack table too small: the stacks it left out count their live
# blocks as their allocations, in every table and in pprof's alloc_*
kcore full HEAPANN_STATS_STACKS=16
py core "$M" "$TMP/prog" "$TMP/full" full

# a timeline halved and sampled: 9,000 allocations
cc -g -O0 -o "$TMP/churn" tests/prog/hunt16f_churn.c
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./churn >/dev/null 2>&1)
mv "$TMP/core" "$TMP/churn.core" 2>/dev/null
check "churn: kernel core written" test -s "$TMP/churn.core"
py core "$M" "$TMP/churn" "$TMP/churn.core" churn

# an overflow that erased its neighbour's header: the statistics count a live
# block the image does not hold; the leak, direct and graph tables count it
# as freed, the bins (frees counted at run time) keep it, and the report says so
cc -g -O0 -o "$TMP/co" tests/prog/corrupt_overflow.c
rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" ./co overflow 100 200 crash >/dev/null 2>&1)
mv "$TMP/core" "$TMP/co.core" 2>/dev/null
check "overflow: kernel core written" test -s "$TMP/co.core"
check_eq "overflow: one live block the image does not hold" "1 512" \
	"$("$M" -q --format json --report=bins "$TMP/co" "$TMP/co.core" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)["statistics"]
print(s["live_blocks_not_in_image"], s["live_bytes_not_in_image"])')"
py core "$M" "$TMP/co" "$TMP/co.core" overflow
"$M" -q --report=bins "$TMP/co" "$TMP/co.core" >"$TMP/co.txt"
check_grep "overflow: the bins' line says which tables count it as freed" \
	'^the statistics count 1 live blocks \(512 bytes\) .*: the leak, direct and graph tables count them as freed; the size bins, .* keep them$' "$TMP/co.txt"

# a raw dump of a static program's heap (the statistics region is not in it)
if [ -f /usr/lib/x86_64-linux-gnu/libc.a ] && [ -f "$B/heapann-static.pc" ]; then
	cc -g -O1 -static -o "$TMP/ms" examples/massif_example.c \
		$(PKG_CONFIG_PATH=$B pkg-config --libs heapann-static)
	check "raw: heap dumped" heap_dump "$TMP/ms" "$TMP/heap.bin"
	py raw "$M" "$TMP/ms" "$TMP/heap.bin" "$start" raw
else
	skip_check "raw: a static program's heap dump" "no static libc or heapann-static.pc"
fi

# libheapann's abort snapshot through the launcher, stacks cut at 8 frames
mkdir -p "$TMP/snaps"
(cd "$TMP" && printf '\n\n' | "$TOP/$B/heapann" --keep-core snaps --no-report --depth 8 \
	--snapshot abort ./prog >/dev/null 2>&1)
snap=$(ls "$TMP"/snaps/prog.*.core 2>/dev/null | head -n 1)
check "snapshot: written" test -s "$snap"
py core "$M" "$TMP/prog" "$snap" snap8

done_testing
