#!/bin/sh
# run-fuzz-regress.sh - the inputs that fuzzing found (issue 14) stay fixed: every
# file of tests/fuzz/regress/ through mprof-core --report=lost (exit status, a line
# of its output, under a second, no sanitizer report: see regress/EXPECT) and
# through fzrun, the fuzz targets' own calls; with clang installed, through the
# libFuzzer build too (clang's UBSan finds what gcc's does not). Then a real core
# of tests/prog/lost_prog.c whose last writable PT_LOAD claims 16 EiB and 128 TiB
# (tests/fuzz/mk_memsz_core.py): the same leak summary as the intact core, a note,
# under a second.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -x "$B/tests/tools/fzrun" ] || skip "build first (make check builds the tools)"
command -v python3 >/dev/null || skip "python3 not installed"
R=tests/fuzz/regress
SAN_RE='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:'

ms_now() { date +%s%N | cut -c1-13; }

# the firmware ELF of the raw seeds
gzip -dc fixtures/fw/arm.elf.gz >"$TMP/arm.elf"
# input NAME: the input's bytes in $TMP/input (inputs above 64 KiB are kept xz'd)
input() {
	case $1 in
	*.xz) xz -dc "$R/$1" >"$TMP/input" ;;
	*) cp "$R/$1" "$TMP/input" ;;
	esac
}
# prog_for CORE: a program named as the core's main module (or its pr_fname): the
# seeds' program is not on this machine, and with no build-id in the trimmed core
# only the name can be compared (so /bin/true under that name passes the check)
prog_for() {
	"$B/tests/tools/cpdump" -q "$1" >"$TMP/facts" 2>/dev/null
	pn=$(sed -n 's|^main .*/||p' "$TMP/facts")
	[ -n "$pn" ] || pn=$(sed -n 's/^prpsinfo fname=\([^ ]*\) args=.*/\1/p' "$TMP/facts")
	[ -n "$pn" ] || pn=seedprog
	mkdir -p "$TMP/prog"
	cp /bin/true "$TMP/prog/$pn"
	echo "$TMP/prog/$pn"
}

grep -v '^#' "$R/EXPECT" | while read -r name status re; do
	[ -n "$name" ] && printf '%s\t%s\t%s\n' "$name" "$status" "$re"
done >"$TMP/expect"
check_eq "every regression input has an expectation" \
	"$(ls "$R" | grep -v '^EXPECT$' | sort)" "$(cut -f1 "$TMP/expect" | sort)"

while IFS='	' read -r name status re; do
	input "$name"
	f=$TMP/input
	sel=$(od -An -tx1 -N1 "$f" | tr -d ' ')
	case $sel in
	?3)	tail -c +11 "$f" >"$TMP/in"
		base=$(od -An -tx8 -j2 -N8 "$f" | tr -d ' ')
		set -- --raw "$TMP/in" --elf "$TMP/arm.elf" --base "0x$base" ;;
	*)	tail -c +2 "$f" >"$TMP/in"
		set -- "$(prog_for "$TMP/in")" "$TMP/in" ;;
	esac
	t0=$(ms_now)
	"$B/mprof-core" --threads 2 --report=lost "$@" >"$TMP/out" 2>&1
	rc=$?
	t=$(( $(ms_now) - t0 ))
	check_eq "$name: mprof-core exits $status" "$status" "$rc"
	check "$name: mprof-core under a second (${t} ms)" test "$t" -lt 1000
	check_grep "$name: says /$re/" "$re" "$TMP/out"
	check "$name: mprof-core: no sanitizer report" sh -c "! grep -Eq '$SAN_RE' '$TMP/out'"
	t0=$(ms_now)
	"$B/tests/tools/fzrun" "$f" >"$TMP/fz" 2>&1
	rc=$?
	t=$(( $(ms_now) - t0 ))
	check "$name: fzrun exits 0, no sanitizer report" sh -c "[ $rc -eq 0 ] && ! grep -Eq '$SAN_RE' '$TMP/fz'"
	check "$name: fzrun under a second (${t} ms)" test "$t" -lt 1000
done <"$TMP/expect"

# The libFuzzer build (clang ASan+UBSan): every input once, -timeout=1.
if command -v clang-14 >/dev/null 2>&1; then
	if make -s B="$B" fuzz >"$TMP/fuzzbuild" 2>&1 && [ -x "$B/fuzz/fuzz_all" ]; then
		mkdir -p "$TMP/all"
		for name in $(cut -f1 "$TMP/expect"); do input "$name"; mv "$TMP/input" "$TMP/all/$name"; done
		"$B/fuzz/fuzz_all" -timeout=1 -rss_limit_mb=2048 "$TMP/all"/* >"$TMP/fa" 2>&1
		rc=$?
		check_eq "fuzz_all (clang ASan+UBSan): every regression input, exit 0" 0 "$rc"
		check_eq "fuzz_all: ran them all" "$(grep -c . "$TMP/expect")" "$(grep -c '^Executed ' "$TMP/fa")"
		[ $rc -eq 0 ] || grep -E "$SAN_RE|^SUMMARY" "$TMP/fa" | head -5
	else
		check "make fuzz builds fuzz_all" false
		tail -n 5 "$TMP/fuzzbuild"
	fi
else
	echo "# clang-14 not installed: the libFuzzer replay is left out (make fuzz installs it)"
fi

# fuzz_symdw's findings (tests/fuzz/regress-symdw): mutated program ELFs through
# fzrun --symdw, then through the libFuzzer build, whose leak check runs per input.
RS=tests/fuzz/regress-symdw
check_eq "every symdw regression input has an expectation" \
	"$(ls "$RS" | grep -v '^EXPECT$' | sort)" "$(grep -v '^#' "$RS/EXPECT" | cut -d' ' -f1 | sort)"
for name in $(grep -v '^#' "$RS/EXPECT" | cut -d' ' -f1); do
	t0=$(ms_now)
	"$B/tests/tools/fzrun" --symdw "$RS/$name" >"$TMP/fz" 2>&1
	rc=$?
	t=$(( $(ms_now) - t0 ))
	check "symdw $name: fzrun --symdw exits 0, no sanitizer report" sh -c "[ $rc -eq 0 ] && ! grep -Eq '$SAN_RE' '$TMP/fz'"
	check "symdw $name: fzrun --symdw under a second (${t} ms)" test "$t" -lt 1000
done
if [ -x "$B/fuzz/fuzz_symdw" ]; then
	"$B/fuzz/fuzz_symdw" -timeout=1 -rss_limit_mb=2048 -detect_leaks=1 $(grep -v '^#' "$RS/EXPECT" | cut -d' ' -f1 | sed "s|^|$RS/|") >"$TMP/fs" 2>&1
	rc=$?
	check_eq "fuzz_symdw (clang ASan+UBSan+LSan): every symdw regression input, exit 0" 0 "$rc"
	check_eq "fuzz_symdw: ran them all" "$(grep -vc '^#' "$RS/EXPECT")" "$(grep -c '^Executed ' "$TMP/fs")"
	[ $rc -eq 0 ] || grep -E "$SAN_RE|^SUMMARY|^    #" "$TMP/fs" | head -12
fi

# A real core with a huge p_memsz on its last writable PT_LOAD.
[ -f "$B/libheapann.so" ] || { done_testing; }
cc -g -O2 -pthread -o "$TMP/lost_prog" tests/prog/lost_prog.c || skip "cannot compile lost_prog.c"
LOST_ABORT=2 gcore_waiting "$TMP/core" "$TMP/lost_prog"
check "lost_prog: gcore written" test -s "$TMP/core"
"$B/mprof-core" --report=lost "$TMP/lost_prog" "$TMP/core" >"$TMP/intact" 2>&1
check_grep "intact core: definitely lost 55,264 bytes in 1,302 blocks" \
	'definitely lost: 55,264 bytes in 1,302 blocks' "$TMP/intact"
sed -n '/^LEAK SUMMARY/,$p' "$TMP/intact" >"$TMP/intact.sum"
for memsz in 0xffffffffffffffff 0x7fffffffffff; do
	python3 tests/fuzz/mk_memsz_core.py "$TMP/core" "$TMP/bad" $memsz
	t0=$(ms_now)
	"$B/mprof-core" --report=lost "$TMP/lost_prog" "$TMP/bad" >"$TMP/badout" 2>"$TMP/baderr"
	rc=$?
	t=$(( $(ms_now) - t0 ))
	check_eq "p_memsz $memsz: exit 0" 0 "$rc"
	check "p_memsz $memsz: under a second (${t} ms)" test "$t" -lt 1000
	check_grep "p_memsz $memsz: one line says the claim is not believed" \
		'^mprof-core: .*/bad: segment at 0x[0-9a-f]+ claims (16 EiB|128 TiB) \(p_memsz\), more than the address space holds' \
		"$TMP/baderr"
	sed -n '/^LEAK SUMMARY/,$p' "$TMP/badout" >"$TMP/bad.sum"
	check "p_memsz $memsz: the same leak summary as the intact core" cmp -s "$TMP/intact.sum" "$TMP/bad.sum"
	check "p_memsz $memsz: no sanitizer report" sh -c "! grep -Eq '$SAN_RE' '$TMP/baderr'"
done
done_testing
