#!/bin/sh
# run-hunt16-cores.sh - the ways users get a core and a program to mprof-core
# (sixteenth bug hunt), each with tests/prog/hunt16_cores.c, which prints its
# own truth (10 x 1,000 bytes at line LA, 4,000 at LB): kernel cores under
# coredump_filter values, MADV_DONTDUMP, ulimit -c and prlimit --core; the program
# deleted, rebuilt, given through a symlink, a library upgraded under it, a relative path, a libtool-style
# wrapper script, stripped with its debug file beside it or under a build-id
# directory; the static kit and -static-pie; -m32 (the host's preload refused
# with the machines named; the kit built with gcc -m32); 1,000 threads with a 64 GiB
# PROT_NONE reservation and a 2 GiB MAP_NORESERVE mapping partly touched; 200,000 tiny blocks;
# a forked child's core; gcore of a process in a signal handler and gcore -a;
# wrong inputs (another program, no preload, zeroed notes, program headers or
# heap).
# Every answer is right to the byte, or partial and says what is missing, or one
# line naming the file with exit 1.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
[ "$(cat /proc/sys/kernel/core_pattern)" = core ] || skip "core_pattern is not 'core'"
M=$TOP/$B/mprof-core
PRE=$TOP/$B/libheapann.so
src=$TOP/tests/prog/hunt16_cores.c
exe=$TMP/p
cc -g -O0 -pthread -o "$exe" "$src" || skip "cc failed"

# kcore NAME PROG ARGS...: run PROG ARGS under the preload in $TMP/NAME.d with
# ulimit -c unlimited (or $CLIM) until it dumps; the core in $TMP/NAME.core,
# its first line ("truth ...") read into LA and LB. Returns 0 when a core exists.
kcore() {
	kc=$1; shift
	rm -rf "$TMP/$kc.d"; mkdir -p "$TMP/$kc.d"
	(cd "$TMP/$kc.d" && ulimit -c "${CLIM:-unlimited}" && LD_PRELOAD=$PRE exec "$@") >"$TMP/$kc.out" 2>/dev/null
	set -- $(head -n 1 "$TMP/$kc.out")
	LA=${4:-0} LB=${5:-0}
	mv "$TMP/$kc.d"/core* "$TMP/$kc.core" 2>/dev/null
	rm -rf "$TMP/$kc.d"
	[ -s "$TMP/$kc.core" ]
}
# exact NAME PROG CORE: the JSON report holds the program's 11 blocks exactly
exact() {
	"$M" --format json "$2" "$3" >"$TMP/x.json" 2>"$TMP/x.err"
	check_eq "$1: exit 0" 0 $?
	check "$1: 10 x 1,000 bytes at main:$LA" python3 tests/jstack.py "$TMP/x.json" stack 10000 10 "main:$LA"
	check "$1: 4,000 bytes at main:$LB" python3 tests/jstack.py "$TMP/x.json" stack 4000 1 "main:$LB"
}
# oneline NAME RC PATTERN CMD...: CMD exits RC with one stderr line matching PATTERN
oneline() {
	ol=$1 rc=$2 pat=$3; shift 3
	"$@" >"$TMP/o.out" 2>"$TMP/o.err"
	check_eq "$ol: exit $rc" "$rc" $?
	check_eq "$ol: one line on stderr" 1 "$(wc -l <"$TMP/o.err")"
	check_grep "$ol: says why" "$pat" "$TMP/o.err"
}

# ---- coredump_filter ----
kcore f33 "$exe" filter=0x33 || skip "no kernel core written (ulimit -c, or a container's core_pattern)"
exact "filter 0x33" "$exe" "$TMP/f33.core"
kcore f1 "$exe" filter=0x1
exact "filter 0x1 (no ELF headers)" "$exe" "$TMP/f1.core"
# file mappings dumped whole: libheapann's own code and constants hold the
# header magics, and must not read as damage
kcore f3f "$exe" filter=0x3f
exact "filter 0x3f (code dumped)" "$exe" "$TMP/f3f.core"
check "filter 0x3f: no damaged header" python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["damaged_headers"] != 0)' "$TMP/x.json"
rm -f "$TMP/f3f.core"
# anonymous private memory left out: the heap is not in the core; this was
# "live blocks: 0" with exit 0
for f in 0x2 0x0; do
	kcore "f$f" "$exe" filter=$f
	oneline "filter $f (no heap dumped)" 1 '^mprof-core: .*f'$f'\.core: no block annotated .* in the memory the core holds: [0-9,]+ bytes of writable memory .* were not dumped: .*coredump_filter' \
		"$M" "$exe" "$TMP/f$f.core"
	rm -f "$TMP/f$f.core"
done
# the same under a size limit: the heap cut off
CLIM=8 kcore lim "$exe"
oneline "ulimit -c 8: heap cut off" 1 'lim\.core: no block annotated .* the file is truncated \(a core size limit' \
	"$M" "$exe" "$TMP/lim.core"
rm -f "$TMP"/lim.core "$TMP"/f1.core

# prlimit --core on the running process, cutting the core inside the blocks: a
# partial answer that says so; the lost report says why kept blocks read lost
if command -v prlimit >/dev/null; then
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD=$PRE exec "$exe" tiny=200000 wait <"$TMP/fifo" >"$TMP/pl.out" 2>/dev/null) &
	pid=$!
	exec 9>"$TMP/fifo"
	wait_for "$TMP/pl.out" ready
	ppid=$(pgrep -P $pid -x p || echo $pid)
	prlimit --pid "$ppid" --core=12000000:12000000
	kill -ABRT "$ppid"
	exec 9>&-
	wait $pid
	mv "$TMP"/core* "$TMP/pl.core" 2>/dev/null
	"$M" --report=lost "$exe" "$TMP/pl.core" >"$TMP/pl.txt" 2>&1
	check_eq "prlimit --core: exit 0" 0 $?
	check_grep "prlimit --core: truncation said" '^missing from the image: [0-9,]+ bytes of writable memory in [0-9]+ segments \(the file is truncated\)' "$TMP/pl.txt"
	nb=$(sed -n 's/^live blocks: \([0-9,]*\),.*/\1/p' "$TMP/pl.txt" | tr -d ,)
	check "prlimit --core: fewer blocks than the 200,011 kept ($nb)" test "${nb:-0}" -gt 0 -a "${nb:-0}" -lt 200011
	check_grep "prlimit --core: lost blocks may be kept from the missing memory" 'are missing from the image: references held there are not seen, and a block that only they keep reads as lost' "$TMP/pl.txt"
	rm -f "$TMP/pl.core"
else
	skip_check "prlimit --core" "no prlimit"
fi

# ---- MADV_DONTDUMP: the 256 KiB block is not seen, and that is said ----
kcore dd "$exe" dontdump
exact "MADV_DONTDUMP" "$exe" "$TMP/dd.core"
check "MADV_DONTDUMP: the block is not counted (4,096 of stdio besides)" python3 tests/jstack.py "$TMP/x.json" total 12 18096
"$M" "$exe" "$TMP/dd.core" >"$TMP/dd.txt" 2>&1
check_grep "MADV_DONTDUMP: 262,144 writable bytes missing" '^missing from the image: 262,144 bytes of writable memory in 1 segments' "$TMP/dd.txt"
check_grep "MADV_DONTDUMP: the statistics' live block not found is said" '^not found: the statistics region counts 1 live blocks \(262,144 bytes\)' "$TMP/dd.txt"
rm -f "$TMP/dd.core"

# ---- the heap zeroed in the core: was "live blocks: 0" and nothing else ----
cp "$TMP/f33.core" "$TMP/z.core"
"$M" --format json --blocks "$exe" "$TMP/z.core" >"$TMP/z.json" 2>/dev/null
python3 - "$TMP/z.core" "$TMP/z.json" <<'EOF'
import json, struct, sys
blk = [b["address"] for b in json.load(open(sys.argv[2]))["block_list"]]
blk = [int(a, 16) if isinstance(a, str) else a for a in blk]
f = open(sys.argv[1], "r+b"); d = f.read(64)
phoff, = struct.unpack_from("<Q", d, 32); phnum, = struct.unpack_from("<H", d, 56)
f.seek(phoff); ph = f.read(56 * phnum)
for i in range(phnum):   # every dumped segment holding a block: zeroes
    t, fl, off, va, pa, fs, ms, al = struct.unpack_from("<IIQQQQQQ", ph, 56 * i)
    if t == 1 and fs and any(va <= a < va + fs for a in blk):
        f.seek(off); f.write(b"\0" * fs)
EOF
"$M" "$exe" "$TMP/z.core" >"$TMP/z.txt" 2>&1
check_grep "heap zeroed: the statistics' 12 live blocks not found are said" '^not found: the statistics region counts 12 live blocks \(18,096 bytes\)' "$TMP/z.txt"
rm -f "$TMP/z.core"

# ---- notes zeroed: the report says the core has no thread ----
cp "$TMP/f33.core" "$TMP/n.core"
set -- $(readelf -lW "$TMP/n.core" | awk '$1 == "NOTE" { print $2, $5 }')
dd if=/dev/zero of="$TMP/n.core" bs=1 seek=$(($1)) count=$(($2)) conv=notrunc 2>/dev/null
"$M" "$exe" "$TMP/n.core" >"$TMP/n.txt" 2>&1
check_eq "notes zeroed: exit 0" 0 $?
check_grep "notes zeroed: the blocks are still found" '^live blocks: 12, requested bytes: 18,096' "$TMP/n.txt"
check_grep "notes zeroed: no thread is said" "^no thread in the core's notes" "$TMP/n.txt"
check_grep "notes zeroed: libc's module is said to have no file name" '^\[dso\]: a module at 0x[0-9a-f]+ that the core names no file for \(no NT_FILE note\)' "$TMP/n.txt"
rm -f "$TMP/n.core"
# the program headers zeroed: every one reads PT_NULL; the line blamed the preload
cp "$TMP/f33.core" "$TMP/ph.core"
set -- $(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(64); print(struct.unpack_from("<Q",d,32)[0], struct.unpack_from("<H",d,54)[0]*struct.unpack_from("<H",d,56)[0])' "$TMP/ph.core")
dd if=/dev/zero of="$TMP/ph.core" bs=1 seek="$1" count="$2" conv=notrunc 2>/dev/null
oneline "program headers zeroed" 1 'ph\.core: damaged core: none of its [0-9]+ program headers is a memory segment \(PT_LOAD\)' \
	"$M" "$exe" "$TMP/ph.core"
rm -f "$TMP/ph.core"

# ---- the program: symlink, relative path, wrapper, deleted, rebuilt ----
ln -s "$exe" "$TMP/plink"
exact "through a symlink" "$TMP/plink" "$TMP/f33.core"
# without a build-id only names tell: the symlink's target is the core's file
cc -g -O0 -pthread -Wl,--build-id=none -o "$TMP/pnb" "$src"
kcore pnb "$TMP/pnb"
mkdir -p "$TMP/bin2"
ln -s ../pnb "$TMP/bin2/tool"
exact "no build-id, through a symlink of another name" "$TMP/bin2/tool" "$TMP/pnb.core"
oneline "no build-id, another program" 1 'pnb\.core: core of another program: .*/pnb, not /bin/sh' "$M" /bin/sh "$TMP/pnb.core"
rm -f "$TMP/pnb.core"
mkdir -p "$TMP/sub"
(cd "$TMP/sub" && "$M" --format json ../p ../f33.core >"$TMP/x.json" 2>"$TMP/x.err")
check "relative paths from another directory" python3 tests/jstack.py "$TMP/x.json" stack 10000 10 "main:$LA"
printf '#! /bin/sh\n# p - temporary wrapper script for .libs/p\nexec "%s" "$@"\n' "$exe" >"$TMP/wrap"
chmod +x "$TMP/wrap"
oneline "libtool-style wrapper script" 1 "wrap: a script, not an ELF file .*the core is of $exe\$" "$M" "$TMP/wrap" "$TMP/f33.core"
cp "$exe" "$TMP/p2"
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD=$PRE exec ./p2 wait <"$TMP/fifo" >"$TMP/p2.out" 2>/dev/null) &
pid=$!
exec 9>"$TMP/fifo"
wait_for "$TMP/p2.out" ready
rm -f "$TMP/p2"
kill -ABRT "$(pgrep -P $pid -x p2 || echo $pid)" 2>/dev/null
exec 9>&-
wait $pid
mv "$TMP"/core* "$TMP/del.core" 2>/dev/null
check "deleted program: core written" test -s "$TMP/del.core"
oneline "deleted program, gone" 1 'p2: No such file or directory' "$M" "$TMP/p2" "$TMP/del.core"
exact "deleted program, its copy given" "$exe" "$TMP/del.core"
sed 's/^int main(int argc/static int h16_pad(void) { return 1; }\nint main(int argc/' "$src" >"$TMP/p2.c"
cc -g -O0 -pthread -o "$TMP/p2" "$TMP/p2.c"
oneline "deleted program, rebuilt" 1 'core of .*/p2 \(deleted\) with build-id [0-9a-f]+, but .*p2 has build-id [0-9a-f]+ \(rebuilt' \
	"$M" "$TMP/p2" "$TMP/del.core"
rm -f "$TMP/del.core"

# ---- a library replaced on disk while mapped (an upgrade): NT_FILE says
# "(deleted)"; the note said "no usable file (not found)" though the new file
# is there ----
mkdir -p "$TMP/lib"
cc -g -shared -fPIC -DH16_LIB -o "$TMP/lib/libh16.so" tests/prog/hunt16_lib.c
cc -g -o "$TMP/h16l" tests/prog/hunt16_lib.c -L"$TMP/lib" -lh16 -Wl,-rpath,"$TMP/lib"
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD=$PRE exec ./h16l <"$TMP/fifo" >"$TMP/h16l.out" 2>/dev/null) &
pid=$!
exec 9>"$TMP/fifo"
wait_for "$TMP/h16l.out" ready
cc -g -shared -fPIC -DH16_LIB -DH16_V2 -o "$TMP/lib/libh16.so.new" tests/prog/hunt16_lib.c
mv "$TMP/lib/libh16.so.new" "$TMP/lib/libh16.so"
echo >&9; exec 9>&-
wait $pid
mv "$TMP"/core* "$TMP/up.core" 2>/dev/null
"$M" "$TMP/h16l" "$TMP/up.core" >"$TMP/up.txt" 2>&1
check_eq "library upgraded under the process: exit 0" 0 $?
check_grep "library upgraded: the 3 blocks" '^#[0-9]+: 999 bytes \([0-9.]+%\) in 3 blocks, size 333$' "$TMP/up.txt"
check_grep "library upgraded: the new file named, its build-id compared" 'libh16\.so \(deleted\): build-id in core [0-9a-f]+ differs from file on disk [0-9a-f]+ \(.*/lib/libh16\.so, which replaced the one the process had mapped' "$TMP/up.txt"
if command -v gdb >/dev/null; then
	"$M" --symbolizer gdb "$TMP/h16l" "$TMP/up.core" >"$TMP/upg.txt" 2>&1
	check_grep "library upgraded, gdb: the new file's build-id compared" 'libh16\.so \(deleted\): build-id in core [0-9a-f]+ differs from .*/lib/libh16\.so [0-9a-f]+; showing module\+offset' "$TMP/upg.txt"
fi
rm -f "$TMP/up.core"

# ---- stripped: debuglink beside it, build-id directory, strip-all ----
cp "$exe" "$TMP/ps"
objcopy --only-keep-debug "$TMP/ps" "$TMP/ps.debug"
strip -g "$TMP/ps"
objcopy --add-gnu-debuglink="$TMP/ps.debug" "$TMP/ps"
kcore ps "$TMP/ps"
exact "stripped, .debug beside it (debuglink)" "$TMP/ps" "$TMP/ps.core"
id=$(readelf -n "$TMP/ps" | awk '/Build ID/ { print $3 }')
mkdir -p "$TMP/dbg/.build-id/$(echo "$id" | cut -c1-2)"
mv "$TMP/ps.debug" "$TMP/dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
strip --strip-all "$TMP/ps"
"$M" --format json --debug-dir "$TMP/dbg" "$TMP/ps" "$TMP/ps.core" >"$TMP/x.json" 2>"$TMP/x.err"
check "strip-all, debug file under --debug-dir/.build-id" python3 tests/jstack.py "$TMP/x.json" stack 10000 10 "main:$LA"
"$M" --no-cache "$TMP/ps" "$TMP/ps.core" >"$TMP/ps.txt" 2>&1
check_grep "strip-all, no debug file: said" 'ps: no debug info and no function symbols \(stripped\)' "$TMP/ps.txt"
rm -f "$TMP/ps.core"

# ---- the static kit, -static and -static-pie ----
if [ -f "$B/heapann-static.pc" ] && command -v pkg-config >/dev/null; then
	kit=$(PKG_CONFIG_PATH=$B pkg-config --cflags --libs heapann-static)
	for how in static static-pie; do
		if cc -g -O0 -$how -pthread -o "$TMP/$how" "$src" $kit 2>/dev/null; then
			(cd "$TMP" && ulimit -c unlimited && exec "./$how") >"$TMP/$how.out" 2>/dev/null
			set -- $(head -n 1 "$TMP/$how.out"); LA=$4 LB=$5
			mv "$TMP"/core* "$TMP/$how.core" 2>/dev/null
			exact "-$how with the kit" "$TMP/$how" "$TMP/$how.core"
			rm -f "$TMP/$how.core"
		else
			skip_check "-$how with the kit" "no static libc"
		fi
	done
else
	skip_check "static kit" "no heapann-static.pc or pkg-config"
fi
# ---- 32-bit x86 (-m32): the host's libheapann.so cannot load; the static kit
# built with gcc -m32 (make TARGET=, the cross kit's rule) can ----
if echo 'int main(void){return 0;}' | cc -m32 -x c -o "$TMP/m32" - 2>/dev/null; then
	cc -m32 -g -O0 -pthread -o "$TMP/p32" "$src"
	kcore p32 "$TMP/p32"
	oneline "-m32 under the 64-bit preload" 1 "p32\.core: no block annotated .*LD_PRELOAD=$PRE, a library for x86-64 that the loader skipped in a program for i386" \
		"$M" "$TMP/p32" "$TMP/p32.core"
	mkdir -p "$TMP/xbin"
	printf '#!/bin/sh\nexec cc -m32 "$@"\n' >"$TMP/xbin/i686-h16-gcc"
	printf '#!/bin/sh\nexec ar "$@"\n' >"$TMP/xbin/i686-h16-ar"
	chmod +x "$TMP/xbin"/*
	PATH=$TMP/xbin:$PATH make -s TARGET=i686-h16 B="$TMP/xb" cross >"$TMP/xb.log" 2>&1
	kit=$(PKG_CONFIG_PATH=$TMP/xb/i686-h16 pkg-config --cflags --libs heapann-static 2>/dev/null)
	if [ ! -f "$TMP/xb/i686-h16/libheapann.a" ]; then
		# Debian's gcc-multilib gives -m32 its <asm/*.h>; it conflicts with
		# the ARM and MIPS cross compilers, gcc-12-multilib alone lacks them
		skip_check "-m32 -static with the kit" "the kit does not build with cc -m32 ($(grep -m1 error "$TMP/xb.log"))"
	elif cc -m32 -g -O0 -static -pthread -o "$TMP/p32s" "$src" $kit 2>/dev/null; then
		(cd "$TMP" && ulimit -c unlimited && exec ./p32s) >"$TMP/p32s.out" 2>/dev/null
		set -- $(head -n 1 "$TMP/p32s.out"); LA=$4 LB=$5
		mv "$TMP"/core* "$TMP/p32s.core" 2>/dev/null
		exact "-m32 -static with the kit built for it" "$TMP/p32s" "$TMP/p32s.core"
	else
		skip_check "-m32 -static with the kit" "no 32-bit static libc"
	fi
	rm -f "$TMP"/p32*.core
else
	skip_check "-m32" "no gcc-multilib"
fi
kcore f33 "$exe"   # LA, LB of the dynamic program again

# ---- 1,000 threads, a 64 GiB PROT_NONE reservation, a 2 GiB MAP_NORESERVE ----
kcore big "$exe" threads=1000 sparse=2
exact "1,000 threads and sparse mappings" "$exe" "$TMP/big.core"
check_eq "1,000 threads: 1,001 in the core" 1001 "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"])' "$TMP/x.json")"
"$M" "$exe" "$TMP/big.core" >"$TMP/big.txt" 2>&1
check_grep "the 64 GiB reservation is not called a file mapping" '^not dumped \(anonymous memory without write access: PROT_NONE reservations, guard pages\): 68,[0-9,]+ bytes$' "$TMP/big.txt"
check_grep "file mappings not dumped: a few MB" '^not dumped \(read-only file mappings, read from the files\): [0-9],[0-9]{3},[0-9]{3} bytes$' "$TMP/big.txt"
# the statistics-region search read the first word of every page of the roots:
# the 2 GiB hole of the core became 2 GB resident
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o "$TMP/big.rss" "$M" --report=lost "$exe" "$TMP/big.core" >"$TMP/big.lost" 2>/dev/null
	check_eq "lost on a 2 GiB sparse mapping: exit 0" 0 $?
	rss=$(tail -n 1 "$TMP/big.rss")
	check "lost on a 2 GiB sparse mapping: peak RSS under 600 MB (was over 2 GB; $rss KB)" test "$rss" -lt 600000
else
	skip_check "lost: peak RSS" "no /usr/bin/time"
fi
rm -f "$TMP/big.core"

# ---- 200,000 tiny blocks ----
kcore tiny "$exe" tiny=200000
set -- $(head -n 1 "$TMP/tiny.out")
exact "200,000 tiny blocks" "$exe" "$TMP/tiny.core"
check "200,000 x 1 byte at main:$7" python3 tests/jstack.py "$TMP/x.json" stack 200000 200000 "main:$7"
rm -f "$TMP/tiny.core"

# ---- a forked child's core (the parent exits 0) ----
kcore fork "$exe" fork
check_grep "fork: the child aborted" '^child 6$' "$TMP/fork.out"
exact "the forked child's core" "$exe" "$TMP/fork.core"
rm -f "$TMP/fork.core"

# ---- gcore in a signal handler, gcore -a ----
if command -v gdb >/dev/null; then
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD=$PRE "$exe" sig <"$TMP/fifo" >"$TMP/sig.out" 2>/dev/null &
	pid=$!
	exec 9>"$TMP/fifo"
	wait_for "$TMP/sig.out" ready
	make_gcore $pid "$TMP/sig.core"
	command -v gcore >/dev/null && gcore -a -o "$TMP/ga" $pid >/dev/null 2>&1
	echo >&9; exec 9>&-
	wait $pid
	exact "gcore in a signal handler" "$exe" "$TMP/sig.core"
	if [ -s "$TMP/ga.$pid" ]; then
		exact "gcore -a" "$exe" "$TMP/ga.$pid"
	else
		skip_check "gcore -a" "no gcore script"
	fi
	rm -f "$TMP/sig.core" "$TMP/ga.$pid"
else
	skip_check "gcore" "gdb not installed"
fi

# ---- wrong inputs ----
oneline "another program" 1 'f33\.core: core of another program: .*/p \(build-id [0-9a-f]+\), not /bin/sh' "$M" /bin/sh "$TMP/f33.core"
(cd "$TMP" && ulimit -c unlimited && exec "$exe") >/dev/null 2>&1
mv "$TMP"/core* "$TMP/nopre.core" 2>/dev/null
oneline "a core of a run without the preload" 1 'nopre\.core: no block annotated .*the program ran without libheapann' "$M" "$exe" "$TMP/nopre.core"
: >"$TMP/empty"
oneline "an empty core" 1 'empty: empty file' "$M" "$exe" "$TMP/empty"
oneline "an empty program" 1 'empty: empty file, not an ELF file' "$M" "$TMP/empty" "$TMP/f33.core"
oneline "a directory as the core" 1 ': is a directory' "$M" "$exe" "$TMP/sub"
oneline "a core given as a raw dump" 1 'f33\.core: an ELF core file, not a raw dump: give it as mprof-core' \
	"$M" --raw "$TMP/f33.core" --elf "$exe" --base 0x1000
rm -f "$TMP"/*.core
done_testing
