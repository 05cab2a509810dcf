/* rustname.c - Rust symbol names as a Rust user reads them (rustc's own
 * backtraces, rustc-demangle's "{:#}" form): the v0 scheme ("_R...") and the
 * legacy one ("_ZN...17h<hash>E"), whose hash and crate disambiguators are
 * left out. libstdc++'s __cxa_demangle does not know v0 at all and shows the
 * legacy scheme's hash and "$LT$"-style escapes.
 *
 * The input is a symbol from a file, not trusted: every read is bounded by the
 * name's end, back references must point backwards, recursion is bounded, and
 * output never passes the caller's buffer. No allocation.
 */
#include <stdint.h>
#include <string.h>

#include "sym.h"

enum { RN_MAX_DEPTH = 200 };

struct rn {
	const char *s;     /* the name after "_R" */
	size_t len;        /* its length, vendor suffix ('.' or '$' on) excluded */
	size_t pos;
	char *out;
	size_t cap, olen;
	int bad;           /* malformed, unsupported or output too long */
	int depth;         /* recursion depth */
	uint64_t bound;    /* lifetimes bound by the binders around (for<'a>) */
};

static void rn_put(struct rn *r, const char *p, size_t n)
{
	if (r->bad)
		return;
	if (r->olen + n >= r->cap) {
		r->bad = 1;
		return;
	}
	memcpy(r->out + r->olen, p, n);
	r->olen += n;
	r->out[r->olen] = '\0';
}

static void rn_puts(struct rn *r, const char *p)
{
	rn_put(r, p, strlen(p));
}

static void rn_putu(struct rn *r, uint64_t v)
{
	char b[24];
	size_t i = sizeof b;

	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rn_put(r, b + i, sizeof b - i);
}

static int rn_peek(const struct rn *r)
{
	return !r->bad && r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static int rn_eat(struct rn *r, int c)
{
	if (rn_peek(r) == c) {
		r->pos++;
		return 1;
	}
	return 0;
}

static int rn_next(struct rn *r)
{
	int c = rn_peek(r);

	if (c < 0)
		r->bad = 1;
	else
		r->pos++;
	return c;
}

/* <base-62-number>: "_" is 0, else digits then "_" for their value plus one */
static uint64_t rn_b62(struct rn *r)
{
	uint64_t v = 0;
	int c;

	if (rn_eat(r, '_'))
		return 0;
	while ((c = rn_next(r)) != '_') {
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'z')
			d = 10 + c - 'a';
		else if (c >= 'A' && c <= 'Z')
			d = 36 + c - 'A';
		else {
			r->bad = 1;
			return 0;
		}
		if (v > (UINT64_MAX - 61) / 62) {
			r->bad = 1;
			return 0;
		}
		v = v * 62 + (uint64_t)d;
	}
	if (v == UINT64_MAX)
		r->bad = 1;
	return v + 1;
}

/* [tag <base-62-number>]: 0 when the tag is absent, the number plus one else */
static uint64_t rn_opt_b62(struct rn *r, int tag)
{
	if (!rn_eat(r, tag))
		return 0;
	uint64_t v = rn_b62(r);
	if (v == UINT64_MAX)
		r->bad = 1;
	return v + 1;
}

/* <undisambiguated-identifier>: ["u"] <decimal> ["_"] <bytes>; *name and
 * *n the bytes (punycode ones, marked by *puny, are shown as they are) */
static void rn_ident(struct rn *r, const char **name, size_t *n, int *puny)
{
	uint64_t v = 0;
	int c;

	*name = "";
	*n = 0;
	*puny = rn_eat(r, 'u');
	c = rn_next(r);
	if (c < '0' || c > '9') {
		r->bad = 1;
		return;
	}
	v = (uint64_t)(c - '0');
	if (v)
		while ((c = rn_peek(r)) >= '0' && c <= '9') {
			if (v > r->len)
				break;
			v = v * 10 + (uint64_t)(c - '0');
			r->pos++;
		}
	rn_eat(r, '_');
	if (r->bad || v > r->len - r->pos) {
		r->bad = 1;
		return;
	}
	*name = r->s + r->pos;
	*n = (size_t)v;
	r->pos += (size_t)v;
}

static void rn_path(struct rn *r, int in_value);
static void rn_type(struct rn *r);

/* Run fn at the position a back reference names (strictly before it). */
static void rn_backref(struct rn *r, void (*fn)(struct rn *, int), int arg)
{
	size_t at = r->pos - 1;   /* the 'B' itself */
	uint64_t to = rn_b62(r);

	if (r->bad || to >= at) {
		r->bad = 1;
		return;
	}
	size_t back = r->pos;
	r->pos = (size_t)to;
	fn(r, arg);
	r->pos = back;
}

static void rn_type_arg(struct rn *r, int unused)
{
	(void)unused;
	rn_type(r);
}

static void rn_lifetime(struct rn *r, uint64_t lt)
{
	if (lt == 0) {
		rn_puts(r, "'_");
		return;
	}
	if (lt > r->bound) {
		r->bad = 1;
		return;
	}
	uint64_t i = r->bound - lt;
	if (i < 26) {
		char b[3] = { '\'', (char)('a' + i), '\0' };
		rn_puts(r, b);
	} else {
		rn_puts(r, "'_");
		rn_putu(r, i);
	}
}

/* "for<'a, 'b> " for a binder of n lifetimes; bound by the caller after */
static void rn_binder(struct rn *r, uint64_t n)
{
	if (!n)
		return;
	if (n > 64) {
		r->bad = 1;
		return;
	}
	rn_puts(r, "for<");
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			rn_puts(r, ", ");
		r->bound++;
		rn_lifetime(r, 1);
	}
	rn_puts(r, "> ");
}

static const char *rn_basic(int c)
{
	switch (c) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	case 'p': return "_";
	default: return NULL;
	}
}

/* <const>: integers, bool and char; other constants are not supported */
static void rn_const(struct rn *r, int unused)
{
	(void)unused;
	int c = rn_next(r);

	if (c == 'B') {
		rn_backref(r, rn_const, 0);
		return;
	}
	if (c == 'p') {
		rn_puts(r, "_");
		return;
	}
	if (!c || !strchr("abchijlmnostxy", c)) {
		r->bad = 1;
		return;
	}
	int neg = rn_eat(r, 'n');
	uint64_t v = 0;
	int digits = 0, h;
	while ((h = rn_next(r)) != '_' && !r->bad) {
		int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? 10 + h - 'a' : -1;
		if (d < 0 || ++digits > 16) {
			r->bad = 1;
			return;
		}
		v = v * 16 + (uint64_t)d;
	}
	if (c == 'b') {
		if (v > 1 || neg)
			r->bad = 1;
		rn_puts(r, v ? "true" : "false");
	} else if (c == 'c') {
		if (v < 0x20 || v > 0x7e || v == '\'' || v == '\\') {
			r->bad = 1;   /* no escapes: left to the raw name */
			return;
		}
		char b[4] = { '\'', (char)v, '\'', '\0' };
		rn_puts(r, b);
	} else {
		if (neg)
			rn_puts(r, "-");
		rn_putu(r, v);
	}
}

static void rn_generic_arg(struct rn *r)
{
	if (rn_eat(r, 'L'))
		rn_lifetime(r, rn_b62(r));
	else if (rn_eat(r, 'K'))
		rn_const(r, 0);
	else
		rn_type(r);
}

/* A path that may end in generic arguments left open ("Fn<(), "), for the
 * associated types of a dyn trait; returns whether they are open. */
static int rn_path_open(struct rn *r)
{
	if (rn_eat(r, 'B')) {
		size_t at = r->pos - 1;
		uint64_t to = rn_b62(r);
		if (r->bad || to >= at) {
			r->bad = 1;
			return 0;
		}
		size_t back = r->pos;
		r->pos = (size_t)to;
		int open = rn_path_open(r);
		r->pos = back;
		return open;
	}
	if (rn_eat(r, 'I')) {
		if (++r->depth > RN_MAX_DEPTH) {
			r->bad = 1;
			return 0;
		}
		rn_path(r, 0);
		rn_puts(r, "<");
		for (int i = 0; !rn_eat(r, 'E') && !r->bad; i++) {
			if (i)
				rn_puts(r, ", ");
			rn_generic_arg(r);
		}
		r->depth--;
		return 1;
	}
	rn_path(r, 0);
	return 0;
}

static void rn_dyn_bounds(struct rn *r)
{
	uint64_t saved = r->bound;

	rn_binder(r, rn_opt_b62(r, 'G'));
	for (int i = 0; !rn_eat(r, 'E') && !r->bad; i++) {
		if (i)
			rn_puts(r, " + ");
		int open = rn_path_open(r);
		while (rn_eat(r, 'p')) {
			const char *name;
			size_t n;
			int puny;

			rn_puts(r, open ? ", " : "<");
			open = 1;
			rn_ident(r, &name, &n, &puny);
			rn_put(r, name, n);
			rn_puts(r, " = ");
			rn_type(r);
		}
		if (open)
			rn_puts(r, ">");
	}
	r->bound = saved;
}

static void rn_fn_sig(struct rn *r)
{
	uint64_t saved = r->bound;

	rn_binder(r, rn_opt_b62(r, 'G'));
	if (rn_eat(r, 'U'))
		rn_puts(r, "unsafe ");
	if (rn_eat(r, 'K')) {
		rn_puts(r, "extern \"");
		if (rn_eat(r, 'C')) {
			rn_puts(r, "C");
		} else {
			const char *name;
			size_t n;
			int puny;

			rn_ident(r, &name, &n, &puny);
			for (size_t i = 0; i < n; i++)
				rn_put(r, name[i] == '_' ? "-" : &name[i], 1);
		}
		rn_puts(r, "\" ");
	}
	rn_puts(r, "fn(");
	for (int i = 0; !rn_eat(r, 'E') && !r->bad; i++) {
		if (i)
			rn_puts(r, ", ");
		rn_type(r);
	}
	rn_puts(r, ")");
	if (rn_eat(r, 'u')) {
		/* returns (): nothing shown */
	} else {
		rn_puts(r, " -> ");
		rn_type(r);
	}
	r->bound = saved;
}

static void rn_type(struct rn *r)
{
	if (++r->depth > RN_MAX_DEPTH) {
		r->bad = 1;
		return;
	}
	int c = rn_peek(r);
	const char *basic = c > 0 ? rn_basic(c) : NULL;

	if (basic) {
		r->pos++;
		rn_puts(r, basic);
		r->depth--;
		return;
	}
	switch (c) {
	case 'A':
	case 'S':
		r->pos++;
		rn_puts(r, "[");
		rn_type(r);
		if (c == 'A') {
			rn_puts(r, "; ");
			rn_const(r, 0);
		}
		rn_puts(r, "]");
		break;
	case 'T': {
		int i;

		r->pos++;
		rn_puts(r, "(");
		for (i = 0; !rn_eat(r, 'E') && !r->bad; i++) {
			if (i)
				rn_puts(r, ", ");
			rn_type(r);
		}
		rn_puts(r, i == 1 ? ",)" : ")");
		break;
	}
	case 'R':
	case 'Q':
		r->pos++;
		rn_puts(r, "&");
		if (rn_eat(r, 'L')) {
			uint64_t lt = rn_b62(r);
			if (lt) {
				rn_lifetime(r, lt);
				rn_puts(r, " ");
			}
		}
		if (c == 'Q')
			rn_puts(r, "mut ");
		rn_type(r);
		break;
	case 'P':
		r->pos++;
		rn_puts(r, "*const ");
		rn_type(r);
		break;
	case 'O':
		r->pos++;
		rn_puts(r, "*mut ");
		rn_type(r);
		break;
	case 'F':
		r->pos++;
		rn_fn_sig(r);
		break;
	case 'D':
		r->pos++;
		rn_puts(r, "dyn ");
		rn_dyn_bounds(r);
		if (!rn_eat(r, 'L')) {
			r->bad = 1;
		} else {
			uint64_t lt = rn_b62(r);
			if (lt) {
				rn_puts(r, " + ");
				rn_lifetime(r, lt);
			}
		}
		break;
	case 'B':
		r->pos++;
		rn_backref(r, rn_type_arg, 0);
		break;
	default:
		rn_path(r, 0);
		break;
	}
	r->depth--;
}

static void rn_path(struct rn *r, int in_value)
{
	const char *name;
	size_t n;
	int puny, c;

	if (++r->depth > RN_MAX_DEPTH) {
		r->bad = 1;
		return;
	}
	switch (c = rn_next(r)) {
	case 'C':   /* crate root: its name, without the disambiguator */
		rn_opt_b62(r, 's');
		rn_ident(r, &name, &n, &puny);
		rn_put(r, name, n);
		break;
	case 'N': {
		int ns = rn_next(r);
		uint64_t dis;

		if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
			r->bad = 1;
			break;
		}
		rn_path(r, in_value);
		dis = rn_opt_b62(r, 's');
		rn_ident(r, &name, &n, &puny);
		if (ns >= 'A' && ns <= 'Z') {
			/* a closure, a shim...: ::{closure#0}, ::{closure:name#1} */
			rn_puts(r, "::{");
			if (ns == 'C')
				rn_puts(r, "closure");
			else if (ns == 'S')
				rn_puts(r, "shim");
			else
				rn_put(r, (const char *)&(char){ (char)ns }, 1);
			if (n) {
				rn_puts(r, ":");
				rn_put(r, name, n);
			}
			rn_puts(r, "#");
			rn_putu(r, dis);
			rn_puts(r, "}");
		} else if (n) {
			rn_puts(r, "::");
			rn_put(r, name, n);
		}
		break;
	}
	case 'M':   /* inherent impl: <T> */
	case 'X':   /* trait impl: <T as Trait> */
	case 'Y':   /* trait definition: <T as Trait> */
		if (c != 'Y') {
			/* the impl's own path names where it is, not what it is */
			size_t out = r->olen;
			rn_opt_b62(r, 's');
			rn_path(r, 0);
			r->olen = out;
			if (!r->bad)
				r->out[out] = '\0';
		}
		rn_puts(r, "<");
		rn_type(r);
		if (c != 'M') {
			rn_puts(r, " as ");
			rn_path(r, 0);
		}
		rn_puts(r, ">");
		break;
	case 'I':   /* generic arguments */
		rn_path(r, in_value);
		rn_puts(r, in_value ? "::<" : "<");
		for (int i = 0; !rn_eat(r, 'E') && !r->bad; i++) {
			if (i)
				rn_puts(r, ", ");
			rn_generic_arg(r);
		}
		rn_puts(r, ">");
		break;
	case 'B':
		rn_backref(r, rn_path, in_value);
		break;
	default:
		r->bad = 1;
		break;
	}
	r->depth--;
}

/* "_R" names: v0 */
static int rn_v0(const char *raw, char *out, size_t cap)
{
	struct rn r = { 0 };

	r.s = raw + 2;
	r.len = strcspn(r.s, ".$");   /* ".llvm.123" and other suffixes */
	r.out = out;
	r.cap = cap;
	out[0] = '\0';
	if (r.len && r.s[0] >= '0' && r.s[0] <= '9')
		return -1;   /* an encoding version other than the first */
	/* back references count from the start of the path, after "_R" */
	rn_path(&r, 1);
	/* the instantiating crate, when there is one, is not shown */
	if (!r.bad && r.pos < r.len) {
		size_t at = r.olen;
		rn_path(&r, 0);
		r.olen = at;
		if (!r.bad)
			out[at] = '\0';
	}
	if (r.bad || r.pos != r.len)
		return -1;
	return 0;
}

/* One element of a legacy name with its escapes undone ("$LT$" "<", "$u7b$"
 * "{", ".." "::"). Returns -1 on an escape it does not know. */
static int rn_legacy_elem(struct rn *r, const char *p, size_t n)
{
	static const struct { const char *esc; const char *to; } esc[] = {
		{ "$SP$", "@" }, { "$BP$", "*" }, { "$RF$", "&" }, { "$LT$", "<" },
		{ "$GT$", ">" }, { "$LP$", "(" }, { "$RP$", ")" }, { "$C$", "," },
	};
	size_t i = 0;

	if (n >= 2 && p[0] == '_' && p[1] == '$')
		i = 1;   /* a leading '$' is escaped by a '_' */
	while (i < n) {
		if (p[i] == '.') {
			if (i + 1 < n && p[i + 1] == '.') {
				rn_puts(r, "::");
				i += 2;
			} else {
				rn_puts(r, ".");
				i++;
			}
			continue;
		}
		if (p[i] != '$') {
			rn_put(r, &p[i], 1);
			i++;
			continue;
		}
		size_t k, e = i + 1;
		while (e < n && p[e] != '$')
			e++;
		if (e >= n)
			return -1;
		for (k = 0; k < sizeof esc / sizeof esc[0]; k++)
			if (strlen(esc[k].esc) == e + 1 - i && !memcmp(esc[k].esc, p + i, e + 1 - i))
				break;
		if (k < sizeof esc / sizeof esc[0]) {
			rn_puts(r, esc[k].to);
		} else if (p[i + 1] == 'u' && e - i - 2 >= 1 && e - i - 2 <= 2) {
			unsigned v = 0;
			for (size_t h = i + 2; h < e; h++) {
				int d = p[h] >= '0' && p[h] <= '9' ? p[h] - '0' : p[h] >= 'a' && p[h] <= 'f' ? 10 + p[h] - 'a' : -1;
				if (d < 0)
					return -1;
				v = v * 16 + (unsigned)d;
			}
			if (v < 0x20 || v > 0x7e)
				return -1;
			char ch = (char)v;
			rn_put(r, &ch, 1);
		} else {
			return -1;
		}
		i = e + 1;
	}
	return 0;
}

/* "_ZN" names ending in a 17-byte "h<16 hex digits>" element: legacy */
static int rn_legacy(const char *raw, char *out, size_t cap)
{
	struct rn r = { 0 };
	const char *p = raw + 3;
	size_t len = strlen(p);   /* elements hold '.' too: the suffix is after 'E' */
	size_t pos = 0;
	const char *el[256];
	size_t eln[256], nel = 0;

	r.out = out;
	r.cap = cap;
	out[0] = '\0';
	while (pos < len && p[pos] != 'E') {
		size_t n = 0;
		if (p[pos] < '1' || p[pos] > '9')
			return -1;
		while (pos < len && p[pos] >= '0' && p[pos] <= '9') {
			n = n * 10 + (size_t)(p[pos++] - '0');
			if (n > len)
				return -1;
		}
		if (n > len - pos || nel == sizeof el / sizeof el[0])
			return -1;
		el[nel] = p + pos;
		eln[nel++] = n;
		pos += n;
	}
	if (pos >= len || p[pos] != 'E' || (pos + 1 != len && p[pos + 1] != '.') || nel < 2 || eln[nel - 1] != 17 || el[nel - 1][0] != 'h')
		return -1;
	for (size_t i = 1; i < 17; i++) {
		char h = el[nel - 1][i];
		if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f')))
			return -1;
	}
	for (size_t i = 0; i + 1 < nel; i++) {
		if (i)
			rn_puts(&r, "::");
		if (rn_legacy_elem(&r, el[i], eln[i]) < 0)
			return -1;
	}
	return r.bad ? -1 : 0;
}

int sym_rust_demangle(const char *raw, char *out, size_t cap)
{
	if (!raw || !out || cap < 2)
		return -1;
	if (raw[0] == '_' && raw[1] == 'R')
		return rn_v0(raw, out, cap);
	if (raw[0] == '_' && raw[1] == 'Z' && raw[2] == 'N')
		return rn_legacy(raw, out, cap);
	return -1;
}
