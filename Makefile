# Makefile: builds, tests, runs and installs ringx. GNU make.
#
# Owns the build rules; what the system offers comes from objs/Makefile.conf,
# written by ./configure (run here without options when it is missing).
# "make help" lists the targets and knobs.
#
#   sources      core/*.c event/*.c http/*.c modules/*.c, minus EXCLUDE_SRCS
#                (modules configured out), plus llhttp's api.c http.c llhttp.c
#                from LLHTTP_SRC_DIR, compiled with their own flags (-O2 -w)
#   objects      objs/build/<dir>/<name>.o, or objs/build-asan/... with
#                SANITIZE=1; the binary is objs/ringx in both modes, relinked
#                whenever the mode, the link flags or the list of objects
#                change (stamp objs/.build-mode)
#   unit tests   t/unit/test_*.c -> objs/t/test_*, linked against
#                <build>/libringx.a: every object except core/main.o (which
#                holds main()) plus llhttp
#   stamps       <build>/.cflags and <build>/llhttp/.cflags hold the compile
#                flags: changing them (CC, CFLAGS=..., a new configure)
#                rebuilds what they cover

MAKEFLAGS += -r
.SUFFIXES:
.DELETE_ON_ERROR:
.DEFAULT_GOAL := all
SHELL := /bin/sh

# ---- configuration --------------------------------------------------------------

# goals that do not need objs/Makefile.conf at parse time (the ones that run
# auto/deps first call make again for the build)
RX_NOCONF_GOALS := clean help deps run test bench
RX_GOALS := $(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))

ifneq ($(filter-out $(RX_NOCONF_GOALS),$(RX_GOALS)),)
include objs/Makefile.conf
objs/Makefile.conf:
	./configure
else
-include $(wildcard objs/Makefile.conf)
endif

# if the header alone went missing, configure again with the same options
objs/ringx_auto.h:
	./configure $(RX_CONFIGURE_ARGS)

PREFIX ?= /usr/local/ringx
# the man path man(1) searches: /usr/share/man for a /usr install, else
# /usr/local/share/man (not under an /opt-like PREFIX, which it does not)
MANDIR ?= $(if $(filter /usr,$(PREFIX))$(filter debian,$(LAYOUT)),/usr/share/man,/usr/local/share/man)

# ---- mode and flags --------------------------------------------------------------

SANITIZE ?= 0
WERROR ?= 1
V ?= 0

ifeq ($(SANITIZE),1)
RX_MODE     := asan
BUILD       := objs/build-asan
RX_OPT      := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer
# llhttp is third-party: ASan checks its memory accesses, UBSan stays ours
LLHTTP_OPT  := -O1 -fsanitize=address -fno-omit-frame-pointer
RX_SAN_LD   := -fsanitize=address,undefined
ASAN_OPTIONS ?= halt_on_error=1:detect_leaks=1
UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS UBSAN_OPTIONS
else
RX_MODE     := normal
BUILD       := objs/build
RX_OPT      := -O2
LLHTTP_OPT  := -O2
RX_SAN_LD   :=
endif

RX_INCS     = -Iobjs -Icore -Ievent -Ihttp -Imodules -I$(LLHTTP_INC_DIR)
RX_WARN     = -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes \
              $(if $(filter 1,$(WERROR)),-Werror) \
              -Wno-unused-parameter -Wno-missing-field-initializers
# ringx's own code; CFLAGS/CPPFLAGS/LDFLAGS on make's command line come last
RX_CFLAGS   = -std=gnu11 $(RX_OPT) -g -pipe $(RX_WARN) -D_GNU_SOURCE \
              $(RX_INCS) $(CONF_CFLAGS) $(CPPFLAGS) $(CFLAGS)
# llhttp: about 140 warnings under -Wall -Wextra, none of them ours.
# Strict mode: the loose build takes a CR without LF after a chunk size,
# any two bytes after chunk data, and spaces inside header names, each a
# request-smuggling desync (docs/reliability.md, "Hostile input")
LLHTTP_CFLAGS = $(LLHTTP_OPT) -g -pipe -w -DLLHTTP_STRICT_MODE=1 -I$(LLHTTP_INC_DIR)
RX_LDFLAGS  = $(RX_SAN_LD) $(CONF_LDFLAGS) $(LDFLAGS)

# ---- sources and objects -------------------------------------------------------------

RX_MAIN_SRC := core/main.c
RX_SRCS     := $(filter-out $(EXCLUDE_SRCS),\
                 $(sort $(wildcard core/*.c event/*.c http/*.c modules/*.c)))
RX_OBJS     := $(RX_SRCS:%.c=$(BUILD)/%.o)
RX_MAIN_OBJ := $(RX_MAIN_SRC:%.c=$(BUILD)/%.o)
LLHTTP_OBJS := $(BUILD)/llhttp/api.o $(BUILD)/llhttp/http.o $(BUILD)/llhttp/llhttp.o
RX_LIB      := $(BUILD)/libringx.a

UNIT_SRCS   := $(sort $(wildcard t/unit/test_*.c))
UNIT_OBJS   := $(UNIT_SRCS:%.c=$(BUILD)/%.o)
UNIT_BINS   := $(UNIT_SRCS:t/unit/%.c=objs/t/%)

# quiet commands unless V=1
ifeq ($(V),1)
Q :=
rx_say :=
else
Q := @
rx_say = @printf '  %-6s %s\n' '$(1)' '$(2)';
endif

# rx_stamp FILE-CONTENT: (re)write the target only when its content changes,
# so that what depends on it is rebuilt exactly when the flags change
rx_sq = '$(subst ','\'',$(1))'
define rx_stamp
@mkdir -p $(@D); \
 printf '%s\n' $(call rx_sq,$(1)) | cmp -s - $@ 2>/dev/null \
 || printf '%s\n' $(call rx_sq,$(1)) > $@
endef

.PHONY: FORCE
FORCE:

# ---- build -----------------------------------------------------------------------

.PHONY: all
all: objs/ringx

objs/ringx: $(RX_OBJS) $(LLHTTP_OBJS) objs/.build-mode
	$(call rx_say,LINK,$@ ($(RX_MODE)))
	$(Q)$(CC) $(RX_LDFLAGS) -o $@ $(RX_OBJS) $(LLHTTP_OBJS) $(LIBS)

# what the links depend on beyond the objects' dates: the mode, the link
# flags, and the list of objects (a source removed or configured out relinks)
objs/.build-mode: FORCE
	$(call rx_stamp,$(RX_MODE) $(CC) $(RX_LDFLAGS) $(LIBS) $(RX_OBJS))

$(BUILD)/.cflags: FORCE
	$(call rx_stamp,$(CC) $(RX_CFLAGS))

$(BUILD)/llhttp/.cflags: FORCE
	$(call rx_stamp,$(CC) $(LLHTTP_CFLAGS))

$(BUILD)/%.o: %.c $(BUILD)/.cflags objs/ringx_auto.h
	@mkdir -p $(@D)
	$(call rx_say,CC,$<)
	$(Q)$(CC) $(RX_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/llhttp/%.o: $(LLHTTP_SRC_DIR)/%.c $(BUILD)/llhttp/.cflags
	@mkdir -p $(@D)
	$(call rx_say,CC,$<)
	$(Q)$(CC) $(LLHTTP_CFLAGS) -c -o $@ $<

# everything but main(), for the unit tests
RX_LIB_OBJS := $(filter-out $(RX_MAIN_OBJ),$(RX_OBJS)) $(LLHTTP_OBJS)
$(RX_LIB): $(RX_LIB_OBJS) objs/.build-mode
	$(call rx_say,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(RX_LIB_OBJS)

-include $(RX_OBJS:.o=.d) $(UNIT_OBJS:.o=.d)

# ---- unit tests ----------------------------------------------------------------------

.PHONY: unit
unit: $(UNIT_BINS)
	@$(if $(UNIT_BINS),:,echo "make unit: no t/unit/test_*.c yet")

# tests may include their own helpers from t/unit/
$(BUILD)/t/unit/%.o: t/unit/%.c $(BUILD)/.cflags objs/ringx_auto.h
	@mkdir -p $(@D)
	$(call rx_say,CC,$<)
	$(Q)$(CC) $(RX_CFLAGS) -It/unit -MMD -MP -c -o $@ $<

$(UNIT_BINS): objs/t/%: $(BUILD)/t/unit/%.o $(RX_LIB) objs/.build-mode
	@mkdir -p $(@D)
	$(call rx_say,LINK,$@)
	$(Q)$(CC) $(RX_LDFLAGS) -o $@ $< $(RX_LIB) $(LIBS)

# ---- fuzzing: make fuzz [FUZZ_SECONDS=60], fuzz-build, fuzz-replay ----------------

include mk/fuzz.mk

# ---- configure, dependencies ----------------------------------------------------------

.PHONY: reconfigure deps
reconfigure:
	./configure $(RX_CONFIGURE_ARGS)

deps:
	auto/deps

# ---- run, test, bench (dependencies first, then the build) ----------------------------

.PHONY: run test bench
run:
	auto/deps
	@$(MAKE) --no-print-directory all
	@mkdir -p logs
	@echo "ringx: serving ./html on http://127.0.0.1:8080/ (conf/ringx.conf, prefix ./); Ctrl-C stops"
	exec objs/ringx -p '$(CURDIR)/' -c conf/ringx.conf -g 'daemon off; master_process on;'

PROVE ?= prove
PROVE_FLAGS ?=

test:
	auto/deps test
	@$(MAKE) --no-print-directory all unit
	RINGX_BIN='$(CURDIR)/objs/ringx' $(PROVE) -I t/lib $(PROVE_FLAGS) t/*.t

# The suite on the epoll backend (t/lib/Test/Ringx.pm adds `use epoll;`
# to every events {} that names no method; .ci/run runs it whole). EPOLL_TESTS: a subset.
EPOLL_TESTS ?= t/*.t
.PHONY: test-epoll
test-epoll:
	auto/deps test
	@$(MAKE) --no-print-directory all unit
	RINGX_EVENTS=epoll RINGX_BIN='$(CURDIR)/objs/ringx' $(PROVE) -I t/lib $(PROVE_FLAGS) $(EPOLL_TESTS)

# The kTLS path under a kernel that has it (Debian's, in qemu: t/vm/run),
# for hosts whose kernel has no tls ULP. Exit 125: the VM could not run.
KTLS_TESTS ?= t/ssl_ktls.t t/tls_transport.t
.PHONY: test-ktls
test-ktls:
	auto/deps test
	@$(MAKE) --no-print-directory all
	t/vm/run --timeout 1500 env RINGX_BIN='$(CURDIR)/objs/ringx' \
	    RINGX_TIMEOUT_SCALE=4 RINGX_TEST_TIMEOUT=1200 \
	    $(PROVE) -I t/lib $(PROVE_FLAGS) $(KTLS_TESTS)

bench:
	auto/deps bench
	@$(MAKE) --no-print-directory all
	@if [ -x t/bench/run ]; then \
	    RINGX_BIN='$(CURDIR)/objs/ringx' t/bench/run; \
	 else \
	    echo "make bench: t/bench/run does not exist yet" >&2; exit 1; \
	 fi

# ---- install --------------------------------------------------------------------------

RX_CONF_DIR = $(patsubst %/,%,$(dir $(CONF_PATH)))
RX_CONF_NAME = $(notdir $(CONF_PATH))
RX_MAN_SRC = $(firstword $(wildcard ringx.8 docs/ringx.8))
SYSTEMD_UNIT_DIR ?= /lib/systemd/system
LOGROTATE_DIR ?= /etc/logrotate.d
# the configured paths put into the unit, the logrotate file and the conf
RX_SUBST = sed -e 's|@SBIN@|$(SBIN_PATH)|g' -e 's|@CONF@|$(CONF_PATH)|g' \
	-e 's|@PID@|$(PID_PATH)|g' \
	-e 's|@LOGDIR@|$(patsubst %/,%,$(dir $(ERROR_LOG_PATH)))|g' \
	-e 's|@HTTPLOG@|$(HTTP_LOG_PATH)|g' -e 's|@CONF_DIR@|$(RX_CONF_DIR)|g' \
	-e 's|@PREFIX@|$(PREFIX)|g' -e 's|@USER@|$(WORKER_USER)|g'

.PHONY: install
install: all
	@set -e; d='$(DESTDIR)'; \
	 echo "install: $$d$(SBIN_PATH)"; \
	 install -d "$$d$(patsubst %/,%,$(dir $(SBIN_PATH)))"; \
	 install -m 755 objs/ringx "$$d$(SBIN_PATH)"; \
	 install -d "$$d$(RX_CONF_DIR)"; \
	 for f in conf/*; do \
	    [ -f "$$f" ] || continue; \
	    case "$$f" in *.default|*~) continue ;; esac; \
	    n=$${f#conf/}; [ "$$n" = ringx.conf ] && n='$(RX_CONF_NAME)'; \
	    [ '$(LAYOUT)' = debian ] && [ "$$f" = conf/ringx.conf ] && continue; \
	    t="$$d$(RX_CONF_DIR)/$$n"; \
	    install -m 644 "$$f" "$$t.default"; \
	    if [ -e "$$t" ]; then \
	        echo "install: kept $$t (new one: $$t.default)"; \
	    else \
	        install -m 644 "$$f" "$$t"; echo "install: $$t"; \
	    fi; \
	 done; \
	 install -d "$$d$(PREFIX)/html"; \
	 if [ -d html ] && [ -n "$$(ls -A html)" ]; then \
	    cp -Rn html/. "$$d$(PREFIX)/html/"; \
	    echo "install: $$d$(PREFIX)/html (existing files kept)"; \
	 fi; \
	 install -d "$$d$(PREFIX)/logs" \
	    "$$d$(patsubst %/,%,$(dir $(ERROR_LOG_PATH)))" \
	    "$$d$(patsubst %/,%,$(dir $(HTTP_LOG_PATH)))" \
	    "$$d$(patsubst %/,%,$(dir $(PID_PATH)))"; \
	 if [ -n '$(RX_MAN_SRC)' ]; then \
	    install -d "$$d$(MANDIR)/man8"; \
	    install -m 644 '$(RX_MAN_SRC)' "$$d$(MANDIR)/man8/ringx.8"; \
	    echo "install: $$d$(MANDIR)/man8/ringx.8"; \
	 fi; \
	 install -d "$$d$(SYSTEMD_UNIT_DIR)" "$$d$(LOGROTATE_DIR)"; \
	 $(RX_SUBST) contrib/ringx.service.in > "$$d$(SYSTEMD_UNIT_DIR)/ringx.service"; \
	 echo "install: $$d$(SYSTEMD_UNIT_DIR)/ringx.service"; \
	 $(RX_SUBST) contrib/ringx.logrotate.in > "$$d$(LOGROTATE_DIR)/ringx"; \
	 echo "install: $$d$(LOGROTATE_DIR)/ringx"; \
	 t="$$d$(RX_CONF_DIR)/$(RX_CONF_NAME)"; \
	 if [ '$(LAYOUT)' = debian ]; then \
	    $(RX_SUBST) contrib/debian/ringx.conf.in > "$$t.default"; \
	    if [ -e "$$t" ]; then echo "install: kept $$t (new one: $$t.default)"; \
	    else cp "$$t.default" "$$t"; echo "install: $$t"; fi; \
	    install -d "$$d$(RX_CONF_DIR)/conf.d" "$$d$(RX_CONF_DIR)/sites-available" \
	        "$$d$(RX_CONF_DIR)/sites-enabled"; \
	    s="$$d$(RX_CONF_DIR)/sites-available/default"; \
	    if [ -e "$$s" ]; then echo "install: kept $$s"; else \
	        $(RX_SUBST) contrib/debian/default.in > "$$s"; echo "install: $$s"; \
	        [ -e "$$d$(RX_CONF_DIR)/sites-enabled/default" ] \
	            || ln -s ../sites-available/default "$$d$(RX_CONF_DIR)/sites-enabled/default"; \
	    fi; \
	 fi; \
	 sed -i 's|^pid .*;|pid        $(PID_PATH);|' "$$t.default"; \
	 if ! grep -q '^pid ' "$$t"; then :; \
	 elif grep -q '^pid  *logs/ringx.pid;' "$$t"; then \
	    sed -i 's|^pid .*;|pid        $(PID_PATH);|' "$$t"; fi

# ---- clean, help ----------------------------------------------------------------------

.PHONY: clean help
clean:
	rm -rf objs

help:
	@echo 'ringx: make [TARGET] [VAR=value ...]'
	@echo
	@echo 'Targets:'
	@echo '  all (default)  build objs/ringx (runs ./configure first if objs/Makefile.conf is missing)'
	@echo '  unit           build the C unit tests t/unit/test_*.c into objs/t/test_*'
	@echo '  test           auto/deps test, build, unit, then prove -I t/lib t/*.t'
	@echo '  test-epoll     the tests on the epoll backend (EPOLL_TESTS=...)'
	@echo '  test-ktls      the kTLS tests under Debian'"'"'s kernel in qemu (t/vm/run)'
	@echo '                 (RINGX_BIN=objs/ringx; t/unit.t runs objs/t/test_*)'
	@echo '  run            auto/deps, build, then run objs/ringx in the foreground'
	@echo '                 with prefix ./ and conf/ringx.conf (logs/ is created)'
	@echo '  bench          auto/deps bench, build, then t/bench/run'
	@echo '                 (BENCH_BASE=REV: the previous main beside; knobs: t/bench/run)'
	@echo '  deps           install missing Debian build packages (auto/deps [test|bench])'
	@echo '  install        install into $$(DESTDIR)$$(PREFIX): sbin/ringx, conf/ (an'
	@echo '                 existing file is kept, the new one goes to NAME.default),'
	@echo '                 html/ (existing files kept), logs/, and ringx.8 or'
	@echo '                 docs/ringx.8 into $$(MANDIR)/man8, ringx.service into'
	@echo '                 $$(SYSTEMD_UNIT_DIR), a logrotate file into $$(LOGROTATE_DIR)'
	@echo '  reconfigure    run ./configure again with the options it last ran with'
	@echo '  clean          remove objs/ (including the configuration)'
	@echo '  help           this text'
	@echo
	@echo 'Variables:'
	@echo '  SANITIZE=1     ASan+UBSan build (-O1) in objs/build-asan/, linked to'
	@echo '                 objs/ringx too; switching back relinks the normal build.'
	@echo '                 test/unit then run with ASAN_OPTIONS=$(or $(ASAN_OPTIONS),halt_on_error=1:detect_leaks=1)'
	@echo '                 and UBSAN_OPTIONS=$(or $(UBSAN_OPTIONS),halt_on_error=1:print_stacktrace=1)'
	@echo '  WERROR=0       do not turn warnings into errors'
	@echo '  V=1            print the full compiler commands'
	@echo '  CFLAGS= CPPFLAGS= LDFLAGS=  appended to the flags of ringx'"'"'s code'
	@echo '  PROVE_FLAGS=   extra flags for prove (e.g. -v, -j4)'
	@echo '  DESTDIR=       staging root for install'
	@echo '  PREFIX=        install prefix (now $(PREFIX)); set it with ./configure'
	@echo '                 --prefix: on make'"'"'s command line it moves the files, not'
	@echo '                 the prefix compiled into the binary'
	@echo '  MANDIR=        man page root (now $(MANDIR)); the default is'
	@echo '                 PREFIX/share/man, which man(1) finds when PREFIX/sbin is'
	@echo '                 in PATH; use MANDIR=/usr/local/share/man to put it in the'
	@echo '                 system man path'
