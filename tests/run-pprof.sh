#!/bin/sh
# run-pprof.sh - --format pprof (issue 12) read back by the tool that consumes it,
# `go tool pprof` (-raw, -top, -traces): exact objects and bytes per stack for
# the Massif manual's example (kernel core and gcore), a program with two levels
# of inlined frames that frees part of what it allocates (alloc_* from the
# statistics region against inuse_*), the same without the statistics region, a
# core with a damaged header, a C++ program through a shared library (demangled
# names), and a raw dump of a static program. Also: the wire format itself
# (string table, ids), build-ids against readelf, Location addresses against the
# return addresses, pprof naming the frames again from the files, and the errors.
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
command -v gdb >/dev/null || skip "gdb not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v go >/dev/null || sh scripts/install-deps.sh golang-go
command -v go >/dev/null || skip "go (golang-go) not installed: no go tool pprof"
command -v readelf >/dev/null || skip "readelf (binutils) not installed"

# go writes nothing outside the test's directory and never uses the network
export HOME="$TMP" GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOENV="$TMP/goenv" \
	GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off GOTELEMETRY=off PPROF_TMPDIR="$TMP"
pprof() { go tool pprof "$@" 2>>"$TMP/pprof.err"; }
R() { r_name=$1; shift; check "$r_name" python3 tests/pprof_raw.py "$@"; }
# raw NAME: go tool pprof -raw of $TMP/NAME.pb.gz into $TMP/NAME.raw
raw() { pprof -raw "$TMP/$1.pb.gz" >"$TMP/$1.raw"; }
# gcore_waiting after removing the previous program's output: lib.sh's helper
# waits for $TMP/out to be non-empty, and the old one would let it take the core
# before the new program is ready
gw() { rm -f "$TMP/out"; gcore_waiting "$@"; }
# readelf's build-id of FILE
buildid() { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1; }
# every mapping's build-id equals the one readelf reads from its file
all_buildids() {
	awk '/^Mappings/ { m = 1; next } m && NF >= 4 { print $3, $4 }' "$1" >"$TMP/maps"
	[ -s "$TMP/maps" ] || return 1
	while read -r f id; do
		[ "$(buildid "$f")" = "$id" ] || { echo "    # $f: $id, readelf: $(buildid "$f")"; return 1; }
	done <"$TMP/maps"
}
# the Location whose first line is FUNC:LINE has address ADDR (hex)
loc_addr() {
	python3 - "$1" "$2" "$3" <<'EOF'
import sys
sys.path.insert(0, "tests")
import pprof_raw
p = pprof_raw.parse_raw(sys.argv[1])
fn, line = sys.argv[2].rsplit(":", 1)
hits = [l["addr"] for l in p["locs"].values() if l["lines"] and l["lines"][0][:1] == (fn,) and l["lines"][0][2] == int(line)]
sys.exit(0 if hits == [int(sys.argv[3], 16)] else 1)
EOF
}
# the return address of the frame FUNC:LINE in mprof-core's JSON stacks report
json_addr() {
	python3 -c "
import json, sys
d = json.load(open('$1'))
a = {f['addr'] for s in d['stacks'] for f in s['frames'] if f['function'] == '${2%:*}' and f.get('line') == ${2##*:}}
print(a.pop() if len(a) == 1 else 'none')"
}

# ---- the Massif manual's example ----
src=examples/massif_example.c
line() { grep -n "MARK:$1 " "$2" | cut -d: -f1; }
Lg=$(line g $src); Lf=$(line f $src); Lfg=$(line f-calls-g $src); Lm=$(line main $src)
Lmf=$(line main-calls-f $src); Lmg=$(line main-calls-g $src)
exe=$TMP/massif
cc -g -O2 -o "$exe" "$src"

massif_expect() { # NAME WHAT
	x=$TMP/$1.raw
	R "$2: accepted by go tool pprof, wire format as the spec says" "$TMP/$1.pb.gz" wire
	R "$2: four sample types, alloc_* first" "$x" types alloc_objects/count alloc_space/bytes \
		inuse_objects/count inuse_space/bytes
	R "$2: 4 samples" "$x" nsamples 4
	R "$2: 13 blocks, 20000 bytes in all" "$x" total 13,20000,13,20000
	R "$2: main's 10 x 1000 B" "$x" sample 10,10000,10,10000 "main:$Lm"
	R "$2: g from f" "$x" sample 1,4000,1,4000 "g:$Lg" "f:$Lfg" "main:$Lmf"
	R "$2: g from main" "$x" sample 1,4000,1,4000 "g:$Lg" "main:$Lmg"
	R "$2: f" "$x" sample 1,2000,1,2000 "f:$Lf" "main:$Lmf"
	check "$2: no malloc in any location" sh -c "! grep -Eq ' (malloc|__libc_malloc) ' '$x'"
	R "$2: the program's mapping has its build-id" "$x" mapping "$exe" "$(buildid "$exe")"
	check "$2: every mapping's build-id is its file's (readelf -n)" all_buildids "$x"
	check "$2: the program's mapping comes first (mapping[0] is the main binary)" \
		sh -c "grep -A1 '^Mappings' '$x' | tail -n 1 | grep -q '^1: .* $exe '"
	check "$2: the default sample type is inuse_space" grep -q 'inuse_space/bytes\[dflt\]' "$x"
	check_grep "$2: period type space/bytes, period 1" '^PeriodType: space bytes' "$x"
	check_grep "$2: period 1" '^Period: 1$' "$x"
}

rm -f "$TMP/core"
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" abort) 2>/dev/null
check "massif: kernel core written" test -s "$TMP/core"
mv "$TMP/core" "$TMP/kcore"
"$B/mprof-core" --format pprof -o "$TMP/mk.pb.gz" "$exe" "$TMP/kcore" 2>"$TMP/err"
check_eq "massif kernel core: exit 0" 0 $?
check_eq "massif kernel core: nothing on stderr" "" "$(cat "$TMP/err")"
check "massif kernel core: gzip data" sh -c "gzip -t '$TMP/mk.pb.gz'"
raw mk
massif_expect mk "massif kernel core"
R "massif kernel core: a comment names the core" "$TMP/mk.raw" comment "from core $TMP/kcore\$"
R "massif kernel core: a comment says where alloc_* comes from" "$TMP/mk.raw" comment \
	"^alloc_\*: every allocation since start, from libheapann's statistics region \(13 allocations, 20,000 bytes\)"

gw "$TMP/gcore" "$exe" wait
check "massif: gcore written" test -s "$TMP/gcore"
"$B/mprof-core" --format pprof -o "$TMP/mg.pb.gz" "$exe" "$TMP/gcore" 2>"$TMP/err"
check_eq "massif gcore: exit 0" 0 $?
raw mg
massif_expect mg "massif gcore"

# -top, as a user reads it: exact bytes with -unit=B, objects with -sample_index
pprof -top -unit=B "$TMP/mg.pb.gz" >"$TMP/top"
check_grep "-top: main 10000 B flat of 20000 B" '^ +10000B +50\.00% +50\.00% +20000B +100% +main$' "$TMP/top"
check_grep "-top: g 8000 B flat" '^ +8000B +40\.00% +90\.00% +8000B +40\.00% +g$' "$TMP/top"
check_grep "-top: f 2000 B flat, 6000 B under it" '^ +2000B +10\.00% +100% +6000B +30\.00% +f$' "$TMP/top"
check_grep "-top: the total" 'Showing nodes accounting for 20000B, 100% of 20000B total' "$TMP/top"
pprof -top -sample_index=alloc_objects "$TMP/mg.pb.gz" >"$TMP/top"
check_grep "-top alloc_objects: main 10 of 13" '^ +10 +76\.92% +76\.92% +13 +100% +main$' "$TMP/top"
check_grep "-top alloc_objects: the header" '^Type: alloc_objects' "$TMP/top"
pprof -top -symbolize=none -unit=B "$TMP/mg.pb.gz" >"$TMP/topn"
check_eq "-symbolize=none: go tool pprof accepts it" 0 $?
check_grep "-symbolize=none: the names are ours" '^ +8000B +40\.00% +90\.00% +8000B +40\.00% +g$' "$TMP/topn"

# Location addresses: the return address minus 1 (in the call instruction)
"$B/mprof-core" --format json "$exe" "$TMP/gcore" >"$TMP/mg.json" 2>/dev/null
ra=$(json_addr "$TMP/mg.json" "g:$Lg")
check "the return address into g is known" test "$ra" != none
check "Location address of g's call of malloc = return address - 1" \
	loc_addr "$TMP/mg.raw" "g:$Lg" "$(printf '%x' $((ra - 1)))"

# pprof names the frames again from the files: a profile made with a stripped copy
# of the program has bare addresses; pprof's local symbolizer, using our mappings
# (start, limit, offset, build-id) and the unstripped file the core names, finds
# the same functions and lines.
strip -o "$TMP/massif.stripped" "$exe"
"$B/mprof-core" -q --format pprof -o "$TMP/ms.pb.gz" "$TMP/massif.stripped" "$TMP/gcore"
check_eq "stripped program: exit 0" 0 $?
pprof -raw -symbolize=none "$TMP/ms.pb.gz" >"$TMP/ms-none.raw"
R "stripped: the program's mapping claims no names (so pprof may name them)" "$TMP/ms-none.raw" \
	mapping "$exe" "$(buildid "$exe")" ""
check "stripped: g's location has no line before pprof names it" sh -c \
	"! python3 tests/pprof_raw.py '$TMP/ms-none.raw' location 'g:$Lg' 2>/dev/null"
pprof -raw -symbolize=local "$TMP/ms.pb.gz" >"$TMP/ms-local.raw"
R "stripped, -symbolize=local: pprof names g at its line" "$TMP/ms-local.raw" location "g:$Lg"
R "stripped, -symbolize=local: f's call of g" "$TMP/ms-local.raw" location "f:$Lfg"
R "stripped, -symbolize=local: f's own malloc" "$TMP/ms-local.raw" location "f:$Lf"
check "stripped, -symbolize=local: g's address is still the return address - 1" \
	loc_addr "$TMP/ms-local.raw" "g:$Lg" "$(printf '%x' $((ra - 1)))"

# ---- two levels of inlining, frees, the statistics region ----
psrc=tests/prog/pprof_prog.c
Lna=$(line node_alloc $psrc); Lnn=$(line node_new $psrc); Lbl=$(line build_list $psrc)
Lch=$(line churn $psrc); Lv=$(line victims $psrc)
Lmb=$(line main-build $psrc); Lmc=$(line main-churn $psrc); Lmv=$(line main-victims $psrc)
pexe=$TMP/pprof_prog
cc -g -O2 -o "$pexe" "$psrc"
gw "$TMP/pcore" "$pexe" wait
check "inline program: gcore written" test -s "$TMP/pcore"
"$B/mprof-core" --format pprof -o "$TMP/p.pb.gz" "$pexe" "$TMP/pcore" 2>"$TMP/err"
check_eq "inline program: exit 0" 0 $?
raw p
x=$TMP/p.raw
R "inline program: wire format" "$TMP/p.pb.gz" wire
R "inline program: 3 samples" "$x" nsamples 3
R "inline program: 130 allocations of 8600 B, 60 live blocks of 4120 B" "$x" total 130,8600,60,4120
R "inline program: 25 nodes of 48 B through two inlined helpers" "$x" sample 25,1200,25,1200 \
	"node_alloc:$Lna" "node_new:$Lnn" "build_list:$Lbl" "main:$Lmb"
R "inline program: the inline chain is one Location, innermost first" "$x" location \
	"node_alloc:$Lna" "node_new:$Lnn" "build_list:$Lbl"
R "inline program: churn allocated 100 x 64 B, 30 still live" "$x" sample 100,6400,30,1920 \
	"churn:$Lch" "main:$Lmc"
R "inline program: 5 x 200 B" "$x" sample 5,1000,5,1000 "victims:$Lv" "main:$Lmv"
check "inline program: every mapping's build-id is its file's" all_buildids "$x"
pprof -traces -unit=B "$TMP/p.pb.gz" >"$TMP/traces"
check_grep "-traces: the inlined frames are frames of their own" '^ +1200B +node_alloc \(inline\)$' "$TMP/traces"
check_grep "-traces: the middle inline level" '^ +node_new \(inline\)$' "$TMP/traces"
check_grep "-traces: the function they are inlined into" '^ +build_list$' "$TMP/traces"
pprof -top -unit=B -sample_index=alloc_space "$TMP/p.pb.gz" >"$TMP/top"
check_grep "-top alloc_space: churn 6400 B" '^ +6400B +74\.42% +74\.42% +6400B +74\.42% +churn$' "$TMP/top"
pprof -top -unit=B -sample_index=inuse_space "$TMP/p.pb.gz" >"$TMP/top"
check_grep "-top inuse_space: churn 1920 B" '^ +1920B +46\.60% +46\.60% +1920B +46\.60% +churn$' "$TMP/top"
check_grep "-top inuse_space: node_alloc 1200 B (inlined, its own line)" '^ +1200B +29\.13% .* node_alloc \(inline\)$' "$TMP/top"

# without the statistics region: the two inuse types only
HEAPANN_STATS=0 gw "$TMP/ncore" "$pexe" wait
"$B/mprof-core" -q --format pprof -o "$TMP/n.pb.gz" "$pexe" "$TMP/ncore"
check_eq "no statistics region: exit 0" 0 $?
raw n
R "no statistics region: wire format" "$TMP/n.pb.gz" wire
R "no statistics region: inuse_* only" "$TMP/n.raw" types inuse_objects/count inuse_space/bytes
R "no statistics region: churn's 30 live blocks" "$TMP/n.raw" sample 30,1920 "churn:$Lch" "main:$Lmc"
R "no statistics region: 60 blocks, 4120 B" "$TMP/n.raw" total 60,4120
R "no statistics region: the comment says so" "$TMP/n.raw" comment '^no statistics region in the image: inuse_\* only$'

# --ignore-fn leaves a stack out of both, and says so
"$B/mprof-core" -q --format pprof --ignore-fn churn -o "$TMP/i.pb.gz" "$pexe" "$TMP/pcore"
raw i
R "--ignore-fn churn: 2 samples, 30 allocations and 30 blocks fewer" "$TMP/i.raw" total 30,2200,30,2200
R "--ignore-fn churn: a comment says what was left out" "$TMP/i.raw" comment \
	'^--ignore-fn left out 30 blocks, 1,920 bytes \(alloc_\*: 100 allocations, 6,400 bytes\)$'
R "--ignore-fn churn: the alloc_* comment gives the samples' sums" "$TMP/i.raw" comment \
	'^alloc_\*: .*\(30 allocations, 2,200 bytes\)$'

# ---- a damaged header ----
gw "$TMP/dcore" "$pexe" wait damage
check "damaged: gcore written" test -s "$TMP/dcore"
"$B/mprof-core" -q --format pprof -o "$TMP/d.pb.gz" "$pexe" "$TMP/dcore"
check_eq "damaged: exit 3 (corruption found), the profile written all the same" 3 $?
raw d
R "damaged: wire format" "$TMP/d.pb.gz" wire
R "damaged: 5 victims allocated, 4 counted live (the damaged one is skipped)" "$TMP/d.raw" sample \
	5,1000,4,800 "victims:$Lv" "main:$Lmv"
R "damaged: the other stacks exact" "$TMP/d.raw" sample 100,6400,30,1920 "churn:$Lch" "main:$Lmc"
R "damaged: a comment says a header was skipped" "$TMP/d.raw" comment \
	'^1 damaged headers skipped: their blocks are not counted'
"$B/mprof-core" --format json "$pexe" "$TMP/dcore" >"$TMP/d.json" 2>/dev/null
check "damaged: the stacks report agrees (59 live blocks)" python3 tests/jstack.py "$TMP/d.json" total 59 3920

# ---- C++ through a shared library, threads, an inlined helper under new ----
if command -v g++ >/dev/null; then
	L() { grep -En "MARK:$2( |\$)" "$1" | cut -d: -f1; }
	Llib=$(L tests/prog/e2e_lib.c lib)
	Lbuild=$(L tests/prog/e2e_main.cc build); Lmw=$(L tests/prog/e2e_main.cc make_widgets)
	Lthr=$(L tests/prog/e2e_main.cc thread); Lml=$(L tests/prog/e2e_main.cc main-lib)
	Lmain_w=$(L tests/prog/e2e_main.cc main-widgets)
	cc -g -O1 -fPIC -shared -o "$TMP/libe2e.so" tests/prog/e2e_lib.c
	g++ -g -O1 -pie -fPIE -o "$TMP/e2e" tests/prog/e2e_main.cc -L"$TMP" -le2e -Wl,-rpath,"$TMP" -pthread
	gw "$TMP/ecore" "$TMP/e2e" wait
	check "C++: gcore written" test -s "$TMP/ecore"
	"$B/mprof-core" -q --format pprof -o "$TMP/e.pb.gz" "$TMP/e2e" "$TMP/ecore"
	check_eq "C++: exit 0" 0 $?
	raw e
	x=$TMP/e.raw
	R "C++: wire format" "$TMP/e.pb.gz" wire
	# pprof shortens C++ names that contain "::" (drops the parameters) by default;
	# -symbolize=none shows them as we wrote them
	R "C++: 20 widgets under new, inlined shapes::build (pprof's short names)" "$x" sample 20,800,20,800 \
		"shapes::build:$Lbuild" "shapes::make_widgets:$Lmw" "main:$Lmain_w"
	pprof -raw -symbolize=none "$TMP/e.pb.gz" >"$TMP/e-none.raw"
	R "C++: the demangled caller whole, with -symbolize=none" "$TMP/e-none.raw" sample 20,800,20,800 \
		"shapes::build:$Lbuild" "shapes::make_widgets(shapes::Widget**, int):$Lmw" "main:$Lmain_w"
	R "C++: shapes::build inlined into make_widgets: one Location" "$TMP/e-none.raw" location \
		"shapes::build:$Lbuild" "shapes::make_widgets(shapes::Widget**, int):$Lmw"
	R "C++: through the shared library" "$x" sample 5,1500,5,1500 "lib_alloc:$Llib" "main:$Lml"
	R "C++: 4 threads x 10 x 128 B" "$x" sample 40,5120,40,5120 "thread_work(void*):$Lthr"
	R "C++: the program's mapping and build-id" "$x" mapping "$TMP/e2e" "$(buildid "$TMP/e2e")"
	R "C++: the library's own mapping and build-id" "$x" mapping "$TMP/libe2e.so" "$(buildid "$TMP/libe2e.so")" "[FN][FL][LN][IN]"
	check "C++: every mapping's build-id is its file's" all_buildids "$x"
	pprof -top -unit=B "$TMP/e.pb.gz" >"$TMP/top"
	check_grep "C++ -top: the thread function, demangled" ' 5120B .* thread_work\(void\*\)$' "$TMP/top"
	check_grep "C++ -top: the inlined helper" ' 800B .* shapes::build \(inline\)$' "$TMP/top"
else
	echo "# g++ not installed: C++ part left out" >&2
fi

# ---- a raw dump of a static program: the mapping comes from the ELF file ----
if [ -f /usr/lib/x86_64-linux-gnu/libc.a ] && [ -f "$B/heapann-static.pc" ]; then
	sexe=$TMP/massif-static
	cc -g -O1 -static -o "$sexe" "$src" $(PKG_CONFIG_PATH=$B pkg-config --libs heapann-static)
	rm -f "$TMP/fifo" "$TMP/sout"; mkfifo "$TMP/fifo"
	"$sexe" wait <"$TMP/fifo" >"$TMP/sout" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while [ ! -s "$TMP/sout" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	heap=$(grep '\[heap\]' /proc/$pid/maps | head -n 1)
	check "raw dump: the static program has a heap" test -n "$heap"
	start=0x${heap%%-*}
	rest=${heap#*-}; end=0x${rest%% *}
	gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' -p $pid \
		-ex "dump binary memory $TMP/heap.bin $start $end" -ex detach >/dev/null 2>&1
	echo >&9; exec 9>&-
	wait $pid
	check "raw dump: heap dumped" test -s "$TMP/heap.bin"
	"$B/mprof-core" -q --format pprof -o "$TMP/r.pb.gz" --raw "$TMP/heap.bin" --elf "$sexe" --base "$start"
	check_eq "raw dump: exit 0" 0 $?
	raw r
	R "raw dump: wire format" "$TMP/r.pb.gz" wire
	R "raw dump: no statistics region in a heap dump: inuse_* only" "$TMP/r.raw" types \
		inuse_objects/count inuse_space/bytes
	R "raw dump: g from f" "$TMP/r.raw" sample 1,4000 "g:$Lg" "f:$Lfg" "main:$Lmf"
	R "raw dump: main's 10 x 1000 B" "$TMP/r.raw" sample 10,10000 "main:$Lm"
	R "raw dump: g from main" "$TMP/r.raw" sample 1,4000 "g:$Lg" "main:$Lmg"
	R "raw dump: f" "$TMP/r.raw" sample 1,2000 "f:$Lf" "main:$Lmf"
	# static libc allocates before main, before the unwinder is ready
	R "raw dump: stacks without frames under their own name" "$TMP/r.raw" location "(no frames recorded)"
	R "raw dump: the ELF's mapping and build-id" "$TMP/r.raw" mapping "$sexe" "$(buildid "$sexe")"
	# a static program's code is at its link address: offset and address as in its
	# executable PT_LOAD
	ph=$(readelf -lW "$sexe" | awk '$1 == "LOAD" && / R E / { print $2, $3; exit }')
	check "raw dump: the mapping is the executable PT_LOAD (offset, address)" sh -c \
		"grep -A1 '^Mappings' '$TMP/r.raw' | tail -n 1 | grep -q \"^1: 0x0*$(printf '%x' ${ph#* })/0x[0-9a-f]*/0x0*$(printf '%x' ${ph% *}) \""
fi

# ---- errors ----
"$B/mprof-core" --format pprof -o "$TMP/nodir/x.pb.gz" "$exe" "$TMP/gcore" 2>"$TMP/err"
check_eq "unwritable -o: exit 1" 1 $?
check_grep "unwritable -o: one line naming the file" "^mprof-core: $TMP/nodir/x.pb.gz: No such file or directory$" "$TMP/err"
if [ -w /dev/full ]; then
	"$B/mprof-core" --format pprof -o /dev/full "$exe" "$TMP/gcore" 2>"$TMP/err"
	check_eq "full disk: exit 1" 1 $?
	check_eq "full disk: one line naming the file" "mprof-core: error writing /dev/full" \
		"$(cat "$TMP/err")"
fi
"$B/mprof-core" --format pprof -o "$TMP/t.pb.gz" "$exe" "$TMP/nosuchcore" 2>"$TMP/err"
check_eq "missing core: exit 1" 1 $?
check "missing core: no profile left behind that looks valid" sh -c "! gzip -t '$TMP/t.pb.gz' 2>/dev/null"
done_testing
