/* dw_evict.c - keep the symbol index cache directory under its size limit
 * ($MPROF_CACHE_MAX, default DW_CACHE_MAX_DEFAULT). After a writer has renamed
 * its file into place it removes the least recently used *.symidx files (by
 * mtime: a run that maps a file sets its mtime, dw_cache_touch) until the
 * directory's files fit, never the file it just wrote. Evictions are serialised
 * by an flock on DIR/.lock, so that two writers do not both count files the
 * other is removing; a reader that loses its file to an eviction keeps its
 * mapping (unlink does not take it away) and the next run rewrites it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dw_priv.h"

struct dw_cfile {
	char name[256];
	uint64_t size;
	int64_t mtime_ns;
};

static int dw_cfile_cmp(const void *a, const void *b)
{
	const struct dw_cfile *x = a, *y = b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int dw_is_cache_name(const char *n)
{
	size_t len = strlen(n);
	return n[0] != '.' && len > 7 && len < 256 && strcmp(n + len - 7, ".symidx") == 0;
}

/* A writer's temporary file (".NAME.symidx.XXXXXX") left by a process that
 * died while writing: removed when older than an hour. */
static int dw_is_stale_tmp(const char *n, const struct stat *st, time_t now)
{
	return n[0] == '.' && strstr(n, ".symidx.") != NULL && st->st_mtime + 3600 < now;
}

int dw_cache_evict(const char *dir, const char *keep, uint64_t max, char *why, size_t whysz)
{
	struct dw_cfile *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	int removed = 0, lockfd = -1, dfd = -1;
	DIR *d = NULL;
	char lock[4096];

	int k = snprintf(lock, sizeof lock, "%s/.lock", dir);
	if (k < 0 || (size_t)k >= sizeof lock) {
		snprintf(why, whysz, "cache path too long");
		return -1;
	}
	lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX) != 0) {
		snprintf(why, whysz, "cannot lock %s: %s", lock, strerror(errno));
		removed = -1;
		goto out;
	}
	d = opendir(dir);
	if (!d) {
		snprintf(why, whysz, "cannot read %s: %s", dir, strerror(errno));
		removed = -1;
		goto out;
	}
	dfd = dirfd(d);
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		int cachefile = dw_is_cache_name(e->d_name);
		if (!cachefile && e->d_name[0] != '.')
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (!cachefile) {
			if (dw_is_stale_tmp(e->d_name, &st, now) && unlinkat(dfd, e->d_name, 0) == 0)
				removed++;
			continue;
		}
		total += (uint64_t)st.st_size;
		if (keep && strcmp(e->d_name, keep) == 0)
			continue;   /* counted, never removed */
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct dw_cfile *p = realloc(v, ncap * sizeof *v);
			if (!p) {
				snprintf(why, whysz, "out of memory");
				removed = -1;
				goto out;
			}
			v = p;
			cap = ncap;
		}
		snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
		v[n].size = (uint64_t)st.st_size;
		v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		n++;
	}
	if (total > max) {
		qsort(v, n, sizeof *v, dw_cfile_cmp);
		for (size_t i = 0; i < n && total > max; i++) {
			/* gone already (ENOENT) is as good as removed */
			if (unlinkat(dfd, v[i].name, 0) == 0 || errno == ENOENT) {
				total -= v[i].size;
				removed++;
			}
		}
	}
out:
	if (d)
		closedir(d);
	if (lockfd >= 0)
		close(lockfd);   /* releases the lock */
	free(v);
	return removed;
}

void dw_cache_touch(const char *path)
{
	/* best effort: a read-only cache (a shared directory) is simply not aged */
	(void)utimensat(AT_FDCWD, path, NULL, 0);
}

int dw_cache_max_parse(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end != '\0' || (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}
