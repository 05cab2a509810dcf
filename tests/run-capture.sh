#!/bin/sh
# run-capture.sh - the capture's fast paths keep the statistics exact (issue 15):
# a program allocating from more call sites in turn than a thread's recent
# stack slots hold, then from three in a tight rotation, under the preload and
# under HEAPANN_UNWIND=cfi-verify; the per-stack allocation counts and kept
# blocks in the core's statistics must be the ones the program printed.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"

exe=$TMP/cap_sites
cc -g -O2 -fno-optimize-sibling-calls -fno-inline -no-pie -o "$exe" tests/prog/cap_sites.c
check "cap_sites built" test -x "$exe"

for unwind in default cfi-verify; do
	rm -f "$TMP/core"
	env=
	[ $unwind = default ] || env="HEAPANN_UNWIND=$unwind"
	(cd "$TMP" && ulimit -c unlimited && env LD_PRELOAD="$TOP/$B/libheapann.so" $env "$exe" >"$TMP/out" 2>"$TMP/err")
	check "$unwind: kernel core written" test -s "$TMP/core"
	check "$unwind: no unwind mismatch reported" test ! -s "$TMP/err"
	check_eq "$unwind: 12 sites printed" 12 "$(grep -c '^site' "$TMP/out")"
	"$B/mprof-core" --format=json --report=all --top 0 "$exe" "$TMP/core" >"$TMP/j.json" 2>"$TMP/j.err"
	check_eq "$unwind: mprof-core exit 0" 0 $?
	while read -r _ i _ n _ size; do
		check "$unwind: site$i: $n allocs of $size bytes, 1 kept, $((n - 1)) freed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f, n, size = "site" + sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
got = [(l["allocs"], l["frees"], l["kept_blocks"], l["kept_bytes"], l["bytes"])
       for l in d["leaks"] if l["path"][:1] == [f]]
ok = got == [(n, n - 1, 1, size, n * size)]
if not ok:
    sys.stderr.write("%s: %r\n" % (f, got))
sys.exit(0 if ok else 1)
' "$TMP/j.json" "$i" "$n" "$size"
	done <"$TMP/out"
	check "$unwind: statistics agree with the scan" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["statistics"]
sys.exit(0 if s["allocs"] - s["frees"] == d["blocks"] and s["live_bytes"] == d["bytes"] else 1)
' "$TMP/j.json"
done
done_testing
