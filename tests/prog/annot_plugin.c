/* annot_plugin.c - a plugin for annot_unwind's dlclose scenario, built twice
 * with other frame sizes (-DPAD=24 and -DPAD=3000): loaded, called, unloaded,
 * and the other one loaded in its place (usually at the same address), its
 * chain calling back into the program, which allocates. */
#ifndef PAD
#define PAD 24
#endif

__attribute__((noinline)) static void plugin_inner(void (*cb)(void *), void *arg, int n)
{
	volatile char pad[PAD];

	pad[0] = (char)n;
	if (n > 0)
		plugin_inner(cb, arg, n - 1);
	else
		cb(arg);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

void plugin_entry(void (*cb)(void *), void *arg);

void plugin_entry(void (*cb)(void *), void *arg)
{
	plugin_inner(cb, arg, 3);
	__asm__ volatile("");
}
