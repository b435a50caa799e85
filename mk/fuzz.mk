# mk/fuzz.mk: coverage-guided fuzzing with libFuzzer (included by the
# Makefile). t/fuzz/README.md says what each target checks.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="fuzz_uri fuzz_range"]
#                 builds every t/fuzz/fuzz_*.c and runs each for FUZZ_SECONDS
#                 seconds on its seed corpus t/fuzz/corpus/<target>/ (copied
#                 into objs/fuzz/corpus/<target>/, where the corpus grows);
#                 prints per target the runs, seconds, cov: and ft: of
#                 libFuzzer's last line; fails when a target crashed (the
#                 input is in objs/fuzz/artifacts/<target>/)
#   make fuzz-build   only the binaries, objs/fuzz/<target>
#   make fuzz-replay  runs each target once over its seed corpus and
#                 t/fuzz/regressions/<target>/ (no fuzzing): fails while a
#                 saved finding still crashes
#
#   objects      ringx's sources except core/main.c, compiled with clang
#                and -fsanitize=fuzzer-no-link,address,undefined into
#                objs/fuzz/build/ (llhttp: address only, as SANITIZE=1), in
#                objs/fuzz/build/libringx.a; with FUZZ_POOL=asan (default)
#                core/pool.c is replaced by t/fuzz/pool_asan.c, one malloc
#                per pool allocation so that ASan sees overflows inside a
#                pool (FUZZ_POOL=ringx links the real pool)
#   targets      t/fuzz/<target>.c -> objs/fuzz/<target>, linked with
#                -fsanitize=fuzzer,address,undefined; UBSan does not recover
#   options      t/fuzz/<target>.options, when present, holds extra
#                libFuzzer flags (-max_len=..., -dict=...); FUZZ_FLAGS adds
#                more to every run

FUZZ_SECONDS ?= 60
FUZZ_DIR     := objs/fuzz
FUZZ_BUILD   := $(FUZZ_DIR)/build
FUZZ_POOL    ?= asan
FUZZ_FLAGS   ?=
# clang-14 (Debian 12) or whatever clang is installed
FUZZ_CC      ?= $(or $(firstword $(shell command -v clang-14 clang 2>/dev/null)),clang)

FUZZ_ALL      := $(patsubst t/fuzz/%.c,%,$(sort $(wildcard t/fuzz/fuzz_*.c)))
FUZZ_TARGETS  ?= $(FUZZ_ALL)
FUZZ_BINS     := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)

FUZZ_SAN      := -fsanitize=address,undefined -fno-sanitize-recover=all \
                 -fno-omit-frame-pointer
FUZZ_CFLAGS    = -std=gnu11 -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
                 $(RX_WARN) -D_GNU_SOURCE $(RX_INCS) $(CONF_CFLAGS)
FUZZ_LLHTTP_CFLAGS = -O1 -g -w -fsanitize=fuzzer-no-link,address \
                 -fno-omit-frame-pointer -I$(LLHTTP_INC_DIR)
FUZZ_LDFLAGS   = -fsanitize=fuzzer,address,undefined $(CONF_LDFLAGS)

FUZZ_LIB_SRCS := $(filter-out $(RX_MAIN_SRC) $(if $(filter asan,$(FUZZ_POOL)),core/pool.c),$(RX_SRCS)) \
                 $(if $(filter asan,$(FUZZ_POOL)),t/fuzz/pool_asan.c)
FUZZ_LIB_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o) \
                 $(FUZZ_BUILD)/llhttp/api.o $(FUZZ_BUILD)/llhttp/http.o \
                 $(FUZZ_BUILD)/llhttp/llhttp.o
FUZZ_LIB      := $(FUZZ_BUILD)/libringx.a

.PHONY: fuzz fuzz-build fuzz-replay fuzz-check-cc

fuzz-check-cc:
	@$(FUZZ_CC) --version >/dev/null 2>&1 || { echo "make fuzz: no clang" \
	    "($(FUZZ_CC)); on Debian: apt-get install -y clang-14" \
	    "libclang-rt-14-dev llvm-14" >&2; exit 1; }

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	@FUZZ_SECONDS='$(FUZZ_SECONDS)' FUZZ_FLAGS='$(FUZZ_FLAGS)' \
	 FUZZ_DIR='$(FUZZ_DIR)' t/fuzz/run fuzz $(FUZZ_TARGETS)

fuzz-replay: $(FUZZ_BINS)
	@FUZZ_DIR='$(FUZZ_DIR)' t/fuzz/run replay $(FUZZ_TARGETS)

$(FUZZ_BUILD)/.cflags: FORCE
	$(call rx_stamp,$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_POOL))

$(FUZZ_BUILD)/llhttp/.cflags: FORCE
	$(call rx_stamp,$(FUZZ_CC) $(FUZZ_LLHTTP_CFLAGS))

$(FUZZ_BUILD)/%.o: %.c $(FUZZ_BUILD)/.cflags objs/ringx_auto.h | fuzz-check-cc
	@mkdir -p $(@D)
	$(call rx_say,FUZZCC,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -It/fuzz -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/llhttp/%.o: $(LLHTTP_SRC_DIR)/%.c $(FUZZ_BUILD)/llhttp/.cflags | fuzz-check-cc
	@mkdir -p $(@D)
	$(call rx_say,FUZZCC,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_LLHTTP_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	$(call rx_say,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(FUZZ_LIB_OBJS)

# the targets' objects are kept (not intermediate)
.SECONDARY: $(FUZZ_ALL:%=$(FUZZ_BUILD)/t/fuzz/%.o)

$(FUZZ_DIR)/fuzz_%: $(FUZZ_BUILD)/t/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(call rx_say,LINK,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $< $(FUZZ_LIB) $(LIBS)

-include $(wildcard $(FUZZ_BUILD)/*/*.d $(FUZZ_BUILD)/t/fuzz/*.d)
