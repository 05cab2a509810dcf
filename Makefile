# Hand-written Makefile: wildcard sources per module, generated dependencies,
# everything built into build/. See README.md for the targets.
#
#   make                 build/libheapann.so, build/libheapann.a, build/mprof-core
#   make check           every test; ends with "N passed, N failed" (T=NAME: only tests whose name has NAME)
#   make demo            run the bundled example under the preload and report its core
#   make bench           benchmarks (not tests)
#   make SANITIZE=1      analyzer and tests under ASan+UBSan (into build-san/)
#   make TARGET=arm-linux-gnueabihf   cross-build the static annotator kit

CC ?= cc
B ?= build
PREFIX ?= /usr/local

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
HA_SO_SRC := $(HA_COMMON) annotate/real_libc.c annotate/export_preload.c
HA_A_SRC  := $(HA_COMMON) annotate/real_wrap.c annotate/export_wrap.c
HA_SO_OBJ := $(patsubst %.c,$(B)/obj/so/%.o,$(HA_SO_SRC))
HA_A_OBJ  := $(patsubst %.c,$(B)/obj/a/%.o,$(HA_A_SRC))
HA_WRAP_SYMS := malloc free calloc realloc reallocarray posix_memalign aligned_alloc \
	memalign valloc pvalloc malloc_usable_size

# ---- mprof-core: coreparse/ sym/ mi/ analysis/ + cli/ ----------------------
MP_CFLAGS := $(CFLAGS_COMMON) -pthread $(SAN) -Icoreparse -Isym -Imi -Ianalysis
MP_LIB_SRC := $(wildcard coreparse/*.c sym/*.c mi/*.c analysis/*.c)
MP_LIB_OBJ := $(patsubst %.c,$(B)/obj/mp/%.o,$(MP_LIB_SRC))
MP_CLI_SRC := $(wildcard cli/*.c)
MP_CLI_OBJ := $(patsubst %.c,$(B)/obj/mp/%.o,$(MP_CLI_SRC))
MP_LIBS := -lelf -ldw -lpthread -lm

# ---- tests -----------------------------------------------------------------
UNIT_SRC := $(wildcard tests/unit/t_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
# Small drivers the shell tests call (not tests themselves): tests/tools/NAME.c.
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(patsubst tests/tools/%.c,$(B)/tests/tools/%,$(TOOL_SRC))

.DEFAULT_GOAL := all

# On a fresh Debian 12 machine the first build installs the missing packages.
$(B)/.deps-ok: scripts/install-deps.sh
	@mkdir -p $(B)
	@sh scripts/install-deps.sh
	@touch $@

ifdef TARGET
all: cross
else
all: $(B)/libheapann.so $(B)/libheapann.a $(B)/heapann-static.pc $(B)/mprof-core
endif

$(B)/obj/so/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(HA_CFLAGS) -c $< -o $@

$(B)/obj/a/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(HA_CFLAGS) -DHEAPANN_STATIC -c $< -o $@

$(B)/libheapann.so: $(HA_SO_OBJ)
	$(CC) -shared -pthread -Wl,-z,nodelete -Wl,--version-script=annotate/exports.map -o $@ $^ -ldl

$(B)/libheapann.a: $(HA_A_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/heapann-static.pc: annotate/heapann-static.pc.in Makefile
	@mkdir -p $(B)
	sed -e 's|@LIBDIR@|$(abspath $(B))|g' -e 's|@WRAP@|$(foreach s,$(HA_WRAP_SYMS),-Wl$(comma)--wrap=$(s))|g' \
		-e 's|@LIBS@|-lpthread -ldl|g' $< > $@

comma := ,

$(B)/obj/mp/%.o: %.c | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(MP_CFLAGS) -c $< -o $@

$(B)/libmprof.a: $(MP_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/mprof-core: $(MP_CLI_OBJ) $(B)/libmprof.a
	$(CC) $(SAN) -pthread -o $@ $(MP_CLI_OBJ) $(B)/libmprof.a $(MP_LIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libmprof.a tests/check.h
	@mkdir -p $(dir $@)
	$(CC) $(MP_CFLAGS) -Itests -Iannotate -o $@ $< $(B)/libmprof.a $(MP_LIBS)
# t_cfi includes the walker's source (white-box)
$(B)/tests/t_cfi: annotate/cfi.c annotate/internal.h

# ---- cross builds of the static annotator kit (issue 8) ----------------------
ifdef TARGET
XB := $(B)/$(TARGET)
XCC := $(TARGET)-gcc
XA_OBJ := $(patsubst %.c,$(XB)/obj/%.o,$(HA_A_SRC))
cross: $(XB)/libheapann.a $(XB)/heapann-static.pc
# the Debian cross compiler is gcc-$(TARGET) (gcc-arm-linux-gnueabihf, gcc-mips-linux-gnu)
$(XB)/.deps-ok: scripts/install-deps.sh
	@mkdir -p $(XB)
	@command -v $(XCC) >/dev/null 2>&1 || sh scripts/install-deps.sh gcc-$(TARGET)
	@touch $@
$(XB)/obj/%.o: %.c | $(XB)/.deps-ok
	@mkdir -p $(dir $@)
	$(XCC) $(CSTD) $(WARN) -O2 -g -Iinclude -MMD -MP -fvisibility=hidden -funwind-tables \
		-fno-builtin-malloc -fno-builtin-free -DHEAPANN_STATIC -c $< -o $@
$(XB)/libheapann.a: $(XA_OBJ)
	@rm -f $@
	$(TARGET)-ar rcs $@ $^
$(XB)/heapann-static.pc: annotate/heapann-static.pc.in Makefile
	@mkdir -p $(XB)
	sed -e 's|@LIBDIR@|$(abspath $(XB))|g' -e 's|@WRAP@|$(foreach s,$(HA_WRAP_SYMS),-Wl$(comma)--wrap=$(s))|g' \
		-e 's|@LIBS@|-lpthread|g' $< > $@
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
FZ_CFLAGS := $(CSTD) $(WARN) -O1 -g -Iinclude -Icoreparse -Isym -Imi -Ianalysis -Itests/fuzz \
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
	@B=$(B) sh tests/runall.sh $(T)

demo: all
	@sh scripts/demo.sh

bench: all
	@sh bench/run.sh

deps:
	@sh scripts/install-deps.sh

clean:
	rm -rf build build-san

.PHONY: all check demo bench deps clean cross fuzz fuzz-build fuzz-smoke

-include $(shell find $(B)/obj $(B)/fuzz/obj -name '*.d' 2>/dev/null)
