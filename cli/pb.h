/* pb.h - a minimal protocol buffers wire-format writer, enough for pprof's
 * profile.proto (export_pprof.c): varints, varint fields, length-delimited
 * fields (strings, bytes, nested messages, packed repeated varints).
 *
 * Everything is appended to one growable buffer. A nested message or packed
 * field is written in place and then prefixed with its key and length by
 * pb_close(), which moves its content by a few bytes: cheap for the small
 * messages of a profile. Nothing here prints; an allocation failure sets
 * b->failed and later calls do nothing, so the caller checks once at the end. */
#ifndef CLI_PB_H
#define CLI_PB_H

#include <stddef.h>
#include <stdint.h>

/* Wire types of a field key (field number << 3 | wire type). */
enum pb_wire { PB_VARINT = 0, PB_LEN = 2 };

/* A buffer being written. data is owned by the buffer (pb_buf_release frees it). */
struct pb_buf {
	unsigned char *data;
	size_t len;       /* bytes written */
	size_t cap;       /* bytes allocated */
	int failed;       /* 1 after an allocation failed: data is incomplete */
};

/* Start an empty buffer (no allocation yet). */
void pb_buf_init(struct pb_buf *b);

/* Free b's data; b is left empty and may be reused. */
void pb_buf_release(struct pb_buf *b);

/* Append v as a base-128 varint (1 to 10 bytes). */
void pb_varint(struct pb_buf *b, uint64_t v);

/* Append the key of field 'field' with wire type 'wire'. */
void pb_key(struct pb_buf *b, unsigned field, enum pb_wire wire);

/* A varint field (uint64, or an int64/bool as its two's complement bit pattern:
 * a negative value takes 10 bytes, as protobuf's int64 does). pb_uint always
 * writes it; pb_uint_nz leaves out 0, the proto3 default a reader assumes. */
void pb_uint(struct pb_buf *b, unsigned field, uint64_t v);
void pb_uint_nz(struct pb_buf *b, unsigned field, uint64_t v);

/* A length-delimited field holding n bytes of p (n may be 0), or the string s
 * (without its terminating NUL). p and s are only read during the call. */
void pb_bytes(struct pb_buf *b, unsigned field, const void *p, size_t n);
void pb_string(struct pb_buf *b, unsigned field, const char *s);

/* Begin a nested message or a packed repeated field: returns a mark to pass to
 * pb_close() once its content has been appended (fields, or bare pb_varint()s). */
size_t pb_open(struct pb_buf *b);

/* End what pb_open() began at mark as field 'field': inserts the key and the
 * content's length before the content. Marks nest (close inner ones first). */
void pb_close(struct pb_buf *b, unsigned field, size_t mark);

#endif /* CLI_PB_H */
