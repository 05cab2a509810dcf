/* known10_first.c - errno across the first call into libheapann
 * (tests/run-known10.sh). Built twice. With -DKNOWN10_LIB, a library to preload
 * after libheapann (LD_PRELOAD="libheapann.so first.so"): ld.so runs its
 * constructor before libheapann's, so its malloc is the first call into the
 * allocator, the one that sets libheapann up (options, unwinder, statistics
 * region). The constructor sets errno = 1234, mallocs 100 bytes through a
 * volatile pointer (GCC may assume malloc keeps errno) and keeps errno and the
 * block. With KNOWN10_AS=1 it first limits the address space (RLIMIT_AS) to what
 * the process uses plus 64 MiB, so that a statistics region of more than 1 GiB
 * (HEAPANN_STATS_STACKS=4194304) cannot be mapped while malloc's own heap fits.
 * Nothing allocates before that malloc: /proc/self/status is read with open and
 * read. Without -DKNOWN10_LIB, the program: prints "first errno N" (the
 * constructor's errno after its malloc; -1 without the library), "ready", waits
 * for a line on stdin (for gcore) and exits 0 with the block live. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef KNOWN10_LIB
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int known10_first_errno = -1;
void *known10_first_block;

/* VmSize of this process in bytes, read without allocating; 0 if not found */
static unsigned long vmsize(void)
{
	char buf[4096], *p;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "VmSize:");
	return p ? strtoul(p + 7, NULL, 10) * 1024 : 0;
}

__attribute__((constructor)) static void known10_first(void)
{
	void *(*volatile malloc_v)(size_t) = malloc;
	const char *as = getenv("KNOWN10_AS");

	if (as && as[0] == '1') {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = vmsize() + (64ul << 20);
		if (rl.rlim_cur == 64ul << 20 || setrlimit(RLIMIT_AS, &rl) != 0)
			return;   /* first errno stays -1: the test says so */
	}
	errno = 1234;
	known10_first_block = malloc_v(100);
	known10_first_errno = errno;
}
#else
extern int known10_first_errno __attribute__((weak));

int main(void)
{
	char line[16];

	printf("first errno %d\nready\n", &known10_first_errno ? known10_first_errno : -1);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	return 0;
}
#endif
