#!/bin/sh
# run-zcore.sh - compressed cores (issue 12, part 7): a gcore of tests/prog/lost_prog.c
# compressed with zstd, gzip and xz (one frame/member/stream, and two in a row) must
# give exactly the plain core's reports (text, JSON, --report=lost, --why through
# the data symbols, --symbolizer gdb) but for the header line's compression note and
# the file name; so must a compressed raw dump. Truncated, damaged, empty and
# non-core compressed files give one line naming the file and exit 1, never a
# crash. $TMPDIR (where the decompressed copy goes) is empty after every run.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"
for tool in zstd xz gzip; do
	command -v $tool >/dev/null && continue
	sh scripts/install-deps.sh zstd xz-utils gzip >/dev/null 2>&1
	command -v $tool >/dev/null || skip "$tool not installed and cannot be installed"
done

MP=$TOP/$B/mprof-core
ZT=$TMP/tmpdir              # $TMPDIR of every mprof-core run: must stay empty
mkdir -p "$ZT"
mp() { TMPDIR=$ZT "$MP" "$@"; }
tmp_empty() { [ -z "$(ls -A "$ZT")" ]; }
# sizes as the header line prints them: 83,480,776
commas() { python3 -c "import sys; print('{:,}'.format(int(sys.argv[1])))" "$1"; }

exe=$TMP/lost_prog
cc -g -O2 -pthread -o "$exe" tests/prog/lost_prog.c || skip "cannot compile lost_prog.c"

# a gcore while it waits at its end (it prints the probe addresses first)
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
LOST_ABORT=2 LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" <"$TMP/fifo" >"$TMP/addrs" &
pid=$!
exec 9>"$TMP/fifo"
n=0; while ! grep -q held0 "$TMP/addrs" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
make_gcore $pid "$TMP/core"
echo go >&9; exec 9>&-
wait $pid
check "gcore written" test -s "$TMP/core"
kept=$(sed -n 's/^kept7 //p' "$TMP/addrs")
size=$(stat -c %s "$TMP/core")
half=$((size / 2 + 12345))

cd "$TMP" || exit 1
zstd -q -c core >core.zst
gzip -c core >core.gz
xz -T1 -c core >core.xz
# two frames / members / streams in a row, split at an odd place
(head -c $half core | zstd -q -c; tail -c +$((half + 1)) core | zstd -q -c) >core2.zst
(head -c $half core | gzip -c; tail -c +$((half + 1)) core | gzip -c) >core2.gz
(head -c $half core | xz -T1 -c; tail -c +$((half + 1)) core | xz -T1 -c) >core2.xz
cd "$TOP" || exit 1

# the plain core's reports
mp "$exe" "$TMP/core" >"$TMP/p.txt" 2>"$TMP/p.err"
check_eq "plain core: exit 0" 0 $?
check_grep "plain core: 2,255 live blocks" "^live blocks: 2,255, requested bytes: 105,760," "$TMP/p.txt"
mp --format=json --report=stacks,lost "$exe" "$TMP/core" >"$TMP/p.json" 2>/dev/null
check_grep "plain core JSON: \"compression\":\"none\"" '"kind":"core","compression":"none",' "$TMP/p.json"
mp --report=lost "$exe" "$TMP/core" >"$TMP/p.lost" 2>/dev/null
mp --why "$kept" "$exe" "$TMP/core" >"$TMP/p.why" 2>/dev/null
check_grep "plain core: --why names g_kept (data symbols)" "start pointer at 0x[0-9a-f]+, g_kept\+0x38 in lost_prog" "$TMP/p.why"
mp --symbolizer=gdb "$exe" "$TMP/core" >"$TMP/p.gdb" 2>/dev/null

# same FILE_A FILE_B: equal but for the first line
same() { tail -n +2 "$1" >"$1.rest"; tail -n +2 "$2" >"$2.rest"; cmp -s "$1.rest" "$2.rest"; }
# same_json FILE_A FILE_B: equal but for "image" and "compression" (the first keys)
same_json() {
	sed 's/^{"program":"[^"]*","image":"[^"]*","kind":"[a-z]*","compression":"[a-z]*",//' "$1" >"$1.rest"
	sed 's/^{"program":"[^"]*","image":"[^"]*","kind":"[a-z]*","compression":"[a-z]*",//' "$2" >"$2.rest"
	[ -s "$1.rest" ] && ! cmp -s "$1" "$1.rest" && cmp -s "$1.rest" "$2.rest"
}

for f in core.zst core.gz core.xz core2.zst core2.gz core2.xz; do
	case $f in *.zst) fmt=zstd ;; *.gz) fmt=gzip ;; *.xz) fmt=xz ;; esac
	z=$TMP/$f
	mp "$exe" "$z" >"$TMP/$f.txt" 2>"$TMP/$f.err"
	check_eq "$f: exit 0" 0 $?
	check_eq "$f: header line says $fmt-compressed and the size" \
		"$z: core ($fmt-compressed, $(commas $size) bytes uncompressed), 64-bit little-endian x86-64, 1 thread" \
		"$(head -n 1 "$TMP/$f.txt")"
	check "$f: text report = the plain core's" same "$TMP/p.txt" "$TMP/$f.txt"
	check "$f: same notes on stderr" cmp -s "$TMP/p.err" "$TMP/$f.err"
	mp --format=json --report=stacks,lost "$exe" "$z" >"$TMP/$f.json" 2>/dev/null
	check_grep "$f: JSON \"compression\":\"$fmt\"" "^\\{\"program\":\"[^\"]*\",\"image\":\"$z\",\"kind\":\"core\",\"compression\":\"$fmt\"," "$TMP/$f.json"
	check "$f: JSON stacks and lost = the plain core's" same_json "$TMP/p.json" "$TMP/$f.json"
	mp --report=lost "$exe" "$z" >"$TMP/$f.lost" 2>/dev/null
	check "$f: --report=lost text = the plain core's" same "$TMP/p.lost" "$TMP/$f.lost"
	mp --why "$kept" "$exe" "$z" >"$TMP/$f.why" 2>/dev/null
	check "$f: --why (root names from the core's modules) = the plain core's" same "$TMP/p.why" "$TMP/$f.why"
	check "$f: \$TMPDIR empty afterwards" tmp_empty
done
# gdb reads the decompressed core through /proc/PID/fd/N of mprof-core
mp --symbolizer=gdb "$exe" "$TMP/core.xz" >"$TMP/x.gdb" 2>/dev/null
check "core.xz --symbolizer=gdb = the plain core's" same "$TMP/p.gdb" "$TMP/x.gdb"
check_grep "--symbolizer=gdb: frames named" "^    drop_blocks \(lost_prog.c:[0-9]+\)" "$TMP/x.gdb"

# the program check works on the compressed core as on the plain one
mp /bin/sh "$TMP/core" >/dev/null 2>"$TMP/p.other"
mp /bin/sh "$TMP/core.zst" >/dev/null 2>"$TMP/z.other"
check_eq "another program: exit 1" 1 $?
check_eq "another program: the plain core's error, for core.zst" \
	"$(sed "s|$TMP/core:|$TMP/core.zst:|" "$TMP/p.other")" "$(cat "$TMP/z.other")"
check_grep "another program: says so" "core of another program" "$TMP/z.other"

# bad_input NAME FILE REGEX: exit 1 (not a signal), one line on stderr that names
# the file and matches REGEX, no sanitizer report, nothing left in $TMPDIR.
bad_input() {
	mp "$exe" "$2" >"$TMP/bad.out" 2>"$TMP/bad.err"
	check_eq "$1: exit 1" 1 $?
	check_eq "$1: one line on stderr" 1 "$(wc -l <"$TMP/bad.err")"
	check_grep "$1: names the file and the problem" "^mprof-core: $2: $3\$" "$TMP/bad.err"
	check "$1: \$TMPDIR empty afterwards" tmp_empty
}
for f in core.zst core.gz core.xz; do
	case $f in *.zst) fmt=zstd ;; *.gz) fmt=gzip ;; *.xz) fmt=xz ;; esac
	zs=$(stat -c %s "$TMP/$f")
	head -c $((zs / 2)) "$TMP/$f" >"$TMP/half.$f"
	bad_input "$f cut in half" "$TMP/half.$f" \
		"$fmt data truncated after $((zs / 2)) bytes \\([0-9]+ bytes decompressed\\)"
	# 8 bytes flipped in the middle: the decoder or the checksum notices
	cp "$TMP/$f" "$TMP/bad.$f"
	python3 - "$TMP/bad.$f" <<'EOF'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); m = len(b) // 2
for i in range(m, m + 8):
    b[i] ^= 0x55
open(p, "wb").write(bytes(b))
EOF
	bad_input "$f with bytes flipped in the middle" "$TMP/bad.$f" \
		"$fmt data corrupt: .* \\(found after [0-9]+ bytes decompressed\\)"
done
: >"$TMP/empty.zst"
bad_input "empty core.zst" "$TMP/empty.zst" "empty file"
gzip -c /etc/passwd >"$TMP/passwd.gz"
bad_input "gzip of /etc/passwd" "$TMP/passwd.gz" "not an ELF file"
mp "$exe" /etc/passwd 2>&1 | sed 's|/etc/passwd|X|' >"$TMP/plainbad"
check_eq "gzip of /etc/passwd: the plain file's error" "$(sed "s|$TMP/passwd.gz|X|" "$TMP/bad.err")" "$(cat "$TMP/plainbad")"
zstd -q -c "$exe" >"$TMP/prog.zst"
bad_input "zstd of the program, not a core" "$TMP/prog.zst" "not a core file \\(an ELF shared object or PIE executable\\)"
# seeded: some random frame headers ask for a window over 128 MiB, which gets
# its own message (the 43-byte regression of run-fuzz-regress); this one does not
python3 -c "import random, sys; r = random.Random(3)
sys.stdout.buffer.write(b'\x28\xb5\x2f\xfd' + bytes(r.getrandbits(8) for _ in range(100000)))" >"$TMP/random.zst"
bad_input "zstd magic and random bytes" "$TMP/random.zst" "zstd data corrupt: .*"
(cat "$TMP/core.gz"; printf 'trailing') >"$TMP/trail.gz"
zs=$(stat -c %s "$TMP/core.gz")
bad_input "gzip with trailing garbage" "$TMP/trail.gz" \
	"gzip data ends at byte $zs of $((zs + 8)): the bytes after it are not gzip"
TMPDIR=$TMP/no-such-dir "$MP" "$exe" "$TMP/core.zst" >/dev/null 2>"$TMP/nodir.err"
check_eq "\$TMPDIR missing: exit 1" 1 $?
check_eq "\$TMPDIR missing: says where it could not write" \
	"mprof-core: $TMP/core.zst: cannot create a temporary file in $TMP/no-such-dir: No such file or directory" \
	"$(cat "$TMP/nodir.err")"

# A compressed raw dump: the heap of a static program (linked through
# heapann-static.pc) dumped by gdb as a JTAG probe would, then gzip'ed and zstd'ed.
if [ -f /usr/lib/x86_64-linux-gnu/libc.a ] && [ -f "$B/heapann-static.pc" ]; then
	sexe=$TMP/massif-static
	cc -g -O1 -static -o "$sexe" examples/massif_example.c $(PKG_CONFIG_PATH=$B pkg-config --libs heapann-static)
	check "raw: heap dumped" heap_dump "$sexe" "$TMP/heap.bin"
	hsize=$(stat -c %s "$TMP/heap.bin")
	gzip -c "$TMP/heap.bin" >"$TMP/heap.bin.gz"
	zstd -q -c "$TMP/heap.bin" >"$TMP/heap.bin.zst"
	mp --raw "$TMP/heap.bin" --elf "$sexe" --base "$start" >"$TMP/r.txt" 2>&1
	mp --format=json --raw "$TMP/heap.bin" --elf "$sexe" --base "$start" >"$TMP/r.json" 2>/dev/null
	check "raw: the program's 13 blocks, 20000 bytes" python3 tests/jstack.py "$TMP/r.json" framed 13 20000
	for f in heap.bin.gz heap.bin.zst; do
		case $f in *.zst) fmt=zstd ;; *) fmt=gzip ;; esac
		mp --raw "$TMP/$f" --elf "$sexe" --base "$start" >"$TMP/$f.txt" 2>&1
		check_eq "raw $f: exit 0" 0 $?
		check_eq "raw $f: header line" \
			"$TMP/$f: raw dump ($fmt-compressed, $(commas $hsize) bytes uncompressed), 64-bit little-endian x86-64" \
			"$(head -n 1 "$TMP/$f.txt")"
		check "raw $f: text report = the plain dump's" same "$TMP/r.txt" "$TMP/$f.txt"
		mp --format=json --raw "$TMP/$f" --elf "$sexe" --base "$start" >"$TMP/$f.json" 2>/dev/null
		check "raw $f: JSON = the plain dump's" same_json "$TMP/r.json" "$TMP/$f.json"
		check "raw $f: \$TMPDIR empty afterwards" tmp_empty
	done
else
	echo "# no static libc or heapann-static.pc: compressed raw dumps not tested"
fi
done_testing
