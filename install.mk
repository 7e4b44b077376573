# install.mk -- make install, make uninstall and make help. Included by the
# top-level Makefile after the other fragments, so SERVERS, MODES,
# CLIENT_PROGS, SSN_BENCH and BENCH_PROGS are known here.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=]
#   make uninstall [PREFIX=/usr/local] [DESTDIR=]   removes what install put
#
# PREFIX is where the programs will live when run; DESTDIR is prepended to
# every path while installing only (staging for a package: make install
# DESTDIR=/tmp/stage PREFIX=/usr). Nothing here builds with PREFIX, so the
# same binaries can be installed anywhere.

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
INSTALL ?= install

# The pages, by section: man/NAME.SECTION goes to man<SECTION>/.
MAN1 := $(wildcard man/*.1)

# ssnserver and ssnserver1..5 are symbolic links to the mode builds, as in
# bin/; each mode's name also opens ssnserver(1).
SERVER_LINKS := ssnserver $(addprefix ssnserver,1 2 3 4 5)
MAN1_LINKS   := $(MODES:%=ssnserver-%.1)
INSTALL_PROGS := $(SERVERS) $(CLIENT_PROGS) $(SSN_BENCH) $(BENCH_PROGS)

.PHONY: install uninstall help

install: $(INSTALL_PROGS)
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1'
	$(INSTALL) -m 0755 $(INSTALL_PROGS) '$(DESTDIR)$(BINDIR)/'
	ln -sf ssnserver-buffered '$(DESTDIR)$(BINDIR)/ssnserver'
	$(foreach i,1 2 3 4 5,ln -sf ssnserver-$(word $(i),$(MODES)) \
	    '$(DESTDIR)$(BINDIR)/ssnserver$(i)' &&) true
	$(INSTALL) -m 0644 $(MAN1) '$(DESTDIR)$(MANDIR)/man1/'
	$(foreach l,$(MAN1_LINKS),ln -sf ssnserver.1 \
	    '$(DESTDIR)$(MANDIR)/man1/$(l)' &&) true

# Only the files install wrote: the directories may hold other programs'.
uninstall:
	rm -f $(foreach f,$(notdir $(INSTALL_PROGS)) $(SERVER_LINKS), \
	    '$(DESTDIR)$(BINDIR)/$(f)')
	rm -f $(foreach f,$(notdir $(MAN1)) $(MAN1_LINKS), \
	    '$(DESTDIR)$(MANDIR)/man1/$(f)')

help:
	@echo 'make [TARGET] [VARIABLE=value ...]'
	@echo
	@echo 'Targets:'
	@echo '  all           (default) the five servers, the clients, the benchmarks, the unit tests'
	@echo '  servers       bin/ssnserver-MODE for each lock mode, bin/ssnserver and ssnserver1..5'
	@echo '  seams-servers build/seams/ssnserver-MODE: with the journal'"'"'s test seams, for the'
	@echo '                tests only (part of all; never installed)'
	@echo '  clients       bin/inputgen, bin/inclient, bin/kill_it, bin/ssn-bench and bin/ssn-cli'
	@echo '  check         unit tests (check) and integration tests over real TCP'
	@echo '  check-extra   the slow checks: ASan, TSan and valgrind runs, the race'
	@echo '                lab, the crash loop, stress and bench smoke (CI runs it)'
	@echo '  check-headers every header compiles on its own'
	@echo '  check-docs    the docs'"'"' runnable blocks run, ARCHITECTURE.md names every'
	@echo '                server/ file (docs/README.md; part of check)'
	@echo '  check-docs-long  the same with the long blocks too (minutes; not in check)'
	@echo '  demo          every mode under kill_it, one table and a plot (docs/DEMO.md)'
	@echo '  stall-demo    one client never reads its PRINT: the others'"'"' times in fine'
	@echo '                and in buffered mode (docs/DEMO.md)'
	@echo '  bench-compare ssnserver against Redis and memcached, same workloads, one'
	@echo '                table and a chart (docs/PERFORMANCE.md; not in check)'
	@echo '  bench-journal the journal'"'"'s targets against Redis'"'"'s AOF and the disk'"'"'s own'
	@echo '                sync rate (docs/DURABILITY.md; not in check)'
	@echo '  bench-limits  the figures of docs/LIMITS.md: limits at 10^6 people, then'
	@echo '                the attacks on memory, passwords and logins (not in check)'
	@echo '  soak-journal  200 cycles of kill -9, failing allocations and compactions,'
	@echo '                every acknowledged mutation checked (not in check)'
	@echo '  tsan, asan    sanitizer builds of the servers into bin/tsan/ and bin/asan/'
	@echo '  race-lab      ThreadSanitizer builds of every mode under load (docs/RACES.md)'
	@echo '  fuzz          libFuzzer targets with clang (docs/FUZZING.md); fuzz-run,'
	@echo '                fuzz-replay run them or replay their corpus'
	@echo '  install       programs into $$(DESTDIR)$$(BINDIR), man pages into $$(DESTDIR)$$(MANDIR)'
	@echo '  uninstall     remove exactly what install put there (same PREFIX and DESTDIR)'
	@echo '  install-deps  install the Debian packages the build and tests need'
	@echo '  clean         remove build/ and bin/'
	@echo '  help          this text'
	@echo
	@echo 'Variables:'
	@echo '  PREFIX=$(PREFIX)  BINDIR=$(BINDIR)  MANDIR=$(MANDIR)'
	@echo '  DESTDIR=$(DESTDIR)  (prepended to every installed path; for staging)'
	@echo '  OPT=$(OPT)  CFLAGS, LDFLAGS  (added to the compiler and linker lines)'
