#!/bin/sh
# run-hunt9-gen.sh - generated programs against mprof-core (tests/hunt9.py,
# tests/prog/randprog.py): per seed a C program with a random call tree over
# several files (static, inline-able, one recursion), every malloc-family entry
# point at known lines and sizes (0, odd, mmap'd), frees, links between blocks,
# holders in globals, TLS and main's stack, up to 3 threads, ending in a gcore,
# a kernel core from abort or the exit snapshot. Each block is checked by its
# address (size, stack), then the stacks, the lost report's categories (memcheck's
# algorithm over the real addresses), the direct, bin and leak tables, the
# statistics and --addr answers, against what the generator knows. Also as C++
# (g++ -O2: new[] and new of a struct, freed with delete[] and delete).
# Fixed seeds here (seed 77: a leaked malloc(0) block whose next glibc chunk,
# free, began at its user address: main_arena's bin pointer made it "still
# reachable"); HUNT9_SEEDS=N runs seeds 1..N in every build below by hand.
. tests/lib.sh
gen_needs

if [ -n "${HUNT9_SEEDS:-}" ]; then
	seeds=$(seq 1 "$HUNT9_SEEDS")
else
	seeds="5 8 14 30 37 77"
fi
# the other builds: three of them (keeping this script near a minute)
few=${HUNT9_SEEDS:+$seeds}
few=${few:-5 14 77}
hunt9() { gen_run hunt9 "$@"; }
hunt9 --opt 0 $seeds
hunt9 --opt 2 --no-pie $few
command -v clang-14 >/dev/null && hunt9 --cc clang-14 --opt 2 $few
hunt9 --opt 0 --depth 3 $few
hunt9 --cxx --opt 2 $few
# seed 202 at clang-14 -O0: glibc's main_arena pointed 112 bytes into a lost
# block, which read possibly lost (with what it held) while it was a root
command -v clang-14 >/dev/null && [ -z "${HUNT9_SEEDS:-}" ] && hunt9 --cc clang-14 --opt 0 202
done_testing
