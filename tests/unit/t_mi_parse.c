/* t_mi_parse.c - the MI parser (mi/parse.c) without gdb: every line of the
 * transcripts recorded by fixtures/mi/record.sh (warnings, errors, non-ASCII
 * names, a very long line, output cut short), hand-written grammar corners, and
 * a fuzz loop over random and mutated lines that must never crash (run it under
 * make SANITIZE=1 to let ASan judge).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mi.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* Parse every complete line of a transcript; count records by kind and lines that
 * failed. The last line, if not ended by '\n', is parsed too and counted in
 * *tail_failed. Calls fn on each record. */
struct tally {
	int kinds[8];
	int failed;
	int tail_failed;
	int lines;
	size_t longest;
};

typedef void (*record_fn)(const struct mi_record *rec, void *ctx);

static void parse_all(const char *buf, size_t len, struct tally *t, record_fn fn, void *ctx)
{
	size_t start = 0;

	memset(t, 0, sizeof *t);
	while (start < len) {
		const char *nl = memchr(buf + start, '\n', len - start);
		size_t l = nl ? (size_t)(nl - (buf + start)) + 1 : len - start;
		struct mi_record rec;
		struct mi_error err;

		t->lines++;
		if (l > t->longest)
			t->longest = l;
		if (mi_parse_line(buf + start, l, &rec, &err) < 0) {
			if (nl)
				t->failed++;
			else
				t->tail_failed++;
		} else {
			t->kinds[rec.kind]++;
			if (fn)
				fn(&rec, ctx);
			mi_record_release(&rec);
		}
		start += l;
	}
}

/* ---- checks on symbolize.txt ---- */
struct sym_ctx {
	int saw_info_symbol, saw_error_msg, saw_undefined_code, saw_quoted, saw_warning;
	int saw_disasm_line, exit_token;
};

static void sym_record(const struct mi_record *rec, void *vctx)
{
	struct sym_ctx *c = vctx;

	if (rec->kind == MI_REC_CONSOLE && strcmp(rec->text, "main in section .text\n") == 0)
		c->saw_info_symbol = 1;
	if (rec->kind == MI_REC_CONSOLE && strcmp(rec->text, "warning-free \"quoted\"\n") == 0)
		c->saw_quoted = 1;
	if (rec->kind == MI_REC_LOG && strcmp(rec->text, "Warning: /nonexistent-dir: No such file or directory.\n") == 0)
		c->saw_warning = 1;
	if (rec->kind == MI_REC_RESULT && rec->has_token && rec->token == 5 &&
	    strcmp(rec->klass, "error") == 0 &&
	    strcmp(mi_value_str(rec->results, "msg"), "/nonexistent/core: No such file or directory.") == 0)
		c->saw_error_msg = 1;
	if (rec->kind == MI_REC_RESULT && rec->token == 6 && mi_value_str(rec->results, "code") &&
	    strcmp(mi_value_str(rec->results, "code"), "undefined-command") == 0)
		c->saw_undefined_code = 1;
	if (rec->kind == MI_REC_RESULT && rec->token == 3) {
		const struct mi_value *insns = mi_value_get(rec->results, "asm_insns");

		if (insns && insns->kind == MI_LIST && insns->nitems == 1 &&
		    strcmp(insns->items[0].name, "src_and_asm_line") == 0 &&
		    strcmp(mi_value_str(insns->items[0].value, "line"), "21") == 0) {
			const struct mi_value *li = mi_value_get(insns->items[0].value, "line_asm_insn");

			if (li && li->kind == MI_LIST && li->nitems == 1 && !li->items[0].name &&
			    strcmp(mi_value_str(li->items[0].value, "func-name"), "main") == 0)
				c->saw_disasm_line = 1;
		}
	}
	if (rec->kind == MI_REC_RESULT && strcmp(rec->klass, "exit") == 0)
		c->exit_token = (int)rec->token;
}

/* ---- checks on nonascii.txt ---- */
static int nonascii_names;

static void nonascii_record(const struct mi_record *rec, void *ctx)
{
	const struct mi_value *insns;

	(void)ctx;
	if (rec->kind != MI_REC_RESULT || rec->token != 3)
		return;
	insns = mi_value_get(rec->results, "asm_insns");
	if (insns && insns->nitems == 1 &&
	    strcmp(mi_value_str(insns->items[0].value, "func-name"), "gr\xc3\xb6\xc3\x9f" "e") == 0)
		nonascii_names++;
}

/* ---- checks on longline.txt ---- */
static size_t long_insns;

static void long_record(const struct mi_record *rec, void *ctx)
{
	const struct mi_value *insns;
	size_t i;

	(void)ctx;
	if (rec->kind != MI_REC_RESULT || rec->token != 2)
		return;
	insns = mi_value_get(rec->results, "asm_insns");
	for (i = 0; insns && i < insns->nitems; i++) {
		const struct mi_value *li = mi_value_get(insns->items[i].value, "line_asm_insn");

		if (li)
			long_insns += li->nitems;
	}
}

static int parses(const char *line)
{
	struct mi_record rec;
	struct mi_error err;
	int r = mi_parse_line(line, strlen(line), &rec, &err);

	mi_record_release(&rec);
	return r == 0;
}

/* xorshift: a fixed sequence, so a failure can be reproduced. */
static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

static unsigned long long rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

int main(void)
{
	const char *dir = getenv("MI_FIXTURES") ? getenv("MI_FIXTURES") : "fixtures/mi";
	char path[1024];
	char *buf;
	size_t len;
	struct tally t;

	/* symbolize.txt */
	snprintf(path, sizeof path, "%s/symbolize.txt", dir);
	buf = slurp(path, &len);
	CHECK("symbolize.txt is there", buf != NULL);
	if (buf) {
		struct sym_ctx c;

		memset(&c, 0, sizeof c);
		parse_all(buf, len, &t, sym_record, &c);
		CHECK("symbolize.txt: every line parses", t.failed == 0 && t.tail_failed == 0);
		CHECK("symbolize.txt: 10 prompts", t.kinds[MI_REC_PROMPT] == 10);
		CHECK("symbolize.txt: 10 result records", t.kinds[MI_REC_RESULT] == 10);
		CHECK("symbolize.txt: info symbol console text", c.saw_info_symbol);
		CHECK("symbolize.txt: ^error msg of core-file", c.saw_error_msg);
		CHECK("symbolize.txt: ^error code undefined-command", c.saw_undefined_code);
		CHECK("symbolize.txt: escaped quotes in console text", c.saw_quoted);
		CHECK("symbolize.txt: warning on the log stream", c.saw_warning);
		CHECK("symbolize.txt: source-centric disassembly tree", c.saw_disasm_line);
		CHECK("symbolize.txt: ^exit has token 10", c.exit_token == 10);
		free(buf);
	}

	/* nonascii.txt */
	snprintf(path, sizeof path, "%s/nonascii.txt", dir);
	buf = slurp(path, &len);
	CHECK("nonascii.txt is there", buf != NULL);
	if (buf) {
		parse_all(buf, len, &t, nonascii_record, NULL);
		CHECK("nonascii.txt: every line parses", t.failed == 0 && t.tail_failed == 0);
		CHECK("nonascii.txt: octal escapes give the UTF-8 name", nonascii_names == 1);
		free(buf);
	}

	/* longline.txt */
	snprintf(path, sizeof path, "%s/longline.txt", dir);
	buf = slurp(path, &len);
	CHECK("longline.txt is there", buf != NULL);
	if (buf) {
		parse_all(buf, len, &t, long_record, NULL);
		CHECK("longline.txt: every line parses", t.failed == 0 && t.tail_failed == 0);
		CHECK("longline.txt: a line over 30000 bytes", t.longest > 30000);
		CHECK("longline.txt: hundreds of instructions in it", long_insns > 300);
		free(buf);
	}

	/* truncated.txt: complete lines parse, the cut one fails cleanly */
	snprintf(path, sizeof path, "%s/truncated.txt", dir);
	buf = slurp(path, &len);
	CHECK("truncated.txt is there", buf != NULL);
	if (buf) {
		struct mi_record rec;
		struct mi_error err;
		const char *last = buf + len;

		parse_all(buf, len, &t, NULL, NULL);
		CHECK("truncated.txt: complete lines parse", t.failed == 0);
		CHECK("truncated.txt: the cut line is refused", t.tail_failed == 1);
		while (last > buf && last[-1] != '\n')
			last--;
		CHECK("truncated.txt: error says why",
		      mi_parse_line(last, (size_t)(buf + len - last), &rec, &err) < 0 &&
		      err.code == MI_EPROTO && strstr(err.msg, "column") != NULL);
		free(buf);
	}

	/* grammar corners */
	{
		struct mi_record rec;
		struct mi_error err;
		static const char esc[] = "~\"a\\nb\\tc\\\\d\\\"e\\303\\266\\000f\\177\\e\\x41\\q\"\r\n";

		CHECK("stream escapes", mi_parse_line(esc, strlen(esc), &rec, &err) == 0 &&
		      rec.kind == MI_REC_CONSOLE && rec.text_len == 17 &&
		      memcmp(rec.text, "a\nb\tc\\d\"e\xc3\xb6\0f\x7f\033Aq", 17) == 0);
		mi_record_release(&rec);

		CHECK("token, empty tuple and list",
		      mi_parse_line("42^done,a={},b=[]", 17, &rec, &err) == 0 && rec.has_token &&
		      rec.token == 42 && rec.results->nitems == 2 &&
		      mi_value_get(rec.results, "a")->kind == MI_TUPLE &&
		      mi_value_get(rec.results, "a")->nitems == 0 &&
		      mi_value_get(rec.results, "b")->kind == MI_LIST);
		mi_record_release(&rec);

		static const char lists[] = "*stopped,v=[\"1\",{x=\"2\"},[\"3\"]],r=[frame={},frame={level=\"1\"}]";

		CHECK("list of values and list of results",
		      mi_parse_line(lists, strlen(lists), &rec, &err) == 0 && rec.kind == MI_REC_EXEC &&
		      strcmp(rec.klass, "stopped") == 0 &&
		      mi_value_get(rec.results, "v")->nitems == 3 &&
		      mi_value_get(rec.results, "v")->items[0].name == NULL &&
		      mi_value_get(rec.results, "r")->nitems == 2 &&
		      strcmp(mi_value_get(rec.results, "r")->items[1].name, "frame") == 0);
		mi_record_release(&rec);

		CHECK("async classes", parses("+download,section=\".text\"") && parses("=thread-created,id=\"1\"") &&
		      parses("*running,thread-id=\"all\"") && parses("^running") && parses("@\"out\""));
		CHECK("prompt with and without the space", parses("(gdb) \n") && parses("(gdb)"));
		CHECK("log stream", mi_parse_line("&\"warn\\n\"", 9, &rec, &err) == 0 &&
		      rec.kind == MI_REC_LOG && strcmp(rec.text, "warn\n") == 0);
		mi_record_release(&rec);

		CHECK("not MI: plain text", !parses("Reading symbols from x..."));
		CHECK("not MI: empty line", !parses("") && !parses("\n"));
		CHECK("refused: missing '='", !parses("^done,a\"1\""));
		CHECK("refused: unclosed tuple", !parses("^done,a={b=\"1\""));
		CHECK("refused: junk after record", !parses("^done,a=\"1\" x"));
		CHECK("refused: token on a stream record", !parses("12~\"x\""));
		CHECK("refused: bare value in a tuple", !parses("^done,a={\"1\"}"));
		CHECK("refused: escape at the end", !parses("~\"abc\\"));
		CHECK("refused: huge token", !parses("99999999999999999999999^done"));
		CHECK("NULL line", mi_parse_line(NULL, 5, &rec, &err) < 0);
	}

	/* deep nesting is refused, not a stack overflow */
	{
		size_t n = 200000, i;
		char *deep = malloc(n + 16);

		strcpy(deep, "^done,a=");
		for (i = 0; i < n; i++)
			deep[8 + i] = (i & 1) ? '{' : '[';
		deep[8 + n] = '\0';
		CHECK("deep nesting refused", !parses(deep));
		free(deep);
	}

	/* mi_quote round trip, and the size it reports */
	{
		static const char orig[] = "a \"b\"\\c\nd\te\x01\x7f\xc3\xb6 end";
		char q[128], line[160];
		struct mi_record rec;
		struct mi_error err;
		size_t need = mi_quote(q, sizeof q, orig);

		snprintf(line, sizeof line, "~%s", q);
		CHECK("mi_quote round trip", need == strlen(q) &&
		      mi_parse_line(line, strlen(line), &rec, &err) == 0 &&
		      strcmp(rec.text, orig) == 0);
		mi_record_release(&rec);
		CHECK("mi_quote truncates and reports the need", mi_quote(q, 4, orig) == need && strlen(q) == 3);
	}

	/* fuzz: random bytes, then fixture lines with bytes flipped, cut and spliced */
	{
		static const char alphabet[] = "^*+=~@&\"\\{}[],=0123456789abcdefgn()";
		char line[512];
		int i, ok = 0, bad = 0;

		for (i = 0; i < 200000; i++) {
			size_t n = (size_t)(rng() % sizeof line), k;
			struct mi_record rec;
			struct mi_error err;

			for (k = 0; k < n; k++)
				line[k] = (i & 1) ? (char)rng() : alphabet[rng() % (sizeof alphabet - 1)];
			if (mi_parse_line(line, n, &rec, &err) == 0)
				ok++;
			else if (err.code == MI_EPROTO && err.msg[0])
				bad++;
			mi_record_release(&rec);
		}
		CHECK("fuzz: 200000 random lines, each parsed or refused with a message", ok + bad == 200000);

		snprintf(path, sizeof path, "%s/symbolize.txt", dir);
		buf = slurp(path, &len);
		if (buf) {
			char *m = malloc(len + 1);
			int rounds = 20000, j;

			ok = bad = 0;
			for (j = 0; j < rounds; j++) {
				size_t start = (size_t)(rng() % len), l, f;
				const char *nl;
				struct mi_record rec;
				struct mi_error err;

				/* a line of the transcript (from a random point) */
				while (start > 0 && buf[start - 1] != '\n')
					start--;
				nl = memchr(buf + start, '\n', len - start);
				l = nl ? (size_t)(nl - (buf + start)) + 1 : len - start;
				memcpy(m, buf + start, l);
				for (f = 0; f < 1 + rng() % 4 && l; f++) {
					size_t at = (size_t)(rng() % l);

					switch (rng() % 3) {
					case 0: m[at] = (char)rng(); break;
					case 1: l = at; break;
					default: m[at] = alphabet[rng() % (sizeof alphabet - 1)];
					}
				}
				if (mi_parse_line(m, l, &rec, &err) == 0)
					ok++;
				else
					bad++;
				mi_record_release(&rec);
			}
			CHECK("fuzz: 20000 mutated transcript lines survive", ok + bad == rounds && ok > 0 && bad > 0);
			free(m);
			free(buf);
		}
	}
	return CHECK_DONE();
}
