# lib.sh - shared helpers for tests/run-*.sh (sourced). Each script calls check
# for every assertion and ends with "done_testing", which prints
# "N passed, N failed" and exits non-zero on failure. skip "why" exits 77.
B=${B:-build}
TOP=$(pwd)
T_PASS=0
T_FAIL=0
T_SKIP=0
# A scratch directory per script, removed at exit unless KEEP=1.
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mprof-test.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
# mprof-core's symbol index cache (sym/dw_cache.c) per script, not in ~/.cache
MPROF_CACHE_DIR=$TMP/symcache; export MPROF_CACHE_DIR

# check NAME CMD...: run CMD; pass when it exits 0.
check() {
	name=$1; shift
	if "$@"; then
		T_PASS=$((T_PASS + 1)); echo "ok $((T_PASS + T_FAIL + T_SKIP)) - $name"
	else
		T_FAIL=$((T_FAIL + 1)); echo "not ok $((T_PASS + T_FAIL + T_SKIP)) - $name"
	fi
}

# check_eq NAME EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		T_PASS=$((T_PASS + 1)); echo "ok $((T_PASS + T_FAIL + T_SKIP)) - $1"
	else
		T_FAIL=$((T_FAIL + 1)); echo "not ok $((T_PASS + T_FAIL + T_SKIP)) - $1 (expected '$2', got '$3')"
	fi
}

# check_grep NAME PATTERN FILE: FILE has a line matching the extended regex.
check_grep() {
	if grep -Eq -- "$2" "$3"; then
		T_PASS=$((T_PASS + 1)); echo "ok $((T_PASS + T_FAIL + T_SKIP)) - $1"
	else
		T_FAIL=$((T_FAIL + 1)); echo "not ok $((T_PASS + T_FAIL + T_SKIP)) - $1 (no /$2/ in $3)"
		sed 's/^/    # /' "$3" | head -n 30
	fi
}

skip() { echo "$*" >&2; exit 77; }

# need_arm_fw: skip unless the tools to build and run a bare-metal Cortex-M
# firmware are here (arm-none-eabi-gcc, newlib, qemu-system-arm, and python3
# and pkg-config for tests/qemu_fw.py and the kit's .pc).
need_arm_fw() {
	command -v python3 >/dev/null || skip "python3 not installed"
	command -v pkg-config >/dev/null || skip "pkg-config not installed"
	command -v arm-none-eabi-gcc >/dev/null || skip "no arm-none-eabi-gcc (gcc-arm-none-eabi)"
	command -v qemu-system-arm >/dev/null || skip "no qemu-system-arm"
	[ -f "$(arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -print-file-name=libc.a)" ] ||
		skip "no newlib (libnewlib-arm-none-eabi)"
}

# arm_fw_setup SRC: for a test of a bare-metal Cortex-M3 firmware SRC run on
# qemu's mps2 boards: skip unless mprof-core is built ($M) and need_arm_fw;
# set src, RAM and RAMLEN (the boards' SRAM), CPU (the compiler's flags) and
# mark NAME (the line of SRC marked MARK:NAME).
arm_fw_setup() {
	M=$B/mprof-core
	case $M in /*) ;; *) M=$TOP/$M ;; esac
	[ -x "$M" ] || skip "build first"
	need_arm_fw
	src=$1
	RAM=0x20000000 RAMLEN=0x40000
	CPU="-mcpu=cortex-m3 -mthumb"
}
mark() { grep -n "MARK:$1 " "$src" | cut -d: -f1; }

# arm_fw_run N BOARD QEMU_ARGS CFLAGS...: build $TMP/N.elf from $src (after
# arm_fw_setup) with the kit in $KIT and the linker script tests/prog/hunt8_m.ld,
# run it on qemu's BOARD (mps2-an385, mps2-an386) with the extra qemu arguments
# QEMU_ARGS (one string, split on blanks; "" for none) until it halts (the
# board's RAM in N.bin, the board in N.core, its output in N.out; the compiler's
# and qemu's messages in N.cc and N.qerr). Sets N and exe (the ELF); two checks.
arm_fw_run() {
	N=$1 fw_board=$2 fw_qargs=$3
	shift 3
	exe=$TMP/$N.elf
	arm-none-eabi-gcc -std=gnu11 $CPU -g "$@" -nostartfiles -specs=nosys.specs -T tests/prog/hunt8_m.ld \
		-o "$exe" $src $(PKG_CONFIG_PATH="$KIT/arm-none-eabi" pkg-config --cflags --libs heapann-static) \
		>"$TMP/$N.cc" 2>&1
	check_eq "$N: links with the kit" 0 $?
	python3 tests/qemu_fw.py $fw_board "$exe" "$TMP/$N.out" $RAM $RAMLEN "$TMP/$N.bin" "$TMP/$N.core" \
		$fw_qargs 2>"$TMP/$N.qerr"
	check_eq "$N: halts on qemu, RAM and core saved" 0 $?
}

# wait_max PID SECS [ERRFILE]: wait for the background job PID, as wait does,
# but for at most SECS seconds: a job still running then is killed (SIGKILL),
# with the program heapann announced in ERRFILE ("runs as pid N"), and the
# status is 124, so a stuck check fails instead of hanging make check. A job
# that has ended is a zombie until waited for, hence the look at its State.
wait_max() {
	_end=$(($(date +%s) + $2))
	while [ "$(date +%s)" -lt $_end ] && grep -q '^State:[[:space:]]*[^Z]' "/proc/$1/status" 2>/dev/null; do
		sleep 0.05
	done
	if grep -q '^State:[[:space:]]*[^Z]' "/proc/$1/status" 2>/dev/null; then
		echo "# pid $1 still runs after $2 s: killed"
		_p=$([ -n "${3-}" ] && sed -n 's/.*runs as pid \([0-9]*\);.*/\1/p' "$3")
		[ -n "$_p" ] && kill -KILL "$_p" 2>/dev/null
		kill -KILL "$1" 2>/dev/null
		wait "$1"
		return 124
	fi
	wait "$1"
}

# skip_check NAME WHY: a check that could not run here; counted apart, never
# as passed, and named in the closing line.
skip_check() {
	T_SKIP=$((T_SKIP + 1))
	echo "ok $((T_PASS + T_FAIL + T_SKIP)) - $1 # SKIP $2"
}

# gen_needs: skip unless the build, python3 and gdb are there (the generated
# programs' tests, run-hunt9-gen and run-hunt10-gen)
gen_needs() {
	[ -x "$B/mprof-core" ] && [ -f "$B/libheapann.so" ] || skip "build first"
	command -v python3 >/dev/null || skip "python3 not installed"
	command -v gdb >/dev/null || skip "gdb not installed"
}

# gen_run NAME ARGS...: run tests/NAME.py ARGS (hunt9.py's "ok N - ..." lines
# and "N passed, N failed" last), show its output and count its ok / not ok
# lines as ours; one failure more when it did not finish
gen_run() {
	gr=$1; shift
	B=$B TOP=$TOP python3 "tests/$gr.py" "$@" >"$TMP/$gr.out" 2>&1
	cat "$TMP/$gr.out"
	p=$(grep -c '^ok ' "$TMP/$gr.out"); f=$(grep -c '^not ok ' "$TMP/$gr.out")
	T_PASS=$((T_PASS + p)); T_FAIL=$((T_FAIL + f))
	grep -q ' passed, ' "$TMP/$gr.out" || { T_FAIL=$((T_FAIL + 1)); echo "not ok - $gr.py $* did not finish"; }
}

# check_cats NAME OURS MEMCHECK [SKIP_FN]: --report=lost's four categories
# (OURS) are memcheck's (its log MEMCHECK), summed by tests/real10.py; fails
# when either side is empty
check_cats() {
	cats_out=$(python3 tests/real10.py cats "$2" "$3" $4) || { check_eq "$1" "both sides read" "a side empty"; return; }
	check_eq "$1" "$(echo "$cats_out" | sed -n 2p)" "$(echo "$cats_out" | sed -n 1p)"
}

# env_like_memcheck BASE: the environment valgrind gives a program started as
# "env -i BASE valgrind PROG", for a run under the preload alone: sets VG_ENV
# (valgrind's variables but LD_PRELOAD, with BASE's), PAD_OURS and PAD_VG (the
# values of a variable PAD for each run, LD_PRELOAD's difference in length
# made up). Programs that copy their environment into blocks (python, perl)
# then allocate the same bytes on both sides. Each PAD is 8 characters at
# least: perl gives a string of 7 characters or less a 10-byte buffer, so a
# shorter PAD on one side only was 7 bytes more there.
env_like_memcheck() {
	elm_pre=$(env -i $1 valgrind -q /usr/bin/printenv LD_PRELOAD)
	VG_ENV=$(env -i $1 valgrind -q /usr/bin/env | grep -v '^LD_PRELOAD=' | tr '\n' ' ')
	elm_ours=$TOP/$B/libheapann.so
	PAD_OURS=pppppppp PAD_VG=pppppppp
	while [ $((${#elm_ours} + ${#PAD_OURS})) -lt $((${#elm_pre} + ${#PAD_VG})) ]; do PAD_OURS=${PAD_OURS}p; done
	while [ $((${#elm_ours} + ${#PAD_OURS})) -gt $((${#elm_pre} + ${#PAD_VG})) ]; do PAD_VG=${PAD_VG}p; done
}

done_testing() {
	if [ $T_SKIP -gt 0 ]; then
		echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	else
		echo "$T_PASS passed, $T_FAIL failed"
	fi
	[ $T_FAIL -eq 0 ]
	exit $?
}

# make_gcore PID OUT: write a core of a running process with gdb, without killing it.
make_gcore() {
	gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' \
		-p "$1" -ex "gcore $2" -ex detach >/dev/null 2>&1
	[ -s "$2" ]
}

# gcore_waiting OUT PROG ARGS...: run PROG ARGS under the preload until it prints
# its first line ("ready"), write its core to OUT with gcore, then let it finish by
# sending a line on its stdin. Returns PROG's exit status.
gcore_waiting() {
	gw_out=$1; shift
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	LD_PRELOAD="$TOP/$B/libheapann.so" "$@" <"$TMP/fifo" >"$TMP/out" &
	gw_pid=$!
	exec 9>"$TMP/fifo"
	n=0; while [ ! -s "$TMP/out" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	make_gcore $gw_pid "$gw_out"
	echo >&9; exec 9>&-
	wait $gw_pid
}

# liveset_cmp WANT SCAN: compare a program's live set (WANT: "ADDR SIZE" lines and
# "total N BYTES"; other lines ignored) with cpdump's output SCAN. Prints
# "N FOUND BYTES FOUNDBYTES LEFT": the program's count and bytes, how many of its
# blocks are live in SCAN with their sizes and their bytes, and how many are not.
liveset_cmp() {
	awk -v want="$1" '
		BEGIN { while ((getline l < want) > 0) { split(l, f, " ");
			if (f[1] == "total") { n = f[2]; b = f[3] } else if (f[1] ~ /^0x/) size[f[1]] = f[2] } }
		$1 == "block" && $2 == "live" { u = $3; s = $4; sub("user=", "", u); sub("size=", "", s);
			if (u in size && size[u] == s) { found++; bytes += s; delete size[u] } }
		END { left = 0; for (k in size) left++
			printf "%d %d %d %d %d\n", n, found, b, bytes, left }' "$2"
}

# wait_for FILE [PATTERN]: until FILE exists (and has a line matching PATTERN), at
# most 60 s. Returns 1 on timeout.
wait_for() {
	n=0
	while [ $n -lt 3000 ]; do
		if [ -e "$1" ] && { [ -z "${2:-}" ] || grep -Eq -- "$2" "$1"; }; then
			return 0
		fi
		sleep 0.02; n=$((n + 1))
	done
	return 1
}

# sums JSON FUNCTION...: "F=BLOCKS/BYTES" per function: the live blocks of a
# --format json report whose allocation site (first frame) is F, summed over stacks.
sums() {
	python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for f in sys.argv[2:]:
    b = y = 0
    for s in d["stacks"]:
        if s["frames"] and s["frames"][0].get("function") == f:
            b += s["blocks"]; y += s["bytes"]
    out.append("%s=%d/%d" % (f, b, y))
print(" ".join(out))
EOF
}

# gcore_bases EXE CORE: run EXE (without the preload) until it prints "ready",
# note the load addresses of EXE's first mapping in $base and of libc's in $lbase
# (its path in $libc; empty when not found), write its core to CORE with gcore
# and let it finish by a line on its stdin. Returns 0 when the core is written.
gcore_bases() {
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	"$1" <"$TMP/fifo" >"$TMP/run.out" &
	gb_pid=$!
	exec 9>"$TMP/fifo"
	n=0; while ! grep -q ready "$TMP/run.out" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	base=$(awk -v e="$1" '$6 == e && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' /proc/$gb_pid/maps)
	set -- "$2" $(awk '$6 ~ /\/libc\.so/ && $3 == "00000000" { split($1, r, "-"); print $6, r[1]; exit }' /proc/$gb_pid/maps)
	libc=${2:-} lbase=${3:-}
	make_gcore $gb_pid "$1"
	gb_rc=$?
	echo >&9; exec 9>&-
	wait $gb_pid
	return $gb_rc
}

# heap_dump EXE OUT: run "EXE wait" (a program that prints a line, then waits
# for one on stdin) until it has printed, dump its [heap] mapping to OUT with
# gdb's "dump binary memory" (as a JTAG probe dumps RAM) and let it finish.
# Sets start and end (0x... hex) to the dumped range. Returns 0 when OUT is written.
heap_dump() {
	rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
	"$1" wait <"$TMP/fifo" >"$TMP/hd.out" &
	hd_pid=$!
	exec 9>"$TMP/fifo"
	n=0; while [ ! -s "$TMP/hd.out" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	heap=$(grep '\[heap\]' /proc/$hd_pid/maps | head -n 1)
	start=0x${heap%%-*}; rest=${heap#*-}; end=0x${rest%% *}
	gdb -batch -nx -q -iex 'set auto-load off' -iex 'set debuginfod enabled off' -p $hd_pid \
		-ex "dump binary memory $2 $start $end" -ex detach >/dev/null 2>&1
	echo >&9; exec 9>&-
	wait $hd_pid
	[ -s "$2" ]
}
