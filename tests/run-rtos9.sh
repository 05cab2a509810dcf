#!/bin/sh
# run-rtos9.sh - the bare-metal kit under preemption: tests/prog/rtos9_m.c, a
# small scheduler of three tasks (two on static stacks, one on a heap stack)
# switched by PendSV on every SysTick, allocating and freeing through newlib's
# malloc under the static kit while being preempted, newlib's __malloc_lock a
# recursive scheduler lock. Run on qemu-system-arm's mps2-an385 with -icount
# (the ticks land at the same instructions every run), at -O0 and -O2, its RAM
# and the board dumped (tests/qemu_fw.py). On the raw dump and the core: every
# block of every task found at its site, line and task entry (the stack of each
# task ends at its entry), nothing damaged, the two leaks definitely lost and
# the blocks held by other tasks' locals reachable (with --task-sp: the stacks
# below the tasks' stack pointers, holding stale pointers to the leaks, left
# out; without, the leaks read as reachable), the statistics' whole-run
# counters equal to the firmware's own count. Before the kit took newlib's lock
# around the whole call (b775393's kit), 4 of the 14 blocks and 159 of 1,215
# allocations were seen at -O2, 5 blocks and 196 allocations at -O0. Tasks
# started with an exit function as their return address get one frame past
# their entry, not 30. Skips when arm-none-eabi-gcc, newlib or
# qemu-system-arm is missing.
. tests/lib.sh
arm_fw_setup tests/prog/rtos9_m.c
# the line in task T's body that calls F
calls() { awk -v t="$1" -v f="$2" '$0 ~ "^NOINL void " t "\\(" { in_t = 1 } in_t && index($0, f "(") { print NR; exit }' $src; }
nm_addr() { printf %d 0x$(arm-none-eabi-nm "$exe" | awk -v n="$1" '$3 == n { print $1 }'); }
KIT=$TMP/kit

make -s TARGET=arm-none-eabi XCFLAGS="$CPU" B="$KIT" cross >"$TMP/kit.log" 2>&1
check_eq "the kit builds for arm-none-eabi (Cortex-M3)" 0 $?
[ -f "$KIT/arm-none-eabi/libheapann.a" ] || { sed 's/^/# /' "$TMP/kit.log" | head -n 20; done_testing; }

# picolibc defines _NEWLIB_VERSION too but takes __malloc_lock() with no
# argument and has no reent.h: the kit built against it failed (23 errors)
if arm-none-eabi-gcc --specs=picolibc.specs -E -x c /dev/null >/dev/null 2>&1; then
	make -s TARGET=arm-none-eabi XCFLAGS="$CPU --specs=picolibc.specs" B="$TMP/pkit" cross >"$TMP/pkit.log" 2>&1
	check_eq "the kit builds against picolibc" 0 $?
	check_eq "under picolibc's __malloc_lock" 1 \
		"$(arm-none-eabi-nm "$TMP/pkit/arm-none-eabi/libheapann.a" 2>/dev/null | grep -c ' U __malloc_lock$')"
else
	echo "# no picolibc (picolibc-arm-none-eabi): the kit's picolibc build not checked"
fi

# check_sites N J: every site of rtos9_m.c in the JSON stacks report J, each
# stack ending at its task's entry (or main's caller for the heap stack)
check_sites() {
	cs_n=$1 cs_j=$2 r=$(mark brecur)
	for s in akeep:a_keep:task_a:192:4 aleak:a_leak:task_a:72:1 alocal:a_local:task_a:88:1 \
		blocal:b_local:task_b:56:1 cgrow:c_grow:task_c:200:1 clocal:c_local:task_c:120:1 \
		cleak:c_leak:task_c:96:1; do
		set -- $(echo $s | tr : ' ')
		check "$cs_n: $2, $4 bytes in $5 blocks at line $(mark $1), from $3" python3 tests/jstack.py "$cs_j" stack \
			"$4" "$5" "$2:$(mark $1)" "$3:$(calls $3 $2)"
	done
	check "$cs_n: b_rec, 192 bytes in 3 blocks, four frames of the recursion, from task_b" python3 tests/jstack.py "$cs_j" stack \
		192 3 "b_rec:$(mark brec)" "b_rec:$r" "b_rec:$r" "b_rec:$r" "task_b:$(calls task_b b_rec)"
	check "$cs_n: task C's stack, 4,096 bytes from main" python3 tests/jstack.py "$cs_j" stack 4096 1 "main:$(mark cstack)"
	check "$cs_n: 14 blocks, 5,112 bytes" python3 tests/jstack.py "$cs_j" total 14 5112
	check_eq "$cs_n: no damaged header, none being written" "0 0" \
		"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["damaged_headers"], d["headers_being_written"])' "$cs_j")"
	check_eq "$cs_n lost: a_leak's 72 bytes and c_leak's 96 definitely lost; the locals of every task (B and C switched out, C's stack a block) hold theirs" \
		"definitely lost 72 a_leak
definitely lost 96 c_leak
168 2 0 0 0 0" \
		"$(python3 -c 'import json,sys
l=json.load(open(sys.argv[1]))["lost"]
for r in sorted(l["records"], key=lambda r: r["bytes"]):
	if r["category"] != "still reachable": print(r["category"], r["bytes"], r["frames"][0]["function"])
s=l["totals"]; print(*[s[k + " lost"][x] for k in ("definitely","indirectly","possibly") for x in ("bytes","blocks")])' "$cs_j")"
}

# fw_run N CFLAGS...: build $TMP/N.elf (exe) with the kit, run it on qemu with a
# deterministic clock (-icount shift=0), its RAM in N.bin, the board in N.core,
# its output in N.out (val NAME reads it)
fw_run() {
	fw_n=$1
	shift
	arm_fw_run "$fw_n" mps2-an385 "-icount shift=0" "$@"
}
val() { printf %d "$(sed -n "s/^$1 //p" "$TMP/$N.out" | head -n 1)"; }

# run_fw N CFLAGS...: build, run, dump, report
run_fw() {
	fw_run "$@"
	[ -s "$TMP/$N.bin" ] || return
	sep() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$(val $1)"; }
	# the switches did land inside malloc: ticks that came while the kit held
	# the lock (the exact count depends on the compiler's code)
	check "$N: the tasks were switched out inside the wrapped calls ($(val locked) of $(val ticks) ticks came while the lock was held)" \
		test "$(val locked)" -gt 100
	R="--raw $TMP/$N.bin --elf $exe --base $RAM"
	# each task's stack below its stack pointer is dead: a_leak and c_leak
	# leave stale copies of their pointers there (smear)
	TS="--task-sp $(val spa) --task-sp $(val spb) --task-sp $(val spc)"

	J=$TMP/$N.json
	"$M" --format json --report=stacks,lost $TS $R >"$J" 2>"$J.err"
	check_eq "$N raw: exit 0" 0 $?
	check_sites "$N raw" "$J"
	"$M" --format folded $R >"$TMP/$N.folded" 2>/dev/null
	check_eq "$N raw folded: every stack from its task's entry" "fw_reset;main 4096
task_a;a_keep 192
task_a;a_leak 72
task_a;a_local 88
task_b;b_local 56
task_b;b_rec;b_rec;b_rec;b_rec 192
task_c;c_grow 200
task_c;c_leak 96
task_c;c_local 120" "$(sort "$TMP/$N.folded")"
	"$M" --report=bins $R >"$TMP/$N.tables" 2>&1
	check_grep "$N raw statistics: the whole run as the firmware counted it ($(val allocs) allocations, $(val frees) frees)" \
		"^statistics \(whole run\): $(sep allocs) allocations, $(sep frees) frees, $(sep bytes) bytes allocated, $(sep freed) bytes freed" \
		"$TMP/$N.tables"

	check_eq "$N raw lost: below the three stack pointers left out (A's and B's stacks variables, C's a block)" \
		"$(printf 'task stack below sp 0x%x 0x%x\n' $(nm_addr rt_stack_a) $(val spa) \
			$(nm_addr rt_stack_b) $(val spb) $(val cstack) $(val spc) | sort)" \
		"$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["lost"]["excluded"]:
	if e["what"] != "statistics": print(e["what"], e["start"], e["end"])' "$J" | sort)"
	"$M" --report=lost $TS $R >"$TMP/$N.lost" 2>&1
	check_grep "$N raw lost text: the left-out stacks said" \
		"; left out: a task's stack below its sp at $(printf 0x%x $(val cstack)) \($(python3 -c 'import sys; print(f"{int(sys.argv[1]) - int(sys.argv[2]):,}")' $(val spc) $(val cstack)) bytes\)" \
		"$TMP/$N.lost"
	"$M" --format json --report=lost $R >"$TMP/$N.nosp.json" 2>/dev/null
	check_eq "$N raw lost without --task-sp: both leaks read as reachable, through their stale copies below the stack pointers" \
		"0 0" "$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["lost"]["totals"]["definitely lost"]; print(s["bytes"], s["blocks"])' "$TMP/$N.nosp.json")"
	"$M" --report=lost --task-sp 0x2003fff0 $R >"$TMP/$N.badsp" 2>"$TMP/$N.badsp.err"
	check_eq "$N raw: a --task-sp in no block nor variable (main's stack, at the top of RAM) is bad input, one line" \
		"1 $TMP/$N.bin: --task-sp 0x2003fff0 is in no live block nor variable of $exe" \
		"$? $(sed 's/^mprof-core: //' "$TMP/$N.badsp.err")"
	J=$TMP/$N.core.json
	"$M" --format json --report=stacks,lost $TS "$exe" "$TMP/$N.core" >"$J" 2>"$J.err"
	check_eq "$N core: exit 0" 0 $?
	check_sites "$N core" "$J"
	a=$(printf 0x%x $(val alocal))
	"$M" --addr "$a" "$exe" "$TMP/$N.core" >"$TMP/$N.addr" 2>&1
	check_grep "$N core --addr: task A's block" "^address $a: 0 bytes into live block $a \(88 bytes" "$TMP/$N.addr"
}

run_fw O2 -O2
run_fw O0 -O0

# -DRT_SHARED_STACKS: A's and B's stacks in one array. The plain --task-sp of
# B's stack pointer would leave out A's live stack below it (a_local's block
# read as definitely lost, exit 0): refused, one line; with each stack's low
# end given (LO:SP) every task holds its blocks again
fw_run shared -O2 -DRT_SHARED_STACKS
R="--raw $TMP/$N.bin --elf $exe --base $RAM"
stk=$(nm_addr rt_stacks)
"$M" --report=lost --task-sp $(val spa) --task-sp $(val spb) --task-sp $(val spc) $R >/dev/null 2>"$TMP/$N.err"
check_eq "$N: plain --task-sp of two stacks in one variable is bad input, one line" \
	"1 $TMP/$N.bin: --task-sp $(printf 0x%x $(val spb)) and $(printf 0x%x $(val spa)) are in one variable or block: give each stack's low end (--task-sp LO:SP)" \
	"$? $(sed 's/^mprof-core: //' "$TMP/$N.err")"
"$M" --report=lost --task-sp $(val spa) --task-sp $((stk)):$(val spb) $R >/dev/null 2>"$TMP/$N.err"
check_eq "$N: a low end below another given stack pointer is bad input, one line" \
	"1 $TMP/$N.bin: --task-sp $(printf 0x%x $stk):$(printf 0x%x $(val spb)) holds another task's stack pointer $(printf 0x%x $(val spa))" \
	"$? $(sed 's/^mprof-core: //' "$TMP/$N.err")"
"$M" --report=lost --task-sp $((stk - 8)):$(val spa) $R >/dev/null 2>"$TMP/$N.err"
check_eq "$N: a low end outside the variable holding SP is bad input, one line" \
	"1 $TMP/$N.bin: --task-sp $(printf 0x%x $((stk - 8))):$(printf 0x%x $(val spa)): the low end must lie between $(printf 0x%x $stk) (the start of the block or variable holding SP) and SP" \
	"$? $(sed 's/^mprof-core: //' "$TMP/$N.err")"
TS="--task-sp $(val spa) --task-sp $((stk + 4096)):$(val spb) --task-sp $(val spc)"
J=$TMP/$N.json
"$M" --format json --report=stacks,lost $TS $R >"$J" 2>"$J.err"
check_eq "$N raw with B's low end: exit 0" 0 $?
check_sites "$N raw" "$J"
check_eq "$N raw lost: A's stack from the array's start, B's from its second half" \
	"$(printf 'task stack below sp 0x%x 0x%x\n' $stk $(val spa) $((stk + 4096)) $(val spb) \
		$(val cstack) $(val spc) | sort)" \
	"$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["lost"]["excluded"]:
	if e["what"] != "statistics": print(e["what"], e["start"], e["end"])' "$J" | sort)"

# -DRT_EXIT_LR: each task starts with LR at an exit function (FreeRTOS's
# default). libgcc looks up the function placed before it, whose rule leaves
# pc and sp alone: the kit's walk stops there, one frame past the entry (it
# took 30 copies of that frame, to the depth limit)
fw_run exitlr -O2 -DRT_EXIT_LR
# the function before rt_task_exit in the code
pre=$(arm-none-eabi-nm -n "$exe" | awk '$2 ~ /^[Tt]$/ { if ($3 == "rt_task_exit") { print prev; exit } prev = $3 }')
"$M" --format folded --raw "$TMP/$N.bin" --elf "$exe" --base $RAM >"$TMP/$N.folded" 2>/dev/null
check_eq "$N raw folded: one frame ($pre) past each task's entry" "fw_reset;main 4096
$pre;task_a;a_keep 192
$pre;task_a;a_leak 72
$pre;task_a;a_local 88
$pre;task_b;b_local 56
$pre;task_b;b_rec;b_rec;b_rec;b_rec 192
$pre;task_c;c_grow 200
$pre;task_c;c_leak 96
$pre;task_c;c_local 120" "$(sort "$TMP/$N.folded")"
done_testing
