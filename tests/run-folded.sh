#!/bin/sh
# run-folded.sh - --format folded and --format svg (issue 12) end to end: gcores of
# the Massif manual's example, of tests/prog/fold_prog.c (inlined frames, two
# stacks folding to one line, a damaged header, stacks too narrow to draw) and of
# tests/prog/fold_cxx.cc (C++: operator new[] stripped, a template's name), read
# back by a folded-stack parser (tests/folded.py) and an XML parser
# (tests/svgtitles.py, xmllint) for exact bytes, blocks, names and lines.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v xmllint >/dev/null || sh scripts/install-deps.sh libxml2-utils

fw() { python3 tests/folded.py "$@" 2>&1; }   # FILE QUESTION...: the answer
svg_ok() { # FILE: well-formed for both parsers
	python3 tests/svgtitles.py "$1" >"$1.titles" || return 1
	! command -v xmllint >/dev/null || xmllint --noout "$1"
}

# ---- the Massif manual's example ----
src=examples/massif_example.c
line() { grep -n "MARK:$1 " "$2" | cut -d: -f1; }
Lg=$(line g $src); Lf=$(line f $src); Lfg=$(line f-calls-g $src); Lm=$(line main $src)
Lmf=$(line main-calls-f $src); Lmg=$(line main-calls-g $src)
M=massif_example.c
for opt in -O0 -O2; do
	exe=$TMP/massif$opt
	cc -g $opt -o "$exe" "$src"
	gcore_waiting "$TMP/m$opt" "$exe" wait
	check "massif$opt: gcore written" test -s "$TMP/m$opt"
	F=$TMP/m$opt.folded
	"$B/mprof-core" --format folded "$exe" "$TMP/m$opt" >"$F" 2>"$F.err"
	check_eq "massif$opt folded: exit 0" 0 $?
	check_eq "massif$opt folded: 4 stacks" 4 "$(fw "$F" lines)"
	check_eq "massif$opt folded: 20000 bytes in all" 20000 "$(fw "$F" total)"
	check_eq "massif$opt folded: main's 10 x 1000" 10000 "$(fw "$F" weight "__libc_start_call_main;main")"
	check_eq "massif$opt folded: f from main" 2000 "$(fw "$F" weight "main;f")"
	check_eq "massif$opt folded: g from f" 4000 "$(fw "$F" weight "main;f;g")"
	check_eq "massif$opt folded: g from main" 4000 "$(fw "$F" weight "main;g")"
	check_eq "massif$opt folded: root first, one root" _start "$(fw "$F" roots)"
	check "massif$opt folded: no allocator frame" sh -c "! grep -q 'malloc' '$F'"
	"$B/mprof-core" --format folded --weight blocks "$exe" "$TMP/m$opt" >"$F.b" 2>/dev/null
	check_eq "massif$opt --weight blocks: 13 blocks" 13 "$(fw "$F.b" total)"
	check_eq "massif$opt --weight blocks: main's 10" 10 "$(fw "$F.b" weight "__libc_start_call_main;main")"
	check_eq "massif$opt --weight blocks: g from f, 1" 1 "$(fw "$F.b" weight "main;f;g")"
	"$B/mprof-core" --format folded --folded-lines "$exe" "$TMP/m$opt" >"$F.l" 2>/dev/null
	check_eq "massif$opt --folded-lines: main:$Lm" 10000 "$(fw "$F.l" weight "main ($M:$Lm)")"
	check_eq "massif$opt --folded-lines: f:$Lf from main:$Lmf" 2000 \
		"$(fw "$F.l" weight "main ($M:$Lmf);f ($M:$Lf)")"
	check_eq "massif$opt --folded-lines: g:$Lg from f:$Lfg from main:$Lmf" 4000 \
		"$(fw "$F.l" weight "main ($M:$Lmf);f ($M:$Lfg);g ($M:$Lg)")"
	check_eq "massif$opt --folded-lines: g:$Lg from main:$Lmg" 4000 \
		"$(fw "$F.l" weight "main ($M:$Lmg);g ($M:$Lg)")"

	# SVG
	S=$TMP/m$opt.svg
	"$B/mprof-core" --format svg -o "$S" "$exe" "$TMP/m$opt" 2>"$S.err"
	check_eq "massif$opt svg: exit 0" 0 $?
	check "massif$opt svg: well-formed XML" svg_ok "$S"
	check_grep "massif$opt svg: the root" '^10\.00 1180\.00 all: 20,000 bytes in 13 blocks, 100\.00% of bytes$' "$S.titles"
	check_grep "massif$opt svg: main, its three lines" "^10\.00 1180\.00 main \($M:$Lm and 2 other lines\): 20,000 bytes in 13 blocks, 100\.00% of bytes$" "$S.titles"
	check_grep "massif$opt svg: f, 30% of the width" "^10\.00 354\.00 f \($M:$Lf and 1 other line\): 6,000 bytes in 2 blocks, 30\.00% of bytes$" "$S.titles"
	check_eq "massif$opt svg: g twice (under f and under main)" 2 \
		"$(grep -c "^[0-9.]* 236\.00 g ($M:$Lg): 4,000 bytes in 1 block, 20\.00% of bytes$" "$S.titles")"
	check_grep "massif$opt svg: heading" '^note Live heap of massif-O.* 20,000 bytes in 13 blocks \(width: bytes\)$' "$S.titles"
	"$B/mprof-core" --format svg --weight blocks "$exe" "$TMP/m$opt" >"$S.b" 2>/dev/null
	check "massif$opt svg --weight blocks: well-formed XML" svg_ok "$S.b"
	check_grep "massif$opt svg --weight blocks: g is 1 of 13 blocks" "^[0-9.]* 90\.77 g \($M:$Lg\): 4,000 bytes in 1 block, 7\.69% of blocks$" "$S.b.titles"
done
"$B/mprof-core" --format folded -o "$TMP/o.folded" "$exe" "$TMP/m-O2" 2>/dev/null
check "-o FILE: the same lines as standard output" cmp -s "$TMP/o.folded" "$TMP/m-O2.folded"

# ---- inlined frames, two stacks folding to one line, a damaged header ----
src=tests/prog/fold_prog.c
P=fold_prog.c
Gr=$(line grab $src); Mi=$(line middle $src); Ou=$(line outer $src)
Mo=$(line main-outer $src); M1=$(line main-grab1 $src); M2=$(line main-grab2 $src)
for opt in -O0 -O2; do
	exe=$TMP/fold_prog$opt
	cc -g $opt -o "$exe" "$src"
	gcore_waiting "$TMP/f$opt" "$exe" wait
	F=$TMP/f$opt.folded
	"$B/mprof-core" --format folded "$exe" "$TMP/f$opt" >"$F" 2>/dev/null
	check_eq "inline$opt: exit 0" 0 $?
	check_eq "inline$opt: 2 lines" 2 "$(fw "$F" lines)"
	check_eq "inline$opt: grab inlined in middle inlined in outer, 3 x 64" 192 \
		"$(fw "$F" weight "main;outer;middle;grab")"
	check_eq "inline$opt: grab inlined twice in main, aggregated" 256 "$(fw "$F" weight "__libc_start_call_main;main;grab")"
	"$B/mprof-core" --format folded --folded-lines "$exe" "$TMP/f$opt" >"$F.l" 2>/dev/null
	check_eq "inline$opt --folded-lines: 3 lines" 3 "$(fw "$F.l" lines)"
	check_eq "inline$opt --folded-lines: each inline level's line" 192 \
		"$(fw "$F.l" weight "main ($P:$Mo);outer ($P:$Ou);middle ($P:$Mi);grab ($P:$Gr)")"
	check_eq "inline$opt --folded-lines: main:$M1" 128 "$(fw "$F.l" weight "main ($P:$M1);grab ($P:$Gr)")"
	check_eq "inline$opt --folded-lines: main:$M2" 128 "$(fw "$F.l" weight "main ($P:$M2);grab ($P:$Gr)")"
	"$B/mprof-core" --format folded --weight blocks "$exe" "$TMP/f$opt" >"$F.b" 2>/dev/null
	check_eq "inline$opt --weight blocks" "3 2" \
		"$(fw "$F.b" weight "outer;middle;grab") $(fw "$F.b" weight "__libc_start_call_main;main;grab")"
done

exe=$TMP/fold_prog-O2
gcore_waiting "$TMP/d" "$exe" damage
F=$TMP/d.folded
"$B/mprof-core" --format folded "$exe" "$TMP/d" >"$F" 2>"$F.err"
check_eq "damaged: exit 3 (corruption found), as the reports" 3 $?
check_eq "damaged: the valid blocks, exactly" "448 192 256" \
	"$(fw "$F" total) $(fw "$F" weight "outer;middle;grab") $(fw "$F" weight "__libc_start_call_main;main;grab")"
check_grep "damaged: a note says what was left out" '^mprof-core: note: --format folded leaves out 1 damaged header \(see --report=corruption\)$' "$F.err"
"$B/mprof-core" --format svg -o "$TMP/d.svg" "$exe" "$TMP/d" 2>/dev/null
check "damaged svg: well-formed XML" svg_ok "$TMP/d.svg"
check_grep "damaged svg: says so" '^note .*: 3 distinct stacks; 1 damaged headers not shown' "$TMP/d.svg.titles"
check_grep "damaged svg: root total" '^10\.00 1180\.00 all: 448 bytes in 5 blocks, 100\.00% of bytes$' "$TMP/d.svg.titles"

# frames narrower than half a pixel: left out, with a note
gcore_waiting "$TMP/w" "$exe" wide
"$B/mprof-core" --format svg -o "$TMP/w.svg" "$exe" "$TMP/w" 2>/dev/null
check "wide svg: well-formed XML" svg_ok "$TMP/w.svg"
check_grep "wide svg: big() drawn" '^[0-9.]* [0-9.]* big \(fold_prog.c:[0-9]+\): 4,000,000 bytes in 1 block, 99\.99% of bytes$' "$TMP/w.svg.titles"
check "wide svg: outer and grab not drawn" sh -c "! grep -Eq ' (outer|grab) ' '$TMP/w.svg.titles'"
check_grep "wide svg: the note (4 frames: outer, middle, grab; grab under main)" \
	'^note 4 frames narrower than 0\.5 px \(under 1695 bytes\) not drawn; their weight stays in their callers$' "$TMP/w.svg.titles"
"$B/mprof-core" --format folded "$exe" "$TMP/w" >"$TMP/w.folded" 2>/dev/null
check_eq "wide folded: every stack still there" "4000448 4000000" "$(fw "$TMP/w.folded" total) $(fw "$TMP/w.folded" weight "main;big")"

# ---- C++ ----
exe=$TMP/fold_cxx
Lfill=$(grep -n 'MARK:fill$' tests/prog/fold_cxx.cc | cut -d: -f1)
if g++ -g -O2 -o "$exe" tests/prog/fold_cxx.cc; then
	gcore_waiting "$TMP/x" "$exe"
	F=$TMP/x.folded
	"$B/mprof-core" --format folded "$exe" "$TMP/x" >"$F" 2>/dev/null
	check_eq "c++: exit 0" 0 $?
	check_eq "c++: fill's 3 x new Node[4], under a template's full name" 768 \
		"$(fw "$F" weight "main;shapes::Pool<Node, 3>::fill()")"
	check_eq "c++: main's new Pool<Node, 3>" 24 "$(fw "$F" weight "__libc_start_call_main;main")"
	check "c++: operator new stripped" sh -c "! grep -q 'operator new' '$F'"
	"$B/mprof-core" --format folded --weight blocks "$exe" "$TMP/x" >"$F.b" 2>/dev/null
	check_eq "c++ --weight blocks" "3 1" "$(fw "$F.b" weight "main;shapes::Pool<Node, 3>::fill()") $(fw "$F.b" weight "__libc_start_call_main;main")"
	"$B/mprof-core" --format svg -o "$TMP/x.svg" "$exe" "$TMP/x" 2>/dev/null
	check "c++ svg: well-formed XML" svg_ok "$TMP/x.svg"
	check_grep "c++ svg: the template's name, escaped in the file" 'shapes::Pool&lt;Node, 3&gt;::fill\(\)' "$TMP/x.svg"
	check_grep "c++ svg: its title read back" "^[0-9.]* [0-9.]* shapes::Pool<Node, 3>::fill\(\) \(fold_cxx.cc:$Lfill\): 768 bytes in 3 blocks, " "$TMP/x.svg.titles"
else
	check "c++ test program builds" false
fi
done_testing
