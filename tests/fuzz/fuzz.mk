# tests/fuzz/fuzz.mk -- fuzz targets for the request parser, the line
# reader and the telnet filter (docs/FUZZING.md). Included by the top-level
# Makefile.
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
# Each target is compiled whole with the few common/ files it tests, so
# the sanitizers and libFuzzer's coverage see all of them.

FUZZ_TARGETS := proto linereader telnet
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS   = -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Icommon -Itests/fuzz \
                -O1 -g -fno-omit-frame-pointer
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined
REPLAY_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all

# The common/ code under each target.
fuzz_code_proto      := common/proto.c common/entry.c
fuzz_code_linereader := common/linereader.c
fuzz_code_telnet     := common/telnet.c
# What it links besides: entry_free wipes the SSN with OPENSSL_cleanse.
fuzz_libs_proto      := -lcrypto

FUZZ_HDRS   := tests/fuzz/fuzz.h $(wildcard common/*.h)
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

fuzz: $(FUZZ_BINS)

fuzz-replay: $(REPLAY_BINS)

# -max_len: a request line is 1024 bytes and a little more; the line
# reader's programs and the telnet streams get more room. A dictionary,
# where there is one, holds the protocol's words.
fuzz_maxlen_proto      := 1100
fuzz_maxlen_linereader := 4096
fuzz_maxlen_telnet     := 4096

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
