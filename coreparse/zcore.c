/* zcore.c - compressed cores and dumps (zstd, gzip, xz): recognised by their magic
 * bytes, never by the file name, and decompressed with the libraries' streaming
 * APIs into an unlinked temporary file under $TMPDIR that image.c then maps like
 * any core. Runs of zero pages become holes (lseek, not write), so a big core of
 * mostly untouched memory costs little disk. Truncated or corrupt input is an
 * error naming the file; nothing here prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "cp_priv.h"

#define ZC_ZSTD_WINDOW_LOG_MAX 27     /* 128 MiB: zstd's default decoder limit */
#define ZC_IN_BYTES (128u << 10)  /* compressed bytes read at a time */
#define ZC_OUT_BYTES (256u << 10) /* decompressed bytes staged before writing: small
				   * enough to be still in the cache when written (with
				   * 4 MiB the kernel's copy in write() took 5x longer) */
#define ZC_PAGE 4096u             /* granularity of the holes */

enum cp_compression cp_compression_detect(const unsigned char *p, size_t n)
{
	static const unsigned char zstd[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	static const unsigned char xz[6] = { 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00 };

	if (n >= sizeof(zstd) && !memcmp(p, zstd, sizeof(zstd)))
		return CP_COMP_ZSTD;
	if (n >= sizeof(xz) && !memcmp(p, xz, sizeof(xz)))
		return CP_COMP_XZ;
	/* ID1 ID2 and CM = 8 (deflate, the only method defined): two bytes alone
	 * would take too many raw dumps for gzip */
	if (n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8)
		return CP_COMP_GZIP;
	return CP_COMP_NONE;
}

const char *cp_compression_name(enum cp_compression c)
{
	switch (c) {
	case CP_COMP_ZSTD: return "zstd";
	case CP_COMP_GZIP: return "gzip";
	case CP_COMP_XZ: return "xz";
	default: return "none";
	}
}

/* The compressed side: the file, read in chunks. */
struct zc_in {
	int fd;
	const char *path;
	unsigned char *buf;
	size_t len;        /* bytes in buf from the last read */
	uint64_t nread;    /* bytes read from the file so far */
	uint64_t fsize;    /* the file's size, for messages */
	int eof;
};

/* The decompressed side: a staging buffer whose start is always at file offset
 * base, a multiple of its size, so its pages are the file's pages. */
struct zc_out {
	int fd;
	const char *path;    /* the compressed file, for messages */
	const char *dir;     /* the temporary file's directory, for messages */
	unsigned char *buf;
	size_t pos;          /* bytes staged */
	uint64_t base;       /* file offset of buf[0] */
	int want_elf;        /* fail early unless the data starts with the ELF magic */
	int checked;
};

/* Read the next chunk. Returns the bytes read (0 at the end of the file), or -1. */
static ssize_t zc_read(struct zc_in *in, struct cp_error *err)
{
	ssize_t n;

	do
		n = read(in->fd, in->buf, ZC_IN_BYTES);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return cp_error_set(err, CP_EIO, in->path, "%s", strerror(errno));
	in->len = (size_t)n;
	in->nread += (uint64_t)n;
	if (n == 0)
		in->eof = 1;
	return n;
}

static int zc_pwrite_all(struct zc_out *o, const unsigned char *p, size_t n, uint64_t off,
			 struct cp_error *err)
{
	while (n) {
		ssize_t w = pwrite(o->fd, p, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return cp_error_set(err, CP_EIO, o->path,
					    "cannot write the decompressed data to a temporary file in %s: %s",
					    o->dir, w < 0 ? strerror(errno) : "short write");
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int zc_page_zero(const unsigned char *p, size_t n)
{
	return p[0] == 0 && !memcmp(p, p + 1, n - 1);
}

/* Write the staged bytes: zero pages are skipped (they stay holes), each run of
 * other pages is one write. Returns 0 or -1. */
static int zc_flush(struct zc_out *o, struct cp_error *err)
{
	size_t i = 0;

	if (o->want_elf && !o->checked && o->pos >= SELFMAG) {
		o->checked = 1;
		if (memcmp(o->buf, ELFMAG, SELFMAG) != 0)
			return cp_error_set(err, CP_EFORMAT, o->path, "not an ELF file");
	}
	while (i < o->pos) {
		size_t run = i;

		while (run < o->pos) {
			size_t n = o->pos - run < ZC_PAGE ? o->pos - run : ZC_PAGE;

			if (zc_page_zero(o->buf + run, n))
				break;
			run += n;
		}
		if (run > i && zc_pwrite_all(o, o->buf + i, run - i, o->base + i, err) < 0)
			return -1;
		i = run;
		while (i < o->pos) {
			size_t n = o->pos - i < ZC_PAGE ? o->pos - i : ZC_PAGE;

			if (!zc_page_zero(o->buf + i, n))
				break;
			i += n;
		}
	}
	o->base += o->pos;
	o->pos = 0;
	return 0;
}

/* Make room in the staging buffer: flush it when full. */
static int zc_room(struct zc_out *o, struct cp_error *err)
{
	return o->pos == ZC_OUT_BYTES ? zc_flush(o, err) : 0;
}

static int zc_truncated(const struct zc_in *in, const struct zc_out *o, const char *fmt,
			struct cp_error *err)
{
	return cp_error_set(err, CP_EFORMAT, in->path, "%s data truncated after %llu bytes "
			    "(%llu bytes decompressed)", fmt, (unsigned long long)in->nread,
			    (unsigned long long)(o->base + o->pos));
}

/* The decoder noticed damage (a checksum at the end, an impossible code): where it
 * noticed is not where the damage is, so the message says how far it got. */
static int zc_corrupt(const struct zc_in *in, const struct zc_out *o, const char *fmt,
		      const char *why, struct cp_error *err)
{
	return cp_error_set(err, CP_EFORMAT, in->path, "%s data corrupt: %s (found after %llu "
			    "bytes decompressed)", fmt, why, (unsigned long long)(o->base + o->pos));
}

static int zc_zstd(struct zc_in *in, struct zc_out *o, struct cp_error *err)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	ZSTD_inBuffer zi = { in->buf, 0, 0 };
	size_t ret = 1;
	int rc = -1;

	if (!d)
		return cp_error_set(err, CP_ENOMEM, in->path, "out of memory");
	/* the window is allocated as the frame header says, before any data: a
	 * 43-byte file claiming 2 GiB made us allocate 2 GiB (found by fuzz_core).
	 * zstd's own default limit, 128 MiB, covers every level and zstd --long
	 * (27); a core compressed with --long=28 or more is refused, with the
	 * reason (decompress it with zstd -d --long=N first) */
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, ZC_ZSTD_WINDOW_LOG_MAX);
	for (;;) {
		ZSTD_outBuffer zo;
		size_t before, r;
		int in_done;

		if (zi.pos == zi.size && !in->eof) {
			if (zc_read(in, err) < 0)
				goto out;
			zi.size = in->len;
			zi.pos = 0;
		}
		in_done = in->eof && zi.pos == zi.size;
		if (zc_room(o, err) < 0)
			goto out;
		zo.dst = o->buf + o->pos;
		zo.size = ZC_OUT_BYTES - o->pos;
		zo.pos = 0;
		/* several frames in a row (zstd -T, cat a.zst b.zst) decode as one
		 * stream: after a frame's end the next call starts the next frame */
		before = zi.pos;
		r = ZSTD_decompressStream(d, &zo, &zi);
		if (ZSTD_isError(r)) {
			if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
				cp_error_set(err, CP_EFORMAT, in->path, "zstd frame needs a window over "
					     "%u MiB (compressed with --long=%u or more?): decompress "
					     "it with zstd -d --long=31 first",
					     1u << (ZC_ZSTD_WINDOW_LOG_MAX - 20), ZC_ZSTD_WINDOW_LOG_MAX + 1);
			else
				zc_corrupt(in, o, "zstd", ZSTD_getErrorName(r), err);
			goto out;
		}
		/* 0 means a frame ended and all of it came out; a call with nothing
		 * to do after that returns the next frame's header size instead */
		if (zo.pos || zi.pos != before)
			ret = r;
		o->pos += zo.pos;
		if (in_done && zo.pos < zo.size)
			break;   /* no input left and nothing more came out */
	}
	if (ret != 0) {
		zc_truncated(in, o, "zstd", err);
		goto out;
	}
	rc = 0;
out:
	ZSTD_freeDCtx(d);
	return rc;
}

/* inflate() failed with ret: out of memory or damaged data. Returns -1. */
static int zc_gzip_fail(const struct zc_in *in, const struct zc_out *o, const z_stream *z, int ret,
			struct cp_error *err)
{
	if (ret == Z_MEM_ERROR)
		return cp_error_set(err, CP_ENOMEM, in->path, "out of memory");
	return zc_corrupt(in, o, "gzip", z->msg ? z->msg : "inflate failed", err);
}

static int zc_gzip(struct zc_in *in, struct zc_out *o, struct cp_error *err)
{
	z_stream z;
	int ret = Z_OK, rc = -1, member_end = 0;
	uint64_t members = 0;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)   /* 16: a gzip wrapper, not zlib's */
		return cp_error_set(err, CP_ENOMEM, in->path, "out of memory");
	for (;;) {
		if (z.avail_in == 0 && !in->eof) {
			if (zc_read(in, err) < 0)
				goto out;
			z.next_in = in->buf;
			z.avail_in = (uInt)in->len;
		}
		if (member_end) {
			/* gzip's members may follow each other (cat a.gz b.gz); the file
			 * may end only after a complete member */
			if (z.avail_in == 0 && in->eof)
				break;
			if ((ret = inflateReset(&z)) != Z_OK) {
				zc_gzip_fail(in, o, &z, ret, err);
				goto out;
			}
			member_end = 0;
		}
		if (zc_room(o, err) < 0)
			goto out;
		z.next_out = o->buf + o->pos;
		z.avail_out = (uInt)(ZC_OUT_BYTES - o->pos);
		ret = inflate(&z, Z_NO_FLUSH);
		o->pos = ZC_OUT_BYTES - z.avail_out;
		if (ret == Z_STREAM_END) {
			members++;
			member_end = 1;
			continue;
		}
		if (ret == Z_BUF_ERROR && z.avail_in == 0 && in->eof) {
			zc_truncated(in, o, "gzip", err);
			goto out;
		}
		if (ret == Z_DATA_ERROR && members && z.total_out == 0 && z.total_in < 10) {
			cp_error_set(err, CP_EFORMAT, in->path, "gzip data ends at byte %llu of %llu: "
				     "the bytes after it are not gzip",
				     (unsigned long long)(in->nread - z.avail_in - z.total_in),
				     (unsigned long long)in->fsize);
			goto out;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			zc_gzip_fail(in, o, &z, ret, err);
			goto out;
		}
	}
	rc = 0;
out:
	inflateEnd(&z);
	return rc;
}

static const char *zc_lzma_msg(lzma_ret r)
{
	switch (r) {
	case LZMA_FORMAT_ERROR: return "not in the .xz format";
	case LZMA_OPTIONS_ERROR: return "unsupported compression options";
	case LZMA_DATA_ERROR: return "compressed data is corrupt";
	case LZMA_BUF_ERROR: return "compressed data is truncated";
	case LZMA_UNSUPPORTED_CHECK: return "unsupported integrity check";
	default: return "decoder error";
	}
}

static int zc_xz(struct zc_in *in, struct zc_out *o, struct cp_error *err)
{
	lzma_stream s = LZMA_STREAM_INIT;
	lzma_ret ret;
	int rc = -1;

	/* LZMA_CONCATENATED: one .xz stream after another, like xz -d */
	ret = lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED);
	if (ret != LZMA_OK)
		return cp_error_set(err, CP_ENOMEM, in->path, "out of memory");
	for (;;) {
		if (s.avail_in == 0 && !in->eof) {
			if (zc_read(in, err) < 0)
				goto out;
			s.next_in = in->buf;
			s.avail_in = in->len;
		}
		if (zc_room(o, err) < 0)
			goto out;
		s.next_out = o->buf + o->pos;
		s.avail_out = ZC_OUT_BYTES - o->pos;
		ret = lzma_code(&s, in->eof ? LZMA_FINISH : LZMA_RUN);
		o->pos = ZC_OUT_BYTES - s.avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		if (ret == LZMA_OK)
			continue;
		if (ret == LZMA_MEM_ERROR) {
			cp_error_set(err, CP_ENOMEM, in->path, "out of memory");
		} else if (ret == LZMA_BUF_ERROR && in->eof && s.avail_in == 0) {
			zc_truncated(in, o, "xz", err);
		} else {
			zc_corrupt(in, o, "xz", zc_lzma_msg(ret), err);
		}
		goto out;
	}
	rc = 0;
out:
	lzma_end(&s);
	return rc;
}

/* A new temporary file in $TMPDIR (else /tmp) that has no name: O_TMPFILE where
 * the file system has it, else mkstemp and an unlink right away. Returns the
 * descriptor or -1. */
static int zc_tmpfile(const char *dir, const char *path, struct cp_error *err)
{
	char *name;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return cp_error_set(err, CP_EIO, path, "cannot create a temporary file in %s: %s",
				    dir, strerror(errno));
	if (asprintf(&name, "%s/mprof-core.XXXXXX", dir) < 0)
		return cp_error_set(err, CP_ENOMEM, path, "out of memory");
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		cp_error_set(err, CP_EIO, path, "cannot create a temporary file in %s: %s", dir,
			     strerror(errno));
	else
		unlink(name);
	free(name);
	return fd;
}

int cp_zcore_inflate(int fd, const char *path, enum cp_compression c, int want_elf,
		     int *out_fd, uint64_t *out_size, struct cp_error *err)
{
	struct zc_in in = { 0 };
	struct zc_out o = { 0 };
	struct stat st;
	const char *dir = getenv("TMPDIR");
	int rc = -1;

	*out_fd = -1;
	if (!dir || !*dir)
		dir = "/tmp";
	in.fd = fd;
	in.path = path;
	in.fsize = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	o.fd = -1;
	o.path = path;
	o.dir = dir;
	o.want_elf = want_elf;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return cp_error_set(err, CP_EIO, path, "%s", strerror(errno));
	in.buf = malloc(ZC_IN_BYTES);
	o.buf = malloc(ZC_OUT_BYTES);
	if (!in.buf || !o.buf) {
		cp_error_set(err, CP_ENOMEM, path, "out of memory");
		goto out;
	}
	o.fd = zc_tmpfile(dir, path, err);
	if (o.fd < 0)
		goto out;
	switch (c) {
	case CP_COMP_ZSTD: rc = zc_zstd(&in, &o, err); break;
	case CP_COMP_GZIP: rc = zc_gzip(&in, &o, err); break;
	case CP_COMP_XZ: rc = zc_xz(&in, &o, err); break;
	default: rc = cp_error_set(err, CP_EARG, path, "not compressed"); break;
	}
	if (rc == 0)
		rc = zc_flush(&o, err);
	/* the size the holes at the end leave out */
	if (rc == 0 && ftruncate(o.fd, (off_t)o.base) < 0)
		rc = cp_error_set(err, CP_EIO, path, "cannot size the temporary file in %s: %s", dir,
				  strerror(errno));
	if (rc == 0) {
		*out_fd = o.fd;
		*out_size = o.base;
		o.fd = -1;
	}
out:
	if (o.fd >= 0)
		close(o.fd);
	free(in.buf);
	free(o.buf);
	return rc;
}
