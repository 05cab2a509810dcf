#!/bin/sh
# run-hunt2-raw.sh - a raw dump that ends inside a block, as a probe dumps
# whatever range it is told: the committed firmware fixtures (fixtures/fw:
# 32-bit ARM little-endian, 32-bit MIPS big-endian) cut with head -c inside
# every block's header and inside every block's data, before the seeded
# overflow. The end of a dump is not heap corruption: a header the dump ends in
# is counted as cut off (JSON headers_cut), a block whose data runs past the end
# is still a live block, nothing is damaged and the exit status is 0. The blocks
# expected are those of the whole dump below the cut.
. tests/lib.sh
M=$B/mprof-core
[ -x "$M" ] || skip "no $M (build first)"
command -v python3 >/dev/null || skip "python3 not installed"

for fx in arm mips; do
	info=fixtures/fw/$fx.info bin=fixtures/fw/$fx.bin elf=$TMP/$fx.elf
	gzip -dc fixtures/fw/$fx.elf.gz >"$elf"
	base=$(sed -n 's/^base=//p' "$info") culprit=$(sed -n 's/^culprit=//p' "$info")
	"$M" --format json --blocks --raw "$bin" --elf "$elf" --base "$base" >"$TMP/$fx.json" 2>/dev/null
	# every block below the culprit: LEN_HDR (3 bytes short of its header's end)
	# LEN_DATA (half its data) BLOCKS_BEFORE BYTES_BEFORE SIZE
	python3 - "$TMP/$fx.json" "$base" "$culprit" >"$TMP/$fx.cuts" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base, culprit = int(sys.argv[2], 0), int(sys.argv[3], 0)
bl = sorted((int(b["address"], 16), b["size"]) for b in d["block_list"])
n = by = 0
for a, s in bl:
    if a >= culprit:
        break
    if s >= 2:
        print(a - 3 - base, a + s // 2 - base, n, by, s)
    n += 1
    by += s
PY
	ncuts=$(wc -l <"$TMP/$fx.cuts")
	check "$fx: blocks to cut in (at least 10)" test "$ncuts" -ge 10
	bad=0
	while read -r lh ld n by s; do
		head -c "$lh" "$bin" >"$TMP/cut.bin"
		"$M" --format json --raw "$TMP/cut.bin" --elf "$elf" --base "$base" >"$TMP/cut.json" 2>"$TMP/cut.err"
		rc=$?
		if [ "$n" -eq 0 ]; then
			# nothing but a cut header: no block, exit 1 with the one-line error
			[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/cut.err")" -eq 1 ] ||
				{ bad=$((bad + 1)); echo "# $fx cut at $lh: exit $rc"; }
		else
			got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["blocks"], d["bytes"], d["damaged_headers"], d["headers_cut"])' "$TMP/cut.json")
			[ $rc -eq 0 ] && [ "$got" = "$n $by 0 1" ] ||
				{ bad=$((bad + 1)); echo "# $fx cut at $lh (in a header): exit $rc, got '$got', expected '$n $by 0 1'"; }
		fi
		head -c "$ld" "$bin" >"$TMP/cut.bin"
		"$M" --format json --raw "$TMP/cut.bin" --elf "$elf" --base "$base" >"$TMP/cut.json" 2>"$TMP/cut.err"
		rc=$?
		got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["blocks"], d["bytes"], d["damaged_headers"], d["headers_cut"])' "$TMP/cut.json" 2>/dev/null)
		[ $rc -eq 0 ] && [ "$got" = "$((n + 1)) $((by + s)) 0 0" ] ||
			{ bad=$((bad + 1)); echo "# $fx cut at $ld (in a block's data): exit $rc, got '$got', expected '$((n + 1)) $((by + s)) 0 0'"; }
	done <"$TMP/$fx.cuts"
	check_eq "$fx: $ncuts blocks cut in their header and in their data: exact blocks, bytes, no damage, exit 0" 0 "$bad"

	# the text says what was cut
	lh=$(sed -n 3p "$TMP/$fx.cuts" | cut -d' ' -f1)
	head -c "$lh" "$bin" >"$TMP/cut.bin"
	"$M" --raw "$TMP/cut.bin" --elf "$elf" --base "$base" >"$TMP/cut.txt" 2>&1
	check_grep "$fx: text: one header cut off, no damage" \
		"^headers cut off by the end of the dumped memory \(not read, not damage\): 1\$" "$TMP/cut.txt"
	check_grep "$fx: text: damaged headers: 0" "damaged headers: 0\$" "$TMP/cut.txt"
done
done_testing
