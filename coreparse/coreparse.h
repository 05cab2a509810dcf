/* coreparse.h - map an ELF core or a raw memory dump and find every annotated block.
 *
 * The image is mmap'd, never copied; every read is bounded by what the file really
 * holds (a core truncated by a size limit, or segments with p_filesz < p_memsz, are
 * normal and reported as missing memory). Headers found in the image are claims:
 * each is validated against heapann_block.h before it is believed. Nothing here
 * prints or exits; errors come back in a struct cp_error.
 */
#ifndef COREPARSE_H
#define COREPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "heapann_block.h"

/* An error for the caller to print: one line that names the file and the problem. */
struct cp_error {
	int code;        /* a CP_E* value, 0 when no error */
	char msg[512];   /* "FILE: problem", no trailing newline */
};

enum cp_errcode {
	CP_EOK = 0,
	CP_EIO = 1,      /* missing file, directory, unreadable */
	CP_EFORMAT = 2,  /* not an ELF, not a core, garbage, truncated headers */
	CP_EMISMATCH = 3,/* core of another program, ELF that does not fit the dump */
	CP_ENOMEM = 4,
	CP_EARG = 5,     /* bad argument (word size, base...) */
};

/* One PT_LOAD segment (or the one region of a raw dump). Bytes [vaddr, vaddr+avail)
 * are readable at map + offset; [vaddr+avail, vaddr+memsz) are not in the file. */
struct cp_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t avail;   /* bytes really present in the file: min(filesz, what the file holds) */
	uint64_t offset;  /* file offset of vaddr */
	uint32_t flags;   /* PF_R | PF_W | PF_X */
};

/* One file mapping from NT_FILE: [start, end) maps path at file offset pgoff*page. */
struct cp_mapping {
	uint64_t start;
	uint64_t end;
	uint64_t file_offset;  /* in bytes */
	const char *path;      /* owned by the image */
};

/* One thread from NT_PRSTATUS. */
struct cp_thread {
	int32_t tid;
	int32_t signo;      /* pr_cursig */
	uint64_t pc;
	uint64_t sp;
	unsigned nregs;     /* general registers, in the kernel's user_regs order */
	uint64_t regs[64];
};

enum cp_kind { CP_KIND_CORE, CP_KIND_RAW };

/* How the file on disk is compressed (found by its magic, not its name). */
enum cp_compression { CP_COMP_NONE = 0, CP_COMP_ZSTD, CP_COMP_GZIP, CP_COMP_XZ };

/* A mapped image. All pointers are owned by the image and live until cp_image_free(). */
struct cp_image {
	enum cp_kind kind;
	char *path;
	unsigned wsize;           /* 4 or 8 */
	int big_endian;           /* 0 or 1 */
	uint16_t machine;         /* e_machine (EM_X86_64, EM_ARM, EM_MIPS...) */
	const unsigned char *map; /* the whole file, read-only */
	size_t map_size;
	struct cp_segment *segs;  /* sorted by vaddr */
	size_t nsegs;
	struct cp_mapping *files; /* NT_FILE, sorted by start */
	size_t nfiles;
	struct cp_thread *threads;
	size_t nthreads;
	/* HEAPANN_NT_STACKS (include/heapann_note.h, libheapann's snapshots only):
	 * an address inside the stack of each thread that was running when the
	 * snapshot was taken and has no NT_PRSTATUS. Not a stack pointer: where
	 * its live frames begin is not known. */
	uint64_t *stack_hints;
	size_t nstack_hints;
	uint64_t *auxv;           /* NT_AUXV as (type, value) pairs */
	size_t nauxv;
	char prpsinfo_fname[17];  /* NT_PRPSINFO pr_fname, "" when absent */
	char prpsinfo_args[81];   /* NT_PRPSINFO pr_psargs */
	uint64_t missing_bytes;   /* bytes of memsz that the file does not hold */
	size_t missing_segs;      /* segments with some memory missing */
	int truncated;            /* the file ends before a segment's filesz */
	int notes_cut;            /* the file ends before (the end of) a PT_NOTE: threads,
				   * mapped files and auxv may be missing (gcore writes
				   * its notes last) */
	uint64_t truncated_bytes; /* of missing_bytes, those the core should hold (filesz)
				   * but the file lacks; the rest the core never held
				   * (p_filesz < p_memsz: not dumped by design) */
	enum cp_compression compression; /* CP_COMP_NONE, or the file was decompressed
				   * into an unlinked temporary file that map holds */
	uint64_t file_size;       /* bytes of the file on disk (compressed size) */
	int data_fd;              /* compressed only: the temporary file, open until
				   * cp_image_free() */
	char data_path[48];       /* compressed only: /proc/PID/fd/N of data_fd */
	size_t nbogus_segs;       /* PT_LOADs whose p_memsz runs past the target's address
				   * space (only a damaged core has one): cut to the bytes
				   * the file holds, and left out of missing_bytes */
	uint64_t bogus_vaddr;     /* the first of them: its address */
	uint64_t bogus_memsz;     /* and the p_memsz it claimed */
};

/* Open an ELF core (kernel or gcore; ELF32/ELF64, either byte order), plain or
 * compressed with zstd, gzip or xz (decompressed into an unlinked temporary file
 * under $TMPDIR, zero pages as holes, which lives as long as the image).
 * Returns a new image, or NULL with err filled. The caller frees it with cp_image_free(). */
struct cp_image *cp_image_open_core(const char *path, struct cp_error *err);

/* Open a raw dump whose first byte is at address base. wsize (4 or 8), big_endian
 * and machine describe the target (normally taken from its ELF by the caller).
 * A dump compressed with zstd, gzip or xz is decompressed as for a core.
 * Returns a new image, or NULL with err filled. */
struct cp_image *cp_image_open_raw(const char *path, uint64_t base, unsigned wsize,
				   int big_endian, uint16_t machine, struct cp_error *err);

/* Release the image and its mapping (and its temporary file). NULL is accepted. */
void cp_image_free(struct cp_image *img);

/* A path where other readers (libdwfl, gdb, a second cp_image_open_core) find the
 * image's bytes uncompressed: img->path for a plain file, else the /proc/PID/fd
 * link of the temporary file, valid (also for child processes) while img lives.
 * Owned by the image. */
const char *cp_image_data_path(const struct cp_image *img);

/* "zstd", "gzip", "xz" or "none". A static string. */
const char *cp_compression_name(enum cp_compression c);

/* A pointer to len bytes at target address addr, or NULL unless all of them are in
 * the file. The pointer lives as long as the image. */
const unsigned char *cp_image_ptr(const struct cp_image *img, uint64_t addr, uint64_t len);

/* Decode one target word (img->wsize bytes, img->big_endian) at p. */
uint64_t cp_image_word(const struct cp_image *img, const unsigned char *p);

/* Read the word at target address addr into *out. Returns 0, or -1 when not dumped. */
int cp_image_read_word(const struct cp_image *img, uint64_t addr, uint64_t *out);

/* The segment holding addr (dumped or not), or NULL. */
const struct cp_segment *cp_image_segment(const struct cp_image *img, uint64_t addr);

/* The NT_FILE mapping holding addr, or NULL. */
const struct cp_mapping *cp_image_mapping(const struct cp_image *img, uint64_t addr);

/* The value of the core's NT_AUXV entry TYPE (AT_ENTRY, AT_PHDR ...) in *val.
 * Returns 0, or -1 when the core has no such entry (*val is left alone). */
int cp_image_auxv(const struct cp_image *img, uint64_t type, uint64_t *val);

/* The core's main program: the NT_FILE mapping holding AT_ENTRY (or AT_PHDR) from
 * NT_AUXV, else the lowest file mapping; NULL when the image has no NT_FILE (raw
 * dumps, qemu-user cores). Owned by the image. */
const struct cp_mapping *cp_image_main_module(const struct cp_image *img);

/* The GNU build-id of the module mapped at m, read from the core's own memory: the
 * ELF header, program headers and PT_NOTE in the module's mapping of file offset 0
 * (kernels and gdb dump that page by default). Copies up to cap bytes to out and
 * sets *len to the id's full length. Returns 0, or -1 when it is not in the image. */
int cp_image_module_buildid(const struct cp_image *img, const struct cp_mapping *m,
			    unsigned char *out, size_t cap, size_t *len);

/* Check that img is a core of the program exe_path: compares the build-id of the
 * core's main module (the mapping holding AT_ENTRY) with the file's; when either is
 * unknown, compares the file names (NT_FILE path, with exe_path's or the file
 * it links to; else NT_PRPSINFO pr_fname).
 * Returns 0 when they match or nothing can be compared (and for raw images), or -1
 * with err filled: CP_EMISMATCH ("CORE: core of another program: ...", or a
 * build-id difference for a program of the same name), CP_EIO if exe_path cannot
 * be opened or is a directory, CP_EFORMAT if it is not an ELF file (a script
 * starting "#!" is said to be one, with the core's program named when known). */
int cp_image_check_exe(const struct cp_image *img, const char *exe_path, struct cp_error *err);

/* Whether the ELF file open on fd (size bytes long; the descriptor stays the
 * caller's) is cut short: its section header table or a loadable segment's bytes
 * lie past its end. Returns 1 and the size its headers need in *need, else 0
 * (also when the headers cannot be read: that is another error). */
int cp_elf_file_cut(int fd, uint64_t size, uint64_t *need);

/* ---- scanning ---- */

enum cp_block_state {
	CP_LIVE = 0,
	CP_FREED = 1,
};

enum cp_block_flag {
	CP_GUARD_BROKEN = 1u << 0,   /* guard bytes after the user data differ */
	CP_GUARD_MISSING = 1u << 1,  /* guard not in the dumped memory */
	CP_DATA_MISSING = 1u << 2,   /* user data not (fully) in the dumped memory */
	CP_HDR_UNVERIFIED = 1u << 3, /* freed block found by its END only: the allocator
				      * reused START/INFO, so size and seq are as read,
				      * not proven by the check word (guard_len, pad 0) */
};

/* One valid header found in the image. 40 bytes: a scan of 10M blocks writes
 * 400 MB of them, so the guard's counts and the flags are bytes (a guard is at
 * most HEAPANN_MAX_GUARD = 255 bytes long), and the header address H is not
 * kept: every block's user data follows its header, so H is user less the
 * header's (7 + depth) words of w bytes (cp_block_hdr()). */
struct cp_block {
	uint64_t user;       /* address of the user data */
	uint64_t size;       /* requested size */
	uint64_t seq;        /* allocation sequence number */
	uint32_t stack;      /* index into cp_scan.stacks */
	uint16_t depth;      /* frames captured */
	uint8_t state;       /* enum cp_block_state */
	uint8_t guard_len;   /* guard bytes after the user data */
	uint32_t pad;        /* bytes between the raw block and H */
	uint8_t flags;       /* enum cp_block_flag */
	uint8_t guard_diff;  /* guard bytes that differ from HEAPANN_GUARD_BYTE */
	uint8_t overrun;     /* 1 + index of the last differing guard byte, 0 if intact */
	uint8_t w;           /* the header's word size in bytes, 4 or 8 (the core's) */
};

/* The header address H of block b: user less (HEAPANN_FIXED_WORDS + 1 + depth)
 * words of b->w bytes (heapann_header_bytes()). */
static inline uint64_t cp_block_hdr(const struct cp_block *b)
{
	return b->user - heapann_header_bytes(b->depth, b->w);
}

/* Where block b's memory starts (the raw block, pad included) and ends (one past
 * its guard). */
static inline uint64_t cp_block_start(const struct cp_block *b)
{
	return cp_block_hdr(b) - b->pad;
}

static inline uint64_t cp_block_end(const struct cp_block *b)
{
	return b->user + b->size + b->guard_len;
}

/* A distinct stack: frames stack_frames[first .. first+depth) index cp_scan.addrs.
 * CUT: the stack went on past them (the capture stopped at HEAPANN_DEPTH; the
 * header's HEAPANN_DEPTH_CUT, or the statistics slot's HEAPANN_STATS_CUT). A cut
 * stack and a whole one with the same frames are two stacks. */
struct cp_stack {
	uint32_t first;
	uint32_t depth;
	uint32_t cut;        /* 0 or 1 */
};

enum cp_damage_kind {
	CP_DMG_CHECK = 1,     /* start magic found, check word or fields wrong */
	CP_DMG_END = 2,       /* start magic and fields fine, end magic overwritten */
	CP_DMG_START = 3,     /* live end magic found, start of the header overwritten
			       * (DEPTH still agrees with the END, or the check word holds) */
	CP_DMG_VERSION = 4,   /* unknown format version */
	CP_DMG_BOUNDS = 5,    /* size or depth out of bounds, or header not fully dumped */
};

/* A header that failed validation. Fields are filled as far as they could be
 * trusted (see 'known'); it is reported, never followed. */
struct cp_damage {
	uint64_t hdr;        /* where the header starts (or would start) */
	uint64_t user;       /* user data address implied by the header, 0 if unknown */
	uint64_t size;       /* valid when known & CP_KNOWN_SIZE */
	uint64_t seq;        /* valid when known & CP_KNOWN_SEQ */
	uint32_t stack;      /* cp_scan.stacks index of the frames that could be read, when known & CP_KNOWN_FRAMES */
	uint32_t kind;       /* enum cp_damage_kind */
	uint32_t known;      /* CP_KNOWN_* bits */
	uint32_t first_bad;  /* index of the first header word that is wrong, if known */
};

enum { CP_KNOWN_SIZE = 1, CP_KNOWN_SEQ = 2, CP_KNOWN_FRAMES = 4, CP_KNOWN_USER = 8 };

/* The live blocks of one stack: how many, their requested bytes by the
 * statistics' size class (heapann_stats_class), modulo 2^64, their pad, header
 * and guard bytes, and their smallest and largest sizes (both 0 when n is 0). */
struct cp_stack_live {
	uint64_t n;
	uint64_t cls_bytes[4];
	uint64_t overhead;
	uint64_t min_size, max_size;
};
#define CP_STACK_LIVE_MAX (1u << 20)   /* stacks: 64 MB of counts at most */

/* How many live blocks of one stack have one size (cp_scan.stack_sizes); an
 * unused slot of the table has n 0. */
struct cp_stack_size {
	uint64_t size;
	uint64_t n;
	uint32_t stack;
	uint32_t spare;      /* 0 */
};
#define CP_STACK_SIZES_MAX (1u << 18)  /* (stack, size) pairs: 12 MB of table at most */

/* The result of a scan. All arrays are owned by the scan; free with cp_scan_free(). */
/* The most bytes the repeated-segment rule compares in full in one scan:
 * past it, segments of the same size and sampled hash are scanned as distinct. */
#define CP_REPEAT_CMP_CAP ((uint64_t)256 << 20)

struct cp_scan {
	struct cp_block *blocks;   /* live and freed blocks, sorted by user address */
	size_t nblocks;
	size_t nlive;              /* blocks with state CP_LIVE */
	size_t nfreed;
	struct cp_stack *stacks;   /* distinct stacks (by their full chain of addresses) */
	size_t nstacks;
	uint32_t *stack_frames;    /* indices into addrs */
	size_t nstack_frames;
	uint64_t *addrs;           /* distinct return addresses, sorted ascending */
	size_t naddrs;
	struct cp_damage *damaged; /* damaged headers, sorted by hdr */
	size_t ndamaged;
	uint64_t live_bytes;       /* requested bytes of live blocks */
	uint64_t live_overhead;    /* header, pad and guard bytes of live blocks */
	struct cp_stack_live *stack_live;  /* per stack the scan numbered (the first
				    * nstack_live of stacks), its live blocks, for the
				    * statistics' frees (cp_stats_read); NULL when not
				    * kept (over CP_STACK_LIVE_MAX stacks, a hand-made scan) */
	size_t nstack_live;
	struct cp_stack_size *stack_sizes; /* with stack_live: the live blocks per
				    * (stack, size), in nstack_sizes slots of which the
				    * used ones have n > 0 (in no useful order), so that a
				    * report by stack and size need not read the blocks
				    * again; NULL when stack_live is, or past
				    * CP_STACK_SIZES_MAX distinct pairs */
	size_t nstack_sizes;
	size_t nguard_broken;      /* live blocks with CP_GUARD_BROKEN ... */
	int guards_counted;        /* ... counted (cp_scan_image sets it; a scan made
				    * by hand has 0: look at the blocks) */
	uint64_t lead_max;         /* the largest user - cp_block_start() of a block
				    * (pad and header): a block whose memory starts at
				    * or after A has its user address at or after A and
				    * before A + lead_max + 1; 0 when unknown (a scan
				    * made by hand) */
	size_t nstale;             /* freed headers too overwritten to read (memory reused
				    * after free): counted here, not listed as damage */
	size_t nstray;             /* live END words that no header agrees with (the DEPTH
				    * word differs and the check word fails): values that
				    * merely look like an END, e.g. copies on a stack; a
				    * header overwritten up to its DEPTH word ends up here */
	size_t ncut;               /* headers that run past the end of the dumped bytes (the
				    * end of a raw dump, of a truncated core): not read,
				    * counted here, not damage */
	size_t nwriting;           /* headers caught while malloc was writing them (START
				    * still 0, everything else complete and the check word
				    * right: the core was taken in between): not a block
				    * yet, and not damage */
	size_t nstack_copies;      /* would-be damaged headers in a thread stack of a
				    * Linux process's core (one with NT_FILE: the
				    * anonymous segment holding a thread's stack pointer,
				    * its dead part below the pointer and its live
				    * frames): stale copies of header magics that
				    * registers spilled there, no block's, so not damage
				    * and not in damaged. None in raw dumps and in cores
				    * without NT_FILE (firmware RAM: stack and heap may
				    * share a segment) */
	uint64_t scanned_bytes;    /* dumped bytes that were scanned */
	uint64_t repeat_cmp_bytes; /* bytes compared in full to find segments that
				    * repeat another (a core with neither NT_FILE nor
				    * NT_AUXV: a board's), at most CP_REPEAT_CMP_CAP */
	uint64_t repeat_read_bytes; /* all bytes read for it (samples and compares) */
	uint64_t *sigs;            /* addresses of statistics-region signatures
				    * (HEAPANN_STATS_MAGIC0 followed by MAGIC1, not
				    * validated further), ascending; non-NULL after
				    * cp_scan_image() even when nsigs is 0, so a reader
				    * can use them instead of scanning the image again */
	size_t nsigs;
	/* Words whose value may lie in [ptr_lo, ptr_hi] (issue 15: the mark need
	 * not read a block none of whose words can point into a block). ptr_words
	 * is NULL when the scan did not note them (32-bit or big-endian images,
	 * builds without SSE2, hand-made scans). Else one bit per dumped word,
	 * segment by segment: word j of segment s (at round_up(vaddr, W) + j * W)
	 * is bit ptr_seg_bit[s] + j, set when the word's value lies in [ptr_lo,
	 * ptr_hi]: whole 4 GiB steps around the writable segments (all segments
	 * when none is writable). A clear bit: the value is outside. */
	uint64_t *ptr_words;
	uint64_t *ptr_seg_bit;     /* per segment of the image, multiples of 64 */
	uint64_t ptr_lo, ptr_hi;
};

/* 0 when no whole word of [a, b) (inside the dumped part of segment seg, a
 * word-aligned) holds a value in [scan->ptr_lo, scan->ptr_hi] (per ptr_words);
 * 1 when one may, or when that is unknown (scan NULL, nothing noted, a range
 * outside the segment's dumped bytes). */
int cp_scan_may_point(const struct cp_scan *scan, const struct cp_image *img,
		      const struct cp_segment *seg, uint64_t a, uint64_t b);

/* Where segment seg's notes lie in ptr_words: the word at address A (8-aligned,
 * at or after *from, inside the segment's dumped bytes) is bit *base + A / 8
 * (modulo 2^64). Returns 0, or -1 when nothing is noted for it (no notes, a
 * 32-bit image, seg NULL or not the image's). For a caller that tests many
 * ranges of one segment (the mark: each of millions of blocks, issue 15). */
int cp_scan_ptr_base(const struct cp_scan *scan, const struct cp_image *img,
		     const struct cp_segment *seg, uint64_t *base, uint64_t *from);

/* 1 when one of the n > 0 bits of ptr_words from bit first on is set, else 0:
 * the first and last 64-bit words masked, those between whole. */
static inline int cp_scan_ptr_any(const struct cp_scan *scan, uint64_t first, uint64_t n)
{
	const uint64_t *pw = scan->ptr_words;
	uint64_t last = first + n - 1, wa = first / 64, wb = last / 64;
	uint64_t m0 = UINT64_MAX << (first & 63), m1 = UINT64_MAX >> (63 - (last & 63));

	if (wa == wb)
		return (pw[wa] & m0 & m1) != 0;
	if (pw[wa] & m0)
		return 1;
	for (uint64_t i = wa + 1; i < wb; i++)
		if (pw[i])
			return 1;
	return (pw[wb] & m1) != 0;
}

/* Scan every dumped byte of img for headers, using nthreads threads (0: every CPU it may run on).
 * Returns 0 and fills *out (which the caller releases with cp_scan_free), or -1
 * with err filled. The result does not depend on the number of threads.
 * A block is CP_FREED when its START or END says freed (a START_LIVE with an
 * END_FREED is a free() caught half-way); freed headers that fail validation are
 * counted in nstale, never listed as damage. For images of 64 MiB and more, the
 * pages of img->map are released from the process once scanned (MADV_DONTNEED):
 * pointers stay valid and later reads fault the pages back from the page cache. */
int cp_scan_image(const struct cp_image *img, unsigned nthreads, struct cp_scan *out,
		  struct cp_error *err);

/* Options for cp_scan_image_opts(). Zero-initialize, then set what you need. */
struct cp_scan_options {
	unsigned nthreads;   /* 0: every CPU it may run on, ncpu_usable() (small images use one) */
	/* Called now and then from the calling thread only, with the dumped bytes
	 * scanned so far and the total; the last call has done == total. NULL: none. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	uint64_t chunk_bytes; /* work unit per thread; 0: default (8 MiB). When set,
			       * small images are split too (tests use it to put headers
			       * across chunk boundaries) */
	int no_ptr_notes;     /* leave cp_scan.ptr_words NULL: for a caller that will
			       * not run the mark (the notes cost a range test per word
			       * and a bit per word of memory) */
	const uint64_t *skip; /* nskip pairs [start, end): addresses that hold no heap
			       * (a firmware's code and constants, which hold the
			       * header magics as literals), left out of the scan */
	size_t nskip;
	int no_avx2;          /* the SSE2 filter even on a CPU with AVX2 (tests compare
			       * the two) */
	int no_fast;          /* no check_start8() fast path for intact headers: every
			       * header through the general check (tests compare the
			       * two) */
};

/* cp_scan_image() with options (opt may be NULL). Same result and ownership. */
int cp_scan_image_opts(const struct cp_image *img, const struct cp_scan_options *opt,
		       struct cp_scan *out, struct cp_error *err);

/* Release everything a scan holds; the struct itself may then be reused. */
void cp_scan_free(struct cp_scan *scan);

/* Index of the first block (scan->blocks is sorted by user address) whose user
 * address is >= addr (cp_scan_lower) or > addr (cp_scan_upper); scan->nblocks
 * when there is none. */
size_t cp_scan_lower(const struct cp_scan *scan, uint64_t addr);
size_t cp_scan_upper(const struct cp_scan *scan, uint64_t addr);

/* The block whose user data, header, pad or guard holds addr, or NULL. A live
 * block wins over freed headers that overlap it (stale ones left in its data). */
const struct cp_block *cp_scan_find(const struct cp_scan *scan, uint64_t addr);

#endif /* COREPARSE_H */
