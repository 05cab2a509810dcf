#!/bin/sh
# demo.sh - the main job on a bundled example: build examples/massif_example.c, run
# it under the preload until it aborts (a kernel core), and report the core.
set -e
B=${B:-build}
D=$B/demo
mkdir -p "$D"
cc -g -O1 -fno-omit-frame-pointer -o "$D/massif_example" examples/massif_example.c
rm -f "$D/core"
echo "\$ LD_PRELOAD=$B/libheapann.so $D/massif_example abort    # dumps $D/core"
(cd "$D" && ulimit -c unlimited && LD_PRELOAD=../libheapann.so ./massif_example abort) 2>/dev/null || true
if [ ! -s "$D/core" ]; then
	echo "demo: no core was written (ulimit -c, or /proc/sys/kernel/core_pattern is not 'core')" >&2
	exit 1
fi
echo "\$ $B/mprof-core $D/massif_example $D/core"
"$B/mprof-core" "$D/massif_example" "$D/core"
