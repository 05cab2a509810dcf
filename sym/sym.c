/* sym.c - the backend-independent entry points of the symbolizer: each one
 * dispatches through the backend's ops table (sym.h). Nothing here knows about
 * libdw or gdb; a backend only has to fill struct sym_backend_ops.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym.h"

static int sym_error_set(struct sym_error *err, const char *msg)
{
	if (err) {
		err->code = SYM_EARG;
		strncpy(err->msg, msg, sizeof err->msg - 1);
		err->msg[sizeof err->msg - 1] = '\0';
	}
	return -1;
}

int sym_resolve(struct symbolizer *s, const uint64_t *addrs, size_t n,
		const struct sym_table **out, struct sym_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (!s || !s->ops || !s->ops->resolve || !out)
		return sym_error_set(err, "symbolizer: no backend or no output table");
	if (n && !addrs)
		return sym_error_set(err, "symbolizer: no addresses given");
	return s->ops->resolve(s, addrs, n, out, err);
}

const char *sym_notes(const struct symbolizer *s)
{
	if (!s || !s->ops || !s->ops->notes)
		return NULL;
	return s->ops->notes(s);
}

void sym_free(struct symbolizer *s)
{
	if (s && s->ops && s->ops->free)
		s->ops->free(s);
}

int sym_module_open(const char *sysroot, const char *modname, char **file_name)
{
	char path[4096];
	int fd, len;

	if (!modname || modname[0] != '/')
		return -1;
	len = snprintf(path, sizeof(path), "%s%s", sysroot ? sysroot : "", modname);
	if (len < 0 || (size_t)len >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	*file_name = strdup(path);
	if (!*file_name) {
		close(fd);
		return -1;
	}
	return fd;
}

int sym_cache_dir(char *buf, size_t cap)
{
	const char *env = getenv("MPROF_CACHE_DIR");
	struct stat st;
	int n;
	if (env) {
		if (!env[0] || !strcmp(env, "off"))
			return -1;
		n = snprintf(buf, cap, "%s", env);
	} else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/') {
		n = snprintf(buf, cap, "%s/mprof-core", env);
	} else if ((env = getenv("HOME")) && env[0] && stat(env, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* a HOME that does not exist (nobody's /nonexistent) is not created */
		n = snprintf(buf, cap, "%s/.cache/mprof-core", env);
	} else {
		return -1;
	}
	return n > 0 && (size_t)n < cap ? 0 : -1;
}
