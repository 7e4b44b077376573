# client/client.mk -- the clients: inputgen, inclient, kill_it, ssn-bench and
# ssn-cli.
# Included by the top-level Makefile. Code the clients share (and the
# unit tests) goes into $(CLIENT_LIB); each program's main() stays outside
# it, because tests/tests.mk links the library into the unit-test runner.

#
#   client/lib/     what the clients share (names, generator, pipeline, ...)
#   client/bench/   ssn-bench
#   client/killit/  kill_it
#   client/cli/     ssn-cli
#   client/*.c      the one-file programs, inputgen and inclient
CLIENT_LIB_SRCS := $(wildcard client/lib/*.c)
# ssn-bench's dialects and report are pure (bench.h): they go into the
# library too, so tests/check_bench.c reaches them.
CLIENT_LIB_SRCS += client/bench/bench_dialect.c client/bench/bench_resp.c \
                   client/bench/bench_memcache.c client/bench/bench_report.c
# ssn-cli's pure parts likewise, for tests/check_cli.c.
CLIENT_LIB_SRCS += client/cli/cli_opts.c client/cli/cli_text.c \
                   client/cli/cli_statline.c
CLIENT_LIB_OBJS := $(CLIENT_LIB_SRCS:%.c=$(BUILD)/%.o) \
                   $(BUILD)/client/lastnames_data.o
CLIENT_LIB      := $(BUILD)/libssnclient.a

$(BUILD)/client/%.o: CFLAGS_ALL += -Iclient/lib

KILLIT_OBJS := $(addprefix $(BUILD)/client/killit/,kill_it.o killit_verify.o \
               killit_run.o killit_report.o)

CLIENT_PROGS := $(BIN)/inputgen $(BIN)/inclient $(BIN)/kill_it

$(CLIENT_LIB): $(CLIENT_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The bundled last-name list becomes a C string, so every binary carries
# the same default list whatever directory it runs from.
$(BUILD)/client/lastnames_data.c: client/lib/lastnames.txt client/client.mk
	@mkdir -p $(@D)
	{ echo '/* generated from client/lastnames.txt by client/client.mk */'; \
	  echo 'const char names_default_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/client/lastnames_data.o: $(BUILD)/client/lastnames_data.c | $(DEPS_STAMP)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BIN)/inputgen: $(BUILD)/client/inputgen.o $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(PKG_LIBS)

$(BIN)/inclient: $(BUILD)/client/inclient.o $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(PKG_LIBS)

$(BIN)/kill_it: $(KILLIT_OBJS) $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(PKG_LIBS)

PROGRAMS += $(CLIENT_PROGS)

.PHONY: clients
clients: $(CLIENT_PROGS)

# ssn-bench: the load generator on libevent (man/ssn-bench.1). Its event
# loops and main() stay out of the library. bench-fake is a stand-in Redis
# or memcached for tests/test-bench.sh; it is never installed.
SSN_BENCH      := $(BIN)/ssn-bench
SSN_BENCH_OBJS := $(addprefix $(BUILD)/client/bench/,bench_main.o \
                  bench_opts.o bench_set.o bench_conn.o bench_stats.o)
BENCH_FAKE     := $(BUILD)/client/bench-fake

$(SSN_BENCH): $(SSN_BENCH_OBJS) $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(PKG_LIBS)

$(BENCH_FAKE): $(BUILD)/client/bench/bench_fake.o
	$(CC) -o $@ $^ $(LDFLAGS_ALL)

PROGRAMS += $(SSN_BENCH) $(BENCH_FAKE)

clients: $(SSN_BENCH)

# ssn-cli: the command-line client for people (man/ssn-cli.1). Only its
# prompt (cli_repl.c) uses libedit, and only ssn-cli links it: the servers'
# PKGS do not name it. Recursively expanded, as PKGS are, so pkg-config
# runs after tools/install-deps.
EDIT_CFLAGS = $(shell pkg-config --cflags libedit 2>/dev/null)
EDIT_LIBS   = $(shell pkg-config --libs libedit 2>/dev/null)
SSN_CLI      := $(BIN)/ssn-cli
SSN_CLI_OBJS := $(addprefix $(BUILD)/client/cli/,ssn_cli.o cli_signal.o \
                cli_conn.o cli_repl.o cli_once.o cli_pipe.o cli_stat.o \
                cli_latency.o)

$(BUILD)/client/cli/cli_repl.o: CFLAGS_ALL += $(EDIT_CFLAGS)

$(SSN_CLI): $(SSN_CLI_OBJS) $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(PKG_LIBS) $(EDIT_LIBS)

CLIENT_PROGS += $(SSN_CLI)
PROGRAMS += $(SSN_CLI)
clients: $(SSN_CLI)
