#!/bin/sh
# mkseeds.sh - regenerate the fuzz seed corpora in tests/fuzz/corpus/ (run from the
# top of the tree after make): small real cores of tests/prog programs run under
# libheapann (gcore, trimmed by trimcore.py to at most 160 KiB), the firmware raw
# dumps of fixtures/fw, and a small program ELF for the symbolizer. The MI target's
# seeds are the recorded transcripts in fixtures/mi (used in place).
#   image/  tests/fuzz/fz.h format: cores (selector 0x12) and raw dumps (0x03)
#   raw/    fuzz_raw's format: word size byte, base, dump
#   symdw/  a program ELF with DWARF
set -e
B=${B:-build}
. tests/lib.sh
C=tests/fuzz/corpus
mkdir -p $C/image $C/raw $C/symdw
cc -g -O2 -pthread -o "$TMP/lost_prog" tests/prog/lost_prog.c
# a small statistics region (16 stack slots) so that it fits in the seed whole
HEAPANN_STATS_STACKS=16 LOST_ABORT=2 gcore_waiting "$TMP/core" "$TMP/lost_prog" || true
python3 tests/fuzz/trimcore.py "$TMP/core" $C/image/lost_prog.core
# the statistics region is 564 KiB even so (its timeline): one seed holds it whole
python3 tests/fuzz/trimcore.py "$TMP/core" $C/image/stats.core 600000
cc -g -O0 -o "$TMP/corrupt_overflow" tests/prog/corrupt_overflow.c
gcore_waiting "$TMP/core2" "$TMP/corrupt_overflow" overflow 100 40 wait || true
python3 tests/fuzz/trimcore.py "$TMP/core2" $C/image/overflow.core
# raw dumps: selector, word size (0x04 little, 0x84 big), base (8 bytes LE), dump
raw() { # NAME WSIZE-BYTE BASE BIN
	python3 -c 'import struct,sys; sys.stdout.buffer.write(bytes([int(sys.argv[1],0)]) + struct.pack("<Q", int(sys.argv[2],0)))' "$2" "$3" >"$C/raw/$1"
	cat "$4" >>"$C/raw/$1"
	{ printf '\003'; cat "$C/raw/$1"; } >"$C/image/$1"
}
raw arm.raw 0x04 "$(sed -n 's/^base=//p' fixtures/fw/arm.info)" fixtures/fw/arm.bin
raw mips.raw 0x84 "$(sed -n 's/^base=//p' fixtures/fw/mips.info)" fixtures/fw/mips.bin
cc -g -O1 -o $C/symdw/sym_basic tests/prog/sym_basic.c
ls -l $C/*
