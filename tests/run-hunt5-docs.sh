#!/bin/sh
# run-hunt5-docs.sh - every option mprof-core and heapann accept is in their
# --help, in their man page and in README.md (the fifth bug hunt found --output
# and --help missing from mprof-core's); and every option the docs name is
# accepted (a bad one is exit 2 'bad option').
. tests/lib.sh
[ -x "$B/mprof-core" ] && [ -x "$B/heapann" ] || skip "build first"
"$B/mprof-core" --help >"$TMP/mhelp"
"$B/heapann" --help >"$TMP/hhelp"
# the long options of a getopt_long table: { "name", ..._argument
longopts() { sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", \(no\|required\)_argument.*/\1/p' "$1"; }
longopts cli/main.c >"$TMP/mopts"
check "mprof-core: its option table read" test "$(wc -l <"$TMP/mopts")" -ge 25
# a man page writes "--name" as \-\-name
man_has() { grep -q -- "\\\\-\\\\-$(printf %s "$2" | sed 's/-/\\\\-/g')\\b" "$1"; }
while read -r o; do
	check "mprof-core --$o: in --help" grep -q -- "--$o\\b" "$TMP/mhelp"
	check "mprof-core --$o: in doc/mprof-core.1" man_has doc/mprof-core.1 "$o"
	check "mprof-core --$o: in README.md" grep -q -- "--$o\\b" README.md
	check "mprof-core --$o: in completion/mprof-core" grep -q -- "--$o\\b" completion/mprof-core
done <"$TMP/mopts"
# every --report name parse_reports takes is one completion offers (before,
# temporary and types were left out)
for r in $(sed -n '/^static unsigned parse_reports/,/^}/p' cli/main.c | grep -o '{ "[a-z]*", REP_' | cut -d'"' -f2); do
	check "mprof-core --report=$r: in completion/mprof-core" \
		grep -q "^_heapann_reports=\".*\b$r\b" completion/mprof-core
done
# heapann's own options and those it passes on
longopts launcher/heapann.c >"$TMP/hopts"
sed -n '/^static const char \*const pass_arg\[\]/,/^};/p; /^static const char \*const pass_flag\[\]/p' launcher/heapann.c |
	grep -o '"--[a-z-]*"' | tr -d '"' | sed 's/^--//' >>"$TMP/hopts"
while read -r o; do
	check "heapann --$o: in --help" grep -q -- "--$o\\b" "$TMP/hhelp"
	check "heapann --$o: in doc/heapann.1" man_has doc/heapann.1 "$o"
	check "heapann --$o: in completion/heapann" grep -q -- "--$o\\b" completion/heapann
done <"$TMP/hopts"
# every option --help shows is accepted: nothing says "bad option" (but --prog
# and --no-report, which only snapshot takes)
for o in $(grep -o -- '--[a-z][a-z-]*' "$TMP/mhelp" | sort -u | grep -v -e '^--prog$' -e '^--no-report$'); do
	"$B/mprof-core" $o x /dev/null /dev/null >/dev/null 2>"$TMP/err"
	check "mprof-core $o (from --help): accepted" sh -c "! grep -q 'bad option' '$TMP/err'"
done
# every member of a JSON report is in README's "JSON output" (headers_cut was not)
cc -g -o "$TMP/prog" examples/massif_example.c
(cd "$TMP" && ulimit -c unlimited && LD_PRELOAD="$TOP/$B/libheapann.so" "$TMP/prog" abort) 2>/dev/null
if [ -s "$TMP/core" ]; then
	"$B/mprof-core" --format json --report all --blocks "$TMP/prog" "$TMP/core" >"$TMP/j.json" 2>/dev/null
	sed -n '/^## JSON output/,/^## Formats/p' README.md >"$TMP/readme.json"
	python3 - "$TMP/j.json" >"$TMP/keys" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = set(d)
for k in ("missing", "statistics"):
    keys |= set(d[k])
for k in ("stacks", "block_list", "direct", "leaks", "bins", "graph", "timeline"):
    if d.get(k):
        keys |= set(d[k][0])
keys |= set(d["stacks"][0]["frames"][0])
print("\n".join(sorted(keys)))
PY
	check "JSON members read" test "$(wc -l <"$TMP/keys")" -ge 40
	while read -r k; do
		check "JSON member \"$k\" in README" grep -q "\"$k\"" "$TMP/readme.json"
	done <"$TMP/keys"
fi

done_testing
