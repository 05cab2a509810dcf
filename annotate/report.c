/* report.c - the only output libheapann ever makes: one line on stderr, built
 * in a stack buffer and written with write(2), when a guard or a header is found
 * broken. Never stdio, never allocation: this runs inside free(). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "internal.h"

void ha_line_str(struct ha_line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

void ha_line_num(struct ha_line *l, uintptr_t v, unsigned base)
{
	char tmp[24];
	int n = 0;

	if (base == 16)
		ha_line_str(l, "0x");
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && n < (int)sizeof(tmp));
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = tmp[--n];
}

void ha_line_send(struct ha_line *l)
{
	const char *p = l->buf;
	size_t left;

	l->buf[l->len++] = '\n';
	left = l->len;
	while (left > 0) {
		ssize_t w = write(2, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		left -= (size_t)w;
	}
}

void ha_report_guard(const void *user, size_t size, unsigned bad, unsigned guard)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: guard overwritten after block ");
	ha_line_num(&l, (uintptr_t)user, 16);
	ha_line_str(&l, " size ");
	ha_line_num(&l, size, 10);
	ha_line_str(&l, ": ");
	ha_line_num(&l, bad, 10);
	ha_line_str(&l, " of ");
	ha_line_num(&l, guard, 10);
	ha_line_str(&l, " guard bytes differ");
	ha_line_send(&l);
}

void ha_report_bad_free(const char *what, const void *user)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: ");
	ha_line_str(&l, what);
	ha_line_str(&l, " ");
	ha_line_num(&l, (uintptr_t)user, 16);
	ha_line_send(&l);
}

void ha_report_unwind_mismatch(unsigned k, uintptr_t a, uintptr_t b, unsigned na, unsigned nb)
{
	struct ha_line l = { .len = 0 };

	ha_line_str(&l, "heapann: cfi-verify: frame ");
	ha_line_num(&l, k, 10);
	ha_line_str(&l, " is ");
	ha_line_num(&l, a, 16);
	ha_line_str(&l, ", libgcc says ");
	ha_line_num(&l, b, 16);
	ha_line_str(&l, " (depth ");
	ha_line_num(&l, na, 10);
	ha_line_str(&l, " vs ");
	ha_line_num(&l, nb, 10);
	ha_line_str(&l, ")");
	ha_line_send(&l);
}
