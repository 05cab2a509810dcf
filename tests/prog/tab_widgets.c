/* tab_widgets.c - mprof's producer/consumer example (Zorn and Hilfinger): two
 * producers, make_red_widget and make_blue_widget, get their 204-byte widgets from
 * make_widget; the consumer frees only the blue ones, so every red widget leaks.
 * 10,000 widgets, colors from a fixed-seed coin flip; then a buffer grown by
 * NREALLOCS reallocs (to 256 KiB, so glibc moves it). Prints its own counts, then
 * aborts ("abort") or waits for a line on stdin ("wait") so that a core is taken.
 * Built by tests/run-tables.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NWIDGETS 10000
#define NREALLOCS 14

char *volatile kept_buf;

struct widget {
	char name[196];
	int color;          /* 0 red, 1 blue */
	int serial;
};

_Static_assert(sizeof(struct widget) == 204, "a widget is 204 bytes");

/* Keeps the compiler from turning a call into a jump (the caller's frame would
 * vanish from the stack). */
#define NO_TAIL() __asm__ volatile("" ::: "memory")

static int serial;

__attribute__((noinline)) static struct widget *make_widget(int color)
{
	struct widget *w = malloc(sizeof(*w));

	if (!w)
		abort();
	w->color = color;
	w->serial = ++serial;
	NO_TAIL();
	return w;
}

__attribute__((noinline)) static struct widget *make_red_widget(void)
{
	struct widget *w = make_widget(0);

	NO_TAIL();
	return w;
}

__attribute__((noinline)) static struct widget *make_blue_widget(void)
{
	struct widget *w = make_widget(1);

	NO_TAIL();
	return w;
}

__attribute__((noinline)) static void consume(struct widget *w)
{
	if (w->color == 1)
		free(w);
	NO_TAIL();
}

int main(int argc, char **argv)
{
	unsigned long long x = 0x9E3779B97F4A7C15ULL;   /* fixed seed */
	unsigned red = 0, blue = 0;

	for (int i = 0; i < NWIDGETS; i++) {
		struct widget *w;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (x >> 63) {
			w = make_red_widget();
			red++;
		} else {
			w = make_blue_widget();
			blue++;
		}
		consume(w);
	}
	/* a buffer that grows by realloc, moving (the large sizes are mmap'd): the
	 * statistics see each realloc as a free and an allocation */
	{
		char *buf = malloc(16);

		for (int i = 1; i <= NREALLOCS; i++) {
			buf = realloc(buf, (size_t)16 << i);
			if (!buf)
				abort();
			buf[0] = (char)i;
		}
		kept_buf = buf;
	}
	printf("widgets %d red %u blue %u size %zu reallocs %d buffer %zu\n", NWIDGETS, red, blue,
	       sizeof(struct widget), NREALLOCS, (size_t)16 << NREALLOCS);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "abort"))
		abort();
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		char line[16];

		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	return 0;
}
