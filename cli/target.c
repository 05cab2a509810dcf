/* target.c - word size, byte order and machine of a program or firmware ELF, for
 * reading a raw dump that carries none of them itself. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int fail(struct cp_error *err, int code, const char *path, const char *what)
{
	err->code = code;
	snprintf(err->msg, sizeof(err->msg), "%s: %s", path, what);
	return -1;
}

int cli_target_read(const char *path, struct cli_target *t, struct cp_error *err)
{
	struct stat sb;
	Elf *e = NULL;
	GElf_Ehdr eh;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, CP_EIO, path, strerror(errno));
	if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fail(err, CP_EIO, path, "is a directory, not an ELF file");
		goto out;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		fail(err, CP_EFORMAT, path, "not an ELF file");
		goto out;
	}
	if (eh.e_type == ET_CORE) {
		fail(err, CP_EFORMAT, path, "is a core file; --elf wants the program's ELF");
		goto out;
	}
	t->wsize = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	t->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	t->machine = eh.e_machine;
	t->type = eh.e_type;
	rc = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}
