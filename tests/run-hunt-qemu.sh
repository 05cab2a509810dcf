#!/bin/sh
# run-hunt-qemu.sh - the whole report of a qemu-user core of an ARM32 program:
# tests/prog/hunt_allocs.c linked statically with the kit for
# arm-linux-gnueabihf, run under qemu-arm until abort(), reported by mprof-core
# with the ARM ELF: every site's exact bytes at its function and line, and the
# strdup blocks (ARM's EHABI unwinder stops in libc's strdup, which has no
# unwind entry) shown under strdup, not as blocks without frames. Skips when
# the cross compiler or qemu-arm is missing.
. tests/lib.sh
[ -x "$B/mprof-core" ] || skip "build first"
command -v python3 >/dev/null || skip "python3 not installed"
target=arm-linux-gnueabihf
command -v $target-gcc >/dev/null 2>&1 && command -v qemu-arm >/dev/null 2>&1 ||
	skip "no $target-gcc or qemu-arm"

src=tests/prog/hunt_allocs.c
mark() { grep -n "MARK:$1 " $src | cut -d: -f1; }
make -s TARGET=$target B="$TMP/x" cross >"$TMP/x.log" 2>&1
check_eq "the $target kit builds" 0 $?
exe=$TMP/ha_arm
$target-gcc -std=gnu11 -O1 -g -funwind-tables -static -DHUNT_ABORT -o "$exe" $src \
	$(PKG_CONFIG_PATH="$TMP/x/$target" pkg-config --libs heapann-static) >"$TMP/cc.log" 2>&1
check_eq "the ARM program links" 0 $?
mkdir -p "$TMP/q"
(cd "$TMP/q" && ulimit -c unlimited && exec qemu-arm "$exe" </dev/null >/dev/null 2>&1)
core=$(ls "$TMP"/q/qemu_*.core 2>/dev/null | head -n 1)
[ -n "$core" ] || skip "qemu-arm wrote no core"

J=$TMP/arm.json
"$B/mprof-core" --format json "$exe" "$core" >"$J" 2>"$J.err"
check_eq "json: exit 0" 0 $?
check_eq "json: 32-bit little-endian" "4 little" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["word_size"], d["byte_order"])' "$J")"
for s in calloc:a_calloc:300 grow:a_grow:5000 shrink:a_shrink:40 pm:a_pm:1000 aa:a_aa:640 \
	ma:a_ma:123 va:a_va:333 ra:a_ra:77 zero:a_zero:0 big:a_big:5242880 bigr:a_bigr:2097152; do
	m=${s%%:*}; rest=${s#*:}; fn=${rest%%:*}; bytes=${rest#*:}
	check "arm: $fn, $bytes bytes at line $(mark $m)" python3 tests/jstack.py "$J" stack "$bytes" 1 "$fn:$(mark $m)"
done
# libc's strdup has no unwind entry on ARM: its frame is the only one kept
for s in 12:strdup 6:strndup; do
	check "arm: the ${s%%:*}-byte ${s#*:} block is under ${s#*:}" python3 - "$J" "${s%%:*}" "${s#*:}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["stacks"]:
    if s["bytes"] == int(sys.argv[2]) and s["blocks"] == 1 and s["frames"] and sys.argv[3] in (s["frames"][0].get("function") or ""):
        sys.exit(0)
sys.exit("no stack of %s bytes under %s: %s" % (sys.argv[2], sys.argv[3], [(s["bytes"], [f.get("function") for f in s["frames"][:2]]) for s in d["stacks"]]))
PY
done
done_testing
