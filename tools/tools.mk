# tools/tools.mk -- the benchmarks of issue 5 (see docs/LESSONS.md):
# bench-hash, bench-log and bench-wakeup; and bench-limits, the figures of
# docs/LIMITS.md. Included by the top-level Makefile. Each links its own
# objects, bench-util.o and the common library (for jsonw and fdio), never
# server code; bench-limits talks to a server, so it links the clients'
# library too (client/lib/: net.c, pipeline.c, ctl.c, preload.c, findpid.c).

BENCH_PROGS    := $(BIN)/bench-hash $(BIN)/bench-log $(BIN)/bench-wakeup
BENCH_UTIL_OBJ := $(BUILD)/tools/bench-util.o

# $(LIBCOMMON) goes last on the link line: the archive after the objects
# that need it, whatever prerequisites a program adds below.
$(BENCH_PROGS): $(BIN)/bench-%: $(BUILD)/tools/bench-%.o $(BENCH_UTIL_OBJ) \
                $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $(filter-out $(LIBCOMMON),$^) $(LIBCOMMON) $(LDFLAGS_ALL) \
	    $(PKG_LIBS)

# bench-log keeps its queue (e) and double-buffer (f) variants in files of
# their own.
$(BIN)/bench-log: $(BUILD)/tools/bench-logq.o $(BUILD)/tools/bench-dbuf.o

# bench-limits (tools/bench-limits/): main and options in bench-limits.o,
# each part in a file of its own, their helpers in bench-limits-common.o
# (bench-limits.h); the clients' code, found with -Iclient/lib, and
# bench-util.h with -Itools.
BENCH_LIMITS_OBJ := $(addprefix $(BUILD)/tools/bench-limits/bench-limits,.o \
                    -common.o -fair.o -mem.o -term.o)
$(BENCH_LIMITS_OBJ): CFLAGS_ALL += -Iclient/lib -Itools
$(BIN)/bench-limits: $(BENCH_LIMITS_OBJ) $(BENCH_UTIL_OBJ) \
                     $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $(filter-out $(CLIENT_LIB) $(LIBCOMMON),$^) $(CLIENT_LIB) \
	    $(LIBCOMMON) $(LDFLAGS_ALL) $(PKG_LIBS) -lm

BENCH_PROGS += $(BIN)/bench-limits
PROGRAMS += $(BENCH_PROGS)

# make bench-limits: a buffered server on port 0 with -m 20000, the three
# parts at docs/LIMITS.md's store size (10^6 people; about a minute here),
# the server stopped by its PID (tools/bench-limits/bench-limits.sh; the sigterm part
# has stopped it already); then the attacks of issue 22 at full size in
# both I/O models, one table (tools/bench-limits/bench-guard.sh: the reply
# budget, wrong passwords, unauthenticated connections; about 3 minutes,
# each server on port 0 stopped by its PID). Not part of make check.
.PHONY: bench-limits
bench-limits: $(BIN)/bench-limits $(BIN)/ssnserver-buffered \
              $(BIN)/ssnserver-coarse
	@BIN=$(BIN) tools/bench-limits/bench-limits.sh -s $(BIN)/ssnserver-buffered \
	    -m 20000 -- --people 1000000 --digests 20 --changing \
	    --find-seconds 30 --clients 200 --prints 3 --memory-seconds 10 \
	    --idle 20000
	@BIN=$(BIN) tools/bench-limits/bench-guard.sh

# make stall-demo: one client sends PRINT to a store of 200,000 people and
# never reads; the others' times in fine and in buffered mode
# (tools/stall-demo, docs/DEMO.md). About 20 s. Not part of make check.
.PHONY: stall-demo
stall-demo: $(BIN)/kill_it $(BIN)/inclient $(BIN)/ssnserver-fine \
            $(BIN)/ssnserver-buffered
	@BIN=$(BIN) tools/stall-demo

# bench-echo: the floor under every server of docs/PERFORMANCE.md, a
# minimal epoll server that answers each line with a short one. Of the
# project's code it uses the server's io_uring calls (-u) alone.
$(BIN)/bench-echo: $(BUILD)/tools/bench-echo.o $(BUILD)/tools/bench-echo-journal.o \
                   $(BUILD)/tools/bench-echo-uring.o $(BUILD)/tools/bench-echo-threads.o \
                   $(BUILD)/server/net/uring.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL)

PROGRAMS += $(BIN)/bench-echo

# make bench-compare: ssnserver-buffered (--io events and --io threads)
# against Redis and memcached (installed if missing, as comparison peers
# only; never build dependencies) and the echo floor, with the same
# ssn-bench workloads, from one client thread and from two; a table for
# each, build/bench/compare.csv and build/bench/compare.png
# (tools/bench-compare, docs/PERFORMANCE.md). About 11 minutes. Not part
# of make check.
.PHONY: bench-compare
bench-compare: $(BIN)/ssn-bench $(BIN)/ssnserver-buffered $(BIN)/bench-echo
	@BIN=$(BIN) BUILD=$(BUILD) tools/bench-compare

# fsync-rate: this disk's serial small-append fdatasync rate, in the
# variants of docs/DURABILITY.md (append, space reserved with fallocate,
# space pre-filled with zeros): the yardstick of --fsync always.
$(BIN)/fsync-rate: $(BUILD)/tools/fsync-rate.o $(BENCH_UTIL_OBJ) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $(filter-out $(LIBCOMMON),$^) $(LIBCOMMON) $(LDFLAGS_ALL)

PROGRAMS += $(BIN)/fsync-rate

# make bench-journal: the journal's figures of docs/DURABILITY.md, side by
# side in one run: one connection against the disk's fdatasync rate
# (fsync-rate), 50 connections against Redis with appendfsync always
# (installed if missing, as bench-compare does), everysec against no
# journal, and --journal-wake broadcast against signal with 1, 50 and 500
# connections (tools/bench-journal). About 4 minutes. Not part of make
# check.
.PHONY: bench-journal
bench-journal: $(BIN)/ssn-bench $(BIN)/ssnserver-buffered $(BIN)/fsync-rate
	@BIN=$(BIN) BUILD=$(BUILD) tools/bench-journal

# make soak-journal: the journal in a crash loop (tools/soak-journal):
# SOAK_CYCLES cycles of kill -9 at a random moment while four clients
# pipeline ADDs and DELETEs, compactions run (automatic and COMPACT) and
# the test build's seam fails a random allocation; after every restart,
# without --journal-truncate, each acknowledged mutation must be there.
# fine and buffered, --io threads and events, --fsync always. About 2 s a
# cycle here (8 minutes for 200). SOAK_SEED=S replays a run. Not part of
# make check (tests/test-journal-soak.sh runs 10 cycles).
SOAK_CYCLES ?= 200
.PHONY: soak-journal
soak-journal: $(SEAMS_SERVERS)
	@BIN=$(BIN) BUILD=$(BUILD) tools/soak-journal --cycles $(SOAK_CYCLES) \
	    $(if $(SOAK_SEED),--seed $(SOAK_SEED)) --dir $(BUILD)/soak-journal
