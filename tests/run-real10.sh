#!/bin/sh
# run-real10.sh - real, unmodified programs under libheapann, their answers
# checked against independent truths (memcheck at exit, the program's own
# figures).
# 1. A library dlopen'ed after libheapann loaded libunwind (tests/prog/
#    real10_dl.c, zlib): ld.so's link_map for it is held by the l_next of
#    liblzma's map, which libheapann's own dlopen made inside malloc (no header,
#    heap memory, never a root): --report=lost called it "possibly lost" (through
#    _dl_find_object's table, aligned inside its block) where memcheck says
#    still reachable. Fixed by reading the public words of ld.so's link maps
#    lying in the heap outside blocks as roots (found through DT_DEBUG).
# 2. python3 (pymalloc, and PYTHONMALLOC=malloc) importing a C extension module, and sqlite3
#    at exit: the four categories are memcheck's to the byte.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the default unwinder loads libunwind)"
command -v python3 >/dev/null || skip "python3 not installed"
[ -f /usr/lib/x86_64-linux-gnu/libz.so.1 ] || [ -f /lib/x86_64-linux-gnu/libz.so.1 ] || skip "no libz.so.1"

# the category line of the link_map record: '#N: ... are CAT' above
# '_dl_new_object (dl-object.c:92)' (libc6-dbg names ld.so's frames)
mapcat() { grep -B1 '^    _dl_new_object (dl-object.c:92) ' "$1" | sed -n 's/^#[0-9]*: .* blocks are //p' | head -n 1; }

exe=$TMP/dl
cc -g -O2 -o "$exe" tests/prog/real10_dl.c -ldl
# 1. before the fix one of these paddings put _dl_find_object's table at an
# address that is not 64-aligned (here 16): its pointer to the map was interior
bad=0
for pad in 0 16 32 48 64 80 96 112 128 144 160 176 192 208 224 240; do
	"$B/heapann" --report=lost --top 0 "$exe" $pad >"$TMP/dl.$pad" 2>"$TMP/dl.$pad.err"
	c=$(mapcat "$TMP/dl.$pad")
	[ "$c" = "still reachable" ] || { bad=$((bad + 1)); echo "# padding $pad: libz's link_map is '$c'"; }
done
check_eq "dlopen: libz's link_map is still reachable at every padding" 0 $bad
check_grep "dlopen: the roots name ld.so's link maps outside blocks" \
	"^roots: .*, ld.so's link maps outside blocks [0-9]+ bytes in [0-9]+[;]?" "$TMP/dl.16"
if command -v valgrind >/dev/null; then
	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none --run-libc-freeres=no \
		"$exe" 16 >/dev/null 2>"$TMP/dl.vg"
	check_eq "dlopen: memcheck says still reachable too" "still reachable" \
		"$(grep -A4 'in loss record' "$TMP/dl.vg" | grep -B3 '_dl_new_object (dl-object.c:92)' |
			sed -n 's/^==[0-9]*== .* blocks are \(.*\) in loss record.*/\1/p' | head -n 1)"
	check_cats "dlopen: the four categories are memcheck's (but _dl_find_object's table)" \
		"$TMP/dl.16" "$TMP/dl.vg" _dlfo_mappings_segment_allocate
else
	echo "# valgrind not installed: the memcheck comparisons skipped"
fi

# 2. real programs: python3 with the C extension module _json (dlopen'ed),
# sqlite3; memcheck with the same freeres as the exit snapshot (no libc
# freeres; libstdc++'s pool is freed by both)
py=/usr/bin/python3
if [ -x $py ] && $py -I -S -c 'import _json' 2>/dev/null && command -v valgrind >/dev/null; then
	# -I -S: pymalloc (-I ignores PYTHONMALLOC); -S with PYTHONMALLOC=malloc
	for how in "-I -S" "-S"; do
		PYTHONMALLOC=malloc "$B/heapann" --report=lost --top 0 $py $how -c 'import _json; print("ok")' \
			>"$TMP/py.txt" 2>"$TMP/py.err"
		check_eq "python3 $how: exit 0" 0 $?
		PYTHONMALLOC=malloc valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
			--run-libc-freeres=no $py $how -c 'import _json; print("ok")' >/dev/null 2>"$TMP/py.vg"
		check_eq "python3 $how: _json's link_map still reachable" "still reachable" "$(mapcat "$TMP/py.txt")"
		check_cats "python3 $how: the four categories are memcheck's (but _dl_find_object's table)" \
			"$TMP/py.txt" "$TMP/py.vg" _dlfo_mappings_segment_allocate
		check_eq "python3 $how: in use at exit as memcheck" \
			"$(sed -n 's/^==[0-9]*== *in use at exit: \(.*\)$/\1/p' "$TMP/py.vg")" \
			"$(sed -n 's/^live blocks: \([0-9,]*\), requested bytes: \([0-9,]*\),.*/\2 bytes in \1 blocks/p' "$TMP/py.txt")"
	done
else
	echo "# /usr/bin/python3 or valgrind missing: the python3 part skipped"
fi
# 3. large blocks beside pymalloc's arenas: glibc mmaps each 1 MiB block alone
# and the kernel merges those mappings with pymalloc's anonymous arenas beside
# them, so the segment held blocks and was taken for heap: the arenas (the dict
# and its bytearray objects) were never read, and 36,970,046 bytes read
# definitely lost where memcheck says still reachable. python3 -I (pymalloc),
# 40 bytearrays held by a global dict, then abort: the abort snapshot against
# memcheck, which checks for leaks on the fatal signal too.
if [ -x $py ] && command -v valgrind >/dev/null; then
	cat >"$TMP/big.py" <<'EOF'
import os
d = {}
for i in range(40):
    d[i] = bytearray(b'x' * ((1 << 20) + i))
print(sum(len(v) for v in d.values()), flush=True)
os.abort()
EOF
	mkdir -p "$TMP/bigk"
	# python copies its environment into objects: both runs get memcheck's
	# (Debian's valgrind wrapper adds variables), LD_PRELOAD's difference in
	# length made up by a variable PAD
	base="PATH=/usr/bin:/bin HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR=$TMP/bigk"
	env_like_memcheck "$base"
	sh -c "env -i $VG_ENV PAD=$PAD_OURS LD_PRELOAD='$TOP/$B/libheapann.so' $py -I -S '$TMP/big.py'" >"$TMP/big.out" 2>/dev/null
	check_eq "python3 big: the program's bytes" 41943820 "$(cat "$TMP/big.out")"
	"$B/mprof-core" --report=lost --top 0 $py "$TMP"/bigk/*.core >"$TMP/big.txt" 2>/dev/null
	check_grep "python3 big: the 40 bytearrays (+1 byte each) still reachable" \
		'^#[0-9]+: 41,943,860 bytes in 40 blocks are still reachable$' "$TMP/big.txt"
	sh -c "env -i $base PAD=$PAD_VG valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
		--run-libc-freeres=no $py -I -S '$TMP/big.py'" >/dev/null 2>"$TMP/big.vg"
	check_cats "python3 big: the four categories are memcheck's" "$TMP/big.txt" "$TMP/big.vg"
fi
command -v sqlite3 >/dev/null || apt-get install -y sqlite3 >/dev/null 2>&1
if command -v sqlite3 >/dev/null && command -v valgrind >/dev/null; then
	cat >"$TMP/q.sql" <<'EOF'
create table t(a integer primary key, b text);
with recursive c(x) as (select 1 union all select x+1 from c where x<2000)
  insert into t select x, printf('row %d', x) from c;
create index ib on t(b);
select count(*), sum(length(b)) from t;
EOF
	"$B/heapann" --report=lost --top 0 sqlite3 :memory: <"$TMP/q.sql" >"$TMP/sq.txt" 2>"$TMP/sq.err"
	check_grep "sqlite3: its answer" '^2000[|]14893$' "$TMP/sq.txt"
	valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none --run-libc-freeres=no \
		sqlite3 :memory: <"$TMP/q.sql" >/dev/null 2>"$TMP/sq.vg"
	check_cats "sqlite3: the four categories are memcheck's" "$TMP/sq.txt" "$TMP/sq.vg"
else
	echo "# sqlite3 or valgrind missing: the sqlite3 part skipped"
fi
# 4. a shell script that execs a real program (bash, then sqlite3 in the same
# process, LD_PRELOAD kept): the last snapshot of the pid is sqlite3's; the
# launcher gave mprof-core bash with it and the report failed ("core of
# another program")
if command -v bash >/dev/null && command -v sqlite3 >/dev/null; then
	printf 'a=""; for i in $(seq 1 300); do a="$a $i"; done\necho ${#a}\nexec sqlite3 :memory: "select 41+1;"\n' \
		>"$TMP/ex.sh"
	"$B/heapann" bash "$TMP/ex.sh" >"$TMP/ex.out" 2>"$TMP/ex.err"
	check_eq "bash exec sqlite3: exit 0" 0 $?
	check_eq "bash exec sqlite3: the script's output" "1092 42" "$(grep -E '^[0-9]+$' "$TMP/ex.out" | tr '\n' ' ' | sed 's/ $//')"
	check_grep "bash exec sqlite3: the launcher says what it reports" \
		"^heapann: pid [0-9]+ ended as /.*/sqlite3 \\(it exec'd it\\): reporting that program's snapshot$" "$TMP/ex.err"
	check_grep "bash exec sqlite3: the report is of sqlite3's snapshot" '/sqlite3\.[0-9]+\.1\.core: core, ' "$TMP/ex.out"
	check_grep "bash exec sqlite3: sqlite3's frames" '^    0x[0-9a-f]+ \[sqlite3\+0x[0-9a-f]+\]$' "$TMP/ex.out"
	check "bash exec sqlite3: no failed report" sh -c "! grep -q 'report failed' '$TMP/ex.err'"
fi
# 5. gcc's cc1, linked with libstdc++.a (its symbols exported): the exit
# snapshot left libstdc++'s 72,704-byte emergency pool live (it freed it only
# when libstdc++.so was loaded), memcheck frees it (still reachable 1,890,176
# bytes in 2,996 blocks there, 72,704 in 1 more here)
cc1=$(cc -print-prog-name=cc1 2>/dev/null)
if [ -x "$cc1" ] && nm -D "$cc1" 2>/dev/null | grep -q ' T _ZN9__gnu_cxx9__freeresEv$'; then
	printf 'int printf(const char *, ...);\nint main(void) { for (int i = 0; i < 3; i++) printf("%%d\\n", i); return 0; }\n' >"$TMP/x.i"
	"$B/heapann" --report=lost --top 0 "$cc1" -quiet "$TMP/x.i" -O2 -o "$TMP/x.s" >"$TMP/cc1.txt" 2>"$TMP/cc1.err"
	check_eq "cc1: exit 0" 0 $?
	check_grep "cc1: compiled" '^main:' "$TMP/x.s"
	check "cc1: no 72,704-byte pool (freed as memcheck does)" sh -c "! grep -q '^#[0-9]*: 72,704 bytes in 1 blocks' '$TMP/cc1.txt'"
	# the check above passes on an empty report (the launcher returns the
	# program's status when the report fails): the totals are there
	check_grep "cc1: the report's loss summary" '^   still reachable: [0-9,]+ bytes in [0-9,]+ blocks$' "$TMP/cc1.txt"
	check "cc1: no report failed" sh -c "! grep -q 'report failed' '$TMP/cc1.err'"
	if [ "${REAL10_SLOW:-0}" = 1 ] && command -v valgrind >/dev/null; then
		valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none --run-libc-freeres=no \
			"$cc1" -quiet "$TMP/x.i" -O2 -o "$TMP/x2.s" >/dev/null 2>"$TMP/cc1.vg"
		check_cats "cc1: the four categories are memcheck's" "$TMP/cc1.txt" "$TMP/cc1.vg"
	fi
else
	echo "# no cc1 exporting __gnu_cxx::__freeres: the cc1 part skipped"
fi
# 6. programs linked with lld: the exit snapshot looked for __gnu_cxx::__freeres
# in every 24-byte slot from DT_SYMTAB to DT_STRTAB, where lld puts
# .gnu.version, .gnu.version_r and .gnu.hash: a garbage st_name and strcmp
# read unmapped memory, SIGSEGV in exit() (rc 139, output and snapshot lost).
# The name is now looked up through DT_GNU_HASH or DT_HASH.
if command -v ld.lld >/dev/null || apt-get install -y lld >/dev/null 2>&1; then
	for hs in "" sysv gnu; do
		n=lld${hs:+-$hs}
		cc -O1 -g -fuse-ld=lld ${hs:+-Wl,--hash-style=$hs} -o "$TMP/$n" tests/prog/real10_lld.c || continue
		mkdir -p "$TMP/$n.k"
		HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/$n.k" LD_PRELOAD="$B/libheapann.so" "$TMP/$n" >"$TMP/$n.out" 2>"$TMP/$n.err"
		check_eq "lld ${hs:-default}: exit 0" 0 $?
		check_eq "lld ${hs:-default}: the program's output" ok "$(cat "$TMP/$n.out")"
		"$B/mprof-core" --report=lost --top 0 "$TMP/$n" "$TMP/$n.k"/*.core >"$TMP/$n.txt" 2>/dev/null
		check_grep "lld ${hs:-default}: the 37 bytes definitely lost" '^   definitely lost: 37 bytes in 1 blocks$' "$TMP/$n.txt"
		check_grep "lld ${hs:-default}: the 100 bytes of main still reachable" \
			'^#[0-9]+: 100 bytes in 1 blocks are still reachable$' "$TMP/$n.txt"
	done
	if command -v g++ >/dev/null; then
		for hs in gnu sysv; do
			n=lldxx-$hs
			g++ -O1 -g -fuse-ld=lld -Wl,--hash-style=$hs -static-libstdc++ -rdynamic -o "$TMP/$n" tests/prog/real10_lldxx.cc || continue
			mkdir -p "$TMP/$n.k"
			HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/$n.k" LD_PRELOAD="$B/libheapann.so" "$TMP/$n" >"$TMP/$n.out" 2>"$TMP/$n.err"
			check_eq "lld C++ $hs: exit 0" 0 $?
			check_eq "lld C++ $hs: the program's output" "caught x" "$(cat "$TMP/$n.out")"
			"$B/mprof-core" --report=lost --top 0 "$TMP/$n" "$TMP/$n.k"/*.core >"$TMP/$n.txt" 2>/dev/null
			check_grep "lld C++ $hs: the string still reachable" '^#[0-9]+: 201 bytes in 1 blocks are still reachable$' "$TMP/$n.txt"
			check "lld C++ $hs: no 72,704-byte pool (found through the hash table and freed)" \
				sh -c "grep -q '^   still reachable: ' '$TMP/$n.txt' && ! grep -q '^#[0-9]*: 72,704 bytes in 1 blocks' '$TMP/$n.txt'"
		done
	fi
	# the launcher too
	"$B/heapann" --report=lost --top 0 "$TMP/lld" >"$TMP/lld.l.out" 2>"$TMP/lld.l.err"
	check_eq "lld under the launcher: exit 0" 0 $?
	check_grep "lld under the launcher: the report" '^   definitely lost: 37 bytes in 1 blocks$' "$TMP/lld.l.out"
else
	echo "# lld not installed and not installable: the lld part skipped"
fi
# 7. a thread on a stack the program mapped itself (pthread_attr_setstack, no
# MAP_STACK) directly below a 1 MiB block glibc mmapped alone: the kernel
# merges the two mappings, and the segment's part outside the chunk was read
# whole as "other writable mappings", the dead part below the thread's stack
# pointer too: the 77 bytes whose only pointer lies in a returned frame there
# read still reachable. That part is now the thread's stack, from sp up.
cc -g -O1 -pthread -o "$TMP/stk" tests/prog/real10_stk.c
check_eq "own stack: built" 0 $?
mkdir -p "$TMP/stk.k"
HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR="$TMP/stk.k" LD_PRELOAD="$B/libheapann.so" "$TMP/stk" >"$TMP/stk.out" 2>"$TMP/stk.err"
if ! grep -q '^no stack below' "$TMP/stk.out"; then
	"$B/mprof-core" --report=lost --top 0 "$TMP/stk" "$TMP/stk.k"/*.core >"$TMP/stk.txt" 2>"$TMP/stk.rerr"
	check_grep "own stack: the 77 bytes of the returned frame are lost" \
		'^#[0-9]+: 77 bytes in 1 blocks are definitely lost$' "$TMP/stk.txt"
	check_grep "own stack: the 1 MiB block still reachable" \
		'^#[0-9]+: 1,048,576 bytes in 1 blocks are still reachable$' "$TMP/stk.txt"
	check_grep "own stack: read as the second thread's stack" '^roots: .*, stacks of 2 threads ' "$TMP/stk.txt"
	other=$(sed -n 's/^roots: .*, other writable mappings \([0-9,]*\) bytes.*/\1/p' "$TMP/stk.txt" | tr -d ,)
	check "own stack: not among the other writable mappings (${other:-none} bytes)" \
		test "${other:-0}" -lt 262144
else
	echo "# could not map a stack below the 1 MiB block: the own-stack part skipped"
fi
# 8. a corrupt list of link maps behind r_debug (tests/prog/real10_lmcycle.c:
# fake maps in a freed block): an l_next to itself or a two-map cycle read
# 65,536 maps, an r_next to r_debug itself 16 namespaces of the same list,
# each a duplicate root. Now each map once.
cc -g -O1 -o "$TMP/lmc" tests/prog/real10_lmcycle.c
for mc in "1 40 1" "2 80 2" "3 40 1"; do
	set -- $mc
	mkdir -p "$TMP/lmc.$1"
	HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR="$TMP/lmc.$1" LD_PRELOAD="$B/libheapann.so" "$TMP/lmc" $1 >/dev/null 2>&1
	"$B/mprof-core" --report=lost --top 0 "$TMP/lmc" "$TMP/lmc.$1"/*.core >"$TMP/lmc.$1.txt" 2>/dev/null
	check_grep "link map cycle $1: each map read once ($3)" \
		"^roots: .*, ld.so's link maps outside blocks $2 bytes in $3[;]?( |\$)" "$TMP/lmc.$1.txt"
done
# 9. a script that execs DIR/sqlite3, a leaking program of its own that is
# not the sqlite3 on PATH: the launcher took the exec'd program by its file
# name on PATH (/usr/bin/sqlite3): a false "ended as /usr/bin/sqlite3" and a
# failed report with build-ids, the wrong program's report without. The path
# is now the core's (NT_FILE at AT_ENTRY), zstd-compressed cores too.
if command -v bash >/dev/null; then
	mkdir -p "$TMP/exd/nob"
	cc -g -O1 -o "$TMP/exd/sqlite3" tests/prog/real10_exec.c
	cc -g -O1 -Wl,--build-id=none -o "$TMP/exd/nob/sqlite3" tests/prog/real10_exec.c
	for v in "id $TMP/exd/sqlite3 none" "noid $TMP/exd/nob/sqlite3 none" "zstd $TMP/exd/sqlite3 zstd"; do
		set -- $v
		command -v zstd >/dev/null || [ "$3" = none ] || continue
		# the loop first: the launcher reads the started file once it runs
		printf 'a=""; for i in $(seq 1 300); do a="$a $i"; done\nexec %s\n' "$2" >"$TMP/exd/$1.sh"
		"$B/heapann" --compress "$3" --report=lost --top 0 bash "$TMP/exd/$1.sh" >"$TMP/exd/$1.out" 2>"$TMP/exd/$1.err"
		check_eq "exec DIR/sqlite3 ($1): exit 0" 0 $?
		check_grep "exec DIR/sqlite3 ($1): ended as that file" \
			"^heapann: pid [0-9]+ ended as $2 \\(it exec'd it\\)" "$TMP/exd/$1.err"
		check_grep "exec DIR/sqlite3 ($1): its 4,321 bytes lost" \
			'^#[0-9]+: 4,321 bytes in 1 blocks are definitely lost$' "$TMP/exd/$1.out"
		check_grep "exec DIR/sqlite3 ($1): its frame" '^    leaky_from_dir \(real10_exec\.c:5\) \[sqlite3\]$' "$TMP/exd/$1.out"
		check "exec DIR/sqlite3 ($1): no failed report" sh -c "! grep -q 'report failed' '$TMP/exd/$1.err'"
	done
	# the exec'd file removed before the snapshot ("FILE (deleted)" in the
	# core): another file of that name on PATH is not it, the snapshot is kept
	mkdir -p "$TMP/exd/del" "$TMP/exd/decoy"
	cp "$TMP/exd/sqlite3" "$TMP/exd/del/sqlite3"
	cp "$TMP/exd/nob/sqlite3" "$TMP/exd/decoy/sqlite3"
	printf 'a=""; for i in $(seq 1 300); do a="$a $i"; done\nexec %s unlink\n' "$TMP/exd/del/sqlite3" >"$TMP/exd/del.sh"
	PATH="$TMP/exd/decoy:$PATH" "$B/heapann" --report=lost --top 0 bash "$TMP/exd/del.sh" >"$TMP/exd/del.out" 2>"$TMP/exd/del.err"
	check_eq "exec DIR/sqlite3, deleted: exit 0" 0 $?
	check_grep "exec DIR/sqlite3, deleted: the snapshot kept, no file looked for" \
		"^heapann: pid [0-9]+ ended as $TMP/exd/del/sqlite3 \\(deleted\\) \\(it exec'd it, the file is gone\\): the snapshot is kept: " "$TMP/exd/del.err"
	check "exec DIR/sqlite3, deleted: no report of the file on PATH" sh -c "! grep -q 'blocks are' '$TMP/exd/del.out'"
fi
done_testing
