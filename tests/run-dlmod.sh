#!/bin/sh
# run-dlmod.sh - frames in libraries dlclose'd before the core (libheapann's
# table of unloaded libraries, include/heapann_unload.h). tests/prog/dlmod.c
# dlopens tests/prog/dlmod_lib.c (which brings tests/prog/dlmod_dep.c), keeps
# one block its dm_make returns, loses two, prints the lines of the calls and
# dlcloses it: both libraries are unloaded.
# 1. exit snapshot, abort snapshot, kernel core (abort), gcore: every frame in
#    the two libraries is their function at the line the program printed, in
#    [libdlmod.so] or [libdlmod_dep.so]; the summary lists both; no note.
#    With --symbolizer=gdb too (exit snapshot).
# 2. libdlmod.so rebuilt since (another build-id): its frames stay addresses,
#    one note says why (both symbolizers); the dependency's frames still named.
#    The dependency's file gone, a library without a build-id: the same with
#    their notes. The table's signature damaged in the core: one line, frames
#    addresses, no crash. dlopen'ed by a relative path: named from elsewhere.
# 3. dlopen'ed twice and closed once: not unloaded, no record (no summary line),
#    its frames named from the load map as always. Opened and closed 3 times
#    more (the same place each time): still one record of each library.
# 4. another library loaded over the range since (tests/prog/real11_dlib2.c):
#    the frames are that library's module+offset, as before. That one unloaded
#    and the first loaded and unloaded again: the frames are the first one's.
# 5. linked at 0x40000000 (a bias that is not its base): the same frames; in a
#    directory with a space: gdb's add-symbol-file cannot take it, a note.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the default unwinder's frames)"

cc -g -O1 -fPIC -shared -o "$TMP/libdlmod_dep.so" tests/prog/dlmod_dep.c &&
	cc -g -O1 -fPIC -shared -o "$TMP/libdlmod.so" tests/prog/dlmod_lib.c -L"$TMP" -ldlmod_dep \
		-Wl,-rpath,'$ORIGIN' &&
	cc -g -O1 -o "$TMP/dlmod" tests/prog/dlmod.c -ldl &&
	cc -g -O1 -fPIC -shared -o "$TMP/libr11dl2.so" tests/prog/real11_dlib2.c
check_eq "built" 0 $?

# frames NAME OUT REPORT: the report's frames of the three blocks are the
# functions at the lines the program printed in OUT
frames() {
	set -- "$1" "$2" "$3" $(sed -n 's/^lines \(.*\)$/\1/p' "$2") $(sed -n 's/^main \([0-9]*\)$/\1/p' "$2")
	# $4 fill  $5 lost  $6 kept  $7 dep  $8 the dependency's malloc  $9 main
	check_eq "$1: the 1,321 bytes definitely lost, from the unloaded library" \
		"dm_fill (dlmod_lib.c:$4) [libdlmod.so]|dm_make (dlmod_lib.c:$5) [libdlmod.so]|main (dlmod.c:$9) [dlmod]" \
		"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$3" | sed -n '2,4s/^    //p' | paste -sd'|')"
	check_eq "$1: the 555 bytes definitely lost, from the unloaded dependency" \
		"dm_dep_alloc (dlmod_dep.c:$8) [libdlmod_dep.so]|dm_make (dlmod_lib.c:$7) [libdlmod.so]|main (dlmod.c:$9) [dlmod]" \
		"$(grep -A3 '^#[0-9]*: 555 bytes in 1 blocks are definitely lost$' "$3" | sed -n '2,4s/^    //p' | paste -sd'|')"
	check_eq "$1: the 321 bytes still reachable" \
		"dm_fill (dlmod_lib.c:$4) [libdlmod.so]|dm_make (dlmod_lib.c:$6) [libdlmod.so]|main (dlmod.c:$9) [dlmod]" \
		"$(grep -A3 '^#[0-9]*: 321 bytes in 1 blocks are still reachable$' "$3" | sed -n '2,4s/^    //p' | paste -sd'|')"
}

# report NAME CORE OUT: mprof-core's lost report of CORE, its frames and summary
report() {
	"$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$3" >"$TMP/$1.txt" 2>"$TMP/$1.err"
	check_eq "$1: mprof-core exit 0" 0 $?
	frames "$1" "$2" "$TMP/$1.txt"
	check_grep "$1: the summary lists both libraries" \
		'^libraries unloaded before the core \(dlclose\): 2: libdlmod\.so libdlmod_dep\.so$' "$TMP/$1.txt"
	check "$1: no note on stderr" sh -c "! grep -q . '$TMP/$1.err'"
}

# snap NAME MODE [OTHER]: run the program at an exit snapshot ($TMP/s.NAME.out),
# then mprof-core's lost report of it ($TMP/NAME.txt and .err)
snap() {
	mkdir -p "$TMP/s.$1"
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/s.$1" LD_PRELOAD="$B/libheapann.so" \
		"$TMP/dlmod" "$TMP/libdlmod.so" "$2" ${3:+"$3"} >"$TMP/s.$1.out" 2>/dev/null
	"$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$TMP/s.$1"/*.core >"$TMP/$1.txt" 2>"$TMP/$1.err"
	check_eq "$1: mprof-core exit 0" 0 $?
}

# 1. snapshots at exit and at abort
for how in exit abort; do
	mkdir -p "$TMP/s.$how"
	HEAPANN_SNAPSHOT=$how HEAPANN_SNAPSHOT_DIR="$TMP/s.$how" LD_PRELOAD="$B/libheapann.so" \
		"$TMP/dlmod" "$TMP/libdlmod.so" "$how" >"$TMP/s.$how.out" 2>/dev/null
	check_grep "$how snapshot: the program closed the library" '^closed$' "$TMP/s.$how.out"
	report "$how snapshot" "$TMP/s.$how.out" "$(ls "$TMP/s.$how"/*.core | head -1)"
done
# a kernel core
if [ "$(cat /proc/sys/kernel/core_pattern 2>/dev/null)" = core ]; then
	rm -f "$TMP/core"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" \
		./dlmod "$TMP/libdlmod.so" abort >"$TMP/k.out" 2>/dev/null)
	check "kernel core written" test -s "$TMP/core"
	[ -s "$TMP/core" ] && report "kernel core" "$TMP/k.out" "$TMP/core"
else
	echo "# core_pattern is not 'core': the kernel core part skipped"
fi
# gcore of the process waiting after the dlclose
if command -v gdb >/dev/null 2>&1; then
	gcore_waiting "$TMP/gcore" "$TMP/dlmod" "$TMP/libdlmod.so" wait
	cp "$TMP/out" "$TMP/g.out"
	n=0; while ! grep -q '^closed$' "$TMP/g.out" && [ $n -lt 20 ]; do sleep 0.1; n=$((n + 1)); done
	check "gcore written" test -s "$TMP/gcore"
	[ -s "$TMP/gcore" ] && report "gcore" "$TMP/g.out" "$TMP/gcore"
else
	echo "# gdb not installed: the gcore part skipped"
fi

# the JSON member: both records, with each file's build-id, one SEQ (one dlclose)
"$B/mprof-core" --format json "$TMP/dlmod" "$TMP/s.exit"/*.core >"$TMP/j.json" 2>/dev/null
want=""
for l in libdlmod libdlmod_dep; do
	id=$(readelf -n "$TMP/$l.so" | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
	want="$want$TMP/$l.so $id;"
done
check_eq "JSON unloaded_libraries: the two files and their build-ids" "$want" \
	"$(python3 -c 'import json,sys; print("".join("%s %s;" % (u["path"], u["build_id"]) for u in json.load(open(sys.argv[1]))["unloaded_libraries"]))' "$TMP/j.json")"
check_eq "JSON unloaded_libraries: one SEQ, not 0" "1 1" \
	"$(python3 -c 'import json,sys; u = json.load(open(sys.argv[1]))["unloaded_libraries"]; print(len(set(x["seq"] for x in u)), int(u[0]["seq"] > 0))' "$TMP/j.json")"

# the gdb backend: the same frames (add-symbol-file at the recorded bias)
if command -v gdb >/dev/null 2>&1; then
	"$B/mprof-core" --symbolizer=gdb --report=lost --top 0 "$TMP/dlmod" "$TMP/s.exit"/*.core \
		>"$TMP/gdb.txt" 2>"$TMP/gdb.err"
	check_eq "gdb backend: mprof-core exit 0" 0 $?
	frames "gdb backend" "$TMP/s.exit.out" "$TMP/gdb.txt"
	check "gdb backend: no note on stderr" sh -c "! grep -q . '$TMP/gdb.err'"
fi

# 2. the library rebuilt since the run: another build-id
cp "$TMP/libdlmod.so" "$TMP/libdlmod.so.orig"
cc -g -O1 -fPIC -shared -DDM_VARIANT -o "$TMP/libdlmod.so" tests/prog/dlmod_lib.c -L"$TMP" -ldlmod_dep \
	-Wl,-rpath,'$ORIGIN'
"$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$TMP/s.exit"/*.core >"$TMP/chg.txt" 2>"$TMP/chg.err"
check_eq "rebuilt: mprof-core exit 0" 0 $?
check_grep "rebuilt: its frames stay addresses" \
	'^    0x[0-9a-f]+$' "$TMP/chg.txt"
check_eq "rebuilt: the 1,321 bytes: two bare addresses, then main" 2 \
	"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/chg.txt" | grep -cE '^    0x[0-9a-f]+$')"
check_grep "rebuilt: the dependency's frame still named" \
	'^    dm_dep_alloc \(dlmod_dep\.c:[0-9]+\) \[libdlmod_dep\.so\]$' "$TMP/chg.txt"
check_eq "rebuilt: the note, once" \
	"libdlmod.so: library unloaded before the core: file changed since ($TMP/libdlmod.so), its frames stay addresses" \
	"$(cat "$TMP/chg.err")"
"$B/mprof-core" -q --report=lost --top 0 "$TMP/dlmod" "$TMP/s.exit"/*.core >/dev/null 2>"$TMP/chg.q.err"
check "rebuilt: no note with -q" sh -c "! grep -q . '$TMP/chg.q.err'"
if command -v gdb >/dev/null 2>&1; then
	"$B/mprof-core" --symbolizer=gdb --report=lost --top 0 "$TMP/dlmod" "$TMP/s.exit"/*.core \
		>"$TMP/chg.gdb.txt" 2>"$TMP/chg.gdb.err"
	check_eq "rebuilt, gdb backend: the 1,321 bytes: two bare addresses" 2 \
		"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/chg.gdb.txt" | grep -cE '^    0x[0-9a-f]+$')"
	check_eq "rebuilt, gdb backend: the note, once" \
		"libdlmod.so: library unloaded before the core: file changed since ($TMP/libdlmod.so), its frames stay addresses" \
		"$(cat "$TMP/chg.gdb.err")"
fi
cp "$TMP/libdlmod.so.orig" "$TMP/libdlmod.so"

# 2b. the dependency's file gone: its frames stay addresses, one note
mv "$TMP/libdlmod_dep.so" "$TMP/libdlmod_dep.so.away"
"$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$TMP/s.exit"/*.core >"$TMP/gone.txt" 2>"$TMP/gone.err"
check_eq "file gone: the note, once" \
	"libdlmod_dep.so: library unloaded before the core, and its file $TMP/libdlmod_dep.so is gone: its frames stay addresses" \
	"$(cat "$TMP/gone.err")"
check_eq "file gone: the 555 bytes: the dependency's frame an address, the library's named" \
	"addr|dm_make" "$(grep -A2 '^#[0-9]*: 555 bytes in 1 blocks are definitely lost$' "$TMP/gone.txt" |
		sed -n '2s/^    0x[0-9a-f]*$/addr/p;3s/^    \(dm_make\) (dlmod_lib\.c:[0-9]*) \[libdlmod\.so\]$/\1/p' | paste -sd'|')"
mv "$TMP/libdlmod_dep.so.away" "$TMP/libdlmod_dep.so"

# 2c. the table's signature damaged in the core: one line, frames addresses
python3 - "$TMP/s.exit" "$TMP/bad.core" <<'PYEOF' && "$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$TMP/bad.core" >"$TMP/bad.txt" 2>"$TMP/bad.err"
import glob, struct, sys
data = bytearray(open(glob.glob(sys.argv[1] + "/*.core")[0], "rb").read())
magic = struct.pack("<Q", 0xD1C105EDB1B5A7ED)
i = data.find(magic)
assert i >= 0 and data.find(magic, i + 1) < 0
data[i] ^= 0xFF
open(sys.argv[2], "wb").write(data)
PYEOF
check_eq "damaged table: mprof-core exit 0" 0 $?
check_grep "damaged table: one line says so" \
	"^mprof-core: $TMP/bad.core: table of unloaded libraries at 0x[0-9a-f]+ skipped: no table there \(wrong signature or version\); its libraries' frames stay addresses\$" "$TMP/bad.err"
check_eq "damaged table: the 1,321 bytes: two bare addresses" 2 \
	"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/bad.txt" | grep -cE '^    0x[0-9a-f]+$')"
check "damaged table: no summary line" sh -c "! grep -q '^libraries unloaded' '$TMP/bad.txt'"

# 2d. a library without a build-id: nothing to check its file against
cc -g -O1 -fPIC -shared -Wl,--build-id=none -o "$TMP/libdlmod.so" tests/prog/dlmod_lib.c -L"$TMP" -ldlmod_dep \
	-Wl,-rpath,'$ORIGIN'
snap noid exit
check_grep "no build-id: the note" \
	'^libdlmod\.so: library unloaded before the core, without a build-id to check its file against: its frames stay addresses$' "$TMP/noid.err"
check_eq "no build-id: the 1,321 bytes: two bare addresses" 2 \
	"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/noid.txt" | grep -cE '^    0x[0-9a-f]+$')"
cp "$TMP/libdlmod.so.orig" "$TMP/libdlmod.so"

# 2e. dlopen'ed by a relative path ("./libdlmod.so", the working directory
# $TMP): recorded absolute, read from another directory
mkdir -p "$TMP/s.rel"
(cd "$TMP" && HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/s.rel" LD_PRELOAD="$TOP/$B/libheapann.so" \
	./dlmod ./libdlmod.so exit >"$TMP/s.rel.out" 2>/dev/null)
(cd / && "$TOP/$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$TMP/s.rel"/*.core) >"$TMP/rel.txt" 2>"$TMP/rel.err"
check_eq "relative path: mprof-core exit 0" 0 $?
frames "relative path" "$TMP/s.rel.out" "$TMP/rel.txt"
check "relative path: no note" sh -c "! grep -q . '$TMP/rel.err'"

# 3. opened twice, closed once: still loaded
snap twice twice
check "opened twice, closed once: nothing recorded (no summary line)" \
	sh -c "! grep -q '^libraries unloaded' '$TMP/twice.txt'"
check_eq "opened twice, closed once: JSON unloaded_libraries empty" "[]" \
	"$("$B/mprof-core" --format json "$TMP/dlmod" "$TMP/s.twice"/*.core 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["unloaded_libraries"])')"
check_grep "opened twice, closed once: the block the program keeps is still reachable" \
	'^#[0-9]+: 321 bytes in 1 blocks are still reachable$' "$TMP/twice.txt"
frames "opened twice, closed once (named from the load map)" "$TMP/s.twice.out" "$TMP/twice.txt"

# 3b. unloaded 3 times more from the same place: one record each
snap again again
check_grep "unloaded 4 times from the same place: one record of each library" \
	'^libraries unloaded before the core \(dlclose\): 2: libdlmod\.so libdlmod_dep\.so$' "$TMP/again.txt"
frames "unloaded 4 times" "$TMP/s.again.out" "$TMP/again.txt"

# 4. another library loaded over the range since
snap other exit "$TMP/libr11dl2.so"
grep -A2 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/other.txt" | sed 1d >"$TMP/other.fr"
if grep -q 'libr11dl2\.so' "$TMP/other.fr"; then
	check_eq "another library over the range: the frames there its module+offset" 2 \
		"$(grep -cE '^    0x[0-9a-f]+ \[libr11dl2\.so\+0x[0-9a-f]+\]$' "$TMP/other.fr")"
	check "another library over the range: no note" sh -c "! grep -q . '$TMP/other.err'"
else
	echo "# the other library was not mapped over the first one: that check skipped"
fi

# 4b. the other library unloaded from that range, then the first one loaded
# there again and unloaded: its record is the latest unload of the range, and
# the frames there are its own (records are taken by SEQ, not table order)
snap swap swap "$TMP/libr11dl2.so"
"$B/mprof-core" --format json "$TMP/dlmod" "$TMP/s.swap"/*.core >"$TMP/swap.json" 2>/dev/null
python3 - "$TMP/swap.json" >"$TMP/swap.chk" <<'PYEOF'
import json, sys
u = json.load(open(sys.argv[1]))["unloaded_libraries"]
a = [x for x in u if x["path"].endswith("/libdlmod.so")]
b = [x for x in u if x["path"].endswith("/libr11dl2.so")]
ok = len(a) == 1 and len(b) == 1 and int(a[0]["low"], 16) < int(b[0]["high"], 16) and \
	int(b[0]["low"], 16) < int(a[0]["high"], 16)
print("overlap" if ok else "apart")
print("order", u.index(a[0]) < u.index(b[0]) if ok else "", a[0]["seq"] > b[0]["seq"] if ok else "")
PYEOF
if grep -q '^overlap$' "$TMP/swap.chk"; then
	check_eq "swap: the first library's record in the table first, its SEQ the later" "order True True" \
		"$(sed -n 2p "$TMP/swap.chk")"
	frames "swap" "$TMP/s.swap.out" "$TMP/swap.txt"
	check "swap: no note" sh -c "! grep -q . '$TMP/swap.err'"
	if command -v gdb >/dev/null 2>&1; then
		"$B/mprof-core" --symbolizer=gdb --report=lost --top 0 "$TMP/dlmod" "$TMP/s.swap"/*.core \
			>"$TMP/swap.gdb.txt" 2>"$TMP/swap.gdb.err"
		frames "swap, gdb backend" "$TMP/s.swap.out" "$TMP/swap.gdb.txt"
	fi
else
	echo "# the other library was not mapped over the first one, or the first came back elsewhere: swap skipped"
	cat "$TMP/swap.chk"
fi

# 5. a library linked at 0x40000000 (-Ttext-segment): its load bias is not
# where its first segment is; and one in a directory with a space in its name
# (gdb's add-symbol-file cannot take that path: a note, the frames addresses)
mkdir -p "$TMP/tseg" "$TMP/sp ace"
cp "$TMP/libdlmod_dep.so" "$TMP/tseg/" && cp "$TMP/libdlmod_dep.so" "$TMP/libdlmod.so" "$TMP/sp ace/" &&
	cc -g -O1 -fPIC -shared -Wl,-Ttext-segment=0x40000000 -o "$TMP/tseg/libdlmod.so" tests/prog/dlmod_lib.c \
		-L"$TMP" -ldlmod_dep -Wl,-rpath,'$ORIGIN'
check_eq "text segment at 0x40000000: built" 0 $?
check_grep "text segment at 0x40000000: its first PT_LOAD there" \
	'^  LOAD +0x0+ 0x0*40000000 ' "$(readelf -lW "$TMP/tseg/libdlmod.so" >"$TMP/tseg.ph"; echo "$TMP/tseg.ph")"
for d in tseg "sp ace"; do
	mkdir -p "$TMP/s.$d"
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/s.$d" LD_PRELOAD="$B/libheapann.so" \
		"$TMP/dlmod" "$TMP/$d/libdlmod.so" exit >"$TMP/s.$d.out" 2>/dev/null
	"$B/mprof-core" --report=lost --top 0 "$TMP/dlmod" "$TMP/s.$d"/*.core >"$TMP/$d.txt" 2>"$TMP/$d.err"
	check_eq "$d: mprof-core exit 0" 0 $?
	frames "$d" "$TMP/s.$d.out" "$TMP/$d.txt"
	check "$d: no note" sh -c "! grep -q . '$TMP/$d.err'"
done
if command -v gdb >/dev/null 2>&1; then
	"$B/mprof-core" --symbolizer=gdb --report=lost --top 0 "$TMP/dlmod" "$TMP/s.tseg"/*.core \
		>"$TMP/tseg.gdb.txt" 2>"$TMP/tseg.gdb.err"
	check_eq "tseg, gdb backend: mprof-core exit 0" 0 $?
	frames "tseg, gdb backend" "$TMP/s.tseg.out" "$TMP/tseg.gdb.txt"
	"$B/mprof-core" --symbolizer=gdb --report=lost --top 0 "$TMP/dlmod" "$TMP/s.sp ace"/*.core \
		>"$TMP/sp.gdb.txt" 2>"$TMP/sp.gdb.err"
	check_eq "space in the path, gdb backend: exit 0" 0 $?
	check_eq "space in the path, gdb backend: a note for each library" \
		"libdlmod.so: library unloaded before the core: gdb cannot be given its file $TMP/sp ace/libdlmod.so (a space or quote in the path), its frames stay addresses|libdlmod_dep.so: library unloaded before the core: gdb cannot be given its file $TMP/sp ace/libdlmod_dep.so (a space or quote in the path), its frames stay addresses" \
		"$(sort "$TMP/sp.gdb.err" | paste -sd'|')"
	check_eq "space in the path, gdb backend: the 1,321 bytes: two bare addresses" 2 \
		"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/sp.gdb.txt" | grep -cE '^    0x[0-9a-f]+$')"
fi

done_testing
