/* sym.h - name return addresses: one interface, two backends (libdw and gdb/MI).
 *
 * The caller hands over a batch of distinct return addresses; the backend looks up
 * address minus one for each (a return address points after the call) and fills
 * one struct sym_loc per address: the chain of frames at that address, innermost
 * inlined frame first and the real (containing) function last. Backends never
 * print or exit; they return -1 with a struct sym_error filled.
 */
#ifndef SYM_H
#define SYM_H

#include <stddef.h>
#include <stdint.h>

struct sym_error {
	int code;        /* 0 when no error */
	char msg[512];   /* one line naming the file and the problem */
};

/* Values of sym_error.code (same numbers as coreparse's cp_errcode where they overlap). */
enum sym_errcode {
	SYM_EOK = 0,
	SYM_EIO = 1,      /* missing or unreadable exe, core, sysroot */
	SYM_EFORMAT = 2,  /* not an ELF file, not a core */
	SYM_ENOMEM = 4,
	SYM_EARG = 5,     /* bad argument (no exe, NULL table...) */
	SYM_EBACKEND = 6, /* the library or tool behind the backend failed */
};

/* One frame of a location. Strings are owned by the symbolizer and live until
 * sym_free(); any of them may be NULL when unknown. */
struct sym_frame {
	const char *function;  /* demangled name, NULL if unknown */
	const char *file;      /* source file (full path as in DWARF), NULL if unknown */
	unsigned line;         /* 0 if unknown */
	unsigned column;
	int inlined;           /* 1 for a frame inlined into the next one */
};

enum sym_loc_flag {
	SYM_NO_MODULE = 1u << 0,    /* address is in no known module */
	SYM_BUILDID_MISMATCH = 1u << 1, /* the file on disk is not the one in the image: only module+offset */
	SYM_NO_DEBUG = 1u << 2,     /* module found but no debug info (function from symtab only) */
};

/* Where one return address points: frames[first .. first+nframes) of the table. */
struct sym_loc {
	uint64_t addr;        /* the return address as given */
	const char *module;   /* module path (as the image names it), NULL if none */
	uint64_t modoff;      /* addr minus the module's load bias: printed as module+offset */
	uint32_t first;       /* index into sym_table.frames */
	uint32_t nframes;     /* 0 when nothing is known beyond module+offset */
	uint32_t flags;       /* enum sym_loc_flag */
};

/* A table of locations produced by one resolve call; owned by the symbolizer. */
struct sym_table {
	struct sym_loc *locs;      /* one per address, same order as given */
	size_t nlocs;
	struct sym_frame *frames;
	size_t nframes;
};

/* A library unloaded before the core was taken (libheapann's table,
 * include/heapann_unload.h). Both backends report it where no module of the
 * core's load map is, nor an unloaded library given before it, when its file
 * still has the recorded build-id, so that frames in it get names. */
struct sym_unloaded {
	const char *path;              /* absolute, as the target named it */
	uint64_t bias, lo, hi;         /* load bias, span [lo, hi) */
	const unsigned char *build_id; /* idlen bytes */
	size_t idlen;                  /* 0: none recorded (then it is not reported) */
};

/* Options common to the backends. All strings are borrowed for the call to open. */
struct sym_options {
	const char *exe;          /* program (or firmware ELF) path; required */
	const char *core;         /* ELF core path, NULL for a raw dump */
		const char *sysroot;      /* NULL or a directory prefixed to module paths */
	const char *const *debug_dirs; /* NULL-terminated extra debug-file directories, or NULL */
	const char *gdb;          /* gdb binary for the MI backend (NULL: "gdb") */
	unsigned timeout_ms;      /* per-command time-out for the MI backend (0: default) */
	unsigned flags;           /* enum sym_option_flag */
	const char *cache_dir;    /* libdw backend: directory of per-module index files
				   * (sym_cache_dir()), or NULL for none */
	unsigned nthreads;        /* libdw backend: threads it may use; 0: $MPROF_THREADS,
				   * else every CPU it may run on (1: none but the caller's) */
	const struct sym_unloaded *unloaded; /* cores: libraries unloaded before the
				   * core, the latest unload first (borrowed) */
	size_t nunloaded;
};

enum sym_option_flag {
	/* libdw backend: ask libdw for every line (dwfl_module_getsrc per address,
	 * dwarf_getsrcfiles) instead of the line tables decoded once per CU. Slower;
	 * kept as the reference the faster path is tested and measured against. */
	SYM_DW_REFERENCE = 1u << 0,
};

struct symbolizer;

/* Backend constructors. Each returns a new symbolizer, or NULL with err filled.
 * The caller releases it with sym_free(). */
struct symbolizer *sym_dw_open(const struct sym_options *opt, struct sym_error *err);
struct symbolizer *sym_gdb_open(const struct sym_options *opt, struct sym_error *err);

/* Resolve n addresses. On success returns 0 and points *out at a table owned by
 * the symbolizer (valid until the next resolve call or sym_free()). Returns -1 with
 * err filled on a failure of the whole backend; an address that cannot be named is
 * not a failure (its loc has nframes 0). */
int sym_resolve(struct symbolizer *s, const uint64_t *addrs, size_t n,
		const struct sym_table **out, struct sym_error *err);

/* Human-readable notes the backend collected (build-id mismatches, missing debug
 * info), one per line, or NULL. Owned by the symbolizer. */
const char *sym_notes(const struct symbolizer *s);

/* Release a symbolizer and everything it returned. NULL is accepted. */
void sym_free(struct symbolizer *s);

/* For libdwfl find_elf callbacks (here and in cli/): open the module file modname
 * (an absolute path as the image names it) under sysroot (NULL or "": as is),
 * read-only. Returns the descriptor, which the caller owns, and sets *file_name
 * to a malloc'd copy of the path opened (the caller frees it); -1 when modname
 * is not absolute, the path is too long, or it cannot be opened. */
int sym_module_open(const char *sysroot, const char *modname, char **file_name);

/* The default directory of the libdw backend's index cache into buf:
 * $MPROF_CACHE_DIR when set, else $XDG_CACHE_HOME/mprof-core, else
 * $HOME/.cache/mprof-core. Returns 0, or -1 when there is none (MPROF_CACHE_DIR
 * set to "" or "off", no HOME or a HOME that is not a directory, or the path
 * does not fit in cap bytes). */
int sym_cache_dir(char *buf, size_t cap);

/* For a core whose load map names no module (qemu-user writes no NT_FILE; a
 * static program has no link map): report the program EXE into DWFL (between
 * dwfl_report_begin and dwfl_report_end), placed so that its e_entry is the
 * core's AT_ENTRY (bias 0 for ET_EXEC), as the symbolizer does for frames.
 * A core without AT_ENTRY (qemu-system's dump of a board) places only an ET_EXEC,
 * at its link addresses. CORE is the core's libelf handle; nothing is taken
 * over. Returns 0 when EXE was reported, -1 when it cannot be placed. */
struct Dwfl;
struct Elf;
int sym_dwfl_report_exe_at_entry(struct Dwfl *dwfl, struct Elf *core, const char *exe);

/* The name a Rust user reads for the Rust symbol RAW (v0 "_R..." or legacy
 * "_ZN...17h<hash>E"), as rustc's backtraces show it: without the legacy
 * hash and crate disambiguators, "{closure#0}", "<T as Trait>::f". Written to
 * OUT (CAP bytes, NUL-terminated). Returns 0, or -1 when RAW is no Rust symbol,
 * is malformed, or its name needs more than CAP bytes (OUT then holds nothing
 * to use). Does not allocate. */
int sym_rust_demangle(const char *raw, char *out, size_t cap);

/* ---- for backends ---- */
struct sym_backend_ops {
	int (*resolve)(struct symbolizer *s, const uint64_t *addrs, size_t n,
		       const struct sym_table **out, struct sym_error *err);
	const char *(*notes)(const struct symbolizer *s);
	void (*free)(struct symbolizer *s);
};

/* Every backend's struct starts with this. */
struct symbolizer {
	const struct sym_backend_ops *ops;
};

#endif /* SYM_H */
