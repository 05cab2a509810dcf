#!/bin/sh
# run-known8.sh - defects an earlier session noticed and left:
#  1. mprof-core snapshot PID -o NAME.zst writes a real zstd frame (zstd -t
#     accepts it, zstd -d gives a core), whose report is the plain snapshot's;
#     -o NAME.gz / NAME.xz are refused (snapshot compresses with zstd only).
#  2. a library constructor's stack ends in ld.so's _dl_start_user, an untyped
#     (NOTYPE) symbol: named by both symbolizers, as gdb's 'info symbol' does
#     (tests/prog/hunt6_ctorlib.cc, g++ -O2 and clang++ -O0/-O2, kernel cores).
#  3. clang's _GLOBAL__sub_I_* frame has a file but no line (clang's line 0,
#     eu-addr2line -i's 'FILE:?', gdb's 'No line number information'): printed
#     '(FILE)', not '(FILE:0)', in every output that shows lines (the HTML
#     report as Chromium draws it, read by tests/html_dom.py).
#  5. --addr of thread-local storage: named for each thread, its span read from
#     glibc's DTV (a dlopen'd library's 1 MiB of TLS, tests/prog/known8_tlslib.c,
#     does not widen it over the stack; nor does a crafted PT_TLS p_align)
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (snapshots, TLS layout)"
command -v python3 >/dev/null || skip "python3 not installed"
command -v gdb >/dev/null || sh scripts/install-deps.sh gdb
command -v zstd >/dev/null || sh scripts/install-deps.sh zstd
command -v gdb >/dev/null || skip "gdb not installed"
command -v zstd >/dev/null || skip "zstd not installed"

LIB=$TOP/$B/libheapann.so
cc -g -O2 -pthread -o "$TMP/tls" tests/prog/known8_tls.c -ldl || skip "cannot compile tests/prog/known8_tls.c"
cc -g -O2 -shared -fPIC -o "$TMP/libk8tls.so" tests/prog/known8_tlslib.c || skip "cannot compile tests/prog/known8_tlslib.c"

# start_waiting PROG ARGS...: run PROG under the preload until it prints "ready"
# (its output in $TMP/out, its pid in $pid); finish_waiting lets it end.
start_waiting() {
	rm -f "$TMP/fifo" "$TMP/out"; mkfifo "$TMP/fifo"
	LD_PRELOAD=$LIB "$@" <"$TMP/fifo" >"$TMP/out" &
	pid=$!
	exec 9>"$TMP/fifo"
	wait_for "$TMP/out" '^ready$'
}
finish_waiting() {
	echo >&9; exec 9>&-
	wait $pid
}

# ---- 1. mprof-core snapshot -o NAME.zst ----
start_waiting "$TMP/tls"
check "snapshot: the program is ready" test $? -eq 0
"$B/mprof-core" snapshot $pid -o "$TMP/s.core" --no-report >"$TMP/s.out" 2>&1
check_eq "snapshot -o s.core: exit 0" 0 $?
echo mine >"$TMP/s.core.zst.part"   # a user's file of the name the first version used
"$B/mprof-core" snapshot $pid -o "$TMP/s.core.zst" --no-report >"$TMP/z.out" 2>&1
check_eq "snapshot -o s.core.zst: exit 0" 0 $?
check_eq "snapshot -o s.core.zst: says what it wrote" "wrote $TMP/s.core.zst" "$(cat "$TMP/z.out")"
check_eq "snapshot -o s.core.zst: zstd's magic" "28b52ffd" "$(od -An -tx1 -N4 "$TMP/s.core.zst" | tr -d ' ')"
zstd -q -t "$TMP/s.core.zst"
check_eq "snapshot -o s.core.zst: zstd -t accepts it" 0 $?
zstd -q -d -o "$TMP/d.core" "$TMP/s.core.zst"
check_eq "snapshot -o s.core.zst: zstd -d decompresses it" 0 $?
check_eq "snapshot -o s.core.zst: zstd -d gives an ELF core" "7f454c46 0004" \
	"$(od -An -tx1 -N4 "$TMP/d.core" | tr -d ' ') $(od -An -tx2 -j16 -N2 "$TMP/d.core" | tr -d ' ')"
check "snapshot -o s.core.zst: no temporary left beside it" \
	test "$(ls "$TMP" | grep -c '^s\.core')" -eq 3
check_eq "snapshot -o s.core.zst: the user's s.core.zst.part is left alone" mine "$(cat "$TMP/s.core.zst.part")"
# a failure (gcore runs out of space on a 256 KiB tmpfs) leaves an older
# NAME.zst as it was and no temporary behind
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=256k tmpfs "$TMP/small" 2>/dev/null; then
	echo old >"$TMP/small/o.core.zst"
	"$B/mprof-core" snapshot $pid -o "$TMP/small/o.core.zst" --no-report >"$TMP/o.out" 2>&1
	rc=$?
	check "snapshot -o o.core.zst on a full disk: fails (exit $rc)" test $rc -ne 0
	check_eq "snapshot -o o.core.zst on a full disk: the older o.core.zst survives" old "$(cat "$TMP/small/o.core.zst")"
	check_eq "snapshot -o o.core.zst on a full disk: nothing else is left" o.core.zst "$(ls -A "$TMP/small")"
	umount "$TMP/small"
else
	echo "# cannot mount a small tmpfs (not root?): the failure path is not checked"
fi
"$B/mprof-core" snapshot $pid -o "$TMP/r.core.zst" >"$TMP/r.txt" 2>"$TMP/r.err"
check_eq "snapshot -o r.core.zst with a report: exit 0" 0 $?
check_grep "snapshot -o r.core.zst: the report reads it as zstd" \
	'^[^ ]*r\.core\.zst: core \(zstd-compressed, [0-9,]+ bytes uncompressed\)' "$TMP/r.txt"
for f in s.core s.core.zst; do
	"$B/mprof-core" --report=stacks --top 0 "$TMP/tls" "$TMP/$f" | sed 1d >"$TMP/$f.txt"
done
check "snapshot: the .zst core's report is the plain one's" cmp -s "$TMP/s.core.txt" "$TMP/s.core.zst.txt"
"$B/mprof-core" --format json "$TMP/tls" "$TMP/s.core.zst" >"$TMP/s.json"
check_eq "snapshot: the .zst core has the three threads' blocks (3,300 bytes)" \
	"k8_setup=3/3300" "$(sums "$TMP/s.json" k8_setup)"
# the suffix in capitals is the same suffix
"$B/mprof-core" snapshot $pid -o "$TMP/u.core.ZST" --no-report >/dev/null 2>&1
check_eq "snapshot -o u.core.ZST: zstd's magic" "28b52ffd" "$(od -An -tx1 -N4 "$TMP/u.core.ZST" | tr -d ' ')"
for ext in gz xz GZ Xz; do
	"$B/mprof-core" snapshot $pid -o "$TMP/s.core.$ext" --no-report >"$TMP/$ext.out" 2>&1
	check_eq "snapshot -o s.core.$ext: refused (exit 2)" 2 $?
	check_eq "snapshot -o s.core.$ext: one line says why" \
		"mprof-core: snapshot: cannot write $TMP/s.core.$ext: only zstd compression is written (name it .zst, or without a suffix for a plain core) (see mprof-core --help)" \
		"$(cat "$TMP/$ext.out")"
	check "snapshot -o s.core.$ext: no file" test ! -e "$TMP/s.core.$ext"
done
finish_waiting
check_eq "snapshot: the program ends normally" 0 $?

# ---- 2 and 3: library constructors (tests/prog/hunt6_ctorlib.cc) ----
# ld_label: ld.so's _dl_start_user is a NOTYPE symbol of its symbol table (in
# the file or in its debug file, found by build-id); empty when neither has it
ldso=$(readlink -f /lib64/ld-linux-x86-64.so.2)
ldid=$(readelf -n "$ldso" 2>/dev/null | awk '/Build ID/ { print $3 }')
ld_label=
for f in "$ldso" "/usr/lib/debug/.build-id/$(echo "$ldid" | cut -c1-2)/$(echo "$ldid" | cut -c3-).debug"; do
	[ -f "$f" ] && readelf -sW "$f" | grep -Eq ' NOTYPE +LOCAL +DEFAULT +[0-9]+ _dl_start_user$' &&
		ld_label=_dl_start_user
done
[ -n "$ld_label" ] || echo "# ld.so has no symbol _dl_start_user here (libc6-dbg): item 2 not checked"
if [ "$(cat /proc/sys/kernel/core_pattern)" != core ]; then
	echo "# core_pattern is not 'core': items 2 and 3 not checked"; cases=
fi

# ctor_case NAME CXX CC FLAGS...: build the library and program, take a kernel
# core of its abort; the core in $TMP/NAME/core
ctor_case() {
	cn=$1; ccxx=$2; ccc=$3; shift 3
	d=$TMP/$cn; mkdir -p "$d"
	$ccxx -g "$@" -shared -fPIC -pthread -o "$d/libhunt6ctor.so" tests/prog/hunt6_ctorlib.cc &&
	$ccc -g "$@" -o "$d/prog" tests/prog/hunt6_ctor.c -L"$d" -lhunt6ctor -Wl,-rpath,"$d" || return 1
	(cd "$d" && ulimit -c unlimited && LD_PRELOAD=$LIB ./prog abort >/dev/null 2>&1; true) 2>/dev/null
	test -s "$d/core"
}

# outermost NAME JSON BYTES: the outermost frame's function of the stack of BYTES
outermost() {
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(' '.join(str(s['frames'][-1].get('function')) for s in d['stacks'] if s['bytes'] == int(sys.argv[2])))" "$1" "$2"
}

[ "$(cat /proc/sys/kernel/core_pattern)" = core ] && cases="gcc-O2"
command -v clang++ >/dev/null && command -v clang >/dev/null && [ -n "$cases" ] && cases="$cases clang-O0 clang-O2" ||
	echo "# clang not installed or no kernel cores: the clang cases are left out"
for c in $cases; do
	case $c in
	gcc-O2) ctor_case $c g++ gcc -O2 ;;
	clang-O0) ctor_case $c clang++ clang -O0 ;;
	clang-O2) ctor_case $c clang++ clang -O2 ;;
	esac
	check "$c: kernel core written" test $? -eq 0 || continue
	d=$TMP/$c
	for sy in dw gdb; do
		"$B/mprof-core" -q --symbolizer=$sy --format json "$d/prog" "$d/core" >"$d/$sy.json" 2>"$d/$sy.err"
		check_eq "$c --symbolizer=$sy: exit 0" 0 $?
		"$B/mprof-core" -q --symbolizer=$sy --top 0 "$d/prog" "$d/core" >"$d/$sy.txt" 2>&1
		if [ -n "$ld_label" ]; then
			check_eq "$c --symbolizer=$sy: the C++ global's stack (4,444 bytes) ends in $ld_label" \
				"$ld_label" "$(outermost "$d/$sy.json" 4444)"
			check_eq "$c --symbolizer=$sy: the constructor function's (3,333 bytes) too" \
				"$ld_label" "$(outermost "$d/$sy.json" 3333)"
			check_grep "$c --symbolizer=$sy: text: '$ld_label [ld-linux-x86-64.so.2]'" \
				"^    $ld_label \[ld-linux-x86-64\.so\.2\]\$" "$d/$sy.txt"
		fi
		case $c in clang-*)
			# dw: the outer frame of the inline chain (eu-addr2line -i: FILE:?); gdb at -O2:
			# no chains, the line of the inlined code (its 'info line'); at -O0 'No line
			# number information', so no file either
			if [ $sy = gdb ] && [ $c = clang-O2 ]; then
				want='^    _GLOBAL__sub_I_hunt6_ctorlib\.cc \(hunt6_ctorlib\.cc:26\) \[libhunt6ctor\.so\]$'
			elif [ $sy = gdb ]; then
				want='^    _GLOBAL__sub_I_hunt6_ctorlib\.cc \[libhunt6ctor\.so\]$'
			else
				want='^    _GLOBAL__sub_I_hunt6_ctorlib\.cc \(hunt6_ctorlib\.cc\) \[libhunt6ctor\.so\]$'
			fi
			check_grep "$c --symbolizer=$sy: _GLOBAL__sub_I_ frame as addr2line and gdb say" "$want" "$d/$sy.txt"
			check "$c --symbolizer=$sy: no 'FILE:0' in the text report" sh -c "! grep -n ':0)' '$d/$sy.txt'"
			"$B/mprof-core" -q --symbolizer=$sy --report=tree --top 0 "$d/prog" "$d/core" >"$d/$sy.tree" 2>&1
			check "$c --symbolizer=$sy: none in the tree" sh -c "! grep -n ':0)' '$d/$sy.tree'"
			"$B/mprof-core" -q --symbolizer=$sy --format folded --folded-lines "$d/prog" "$d/core" >"$d/$sy.folded" 2>&1
			check "$c --symbolizer=$sy: none in the folded stacks" sh -c "! grep -n ':0[;)]' '$d/$sy.folded'"
			# the text's frame, as it reads in the folded stacks
			fwant=$(echo "$want" | sed 's/^^    /;/; s/ \\\[libhunt6ctor\\\.so\\\]\$/[; ]/')
			check_grep "$c --symbolizer=$sy: folded: the frame as in the text" "$fwant" "$d/$sy.folded"
			"$B/mprof-core" -q --symbolizer=$sy --format massif -o "$d/$sy.ms" "$d/prog" "$d/core" >/dev/null 2>&1
			check "$c --symbolizer=$sy: none in the massif file" sh -c "! grep -n ':0)' '$d/$sy.ms'"
			# the HTML report (cli/html/report.js draws the frames): rendered by
			# Chromium, read as lines by tests/html_dom.py, as run-html does
			if [ $sy = dw ] && command -v chromium >/dev/null; then
				"$B/mprof-core" -q --symbolizer=$sy --format html -o "$d/$sy.html" "$d/prog" "$d/core" >/dev/null 2>&1
				timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
					--disable-background-networking --disable-component-update --disable-sync \
					--user-data-dir="$(mktemp -d "$TMP/profile.XXXXXX")" --hide-scrollbars \
					--window-size=1400,1000 --dump-dom "file://$d/$sy.html" >"$d/$sy.dom" 2>/dev/null
				python3 tests/html_dom.py "$d/$sy.dom" >"$d/$sy.html.txt"
				check_grep "$c html: the stacks table shows the frame's file without a line" \
					'^stack [0-9]+: .* \| _GLOBAL__sub_I_hunt6_ctorlib\.cc \(hunt6_ctorlib\.cc\) \| ' "$d/$sy.html.txt"
				check "$c html: no 'undefined' and no ':0' line drawn" \
					sh -c "! grep -nE 'undefined|\.cc:0( |\$|\))' '$d/$sy.html.txt'"
			fi
			;;
		esac
	done
done

# ---- 4. --addr of .data/.bss no symbol covers, on a raw dump ----
# gap ELF LO HI SECTION: "ADDR SYMBOL OFFSET SIZE" for the first address of
# SECTION in [LO, HI) that no symbol's extent covers (a symbol of size 0 covers
# its own address), with the nearest symbol before it in the section
gap() {
	python3 - "$@" <<'PYEOF'
import re, subprocess, sys
elf, lo, hi, want = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0), sys.argv[4]
out = lambda *a: subprocess.run(a, capture_output=True, text=True).stdout.splitlines()
sec = [(int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)) for l in out("readelf", "-SW", elf)
       for m in [re.match(r"\s*\[\s*(\d+)\]\s+" + re.escape(want) + r"\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)] if m]
idx, start, size = sec[0]
label = len(sys.argv) > 5 and sys.argv[5] == "label"
syms = sorted((int(f[1], 16), int(f[2], 16) if f[2].startswith("0x") else int(f[2]), f[7], f[3])
              for f in (l.split() for l in out("readelf", "-sW", elf))
              if len(f) >= 8 and f[0].endswith(":") and f[6] == str(idx) and f[3] in ("OBJECT", "NOTYPE", "FUNC"))
for a in range(max(start, lo), min(start + size, hi)):
    if any(v <= a < v + max(n, 1) for v, n, _, _ in syms):
        continue
    b = [x for x in syms if x[0] <= a]
    # the nearest before; at one address the first in the symbol table, as
    # mprof-core and gdb take it: only an address whose candidates agree
    if b and len({(x[1], x[3]) for x in b if x[0] == b[-1][0]}) == 1:
        kind = "label" if b[-1][3] == "NOTYPE" or b[-1][1] == 0 else "sized"
        if label and kind != "label":
            continue
        print(hex(a), b[-1][2], hex(a - b[-1][0]), b[-1][1], kind)
        break
PYEOF
}
if command -v gdb >/dev/null && [ -f "$B/heapann-static.pc" ] && [ "$(cat /proc/sys/kernel/core_pattern)" = core ]; then
	fw=$TMP/fw_x86
	gcc -std=gnu11 -O1 -g -fno-optimize-sibling-calls -static -o "$fw" tests/prog/hunt7_fw.c \
		$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static) >"$TMP/cc.log" 2>&1
	check_eq "fw: hunt7_fw links with the static kit" 0 $?
	mkdir -p "$TMP/kx"
	(cd "$TMP/kx" && ulimit -c unlimited && exec "$fw" >"$TMP/fw.out" 2>/dev/null)
	set -- $(head -n 1 "$TMP/fw.out")   # ram LO HI pool ADDR
	lo=$2 hi=$3
	gdb -batch -nx -q -iex 'set auto-load off' "$fw" "$TMP"/kx/core* -ex "dump binary memory $TMP/fw.bin $lo $hi" >/dev/null 2>&1
	check_eq "fw: gdb dumped $lo..$hi" $((hi - lo)) "$(stat -c %s "$TMP/fw.bin" 2>/dev/null)"
	set -- $(gap "$fw" $lo $hi .bss)
	check "fw: .bss has an address no symbol covers ($1: $2+$3, $2 of $4 bytes, $5)" test -n "$1"
	g=$1 gsym=$2 goff=$3 gsize=$4
	# a symbol of size 0 or untyped (a label) has no end to be past
	if [ "$5" = label ]; then
		gwant="$gsym\+$goff in \.bss \(no symbol covers it\)"
	else
		gwant="$gsym\+$goff in \.bss, past the end of that variable of $gsize bytes \(no symbol covers it\)"
	fi
	"$B/mprof-core" --addr "$g" --raw "$TMP/fw.bin" --elf "$fw" --base "$lo" >"$TMP/g.txt" 2>&1
	check_eq "fw raw: --addr $g: exit 0" 0 $?
	check_grep "fw raw: --addr $g: $gsym+$goff in .bss, past its end" \
		"^address $g: $gwant in fw_x86\+$g\$" "$TMP/g.txt"
	# after a label (size 0 or NOTYPE: __dso_handle, data_start) in .data
	set -- $(gap "$fw" $lo $hi .data label)
	if [ -n "$1" ]; then
		"$B/mprof-core" --addr "$1" --raw "$TMP/fw.bin" --elf "$fw" --base "$lo" >"$TMP/l.txt" 2>&1
		check_grep "fw raw: --addr $1: after the label $2 ($4 bytes): '$2+$3 in .data (no symbol covers it)'" \
			"^address $1: $2\+$3 in \.data \(no symbol covers it\) in fw_x86\+$1\$" "$TMP/l.txt"
	else
		echo "# .data has no address after a label that no symbol covers: not checked"
	fi
	"$B/mprof-core" --format json --addr "$g" --raw "$TMP/fw.bin" --elf "$fw" --base "$lo" >"$TMP/g.json" 2>/dev/null
	check_eq "fw raw: JSON: module, .bss, the symbol before it and its offsets (numbers, as symbol_offset)" \
		"module .bss $(printf 0x%x $((g - $(readelf -SW "$fw" | awk '$2 == ".bss" { print "0x" $4 }')))) $gsym $goff $gsize" \
		"$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["addresses"][0]; n = lambda k: hex(a[k]) if type(a[k]) is int else "not-a-number:" + repr(a[k]); print(a["what"], a["section"], n("section_offset"), a["symbol_before"], n("symbol_before_offset"), a["symbol_before_size"])' "$TMP/g.json")"
	# stripped: no symbol at all; .data's first words are named by the section,
	# while .bss, which holds the pool's blocks, is heap as before
	strip -o "$TMP/fw_strip" "$fw"
	d=$(printf 0x%x $(($(readelf -SW "$fw" | awk '$2 == ".data" { print "0x" $4 }') + 8)))
	"$B/mprof-core" --addr "$d" --addr "$g" --raw "$TMP/fw.bin" --elf "$TMP/fw_strip" --base "$lo" >"$TMP/s.txt" 2>&1
	check_grep "fw raw, stripped ELF: --addr $d: .data+0x8" \
		"^address $d: \.data\+0x8 \(no symbol before it in the section\) in fw_strip\+$d\$" "$TMP/s.txt"
	check_grep "fw raw, stripped ELF: --addr $g: heap, the pool's blocks lie in .bss" \
		"^address $g: memory in no annotated block \(heap, or a stack: a raw dump holds no stack pointer\)\$" "$TMP/s.txt"
	# the kernel core of the same run says the same
	"$B/mprof-core" --addr "$g" "$fw" "$TMP"/kx/core* >"$TMP/gc.txt" 2>&1
	check_grep "fw core: --addr $g: $gsym+$goff in .bss, past its end" \
		"^address $g: $gwant" "$TMP/gc.txt"
else
	echo "# no gdb, static kit or kernel cores: item 4 not checked"
fi

# ---- 5. --addr of thread-local storage ----
# commas N: N as mprof-core prints counts (1,234)
commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
# tls_case NAME CORE OUT: every thread's k8_tls+100, k8_tls_small, errno, a local
# of its outermost function and k8_tls_al (64-byte aligned) as the program
# printed them (OUT: "tls N LWP K8_TLS SMALL ERRNO TP LOCAL ALIGNED" lines); the
# program dlopen'd a library with 1 MiB of dynamic TLS, which must not widen
# the span read as TLS
tls_case() {
	tn=$1 tcore=$2 tout=$3
	check_eq "$tn: the program printed its 3 threads" 3 "$(grep -c '^tls ' "$tout")"
	grep '^tls ' "$tout" | while read -r _ n lwp big small err tp loc al; do
		a=$(printf 0x%x $((big + 100)))
		"$B/mprof-core" --addr "$a" --addr "$small" --addr "$err" --addr "$loc" --addr "$al" \
			"$TMP/tls" "$tcore" >"$TMP/$tn.$n.txt" 2>&1
		echo "$n $lwp $a $small $err $?"
		echo "$tp $loc $al" >"$TMP/$tn.$n.more"
	done >"$TMP/$tn.list"
	while read -r n lwp a small err rc; do
		read -r tp loc al <"$TMP/$tn.$n.more"
		check_eq "$tn thread $n: exit 0" 0 "$rc"
		check_grep "$tn thread $n: k8_tls+100 is thread-local storage of tid $lwp, the variable at offset 0x64" \
			"^address $a: thread-local storage of thread [0-9]+ \(tid $lwp\): k8_tls\+0x64 \(variable of 3000 bytes\) in tls\$" "$TMP/$tn.$n.txt"
		check_grep "$tn thread $n: k8_tls_small is its too" \
			"^address $small: thread-local storage of thread [0-9]+ \(tid $lwp\): k8_tls_small\+0x0 \(variable of 8 bytes\) in tls\$" "$TMP/$tn.$n.txt"
		check_grep "$tn thread $n: k8_tls_al (aligned(64)) is its too" \
			"^address $al: thread-local storage of thread [0-9]+ \(tid $lwp\): k8_tls_al\+0x0 \(variable of 48 bytes\) in tls\$" "$TMP/$tn.$n.txt"
		below=$(commas $((tp - err)))
		check_grep "$tn thread $n: errno (libc's) is thread-local storage of tid $lwp, $below bytes below $tp" \
			"^address $err: thread-local storage of thread [0-9]+ \(tid $lwp\), $below bytes below its thread pointer $tp\$" "$TMP/$tn.$n.txt"
		check_grep "$tn thread $n: a local of its outermost function is on its stack, not TLS" \
			"^address $loc: on the stack of thread [0-9]+ \(tid $lwp\), " "$TMP/$tn.$n.txt"
	done <"$TMP/$tn.list"
	set -- $(sed -n 2p "$TMP/$tn.list")
	"$B/mprof-core" --format json --addr "$3" "$TMP/tls" "$tcore" >"$TMP/$tn.json" 2>/dev/null
	check_eq "$tn: JSON of thread 1's k8_tls+100: tls, its LWP, k8_tls, offset 100, 3000 bytes" \
		"tls $2 k8_tls 100 3000" \
		"$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["addresses"][0]; print(a["what"], a["thread"], a["symbol"], a["symbol_offset"], a["symbol_size"])' "$TMP/$tn.json")"
}
export K8_TLSLIB=$TMP/libk8tls.so
start_waiting "$TMP/tls"
make_gcore $pid "$TMP/tls.core"
check "tls: gcore written" test -s "$TMP/tls.core"
cp "$TMP/out" "$TMP/tls.out"
finish_waiting
tls_case gcore "$TMP/tls.core" "$TMP/tls.out"
# a crafted PT_TLS alignment (2^40, 2^63, p_vaddr 0) must not stretch a thread's
# TLS over its stack: the executable's block is left unnamed, the DTV still
# places the static TLS
for al in 40 63; do
	python3 - "$TMP/tls" "$TMP/tls.al$al" $al <<'PYEOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", b, 32)
phentsize, phnum = struct.unpack_from("<HH", b, 54)
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from("<I", b, o)[0] == 7:   # PT_TLS
        struct.pack_into("<Q", b, o + 16, 0)      # p_vaddr
        struct.pack_into("<Q", b, o + 48, 1 << int(sys.argv[3]))   # p_align
open(sys.argv[2], "wb").write(b)
PYEOF
	set -- $(grep '^tls 2 ' "$TMP/tls.out")
	"$B/mprof-core" --addr "$8" --addr "$(printf 0x%x $(($4 + 100)))" "$TMP/tls.al$al" "$TMP/tls.core" >"$TMP/al$al.txt" 2>&1
	check_grep "p_align 2^$al: thread 2's outermost local is still on its stack" \
		"^address $8: on the stack of thread [0-9]+ \(tid $3\), " "$TMP/al$al.txt"
	check_grep "p_align 2^$al: its k8_tls+100 is still its TLS (by the DTV), unnamed" \
		"^address $(printf 0x%x $(($4 + 100))): thread-local storage of thread [0-9]+ \(tid $3\), [0-9,]+ bytes below its thread pointer $7\$" "$TMP/al$al.txt"
done
# a DTV (crafted in the core) that lists a block below thread 2's stack pointer:
# the stack above it is still stack, not TLS
set -- $(grep '^tls 2 ' "$TMP/tls.out")
"$B/mprof-core" --addr "$8" "$TMP/tls" "$TMP/tls.core" >"$TMP/sp.txt" 2>&1
sp=$(sed -n 's/^address .* bytes above its stack pointer \(0x[0-9a-f]*\)$/\1/p' "$TMP/sp.txt")
python3 - "$TMP/tls.core" "$TMP/tls.dtv.core" "$7" "$sp" <<'PYEOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
tp, sp = int(sys.argv[3], 16), int(sys.argv[4], 16)
phoff, = struct.unpack_from("<Q", b, 32)
phentsize, phnum = struct.unpack_from("<HH", b, 54)
loads = []
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from("<I", b, o)[0] == 1:
        off, va = struct.unpack_from("<QQ", b, o + 8)
        filesz, = struct.unpack_from("<Q", b, o + 32)
        loads.append((va, filesz, off))
def at(a):
    for va, n, off in loads:
        if va <= a < va + n:
            return off + a - va
    raise SystemExit("not dumped: %x" % a)
dtv, = struct.unpack_from("<Q", b, at(tp + 8))
n, = struct.unpack_from("<Q", b, at(dtv - 16))
struct.pack_into("<Q", b, at(dtv + 16 * n), sp - 4096)   # its last entry
open(sys.argv[2], "wb").write(b)
PYEOF
check "crafted DTV: the core was patched (sp $sp)" test -s "$TMP/tls.dtv.core"
"$B/mprof-core" --addr "$8" "$TMP/tls" "$TMP/tls.dtv.core" >"$TMP/dtv.txt" 2>&1
check_grep "crafted DTV: a block below sp does not make thread 2's outermost local TLS" \
	"^address $8: on the stack of thread [0-9]+ \(tid $3\), " "$TMP/dtv.txt"
# a PT_TLS whose p_vaddr is not aligned so that its first byte's offset exceeds
# p_memsz: glibc accepts it (modulo arithmetic) and places the block as for the
# original, at tp - round_up(memsz, align); so must --addr (it dropped it)
python3 - "$TMP/tls" "$TMP/tls.mis" <<'PYEOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", b, 32)
phentsize, phnum = struct.unpack_from("<HH", b, 54)
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from("<I", b, o)[0] != 7:   # PT_TLS
        continue
    vaddr, memsz, align = struct.unpack_from("<Q", b, o + 16)[0], struct.unpack_from("<Q", b, o + 40)[0], struct.unpack_from("<Q", b, o + 48)[0]
    M = (1 << 64) - 1
    first = -(vaddr & (align - 1)) & (align - 1)
    off = (((memsz - first + align - 1) & M) & ~(align - 1)) + first   # glibc's offset
    a = 1 << off.bit_length()                     # a larger alignment, with firstbyte = off
    assert off > memsz
    struct.pack_into("<Q", b, o + 16, (vaddr & ~(a - 1)) + a - off)
    struct.pack_into("<Q", b, o + 48, a)
open(sys.argv[2], "wb").write(b)
PYEOF
set -- $(grep '^tls 2 ' "$TMP/tls.out")
"$B/mprof-core" --addr "$(printf 0x%x $(($4 + 100)))" "$TMP/tls.mis" "$TMP/tls.core" >"$TMP/mis.txt" 2>&1
check_grep "PT_TLS firstbyte past p_memsz: thread 2's k8_tls+100 is still named" \
	"^address $(printf 0x%x $(($4 + 100))): thread-local storage of thread [0-9]+ \(tid $3\): k8_tls\+0x64 \(variable of 3000 bytes\) in tls\.mis\$" "$TMP/mis.txt"
# with no thread pointer in the core (as on ARM or MIPS), a stack address is
# named without loading symbols: the symbol session (which opens the core a
# second time for libdwfl) is never opened
python3 - "$TMP/tls.core" "$TMP/tls.nofs.core" <<'PYEOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", b, 32)
phentsize, phnum = struct.unpack_from("<HH", b, 54)
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from("<I", b, o)[0] != 4:   # PT_NOTE
        continue
    off, = struct.unpack_from("<Q", b, o + 8)
    end = off + struct.unpack_from("<Q", b, o + 32)[0]
    while off + 12 <= end:
        nsz, dsz, typ = struct.unpack_from("<III", b, off)
        desc = off + 12 + (nsz + 3) // 4 * 4
        if typ == 1:   # NT_PRSTATUS: pr_reg at 112, fs_base its word 21
            struct.pack_into("<Q", b, desc + 112 + 21 * 8, 0)
        off = desc + (dsz + 3) // 4 * 4
open(sys.argv[2], "wb").write(b)
PYEOF
set -- $(grep '^tls 1 ' "$TMP/tls.out")
if command -v strace >/dev/null; then
	strace -f -e trace=openat -o "$TMP/nofs.strace" "$B/mprof-core" --addr "$8" "$TMP/tls" "$TMP/tls.nofs.core" >"$TMP/nofs.txt" 2>&1
	check_grep "no thread pointer: thread 1's local is on its stack" "^address $8: on the stack of thread [0-9]+ \(tid $3\), " "$TMP/nofs.txt"
	check_eq "no thread pointer: the core is opened by the reader and the frame symbolizer, not by --addr's symbol session" 2 \
		"$(grep -c 'tls\.nofs\.core", O_RDONLY' "$TMP/nofs.strace")"
else
	echo "# strace not installed: a stack address without symbols is not checked"
fi
if [ "$(cat /proc/sys/kernel/core_pattern)" = core ]; then
	mkdir -p "$TMP/kt"
	(cd "$TMP/kt" && ulimit -c unlimited && LD_PRELOAD=$LIB exec "$TMP/tls" abort >"$TMP/kt.out" 2>/dev/null)
	check "tls: kernel core written" test -s "$TMP/kt/core"
	tls_case kernel "$TMP/kt/core" "$TMP/kt.out"
fi

done_testing
