/* t_pb.c - the protobuf wire-format writer of the pprof export (cli/pb.c): exact
 * bytes for varints at every length boundary, keys, strings, nested messages
 * (one and two levels, a length that needs two bytes) and packed fields; the
 * examples of protobuf's encoding guide among them. Includes the source. */
#include <stdio.h>
#include <string.h>

#include "../../cli/pb.c"
#include "check.h"

/* 1 when b holds exactly the n bytes of want; prints both otherwise. */
static int same(const struct pb_buf *b, const unsigned char *want, size_t n)
{
	if (!b->failed && b->len == n && memcmp(b->data, want, n) == 0)
		return 1;
	printf("    # got %zu bytes:", b->len);
	for (size_t i = 0; i < b->len && i < 32; i++)
		printf(" %02x", b->data[i]);
	printf("\n    # want %zu bytes:", n);
	for (size_t i = 0; i < n && i < 32; i++)
		printf(" %02x", want[i]);
	printf("\n");
	return 0;
}

#define SAME(b, ...) same((b), (const unsigned char[]){ __VA_ARGS__ }, \
			  sizeof((const unsigned char[]){ __VA_ARGS__ }))

static int varint_is(uint64_t v, const unsigned char *want, size_t n)
{
	struct pb_buf b;
	int ok;

	pb_buf_init(&b);
	pb_varint(&b, v);
	ok = same(&b, want, n);
	pb_buf_release(&b);
	return ok;
}

#define VARINT(v, ...) varint_is((v), (const unsigned char[]){ __VA_ARGS__ }, \
				 sizeof((const unsigned char[]){ __VA_ARGS__ }))

int main(void)
{
	struct pb_buf b;
	size_t m, m2;
	char big[201];

	CHECK("varint 0", VARINT(0, 0x00));
	CHECK("varint 1", VARINT(1, 0x01));
	CHECK("varint 127: one byte", VARINT(127, 0x7f));
	CHECK("varint 128: two bytes", VARINT(128, 0x80, 0x01));
	CHECK("varint 150", VARINT(150, 0x96, 0x01));
	CHECK("varint 300", VARINT(300, 0xac, 0x02));
	CHECK("varint 16383: two bytes", VARINT(16383, 0xff, 0x7f));
	CHECK("varint 16384: three bytes", VARINT(16384, 0x80, 0x80, 0x01));
	CHECK("varint 2^32", VARINT(1ull << 32, 0x80, 0x80, 0x80, 0x80, 0x10));
	CHECK("varint 2^63: ten bytes", VARINT(1ull << 63,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01));
	CHECK("varint 2^64-1 (int64 -1): ten bytes", VARINT(UINT64_MAX,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));

	/* the encoding guide's message Test1 { int32 a = 1; } with a = 150 */
	pb_buf_init(&b);
	pb_uint(&b, 1, 150);
	CHECK("field 1 = 150: 08 96 01", SAME(&b, 0x08, 0x96, 0x01));
	pb_buf_release(&b);

	pb_buf_init(&b);
	pb_uint_nz(&b, 1, 0);
	pb_uint(&b, 2, 0);
	pb_uint_nz(&b, 3, 5);
	CHECK("pb_uint_nz leaves 0 out, pb_uint writes it", SAME(&b, 0x10, 0x00, 0x18, 0x05));
	pb_buf_release(&b);

	pb_buf_init(&b);
	pb_uint(&b, 16, 1);
	CHECK("field 16: two-byte key", SAME(&b, 0x80, 0x01, 0x01));
	pb_buf_release(&b);

	/* Test2 { string b = 2; } with "testing" */
	pb_buf_init(&b);
	pb_string(&b, 2, "testing");
	CHECK("field 2 = \"testing\"", SAME(&b, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'));
	pb_buf_release(&b);

	pb_buf_init(&b);
	pb_string(&b, 6, "");
	pb_bytes(&b, 6, "\x01\xff", 2);
	CHECK("empty string, then bytes", SAME(&b, 0x32, 0x00, 0x32, 0x02, 0x01, 0xff));
	pb_buf_release(&b);

	/* Test3 { Test1 c = 3; } with c.a = 150 */
	pb_buf_init(&b);
	m = pb_open(&b);
	pb_uint(&b, 1, 150);
	pb_close(&b, 3, m);
	CHECK("nested message: 1a 03 08 96 01", SAME(&b, 0x1a, 0x03, 0x08, 0x96, 0x01));
	pb_buf_release(&b);

	/* Test4 { repeated int32 d = 4 [packed]; } with 3, 270, 86942 */
	pb_buf_init(&b);
	m = pb_open(&b);
	pb_varint(&b, 3);
	pb_varint(&b, 270);
	pb_varint(&b, 86942);
	pb_close(&b, 4, m);
	CHECK("packed 3, 270, 86942", SAME(&b, 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05));
	pb_buf_release(&b);

	/* a Location-like message: id 7, then a Line { function_id 1, line 2 }, after
	 * a field already in the buffer */
	pb_buf_init(&b);
	pb_uint(&b, 12, 1);
	m = pb_open(&b);
	pb_uint(&b, 1, 7);
	m2 = pb_open(&b);
	pb_uint(&b, 1, 1);
	pb_uint(&b, 2, 2);
	pb_close(&b, 4, m2);
	pb_close(&b, 4, m);
	CHECK("two levels after a field", SAME(&b, 0x60, 0x01, 0x22, 0x08, 0x08, 0x07,
					       0x22, 0x04, 0x08, 0x01, 0x10, 0x02));
	pb_buf_release(&b);

	pb_buf_init(&b);
	m = pb_open(&b);
	pb_close(&b, 2, m);
	CHECK("empty nested message: 12 00", SAME(&b, 0x12, 0x00));
	pb_buf_release(&b);

	/* content of 203 bytes: the length takes two bytes (cb 01) */
	memset(big, 'a', 200);
	big[200] = '\0';
	pb_buf_init(&b);
	m = pb_open(&b);
	pb_string(&b, 1, big);
	pb_close(&b, 5, m);
	CHECK("long nested message: 206 bytes", b.len == 206);
	CHECK("long nested message: key 2a, length cb 01, then 0a c8 01",
	      b.len >= 6 && !memcmp(b.data, "\x2a\xcb\x01\x0a\xc8\x01", 6));
	CHECK("long nested message: the content moved intact",
	      b.len == 206 && b.data[6] == 'a' && b.data[205] == 'a');
	pb_buf_release(&b);

	/* a buffer grown far past its first allocation keeps every byte */
	pb_buf_init(&b);
	for (unsigned i = 0; i < 100000; i++)
		pb_varint(&b, i & 0x7f);
	{
		int ok = b.len == 100000 && !b.failed;

		for (unsigned i = 0; ok && i < 100000; i++)
			ok = b.data[i] == (i & 0x7f);
		CHECK("100000 one-byte varints after growing", ok);
	}
	pb_buf_release(&b);

	/* after a failure nothing more is written, so a truncated result is never
	 * mistaken for a whole one */
	pb_buf_init(&b);
	pb_uint(&b, 1, 1);
	b.failed = 1;
	pb_uint(&b, 2, 2);
	m = pb_open(&b);
	pb_close(&b, 3, m);
	CHECK("nothing written once failed", b.len == 2);
	pb_buf_release(&b);
	CHECK("release leaves an empty buffer", b.data == NULL && b.len == 0 && !b.failed);

	return CHECK_DONE();
}
