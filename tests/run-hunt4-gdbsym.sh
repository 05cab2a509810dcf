#!/bin/sh
# run-hunt4-gdbsym.sh - --symbolizer=gdb against libdw on the same cores of
# tests/prog/hunt4_gdbsym.c (a program and its own library; their frames hold
# no inlined code, so gdb's single frame per address must equal libdw's). Built
# -O0 PIE, -O2 non-PIE, -O2 stripped with its debug info found by
# .gnu_debuglink and by build-id under --debug-dir; and the -O0 core reported
# with the program copied under another name with a space in it (gdb named
# its module after the core's path, libdw after the file given). Compared: the
# program's and the library's frames of every stack (function, file, line,
# module, offset) in the JSON, their rows of the direct and leak tables, their
# lines of the text, lost and folded reports, --addr on a block and on a
# global, and the exact sites the program knows. libc's frames are left out:
# gdb gives no inline chains and may pick another line there (README).
. tests/lib.sh
M=$B/mprof-core
command -v gdb >/dev/null 2>&1 || sh scripts/install-deps.sh gdb >/dev/null 2>&1
command -v gdb >/dev/null 2>&1 || skip "gdb missing"
src=tests/prog/hunt4_gdbsym.c
line() { grep -n "MARK:$1 \*/" $src | cut -d: -f1; }
L_leaf=$(line leaf) L_mid=$(line mid) L_mm=$(line main_mid) L_lib=$(line lib) L_ml=$(line main_lib) L_main=$(line main)

# own FILE: the frames of the program and its library in a --format json report
own() {
	python3 - "$1" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
mods = ("libh4g.so",)
for s in sorted(d["stacks"], key=lambda s: (s["bytes"], s["blocks"])):
    fr = [f for f in s["frames"] if f.get("module") and
          (os.path.basename(f["module"]) in mods or "libc.so" not in f["module"] and "ld-linux" not in f["module"])]
    print(s["blocks"], s["bytes"], " | ".join("%s %s:%s %s %s" % (f.get("function"), os.path.basename(f.get("file") or "-"),
          f.get("line"), os.path.basename(f["module"]), f["offset"]) for f in fr))
for r in sorted(d.get("direct", []), key=lambda r: r["function"]):
    if r["function"] in ("leaf", "mid", "main", "lib_alloc"):
        print("direct", r["function"], r["bytes"], r["kept_bytes"], r["calls"])
for r in sorted(d.get("leaks", []), key=lambda r: r["path"]):
    if r["path"][0] in ("leaf", "lib_alloc", "main"):
        print("leak", "<-".join(r["path"]), r["kept_bytes"], r["kept_blocks"], r["allocs"])
PY
}

# compare NAME EXE CORE [OPTIONS...]: every comparison of one core
compare() {
	name=$1 exe=$2 core=$3; shift 3
	for sy in dw gdb; do
		$M --symbolizer=$sy "$@" --report=stacks,direct,leaks --format json "$exe" "$core" \
			>"$TMP/$sy.json" 2>"$TMP/$sy.err"
		own "$TMP/$sy.json" >"$TMP/$sy.own"
		$M --symbolizer=$sy "$@" --report=stacks,lost "$exe" "$core" 2>/dev/null |
			grep -E '\[(h4g|my prog|libh4g\.so)\]' | sort >"$TMP/$sy.text"
		$M --symbolizer=$sy "$@" --format folded --folded-lines "$exe" "$core" 2>/dev/null |
			grep -v 'IO_' | sort >"$TMP/$sy.folded"
		$M --symbolizer=$sy "$@" --addr "$baddr" --addr "$gaddr" "$exe" "$core" 2>/dev/null |
			sed -n '/^address/,$p' >"$TMP/$sy.addr"
	done
	check_eq "$name: the JSON's own frames and table rows agree" "" "$(diff "$TMP/dw.own" "$TMP/gdb.own")"
	check_eq "$name: the text and lost reports' own frames agree" "" "$(diff "$TMP/dw.text" "$TMP/gdb.text")"
	check_eq "$name: the folded stacks agree" "" "$(diff "$TMP/dw.folded" "$TMP/gdb.folded")"
	check_eq "$name: --addr agrees" "" "$(diff "$TMP/dw.addr" "$TMP/gdb.addr")"
	check_grep "$name: leaf's stack, exact" \
		"^5 200 leaf hunt4_gdbsym.c:$L_leaf [^|]* \\| mid hunt4_gdbsym.c:$L_mid [^|]* \\| main hunt4_gdbsym.c:$L_mm " "$TMP/gdb.own"
	check_grep "$name: lib_alloc's stack, exact" \
		"^3 99 lib_alloc hunt4_gdbsym.c:$L_lib libh4g.so [^|]* \\| main hunt4_gdbsym.c:$L_ml " "$TMP/gdb.own"
	check_grep "$name: calloc's block, exact" "^1 63 main hunt4_gdbsym.c:$L_main " "$TMP/gdb.own"
	check_grep "$name: direct row of leaf" "^direct leaf 200 200 5$" "$TMP/gdb.own"
	check_grep "$name: --addr names the block's stack" "^        leaf \\(hunt4_gdbsym.c:$L_leaf\\)" "$TMP/gdb.addr"
	check_grep "$name: --addr names the global" "keep\\+0x8 \\(variable of 128 bytes\\)" "$TMP/gdb.addr"
}

# build NAME CFLAGS...: the library and the program into $TMP/NAME/
build() {
	d=$TMP/$1; shift
	mkdir -p "$d" &&
	cc -g -fPIC -shared -DHUNT4_LIB $(echo "$@" | sed 's/-fno-pie//; s/-no-pie//') -o "$d/libh4g.so" $src &&
	cc -g "$@" -o "$d/h4g" $src -L"$d" -lh4g -Wl,-rpath,"$d"
}

# addresses for --addr: the first block + 3 (JSON --blocks) and keep + 8
addrs() {
	baddr=$($M --format json --blocks "$1" "$2" 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)
b = min(d['block_list'], key=lambda b: int(b['address'], 16) if b['size'] == 40 else 1 << 64)
print(hex(int(b['address'], 16) + 3))")
	gaddr=$(python3 - "$2" "$1" <<'PY'
import subprocess, sys
core, exe = sys.argv[1], sys.argv[2]
out = subprocess.run(["gdb", "-batch", "-nx", "-q", "-iex", "set auto-load off", exe, core,
                      "-ex", "print/x (unsigned long)&keep + 8"], capture_output=True, text=True).stdout
print([l for l in out.splitlines() if l.startswith("$1")][0].split()[-1])
PY
)
}

check "build -O0 PIE" build o0 -O0
gcore_waiting "$TMP/o0.core" "$TMP/o0/h4g"
addrs "$TMP/o0/h4g" "$TMP/o0.core"
compare "-O0 PIE" "$TMP/o0/h4g" "$TMP/o0.core"
mkdir -p "$TMP/re named"
cp "$TMP/o0/h4g" "$TMP/re named/my prog"
compare "-O0 PIE, the program under another name" "$TMP/re named/my prog" "$TMP/o0.core"
check_grep "another name: frames in [my prog] with gdb too" '^    leaf \(hunt4_gdbsym.c:[0-9]+\) \[my prog\]$' "$TMP/gdb.text"

check "build -O2 non-PIE" build o2 -O2 -fno-pie -no-pie
gcore_waiting "$TMP/o2.core" "$TMP/o2/h4g"
addrs "$TMP/o2/h4g" "$TMP/o2.core"
compare "-O2 non-PIE" "$TMP/o2/h4g" "$TMP/o2.core"

# stripped, the program and its library, their debug info apart: by
# .gnu_debuglink in a --debug-dir, then by build-id
check "build -O2 PIE" build st -O2 -Wl,--build-id
gcore_waiting "$TMP/st.core" "$TMP/st/h4g"
addrs "$TMP/st/h4g" "$TMP/st.core"
mkdir -p "$TMP/dbg" "$TMP/bid"
# split F: F's debug info into the build-id tree and into $TMP/dbg/NAME.debug
split() {
	id=$(readelf -n "$1" | awk '/Build ID/ { print $3 }')
	mkdir -p "$TMP/bid/.build-id/$(echo $id | cut -c1-2)"
	objcopy --only-keep-debug "$1" "$TMP/bid/.build-id/$(echo $id | cut -c1-2)/$(echo $id | cut -c3-).debug"
	objcopy --only-keep-debug "$1" "$TMP/dbg/$(basename "$1").debug"
	cp "$1" "$1.keep"
}
split "$TMP/st/h4g"
split "$TMP/st/libh4g.so"
for f in h4g libh4g.so; do
	objcopy --strip-debug --add-gnu-debuglink="$TMP/dbg/$f.debug" "$TMP/st/$f"
done
check_eq "stripped: no DWARF left" 0 "$(readelf -S "$TMP/st/h4g" "$TMP/st/libh4g.so" | grep -c debug_info)"
compare "stripped, .gnu_debuglink" "$TMP/st/h4g" "$TMP/st.core" --debug-dir "$TMP/dbg"
for f in h4g libh4g.so; do
	cp "$TMP/st/$f.keep" "$TMP/st/$f"
	objcopy --strip-debug "$TMP/st/$f"
done
compare "stripped, build-id" "$TMP/st/h4g" "$TMP/st.core" --debug-dir "$TMP/bid"
done_testing
