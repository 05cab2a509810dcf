/* parse.c - the GDB/MI output grammar: result, async and stream records, tuples,
 * lists and c-strings with every escape gdb writes (octal for each non-ASCII byte).
 * Input is any byte string (it comes from another process, and the fuzz test feeds
 * garbage): every read is bounded by len, recursion by MI_MAX_DEPTH.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>

#include "mi.h"

#define MI_MAX_DEPTH 256

struct mi_parser {
	const char *s;
	size_t len;
	size_t pos;
	struct mi_error *err;
	int failed;
};

static void parse_fail(struct mi_parser *p, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->failed)
		return;
	p->failed = 1;
	if (!p->err)
		return;
	p->err->code = code;
	n = snprintf(p->err->msg, sizeof p->err->msg, "column %zu: ", p->pos + 1);
	if (n < 0 || (size_t)n >= sizeof p->err->msg)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err->msg + n, sizeof p->err->msg - (size_t)n, fmt, ap);
	va_end(ap);
}

static int peek(const struct mi_parser *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

void mi_value_free(struct mi_value *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->nitems; i++) {
		free(v->items[i].name);
		mi_value_free(v->items[i].value);
	}
	free(v->items);
	free(v->str);
	free(v);
}

/* Octal digit value or -1. */
static int octal(int c)
{
	return c >= '0' && c <= '7' ? c - '0' : -1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A c-string starting at the opening quote. Returns a malloc'd NUL-terminated
 * buffer and its length in *outlen, or NULL on error. */
static char *parse_cstring(struct mi_parser *p, size_t *outlen)
{
	size_t start, end, n = 0;
	char *buf;

	if (peek(p) != '"') {
		parse_fail(p, MI_EPROTO, "expected '\"'");
		return NULL;
	}
	p->pos++;
	start = p->pos;
	/* The unescaped text is never longer than the escaped one, which ends at the
	 * first unescaped quote: size the buffer for that, not for the rest of the
	 * line (a long line holds many strings). */
	for (end = start; end < p->len && p->s[end] != '"'; end += p->s[end] == '\\' ? 2 : 1)
		;
	if (end > p->len)
		end = p->len;
	buf = malloc(end - start + 1);
	if (!buf) {
		parse_fail(p, MI_ENOMEM, "out of memory");
		return NULL;
	}
	for (;;) {
		int c = peek(p), d, v, k;

		if (c < 0) {
			parse_fail(p, MI_EPROTO, "unterminated c-string");
			free(buf);
			return NULL;
		}
		p->pos++;
		if (c == '"')
			break;
		if (c != '\\') {
			buf[n++] = (char)c;
			continue;
		}
		c = peek(p);
		if (c < 0) {
			parse_fail(p, MI_EPROTO, "unterminated escape");
			free(buf);
			return NULL;
		}
		p->pos++;
		switch (c) {
		case 'n': buf[n++] = '\n'; break;
		case 't': buf[n++] = '\t'; break;
		case 'r': buf[n++] = '\r'; break;
		case 'a': buf[n++] = '\a'; break;
		case 'b': buf[n++] = '\b'; break;
		case 'f': buf[n++] = '\f'; break;
		case 'v': buf[n++] = '\v'; break;
		case 'e': buf[n++] = '\033'; break;
		case 'x':
			/* \xHH (gdb does not write it, but C does): up to two digits. */
			v = 0;
			for (k = 0; k < 2 && (d = hexval(peek(p))) >= 0; k++) {
				v = v * 16 + d;
				p->pos++;
			}
			buf[n++] = k ? (char)v : 'x';
			break;
		default:
			if (octal(c) >= 0) {
				/* \ooo: one to three octal digits, the value of one byte. */
				v = octal(c);
				for (k = 1; k < 3 && (d = octal(peek(p))) >= 0; k++) {
					v = v * 8 + d;
					p->pos++;
				}
				buf[n++] = (char)(v & 0xff);
			} else {
				/* \" \\ \' \? and anything unknown: the character itself. */
				buf[n++] = (char)c;
			}
		}
	}
	buf[n] = '\0';
	*outlen = n;
	return buf;
}

/* A variable name: anything up to '=' made of letters, digits, '-', '_', '.'. */
static char *parse_name(struct mi_parser *p)
{
	size_t start = p->pos;
	char *name;

	for (;;) {
		int c = peek(p);

		if (c < 0 || c == '=' || c == ',' || c == '{' || c == '}' || c == '[' ||
		    c == ']' || c == '"' || c == ' ' || c == '\r' || c == '\n')
			break;
		p->pos++;
	}
	if (p->pos == start) {
		parse_fail(p, MI_EPROTO, "expected a variable name");
		return NULL;
	}
	name = malloc(p->pos - start + 1);
	if (!name) {
		parse_fail(p, MI_ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(name, p->s + start, p->pos - start);
	name[p->pos - start] = '\0';
	return name;
}

static struct mi_value *value_new(enum mi_value_kind kind)
{
	struct mi_value *v = calloc(1, sizeof *v);

	if (v)
		v->kind = kind;
	return v;
}

static int value_push(struct mi_parser *p, struct mi_value *v, char *name, struct mi_value *item,
		      size_t *cap)
{
	if (v->nitems == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct mi_item *ni = realloc(v->items, ncap * sizeof *ni);

		if (!ni) {
			parse_fail(p, MI_ENOMEM, "out of memory");
			free(name);
			mi_value_free(item);
			return -1;
		}
		v->items = ni;
		*cap = ncap;
	}
	v->items[v->nitems].name = name;
	v->items[v->nitems].value = item;
	v->nitems++;
	return 0;
}

static struct mi_value *parse_value(struct mi_parser *p, unsigned depth);

/* name=value; returns 0 with *name and *val set. */
static int parse_result(struct mi_parser *p, unsigned depth, char **name, struct mi_value **val)
{
	*name = parse_name(p);
	if (!*name)
		return -1;
	if (peek(p) != '=') {
		parse_fail(p, MI_EPROTO, "expected '=' after \"%s\"", *name);
		free(*name);
		*name = NULL;
		return -1;
	}
	p->pos++;
	*val = parse_value(p, depth);
	if (!*val) {
		free(*name);
		*name = NULL;
		return -1;
	}
	return 0;
}

/* A tuple or list body after its opening bracket, up to and including close. */
static struct mi_value *parse_container(struct mi_parser *p, unsigned depth, int close)
{
	struct mi_value *v = value_new(close == '}' ? MI_TUPLE : MI_LIST);
	size_t cap = 0;

	if (!v) {
		parse_fail(p, MI_ENOMEM, "out of memory");
		return NULL;
	}
	if (peek(p) == close) {
		p->pos++;
		return v;
	}
	for (;;) {
		char *name = NULL;
		struct mi_value *item;
		int c = peek(p);

		if (close == ']' && (c == '"' || c == '{' || c == '[')) {
			/* a list of values */
			item = parse_value(p, depth + 1);
			if (!item)
				goto fail;
		} else if (parse_result(p, depth + 1, &name, &item) < 0) {
			goto fail;
		}
		if (value_push(p, v, name, item, &cap) < 0)
			goto fail;
		c = peek(p);
		if (c == ',') {
			p->pos++;
			continue;
		}
		if (c == close) {
			p->pos++;
			return v;
		}
		parse_fail(p, MI_EPROTO, "expected ',' or '%c'", close);
		goto fail;
	}
fail:
	mi_value_free(v);
	return NULL;
}

static struct mi_value *parse_value(struct mi_parser *p, unsigned depth)
{
	struct mi_value *v;
	int c = peek(p);

	if (depth > MI_MAX_DEPTH) {
		parse_fail(p, MI_EPROTO, "nested deeper than %d", MI_MAX_DEPTH);
		return NULL;
	}
	if (c == '"') {
		v = value_new(MI_CONST);
		if (!v) {
			parse_fail(p, MI_ENOMEM, "out of memory");
			return NULL;
		}
		v->str = parse_cstring(p, &v->len);
		if (!v->str) {
			free(v);
			return NULL;
		}
		return v;
	}
	if (c == '{' || c == '[') {
		p->pos++;
		return parse_container(p, depth, c == '{' ? '}' : ']');
	}
	parse_fail(p, MI_EPROTO, "expected a value ('\"', '{' or '[')");
	return NULL;
}

void mi_record_release(struct mi_record *rec)
{
	if (!rec)
		return;
	free(rec->klass);
	mi_value_free(rec->results);
	free(rec->text);
	memset(rec, 0, sizeof *rec);
}

/* Is the rest of the line blank (spaces, CR, LF)? */
static int rest_blank(const struct mi_parser *p)
{
	size_t i;

	for (i = p->pos; i < p->len; i++)
		if (p->s[i] != ' ' && p->s[i] != '\r' && p->s[i] != '\n')
			return 0;
	return 1;
}

int mi_parse_line(const char *line, size_t len, struct mi_record *rec, struct mi_error *err)
{
	struct mi_parser p = { line, len, 0, err, 0 };
	size_t cap = 0;
	int c;

	memset(rec, 0, sizeof *rec);
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (!line)
		len = p.len = 0;
	/* Strip the line end so that checks below see the record only. */
	while (p.len && (line[p.len - 1] == '\n' || line[p.len - 1] == '\r'))
		p.len--;

	if (p.len >= 5 && memcmp(line, "(gdb)", 5) == 0) {
		p.pos = 5;
		if (!rest_blank(&p)) {
			parse_fail(&p, MI_EPROTO, "junk after the prompt");
			return -1;
		}
		rec->kind = MI_REC_PROMPT;
		return 0;
	}

	/* Optional token: decimal digits. */
	while ((c = peek(&p)) >= '0' && c <= '9') {
		if (rec->token > (~0ULL - 9) / 10) {
			parse_fail(&p, MI_EPROTO, "token too large");
			return -1;
		}
		rec->token = rec->token * 10 + (unsigned)(c - '0');
		rec->has_token = 1;
		p.pos++;
	}

	c = peek(&p);
	switch (c) {
	case '~': case '@': case '&':
		if (rec->has_token) {
			parse_fail(&p, MI_EPROTO, "a stream record has no token");
			goto fail;
		}
		rec->kind = c == '~' ? MI_REC_CONSOLE : c == '@' ? MI_REC_TARGET : MI_REC_LOG;
		p.pos++;
		rec->text = parse_cstring(&p, &rec->text_len);
		if (!rec->text)
			goto fail;
		if (!rest_blank(&p)) {
			parse_fail(&p, MI_EPROTO, "junk after the c-string");
			goto fail;
		}
		return 0;
	case '^': rec->kind = MI_REC_RESULT; break;
	case '*': rec->kind = MI_REC_EXEC; break;
	case '+': rec->kind = MI_REC_STATUS; break;
	case '=': rec->kind = MI_REC_NOTIFY; break;
	case -1:
		parse_fail(&p, MI_EPROTO, "empty line");
		goto fail;
	default:
		parse_fail(&p, MI_EPROTO, "not an MI record (starts with 0x%02x)", c);
		goto fail;
	}
	p.pos++;
	/* The class: up to ',' or the end of the line. */
	{
		size_t start = p.pos;

		while ((c = peek(&p)) >= 0 && c != ',')
			p.pos++;
		/* Trailing blanks were stripped above except spaces: drop them too. */
		while (p.pos > start && line[p.pos - 1] == ' ' && c < 0)
			p.pos--;
		if (p.pos == start) {
			parse_fail(&p, MI_EPROTO, "missing record class");
			goto fail;
		}
		rec->klass = malloc(p.pos - start + 1);
		if (!rec->klass) {
			parse_fail(&p, MI_ENOMEM, "out of memory");
			goto fail;
		}
		memcpy(rec->klass, line + start, p.pos - start);
		rec->klass[p.pos - start] = '\0';
		if (memchr(rec->klass, '"', p.pos - start) || memchr(rec->klass, '=', p.pos - start) ||
		    memchr(rec->klass, '\0', p.pos - start)) {
			parse_fail(&p, MI_EPROTO, "bad record class");
			goto fail;
		}
	}
	rec->results = value_new(MI_TUPLE);
	if (!rec->results) {
		parse_fail(&p, MI_ENOMEM, "out of memory");
		goto fail;
	}
	while (peek(&p) == ',') {
		char *name;
		struct mi_value *v;

		p.pos++;
		if (parse_result(&p, 1, &name, &v) < 0)
			goto fail;
		if (value_push(&p, rec->results, name, v, &cap) < 0)
			goto fail;
	}
	if (!rest_blank(&p)) {
		parse_fail(&p, MI_EPROTO, "expected ',' or the end of the line");
		goto fail;
	}
	return 0;
fail:
	mi_record_release(rec);
	if (err && !err->code) {
		err->code = MI_EPROTO;
		snprintf(err->msg, sizeof err->msg, "bad MI line");
	}
	return -1;
}

const struct mi_value *mi_value_get(const struct mi_value *v, const char *name)
{
	size_t i;

	if (!v || v->kind == MI_CONST || !name)
		return NULL;
	for (i = 0; i < v->nitems; i++)
		if (v->items[i].name && strcmp(v->items[i].name, name) == 0)
			return v->items[i].value;
	return NULL;
}

const char *mi_value_str(const struct mi_value *v, const char *name)
{
	const struct mi_value *c = mi_value_get(v, name);

	return c && c->kind == MI_CONST ? c->str : NULL;
}

size_t mi_quote(char *buf, size_t n, const char *s)
{
	size_t need = 0;
	const unsigned char *q;

#define PUT(ch) do { if (need + 1 < n) buf[need] = (char)(ch); need++; } while (0)
	PUT('"');
	for (q = (const unsigned char *)s; *q; q++) {
		switch (*q) {
		case '"': PUT('\\'); PUT('"'); break;
		case '\\': PUT('\\'); PUT('\\'); break;
		case '\n': PUT('\\'); PUT('n'); break;
		case '\t': PUT('\\'); PUT('t'); break;
		default:
			if (*q < 0x20 || *q == 0x7f) {
				PUT('\\');
				PUT('0' + ((*q >> 6) & 7));
				PUT('0' + ((*q >> 3) & 7));
				PUT('0' + (*q & 7));
			} else {
				PUT(*q);
			}
		}
	}
	PUT('"');
#undef PUT
	if (n)
		buf[need < n ? need : n - 1] = '\0';
	return need;
}
