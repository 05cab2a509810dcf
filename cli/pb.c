/* pb.c - the protocol buffers wire-format writer of pb.h: base-128 varints and
 * length-delimited fields appended to one growable buffer. Written for the pprof
 * export; it knows nothing of profile.proto. */
#include <stdlib.h>
#include <string.h>

#include "pb.h"

void pb_buf_init(struct pb_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pb_buf_release(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* Make room for n more bytes. Returns 0, or -1 (and sets failed) when it cannot. */
static int pb_reserve(struct pb_buf *b, size_t n)
{
	size_t cap;
	unsigned char *d;

	if (b->failed)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->failed = 1;
			return -1;
		}
		cap *= 2;
	}
	d = realloc(b->data, cap);
	if (!d) {
		b->failed = 1;
		return -1;
	}
	b->data = d;
	b->cap = cap;
	return 0;
}

/* Encode v into out (at least 10 bytes); returns the number of bytes. */
static size_t pb_varint_enc(unsigned char *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (unsigned char)v;
	return n;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (pb_reserve(b, 10) < 0)
		return;
	b->len += pb_varint_enc(b->data + b->len, v);
}

void pb_key(struct pb_buf *b, unsigned field, enum pb_wire wire)
{
	pb_varint(b, (uint64_t)field << 3 | (unsigned)wire);
}

void pb_uint(struct pb_buf *b, unsigned field, uint64_t v)
{
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_uint_nz(struct pb_buf *b, unsigned field, uint64_t v)
{
	if (v)
		pb_uint(b, field, v);
}

void pb_bytes(struct pb_buf *b, unsigned field, const void *p, size_t n)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, n);
	if (!n || pb_reserve(b, n) < 0)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pb_string(struct pb_buf *b, unsigned field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

size_t pb_open(struct pb_buf *b)
{
	return b->len;
}

void pb_close(struct pb_buf *b, unsigned field, size_t mark)
{
	unsigned char hdr[20];
	size_t n, clen;

	if (b->failed || mark > b->len)
		return;
	clen = b->len - mark;
	n = pb_varint_enc(hdr, (uint64_t)field << 3 | PB_LEN);
	n += pb_varint_enc(hdr + n, clen);
	if (pb_reserve(b, n) < 0)
		return;
	memmove(b->data + mark + n, b->data + mark, clen);
	memcpy(b->data + mark, hdr, n);
	b->len += n;
}
