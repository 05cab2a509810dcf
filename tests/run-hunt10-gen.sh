#!/bin/sh
# run-hunt10-gen.sh - tests/hunt9.py's generated programs with what
# randprog.py adds under "h10" (tests/hunt10.py): 2-8 threads allocating at
# once; blocks held only in a thread's stack, in a thread's own TLS, or (a gdb
# breakpoint at the first instruction of a leaf, -O2) only in a register;
# realloc(NULL, n), realloc(p, 0), reallocarray from a block and from NULL,
# memalign, valloc, pvalloc, and calloc and reallocarray overflowing; a freed
# block reused by a smaller one; two signal snapshots (HEAPANN_SNAPSHOT=signal)
# around the program's middle. Besides hunt9's checks: the statistics' calls
# per entry point, --why's root kind (stack, tls with the variable, register)
# and thread, --addr on freed blocks (intact, reused, past their end) and past
# live blocks' guards, --addr in each thread's TLS and stack, and `mprof-core
# diff` of the two snapshots (blocks, bytes, allocations and frees in between,
# per stack); a fork()ed child's own snapshot (the parent's blocks, its own,
# its statistics less the parent's last snapshot's). Fixed seeds here (7 and
# 12: TLS of threads in an exit snapshot; 12: a freed 1,024-byte block whose
# SIZE word glibc reused; 152: two such blocks in chunks merged with free
# neighbours since; 3: a child; 34 at -O2: a register); HUNT10_SEEDS=N runs
# seeds 1..N in every build below by hand.
. tests/lib.sh
gen_needs

if [ -n "${HUNT10_SEEDS:-}" ]; then
	seeds=$(seq 1 "$HUNT10_SEEDS")
else
	seeds="3 7 12 152"
fi
few=${HUNT10_SEEDS:+$seeds}
hunt10() { gen_run hunt10 "$@"; }
hunt10 --opt 0 $seeds
hunt10 --opt 2 ${few:-20 34}
command -v clang-14 >/dev/null && hunt10 --cc clang-14 --opt 0 --no-pie ${few:-50}
hunt10 --cxx --opt 2 ${few:-3}
done_testing
