#!/bin/sh
# run-real11.sh - real, unmodified programs under libheapann against memcheck
# (valgrind --leak-check=full --leak-check-heuristics=none at exit):
# 1. a GLib/GObject program (tests/prog/real11_gobj.c). Under valgrind libglib
#    and libgobject change what they allocate (RUNNING_ON_VALGRIND): GSlice
#    takes malloc for each chunk, and GObject instances with private data,
#    fundamental type nodes and closures are told to memcheck as blocks of
#    their own (VALGRIND_MALLOCLIKE_BLOCK) inside the malloc'd one,
#    so memcheck says "possibly lost" 0 blocks where we say 88. With the client
#    requests taken out of copies of the two libraries (tests/real11.py nocr)
#    and memcheck's heap above 4 GiB (--aspace-minaddr: GHashTable keeps
#    pointers in 32-bit words when every one fits, which memcheck cannot read
#    as pointers) the four categories agree to the byte. The launcher now runs
#    the program with G_SLICE=always-malloc, as memcheck has GLib do: the
#    program's leaked objects and list were chunks of live GSlice slabs, 0
#    bytes definitely lost. The real glib-compile-schemas agrees too.
# 2. perl leaking a cycle: the four categories agree to the byte when both
#    runs have the same environment (perl copies it into blocks).
# 3. a library dlopen'ed, allocating, then dlclose'd (tests/prog/real11_dl.c):
#    bytes and blocks as memcheck's, at exit and at an abort; its frames named
#    where memcheck says ??? (tests/run-dlmod.sh tests that part further).
# 4. vim -es running a script: memcheck's to the byte but for the block of
#    its signal stack, sized by sysconf(_SC_SIGSTKSZ), which differs under
#    valgrind.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (valgrind's client-request sequence, the default unwinder)"
command -v python3 >/dev/null || skip "python3 not installed"
command -v valgrind >/dev/null || skip "valgrind not installed"
VG="valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none --run-libc-freeres=no"

# 1. GLib
pkg-config --exists gobject-2.0 2>/dev/null || apt-get install -y libglib2.0-dev >/dev/null 2>&1
if pkg-config --exists gobject-2.0 2>/dev/null &&
	cc -g -O1 -o "$TMP/gobj" tests/prog/real11_gobj.c $(pkg-config --cflags --libs gobject-2.0); then
	"$TMP/gobj" >"$TMP/gobj.out"
	check_eq "GLib: the program ran" 0 $?
	osz=$(sed -n 's/^objects \([0-9]*\) 3 line [0-9]*$/\1/p' "$TMP/gobj.out")
	oline=$(sed -n 's/^objects [0-9]* 3 line \([0-9]*\)$/\1/p' "$TMP/gobj.out")
	nsz=$(sed -n 's/^list \([0-9]*\) 4$/\1/p' "$TMP/gobj.out")
	# the program's own figures: 3 objects and the list's first node lost,
	# the 3 other nodes and the 4 strings "x" (2 bytes) through them
	dl="definitely lost: $((3 * osz + nsz)) bytes in 4 blocks"
	il="indirectly lost: $((3 * nsz + 4 * 2)) bytes in 7 blocks"
	"$B/heapann" --report=lost --top 0 "$TMP/gobj" >"$TMP/g.txt" 2>"$TMP/g.err"
	check_eq "GLib under the launcher: exit 0" 0 $?
	check_grep "GLib under the launcher: the 3 objects definitely lost" \
		"^#[0-9]+: $((3 * osz)) bytes in 3 blocks are definitely lost\$" "$TMP/g.txt"
	check_eq "GLib under the launcher: their stack, main's line as the program says" \
		"    main (real11_gobj.c:$oline) [gobj]" \
		"$(grep -A8 "^#[0-9]*: $((3 * osz)) bytes in 3 blocks are definitely lost\$" "$TMP/g.txt" | grep '^    main ')"
	check_grep "GLib under the launcher: $dl" "^   $dl\$" "$TMP/g.txt"
	check_grep "GLib under the launcher: $il" "^   $il\$" "$TMP/g.txt"
	# libglib and libgobject without valgrind's client requests
	lib=$(pkg-config --variable=libdir gobject-2.0)
	mkdir -p "$TMP/nocr"
	python3 tests/real11.py nocr "$lib/libglib-2.0.so.0" "$TMP/nocr/libglib-2.0.so.0" \
		"$lib/libgobject-2.0.so.0" "$TMP/nocr/libgobject-2.0.so.0" >"$TMP/nocr.out"
	check_eq "GLib: client requests found in both libraries" 0 $?
	# a: G_SLICE=always-malloc (the launcher's), b: GSlice's magazines
	for gs in always-malloc ""; do
		n=${gs:-magazines}
		G_SLICE=$gs LD_LIBRARY_PATH=$TMP/nocr "$B/heapann" --report=lost --top 0 "$TMP/gobj" >"$TMP/g.$n.txt" 2>/dev/null
		G_SLICE=$gs LD_LIBRARY_PATH=$TMP/nocr $VG --aspace-minaddr=0x200000000 "$TMP/gobj" >/dev/null 2>"$TMP/g.$n.vg"
		check_cats "GLib without client requests, G_SLICE=$n: the four categories are memcheck's" "$TMP/g.$n.txt" "$TMP/g.$n.vg"
	done
	check_grep "GLib, memcheck without client requests: $dl" "^==[0-9]+== +$dl\$" "$TMP/g.always-malloc.vg"
	# in GSlice's slabs no leak is seen, by either (GLib 2.76 and later have
	# no slabs: g_slice_alloc is g_malloc there)
	if pkg-config --atleast-version=2.76 glib-2.0; then
		echo "# GLib $(pkg-config --modversion glib-2.0): no GSlice slabs, their check left out"
	else
		check_grep "GLib, GSlice's magazines: the leaks hidden in its slabs (memcheck too)" \
			'^==[0-9]+== +definitely lost: 0 bytes in 0 blocks$' "$TMP/g.magazines.vg"
	fi
	# a real GLib program: glib-compile-schemas (libglib2.0-bin) compiling a
	# schema, under the launcher
	if command -v glib-compile-schemas >/dev/null; then
		mkdir -p "$TMP/sch"
		cat >"$TMP/sch/org.real11.test.gschema.xml" <<'XML'
<schemalist>
  <schema id="org.real11.test" path="/org/real11/test/">
    <key name="count" type="i"><default>42</default></key>
    <key name="names" type="as"><default>['a','b','c']</default></key>
  </schema>
</schemalist>
XML
		LD_LIBRARY_PATH=$TMP/nocr "$B/heapann" --report=lost --top 0 glib-compile-schemas --strict \
			--targetdir="$TMP/sch" "$TMP/sch" >"$TMP/gcs.txt" 2>"$TMP/gcs.err"
		check_eq "glib-compile-schemas: exit 0, the schema compiled" "0 yes" "$? $([ -s "$TMP/sch/gschemas.compiled" ] && echo yes)"
		G_SLICE=always-malloc LD_LIBRARY_PATH=$TMP/nocr $VG --aspace-minaddr=0x200000000 glib-compile-schemas --strict \
			--targetdir="$TMP/sch" "$TMP/sch" >/dev/null 2>"$TMP/gcs.vg"
		check_cats "glib-compile-schemas without client requests: the four categories are memcheck's" "$TMP/gcs.txt" "$TMP/gcs.vg"
	else
		echo "# glib-compile-schemas not installed (libglib2.0-bin): that part skipped"
	fi
	# the libraries as they are: memcheck is told of blocks inside blocks
	$VG "$TMP/gobj" >/dev/null 2>"$TMP/g.vg"
	check_grep "GLib under valgrind: GObject instances are blocks libgobject tells memcheck of" \
		'^==[0-9]+== +at 0x[0-9A-F]+: g_type_create_instance ' "$TMP/g.vg"
else
	echo "# libglib2.0-dev not installed and not installable: the GLib part skipped"
fi

# 2. perl, a cycle of two hashes and 100 arrays lost, the environment
# memcheck's on both sides
if command -v perl >/dev/null; then
	mkdir -p "$TMP/plk"
	cat >"$TMP/cyc.pl" <<'PL'
my $a = {}; my $b = { a => $a }; $a->{b} = $b;
my @l = map { [$_] } 1..100;
print scalar(@l), "\n";
PL
	# a fixed hash seed: the sizes of the hashes' bucket arrays follow it
	base="PATH=/usr/bin:/bin PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$TMP/plk"
	env_like_memcheck "$base"
	sh -c "env -i $VG_ENV PAD=$PAD_OURS LD_PRELOAD='$TOP/$B/libheapann.so' perl '$TMP/cyc.pl'" >"$TMP/pl.out" 2>/dev/null
	check_eq "perl: its output" 100 "$(cat "$TMP/pl.out")"
	"$B/mprof-core" --report=lost --top 0 "$(command -v perl)" "$TMP"/plk/*.core >"$TMP/pl.txt" 2>/dev/null
	sh -c "env -i $base PAD=$PAD_VG $VG perl '$TMP/cyc.pl'" >/dev/null 2>"$TMP/pl.vg"
	check_cats "perl: the four categories are memcheck's" "$TMP/pl.txt" "$TMP/pl.vg"
	check_eq "perl: in use at exit as memcheck" \
		"$(sed -n 's/^==[0-9]*== *in use at exit: \(.*\)$/\1/p' "$TMP/pl.vg")" \
		"$(sed -n 's/^live blocks: \([0-9,]*\), requested bytes: \([0-9,]*\),.*/\2 bytes in \1 blocks/p' "$TMP/pl.txt")"
else
	echo "# perl not installed: the perl part skipped"
fi

# 3. dlclose
cc -g -O1 -fPIC -shared -o "$TMP/libr11dl.so" tests/prog/real11_dlib.c &&
	cc -g -O1 -o "$TMP/dl" tests/prog/real11_dl.c -ldl
check_eq "dlclose: built" 0 $?
for how in exit abort; do
	mkdir -p "$TMP/dl.$how"
	HEAPANN_SNAPSHOT=$how HEAPANN_SNAPSHOT_DIR="$TMP/dl.$how" LD_PRELOAD="$B/libheapann.so" \
		"$TMP/dl" "$TMP/libr11dl.so" ${how#exit} >"$TMP/dl.$how.out" 2>/dev/null
	check_eq "dlclose ($how): the program's output" "kept 321 lost 1321" "$(cat "$TMP/dl.$how.out")"
	"$B/mprof-core" --report=lost --top 0 "$TMP/dl" "$TMP/dl.$how"/*.core >"$TMP/dl.$how.txt" 2>/dev/null
	$VG "$TMP/dl" "$TMP/libr11dl.so" ${how#exit} >/dev/null 2>"$TMP/dl.$how.vg"
	check_cats "dlclose ($how): the four categories are memcheck's" "$TMP/dl.$how.txt" "$TMP/dl.$how.vg"
	check_grep "dlclose ($how): the 1,321 bytes definitely lost" \
		'^#[0-9]+: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/dl.$how.txt"
	check_grep "dlclose ($how): the 321 bytes still reachable" \
		'^#[0-9]+: 321 bytes in 1 blocks are still reachable$' "$TMP/dl.$how.txt"
	# the frames in the unloaded library: memcheck's '???' (its debug
	# information is dropped at the dlclose), named here from libheapann's
	# record of the dlclose (include/heapann_unload.h)
	vfr=$(grep -A3 ' 1,321 bytes in 1 blocks are definitely lost in loss record' "$TMP/dl.$how.vg" |
		sed -n 's/^==[0-9]*== *by 0x\([0-9A-F]*\): ???$/\1/p' | while read -r a; do printf '%03x ' $((0x$a & 0xfff)); done)
	check_eq "dlclose ($how): memcheck's 2 frames in the unloaded library are ???" 2 "$(echo "$vfr" | wc -w)"
	check_eq "dlclose ($how): ours named, at real11_dlib.c's lines" \
		"r11_fill (real11_dlib.c:9) [libr11dl.so]|r11_make (real11_dlib.c:19) [libr11dl.so]|main (real11_dl.c:29) [dl]" \
		"$(grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/dl.$how.txt" | sed -n '2,4s/^    //p' | paste -sd'|')"
done
# another library loaded since where the first one was: its frames fall in
# that one's range but in none of its sections; they were all named after
# its last function symbol, sizeless, "_fini [libr11dl2.so]" (memcheck: "???
# (in libr11dl2.so)"); now module+offset
cc -g -O1 -fPIC -shared -o "$TMP/libr11dl2.so" tests/prog/real11_dlib2.c
mkdir -p "$TMP/dl.other"
HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR="$TMP/dl.other" LD_PRELOAD="$B/libheapann.so" \
	"$TMP/dl" "$TMP/libr11dl.so" "$TMP/libr11dl2.so" >"$TMP/dl.other.out" 2>/dev/null
check_eq "dlclose, another library loaded: the program's output" "kept 321 lost 1321" "$(cat "$TMP/dl.other.out")"
"$B/mprof-core" --report=lost --top 0 "$TMP/dl" "$TMP/dl.other"/*.core >"$TMP/dl.other.txt" 2>/dev/null
grep -A3 '^#[0-9]*: 1,321 bytes in 1 blocks are definitely lost$' "$TMP/dl.other.txt" | sed 1d >"$TMP/dl.other.fr"
if grep -q 'libr11dl2\.so' "$TMP/dl.other.fr"; then
	check_eq "dlclose, another library at its address: its frames module+offset, no function" 2 \
		"$(grep -cE '^    0x[0-9a-f]+ \[libr11dl2\.so\+0x[0-9a-f]+\]$' "$TMP/dl.other.fr")"
	check_grep "dlclose, another library at its address: then main's frame" \
		'^    main \(real11_dl\.c:29\) \[dl\]$' "$TMP/dl.other.fr"
else
	echo "# the second library was not mapped over the first one: that check skipped"
fi

# 4. vim running a script in Ex mode (-es) and quitting, one environment on
# both sides. vim's signal stack is a block of sysconf(_SC_SIGSTKSZ) bytes,
# which glibc derives from the kernel's AT_MINSIGSTKSZ, missing from
# valgrind's auxv: that block differs by the difference of the two figures
# (tests/prog/real11_sigstk.c run natively and under valgrind), all else is
# memcheck's to the byte
# (not vim.tiny: built without the script language)
vim=$(command -v vim.basic || command -v vim.nox)
[ -n "$vim" ] || { apt-get install -y vim >/dev/null 2>&1; vim=$(command -v vim.basic); }
if [ -n "$vim" ]; then
	cc -O1 -o "$TMP/sigstk" tests/prog/real11_sigstk.c
	d=$(($("$TMP/sigstk") - $(valgrind -q "$TMP/sigstk")))
	cat >"$TMP/v.vim" <<'VIM'
let lines = []
for i in range(1, 500)
  call add(lines, 'line ' . i . ' of the buffer')
endfor
call setline(1, lines)
%s/buffer/text/
let d = {}
for i in range(1, 200)
  let d['k' . i] = repeat('x', i)
endfor
call writefile([string(len(d)), getline(500)], $OUT)
qa!
VIM
	mkdir -p "$TMP/vk"
	base="PATH=/usr/bin:/bin HOME=$TMP OUT=$TMP/v.out HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$TMP/vk"
	env_like_memcheck "$base"
	sh -c "env -i $VG_ENV PAD=$PAD_OURS LD_PRELOAD='$TOP/$B/libheapann.so' $vim -u NONE -i NONE -N -es -S '$TMP/v.vim'" </dev/null >/dev/null 2>&1
	check_eq "vim: exit 0, its output" "0 200 line 500 of the text" "$? $(tr '\n' ' ' <"$TMP/v.out" | sed 's/ $//')"
	"$B/mprof-core" --report=lost --top 0 "$vim" "$TMP"/vk/*.core >"$TMP/v.txt" 2>/dev/null
	sh -c "env -i $base PAD=$PAD_VG $VG $vim -u NONE -i NONE -N -es -S '$TMP/v.vim'" </dev/null >/dev/null 2>"$TMP/v.vg"
	check_eq "vim: the four categories are memcheck's, but the signal stack's $d bytes" \
		"definitely lost 0 0;indirectly lost 0 0;possibly lost 0 0;still reachable $d 0;" \
		"$(python3 tests/real11.py catsdiff "$TMP/v.txt" "$TMP/v.vg")"
	ss=$(python3 -c 'import sys; print(format(int(sys.argv[1]), ","))' "$("$TMP/sigstk")")
	check_grep "vim: the signal stack, $ss bytes" "^#[0-9]+: $ss bytes in 1 blocks are still reachable\$" "$TMP/v.txt"
else
	echo "# no vim.basic nor vim.nox, and vim not installable: the vim part skipped"
fi
done_testing
