#!/bin/sh
# run-html.sh - --format html (issue 12) end to end: real programs under the preload,
# gcores, the report written, then opened in headless Chromium. The rendered DOM
# must show the exact frames, lines, bytes and blocks that each program knows: the
# Massif manual's example, a C++ program with an inlined frame, a shared library and
# threads, a heap overflow (the culprit named), a big-endian MIPS raw dump (no
# threads, no statistics), a source path with "</script>" in it, and fans of
# 1,000 and 10,000 stacks (pruning, the node cap, size against block count).
# The page may load nothing: no URL in the file, no request in Chromium. Hover,
# click-to-zoom and search are driven over the DevTools pipe (tests/html_cdp.js,
# Node without npm packages; that part is skipped alone when Node is missing).
# Leaves a screenshot in $B/html-report.png.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v chromium >/dev/null || sh scripts/install-deps.sh chromium
command -v chromium >/dev/null || skip "chromium not installed and could not be installed"
have_node=1
command -v node >/dev/null || sh scripts/install-deps.sh nodejs
command -v node >/dev/null || have_node=0

MP=$B/mprof-core
# Chromium on this closed network: every flag below is needed or it hangs.
chrome() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TMP/profile.XXXXXX")" --hide-scrollbars \
		--window-size=1400,1000 "$@"
}
# render NAME: $TMP/NAME.html -> $TMP/NAME.dom (rendered DOM), NAME.log (Chromium's
# log), NAME.txt (the DOM as lines, tests/html_dom.py)
render() {
	chrome --enable-logging=stderr --v=0 --dump-dom "file://$TMP/$1.html" >"$TMP/$1.dom" 2>"$TMP/$1.log"
	python3 tests/html_dom.py "$TMP/$1.dom" >"$TMP/$1.txt"
}
# has NAME FILE LINE: FILE has exactly the line LINE
has() { check "$1" grep -qxF -- "$3" "$2"; }
# self_contained NAME: no URL in the file, no failed load in Chromium's log
self_contained() {
	check_eq "$1: no URL, src=, href=, url( or @import in the file" 0 \
		"$(grep -Ec 'https?:|//|src=|href=|url\(|@import' "$TMP/$1.html")"
	check_eq "$1: no failed or blocked load in Chromium's log" 0 \
		"$(grep -Eic 'failed to load|net::ERR|ERR_FILE|not allowed to load|refused to' "$TMP/$1.log")"
	check "$1: the page drew itself (data-rendered set)" grep -q '^attr data-rendered=[0-9]' "$TMP/$1.txt"
	check_eq "$1: no script error in Chromium's log" 0 "$(grep -c 'Uncaught' "$TMP/$1.log")"
}
# blob NAME EXPR: EXPR (Python) holds over the JSON blob d of $TMP/NAME.html, read
# as the page reads it (the text of the script element, "<\/" and all)
blob() {
	check "$1: blob: $2" python3 -c "
import json, sys
s = open('$TMP/$1.html', encoding='utf-8').read()
a = s.index('id=\"mprof-data\">') + len('id=\"mprof-data\">')
b = s.index('</script>', a)
raw = s[a:b]
d = json.loads(raw)
sys.exit(not ($2))"
}
# summary_matches NAME TEXT: the summary shows the text report's figures
summary_matches() {
	l=$(grep '^live blocks:' "$2")
	blocks=$(echo "$l" | sed 's/^live blocks: \([0-9,]*\),.*/\1/')
	bytes=$(echo "$l" | sed 's/.*requested bytes: \([0-9,]*\),.*/\1/')
	over=$(echo "$l" | sed 's/.*with headers and guards: \([0-9,]*\)$/\1/')
	l=$(grep '^distinct stacks:' "$2")
	stacks=$(echo "$l" | sed 's/^distinct stacks: \([0-9,]*\),.*/\1/')
	freed=$(echo "$l" | sed 's/.*freed blocks seen: \([0-9,]*\),.*/\1/')
	dam=$(echo "$l" | sed 's/.*damaged headers: \([0-9,]*\)$/\1/')
	head=$(head -n 1 "$2")
	for kv in "blocks=$blocks" "bytes=$bytes" "overhead=$over" "stacks=$stacks" "freed=$freed" \
		"damaged=$dam"; do
		has "$1: summary $kv as in the text report" "$TMP/$1.txt" "sum-$kv"
	done
	# "CORE: core, 64-bit little-endian x86-64, 1 thread" -> "CORE (core, ...)"
	has "$1: summary image line as in the text report" "$TMP/$1.txt" \
		"sum-image=${head%%: *} (${head#*: })"
}
# run_until_ready OUT CORE PROG ARGS...: run PROG under the preload until it prints
# "ready" (after other lines), take a gcore, let it finish
run_until_ready() {
	out=$1 core=$2; shift 2
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$@" <"$TMP/fifo" >"$out" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q '^ready' "$out" 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
	make_gcore $pid "$core"
	echo >&9; exec 9>&-
	wait $pid
}
L() { grep -En "MARK:$2( |\$)" "$1" | cut -d: -f1; }

# ---- the Massif manual's example ----
src=examples/massif_example.c
Lg=$(L $src g); Lf=$(L $src f); Lfg=$(L $src f-calls-g); Lm=$(L $src main)
Lmf=$(L $src main-calls-f); Lmg=$(L $src main-calls-g)
exe=$TMP/massif
cc -g -O0 -o "$exe" $src || skip "cannot compile $src"
gcore_waiting "$TMP/massif.core" "$exe" wait
check "massif: gcore written" test -s "$TMP/massif.core"
"$MP" --format html -o "$TMP/m.html" "$exe" "$TMP/massif.core" 2>"$TMP/m.err"
check_eq "massif: exit 0" 0 $?
check_eq "massif: nothing on stderr" "" "$(cat "$TMP/m.err")"
"$MP" --report=stacks,timeline "$exe" "$TMP/massif.core" >"$TMP/m.text" 2>&1
render m
self_contained m
blob m "d['summary']['blocks'] == 13 and d['summary']['bytes'] == 20000"
blob m "d['tree'][0:4] == [-1, -1, 20000, 13] and len(d['tree']) % 4 == 0"
blob m "sorted(set(d['strings'][d['frames'][5 * k]] for k in range(len(d['frames']) // 5)) & {'f', 'g', 'main'}) == ['f', 'g', 'main']"
blob m "'</' not in raw and d['corruption'] is None and d['lost'] is None"
summary_matches m "$TMP/m.text"
has "massif: 1 thread" "$TMP/m.txt" "sum-threads=1"
check_grep "massif: #1 is main's 10 x 1,000 B" \
	"^stack 1: 10,000 10 \| main \(massif_example\.c:$Lm\) \| __libc_start_call_main " "$TMP/m.txt"
check_grep "massif: g called from f" \
	"^stack 2: 4,000 1 \| g \(massif_example\.c:$Lg\) \| f \(massif_example\.c:$Lfg\) \| main \(massif_example\.c:$Lmf\) \| __libc_start_call_main " "$TMP/m.txt"
check_grep "massif: g called from main" \
	"^stack 3: 4,000 1 \| g \(massif_example\.c:$Lg\) \| main \(massif_example\.c:$Lmg\) \| __libc_start_call_main " "$TMP/m.txt"
check_grep "massif: f" \
	"^stack 4: 2,000 1 \| f \(massif_example\.c:$Lf\) \| main \(massif_example\.c:$Lmf\) \| __libc_start_call_main " "$TMP/m.txt"
check_eq "massif: 4 rows, no more" 4 "$(grep -c '^stack ' "$TMP/m.txt")"
has "massif: icicle root: all the bytes and blocks" "$TMP/m.txt" "fg fg root: all: 20,000 bytes in 13 blocks"
check_eq "massif: icicle: main's 3 call sites" 3 "$(grep -c '^fg fg: main$' "$TMP/m.txt")"
check_eq "massif: icicle: f at 2 sites" 2 "$(grep -c '^fg fg: f$' "$TMP/m.txt")"
check_eq "massif: icicle: g at 2 sites" 2 "$(grep -c '^fg fg: g$' "$TMP/m.txt")"
has "massif: nothing pruned" "$TMP/m.txt" \
	"fg-pruned=$(sed -n 's/^fg-pruned=\(.*No frame was pruned.*\)/\1/p' "$TMP/m.txt")"
# the timeline: the peak the text report's timeline gives
pk=$(sed -n 's/^peak (#): \([0-9,]*\) bytes live at time \([0-9,]*\);.*/\1 \2/p' "$TMP/m.text")
check "massif: the text timeline has a peak" test -n "$pk"
check_grep "massif: timeline peak as in the text report" \
	"^tl-peak=peak: ${pk% *} bytes live at time ${pk#* };" "$TMP/m.txt"
has "massif: peak marked on the chart" "$TMP/m.txt" "tl-peak-label=peak: ${pk% *} bytes"
check_eq "massif: no corruption or lost section" 0 "$(grep -c '^section ' "$TMP/m.txt")"

# the screenshot people look at (doc/html-report.png is a copy), with short paths
(cd "$TMP" && cp massif massif_example && "$TOP/$MP" --format html -o shot.html massif_example massif.core 2>/dev/null)
rm -f "$B/html-report.png"
chrome --screenshot="$TOP/$B/html-report.png" "file://$TMP/shot.html" >/dev/null 2>&1
check "massif: screenshot $B/html-report.png taken" test -s "$B/html-report.png"

# interaction: hover, click to zoom, click the root to go back, search
if [ $have_node = 1 ]; then
	node tests/html_cdp.js interact "$TMP/m.html" f g >"$TMP/m.cdp" 2>"$TMP/m.cdp.err"
	check_eq "massif: interaction driver ran" 0 $?
	# the first f box (largest first): f's call of g, 4,000 bytes
	has "massif: hover shows function, file:line, bytes, blocks, percent" "$TMP/m.cdp" \
		"tip=f | massif_example.c:$Lfg [massif] | 4,000 bytes in 1 block, 20.00% of all"
	has "massif: click zooms into f" "$TMP/m.cdp" "zoom=zoomed into f: 4,000 bytes (20.00% of all)"
	has "massif: the zoomed frame spans the whole width" "$TMP/m.cdp" "width=1.000"
	has "massif: clicking the root zooms out" "$TMP/m.cdp" "unzoom="
	has "massif: search 'g' matches both g frames, 8,000 bytes" "$TMP/m.cdp" \
		"match=matched: 8,000 bytes (40.00% of all) in 2 frames"
	has "massif: search highlights exactly the g boxes" "$TMP/m.cdp" "hl=g,g"
	has "massif: no request besides the page itself" "$TMP/m.cdp" "requests="
else
	echo "# node not installed: hover, zoom and search not driven" >&2
fi

# blocks without frames (HEAPANN_UNWIND=none) get a box of their own
HEAPANN_UNWIND=none; export HEAPANN_UNWIND
gcore_waiting "$TMP/massif-nf.core" "$exe" wait
unset HEAPANN_UNWIND
"$MP" --format html -o "$TMP/mn.html" "$exe" "$TMP/massif-nf.core" 2>/dev/null
check_eq "massif, no frames: exit 0" 0 $?
render mn
has "massif, no frames: blocks without frames get a box" "$TMP/mn.txt" "fg fg: (no frames recorded)"

# --report=lost adds the reachability summary: the text report's LEAK SUMMARY
"$MP" --report=lost --format html -o "$TMP/ml.html" "$exe" "$TMP/massif.core" 2>/dev/null
check_eq "massif --report=lost: exit 0" 0 $?
"$MP" --report=lost "$exe" "$TMP/massif.core" >"$TMP/ml.text" 2>/dev/null
render ml
for cat in "definitely lost" "indirectly lost" "possibly lost" "still reachable"; do
	v=$(sed -n "s/^ *$cat: \([0-9,]*\) bytes in \([0-9,]*\) blocks$/\1 \2/p" "$TMP/ml.text")
	b=${v#* }
	[ "$b" = 1 ] && w=block || w=blocks
	has "massif lost: $cat as in the text report" "$TMP/ml.txt" \
		"section lost: $cat | ${v% *} bytes in $b $w"
done
has "massif lost: everything is still reachable (main's stack, keep[])" "$TMP/ml.txt" \
	"section lost: still reachable | 20,000 bytes in 13 blocks"
check_grep "massif lost: main's 10 blocks, a loss record with its stack" \
	"^section lost: still reachable \| 10,000 \| 10 \| main \(massif_example\.c:$Lm\) \[massif\] \| " "$TMP/ml.txt"

# ---- C++: an inlined frame under new, a shared library, threads ----
if command -v g++ >/dev/null; then
	Llib=$(L tests/prog/e2e_lib.c lib)
	Lbuild=$(L tests/prog/e2e_main.cc build); Lmw=$(L tests/prog/e2e_main.cc make_widgets)
	Lthr=$(L tests/prog/e2e_main.cc thread); Lml=$(L tests/prog/e2e_main.cc main-lib)
	Lmain_w=$(L tests/prog/e2e_main.cc main-widgets)
	cc -g -O1 -fPIC -shared -o "$TMP/libe2e.so" tests/prog/e2e_lib.c
	g++ -g -O1 -pie -fPIE -o "$TMP/e2e" tests/prog/e2e_main.cc -L"$TMP" -le2e -Wl,-rpath,"$TMP" -pthread
	gcore_waiting "$TMP/e2e.core" "$TMP/e2e" wait
	"$MP" --format html -o "$TMP/x.html" "$TMP/e2e" "$TMP/e2e.core" 2>/dev/null
	check_eq "c++: exit 0" 0 $?
	"$MP" "$TMP/e2e" "$TMP/e2e.core" >"$TMP/x.text" 2>/dev/null
	render x
	self_contained x
	summary_matches x "$TMP/x.text"
	has "c++: 5 threads" "$TMP/x.txt" "sum-threads=5"
	check_grep "c++: inlined shapes::build under new, demangled caller" \
		"^stack [0-9]+: 800 20 \| shapes::build \(e2e_main\.cc:$Lbuild\) \[inlined\] \| shapes::make_widgets\(shapes::Widget\*\*, int\) \(e2e_main\.cc:$Lmw\) \| main \(e2e_main\.cc:$Lmain_w\) \|" "$TMP/x.txt"
	check_grep "c++: through the shared library" \
		"^stack [0-9]+: 1,500 5 \| lib_alloc \(e2e_lib\.c:$Llib\) \| main \(e2e_main\.cc:$Lml\) \|" "$TMP/x.txt"
	check_grep "c++: 4 threads x 10 x 128 B" \
		"^stack [0-9]+: 5,120 40 \| thread_work\(void\*\) \(e2e_main\.cc:$Lthr\) \|" "$TMP/x.txt"
	has "c++: the inlined frame is its own icicle box, marked inlined" "$TMP/x.txt" "fg fg inl: shapes::build"
	# libstdc++'s emergency pool, allocated by its static initializer before
	# libheapann's constructor, has its frames (run-hunt6-init): no bare box
	check "c++: no box without frames" sh -c "! grep -q '(no frames recorded)' '$TMP/x.txt'"
	blob x "sum(d['tree'][4 * k + 2] for k in range(1, len(d['tree']) // 4) if d['tree'][4 * k] == 0) == d['tree'][2]"
	if [ $have_node = 1 ]; then
		total=$(python3 -c "
import json; s = open('$TMP/x.html').read(); a = s.index('id=\"mprof-data\">') + 16
print(json.loads(s[a:s.index('</script>', a)])['summary']['bytes'])")
		p800=$(python3 -c "print('%.2f' % (100.0 * 800 / $total))")
		p5120=$(python3 -c "print('%.2f' % (100.0 * 5120 / $total))")
		node tests/html_cdp.js interact "$TMP/x.html" shapes::build thread_work >"$TMP/x.cdp" 2>"$TMP/x.cdp.err"
		check_eq "c++: interaction driver ran" 0 $?
		has "c++: hover on the inlined frame" "$TMP/x.cdp" \
			"tip=shapes::build | e2e_main.cc:$Lbuild [e2e] [inlined] | 800 bytes in 20 blocks, $p800% of all"
		has "c++: click zooms into it" "$TMP/x.cdp" "zoom=zoomed into shapes::build: 800 bytes ($p800% of all)"
		has "c++: search thread_work: the 4 threads' 5,120 bytes" "$TMP/x.cdp" \
			"match=matched: 5,120 bytes ($p5120% of all) in 1 frame"
		has "c++: no request besides the page itself" "$TMP/x.cdp" "requests="
	fi
else
	echo "# g++ not installed: the C++ part is not run" >&2
fi

# ---- a heap overflow: the corruption section names the culprit ----
cexe=$TMP/corrupt
Lc=$(grep -n 'static void \*alloc_culprit' tests/prog/corrupt_overflow.c | cut -d: -f1)
Ln=$(grep -n 'static void \*alloc_next' tests/prog/corrupt_overflow.c | cut -d: -f1)
cc -g -O0 -o "$cexe" tests/prog/corrupt_overflow.c
run_until_ready "$TMP/c.out" "$TMP/c.core" "$cexe" overflow 100 40 wait
culprit=$(sed -n 's/^culprit=//p' "$TMP/c.out")
"$MP" --format html -o "$TMP/c.html" "$cexe" "$TMP/c.core" 2>/dev/null
check_eq "overflow: exit 3 (corruption found)" 3 $?
"$MP" "$cexe" "$TMP/c.core" >"$TMP/c.text" 2>/dev/null
render c
self_contained c
summary_matches c "$TMP/c.text"
has "overflow: one damaged header in the summary" "$TMP/c.txt" "sum-damaged=1"
has "overflow: headline" "$TMP/c.txt" \
	"section corruption: heap corruption: 1 block overflowed its guard, 1 damaged header"
check_grep "overflow: the culprit block, its size, the whole guard broken" \
	"^section corruption: overflow: block $culprit \(100 bytes, seq [0-9]+\) wrote past its end: all 8 guard bytes differ, the overrun is at least 8 bytes$" "$TMP/c.txt"
check "overflow: the culprit's allocation site follows it" python3 -c "
import sys
L = [l[len('section corruption: '):].rstrip('\\n') for l in open('$TMP/c.txt') if l.startswith('section corruption: ')]
i = [k for k, l in enumerate(L) if l.startswith('overflow: block $culprit ')][0]
j = L.index('allocated at:', i)
sys.exit(not L[j + 1].startswith('alloc_culprit (corrupt_overflow.c:$Lc) '))"
check "overflow: the damaged neighbour (alloc_next) has the culprit as suspect" python3 -c "
import sys
L = [l[len('section corruption: '):].rstrip('\\n') for l in open('$TMP/c.txt') if l.startswith('section corruption: ')]
i = [k for k, l in enumerate(L) if l.startswith('damaged header at ')][0]
rest = L[i:]
ok = rest[2].startswith('alloc_next (corrupt_overflow.c:$Ln) ')
s = [k for k, l in enumerate(rest) if l.startswith('suspect: live block $culprit (100 bytes, seq ')][0]
ok = ok and rest[s].endswith('; its guard is broken')
ok = ok and rest[s + 2].startswith('alloc_culprit (corrupt_overflow.c:$Lc) ')
sys.exit(not ok)"

# ---- a raw dump of big-endian MIPS firmware (fixtures/fw): no threads, no statistics ----
info=fixtures/fw/mips.info
gzip -dc fixtures/fw/mips.elf.gz >"$TMP/mips.elf"
"$MP" --format html -o "$TMP/r.html" --raw fixtures/fw/mips.bin --elf "$TMP/mips.elf" \
	--base "$(sed -n 's/^base=//p' $info)" 2>/dev/null
check_eq "raw dump: exit 3 (corruption found)" 3 $?
"$MP" --raw fixtures/fw/mips.bin --elf "$TMP/mips.elf" --base "$(sed -n 's/^base=//p' $info)" \
	>"$TMP/r.text" 2>/dev/null
render r
self_contained r
summary_matches r "$TMP/r.text"
has "raw dump: no threads" "$TMP/r.txt" "sum-threads=(raw dump)"
check_grep "raw dump: main's 10 x 1,000 B" \
	"^stack 1: 10,000 10 \| main \(fw_app\.c:$(sed -n 's/^line.main=//p' $info)\) \| " "$TMP/r.txt"
check_grep "raw dump: the culprit, and its allocation site with its inlined caller" \
	"^section corruption: overflow: block $(sed -n 's/^culprit=//p' $info) \(24 bytes, seq [0-9]+\) wrote past its end" "$TMP/r.txt"
check "raw dump: culprit's frames: alloc_culprit, then fw_overflow inlined" python3 -c "
import sys
L = [l.rstrip('\\n')[len('section corruption: '):] for l in open('$TMP/r.txt') if l.startswith('section corruption: ')]
i = L.index('allocated at:')
sys.exit(not (L[i + 1] == 'alloc_culprit (fw_app.c:$(sed -n 's/^line.culprit=//p' $info)) [mips.elf]' and
              L[i + 2].startswith('fw_overflow (fw_app.c:') and L[i + 2].endswith(') [inlined] [mips.elf]')))"
check_grep "raw dump: no statistics region: the page says there is no timeline" \
	"No statistics region in the image" "$TMP/r.dom"

# ---- a source path with "</script>" and "<!--" in it: the blob stays one element ----
evil="$TMP/evil<!--x</script><b>y"
mkdir -p "$evil"
cp examples/massif_example.c "$evil/"
(cd "$evil" && cc -g -O0 -o "$TMP/evil" massif_example.c -fdebug-prefix-map=/nothing=/nothing) &&
	gcore_waiting "$TMP/evil.core" "$TMP/evil" wait
"$MP" --format html -o "$TMP/e.html" "$TMP/evil" "$TMP/evil.core" 2>/dev/null
check_eq "hostile path: exit 0" 0 $?
render e
check_eq "hostile path: the file has only the two script elements' end tags" 2 \
	"$(grep -o '</script>' "$TMP/e.html" | wc -l)"
blob e "any('</script><b>y/massif_example.c' in x for x in d['strings'])"
check "hostile path: the page drew itself" grep -q '^attr data-rendered=[0-9]' "$TMP/e.txt"
check_eq "hostile path: no <b> element made of it (outside the data)" 0 "$(python3 -c "
import re; s = open('$TMP/e.dom', encoding='utf-8').read()
print(re.sub(r'<script[^>]*>.*?</script>', '', s, flags=re.S).count('<b>'))")"
check_grep "hostile path: the stacks table still names main's line" \
	"^stack 1: 10,000 10 \| main \(massif_example\.c:$Lm\) \| " "$TMP/e.txt"

# ---- nothing live: the page still draws, with zeros ----
printf '%s\n' '#include <stdlib.h>' '#include <unistd.h>' \
	'int main(void) { char c; free(malloc(10)); if (write(1, "ready\n", 6) != 6) return 1;' \
	'while (read(0, &c, 1) == 1 && c != 0x0a); return 0; }' >"$TMP/none.c"
cc -g -o "$TMP/none" "$TMP/none.c"
gcore_waiting "$TMP/none.core" "$TMP/none"
"$MP" --format html -o "$TMP/n.html" "$TMP/none" "$TMP/none.core" 2>/dev/null
check_eq "no live block: exit 0" 0 $?
render n
self_contained n
has "no live block: 0 blocks" "$TMP/n.txt" "sum-blocks=0"
has "no live block: the freed one seen" "$TMP/n.txt" "sum-freed=1"
has "no live block: the root box says 0 bytes" "$TMP/n.txt" "fg fg root: all: 0 bytes in 0 blocks"
check_grep "no live block: the table says so" "No live blocks\." "$TMP/n.dom"

# ---- --top N: N rows, and what is left ----
"$MP" --format html --top 2 -o "$TMP/top.html" "$exe" "$TMP/massif.core" 2>/dev/null
render top
check_eq "--top 2: 2 rows" 2 "$(grep -c '^stack ' "$TMP/top.txt")"
has "--top 2: the rest said" "$TMP/top.txt" \
	"stacks-rest=... 2 more stacks with 6,000 bytes in 2 blocks (--top 0 shows all)"

# ---- 1,000 distinct stacks next to one big block: tiny frames are folded ----
sh tests/html_fan.sh 10 3 1 8388608 >"$TMP/fan.c"
cc -g -O0 -o "$TMP/fan" "$TMP/fan.c"
run_until_ready "$TMP/fan.out" "$TMP/fan.core" "$TMP/fan"
small=$(sed -n 's/^small=\([0-9]*\) .*/\1/p' "$TMP/fan.out")
"$MP" --format html -o "$TMP/f.html" "$TMP/fan" "$TMP/fan.core" 2>/dev/null
check_eq "fan: exit 0" 0 $?
render f
self_contained f
has "fan: 1,001 live blocks" "$TMP/f.txt" "sum-blocks=1,001"
has "fan: 1,001 distinct stacks" "$TMP/f.txt" "sum-stacks=1,001"
# the threshold is 0.01% of all the bytes, rounded up: each fan1 node (10 blocks of
# 16 to 76 bytes) is below it, each fan0 node (100 blocks) above; so the 100 fan1
# nodes and their 1,000 leaves fold into one "other" node under each of 10 fan0 nodes
min=$(( (8388608 + small + 9999) / 10000 ))
blob f "d['pruned']['nodes'] == 1100 and d['pruned']['other_nodes'] == 10 and d['pruned']['bytes'] == $small and d['pruned']['min_bytes'] == $min"
blob f "d['other'] == [10] * 10 and sum(d['tree'][4 * k + 2] for k in range(len(d['tree']) // 4) if d['tree'][4 * k + 1] == -2) == $small"
check_grep "fan: the page says what was pruned" \
	"^fg-pruned=.* 1,100 of [0-9,]+ tree nodes below $(python3 -c "print(format($min, ','))") bytes .* folded into 10 \"other\" nodes \($(python3 -c "print(format($small, ','))") bytes\)\.$" "$TMP/f.txt"
Lbig=$(grep -n 'big = malloc' "$TMP/fan.c" | cut -d: -f1)
check_grep "fan: #1 is the big block" "^stack 1: 8,388,608 1 \| main \(fan\.c:$Lbig\) \|" "$TMP/f.txt"
check_grep "fan: 50 rows, then how many more" "^stacks-rest=\.\.\. 951 more stacks with [0-9,]+ bytes in 951 blocks" "$TMP/f.txt"
# the node cap: 10,000 stacks of 32 bytes through 2 tail functions: every node
# weighs 0.01% or more, 30,000 of them exactly 32 bytes, more than the 20,000 kept:
# only the heavier ones are (the fan levels above), 1,000 "other" nodes hold the rest
sh tests/html_fan.sh 10 4 1 0 2 >"$TMP/tail.c"
cc -g -O0 -o "$TMP/tail" "$TMP/tail.c"
run_until_ready "$TMP/tail.out" "$TMP/tail.core" "$TMP/tail"
"$MP" --format html -o "$TMP/t.html" "$TMP/tail" "$TMP/tail.core" 2>/dev/null
check_eq "node cap: exit 0" 0 $?
blob t "d['pruned']['min_bytes'] == 33 and d['pruned']['nodes'] == 30000 and d['pruned']['other_nodes'] == 1000"
blob t "d['pruned']['of'] - d['pruned']['nodes'] <= 20000 and d['other'] == [10] * 1000 and d['pruned']['bytes'] == 320000"
render t
has "node cap: 10,000 blocks" "$TMP/t.txt" "sum-blocks=10,000"
check_grep "node cap: the page says what was pruned" \
	"^fg-pruned=.* 30,000 of 31,[0-9]{3} tree nodes below 33 bytes .* folded into 1,000 \"other\" nodes \(320,000 bytes\)\.$" "$TMP/t.txt"

# the file grows with the tree, not with the blocks: the same 1,000 stacks with 1
# block each, then 20 (no big block: the same proportions, the same pruning)
for per in 1 20; do
	sh tests/html_fan.sh 10 3 $per 0 >"$TMP/fan$per.c"
	cc -g -O0 -o "$TMP/fan$per" "$TMP/fan$per.c"
	run_until_ready "$TMP/fan$per.out" "$TMP/fan$per.core" "$TMP/fan$per"
	"$MP" --format html -o "$TMP/p$per.html" "$TMP/fan$per" "$TMP/fan$per.core" 2>/dev/null
done
render p20
has "fan x20: 20,000 live blocks" "$TMP/p20.txt" "sum-blocks=20,000"
blob p1 "len(d['tree']) == $(python3 -c "
import json; s = open('$TMP/p20.html').read(); a = s.index('id=\"mprof-data\">') + 16
print(len(json.loads(s[a:s.index('</script>', a)])['tree']))")"
s1=$(wc -c <"$TMP/p1.html"); s20=$(wc -c <"$TMP/p20.html")
# (only the numbers get longer: bytes and blocks per node, the timeline's values)
check "fan x20: 20 times the blocks, the same tree, the file within 20% ($s1 -> $s20 bytes)" \
	test $((s20 * 100)) -le $((s1 * 120))

# ---- bad output path: one line, exit 1 ----
"$MP" --format html -o "$TMP/no/such/dir/r.html" "$exe" "$TMP/massif.core" >/dev/null 2>"$TMP/bad.err"
check_eq "bad -o: exit 1" 1 $?
has "bad -o: one line naming the file" "$TMP/bad.err" "mprof-core: $TMP/no/such/dir/r.html: No such file or directory"
done_testing
