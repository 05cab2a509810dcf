/* check.h - the tiny test harness: CHECK(name, expr) prints "ok N - name" or
 * "not ok N - name (file:line)"; CHECK_DONE() prints "N passed, N failed" and
 * returns the exit status (1 on any failure). Header-only, for tests/unit/. */
#ifndef CHECK_H
#define CHECK_H

#include <dirent.h>
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(name, expr) do { \
	if (expr) { \
		check_passed++; \
		printf("ok %d - %s\n", check_passed + check_failed, (name)); \
	} else { \
		check_failed++; \
		printf("not ok %d - %s (%s:%d)\n", check_passed + check_failed, (name), __FILE__, __LINE__); \
	} \
	fflush(stdout); \
} while (0)

/* The number of entries of /proc/self/fd (open descriptors plus the
 * directory's own), or -1: compare before and after to find a leak. */
static inline int check_count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#define CHECK_DONE() (printf("%d passed, %d failed\n", check_passed, check_failed), check_failed ? 1 : 0)

#endif
