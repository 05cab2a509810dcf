#!/bin/sh
# fuzz-smoke.sh - make fuzz-smoke: run every libFuzzer target of $B/fuzz/ for
# FUZZ_SECS seconds (default 25) on its seed corpus, with -timeout=1 (an input
# slower than a second is a finding) and leak detection. New inputs go to a scratch
# directory, findings to FUZZ_OUT (default: a scratch directory, kept when there is
# one). Prints the executions per target; exits 1 on any crash, leak, sanitizer
# report or time-out. FUZZ_TARGETS narrows the list ("scan reach"). FUZZ_SEED fixes
# libFuzzer's random seed (CI sets it, so that a clean clone explores the same
# inputs each time, as far as its speed lets it; without it each run is new).
B=${B:-build}
SECS=${FUZZ_SECS:-25}
F=$B/fuzz
[ -x "$F/fuzz_all" ] || { echo "fuzz-smoke: SKIPPED: no fuzz targets in $F (make fuzz needs clang-14)"; exit 0; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-smoke.XXXXXX")
OUT=${FUZZ_OUT:-$WORK/findings}
mkdir -p "$OUT"
corpus() {
	case $1 in
	raw) echo tests/fuzz/corpus/raw ;;
	mi) echo fixtures/mi ;;
	symdw) echo tests/fuzz/corpus/symdw tests/fuzz/regress-symdw ;;
	symcache) echo tests/fuzz/corpus/symcache tests/fuzz/regress-symcache ;;
	*) echo tests/fuzz/corpus/image tests/fuzz/regress ;;
	esac
}
targets=${FUZZ_TARGETS:-"core raw scan stats reach addr all mi symdw symcache"}
failed=0 total=0
for t in $targets; do
	mkdir -p "$WORK/$t"
	# shellcheck disable=SC2046
	"$F/fuzz_$t" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -max_total_time="$SECS" -timeout=1 -rss_limit_mb=2048 -detect_leaks=1 \
		-print_final_stats=1 -artifact_prefix="$OUT/$t-" "$WORK/$t" $(corpus "$t") \
		>"$WORK/$t.log" 2>&1
	rc=$?
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t.log" | tail -n 1)
	total=$((total + ${n:-0}))
	if [ $rc -eq 0 ]; then
		echo "fuzz-smoke: $t: ${n:-0} executions in ${SECS} s, no finding"
	else
		failed=$((failed + 1))
		echo "fuzz-smoke: $t: FAILED (exit $rc) after ${n:-?} executions:"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error:|ALARM|artifact_prefix|Test unit written)' \
			"$WORK/$t.log" | head -n 8 | sed 's/^/    /'
		cp "$WORK/$t.log" "$OUT/$t.log"
	fi
done
echo "fuzz-smoke: $total executions in all, $failed target(s) failed"
if [ $failed -eq 0 ]; then
	rm -rf "$WORK"
	exit 0
fi
echo "fuzz-smoke: findings and logs in $OUT"
exit 1
