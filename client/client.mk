# client/client.mk -- the load clients: inputgen, inclient and kill_it.
# Included by the top-level Makefile. Code shared by the three (and by the
# unit tests) goes into $(CLIENT_LIB); each program's main() stays outside
# it, because tests/tests.mk links the library into the unit-test runner.

CLIENT_LIB_SRCS := client/names.c client/gen.c client/expect.c \
                   client/cliutil.c client/net.c client/frame.c \
                   client/source.c client/pipeline.c \
                   client/pipeline_sender.c client/pipeline_reader.c \
                   client/ctl.c client/preload.c
CLIENT_LIB_OBJS := $(CLIENT_LIB_SRCS:%.c=$(BUILD)/%.o) \
                   $(BUILD)/client/lastnames_data.o
CLIENT_LIB      := $(BUILD)/libssnclient.a

KILLIT_OBJS := $(addprefix $(BUILD)/client/,kill_it.o killit_verify.o \
               killit_run.o killit_report.o findpid.o)

CLIENT_PROGS := $(BIN)/inputgen $(BIN)/inclient $(BIN)/kill_it

$(CLIENT_LIB): $(CLIENT_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The bundled last-name list becomes a C string, so every binary carries
# the same default list whatever directory it runs from.
$(BUILD)/client/lastnames_data.c: client/lastnames.txt client/client.mk
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
