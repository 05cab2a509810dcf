/* out.c - small output helpers for the reports: numbers with separators, and a
 * JSON writer that takes care of commas, nesting and string escaping. */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const char *fmt_num(char *buf, uint64_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%" PRIu64, n);
	int k = 0;

	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = tmp[i];
	}
	buf[k] = '\0';
	return buf;
}

const char *fmt_line(char *buf, unsigned line)
{
	if (!line)
		return "";
	snprintf(buf, 16, ":%u", line);
	return buf;
}

const char *fmt_base(const char *path)
{
	const char *s;

	if (!path)
		return NULL;
	s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = 1;
}

/* Before any value: a comma unless first at this level, or nothing after a key. */
static void json_sep(struct json *j)
{
	if (j->pending_key) {
		j->pending_key = 0;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
}

static void json_open(struct json *j, char c)
{
	json_sep(j);
	fputc(c, j->f);
	if (j->depth < 63)
		j->depth++;
	j->first[j->depth] = 1;
}

static void json_close(struct json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void json_obj_begin(struct json *j) { json_open(j, '{'); }
void json_obj_end(struct json *j) { json_close(j, '}'); }
void json_arr_begin(struct json *j) { json_open(j, '['); }
void json_arr_end(struct json *j) { json_close(j, ']'); }

static void json_raw_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	json_sep(j);
	json_raw_str(j->f, key);
	fputc(':', j->f);
	j->pending_key = 1;
}

void json_str(struct json *j, const char *s)
{
	json_sep(j);
	if (s)
		json_raw_str(j->f, s);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	json_sep(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_dbl(struct json *j, double v)
{
	json_sep(j);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, int v)
{
	json_sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	json_sep(j);
	fputs("null", j->f);
}

void json_hex(struct json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->f, "\"0x%" PRIx64 "\"", v);
}

void json_opt_hex(struct json *j, const char *key, int have, uint64_t v)
{
	json_key(j, key);
	if (have)
		json_hex(j, v);
	else
		json_null(j);
}

void json_opt_u64(struct json *j, const char *key, int have, uint64_t v)
{
	json_key(j, key);
	if (have)
		json_u64(j, v);
	else
		json_null(j);
}

const char *cli_machine_name(uint16_t m)
{
	switch (m) {
	case EM_X86_64: return "x86-64";
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_AARCH64: return "AArch64";
	case EM_MIPS: return "MIPS";
	default: return "unknown machine";
	}
}

int cli_elf_file_kind(const char *path, unsigned *type, unsigned *machine)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), ok, be;

	if (fd < 0)
		return -1;
	ok = pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && !memcmp(h, ELFMAG, SELFMAG);
	close(fd);
	if (!ok)
		return -1;
	be = h[EI_DATA] == ELFDATA2MSB;
	*type = be ? (unsigned)(h[16] << 8 | h[17]) : (unsigned)(h[17] << 8 | h[16]);
	*machine = be ? (unsigned)(h[18] << 8 | h[19]) : (unsigned)(h[19] << 8 | h[18]);
	return 0;
}

uint64_t cli_missing_writable(const struct cp_image *img, size_t *nsegs)
{
	uint64_t wr = 0;
	size_t n = 0;

	for (size_t i = 0; i < img->nsegs; i++) {
		uint64_t miss = img->segs[i].memsz - img->segs[i].avail;

		if (miss && (img->segs[i].flags & PF_W)) {
			wr += miss;
			n++;
		}
	}
	if (nsegs)
		*nsegs = n;
	return wr;
}

void cli_stats_shortfall(const struct cli_profile *p, uint64_t *blocks, uint64_t *bytes)
{
	uint64_t nb = 0, by = 0;

	*blocks = *bytes = 0;
	if (!p->have_stats)
		return;
	for (size_t i = 0; i < p->scan.nblocks; i++)
		if (p->scan.blocks[i].state == CP_LIVE) {
			nb++;
			by += p->scan.blocks[i].size;
		}
	*blocks = p->stats.allocs - p->stats.frees > nb ? p->stats.allocs - p->stats.frees - nb : 0;
	*bytes = p->stats.live_bytes > by ? p->stats.live_bytes - by : 0;
}

uint64_t cli_missing_anon_ro(const struct cp_image *img)
{
	uint64_t anon = 0;

	if (!img->nfiles)
		return 0;
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct cp_segment *s = &img->segs[i];

		/* NT_FILE lists whole mappings: a segment is one mapping or none */
		if (s->memsz > s->avail && !(s->flags & PF_W) && !cp_image_mapping(img, s->vaddr))
			anon += s->memsz - s->avail;
	}
	return anon;
}
