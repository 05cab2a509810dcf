/* hunt4_procs.c - child processes of a program under the preload, for
 * tests/run-hunt4-procs.sh. The parent allocates 4 x 100 bytes at
 * MARK:parent_site, then starts a child by MODE (argv[1]):
 *   fork     the child allocates 5 x 222 at MARK:child_site (and has the
 *            parent's 4 blocks too)
 *   spawn    posix_spawn of this program with "child"
 *   vfork    vfork, then exec of this program with "child"
 *   system   system("PROG child")
 *   daemon   fork, fork again, setsid: the grandchild allocates 6 x 111 at
 *            MARK:child_site (and has the parent's 4 blocks too)
 * "child" (an exec'd child, LD_PRELOAD inherited) allocates 7 x 333 at
 * MARK:child_site. Each child prints "ready PID" and waits for a line on stdin
 * (run under the launcher with "nowait": it does not). The parent waits for a
 * forked or spawned child, then ends.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
void *keep[32];
static int nowait;

__attribute__((noinline)) void *parent_site(size_t n)
{
	return malloc(n);   /* MARK:parent_site */
}

__attribute__((noinline)) void *child_site(size_t n)
{
	return malloc(n);   /* MARK:child_site */
}

/* a child's blocks are made: say so and wait to be gcore'd */
static void child_ready(void)
{
	if (nowait)
		return;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	getchar();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	pid_t p = -1;
	int st;

	nowait = argc > 2 && strcmp(argv[2], "nowait") == 0;
	if (strcmp(mode, "child") == 0) {
		for (int i = 0; i < 7; i++)
			keep[10 + i] = child_site(333);
		child_ready();
		return 0;
	}
	for (int i = 0; i < 4; i++)
		keep[i] = parent_site(100);
	if (strcmp(mode, "fork") == 0) {
		p = fork();
		if (p == 0) {
			for (int i = 0; i < 5; i++)
				keep[10 + i] = child_site(222);
			child_ready();
			_exit(0);
		}
	} else if (strcmp(mode, "spawn") == 0) {
		char *av[] = { argv[0], "child", nowait ? "nowait" : NULL, NULL };

		if (posix_spawn(&p, argv[0], NULL, NULL, av, environ) != 0)
			return 1;
	} else if (strcmp(mode, "vfork") == 0) {
		p = vfork();
		if (p == 0) {
			execl(argv[0], argv[0], "child", nowait ? "nowait" : (char *)NULL, (char *)NULL);
			_exit(127);
		}
	} else if (strcmp(mode, "system") == 0) {
		char cmd[4200];

		snprintf(cmd, sizeof cmd, "'%s' child%s", argv[0], nowait ? " nowait" : "");
		return system(cmd) == 0 ? 0 : 1;
	} else if (strcmp(mode, "daemon") == 0) {
		p = fork();
		if (p == 0) {
			if (fork() == 0) {
				setsid();
				for (int i = 0; i < 6; i++)
					keep[10 + i] = child_site(111);
				child_ready();
				_exit(0);
			}
			_exit(0);
		}
		waitpid(p, &st, 0);
		if (!nowait)
			pause();   /* the test ends it */
		return 0;
	} else {
		return 2;
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return 1;
	return 0;
}
