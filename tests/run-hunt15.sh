#!/bin/sh
# run-hunt15.sh - programs of other languages and runtimes under the preload,
# each report checked against what the program knows and against memcheck.
# 1. Rust on the system allocator (tests/prog/hunt15_rs.rs): Vec, Box and
#    String blocks from known functions and lines, Box::leak and mem::forget,
#    std::thread threads holding blocks; a kernel core at abort and the exit
#    snapshot. Before, its frames read raw v0 names (std is built with them)
#    or legacy ones with their hash and "$LT$" escapes: now as rustc shows them.
#    Built with rustc's default (legacy) names and with v0 names. gdb's
#    names (--symbolizer gdb) kept legacy hashes and v0 crate disambiguators.
#    Rust's allocation layer (alloc::alloc, alloc::raw_vec, std::alloc, the
#    __rust_alloc shims) is skipped as operator new is: before, every site
#    read alloc::alloc::alloc and the leak table's paths held the layer alone.
# 2. Go with cgo (tests/prog/hunt15_go.go): C.malloc from Go, malloc from C
#    functions Go calls. The walker stops at runtime.asmcgocall (Go's code has
#    no .eh_frame): each stack is the C part, never a wrong Go frame. Go's
#    os.Exit makes the exit_group call itself, so there is no exit snapshot;
#    a kernel core at abort needs GOTRACEBACK=crash. Lost report as memcheck's.
# 3. A GLib thread pool (tests/prog/hunt15_gpool.c): workers allocating with
#    g_malloc and malloc, leaks, finished worker threads; the exit snapshot
#    against memcheck on a copy of libglib without valgrind's client requests
#    (run-real11's way: GLib allocates otherwise under valgrind).
# 4. C++ std::thread workers while main ends with pthread_exit
#    (tests/prog/hunt15_pexit.cc): the exit snapshot against memcheck.
# Each part is skipped when its tool is missing (rustc: Debian's rustc, or
# ~/.cargo/bin/rustc).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the exit snapshot)"
command -v python3 >/dev/null || skip "python3 not installed"
M=$TOP/$B/mprof-core
PRE=$TOP/$B/libheapann.so
# vg [VAR=VALUE...] [MEMCHECK-OPTION...] PROG ARGS...: PROG under memcheck's
# leak check as the lost report is compared with it, VARs in its environment
vg() {
	vg_env=""
	while case $1 in [A-Z]*=*) true ;; *) false ;; esac; do vg_env="$vg_env $1"; shift; done
	# shellcheck disable=SC2086
	env $vg_env valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none \
		--run-libc-freeres=no "$@"
}
have_vg() { command -v valgrind >/dev/null; }
# vs_memcheck NAME OURS LOG VG-ARGS...: when valgrind is here, run vg VG-ARGS
# (its log to LOG) and check the four categories of the lost report OURS
# against it, but glibc's dtvs (32 bytes larger under libheapann)
vs_memcheck() {
	vm_name=$1 vm_ours=$2 vm_log=$3
	shift 3
	have_vg || return 0
	vg "$@" >/dev/null 2>"$vm_log"
	check_cats "$vm_name: the four categories are memcheck's (but the dtvs)" "$vm_ours" "$vm_log" allocate_dtv
}
# no_kcore NAME: the kernel wrote no core here
no_kcore() { skip_check "$1" "none written (core_pattern $(cat /proc/sys/kernel/core_pattern))"; }
# kcore DIR PROG ARGS...: run PROG under the preload in DIR until it aborts;
# the kernel's core is DIR/core (core_pattern "core"), else none
kcore() {
	kc_dir=$1; shift
	rm -f "$kc_dir/core"
	(cd "$kc_dir" && ulimit -c unlimited && LD_PRELOAD=$PRE "$@" >"$kc_dir/kout" 2>"$kc_dir/kerr"; :) 2>/dev/null
	[ -s "$kc_dir/core" ]
}
# snap DIR PROG ARGS...: run PROG under the preload with the exit snapshot in DIR
snap() {
	sn_dir=$1; shift
	mkdir -p "$sn_dir"
	HEAPANN_SNAPSHOT=exit HEAPANN_SNAPSHOT_DIR=$sn_dir LD_PRELOAD=$PRE "$@" >"$sn_dir.out" 2>"$sn_dir.err"
}

# ---- 1. Rust ----------------------------------------------------------------
# $RUSTC, else rustc on PATH (Debian's: 1.63), else rustup's in ~/.cargo/bin
RUSTC=${RUSTC:-$(command -v rustc || { [ -x "$HOME/.cargo/bin/rustc" ] && echo "$HOME/.cargo/bin/rustc"; })}
rs_src=tests/prog/hunt15_rs.rs
rs_line() { grep -n "MARK:$1\$" "$rs_src" | cut -d: -f1; }
# rs_sites NAME REPORT OUT: the program's blocks by site, as the report clusters them
rs_sites() {
	for s in buf:make_buf box:make_box string:make_string leak:leak_box forget:forget_vec \
		node:make_node global:keep_global interior:keep_interior; do
		n=${s%%:*} f=${s#*:}
		check_eq "$1: hunt15_rs::$f (hunt15_rs.rs:$(rs_line "$n")): the program's bytes and blocks" \
			"$(python3 tests/hunt15.py want "$3" "$n")" \
			"$(python3 tests/hunt15.py site "$2" "hunt15_rs::$f (hunt15_rs.rs:$(rs_line "$n"))")"
	done
	check_eq "$1: no frame reads as a mangled Rust name, a hash or an escape" "" \
		"$(python3 tests/hunt15.py raw "$2" | head -n 3)"
}
# rs_layer NAME REPORT LEAKS OUT: Rust's allocation layer (alloc::alloc,
# alloc::raw_vec, std::alloc, the __rust_alloc shims) is the allocator, as
# operator new is: no stack starts in it, and the leak table's paths of 5
# functions reach the program's functions (before, every Rust site read
# alloc::alloc::alloc and its paths held the layer alone)
rs_layer() {
	check_eq "$1: no stack starts inside Rust's allocation layer" "" \
		"$(python3 tests/hunt15.py first "$2" | grep -E '^<?(alloc::alloc::|alloc::raw_vec::|std::alloc::|std::sys::alloc::|__rust_|__rdl_|__rustc::)' | head -n 3)"
	for s in buf:make_buf box:make_box string:make_string leak:leak_box forget:forget_vec \
		node:make_node global:keep_global interior:keep_interior; do
		check_eq "$1: leak table, paths through hunt15_rs::${s#*:}: the program's bytes and blocks" \
			"$(python3 tests/hunt15.py want "$4" "${s%%:*}")" \
			"$(python3 tests/hunt15.py leakpath "$3" "hunt15_rs::${s#*:}")"
	done
}
# rs_lost NAME REPORT: the leaks the program made, in memcheck's categories
rs_lost() {
	check_eq "$1: Box::leak definitely lost" "200 1" \
		"$(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line leak)" "definitely lost")"
	check_eq "$1: mem::forget of a Vec definitely lost" "200 1" \
		"$(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line forget)" "definitely lost")"
	check_eq "$1: a forgotten tree: its root definitely lost, its child indirectly" "48 1 48 1" \
		"$(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line node)" "definitely lost") $(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line node)" "indirectly lost")"
	check_eq "$1: a Box held by a static still reachable" "72 1" \
		"$(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line global)" "still reachable")"
	check_eq "$1: a Box held 8 bytes in possibly lost" "88 1" \
		"$(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line interior)" "possibly lost")"
	check_eq "$1: the threads' Vecs still reachable" "10003 4" \
		"$(python3 tests/hunt14.py sum "$2" "hunt15_rs.rs:$(rs_line buf)" "still reachable")"
}
if [ -z "$RUSTC" ]; then
	skip_check "Rust" "no rustc (Debian's rustc, or rustup's)"
else
	for mangling in legacy v0; do
		d=$TMP/rs-$mangling
		mkdir -p "$d"
		mflag=""
		[ $mangling = v0 ] && mflag="-C symbol-mangling-version=v0"
		# shellcheck disable=SC2086
		if ! "$RUSTC" -g -C opt-level=1 $mflag -o "$d/rs" "$rs_src" >"$d/cc" 2>&1; then
			skip_check "Rust, $mangling names" "rustc failed: $(head -n 1 "$d/cc")"
			continue
		fi
		# the kernel's core at abort, with the threads waiting
		if kcore "$d" "$d/rs" abort; then
			"$M" --top 0 "$d/rs" "$d/core" >"$d/k.txt" 2>"$d/k.err"
			check_eq "Rust $mangling, kernel core: exit 0" 0 $?
			rs_sites "Rust $mangling, kernel core" "$d/k.txt" "$d/kout"
			"$M" --report=leaks "$d/rs" "$d/core" >"$d/kt.txt" 2>/dev/null
			rs_layer "Rust $mangling, kernel core" "$d/k.txt" "$d/kt.txt" "$d/kout"
			"$M" --report=lost --top 0 "$d/rs" "$d/core" >"$d/kl.txt" 2>/dev/null
			rs_lost "Rust $mangling, kernel core, lost" "$d/kl.txt"
			check_eq "Rust $mangling, kernel core, lost: no raw names" "" "$(python3 tests/hunt15.py raw "$d/kl.txt" | head -n 3)"
			if [ $mangling = legacy ] && command -v gdb >/dev/null; then
				# gdb: one frame per address (no inline chain), so only the
				# calls that were not inlined read the program's own lines
				"$M" --symbolizer gdb --top 0 "$d/rs" "$d/core" >"$d/g.txt" 2>/dev/null
				# gdb's demangler kept legacy hashes and v0 crate disambiguators
				check_eq "Rust, kernel core, --symbolizer gdb: no hash or crate disambiguator" "" \
					"$(python3 tests/hunt15.py raw "$d/g.txt" | head -n 3)"
				check_eq "Rust, kernel core, --symbolizer gdb: worker's calls at their lines" "9003 3 288 3 1503 3" \
					"$(for n in wbuf wbox wstring; do python3 tests/hunt15.py site "$d/g.txt" "hunt15_rs::worker (hunt15_rs.rs:$(rs_line $n))"; done | tr '\n' ' ' | sed 's/ $//')"
			fi
		else
			no_kcore "Rust $mangling, kernel core"
		fi
		# a known limit (README, Snapshots): with the abort snapshot on,
		# libheapann's crash handlers are installed first and Rust's std,
		# which installs its stack-overflow handler (and sigaltstack) only
		# where the handler is the default, leaves them: a stack overflow
		# then dies of SIGSEGV (139) without Rust's message and without a
		# snapshot, where it prints "has overflowed its stack" and aborts
		# (134). A change here is news: update the README.
		if [ $mangling = legacy ]; then
			mkdir -p "$d/ov"
			LD_PRELOAD=$PRE "$d/rs" overflow >/dev/null 2>"$d/ov.err"
			ov1="$? $(grep -c 'has overflowed its stack' "$d/ov.err")"
			HEAPANN_SNAPSHOT=abort HEAPANN_SNAPSHOT_DIR=$d/ov LD_PRELOAD=$PRE "$d/rs" overflow >/dev/null 2>"$d/ov2.err"
			ov2="$? $(grep -c 'has overflowed its stack' "$d/ov2.err") $(ls "$d/ov" | wc -l)"
			check_eq "Rust: a stack overflow under the preload is Rust's own (message, abort)" "134 1" "$ov1"
			check_eq "known limit: with HEAPANN_SNAPSHOT=abort it dies of SIGSEGV, no message, no snapshot" "139 0 0" "$ov2"
		fi
		# the exit snapshot, and memcheck at exit
		snap "$d/snap" "$d/rs"
		"$M" --top 0 "$d/rs" "$d"/snap/*.core >"$d/s.txt" 2>/dev/null
		check_eq "Rust $mangling, exit snapshot: exit 0" 0 $?
		rs_sites "Rust $mangling, exit snapshot" "$d/s.txt" "$d/snap.out"
		"$M" --report=leaks "$d/rs" "$d"/snap/*.core >"$d/st.txt" 2>/dev/null
		rs_layer "Rust $mangling, exit snapshot" "$d/s.txt" "$d/st.txt" "$d/snap.out"
		"$M" --report=lost --top 0 "$d/rs" "$d"/snap/*.core >"$d/sl.txt" 2>/dev/null
		rs_lost "Rust $mangling, exit snapshot, lost" "$d/sl.txt"
		if [ $mangling = legacy ]; then
			vs_memcheck "Rust, exit snapshot" "$d/sl.txt" "$d/vg" "$d/rs"
			have_vg && rs_lost "Rust, memcheck" "$d/vg"
		fi
	done
fi

# ---- 2. Go with cgo ------------------------------------------------------------
go_src=tests/prog/hunt15_go.go
go_line() { grep -n "MARK:$1\$" "$go_src" | cut -d: -f1; }
if ! command -v go >/dev/null; then
	skip_check "Go" "no go (golang-go)"
else
	d=$TMP/go
	mkdir -p "$d"
	cp "$go_src" "$d/"
	printf 'module hunt15go\ngo 1.19\n' >"$d/go.mod"
	if ! (cd "$d" && env GOCACHE="$d/cache" GOPATH="$d/gopath" GOFLAGS=-mod=mod GO111MODULE=on GOTOOLCHAIN=local \
		go build -o hgo . >"$d/cc" 2>&1); then
		skip_check "Go" "go build failed: $(head -n 1 "$d/cc")"
	else
		LD_PRELOAD=$PRE "$d/hgo" >"$d/run.out" 2>"$d/run.err"
		check_eq "Go: runs under the preload" "0 10" "$? $(grep -c '^site ' "$d/run.out")"
		# known limit: Go's own exit_group, no exit snapshot (news if it changes)
		snap "$d/snap" "$d/hgo"
		check_eq "Go: os.Exit leaves no exit snapshot (Known limits)" "" "$(ls "$d/snap")"
		"$TOP/$B/heapann" "$d/hgo" >/dev/null 2>"$d/heapann.err"
		check_grep "Go: heapann finds no snapshot and names Go's own exit system call" \
			"no snapshot of pid [0-9]+ .*its own exit system call, as Go programs do" "$d/heapann.err"
		if kcore "$d" env GOTRACEBACK=crash "$d/hgo" abort; then
			"$M" --top 0 "$d/hgo" "$d/core" >"$d/k.txt" 2>"$d/k.err"
			check_eq "Go, kernel core: exit 0" 0 $?
			check_eq "Go, kernel core: C.malloc from Go: the program's bytes and blocks, one stack" \
				"$(($(python3 tests/hunt15.py want "$d/kout" gomalloc | cut -d' ' -f1) + 555)) 8" \
				"$(python3 tests/hunt15.py site "$d/k.txt" "$(grep -o '_cgo_[0-9a-f]*_Cfunc__Cmalloc' "$d/k.txt" | head -n 1) (_cgo_export.c:30)")"
			check_eq "Go, kernel core: malloc in C called from Go: c_make, its line, c_keep's" \
				"$(python3 tests/hunt15.py want "$d/kout" ckeep)" \
				"$(python3 tests/hunt15.py site "$d/k.txt" "c_keep (hunt15_go.go:$(go_line ckeep))")"
			check_grep "Go, kernel core: c_make at its line" "^    c_make \(hunt15_go.go:$(go_line cmake)\) \[hgo\]" "$d/k.txt"
			# Go's CUs are not in .debug_aranges (gcc's C CUs are): libdwfl
			# gave the C CU before, where Go's code has no line (no line)
			check_grep "Go, kernel core: runtime.asmcgocall at its line (cache cold)" \
				"^    runtime\.asmcgocall \(asm_amd64\.s:[0-9]+\) \[hgo\]" "$d/k.txt"
			# every stack of the program's blocks ends at runtime.asmcgocall:
			# no frame of Go's stack is guessed
			check_eq "Go, kernel core: the stacks end at runtime.asmcgocall, no Go frame after it" "" \
				"$(awk '/^#/ { if (last != "" && prog && last !~ /^runtime\.asmcgocall/) print last; last = ""; prog = 0; next }
					/^    / { last = $1; if ($0 ~ /Cfunc__Cmalloc|c_make/) prog = 1 }
					END { if (prog && last !~ /^runtime\.asmcgocall/) print last }' "$d/k.txt")"
			"$M" --report=lost --top 0 "$d/hgo" "$d/core" >"$d/kl.txt" 2>/dev/null
			check_grep "Go, kernel core, lost: runtime.asmcgocall at its line (cache warm)" \
				"^    runtime\.asmcgocall \(asm_amd64\.s:[0-9]+\) \[hgo\]" "$d/kl.txt"
			# its stack stops at runtime.asmcgocall: C.malloc's line, not main's
			check_eq "Go, kernel core, lost: the dropped block (MARK:golost) alone definitely lost" "555 1" \
				"$(python3 tests/hunt14.py sum "$d/kl.txt" "_cgo_export.c:30" "definitely lost")"
			vs_memcheck "Go, kernel core at abort" "$d/kl.txt" "$d/vg" GOTRACEBACK=crash "$d/hgo" abort
		else
			no_kcore "Go, kernel core"
		fi
	fi
fi

# ---- 3. a GLib thread pool -----------------------------------------------------
gp_src=tests/prog/hunt15_gpool.c
gp_line() { grep -n "MARK:$1 " "$gp_src" | cut -d: -f1; }
glib_lib=$(pkg-config --variable=libdir glib-2.0 2>/dev/null)
if ! pkg-config --exists glib-2.0 2>/dev/null || [ ! -f "$glib_lib/libglib-2.0.so.0" ]; then
	skip_check "GLib thread pool" "no glib-2.0 (libglib2.0-dev)"
elif ! cc -g -O2 -o "$TMP/gp" "$gp_src" $(pkg-config --cflags --libs glib-2.0) 2>"$TMP/gp.cc"; then
	skip_check "GLib thread pool" "cannot compile $gp_src"
else
	d=$TMP/glib
	mkdir -p "$d/nocr"
	python3 tests/real11.py nocr "$glib_lib/libglib-2.0.so.0" "$d/nocr/libglib-2.0.so.0" >/dev/null
	snap "$d/snap" env G_SLICE=always-malloc LD_LIBRARY_PATH="$d/nocr" "$TMP/gp"
	check_eq "GLib: the program ran" "0 48" "$? $(grep -c '^site ' "$d/snap.out")"
	"$M" --top 0 "$TMP/gp" "$d"/snap/*.core >"$d/s.txt" 2>/dev/null
	for s in keep:gp_keep drop:gp_drop elem:gp_array; do
		n=${s%%:*} f=${s#*:}
		[ $n = elem ] && l=$(gp_line elem) || l=$(gp_line $n)
		check_eq "GLib, exit snapshot: $f (hunt15_gpool.c:$l): the program's bytes and blocks" \
			"$(python3 tests/hunt15.py want "$d/snap.out" $n)" \
			"$(python3 tests/hunt15.py site "$d/s.txt" "$f (hunt15_gpool.c:$l)")"
	done
	"$M" --report=lost --top 0 "$TMP/gp" "$d"/snap/*.core >"$d/l.txt" 2>/dev/null
	check_grep "GLib, exit snapshot: the finished workers' stacks are read from their last sp" \
		"; left out: the stacks of [0-9]+ finished threads below their last sp" "$d/l.txt"
	check_eq "GLib, lost: malloc'd and dropped, definitely lost" "$(python3 tests/hunt15.py want "$d/snap.out" drop)" \
		"$(python3 tests/hunt14.py sum "$d/l.txt" "hunt15_gpool.c:$(gp_line drop)" "definitely lost")"
	check_eq "GLib, lost: a dropped GPtrArray's elements indirectly lost" "$(python3 tests/hunt15.py want "$d/snap.out" elem)" \
		"$(python3 tests/hunt14.py sum "$d/l.txt" "hunt15_gpool.c:$(gp_line elem)" "indirectly lost")"
	check_eq "GLib, lost: g_malloc'd blocks in a global still reachable" "$(python3 tests/hunt15.py want "$d/snap.out" keep)" \
		"$(python3 tests/hunt14.py sum "$d/l.txt" "hunt15_gpool.c:$(gp_line keep)" "still reachable")"
	vs_memcheck "GLib, exit snapshot" "$d/l.txt" "$d/vg" G_SLICE=always-malloc LD_LIBRARY_PATH="$d/nocr" \
		--aspace-minaddr=0x200000000 "$TMP/gp"
	# the same at abort, from the kernel's core
	mkdir -p "$d/k"
	if kcore "$d/k" env G_SLICE=always-malloc LD_LIBRARY_PATH="$d/nocr" "$TMP/gp" abort; then
		"$M" --report=lost --top 0 "$TMP/gp" "$d/k/core" >"$d/kl.txt" 2>/dev/null
		check_eq "GLib, kernel core, lost: a dropped GPtrArray's elements indirectly lost" \
			"$(python3 tests/hunt15.py want "$d/k/kout" elem)" \
			"$(python3 tests/hunt14.py sum "$d/kl.txt" "hunt15_gpool.c:$(gp_line elem)" "indirectly lost")"
		vs_memcheck "GLib, kernel core at abort" "$d/kl.txt" "$d/vga" G_SLICE=always-malloc \
			LD_LIBRARY_PATH="$d/nocr" --aspace-minaddr=0x200000000 "$TMP/gp" abort
	else
		no_kcore "GLib, kernel core"
	fi
fi

# ---- 4. C++: std::thread, main ends with pthread_exit ---------------------------
px_src=tests/prog/hunt15_pexit.cc
px_line() { grep -n "MARK:$1\$" "$px_src" | cut -d: -f1; }
if ! command -v g++ >/dev/null || ! g++ -g -O2 -pthread -o "$TMP/px" "$px_src" 2>"$TMP/px.cc"; then
	skip_check "C++ pthread_exit" "no g++, or it cannot compile $px_src"
else
	d=$TMP/pexit
	snap "$d/snap" "$TMP/px"
	check_eq "C++ pthread_exit: the program ran" "0 10" "$? $(grep -c '^site ' "$d/snap.out")"
	"$M" --report=lost --top 0 "$TMP/px" "$d"/snap/*.core >"$d/l.txt" 2>/dev/null
	check_eq "C++ pthread_exit, lost: new[] in the workers, held by a global, still reachable" \
		"$(python3 tests/hunt15.py want "$d/snap.out" new)" \
		"$(python3 tests/hunt14.py sum "$d/l.txt" "hunt15_pexit.cc:$(px_line new)" "still reachable")"
	check_eq "C++ pthread_exit, lost: main's block left in its dead frames definitely lost" "700 1" \
		"$(python3 tests/hunt14.py sum "$d/l.txt" "hunt15_pexit.cc:$(px_line maindead)" "definitely lost")"
	check_eq "C++ pthread_exit, lost: main's block in a global still reachable" "600 1" \
		"$(python3 tests/hunt14.py sum "$d/l.txt" "hunt15_pexit.cc:$(px_line mainkept)" "still reachable")"
	vs_memcheck "C++ pthread_exit, exit snapshot" "$d/l.txt" "$d/vg" "$TMP/px"
	# a known limit (README, stale words in live frames): at abort, the
	# blocked workers' dropped blocks are held only by stale words in the red
	# zone below their stack pointers (scribble's dead frame); memcheck marked
	# those words undefined when pause() pushed its frames (the red zone below a
	# new stack pointer is new stack to it) and skips them (definitely lost),
	# the core cannot tell (still reachable). A change here is news: update the README.
	mkdir -p "$d/k"
	if kcore "$d/k" "$TMP/px" abort; then
		"$M" --report=lost --top 0 "$TMP/px" "$d/k/core" >"$d/kl.txt" 2>/dev/null
		check_eq "C++ pthread_exit, kernel core at abort: main's dead-frame block definitely lost" "700 1" \
			"$(python3 tests/hunt14.py sum "$d/kl.txt" "hunt15_pexit.cc:$(px_line maindead)" "definitely lost")"
		check_eq "known limit: 3 blocked workers' blocks held by stale red-zone words still reachable" "1503 3" \
			"$(python3 tests/hunt14.py sum "$d/kl.txt" "hunt15_pexit.cc:$(px_line drop)" "still reachable")"
		if have_vg; then
			vg "$TMP/px" abort >/dev/null 2>"$d/vga"
			check_eq "known limit: memcheck at abort reads the 4 workers' dropped blocks definitely lost" "2006 4" \
				"$(python3 tests/hunt14.py sum "$d/vga" "hunt15_pexit.cc:$(px_line drop)" "definitely lost")"
			check_eq "C++ pthread_exit, kernel core at abort: the rest is memcheck's (but the dtvs)" \
				"$(python3 tests/real10.py cats "$d/kl.txt" "$d/vga" allocate_dtv | sed -n 2p)" \
				"$(python3 tests/real10.py cats "$d/kl.txt" "$d/vga" allocate_dtv | sed -n 1p | python3 -c "
import sys
out = []
for part in sys.stdin.read().strip().rstrip(';').split(';'):
    name, b, n = part.rsplit(' ', 2)
    b, n = int(b), int(n)
    if name == 'definitely lost':
        b, n = b + 1503, n + 3
    if name == 'still reachable':
        b, n = b - 1503, n - 3
    out.append('%s %d %d' % (name, b, n))
print(';'.join(out) + ';')")"
		fi
	else
		no_kcore "C++ pthread_exit, kernel core"
	fi
fi

done_testing
