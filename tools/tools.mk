# tools/tools.mk -- the benchmarks of issue 5 (see docs/LESSONS.md):
# bench-hash, bench-log and bench-wakeup. Included by the top-level Makefile.
# Each links its own objects, bench-util.o and the common library (for
# jsonw and fdio), never server code.

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

PROGRAMS += $(BENCH_PROGS)
