/* export_folded.c - --format folded (issue 12): one line per stack, root first,
 * frames joined by ';', a space and the weight (live bytes, or blocks with
 * --weight blocks): what flamegraph.pl, inferno and speedscope read. The folding
 * itself (frame text, aggregation, order) is fold.c's, shared with svg and diff. */
#include <inttypes.h>

#include "cli.h"

int export_folded(FILE *f, const struct cli_options *o, const struct cli_profile *p,
		  const struct an_stacks *st, const struct an_corrupt *c)
{
	struct cli_fold fold;

	(void)c;
	if (cli_fold_build(p, st, o->folded_lines ? FOLD_LINES : FOLD_NAMES, &fold) < 0) {
		fputs("mprof-core: out of memory\n", stderr);
		return -1;
	}
	for (size_t i = 0; i < fold.n; i++)
		fprintf(f, "%s %" PRIu64 "\n", fold.v[i].key,
			o->weight_blocks ? fold.v[i].blocks : fold.v[i].bytes);
	cli_fold_release(&fold);
	cli_export_note_skipped(o, p, st, "--format folded");
	return 0;
}
