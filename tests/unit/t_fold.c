/* t_fold.c - the folded-stack text of cli/fold.c (white-box: the file is
 * included): frame text for named, unnamed and module-less frames, the
 * characters a folded line cannot hold, --folded-lines, the order that keeps a
 * frame's callees together, and the aggregation of equal stacks. */
#include <stdlib.h>
#include <string.h>

#include "../../cli/fold.c"
#include "../../cli/out.c"
#include "check.h"

static const char *text(const struct an_frame *fr, enum cli_fold_mode mode)
{
	static struct cli_buf b;

	b.len = 0;
	cli_buf_add(&b, "", 0);
	cli_fold_frame(&b, fr, mode);
	return b.s;
}

int main(void)
{
	struct an_frame fr = { 0 };
	struct cli_fold f = { 0 };
	struct cli_fold_entry *e;
	static const char *keys[] = { "a;b!", "a;b;c", "a;b", "a;bx", "a;b;c", "a" };

	fr.addr = 0x7f0000401234;
	fr.function = "main";
	fr.file = "/src/dir/prog.c";
	fr.line = 42;
	fr.module = "/usr/bin/prog";
	fr.modoff = 0x1234;
	CHECK("named frame: the function", !strcmp(text(&fr, FOLD_NAMES), "main"));
	CHECK("--folded-lines: file's base name and line", !strcmp(text(&fr, FOLD_LINES), "main (prog.c:42)"));
	CHECK("split form for the svg", !strcmp(text(&fr, FOLD_SPLIT), "main\x1fprog.c:42"));
	fr.function = "f;g\nh\ti";
	CHECK("';' becomes ':', control characters '?'", !strcmp(text(&fr, FOLD_NAMES), "f:g?h?i"));
	fr.function = "ns::T<int, 2>::m(char const*)";
	CHECK("C++ names kept whole, spaces included",
	      !strcmp(text(&fr, FOLD_NAMES), "ns::T<int, 2>::m(char const*)"));
	fr.function = NULL;
	fr.file = NULL;
	CHECK("unnamed frame: module+offset", !strcmp(text(&fr, FOLD_LINES), "prog+0x1234"));
	fr.module = NULL;
	CHECK("no module: the address", !strcmp(text(&fr, FOLD_NAMES), "0x7f0000401234"));
	fr.function = "main";
	CHECK("no file: no place even with lines", !strcmp(text(&fr, FOLD_LINES), "main"));

	CHECK("cmp: a frame's callees right after it", cli_fold_cmp("a;b", "a;b;c") < 0 &&
	      cli_fold_cmp("a;b;c", "a;b!") < 0 && cli_fold_cmp("a;b!", "a;bx") < 0);
	CHECK("cmp: equal", cli_fold_cmp("a;b", "a;b") == 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		CHECK("push", cli_fold_push(&f, keys[i], (uint32_t)i, 0) == 0);
		f.v[f.n - 1].bytes = 10 * (i + 1);
		f.v[f.n - 1].blocks = 1;
	}
	cli_fold_sort(&f);
	CHECK("sort: 5 distinct stacks", f.n == 5);
	CHECK("sort: order", f.n == 5 && !strcmp(f.v[0].key, "a") && !strcmp(f.v[1].key, "a;b") &&
	      !strcmp(f.v[2].key, "a;b;c") && !strcmp(f.v[3].key, "a;b!") && !strcmp(f.v[4].key, "a;bx"));
	e = cli_fold_find(&f, "a;b;c");
	CHECK("equal stacks aggregated: 20 + 50 bytes, 2 blocks",
	      e && e->bytes == 70 && e->blocks == 2 && e->stack == 1);
	CHECK("find: missing", cli_fold_find(&f, "a;c") == NULL);
	CHECK("find: first", (e = cli_fold_find(&f, "a")) && e->bytes == 60);
	cli_fold_release(&f);
	CHECK("release empties", f.n == 0 && f.v == NULL);
	return CHECK_DONE();
}
