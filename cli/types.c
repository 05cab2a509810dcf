/* types.c - mprof's "types" column of the bin table: the program's struct, union
 * and class names (and typedefs of them; C++ names with their namespaces and
 * enclosing classes) by byte size, read from its DWARF with
 * libdw. Sizes up to 1024 only (the bins with a size of their own). A program
 * without debug info simply has no types. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define TYPES_MAX_SIZE 1024
#define TYPES_MAX_DEPTH 8

/* Names per size, each list deduplicated; strings are copies. */
struct cli_types {
	char **names[TYPES_MAX_SIZE + 1];
	size_t n[TYPES_MAX_SIZE + 1];
};

static void types_add(struct cli_types *t, Dwarf_Word size, const char *kind, const char *name)
{
	char buf[512], *copy, **v;

	if (size > TYPES_MAX_SIZE || !name || !*name)
		return;
	snprintf(buf, sizeof(buf), "%s%s", kind, name);
	for (size_t i = 0; i < t->n[size]; i++)
		if (!strcmp(t->names[size][i], buf))
			return;
	copy = strdup(buf);
	v = realloc(t->names[size], (t->n[size] + 1) * sizeof(*v));
	if (!copy || !v) {
		free(copy);
		if (v)
			t->names[size] = v;
		return;
	}
	t->names[size] = v;
	v[t->n[size]++] = copy;
}

/* The tag of die once typedefs and qualifiers are peeled off, or 0. */
static int peeled_tag(Dwarf_Die *die)
{
	Dwarf_Die cur = *die, next;
	Dwarf_Attribute at;

	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(&cur);

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return tag;
		if (!dwarf_attr_integrate(&cur, DW_AT_type, &at) || !dwarf_formref_die(&at, &next))
			return 0;
		cur = next;
	}
	return 0;
}

/* scope + "::" + name into buf (C++ scopes: namespaces and enclosing classes;
 * an anonymous namespace reads "(anonymous namespace)", as gdb prints it). */
static const char *scoped(char *buf, size_t cap, const char *scope, const char *name)
{
	snprintf(buf, cap, "%s%s%s", scope, *scope ? "::" : "", name ? name : "(anonymous namespace)");
	return buf;
}

/* The types under parent; scope: the C++ name of parent's scope ("" at a unit's
 * top and for C, whose struct tags have no scope of their own). */
static void types_walk(struct cli_types *t, Dwarf_Die *parent, int depth, const char *scope,
		       int cxx)
{
	Dwarf_Die die;
	char name[512];

	if (depth > TYPES_MAX_DEPTH || dwarf_child(parent, &die) != 0)
		return;
	do {
		int tag = dwarf_tag(&die);
		const char *dn = dwarf_diename(&die);
		Dwarf_Word size;

		switch (tag) {
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_class_type:
			if (!dwarf_hasattr(&die, DW_AT_declaration) && dn &&
			    dwarf_aggregate_size(&die, &size) == 0)
				types_add(t, size, tag == DW_TAG_union_type ? "union " :
					  tag == DW_TAG_class_type ? "class " : "struct ",
					  scoped(name, sizeof(name), scope, dn));
			if (dn && cxx) {   /* nested types (C++) */
				char inner[512];

				types_walk(t, &die, depth + 1, scoped(inner, sizeof(inner), scope, dn), cxx);
			} else {
				types_walk(t, &die, depth + 1, scope, cxx);
			}
			break;
		case DW_TAG_typedef: {
			int pt = peeled_tag(&die);

			if ((pt == DW_TAG_structure_type || pt == DW_TAG_union_type ||
			     pt == DW_TAG_class_type) && dn && dwarf_aggregate_size(&die, &size) == 0)
				types_add(t, size, "", scoped(name, sizeof(name), scope, dn));
			break;
		}
		case DW_TAG_namespace:
			types_walk(t, &die, depth + 1, scoped(name, sizeof(name), scope, dn), cxx);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

struct cli_types *cli_types_load(const char *elf_path)
{
	struct cli_types *t;
	Dwarf *dw;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int fd;

	if (!elf_path)
		return NULL;
	fd = open(elf_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	while (t && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu)) {
			int lang = dwarf_srclang(&cu);

			types_walk(t, &cu, 0, "", lang == DW_LANG_C_plus_plus ||
				   lang == DW_LANG_C_plus_plus_03 || lang == DW_LANG_C_plus_plus_11 ||
				   lang == DW_LANG_C_plus_plus_14);
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return t;
}

const char *cli_types_names(const struct cli_types *t, uint64_t size, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	if (!t || size > TYPES_MAX_SIZE)
		return buf;
	for (size_t i = 0; i < t->n[size]; i++) {
		int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", t->names[size][i]);

		if (w < 0 || (size_t)w >= cap - len) {
			if (cap > 4)
				memcpy(buf + cap - 4, "...", 4);
			break;
		}
		len += (size_t)w;
	}
	return buf;
}

void cli_types_json(const struct cli_types *t, uint64_t size, struct json *j)
{
	if (!t || size > TYPES_MAX_SIZE)
		return;
	for (size_t i = 0; i < t->n[size]; i++)
		json_str(j, t->names[size][i]);
}

void cli_types_free(struct cli_types *t)
{
	if (!t)
		return;
	for (size_t s = 0; s <= TYPES_MAX_SIZE; s++) {
		for (size_t i = 0; i < t->n[s]; i++)
			free(t->names[s][i]);
		free(t->names[s]);
	}
	free(t);
}
