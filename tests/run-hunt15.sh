#!/bin/sh
# run-hunt15.sh - programs of other languages and runtimes under the preload,
# each report checked against what the program knows and against memcheck.
# 1. Rust on the system allocator (tests/prog/hunt15_rs.rs): Vec, Box and
#    String blocks from known functions and lines, Box::leak and mem::forget,
#    std::thread threads holding blocks; a kernel core at abort and the exit
#    snapshot. Before, its frames read raw v0 names (std is built with them)
#    or legacy ones with their hash and "$LT$" escapes: now as rustc shows them.
#    Built with rustc's default (legacy) names and with v0 names.
# Each part is skipped when its tool is missing (rustc: Debian's rustc, or
# ~/.cargo/bin/rustc).
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
[ "$(uname -m)" = x86_64 ] || skip "x86-64 only (the exit snapshot)"
command -v python3 >/dev/null || skip "python3 not installed"
M=$TOP/$B/mprof-core
PRE=$TOP/$B/libheapann.so
vg() { valgrind --leak-check=full --show-leak-kinds=all --leak-check-heuristics=none --run-libc-freeres=no "$@"; }
have_vg() { command -v valgrind >/dev/null; }
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
RUSTC=$(command -v rustc || { [ -x "$HOME/.cargo/bin/rustc" ] && echo "$HOME/.cargo/bin/rustc"; } || echo "")
[ -x /root/.cargo/bin/rustc ] && [ -z "$RUSTC" ] && RUSTC=/root/.cargo/bin/rustc
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
			"$M" --report=lost --top 0 "$d/rs" "$d/core" >"$d/kl.txt" 2>/dev/null
			rs_lost "Rust $mangling, kernel core, lost" "$d/kl.txt"
			check_eq "Rust $mangling, kernel core, lost: no raw names" "" "$(python3 tests/hunt15.py raw "$d/kl.txt" | head -n 3)"
			if [ $mangling = legacy ] && command -v gdb >/dev/null; then
				# gdb: one frame per address (no inline chain), so only the
				# calls that were not inlined read the program's own lines
				"$M" --symbolizer gdb --top 0 "$d/rs" "$d/core" >"$d/g.txt" 2>/dev/null
				check_eq "Rust, kernel core, --symbolizer gdb: worker's calls at their lines" "9003 3 288 3 1503 3" \
					"$(python3 tests/hunt15.py site "$d/g.txt" "hunt15_rs::worker (hunt15_rs.rs:78)") $(python3 tests/hunt15.py site "$d/g.txt" "hunt15_rs::worker (hunt15_rs.rs:79)") $(python3 tests/hunt15.py site "$d/g.txt" "hunt15_rs::worker (hunt15_rs.rs:80)")"
			fi
		else
			skip_check "Rust $mangling, kernel core" "none written (core_pattern $(cat /proc/sys/kernel/core_pattern))"
		fi
		# the exit snapshot, and memcheck at exit
		snap "$d/snap" "$d/rs"
		"$M" --top 0 "$d/rs" "$d"/snap/*.core >"$d/s.txt" 2>/dev/null
		check_eq "Rust $mangling, exit snapshot: exit 0" 0 $?
		rs_sites "Rust $mangling, exit snapshot" "$d/s.txt" "$d/snap.out"
		"$M" --report=lost --top 0 "$d/rs" "$d"/snap/*.core >"$d/sl.txt" 2>/dev/null
		rs_lost "Rust $mangling, exit snapshot, lost" "$d/sl.txt"
		if have_vg && [ $mangling = legacy ]; then
			vg "$d/rs" >/dev/null 2>"$d/vg"
			rs_lost "Rust, memcheck" "$d/vg"
			check_cats "Rust, exit snapshot: the four categories are memcheck's (but the dtvs)" "$d/sl.txt" "$d/vg" allocate_dtv
		fi
	done
fi

done_testing
