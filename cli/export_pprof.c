/* export_pprof.c - --format pprof (issue 12). Placeholder until the exporter lands. */
#include "cli.h"

int export_pprof(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		const struct an_stacks *st, const struct an_corrupt *c)
{
	(void)f; (void)o; (void)p; (void)st; (void)c;
	fputs("mprof-core: --format pprof is not available in this build\n", stderr);
	return -1;
}
