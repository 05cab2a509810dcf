/* known8_tlslib.c - a library with a large __thread array, loaded by
 * tests/prog/known8_tls.c with dlopen: its TLS is dynamic (glibc allocates each
 * thread's block on first use, outside the static TLS below the thread pointer),
 * so it must not widen the span --addr reads as thread-local storage. */
__thread char k8_bigbuf[1 << 20];

/* Touch this thread's k8_bigbuf (glibc allocates it here) and return it. */
char *k8_bigbuf_touch(int c)
{
	k8_bigbuf[0] = (char)c;
	return k8_bigbuf;
}
