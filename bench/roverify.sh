#!/bin/sh
# roverify.sh - what comparing an ET_EXEC's read-only sections with a core
# without NT_FILE costs (the read-only skip, cli_target_ro_verify): a non-PIE
# program with 64 MiB of .rodata (BENCH_RO_MIB), run under libheapann with
# coredump_filter 0x3f so gcore dumps its file-backed pages, its NT_FILE note's
# type written over; then, alternated in one run from the page cache,
# mprof-core -q --format json on it and the same with BENCH_BASE_MPROF (another
# build, e.g. one without the comparison). Prints the medians and their ratio.
# Environment: B [build], BENCH_RO_MIB [64], BENCH_RO_ROUNDS [20],
# BENCH_BASE_MPROF [none: the new build alone].
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
MIB=${BENCH_RO_MIB:-64}
ROUNDS=${BENCH_RO_ROUNDS:-20}
MPROF=$(pwd)/$B/mprof-core
LIB=$(pwd)/$B/libheapann.so
echo "== read-only comparison: a core without NT_FILE, $MIB MiB of .rodata dumped"
for c in gcore python3; do
	command -v $c >/dev/null 2>&1 || { echo "   skipped: $c not installed"; exit 0; }
done
[ -x "$MPROF" ] && [ -f "$LIB" ] || { echo "   skipped: build first"; exit 0; }
D=$(mktemp -d /tmp/roverify.XXXXXX) || exit 1
trap 'rm -rf "$D"' EXIT
cat >"$D/big.c" <<CEOF
#include <stdio.h>
#include <stdlib.h>
static const unsigned char tab[$MIB << 20] = { 1, 2, 3 };
int main(int argc, char **argv)
{
	void *p = malloc(100);
	char line[8];

	printf("%d ready\n", tab[argc * 1000] + (p != NULL));
	fflush(stdout);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	free(p);
	return 0;
}
CEOF
cc -O0 -no-pie -o "$D/big" "$D/big.c" || { echo "   skipped: cannot link a non-PIE"; exit 0; }
mkfifo "$D/fifo"
LD_PRELOAD=$LIB sh -c 'echo 0x3f >/proc/self/coredump_filter; exec "$0"' "$D/big" <"$D/fifo" >"$D/out" &
pid=$!
exec 9>"$D/fifo"
n=0; while [ ! -s "$D/out" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
gcore -o "$D/core" $pid >/dev/null 2>&1
echo >&9; exec 9>&-
wait $pid
python3 - "$D/core.$pid" "$D/nf.core" "$D/big" "$MPROF" "${BENCH_BASE_MPROF:-}" "$ROUNDS" <<'PY'
import statistics, struct, subprocess, sys, time
core, out, prog, new, old, rounds = sys.argv[1:7]
d = bytearray(open(core, "rb").read())
phoff, = struct.unpack_from("<Q", d, 0x20)
phentsize, phnum = struct.unpack_from("<HH", d, 0x36)
for i in range(phnum):
    typ, _fl, off, _va, _pa, fsz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
    o = off
    while typ == 4 and o + 12 <= off + fsz:
        nsz, dsz, nt = struct.unpack_from("<III", d, o)
        if nt == 0x46494c45:
            struct.pack_into("<I", d, o + 8, 0x4b4e3131)
        o += 12 + ((nsz + 3) & ~3) + ((dsz + 3) & ~3)
open(out, "wb").write(d)
bins = [b for b in (old, new) if b]
t = {b: [] for b in bins}
for _ in range(int(rounds)):
    for b in bins:
        s = time.perf_counter()
        subprocess.run([b, "-q", "--format", "json", prog, out], stdout=subprocess.DEVNULL, check=True)
        t[b].append(time.perf_counter() - s)
m = {b: statistics.median(t[b]) for b in bins}
print("   new: median %.4f s wall over %s rounds" % (m[new], rounds))
if old:
    print("   base (%s): median %.4f s; new/base %.2fx" % (old, m[old], m[new] / m[old]))
PY
