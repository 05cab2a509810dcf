#!/bin/sh
# run-mi.sh - gdb over MI (mi/, sym/gdb.c) end to end:
#  1. the client against fake gdbs (no gdb needed): replies and the stream text
#     attributed to them, pipelining, time-outs, a dying gdb, gdb missing;
#  2. with gdb: the test programs (C with a shared library, C++, a static program
#     read as a raw dump's ELF) print their own call sites (function, line); the
#     gdb symbolizer must name each exactly, and agree field by field with libdw;
#  3. a rebuilt library (another build-id) is flagged, never misnamed;
#  4. mi_snapshot of a running program under the preload: exactly its blocks, and
#     the program keeps running; clear errors for no process, no permission, no gdb.
. tests/lib.sh
MIGDB=$B/tests/tools/migdb
[ -x "$MIGDB" ] || skip "build first ($MIGDB missing)"

# ---- 1. the client against fake gdbs ------------------------------------------
# A fake that replays a recorded transcript: the banner up to the first prompt,
# then one block up to the next prompt per command read.
cat >"$TMP/replay" <<'EOF'
#!/bin/sh
exec 3<"$FAKE_TRANSCRIPT"
block() {
	while IFS= read -r l <&3; do
		printf '%s\n' "$l"
		case "$l" in "(gdb)"*) return 0 ;; esac
	done
	return 1
}
block
while IFS= read -r cmd; do block || exit 0; done
EOF
cat >"$TMP/hang" <<'EOF'
#!/bin/sh
echo '(gdb) '
exec sleep 60
EOF
cat >"$TMP/mute" <<'EOF'
#!/bin/sh
exec sleep 60
EOF
cat >"$TMP/die" <<'EOF'
#!/bin/sh
echo '(gdb) '
read -r cmd
echo "fake: cannot go on" >&2
exit 3
EOF
cat >"$TMP/crash" <<'EOF'
#!/bin/sh
echo '(gdb) '
read -r cmd
kill -9 $$
EOF
cat >"$TMP/wrongtoken" <<'EOF'
#!/bin/sh
echo '(gdb) '
read -r cmd
echo '77^done'
echo '(gdb) '
exec sleep 60
EOF
chmod +x "$TMP/replay" "$TMP/hang" "$TMP/mute" "$TMP/die" "$TMP/crash" "$TMP/wrongtoken"

for mode in one batch; do
	flag=""; [ $mode = batch ] && flag=--batch
	FAKE_TRANSCRIPT=fixtures/mi/symbolize.txt "$MIGDB" --gdb "$TMP/replay" --timeout 5000 $flag \
		--exec c1 c2 c3 c4 c5 c6 c7 c8 c9 >"$TMP/replay.$mode" 2>&1
	check_eq "replay ($mode): 9 replies and a clean close" "10" "$(grep -c '^reply\|^close 0' "$TMP/replay.$mode")"
	check_grep "replay ($mode): console text goes to the next result" \
		'^reply 2 class=done console=\[main in section \.text\\n\] log=\[\] async=0$' "$TMP/replay.$mode"
	check_grep "replay ($mode): ^error with gdb's message and its log line" \
		'^reply 5 class=error msg=\[/nonexistent/core: No such file or directory\.\] console=\[\] log=\[/nonexistent/core: No such file or directory\.\\n\]' "$TMP/replay.$mode"
	check_grep "replay ($mode): warning on the log, notify record counted" \
		'^reply 8 class=done console=\[Source directories searched: /nonexistent-dir:\$cdir:\$cwd\\n\] log=\[Warning: /nonexistent-dir: No such file or directory\.\\n\] async=1$' "$TMP/replay.$mode"
	check_grep "replay ($mode): unknown command" '^reply 6 class=error msg=\[Undefined MI command: no-such-command\]' "$TMP/replay.$mode"
done

t0=$(date +%s)
"$MIGDB" --gdb "$TMP/hang" --timeout 300 --exec -gdb-version >"$TMP/hang.out" 2>&1
check_eq "hanging gdb: exit 1" 1 $?
check_grep "hanging gdb: time-out error naming the command" \
	'^error 4: gdb did not answer "1-gdb-version" within 300 ms \(killed it\)$' "$TMP/hang.out"
check "hanging gdb: no hang (under 5 s)" test $(( $(date +%s) - t0 )) -lt 5

"$MIGDB" --gdb "$TMP/mute" --timeout 300 --exec -gdb-version >"$TMP/mute.out" 2>&1
check_grep "gdb without a prompt: start time-out" '^error 4: gdb did not start within 300 ms' "$TMP/mute.out"

"$MIGDB" --gdb "$TMP/die" --timeout 3000 --exec -gdb-version >"$TMP/die.out" 2>&1
check_grep "dying gdb: its status and last stderr line" \
	'^error 3: gdb exited with status 3: fake: cannot go on$' "$TMP/die.out"

"$MIGDB" --gdb "$TMP/crash" --timeout 3000 --exec -gdb-version >"$TMP/crash.out" 2>&1
check_grep "crashing gdb: the signal" '^error 3: gdb was killed by signal 9' "$TMP/crash.out"

"$MIGDB" --gdb "$TMP/wrongtoken" --timeout 3000 --exec -gdb-version >"$TMP/tok.out" 2>&1
check_grep "wrong token: protocol error" '^error 5: gdb answered token 77, expected 1$' "$TMP/tok.out"

"$MIGDB" --gdb "$TMP/no-such-gdb" --exec -gdb-version >"$TMP/nogdb.out" 2>&1
check_grep "gdb missing: says which package, and that dw needs no gdb" \
	'^error 1: .*no-such-gdb not found: install the Debian package gdb .*--symbolizer=dw which needs no gdb' "$TMP/nogdb.out"

command -v gdb >/dev/null || { echo "# gdb not installed: the rest needs it"; done_testing; }

# ---- 2. symbolizing the test programs -------------------------------------------
P=tests/prog
cc -g -O0 -shared -fPIC -o "$TMP/libmi_lib.so" $P/mi_lib.c
cp "$TMP/libmi_lib.so" "$TMP/libmi_lib.so.orig"
cc -g -O0 -o "$TMP/mi_prog" $P/mi_prog.c -L"$TMP" -lmi_lib -Wl,-rpath,"$TMP"
cc -g -O2 -o "$TMP/mi_prog2" $P/mi_prog.c -L"$TMP" -lmi_lib -Wl,-rpath,"$TMP"
c++ -g -O0 -o "$TMP/mi_cxx" $P/mi_cxx.cc
c++ -g -O2 -o "$TMP/mi_cxx2" $P/mi_cxx.cc
static_ok=0
cc -g -O2 -static -o "$TMP/mi_static" $P/mi_prog.c $P/mi_lib.c 2>/dev/null && static_ok=1

# start PROG NAME: run it (under the preload when built) until it prints "ready";
# sets $pid. Its output is in $TMP/NAME.out.
start() {
	pre=""
	[ -f "$B/libheapann.so" ] && pre="$TOP/$B/libheapann.so"
	LD_PRELOAD=$pre "$1" >"$TMP/$2.out" 2>"$TMP/$2.err" &
	pid=$!
	n=0
	while ! grep -q '^ready' "$TMP/$2.out" 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
}

# truth NAME: the program's own "ADDR LINE FUNCTION" lines, tab-separated
truth() { sed -n 's/^RA \(0x[0-9a-f]*\) \([0-9]*\) \(.*\)$/\1\t\2\t\3/p' "$TMP/$1.out"; }

# exact NAME EXE [CORE]: gdb names every recorded call site with the program's
# function and line, in the right file; then gdb and libdw agree field by field.
exact() {
	name=$1 exe=$2 core=$3
	truth "$name" >"$TMP/$name.truth"
	cut -f1 "$TMP/$name.truth" >"$TMP/$name.addrs"
	ntruth=$(wc -l <"$TMP/$name.truth")
	if [ -n "$core" ]; then
		"$MIGDB" --addr-file "$TMP/$name.addrs" "$exe" "$core" >"$TMP/$name.gdb" 2>"$TMP/$name.gdberr"
	else
		"$MIGDB" --addr-file "$TMP/$name.addrs" --raw-elf "$exe" >"$TMP/$name.gdb" 2>"$TMP/$name.gdberr"
	fi
	check_eq "$name: gdb symbolizer ran" 0 $? || sed 's/^/# /' "$TMP/$name.gdberr"
	bad=0
	while IFS="$(printf '\t')" read -r addr line fn; do
		got=$(awk -F'\t' -v a="$addr" '$1 == a { print $2 "|" $3 }' "$TMP/$name.gdb")
		case "$got" in
		"$fn|"*/mi_prog.c:"$line" | "$fn|"*/mi_lib.c:"$line" | "$fn|"*/mi_cxx.cc:"$line") ;;
		*) bad=$((bad + 1)); echo "# $name $addr: expected $fn at line $line, gdb said $got" ;;
		esac
	done <"$TMP/$name.truth"
	check_eq "$name: gdb names all $ntruth call sites exactly (function, file, line)" 0 $bad
	if [ -n "$core" ]; then
		"$MIGDB" --compare --addr-file "$TMP/$name.addrs" "$exe" "$core" >"$TMP/$name.cmp" 2>&1
	else
		"$MIGDB" --compare --addr-file "$TMP/$name.addrs" --raw-elf "$exe" >"$TMP/$name.cmp" 2>&1
	fi
	ndiff=$(grep -c '^diff ' "$TMP/$name.cmp")
	grep '^diff ' "$TMP/$name.cmp" | sed 's/^/# /' 
	check_grep "$name: gdb and libdw compared on all $ntruth" "^compared $ntruth: " "$TMP/$name.cmp"
	check_eq "$name: gdb and libdw agree on function, file, line, module offset" 0 "$ndiff"
}

for prog in mi_prog mi_prog2 mi_cxx mi_cxx2; do
	start "$TMP/$prog" $prog
	"$MIGDB" --snapshot $pid "$TMP/$prog.core" >"$TMP/$prog.snap" 2>&1
	check_grep "$prog: snapshot written" '^snapshot ok$' "$TMP/$prog.snap"
	exact $prog "$TMP/$prog" "$TMP/$prog.core"
	# every return address of every annotated block, when the preload is built
	if [ -f "$B/libheapann.so" ] && { [ $prog = mi_prog ] || [ $prog = mi_prog2 ]; }; then
		"$MIGDB" --addrs "$TMP/$prog.core" >"$TMP/$prog.baddrs"
		nb=$(wc -l <"$TMP/$prog.baddrs")
		"$MIGDB" --compare --addr-file "$TMP/$prog.baddrs" "$TMP/$prog" "$TMP/$prog.core" >"$TMP/$prog.bcmp" 2>&1
		check "$prog: blocks' return addresses found" test "$nb" -ge 3
		check_grep "$prog: gdb and libdw agree on all $nb block frames" "^compared $nb: $nb same, 0 differ" "$TMP/$prog.bcmp"
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
done

if [ $static_ok = 1 ]; then
	"$TMP/mi_static" >"$TMP/mi_static.out" 2>&1 &
	pid=$!
	n=0; while ! grep -q '^ready' "$TMP/mi_static.out" 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
	kill $pid; wait $pid 2>/dev/null
	exact mi_static "$TMP/mi_static" ""
else
	echo "# no static libc: the raw-dump case is not run"
fi

# A firmware-like ARM static ELF, run under qemu for its call sites: gdb-multiarch
# is chosen for a foreign ELF.
if command -v arm-linux-gnueabihf-gcc >/dev/null && command -v qemu-arm >/dev/null &&
	command -v gdb-multiarch >/dev/null &&
	arm-linux-gnueabihf-gcc -g -O0 -static -o "$TMP/mi_arm" $P/mi_prog.c $P/mi_lib.c 2>/dev/null; then
	qemu-arm "$TMP/mi_arm" >"$TMP/mi_arm.out" 2>&1 &
	pid=$!
	n=0; while ! grep -q '^ready' "$TMP/mi_arm.out" 2>/dev/null && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
	kill $pid; wait $pid 2>/dev/null
	exact mi_arm "$TMP/mi_arm" ""
else
	echo "# no ARM cross compiler, qemu-arm or gdb-multiarch: the ARM case is not run"
fi

# The Massif manual's example: every return address of every block it leaves.
for opt in -O0 -O2; do
	[ -f "$B/libheapann.so" ] || { echo "# no $B/libheapann.so: Massif example not run"; break; }
	exe=$TMP/massif$opt
	cc -g $opt -o "$exe" examples/massif_example.c
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$exe" wait <"$TMP/fifo" >"$TMP/massif.out" &
	pid=$!
	exec 9>"$TMP/fifo"
	n=0; while [ ! -s "$TMP/massif.out" ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
	"$MIGDB" --snapshot $pid "$TMP/massif.core" >"$TMP/massif.snap" 2>&1
	check_grep "massif$opt: snapshot written" '^snapshot ok$' "$TMP/massif.snap" ||
		sed 's/^/# program: /' "$TMP/massif.out"
	exec 9>&-
	wait $pid 2>/dev/null
	"$MIGDB" --addrs "$TMP/massif.core" >"$TMP/massif.addrs"
	nb=$(wc -l <"$TMP/massif.addrs")
	"$MIGDB" --compare --addr-file "$TMP/massif.addrs" "$exe" "$TMP/massif.core" >"$TMP/massif.cmp" 2>&1
	check "massif$opt: blocks' return addresses found" test "$nb" -ge 4
	check_grep "massif$opt: gdb and libdw agree on all $nb block frames" "^compared $nb: $nb same, 0 differ" "$TMP/massif.cmp"
	for fn in main f g; do
		check_grep "massif$opt: gdb names $fn" "^same 0x[0-9a-f]* $fn /.*massif_example\.c:[0-9]+$" "$TMP/massif.cmp"
	done
done

# ---- 3. a rebuilt library --------------------------------------------------------
cc -g -O0 -shared -fPIC -DMI_VARIANT -o "$TMP/libmi_lib.so" $P/mi_lib.c
"$MIGDB" --addr-file "$TMP/mi_prog.addrs" "$TMP/mi_prog" "$TMP/mi_prog.core" >"$TMP/rebuilt.gdb" 2>&1
nlib=$(truth mi_prog | grep -c 'lib_inner\|mi_lib_outer')
check_eq "rebuilt lib: its $nlib call sites flagged buildid, no name" "$nlib" \
	"$(grep -c '^0x[0-9a-f]*	?	?	.*libmi_lib\.so+0x[0-9a-f]*	buildid$' "$TMP/rebuilt.gdb")"
check_eq "rebuilt lib: the program's own call sites still named" 3 \
	"$(grep -c '	\(main\|prog_middle\|prog_leaf\)	.*mi_prog\.c:[0-9]*	.*	-$' "$TMP/rebuilt.gdb")"
check_grep "rebuilt lib: a note names the module and both build-ids" \
	'^note: .*libmi_lib\.so: build-id in core [0-9a-f]{40} differs from .*libmi_lib\.so [0-9a-f]{40}' "$TMP/rebuilt.gdb"
# plain gdb really does misname it (why the check exists)
addr=$(truth mi_prog | awk -F'\t' '$3 == "lib_inner" { print $1 }')
gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' "$TMP/mi_prog" "$TMP/mi_prog.core" \
	-ex "info symbol $addr - 1" >"$TMP/plain.gdb" 2>&1
check_grep "rebuilt lib: plain gdb names another function there" '^mi_lib_padding \+ [0-9]+ in section' "$TMP/plain.gdb"
# the right library under a sysroot (same path below it): named again, from there
mkdir -p "$TMP/sysroot$TMP"
cp "$TMP/libmi_lib.so.orig" "$TMP/sysroot$TMP/libmi_lib.so"
"$MIGDB" --sysroot "$TMP/sysroot" --addr-file "$TMP/mi_prog.addrs" "$TMP/mi_prog" "$TMP/mi_prog.core" \
	>"$TMP/sysroot.gdb" 2>&1
check_eq "sysroot: the library's $nlib call sites named from the sysroot copy" "$nlib" \
	"$(grep -c '	\(lib_inner\|mi_lib_outer\)	.*mi_lib\.c:[0-9]*	.*libmi_lib\.so+0x[0-9a-f]*	-$' "$TMP/sysroot.gdb")"
check_grep "sysroot: libc missing below it is a note, not a failure" \
	'^note: .*libc\.so\.6: cannot read .*sysroot.*libc\.so\.6' "$TMP/sysroot.gdb"
cp "$TMP/libmi_lib.so.orig" "$TMP/libmi_lib.so"

# ---- 4. snapshots ----------------------------------------------------------------
# not_stopped PID: the process is not in a stopped or traced state (T, t); S or R
# both mean it runs on (R just after the detach on a busy machine)
not_stopped() {
	ns_state=$(awk '/^State:/ { print $2 }' "/proc/$1/status")
	[ -n "$ns_state" ] && [ "$ns_state" != T ] && [ "$ns_state" != t ]
}
if [ -f "$B/libheapann.so" ]; then
	start "$TMP/mi_prog" snap
	"$MIGDB" --snapshot $pid "$TMP/snap.core" >"$TMP/snap.res" 2>&1
	check_grep "snapshot: ok" '^snapshot ok$' "$TMP/snap.res"
	check_eq "snapshot: the program file of the process" "$(readlink -f "$TMP/mi_prog")" "$("$MIGDB" --exe $pid)"
	check "snapshot: the program still runs" kill -0 $pid
	check "snapshot: and is not left stopped" not_stopped $pid
	want=$(sed -n 's/^blocks \([0-9]*\) bytes \([0-9]*\)$/live \1 bytes \2/p' "$TMP/snap.out")
	check_eq "snapshot: exactly the program's live blocks and bytes" "$want" "$("$MIGDB" --blocks "$TMP/snap.core")"
	# through the CLI, when it is built: the same report from both symbolizers
	if [ -x "$B/mprof-core" ]; then
		"$B/mprof-core" --symbolizer=gdb "$TMP/mi_prog" "$TMP/snap.core" 2>"$TMP/cli.err" | tail -n +2 >"$TMP/cli.gdb"
		"$B/mprof-core" --symbolizer=dw "$TMP/mi_prog" "$TMP/snap.core" 2>>"$TMP/cli.err" | tail -n +2 >"$TMP/cli.dw"
		check "mprof-core: --symbolizer=gdb and =dw print the same report" cmp -s "$TMP/cli.gdb" "$TMP/cli.dw"
		check_grep "mprof-core --symbolizer=gdb: names the program's frames" \
			'^ +prog_alloc \(mi_prog\.c:[0-9]+\) \[mi_prog\]$' "$TMP/cli.gdb"
		"$B/mprof-core" snapshot $pid -o "$TMP/cli.core" >"$TMP/cli.snap" 2>&1
		check_eq "mprof-core snapshot: exit 0" 0 $?
		# "live blocks: N, requested bytes: B" with B in thousands groups
		pattern=$(sed -n 's/^blocks \([0-9]*\) bytes \([0-9]*\)$/\1 \2/p' "$TMP/snap.out" |
			awk '{ b = $2; g = ""; while (length(b) > 3) { g = "," substr(b, length(b) - 2) g; b = substr(b, 1, length(b) - 3) }
				printf "^live blocks: %s, requested bytes: %s%s,", $1, b, g }')
		check_grep "mprof-core snapshot: reports exactly the program's blocks" "$pattern" "$TMP/cli.snap"
		check "mprof-core snapshot: the program still runs" kill -0 $pid
	fi
	# and once more: a second snapshot of the same process works too
	"$MIGDB" --snapshot $pid "$TMP/snap2.core" >"$TMP/snap2.res" 2>&1
	check_grep "snapshot: a second one works" '^snapshot ok$' "$TMP/snap2.res"
	check_eq "snapshot: the same blocks again" "$want" "$("$MIGDB" --blocks "$TMP/snap2.core")"
	kill $pid; wait $pid 2>/dev/null
else
	echo "# $B/libheapann.so not built: block counts of snapshots not checked"
fi

# a process that is gone
sh -c 'exit 0' & gone=$!; wait $gone
"$MIGDB" --snapshot $gone "$TMP/none.core" >"$TMP/gone.res" 2>&1
check_grep "snapshot of no process: says so" "^error 7: snapshot: no process with id $gone$" "$TMP/gone.res"
check "snapshot of no process: no file left" test ! -e "$TMP/none.core"
check_grep "program file of no process: says so" "^error 7: no process with id $gone$" "$(
	"$MIGDB" --exe $gone >"$TMP/gone.exe" 2>&1; echo "$TMP/gone.exe")"

"$MIGDB" --snapshot $$ "$TMP/x.core" --gdb "$TMP/no-such-gdb" >"$TMP/nogdb2.res" 2>&1
check_grep "snapshot without gdb: which package" '^error 1: .*install the Debian package gdb' "$TMP/nogdb2.res"

# gdb too slow: a clear time-out, the process running on, no partial core
sleep 30 & victim=$!
"$MIGDB" --timeout 20 --snapshot $victim "$TMP/slow.core" >"$TMP/slow.res" 2>&1
check_grep "snapshot time-out: says which command" '^error 4: snapshot: gdb did not answer ".*gcore.*" within 20 ms' "$TMP/slow.res"
check "snapshot time-out: the process still runs" kill -0 $victim
check "snapshot time-out: and is not left stopped" not_stopped $victim
check "snapshot time-out: no partial core" test ! -e "$TMP/slow.core"
kill $victim; wait $victim 2>/dev/null

# ptrace refused: an unprivileged user may not attach to our process
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	sleep 30 & victim=$!
	chmod 755 "$TMP"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$TOP/$MIGDB" --snapshot $victim /tmp/mprof-never.core \
		>"$TMP/perm.res" 2>&1
	check_grep "snapshot without permission: ptrace not permitted, with a hint" \
		"^error 8: snapshot: cannot attach to process $victim: ptrace not permitted \(.+\)$" "$TMP/perm.res"
	kill $victim; wait $victim 2>/dev/null
	chmod 700 "$TMP"
else
	echo "# not root or no setpriv: the ptrace-permission case is not run"
fi

done_testing
