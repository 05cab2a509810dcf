/* real11_gobj.c - a small GObject program for tests/run-real11.sh: five
 * objects held by a global hash table (their keys and names reachable), three
 * objects of a type with private data leaked, and a leaked GList of four
 * nodes, each holding a 2-byte string. Prints the sizes the test expects
 * (GLib knows them at run time):
 *   objects OBJ_BYTES LEAKED line N   a leaked object's block (private +
 *                                     instance), allocated at line N
 *   list NODE_BYTES NODES         the leaked list's nodes */
#include <glib-object.h>
#include <stdio.h>
#include <string.h>

#define R11_TYPE_THING (r11_thing_get_type())
G_DECLARE_FINAL_TYPE(R11Thing, r11_thing, R11, THING, GObject)
struct _R11Thing {
	GObject parent;
	char *name;
};
G_DEFINE_TYPE(R11Thing, r11_thing, G_TYPE_OBJECT)
static void r11_thing_class_init(R11ThingClass *k) { (void)k; }
static void r11_thing_init(R11Thing *t) { t->name = g_strdup("thing"); }

typedef struct {
	int a[10];
} R11PrivPrivate;
#define R11_TYPE_PRIV (r11_priv_get_type())
G_DECLARE_DERIVABLE_TYPE(R11Priv, r11_priv, R11, PRIV, GObject)
struct _R11PrivClass {
	GObjectClass parent_class;
};
G_DEFINE_TYPE_WITH_PRIVATE(R11Priv, r11_priv, G_TYPE_OBJECT)
static void r11_priv_class_init(R11PrivClass *k) { (void)k; }
static void r11_priv_init(R11Priv *t)
{
	R11PrivPrivate *p = r11_priv_get_instance_private(t);
	p->a[0] = 1;
}

static GHashTable *kept;
static void *volatile kept_priv;

/* Leak a list of n nodes, each holding "x". */
__attribute__((noinline)) static void leak_list(int n)
{
	GList *l = NULL;

	while (n-- > 0)
		l = g_list_prepend(l, g_strdup("x"));
}

/* Overwrite the dead stack below the caller's frame: the frames of
 * leak_list and of what it called kept copies of the list's head (saved
 * registers), which the exit snapshot reads as live stack (README, Known
 * limits: stale pointers at exit) where memcheck, checking from _exit, does
 * not find them. */
__attribute__((noinline)) static void scrub_stack(void)
{
	volatile char buf[16384];

	memset((char *)buf, 0, sizeof(buf));
}

int main(void)
{
	GTypeQuery q;
	int i, line = 0;

	kept = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
	for (i = 0; i < 5; i++)
		g_hash_table_insert(kept, g_strdup_printf("k%d", i), g_object_new(R11_TYPE_THING, NULL));
	kept_priv = g_object_new(R11_TYPE_PRIV, NULL);
	for (i = 0; i < 3; i++)
		(void)g_object_new(R11_TYPE_PRIV, NULL), line = __LINE__;	/* leaked */
	leak_list(4);
	g_type_query(R11_TYPE_PRIV, &q);
	/* the private data sits before the instance, in the same block */
	printf("objects %d 3 line %d\n", (int)q.instance_size - R11Priv_private_offset, line);
	printf("list %d 4\n", (int)sizeof(GList));
	fflush(stdout);
	scrub_stack();
	return g_hash_table_size(kept) == 5 ? 0 : 1;
}
