# tests/tests.mk -- the unit-test runner (check) and the integration scripts.
# Included by the top-level Makefile.

UNIT_SRCS   := $(wildcard tests/check_*.c)
UNIT_OBJS   := $(UNIT_SRCS:%.c=$(BUILD)/%.o)
UNIT_RUNNER := $(BUILD)/tests/unit

# Unit tests link the server's code except its main(); they pick the lock
# policy of each store they make from the table, so no per-mode object.
# They link the objects the installed servers are made of, without the
# journal's test seams: the unit tests fault the journal through
# journal_sync_fn and need none of them (the seams are for the
# integration tests, which start $(BUILD)/seams/ssnserver-MODE).
UNIT_SERVER_OBJS = $(filter-out $(BUILD)/server/main.o,$(SERVER_OBJS))

$(BUILD)/tests/%.o: CFLAGS_ALL += $(CHECK_CFLAGS) -Iserver -Iclient/lib

# rb_find_slot is wrapped in this link only: check_journal_replay.c counts
# the replay's walks down the tree.
UNIT_WRAPS := -Wl,--wrap=rb_find_slot

$(UNIT_RUNNER): $(UNIT_OBJS) $(UNIT_SERVER_OBJS) $(CLIENT_LIB) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(UNIT_WRAPS) $(PKG_LIBS) $(CHECK_LIBS)

PROGRAMS += $(UNIT_RUNNER)
# The slowest checks, a few minutes together: the sanitizer builds'
# runs, the race lab, the journal's crash loop, the event driver's stress
# by misbehaving clients, the benchmark tools' smoke test and the
# keepalive test's network namespaces. They make
# their own target, make check-extra, which CI runs after make check, so
# that make check stays within its five minutes on two cores.
EXTRA_SCRIPTS := tests/test-server-asan.sh tests/test-server-tsan.sh \
                 tests/test-races.sh tests/test-server-valgrind.sh \
                 tests/test-journal-soak.sh tests/test-server-events-stress.sh \
                 tests/test-bench-smoke.sh tests/test-server-keepalive.sh
CHECK_SCRIPTS += $(filter-out $(EXTRA_SCRIPTS), \
                   $(sort $(wildcard tests/test-*.sh)))

# stress-client: the misbehaving clients of test-server-events-stress.sh
# (vanishing, resetting, never reading, thousands at once). A test helper,
# never installed; it takes PRINT's line from the common library.
STRESS_CLIENT := $(BUILD)/tests/stress-client

$(STRESS_CLIENT): $(BUILD)/tests/stress_client.o $(BUILD)/tests/stress_hold.o \
                  $(LIBCOMMON)
	$(CC) -o $@ $(filter-out $(LIBCOMMON),$^) $(LIBCOMMON) $(LDFLAGS_ALL) \
	    $(PKG_LIBS)

PROGRAMS += $(STRESS_CLIENT)

# count-epoll-ctl.so: an LD_PRELOAD helper of test-journal-events.sh that
# counts a server's epoll_ctl calls. Built without sanitizers (it is loaded
# into the plain build only).
COUNT_EPOLL_CTL := $(BUILD)/tests/count-epoll-ctl.so

PRELOAD_LINK = $(CC) -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -O2 -fPIC \
	       -shared -o $@ $< -ldl

$(COUNT_EPOLL_CTL): tests/count_epoll_ctl.c
	@mkdir -p $(@D)
	$(PRELOAD_LINK)

PROGRAMS += $(COUNT_EPOLL_CTL)

# refuse-sched-batch.so: an LD_PRELOAD helper of test-server-lifecycle.sh
# under which SCHED_BATCH is refused. Built like count-epoll-ctl.so.
REFUSE_SCHED_BATCH := $(BUILD)/tests/refuse-sched-batch.so

$(REFUSE_SCHED_BATCH): tests/refuse_sched_batch.c
	@mkdir -p $(@D)
	$(PRELOAD_LINK)

PROGRAMS += $(REFUSE_SCHED_BATCH)
