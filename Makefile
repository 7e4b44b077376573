# Makefile -- builds the five ssnserver lock modes, the load clients, the
# tools and the tests with plain GNU make.
#
#   make            servers into bin/ (plus clients and tools)
#   make check      unit tests (check) and integration tests over real TCP
#   make check-docs the docs' runnable blocks (docs/README.md)
#   make demo       the classroom demo: every mode under kill_it, one table
#   make tsan/asan  sanitizer builds into bin/tsan/ and bin/asan/
#   build/seams/    the servers with the journal's test seams, for the
#                   tests only (built by make, never installed)
#   make race-lab   the race-condition lab of docs/RACES.md
#
# Each part of the tree adds its own rules in a fragment (client/client.mk,
# tools/tools.mk, tests/tests.mk) so the pieces stay small.

OPT     ?= -O2 -g
SAN     ?=
BUILD   ?= build
BIN     ?= bin

MODES   := serial nolock coarse fine buffered

# Recursively expanded on purpose: pkg-config runs only after the
# dependency check (tools/install-deps) has had its chance to install.
PKGS        = libevent libevent_pthreads libcrypto
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

CFLAGS_ALL = -std=gnu11 -Wall -Wextra -pthread -D_GNU_SOURCE -Icommon \
             $(OPT) $(SAN) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LDFLAGS_ALL = -pthread $(SAN) $(LDFLAGS)

DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all servers seams-servers check check-extra check-headers \
        check-docs check-docs-long demo tsan asan \
        race-lab clean install-deps built built-for-check
.DEFAULT_GOAL := all

# ---- dependency check -------------------------------------------------
$(DEPS_STAMP):
	@tools/install-deps
	@mkdir -p $(@D) && touch $@

install-deps:
	@tools/install-deps

# ---- common/: shared code, built once into a static library -----------
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
LIBCOMMON   := $(BUILD)/libssncommon.a

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(LIBCOMMON): $(COMMON_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# ---- server/: one set of objects; one tiny object per mode picks the row
# of the lock policy table (server/lockmode_build.c) --------------------
# The core is flat in server/; the network drivers in server/net/ and the
# journal in server/journal/ include across folders as "net/x.h" and
# "journal/journal.h", so -Iserver is the one include path they add.
# journal_seams.c: only the test build of the servers has it (below).
SEAMS_ONLY  := server/journal/journal_seams.c
SERVER_SRCS := $(filter-out server/lockmode_build.c $(SEAMS_ONLY),\
                 $(wildcard server/*.c server/net/*.c server/journal/*.c))
SERVER_OBJS := $(SERVER_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/server/%.o: CFLAGS_ALL += -Iserver
SERVERS     := $(MODES:%=$(BIN)/ssnserver-%)

mode_macro = LOCK_MODE_$(shell echo $(1) | tr a-z A-Z)

$(BUILD)/server/lockmode_build-%.o: server/lockmode_build.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -DSSN_LOCK_MODE=$(call mode_macro,$*) -c -o $@ $<

$(BIN)/ssnserver-%: $(SERVER_OBJS) $(BUILD)/server/lockmode_build-%.o $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $(SERVER_OBJS) $(BUILD)/server/lockmode_build-$*.o \
	    $(LIBCOMMON) $(LDFLAGS_ALL) $(PKG_LIBS)

# ---- the test build of the servers: the journal's test seams -----------
# (server/journal/journal_seams.h, SQLite's SQLITE_TEST model) armed by
# SSN_TEST_* variables, for the integration tests that crash a compaction
# or fail a sync. $(BUILD)/seams/ssnserver-MODE, never in $(BIN) and never
# installed: no SSN_TEST_ string is in a server of $(BIN)
# (tests/test-seams.sh). Compiled again with -DSSN_TEST_SEAMS are only the
# files that include journal_seams.h (where its hooks are no-ops without
# the macro), plus journal_seams.c, which only this build has; every other
# object is the normal build's.
SEAMS_SRCS  := $(shell grep -l '^.include "journal_seams.h"' \
                 server/journal/*.c)
SEAMS_OBJS  := $(SEAMS_SRCS:%.c=$(BUILD)/seams/%.o)
SEAMS_SERVER_OBJS := $(filter-out $(SEAMS_SRCS:%.c=$(BUILD)/%.o),\
                       $(SERVER_OBJS)) $(SEAMS_OBJS)
SEAMS_SERVERS := $(MODES:%=$(BUILD)/seams/ssnserver-%)

$(BUILD)/seams/server/%.o: CFLAGS_ALL += -Iserver -DSSN_TEST_SEAMS

$(BUILD)/seams/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/seams/ssnserver-%: $(SEAMS_SERVER_OBJS) \
                            $(BUILD)/server/lockmode_build-%.o $(LIBCOMMON)
	$(CC) -o $@ $(SEAMS_SERVER_OBJS) $(BUILD)/server/lockmode_build-$*.o \
	    $(LIBCOMMON) $(LDFLAGS_ALL) $(PKG_LIBS)

seams-servers: $(SEAMS_SERVERS)

# ssnserver is the buffered build; ssnserver1..5 are the classic names.
$(BIN)/ssnserver: $(BIN)/ssnserver-buffered
	ln -sf ssnserver-buffered $@

define classic_rule
$(BIN)/ssnserver$(1): $(BIN)/ssnserver-$(word $(1),$(MODES))
	ln -sf ssnserver-$(word $(1),$(MODES)) $$@
endef
$(foreach i,1 2 3 4 5,$(eval $(call classic_rule,$(i))))

servers: $(SERVERS) $(BIN)/ssnserver $(addprefix $(BIN)/ssnserver,1 2 3 4 5)

# ---- fragments: clients, tools, tests ---------------------------------
PROGRAMS :=
CHECK_SCRIPTS :=
-include client/client.mk
-include tools/tools.mk
-include tests/tests.mk
-include tests/fuzz/fuzz.mk
-include install.mk

all: servers seams-servers $(PROGRAMS)

# make check and make demo build first with a job per CPU, unless make was
# given -j itself: a fresh clone's build took 48 s with one job on 2 CPUs.
# Their tests and the demo then run one at a time.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PARALLEL = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

built: all
	@:
built-for-check: all check-headers
	@:

check:
	@$(MAKE) --no-print-directory $(PARALLEL) built-for-check
	@tests/run-all $(UNIT_RUNNER) $(CHECK_SCRIPTS)

# The slow checks (tests/tests.mk, EXTRA_SCRIPTS): the sanitizer runs, the
# race lab, the crash loop, the stress and the bench smoke; CI runs them
# after make check.
check-extra: all
	@tests/run-all - $(EXTRA_SCRIPTS)

# The docs' runnable blocks run, and docs/ARCHITECTURE.md names every
# source file of server/ (tools/check-docs; the conventions are in
# docs/README.md). make check runs the same through tests/test-docs.sh;
# check-docs-long adds the blocks marked `sh run-long` (minutes).
check-docs: all
	@tools/check-docs
check-docs-long: all
	@tools/check-docs --long

# Every header compiles on its own: it includes what it uses.
HEADERS = $(wildcard common/*.h server/*.h server/net/*.h server/journal/*.h \
            client/*/*.h tools/*.h tools/*/*.h tests/*.h)
check-headers: | $(DEPS_STAMP)
	@for h in $(HEADERS); do \
	    printf '#include "%s"\n' "$$h" | \
	    $(CC) -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Icommon \
	        -Iserver -Iclient/lib \
	        $(PKG_CFLAGS) $(CHECK_CFLAGS) -x c -fsyntax-only - \
	        || { echo "check-headers: $$h does not compile alone"; exit 1; }; \
	done; echo "check-headers: $(words $(HEADERS)) headers compile alone"

demo:
	@$(MAKE) --no-print-directory $(PARALLEL) built
	@tools/demo

# ---- sanitizer builds --------------------------------------------------
# Each with its test build of the servers too (build/tsan/seams/,
# build/asan/seams/): the journal's suites run against either sanitizer
# with BIN=bin/tsan or bin/asan (tests/lib/common.sh finds them).
tsan:
	$(MAKE) BUILD=build/tsan BIN=bin/tsan OPT="-O1 -g" \
	    SAN="-fsanitize=thread -DSSN_SANITIZED" servers seams-servers
asan:
	$(MAKE) BUILD=build/asan BIN=bin/asan OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -DSSN_SANITIZED" servers seams-servers

# The race-condition lab (docs/RACES.md): TSan builds of every mode under load.
race-lab: servers $(BIN)/kill_it
	@tools/race-lab tsan

clean:
	rm -rf build bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Objects reached only through pattern rules are intermediate to make; keep
# them, so a second make does not rebuild the servers.
.SECONDARY:
