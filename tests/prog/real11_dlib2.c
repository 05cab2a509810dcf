/* real11_dlib2.c - a library tests/prog/real11_dl.c loads after it dlclosed
 * real11_dlib.c: larger (16 KiB of .bss), so ld.so maps it over the range the
 * first one had, and the first one's return addresses fall in it past its
 * last (sizeless) function symbol, _fini. */
int r11_pad[4096];

/* Read one word of the pad. */
int r11_other(int x)
{
	return r11_pad[x & 4095];
}
