#!/bin/sh
# run-rawdiff.sh - `mprof-core diff` of two raw dumps of one firmware
# (tests/prog/rawdiff_fw.c: the static kit over a pool in .bss, the statistics
# region in .bss through heapann_stats_buffer), its RAM dumped by gdb at two
# moments of one run as a probe would: every site's blocks and bytes in OLD and
# NEW and the allocations and frees in between, in JSON, text and folded form,
# with both spellings (--raw OLD NEW, --raw OLD --raw NEW). diff refused raw
# dumps before (exit 2). Then the usage errors, and a buffer too small for the
# region (64 KiB on x86-64, which needs 78 KiB): one line from the kit saying
# so (the region went to an mmap without a word, or nowhere, before).
. tests/lib.sh
M=$B/mprof-core
case $M in /*) ;; *) M=$TOP/$M ;; esac
[ -x "$M" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the kit built for this machine)"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
[ -f "$B/heapann-static.pc" ] || skip "the static kit is not built"
src=tests/prog/rawdiff_fw.c
mark() { grep -n "MARK:$1 " $src | cut -d: -f1; }
kit=$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static)

# build NAME CFLAGS...: the firmware; dump NAME: its RAM at both moments, and
# $lo, the base
build() {
	n=$1; shift
	# shellcheck disable=SC2086
	gcc -std=gnu11 -O1 -g -static -Itests/prog "$@" -o "$TMP/$n" $src $kit >"$TMP/$n.cc" 2>&1
}
dump() {
	gdb -batch -nx -q -iex 'set auto-load off' -ex 'break moment' -ex run \
		-ex "dump binary memory $TMP/$1.old ram_lo ram_hi" -ex 'print/x ram_lo' -ex continue \
		-ex "dump binary memory $TMP/$1.new ram_lo ram_hi" -ex continue "$TMP/$1" >"$TMP/$1.gdb" 2>"$TMP/$1.gdberr"
	lo=$(sed -n 's/^\$1 = //p' "$TMP/$1.gdb")
}

check "the firmware links with the kit" build fw
dump fw
check_eq "gdb dumped its RAM at both moments" "yes yes" \
	"$(test -s "$TMP/fw.old" && echo yes) $(test -s "$TMP/fw.new" && echo yes)"
check_eq "the kit said nothing (a 128 KiB buffer holds the region)" "" "$(grep heapann "$TMP/fw.gdberr")"

"$M" diff --format json --elf "$TMP/fw" --base "$lo" --raw "$TMP/fw.old" "$TMP/fw.new" >"$TMP/d.json" 2>"$TMP/d.err"
check_eq "diff --raw OLD NEW: exit 0" 0 $?
# per site: bytes old new, blocks old new, allocations and frees in between
rows() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
out = {}
for s in d["stacks"]:
    f = s["frames"]
    k = "%s:%s" % (f[0]["function"], f[0]["line"]) if f else "none"
    r = out.setdefault(k, [0] * 6)
    for i, x in enumerate(("bytes_old", "bytes_new", "blocks_old", "blocks_new", "allocs_between", "frees_between")):
        r[i] += s[x] or 0
print("; ".join("%s %s" % (k, " ".join(map(str, v))) for k, v in sorted(out.items()) if k != "none"))
print(d["between"], d["old"]["allocs"] is not None, d["new"]["frees"] - d["old"]["frees"])' "$1"
}
want="churn:$(mark churn) 0 0 0 0 10 10; grow_a:$(mark grow_a) 300 600 3 6 3 0; new_c:$(mark new_c) 0 1000 0 1 1 0; steady:$(mark steady) 400 400 2 2 0 0; temp:$(mark temp) 200 0 4 0 0 4
True True 14"
check_eq "JSON: each site's bytes and blocks in OLD and NEW, allocations and frees in between" \
	"$want" "$(rows "$TMP/d.json")"

"$M" diff --top 1 --elf "$TMP/fw" --base "$lo" --raw "$TMP/fw.old" --raw "$TMP/fw.new" >"$TMP/d.txt" 2>&1
check_eq "diff --raw OLD --raw NEW: exit 0" 0 $?
check_grep "text: the old dump's line" "^old $TMP/fw.old: [0-9,]+ blocks, [0-9,]+ bytes; [0-9,]+ allocations, [0-9,]+ frees so far$" "$TMP/d.txt"
check_grep "text: in between" "^in between: 14 allocations, 14 frees$" "$TMP/d.txt"
check_grep "text: new_c's 1,000 bytes grew most" "^#1: \+1,000 bytes, \+1 blocks: 0 -> 1,000 bytes, 0 -> 1 blocks; in between 1 allocations, 0 frees$" "$TMP/d.txt"
check_grep "text: ... at its line" "^    new_c \(rawdiff_fw.c:$(mark new_c)\) \[fw\]$" "$TMP/d.txt"
"$M" diff --format folded --elf "$TMP/fw" --base "$lo" --raw "$TMP/fw.old" "$TMP/fw.new" >"$TMP/d.folded" 2>/dev/null
check_grep "folded: grow_a 300 -> 600" ";main;grow_a 300 600$" "$TMP/d.folded"
check_grep "folded: temp 200 -> 0" ";main;temp 200 0$" "$TMP/d.folded"

# usage errors: one line, exit 2
E="--elf $TMP/fw --base $lo"
usage() {
	what=$1 pat=$2; shift 2
	"$M" "$@" >"$TMP/u.out" 2>"$TMP/u.err"
	check_eq "$what: exit 2, one line" "2 1" "$? $(wc -l <"$TMP/u.err")"
	check_grep "$what: says why" "$pat" "$TMP/u.err"
}
# shellcheck disable=SC2086
usage "diff with one dump" "diff of raw dumps needs two" diff $E --raw "$TMP/fw.old"
# shellcheck disable=SC2086
usage "diff with three dumps" "unexpected argument" diff $E --raw "$TMP/fw.old" "$TMP/fw.new" "$TMP/fw.new"
# shellcheck disable=SC2086
usage "--raw twice without diff" "--raw given twice" $E --raw "$TMP/fw.old" --raw "$TMP/fw.new"
# shellcheck disable=SC2086
usage "--raw three times" "--raw given three times" diff $E --raw "$TMP/fw.old" --raw "$TMP/fw.new" --raw "$TMP/fw.new"
usage "diff --raw without --base" "--raw needs --base" diff --elf "$TMP/fw" --raw "$TMP/fw.old" "$TMP/fw.new"

# a buffer too small for the region: the kit says so, and the dumps hold none
check "the firmware with a 64 KiB buffer links" build fw64 -DSTATS_KIB=64
dump fw64
check_grep "64 KiB buffer: the kit's one line" \
	"^heapann: heapann_stats_buffer\(\) gave 65536 bytes; the statistics region needs 79936 \(at HEAPANN_DEPTH=32\): the region is mmap'd instead, out of the RAM a dump of it holds$" \
	"$TMP/fw64.gdberr"
"$M" diff --elf "$TMP/fw64" --base "$lo" --raw "$TMP/fw64.old" "$TMP/fw64.new" >"$TMP/d64.txt" 2>&1
check_eq "64 KiB buffer: diff still compares the live blocks (exit 0)" 0 $?
check_grep "64 KiB buffer: new_c's 1,000 bytes, no in-between counts" \
	"^#1: \+1,000 bytes, \+1 blocks: 0 -> 1,000 bytes, 0 -> 1 blocks$" "$TMP/d64.txt"
done_testing
