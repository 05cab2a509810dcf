#!/bin/sh
# run-symcache-evict.sh - the symbol index cache directory stays under its size
# limit ($MPROF_CACHE_MAX, sym/dw_evict.c): a write that would take the
# directory over it removes the least recently used files (mtime; a warm run
# marks its file used), never the file just written; a file larger than the
# limit is not written (one note); a bad MPROF_CACHE_MAX is one note and the
# default; four writers at once leave the directory within the limit. Exact file
# counts and names: four generated programs of the same size (tests/prog/symgen.py).
. tests/lib.sh
SYMDW=$B/tests/tools/symdw
case $SYMDW in /*) ;; *) SYMDW=$TOP/$SYMDW ;; esac
[ -x "$SYMDW" ] || skip "no $SYMDW (make $SYMDW)"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
command -v objdump >/dev/null 2>&1 || skip "objdump not installed"
P=$TOP/tests/prog

rets() {
	objdump -d --no-show-raw-insn "$1" | awk '
		/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); if (want) { print "0x" a; want = 0 }
			if ($2 ~ /^call/) want = 1 }'
}
buildid() { readelf -n "$1" | awk '/Build ID:/ { print $3; exit }'; }
size() { wc -c <"$1" | tr -d ' '; }

# four programs alike but for their directory's name (so their build-ids differ)
for k in 1 2 3 4; do
	mkdir -p "$TMP/p$k"
	python3 "$P/symgen.py" 60 2 "$TMP/p$k" >/dev/null || skip "symgen.py failed"
	(cd "$TMP/p$k" && gcc -g -O2 -o prog gen0.c gen1.c main.c) || skip "cannot build the generated program"
	rets "$TMP/p$k/prog" >"$TMP/p$k/addrs"
	eval "id$k=$(buildid "$TMP/p$k/prog")"
	"$SYMDW" --reference --addr-file "$TMP/p$k/addrs" --raw-elf "$TMP/p$k/prog" >"$TMP/p$k/ref" 2>/dev/null
done
C=$TMP/cache
# run K [ENV...]: symbolize program K with the cache; output in $TMP/out
run() {
	k=$1; shift
	env "$@" "$SYMDW" --cache-dir "$C" --addr-file "$TMP/p$k/addrs" --raw-elf "$TMP/p$k/prog" >"$TMP/out" 2>/dev/null
}
# files: the cache files present, as program numbers in order ("1 3 4")
files() {
	for k in 1 2 3 4; do eval "[ -f \"\$C/\$id$k.symidx\" ] && printf '%s ' $k"; done | sed 's/ $//'
}
# age K STAMP: set program K's cache file's mtime
age() { eval "touch -d '$2' \"\$C/\$id$1.symidx\""; }

# the default limit (1 GiB) keeps all three
run 1; run 2; run 3
check_eq "default limit: three programs, three files" "1 2 3" "$(files)"
s1=$(eval size "\$C/\$id1.symidx")
s2=$(eval size "\$C/\$id2.symidx")
s3=$(eval size "\$C/\$id3.symidx")
check "the files are alike in size ($s1 $s2 $s3 bytes)" test "$s1" -gt 1000 -a "$s2" -gt 1000 -a "$s3" -gt 1000
age 1 '2001-01-01'; age 2 '2002-01-01'; age 3 '2003-01-01'
# room for three files and a half: the fourth write removes the oldest (1)
max=$((s1 * 7 / 2))
run 4 MPROF_CACHE_MAX=$max
check_eq "limit $max bytes, a fourth program: the least recently used file (1) removed" "2 3 4" "$(files)"
check_eq "...the run's answers are the reference's, no note" "0 0" \
	"$(diff "$TMP/out" "$TMP/p4/ref" | grep -c '^<') $(grep -c 'symbol cache' "$TMP/out")"
# a warm run marks its file used: 2 is now the newest, so 3 goes next
run 2 MPROF_CACHE_MAX=$max
check_eq "a warm run of program 2 removes nothing" "2 3 4" "$(files)"
age 4 '2004-01-01'
run 1 MPROF_CACHE_MAX=$max
check_eq "program 1 again: 3 (oldest now, 2 was just used) removed" "1 2 4" "$(files)"
check_eq "...answers = reference" 0 "$(diff "$TMP/out" "$TMP/p1/ref" | grep -c '^<')"
# a limit of K suffixes
run 3 MPROF_CACHE_MAX=$(( (s1 * 5 / 2 + 1023) / 1024 ))K
check_eq "MPROF_CACHE_MAX in K, room for two and a half: two files left, 3 (just written) among them" 2 \
	"$(files | wc -w)"
check "...the file just written is kept" eval "[ -f \"\$C/\$id3.symidx\" ]"
# a file over the limit alone is not written; nothing else is removed for it
rm -f "$C"/*.symidx
run 1
run 2 MPROF_CACHE_MAX=1000
check_eq "a limit smaller than the file: not written, the other file kept" "1" "$(files)"
check_eq "...one note saying why, answers = reference" "1 0" \
	"$(grep -c "^note: symbol cache not written ($s2 bytes, over the cache's limit of 1000 (MPROF_CACHE_MAX))" "$TMP/out") $(grep -v '^note: symbol cache' "$TMP/out" | diff - "$TMP/p2/ref" | grep -c '^<')"
run 2 MPROF_CACHE_MAX=lots
check_eq "MPROF_CACHE_MAX=lots: one note, the default limit (file written)" "1 1 2" \
	"$(grep -c '^note: MPROF_CACHE_MAX=lots is not a size' "$TMP/out") $(files)"
# a writer's temporary file left by a crash goes when over an hour old
: >"$C/.x.symidx.AbC123"; touch -d '2001-01-01' "$C/.x.symidx.AbC123"
: >"$C/.y.symidx.AbC123"
run 3
check_eq "a stale temporary file (a dead writer's) removed, a fresh one kept" "no yes" \
	"$([ -e "$C/.x.symidx.AbC123" ] && echo yes || echo no) $([ -e "$C/.y.symidx.AbC123" ] && echo yes || echo no)"
rm -f "$C/.y.symidx.AbC123"
# four writers at once with room for two and a half files: two left, no
# temporary file, and both good (a warm run of each has no note)
rm -f "$C"/*.symidx
max=$((s1 * 5 / 2))
for k in 1 2 3 4; do
	MPROF_CACHE_MAX=$max "$SYMDW" --cache-dir "$C" --addr-file "$TMP/p$k/addrs" --raw-elf "$TMP/p$k/prog" \
		>"$TMP/par$k" 2>/dev/null &
done
wait
same=0
for k in 1 2 3 4; do [ "$(diff "$TMP/par$k" "$TMP/p$k/ref" | grep -c '^<')" = 0 ] && same=$((same + 1)); done
check_eq "four writers at once: all four answers = reference" 4 "$same"
check_eq "...two files left, nothing else but the lock" "2 .lock" \
	"$(files | wc -w) $(ls -A "$C" | grep -v '\.symidx$' | tr '\n' ' ' | sed 's/ $//')"
good=0
for k in $(files); do
	run "$k" MPROF_CACHE_MAX=$max
	[ "$(diff "$TMP/out" "$TMP/p$k/ref" | grep -c '^<')" = 0 ] && good=$((good + 1))
done
check_eq "...both left are good (warm = reference, no note)" 2 "$good"
done_testing
