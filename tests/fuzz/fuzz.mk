# tests/fuzz/fuzz.mk -- fuzz targets for the request parser, the line
# reader, the telnet filter, the journal's record reader, a whole session
# and a request to --metrics-port (docs/FUZZING.md). Included by the top-level Makefile.
#
#   make fuzz          libFuzzer builds with clang, ASan and UBSan into
#                      bin/fuzz/ (clang is installed on demand, for this
#                      target only: tools/install-deps --fuzz)
#   make fuzz-run      runs each of them for FUZZ_SECONDS (60) from its seed
#                      corpus; new inputs go to build/fuzz/corpus/, crashes
#                      to build/fuzz/crash-TARGET-*
#   make fuzz-replay   the same targets built with $(CC), ASan and UBSan and
#                      tests/fuzz/replay.c's main(), which runs each corpus
#                      file once: what make check uses
#                      (tests/test-fuzz-corpus.sh), no clang needed
#
# Each target is compiled whole with the few files it tests, so the
# sanitizers and libFuzzer's coverage see all of them.

FUZZ_TARGETS := proto linereader telnet jrec session http
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS   = -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Icommon -Iserver \
                -Iserver/journal -Itests/fuzz \
                -O1 -g -fno-omit-frame-pointer
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined
REPLAY_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all

# The code under each target, besides tests/fuzz/fuzz_TARGET.c.
fuzz_code_proto      := common/proto.c common/entry.c common/utf8.c
fuzz_code_linereader := common/linereader.c
fuzz_code_telnet     := common/telnet.c
fuzz_code_http       := server/net/metrics_head.c
fuzz_code_jrec       := tests/fuzz/fuzz_jrec_check.c \
                        server/journal/journal_rec.c common/crc32c.c \
                        common/entry.c common/utf8.c
# The session's whole request path (fuzz_session*.c): the server/ files a
# session reaches, with no socket (not net/), no start-up (not main.c,
# options.c, journal_open.c, journal_replay.c) and the buffered row of the
# lock policy table (lockmode_build.c, as ssnserver-buffered has it).
fuzz_code_session    := $(filter-out tests/fuzz/fuzz_session.c,\
                          $(wildcard tests/fuzz/fuzz_session*.c)) \
    server/auth.c server/auth_source.c \
    server/cmd_hold.c server/commands.c server/listing.c server/lockmode.c \
    server/lockmode_build.c server/log.c server/log_source.c \
    server/metrics.c server/print.c server/server.c server/session.c \
    server/session_bufs.c server/session_life.c server/session_park.c \
    server/session_round.c \
    server/source.c server/stats.c server/store.c server/store_index.c server/store_lock.c \
    server/store_lock_figures.c server/store_pending.c \
    server/store_prefetch.c server/trace.c \
    server/trace_cmd.c server/trace_figures.c server/trace_json.c \
    server/tree.c \
    server/journal/journal.c server/journal/journal_append.c \
    server/journal/journal_compact.c server/journal/journal_owner.c \
    server/journal/journal_rec.c server/journal/journal_reply.c \
    server/journal/journal_switch.c server/journal/journal_wait.c \
    common/bufpool.c common/crc32c.c common/digest.c common/entry.c \
    common/fdio.c common/hist.c common/linereader.c common/outbuf.c \
    common/proto.c common/rbtree.c common/rbtree_check.c \
    common/rbtree_dot.c common/siphash.c common/telnet.c common/utf8.c
# What each links besides: libcrypto, for SHA-256 (digest.c) and
# OPENSSL_cleanse where the code linked uses them.
fuzz_libs_proto      := -lcrypto
fuzz_libs_jrec       := -lcrypto
fuzz_libs_http       := -lcrypto
fuzz_libs_session    := -lcrypto -lpthread

FUZZ_HDRS   := $(wildcard tests/fuzz/*.h common/*.h) \
               server/journal/journal_rec.h server/store.h server/store_index.h \
               server/net/metrics_head.h server/net/metrics_conn.h
FUZZ_BINS   := $(FUZZ_TARGETS:%=$(BIN)/fuzz/fuzz_%)
REPLAY_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/fuzz_%)
FUZZ_STAMP  := $(BUILD)/.fuzz-deps-ok

.PHONY: fuzz fuzz-run fuzz-replay

$(FUZZ_STAMP):
	@tools/install-deps --fuzz
	@mkdir -p $(@D) && touch $@

define fuzz_rules
$(BIN)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $(fuzz_code_$(1)) $(FUZZ_HDRS) \
                       | $(FUZZ_STAMP)
	@mkdir -p $$(@D)
	$(FUZZ_CC) $$(FUZZ_CFLAGS) $(FUZZ_SAN) -o $$@ \
	    tests/fuzz/fuzz_$(1).c $(fuzz_code_$(1)) $(fuzz_libs_$(1))

$(BUILD)/fuzz-replay/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/replay.c \
                                $(fuzz_code_$(1)) $(FUZZ_HDRS) | $(DEPS_STAMP)
	@mkdir -p $$(@D)
	$(CC) $$(FUZZ_CFLAGS) $(REPLAY_SAN) -o $$@ tests/fuzz/replay.c \
	    tests/fuzz/fuzz_$(1).c $(fuzz_code_$(1)) $(fuzz_libs_$(1))
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_rules,$(t))))

$(BIN)/fuzz/fuzz_session $(BUILD)/fuzz-replay/fuzz_session: \
    FUZZ_CFLAGS += -DSSN_LOCK_MODE=LOCK_MODE_BUFFERED
$(BIN)/fuzz/fuzz_session $(BUILD)/fuzz-replay/fuzz_session: \
    $(wildcard server/*.h server/journal/*.h)

fuzz: $(FUZZ_BINS)

fuzz-replay: $(REPLAY_BINS)

# -max_len: a request line is 1024 bytes and a little more; the line
# reader's programs and the telnet streams get more room. A dictionary,
# where there is one, holds the protocol's words.
fuzz_maxlen_proto      := 1100
fuzz_maxlen_linereader := 4096
fuzz_maxlen_telnet     := 4096
fuzz_maxlen_jrec       := 4096
fuzz_maxlen_session    := 4096
fuzz_maxlen_http       := 8192

# One target's run: new inputs into build/fuzz/corpus/TARGET (the seed
# corpus in the tree is only read), crashes kept as build/fuzz/crash-*.
fuzz_run_cmd = mkdir -p $(BUILD)/fuzz/corpus/$(1) && \
    $(BIN)/fuzz/fuzz_$(1) -max_total_time=$(FUZZ_SECONDS) \
    -max_len=$(fuzz_maxlen_$(1)) -print_final_stats=1 \
    $(if $(wildcard tests/fuzz/$(1).dict),-dict=tests/fuzz/$(1).dict) \
    -artifact_prefix=$(BUILD)/fuzz/crash-$(1)- \
    $(BUILD)/fuzz/corpus/$(1) tests/fuzz/corpus/$(1)

fuzz-run: $(FUZZ_BINS)
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run_cmd,$(t)) &&) true
