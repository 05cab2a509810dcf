#!/bin/sh
# run-known11.sh - defects an earlier session noticed and left:
#  3. a core without NT_FILE gets the read-only skip of an ET_EXEC's sections
#     only when the core's AT_ENTRY is the program's e_entry (an ET_EXEC has
#     no load bias), and then only for the sections whose dumped bytes equal
#     the file's. A gcore of a non-PIE tests/prog/freed_large.c, its NT_FILE
#     note's type written over and a would-be header (zeros, then a live END
#     of depth 0) planted in .dynstr: with a copy of the program holding the
#     same bytes at the same place (its literal), 13 blocks and no damage;
#     with the program as built (.dynstr differs), and with another build of
#     freed_large.c (two sizes changed: the same entry point, another
#     build-id) the differing sections are scanned and said so: the planted
#     header reads as damage (before: skipped silently, no damage, no line);
#     with another program of the same name (hunt_allocs.c, another entry
#     point, sections over the same page), the skip is not taken and said so.
#  4. libheapann.so's constructors run in the order of their priorities
#     (HA_CONSTRUCTOR, annotate/internal.h): ck_init, ha_init, snap_init, each
#     an entry of .init_array of its own (R_X86_64_RELATIVE relocations read
#     with readelf, named with nm). Without the priorities the -flto build
#     merges them into one function that runs them in the reverse order
#     (capture7fix). No behaviour tells the orders apart today: the unwinder's
#     allocations in ha_init are the real allocator's (unannotated, ha_busy),
#     so there is no block for ck_init's table to miss, and snap_init
#     allocates nothing; the order is the one the code documents.
#  5. the exit snapshot lists every thread blocked on a condition variable:
#     tests/prog/snap_condwait.c's four waiters, woken by each other's
#     broadcasts, read "running" for a moment: 20 to 80 of 100 snapshots left
#     one or more out when /proc was read once. Each of KNOWN11_RUNS (100)
#     snapshots must have 5 NT_PRSTATUS notes; with a fifth thread spinning for
#     good, 5 (the spinner left out, after snap_others' 50 ms) and the
#     snapshot written.
#  6. ...and records each thread as the last of those rounds found it:
#     tests/prog/snap_stale.c's napper, shallow in the first rounds (a spinner
#     keeps them going 50 ms) and deep from 25 ms before the last, had its deep
#     frames cut off when its first record was kept (the first version of 5),
#     and the 100-byte block they hold read "definitely lost". None of
#     KNOWN11_RUNS/5 (20) snapshots may call it lost; at least half must hold
#     it (the rest were taken before the napper went deep: timing).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (a non-PIE's link addresses)"
command -v python3 >/dev/null || skip "python3 not installed"
command -v gdb >/dev/null || skip "gdb not installed"
M="$B/mprof-core"

# ---- 3. the read-only skip of a core without NT_FILE: AT_ENTRY must agree ----
mkdir -p "$TMP/right" "$TMP/wrong" "$TMP/lit" "$TMP/build2"
exe=$TMP/right/known11_prog
sed 's/2049, 1024, 1200/2050, 1024, 1300/' tests/prog/freed_large.c >"$TMP/freed_large2.c"
cc -g -O0 -no-pie -o "$exe" tests/prog/freed_large.c &&
	cc -g -O0 -no-pie -o "$TMP/wrong/known11_prog" tests/prog/hunt_allocs.c &&
	cc -g -O0 -no-pie -o "$TMP/build2/known11_prog" "$TMP/freed_large2.c" ||
	skip "cannot link non-PIE programs"
gcore_waiting "$TMP/np.core" "$exe"
check "no NT_FILE: gcore written" test -s "$TMP/np.core"
e_right=$(readelf -hW "$exe" | sed -n 's/^ *Entry point address: *//p')
e_wrong=$(readelf -hW "$TMP/wrong/known11_prog" | sed -n 's/^ *Entry point address: *//p')
check "no NT_FILE: the two programs' entry points differ ($e_right, $e_wrong)" \
	test -n "$e_right" -a -n "$e_wrong" -a "$e_right" != "$e_wrong"
# the planted header lies in .dynstr, in the first page the kernel and gdb dump
dynstr=$(readelf -SW "$exe" | sed 's/\[ /[/' | awk '$2 == ".dynstr" { print "0x" $4 }')
python3 - "$TMP/np.core" "$TMP/nf.core" "$dynstr" >"$TMP/patch.out" <<'PY'
import struct, sys
core, out, at = sys.argv[1], sys.argv[2], (int(sys.argv[3], 16) + 0x40) & ~7
d = bytearray(open(core, "rb").read())
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
dropped = planted = 0
for i in range(phnum):
    typ, _fl, off, va, _pa, fsz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
    if typ == 4:                                   # PT_NOTE: NT_FILE's type written over
        o = off
        while o + 12 <= off + fsz:
            nsz, dsz, nt = struct.unpack_from("<III", d, o)
            if nt == 0x46494c45:
                struct.pack_into("<I", d, o + 8, 0x4b4e3131)
                dropped += 1
            o += 12 + ((nsz + 3) & ~3) + ((dsz + 3) & ~3)
    elif typ == 1 and va <= at - 48 and at + 8 <= va + fsz:
        o = off + at - va
        d[o - 48:o] = bytes(48)
        struct.pack_into("<Q", d, o, 0xE4DB10C7A11E0000)
        planted += 1
open(out, "wb").write(d)
print("dropped %d planted %d" % (dropped, planted))
PY
check_eq "no NT_FILE: the note dropped, the header planted" "dropped 1 planted 1" "$(cat "$TMP/patch.out")"
check_eq "no NT_FILE: readelf sees NT_AUXV and no NT_FILE" "auxv 1 file 0" \
	"auxv $(readelf -n "$TMP/nf.core" | grep -c NT_AUXV) file $(readelf -n "$TMP/nf.core" | grep -c NT_FILE)"
npjson() {   # PROG: "BLOCKS DAMAGED" of the patched core read with PROG, its stderr in $TMP/np.err
	"$M" --format json "$1" "$TMP/nf.core" 2>"$TMP/np.err" |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["blocks"], d["damaged_headers"])'
}
# the copy holding the planted bytes: .dynstr's offset in the file for its address
dynoff=$(readelf -SW "$exe" | sed 's/\[ /[/' | awk '$2 == ".dynstr" { print "0x" $5 }')
python3 - "$exe" "$TMP/lit/known11_prog" "$dynstr" "$dynoff" <<'PY'
import struct, sys
src, out, addr, off = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4], 16)
at = (addr + 0x40) & ~7
o = off + at - addr
d = bytearray(open(src, "rb").read())
d[o - 48:o] = bytes(48)
struct.pack_into("<Q", d, o, 0xE4DB10C7A11E0000)
open(out, "wb").write(d)
PY
check_eq "no NT_FILE, the program holding the planted bytes: 13 blocks, its literal skipped" "13 0" \
	"$(npjson "$TMP/lit/known11_prog")"
check_eq "no NT_FILE, the program holding the planted bytes: no line" 0 "$(grep -c 'mprof-core' "$TMP/np.err")"
check_eq "no NT_FILE, the program as built: .dynstr differs, the planted header is damage" "13 1" "$(npjson "$exe")"
check_grep "no NT_FILE, the program as built: said so, .dynstr named" \
	"^mprof-core: $exe: 1 of its read-only sections \\(the first: \\.dynstr at $(printf '0x%x' "$dynstr")\\) differ from the core's bytes: another build\\? They are scanned\$" \
	"$TMP/np.err"
check_eq "no NT_FILE, the program as built: no line about the entry point" 0 "$(grep -c 'entry point' "$TMP/np.err")"
e_b2=$(readelf -hW "$TMP/build2/known11_prog" | sed -n 's/^ *Entry point address: *//p')
check_eq "no NT_FILE, another build of freed_large.c: the same entry point" "$e_right" "$e_b2"
check_eq "no NT_FILE, another build, the same entry: its differing sections scanned, the planted header is damage" \
	"13 1" "$(npjson "$TMP/build2/known11_prog")"
check_grep "no NT_FILE, another build: said so, the build-id note first" \
	"^mprof-core: $TMP/build2/known11_prog: 2 of its read-only sections \\(the first: \\.note\\.gnu\\.build-id at 0x[0-9a-f]+\\) differ from the core's bytes: another build\\? They are scanned\$" \
	"$TMP/np.err"
"$M" -q --format json "$TMP/build2/known11_prog" "$TMP/nf.core" >/dev/null 2>"$TMP/q.err"
check_eq "no NT_FILE, another build, -q: no line" 0 "$(grep -c 'differ' "$TMP/q.err")"
check_eq "no NT_FILE, another program: not skipped, the planted header is damage" "13 1" \
	"$(npjson "$TMP/wrong/known11_prog")"
check_grep "no NT_FILE, another program: said so" \
	"^mprof-core: $TMP/wrong/known11_prog: its entry point $e_wrong is not the core's \\(AT_ENTRY $e_right\\): another program\\? Its read-only sections are scanned\$" \
	"$TMP/np.err"
"$M" -q --format json "$TMP/wrong/known11_prog" "$TMP/nf.core" >/dev/null 2>"$TMP/q.err"
check_eq "no NT_FILE, another program, -q: no line" 0 "$(grep -c 'entry point' "$TMP/q.err")"
# the program with a damaged section-header string index (e_shstrndx SHN_XINDEX,
# no section headers): read as before, nothing to skip (the comparison took it
# for "not an ELF file" and stopped, the roskip review)
mkdir -p "$TMP/xidx"
python3 - "$exe" "$TMP/xidx/known11_prog" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<Q", d, 0x28, 0)          # e_shoff
struct.pack_into("<HH", d, 0x3c, 0, 0xffff)  # e_shnum, e_shstrndx
open(sys.argv[2], "wb").write(d)
PY
check_eq "no NT_FILE, the program with e_shstrndx SHN_XINDEX: read, nothing skipped" "13 1" \
	"$(npjson "$TMP/xidx/known11_prog")"

# ---- 4. the constructors' order in .init_array ----
lib=$B/libheapann.so
readelf -SW "$lib" >"$TMP/sec" && readelf -rW "$lib" >"$TMP/rel" && nm "$lib" >"$TMP/nm" ||
	skip "readelf or nm failed on $lib"
python3 - "$TMP/sec" "$TMP/rel" "$TMP/nm" >"$TMP/init" <<'PY'
import sys
sec, rel, nm = (open(f).read().splitlines() for f in sys.argv[1:4])
lo = hi = None
for l in sec:
    f = l.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".init_array":
        lo = int(f[3], 16)
        hi = lo + int(f[5], 16)
names = {}
for l in nm:
    f = l.split()
    if len(f) == 3 and f[1] in "tT":
        names.setdefault(int(f[0], 16), f[2].split(".")[0])   # ck_init.lto_priv.0 too
ents = []
for l in rel:
    f = l.split()
    if lo is not None and len(f) >= 4 and f[2] == "R_X86_64_RELATIVE" and lo <= int(f[0], 16) < hi:
        ents.append((int(f[0], 16), names.get(int(f[-1], 16), "?%s" % f[-1])))
print(" ".join(n for _, n in sorted(ents)))
PY
echo "# .init_array of $lib: $(cat "$TMP/init")"
check_eq "constructors: ck_init, ha_init, snap_init, in that order, one entry each" \
	"ck_init ha_init snap_init" \
	"$(tr ' ' '\n' <"$TMP/init" | grep -Ex 'ck_init|ha_init|snap_init' | tr '\n' ' ' | sed 's/ $//')"
check_eq "constructors: the three first in .init_array" "ck_init ha_init snap_init" \
	"$(cut -d' ' -f1-3 "$TMP/init")"

# ---- 5. the exit snapshot and threads waiting on a condition variable ----
cc -O1 -g -pthread -o "$TMP/condwait" tests/prog/snap_condwait.c ||
	skip "cannot compile tests/prog/snap_condwait.c"
mkdir -p "$TMP/snaps"
runs=${KNOWN11_RUNS:-100}
i=0
while [ $i -lt "$runs" ]; do
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/snaps" LD_PRELOAD="$TOP/$B/libheapann.so" \
		"$TMP/condwait" 2>/dev/null
	i=$((i + 1))
done
for c in "$TMP"/snaps/condwait.*.core; do
	[ -f "$c" ] && readelf -n "$c" | grep -c NT_PRSTATUS
done | sort -n | uniq -c | sed 's/^ *//' >"$TMP/nthreads"
check_eq "condition variable: all $runs snapshots list the 5 threads" "$runs 5" "$(cat "$TMP/nthreads")"
rm -f "$TMP"/snaps/*
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/snaps" LD_PRELOAD="$TOP/$B/libheapann.so" \
	"$TMP/condwait" spin 2>/dev/null
check_eq "a thread spinning for good: exit 0" 0 $?
c=$(ls "$TMP"/snaps/condwait.*.core 2>/dev/null | head -n 1)
check_eq "a thread spinning for good: the snapshot lists the other 5" 5 \
	"$([ -n "$c" ] && readelf -n "$c" | grep -c NT_PRSTATUS)"

# ---- 6. a thread recorded where it was at the last round ----
cc -O1 -g -pthread -o "$TMP/snap_stale" tests/prog/snap_stale.c ||
	skip "cannot compile tests/prog/snap_stale.c"
rm -f "$TMP"/snaps/*
i=0 held=0 lost=0 n6=$((runs / 5))
while [ $i -lt $n6 ]; do
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/snaps" LD_PRELOAD="$TOP/$B/libheapann.so" \
		"$TMP/snap_stale" spin 2>/dev/null
	c=$(ls "$TMP"/snaps/snap_stale.*.core 2>/dev/null | head -n 1)
	if [ -n "$c" ]; then
		"$M" --report=lost "$TMP/snap_stale" "$c" >"$TMP/stale.out" 2>&1
		grep -q '^ *deeper (snap_stale.c:' "$TMP/stale.out" && held=$((held + 1))
		grep -A1 'definitely lost' "$TMP/stale.out" | grep -q 'deeper (snap_stale.c:' && lost=$((lost + 1))
		rm -f "$c"
	fi
	i=$((i + 1))
done
check_eq "a thread deep at the clone: the block its deep frame holds lost in none of $n6 snapshots" 0 "$lost"
# a snapshot taken before the napper woke and went deep (on a loaded machine
# it may not run within the 50 ms) has no such block at all: not a failure,
# but at least half of them must have it, or this case tested nothing (CI
# once had 19 of 20)
check "...and held in at least half of them ($held of $n6)" test $((2 * held)) -ge "$n6"

done_testing
