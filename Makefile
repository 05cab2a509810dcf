# Hand-written Makefile: wildcard sources per module, generated dependencies,
# everything built into build/. See README.md for the targets.
#
#   make                 build/libheapann.so, build/libheapann.a, build/mprof-core, build/heapann
#   make deps            install the build dependencies (Debian); make check-deps: the test tools
#   make install         PREFIX=/usr/local DESTDIR=; make uninstall removes the same files
#   make check           every test; ends with "N passed, N failed" (T=NAME: only tests whose name has NAME)
#   make demo            run the bundled example under the preload and report its core
#   make bench           benchmarks (not tests)
#   make SANITIZE=1      analyzer and tests under ASan+UBSan (into build-san/)
#   make TARGET=arm-linux-gnueabihf   cross-build the static annotator kit
#   make TARGET=arm-none-eabi XCFLAGS='-mcpu=cortex-m3 -mthumb'   the kit for bare-metal firmware

CC ?= cc
B ?= build
PREFIX ?= /usr/local
# One version string for both commands, the pkg-config file and the man pages.
VERSION := $(shell cat VERSION)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CSTD := -std=c11 -D_GNU_SOURCE
OPT ?= -O2 -g
CFLAGS_COMMON := $(CSTD) $(WARN) $(OPT) -Iinclude -MMD -MP

ifdef SANITIZE
B := build-san
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

# ---- libheapann: annotate/ -------------------------------------------------
# Built the way an allocator override must be: hidden visibility (only the libc
# entry points are exported), initial-exec TLS, no builtin malloc assumptions.
HA_CFLAGS := $(CFLAGS_COMMON) -fPIC -fvisibility=hidden -ftls-model=initial-exec \
	-fno-builtin-malloc -fno-builtin-free -fno-builtin-calloc -fno-builtin-realloc \
	-fno-stack-protector -fno-omit-frame-pointer -pthread
HA_COMMON := $(filter-out annotate/real_%.c annotate/export_%.c,$(wildcard annotate/*.c))
HA_SO_SRC := $(HA_COMMON) annotate/real_libc.c annotate/export_preload.c annotate/export_dl.c
HA_A_SRC  := $(HA_COMMON) annotate/real_wrap.c annotate/export_wrap.c
HA_SO_OBJ := $(patsubst %.c,$(B)/obj/so/%.o,$(HA_SO_SRC))
HA_A_OBJ  := $(patsubst %.c,$(B)/obj/a/%.o,$(HA_A_SRC))
HA_WRAP_SYMS := malloc free calloc realloc reallocarray posix_memalign aligned_alloc \
	memalign valloc pvalloc malloc_usable_size

# ---- mprof-core: coreparse/ sym/ mi/ analysis/ + cli/ ----------------------
MP_CFLAGS := $(CFLAGS_COMMON) -pthread $(SAN) -Icoreparse -Isym -Imi -Ianalysis
MP_LIB_SRC := $(wildcard coreparse/*.c sym/*.c mi/*.c analysis/*.c)
# common/: code every analyzer stage links (the hash table, issue 15)
MP_CFLAGS += -Icommon
MP_LIB_SRC += $(wildcard common/*.c)
MP_LIB_OBJ := $(patsubst %.c,$(B)/obj/mp/%.o,$(MP_LIB_SRC))
MP_CLI_SRC := $(wildcard cli/*.c)
MP_CLI_OBJ := $(patsubst %.c,$(B)/obj/mp/%.o,$(MP_CLI_SRC))
# -lz: gzip for pprof and .gz cores; -lzstd -llzma: .zst and .xz cores (coreparse/zcore.c);
# -ldeflate: compressed debug sections (sym/dw_inflate.c)
MP_LIBS := -lelf -ldw -lpthread -lm -lzstd -llzma -lz -ldeflate
# issue 12: the HTML report's script and style (cli/html/), embedded as C strings
HTML_ASSETS := cli/html/report.css cli/html/report.js
MP_CLI_OBJ += $(B)/obj/mp/gen/html_assets.o

# ---- tests -----------------------------------------------------------------
UNIT_SRC := $(wildcard tests/unit/t_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
# Small drivers the shell tests call (not tests themselves): tests/tools/NAME.c.
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(patsubst tests/tools/%.c,$(B)/tests/tools/%,$(TOOL_SRC))

.DEFAULT_GOAL := all

# Build dependencies, checked with pkg-config before the first compile (nothing is
# installed: `make deps` does that). One PKGCONFIG-NAME:DEBIAN-PACKAGE word each;
# add yours on a line of its own: BUILD_DEPS += zlib:zlib1g-dev
BUILD_DEPS := libelf:libelf-dev libdw:libdw-dev
# pprof and .gz cores (zlib), .zst and .xz cores (libzstd, liblzma)
BUILD_DEPS += zlib:zlib1g-dev libzstd:libzstd-dev liblzma:liblzma-dev
# compressed DWARF sections of separate debug files, inflated ahead of libdw
BUILD_DEPS += libdeflate:libdeflate-dev
# What `make deps` installs besides them, and what `make check-deps` installs.
BUILD_TOOLS_DEB := gcc make pkg-config libc6-dev binutils
TEST_DEPS_DEB := g++ file gdb valgrind python3 perl libunwind-dev man-db libc6-dbg sqlite3 lld libglib2.0-dev vim
$(B)/.deps-ok: scripts/check-build-deps.sh Makefile
	@mkdir -p $(B)
	@CC="$(CC)" sh scripts/check-build-deps.sh $(BUILD_DEPS)
	@touch $@

ifdef TARGET
all: cross
else
all: $(B)/libheapann.so $(B)/libheapann.a $(B)/heapann-static.pc $(B)/mprof-core $(B)/heapann
endif

# -fno-plt: libc's functions (the real allocator, memcpy, memcmp) called through
# the GOT, one jump less on every call. -flto: the statistics, the header code and
# the entry points are in different files; inlined across them at link time, an
# allocation and a free cost some 10-15 instructions less (issue 15, capture7).
# (No -flto-partition=one: clang does not know it, and gcc puts a library this
# small in one partition anyway.)
HA_SO_CFLAGS := $(HA_CFLAGS) -fno-plt -flto
$(B)/obj/so/%.o: %.c Makefile | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(HA_SO_CFLAGS) -c $< -o $@

# The kit's objects carry -g1 (functions and line tables, no types): linked into
# the program, full debug info would put the kit's own structs among the
# program's in the bin table's "types" column (struct ha_hdr_view for 48 bytes).
# They depend on the Makefile so that a tree built with other flags is rebuilt.
$(B)/obj/a/%.o: %.c Makefile | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(HA_CFLAGS) -g1 -DHEAPANN_STATIC -c $< -o $@

$(B)/libheapann.so: $(HA_SO_OBJ)
	$(CC) $(HA_SO_CFLAGS) -shared -pthread -Wl,-z,nodelete -Wl,-z,now -Wl,--version-script=annotate/exports.map -o $@ $^ -ldl

$(B)/libheapann.a: $(HA_A_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/heapann-static.pc: annotate/heapann-static.pc.in Makefile
	@mkdir -p $(B)
	sed -e 's|@LIBDIR@|$(abspath $(B))|g' -e 's|@WRAP@|$(foreach s,$(HA_WRAP_SYMS),-Wl$(comma)--wrap=$(s))|g' \
		-e 's|@LIBS@|-lpthread -ldl|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

comma := ,

$(B)/obj/mp/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(MP_CFLAGS) -c $< -o $@

$(B)/libmprof.a: $(MP_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/mprof-core: $(MP_CLI_OBJ) $(B)/libmprof.a
	$(CC) $(SAN) -pthread -o $@ $(MP_CLI_OBJ) $(B)/libmprof.a $(MP_LIBS)
$(B)/obj/mp/cli/main.o: MP_CFLAGS += -DHA_PACKAGE_VERSION='"$(VERSION)"'
$(B)/obj/mp/cli/main.o: VERSION

# ---- heapann: launcher/ (issue 13) -------------------------------------------
# The one-command profiler: runs PROG under the preload, then mprof-core on its
# snapshot. It finds both beside itself (build/) or in ../lib (installed).
$(B)/obj/launcher/%.o: launcher/%.c VERSION | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(SAN) -DHA_PACKAGE_VERSION='"$(VERSION)"' -c $< -o $@
$(B)/heapann: $(patsubst launcher/%.c,$(B)/obj/launcher/%.o,$(wildcard launcher/*.c))
	$(CC) $(SAN) -o $@ $^

$(B)/gen/html_assets.c: $(HTML_ASSETS) cli/html/embed.sh
	@mkdir -p $(dir $@)
	sh cli/html/embed.sh $(HTML_ASSETS) >$@.tmp && mv $@.tmp $@

$(B)/obj/mp/gen/html_assets.o: $(B)/gen/html_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(MP_CFLAGS) -c $< -o $@

$(B)/tests/%: tests/unit/%.c $(B)/libmprof.a tests/check.h
	@mkdir -p $(dir $@)
	$(CC) $(MP_CFLAGS) -Itests -Iannotate -o $@ $< $(B)/libmprof.a $(MP_LIBS)
# t_cfi includes the walker's source (white-box)
$(B)/tests/t_cfi: annotate/cfi.c annotate/internal.h
# t_pb includes the pprof export's protobuf writer (white-box)
$(B)/tests/t_pb: cli/pb.c cli/pb.h
# t_reachidx includes the lost report's reachability code (white-box)
$(B)/tests/t_reachidx: analysis/reach.c analysis/reach.h

# ---- cross builds of the static annotator kit (issue 8) ----------------------
ifdef TARGET
XB := $(B)/$(TARGET)
XCC := $(TARGET)-gcc
XA_OBJ := $(patsubst %.c,$(XB)/obj/%.o,$(HA_A_SRC))
# XCFLAGS: the firmware's code generation (-mcpu, -mthumb, -mfloat-abi); the kit
# is linked into it, so both must agree. A bare-metal target (arm-none-eabi:
# newlib, no Linux) has no libpthread, and its C library is a package of its own.
XCFLAGS ?=
X_BARE := $(filter %-none-eabi %-elf,$(TARGET))
X_LIBS := $(if $(X_BARE),,-lpthread)
X_DEB := gcc-$(TARGET) $(if $(X_BARE),libnewlib-$(TARGET))
cross: $(XB)/libheapann.a $(XB)/heapann-static.pc
# the Debian cross compiler is gcc-$(TARGET) (gcc-arm-linux-gnueabihf, gcc-mips-linux-gnu,
# gcc-arm-none-eabi with libnewlib-arm-none-eabi)
$(XB)/.deps-ok: scripts/install-deps.sh
	@mkdir -p $(XB)
	@command -v $(XCC) >/dev/null 2>&1 || sh scripts/install-deps.sh $(X_DEB)
	@touch $@
$(XB)/obj/%.o: %.c Makefile | $(XB)/.deps-ok
	@mkdir -p $(dir $@)
	$(XCC) $(CSTD) $(WARN) -O2 -g1 $(XCFLAGS) -Iinclude -MMD -MP -fvisibility=hidden -funwind-tables \
		-fno-builtin-malloc -fno-builtin-free -DHEAPANN_STATIC -c $< -o $@
$(XB)/libheapann.a: $(XA_OBJ)
	@rm -f $@
	$(TARGET)-ar rcs $@ $^
$(XB)/heapann-static.pc: annotate/heapann-static.pc.in Makefile
	@mkdir -p $(XB)
	sed -e 's|@LIBDIR@|$(abspath $(XB))|g' -e 's|@WRAP@|$(foreach s,$(HA_WRAP_SYMS),-Wl$(comma)--wrap=$(s))|g' \
		-e 's|@LIBS@|$(X_LIBS)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@
-include $(shell find $(XB)/obj -name '*.d' 2>/dev/null)
endif

$(B)/tests/tools/%: tests/tools/%.c $(B)/libmprof.a
	@mkdir -p $(dir $@)
	$(CC) $(MP_CFLAGS) -Itests -o $@ $< $(B)/libmprof.a $(MP_LIBS)
# fzrun replays fuzz inputs through the fuzz targets' own code (issue 14)
$(B)/tests/tools/fzrun: tests/fuzz/fz.c tests/fuzz/fz.h

# ---- fuzz targets (issue 14): libFuzzer with ASan+UBSan, clang only ------------
# make fuzz: tests/fuzz/fuzz_NAME.c -> $(B)/fuzz/fuzz_NAME (installs clang-14 and
# libFuzzer when missing; says SKIPPED when it cannot). make fuzz-smoke: each target
# for FUZZ_SECS seconds on its seed corpus (scripts/fuzz-smoke.sh).
FUZZ_CC ?= clang-14
FZ := $(B)/fuzz
FZ_CFLAGS := $(CSTD) $(WARN) -O1 -g -Iinclude -Icoreparse -Isym -Imi -Ianalysis -Icommon -Itests/fuzz \
	-pthread -MMD -MP -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FZ_BIN := $(patsubst tests/fuzz/%.c,$(FZ)/%,$(FZ_SRC))
FZ_LIB_OBJ := $(patsubst %.c,$(FZ)/obj/%.o,$(MP_LIB_SRC) tests/fuzz/fz.c)
FZ_PKGS := clang-14 libfuzzer-14-dev libclang-rt-14-dev

fuzz:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || sh scripts/install-deps.sh $(FZ_PKGS) || true
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then $(MAKE) --no-print-directory fuzz-build; \
	else echo "make fuzz: SKIPPED: $(FUZZ_CC) is missing and could not be installed ($(FZ_PKGS))"; fi

fuzz-build: $(FZ_BIN)

$(FZ)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FZ_CFLAGS) -c $< -o $@

$(FZ)/fuzz_%: $(FZ)/obj/tests/fuzz/fuzz_%.o $(FZ_LIB_OBJ)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -pthread -o $@ $^ $(MP_LIBS)

fuzz-smoke: fuzz
	@B=$(B) sh scripts/fuzz-smoke.sh

check: all $(UNIT_BIN) $(TOOL_BIN)
	@sh scripts/install-deps.sh $(TEST_DEPS_DEB)
	@B=$(B) sh tests/runall.sh $(T)

demo: all
	@sh scripts/demo.sh

bench: all
	@sh bench/run.sh

# the build dependencies of BUILD_DEPS (their Debian names) and the tools to build
deps:
	@sh scripts/install-deps.sh $(BUILD_TOOLS_DEB) $(foreach d,$(BUILD_DEPS),$(word 2,$(subst :, ,$(d))))

# the tools the tests use (gdb, valgrind, python3, perl, g++, man...); `make check` runs it
check-deps:
	@sh scripts/install-deps.sh $(TEST_DEPS_DEB)

# ---- install (issue 13) --------------------------------------------------------
# heapann finds libheapann.so in ../lib beside its bin/: keep BINDIR and LIBDIR
# siblings under PREFIX. DESTDIR is prepended to every path, never written into
# the installed files (the .pc file names LIBDIR).
BINDIR := $(PREFIX)/bin
LIBDIR := $(PREFIX)/lib
MANDIR := $(PREFIX)/share/man
COMPDIR := $(PREFIX)/share/bash-completion/completions
DOCDIR := $(PREFIX)/share/doc/heapann
INSTALLED := $(BINDIR)/mprof-core $(BINDIR)/heapann $(LIBDIR)/libheapann.so $(LIBDIR)/libheapann.a \
	$(LIBDIR)/pkgconfig/heapann-static.pc $(MANDIR)/man1/mprof-core.1 $(MANDIR)/man1/heapann.1 \
	$(MANDIR)/man7/libheapann.7 $(COMPDIR)/mprof-core $(COMPDIR)/heapann \
	$(DOCDIR)/LICENSE $(DOCDIR)/README.md

# the .pc file is written straight from its template with this install's LIBDIR
# (a copy kept in build/ would go stale when PREFIX changes)
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(COMPDIR) $(DESTDIR)$(DOCDIR)
	install -m 755 $(B)/mprof-core $(B)/heapann $(DESTDIR)$(BINDIR)/
	install -m 755 $(B)/libheapann.so $(DESTDIR)$(LIBDIR)/
	install -m 644 $(B)/libheapann.a $(DESTDIR)$(LIBDIR)/
	sed -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@WRAP@|$(foreach s,$(HA_WRAP_SYMS),-Wl$(comma)--wrap=$(s))|g' \
		-e 's|@LIBS@|-lpthread -ldl|g' -e 's|@VERSION@|$(VERSION)|g' annotate/heapann-static.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/heapann-static.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/heapann-static.pc
	install -m 644 doc/mprof-core.1 doc/heapann.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 doc/libheapann.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 644 completion/mprof-core completion/heapann $(DESTDIR)$(COMPDIR)/
	install -m 644 LICENSE README.md $(DESTDIR)$(DOCDIR)/

# removes exactly the files install wrote (directories stay: they may be shared)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

.PHONY: all check demo bench deps check-deps install uninstall clean cross fuzz fuzz-build fuzz-smoke

-include $(shell find $(B)/obj $(B)/fuzz/obj -name '*.d' 2>/dev/null)
