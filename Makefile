# thpeval: build, test, run.  `make help` lists the targets.
#
#   make                 build bin/thpeval and the static guest programs
#   make check           the whole test suite: lint, unit, fuzz, integration, deb-check, and unit +
#                        the core integration scripts under ASan/UBSan (root for the guests)
#   make lint            static analysis: gcc -fanalyzer on every non-test C file, ansible-lint
#                        (production profile) on contrib/ansible, shellcheck on every shell script
#   make run             install what is missing, then `thpeval run --host-thp=always`
#   make bench           orchestration / fidelity benchmarks, figures to bench/results/
#   make install         bin/thpeval, its guest program, man page and schema under PREFIX (/usr/local)
#   make deb             the Debian package: build/deb/thpeval_<version>_<arch>.deb (dpkg-buildpackage)
#   make deb-check       build the package and check it (tests/integration/deb.sh; in make check)
#   make deb-fresh       install the package with apt on a fresh Debian 12 root (debootstrap) and run
#                        it there (tests/acceptance/deb_fresh.sh; not in make check: downloads a few
#                        hundred MB from the Debian archive, takes many minutes; root)
#   WERROR=1             warnings are errors (CI)      SANITIZE=address,undefined
#   V=1                  show full commands

# the version: debian/changelog's newest entry, the one place it is written
# (bump it with `dch -v X.Y.Z`); thpeval version, results.json and the package carry it
VERSION := $(shell sed -n '1s/^thpeval (\(.*\)) .*/\1/p' debian/changelog)
ifeq ($(VERSION),)
$(error cannot read the version from debian/changelog's first line)
endif
CC ?= cc
PKG_CONFIG ?= pkg-config
O := build

WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-qual -Wwrite-strings -Wundef -Wvla -Wnull-dereference \
	-Wimplicit-fallthrough -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif

CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -DTHPEVAL_VERSION='"$(VERSION)"' -I. -MMD -MP
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
endif

PKGS := libvirt libguestfs json-c sqlite3 libpq libxml-2.0 liblzma
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CMOCKA_CFLAGS = $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS = $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2);
endif

# ---- sources ----------------------------------------------------------------
LIB_SRC := $(wildcard lib/*.c)
HOST_SRC := $(wildcard host/*.c)
IMAGES_SRC := $(wildcard images/*.c)
ORCH_SRC := $(filter-out orchestrator/cmd/main.c,$(wildcard orchestrator/*/*.c))
GUEST_SRC := $(filter-out guest/main.c,$(wildcard guest/*.c))
GUEST_LIB_SRC := lib/record.c lib/parse.c lib/err.c lib/fstree.c lib/wltraits.c lib/argv.c lib/wlopts.c \
		 lib/smaps.c

CORE_OBJ := $(patsubst %.c,$(O)/%.o,$(LIB_SRC) $(HOST_SRC) $(IMAGES_SRC) $(ORCH_SRC))
GUEST_OBJ := $(patsubst %.c,$(O)/g/%.o,$(GUEST_SRC) $(GUEST_LIB_SRC))

BINDIR ?= bin
BIN := $(BINDIR)/thpeval
GUEST_BIN := $(BINDIR)/thpeval-guest

TEST_SRC := $(wildcard tests/lib/test_*.c tests/host/test_*.c tests/images/test_*.c tests/orchestrator/test_*.c)
GTEST_SRC := $(wildcard tests/guest/test_*.c)
TEST_BIN := $(patsubst %.c,$(O)/%,$(TEST_SRC))
GTEST_BIN := $(patsubst %.c,$(O)/%,$(GTEST_SRC))
# test-only programs that print figures for a script to check (no cmocka)
STATS_BIN := $(O)/tests/stats/t_table

.PHONY: all clean check unit integration run bench help deps fuzz sanitize install deb deb-check deb-fresh \
	lint lint-analyze print-lint-c
all: $(BIN) $(GUEST_BIN)

$(O)/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -c -o $@ $<

# guest objects: static, libc only, no sanitizers (they run as PID 1 in the guest)
$(O)/g/%.o: %.c
	$(call msg,CC,$< '(guest)')
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(BASE_CFLAGS) -DTHPEVAL_GUEST $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/libthpeval.a: $(CORE_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/libguest.a: $(GUEST_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(O)/orchestrator/cmd/main.o $(O)/libthpeval.a
	$(call msg,LD,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(GUEST_BIN): $(O)/g/guest/main.o $(O)/libguest.a
	$(call msg,LD,$@ '(static)')
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -static -o $@ $^ -lm

$(O)/tests/%: tests/%.c $(O)/libthpeval.a
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(BASE_CFLAGS) $(PKG_CFLAGS) $(CMOCKA_CFLAGS) $(CFLAGS) $(SAN_FLAGS) -o $@ $< \
		$(O)/libthpeval.a $(PKG_LIBS) $(CMOCKA_LIBS) -lm

$(GTEST_BIN): $(O)/tests/guest/%: tests/guest/%.c $(O)/libguest.a
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(BASE_CFLAGS) -DTHPEVAL_GUEST $(CMOCKA_CFLAGS) $(CFLAGS) $(SAN_FLAGS) -o $@ $< \
		$(O)/libguest.a $(CMOCKA_LIBS) -lm

$(STATS_BIN): $(O)/tests/stats/%: tests/stats/%.c $(O)/libthpeval.a
	$(call msg,CC,$@)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(SAN_FLAGS) -o $@ $< $(O)/libthpeval.a -lm

# ---- tests --------------------------------------------------------------------
SCRIPT_TESTS := $(wildcard tests/cli/*.sh tests/lib/*.sh tests/report/*.sh tests/stats/*.sh tests/tools/*.sh)

# each stage ends with "STAGE: N passed, N failed, N skipped" (tests/run-stage.sh);
# STAGE_PREFIX names the sanitizer pass's stages apart
STAGE_PREFIX ?=
# the unit programs that boot guests or build images with real libvirtd and libguestfs
# (3 minutes of each unit pass); UNIT_SYSTEM_ONCE=1 (make check) leaves them to the
# sanitizer pass, as IT_CORE_ONCE does the core integration scripts
UNIT_SYSTEM := $(O)/tests/orchestrator/test_virt $(O)/tests/images/test_image
UNIT_RUN := $(TEST_BIN)
ifeq ($(UNIT_SYSTEM_ONCE),1)
UNIT_RUN := $(filter-out $(UNIT_SYSTEM),$(TEST_BIN))
endif
unit: all $(TEST_BIN) $(GTEST_BIN) $(STATS_BIN)
	@tools/services.sh
	@$(if $(filter-out $(UNIT_RUN),$(TEST_BIN)),echo "$(STAGE_PREFIX)unit: left to the sanitizer pass: $(notdir $(filter-out $(UNIT_RUN),$(TEST_BIN)))")
	@THPEVAL_BIN=$(abspath $(BIN)) HELPER_CFLAGS="$(SAN_FLAGS)" THPEVAL_T_TABLE=$(abspath $(STATS_BIN)) \
		THPEVAL_OBJDIR=$(abspath $(O)) tests/run-stage.sh $(STAGE_PREFIX)unit $(UNIT_RUN) $(GTEST_BIN) $(SCRIPT_TESTS)

# KCOMPILE_IT=0 (or THPEVAL_SKIP_KCOMPILE=1) leaves out the real kernel build (minutes under TCG)
KCOMPILE_IT ?= 1
IT_CORE := tests/integration/run.sh tests/integration/faults.sh \
	tests/integration/sizing.sh tests/integration/workloads.sh tests/integration/treatment.sh \
	tests/integration/exec.sh
IT_SCRIPTS := $(IT_CORE)
ifneq ($(KCOMPILE_IT),0)
IT_SCRIPTS += tests/integration/kcompile.sh
endif
# memcheck cannot run a sanitizer build: the plain pass only; the fleet playbook
# test builds and runs the package (make deb), which is never a sanitizer build;
# the applications' guests take minutes under TCG (their parsers are unit-tested
# under the sanitizers)
ifeq ($(SANITIZE),)
IT_SCRIPTS += tests/integration/valgrind.sh tests/integration/fleet.sh tests/integration/apps.sh
# the recovery arms: real guests, their knobs killed and restored (a few minutes)
IT_SCRIPTS += tests/integration/recovery.sh
endif
# the KSM arm: two guests at once, KSM's knobs put back also after a SIGKILL
IT_SCRIPTS += tests/integration/ksm.sh
# a second libvirt daemon, a SIGKILL mid-migration and 'host restore' (the plain pass)
ifeq ($(SANITIZE),)
IT_SCRIPTS += tests/integration/migrate.sh
endif
# IT_CORE_ONCE=1 (make check): IT_CORE is left to the sanitizer pass, which runs
# the same scripts over the same code, instrumented; twice was 18 minutes of TCG
# guests for nothing more. The plain build still boots guests in check: kcompile,
# valgrind, fleet and apps here, and deb-check's run from the package
ifeq ($(IT_CORE_ONCE),1)
IT_SCRIPTS := $(filter-out $(IT_CORE),$(IT_SCRIPTS))
endif
integration: all
	@THPEVAL_BIN=$(abspath $(BIN)) tests/run-stage.sh $(STAGE_PREFIX)integration $(IT_SCRIPTS)

# the unit and integration tests again with AddressSanitizer + UBSan (LeakSanitizer
# included), in a build of their own so bin/ stays a normal build; not the kernel
# build of tests/integration/kcompile.sh (its time is make and gcc, not thpeval)
SAN_DIR := build-san
sanitize:
	@$(MAKE) --no-print-directory O=$(SAN_DIR) BINDIR=$(SAN_DIR)/bin SANITIZE=address,undefined \
		KCOMPILE_IT=0 STAGE_PREFIX=asan- unit integration

check: deps
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory unit UNIT_SYSTEM_ONCE=1
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS)
	@$(MAKE) --no-print-directory integration IT_CORE_ONCE=1
	@$(MAKE) --no-print-directory deb-check
	@$(MAKE) --no-print-directory sanitize

deps:
	@tools/deps.sh

run: deps
	@$(MAKE) --no-print-directory all
	@tools/services.sh
	$(BIN) run --host-thp=always --out results

bench: deps
	@$(MAKE) --no-print-directory all
	@tools/services.sh
	@bench/run.sh

# ---- static analysis (make lint) --------------------------------------------------
# One stage (tests/run-stage.sh), each part failing it on any finding:
# tests/lint/analyzer.sh  gcc -fanalyzer on every non-test C file, with the build's defines,
#                         includes and pkg-config flags: one result per file under $(O)/lint/
#                         (FILE.ok when clean), redone when the file or a header it includes
#                         changes; in parallel (-j2 unless make has -j); ~20 s of CPU from cold
# tests/lint/ansible.sh   ansible-lint --profile production on contrib/ansible
# tests/lint/shellcheck.sh  shellcheck -S warning and SC2086 on every shell script
# tests/lint/plant.sh     each of the three fails on a fault planted in a copy of the tree
# A false positive is silenced at its line with a comment saying why, never per file.
LINT_CC ?= gcc
LINT_C ?= $(LIB_SRC) $(HOST_SRC) $(IMAGES_SRC) $(wildcard orchestrator/*/*.c) $(wildcard guest/*.c)
LINT_FLAGS := -std=gnu11 -O1 -fanalyzer -Werror -D_GNU_SOURCE -DTHPEVAL_VERSION='"$(VERSION)"' -I.
LINT_OK := $(patsubst %.c,$(O)/lint/%.ok,$(LINT_C))
lint:
	@MAKE="$(MAKE)" O=$(O) LINT_C="$(LINT_C)" LINT_CC=$(LINT_CC) tests/run-stage.sh $(STAGE_PREFIX)lint \
		tests/lint/analyzer.sh tests/lint/ansible.sh tests/lint/shellcheck.sh tests/lint/plant.sh

lint-analyze: $(LINT_OK)
print-lint-c:
	@echo $(LINT_C)

# a finding is not a make error: the file's .ok is not written, its .log keeps the
# findings and tests/lint/analyzer.sh counts it failed (so that every file is analysed);
# guest files as the guest build compiles them (libc only)
$(O)/lint/%.ok: %.c
	$(call msg,ANALYZE,$<)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@; if $(LINT_CC) $(LINT_FLAGS) $(if $(filter guest/%,$<),-DTHPEVAL_GUEST,$(PKG_CFLAGS)) \
		-MMD -MP -MF $(@:.ok=.d) -MT $@ -c -o /dev/null $< >$(@:.ok=.log) 2>&1; then touch $@; fi

# ---- fuzzing (libFuzzer, clang) ----------------------------------------------------
# each tests/fuzz/fuzz_NAME.c is a libFuzzer harness; corpus in tests/fuzz/corpus/NAME/
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 15
FUZZ_CC ?= clang
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRC))

# a harness links lib/ and what FUZZ_SRC_<name> and FUZZ_PKGS_<name> add: the results
# loader is the model's, with json-c
FUZZ_SRC_fuzz_results := $(wildcard orchestrator/model/*.c) host/procfs.c host/thp.c
FUZZ_PKGS_fuzz_results := json-c

$(O)/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(FUZZ_SRC_fuzz_results)
	$(call msg,FUZZ,$@)
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -DTHPEVAL_VERSION='"$(VERSION)"' -I. -g -O1 \
		-fsanitize=fuzzer,address,undefined \
		$(if $(FUZZ_PKGS_$*),$(shell $(PKG_CONFIG) --cflags $(FUZZ_PKGS_$*))) -o $@ $< $(LIB_SRC) \
		$(FUZZ_SRC_$*) $(if $(FUZZ_PKGS_$*),$(shell $(PKG_CONFIG) --libs $(FUZZ_PKGS_$*))) -lm

fuzz: $(FUZZ_BIN)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# ---- install, Debian package ------------------------------------------------------
# thpeval finds its guest program beside itself, else in ../libexec/thpeval/ (cmd/commands.h)
PREFIX ?= /usr/local
DESTDIR ?=
install: all
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/thpeval
	install -D -m 0755 $(GUEST_BIN) $(DESTDIR)$(PREFIX)/libexec/thpeval/thpeval-guest
	install -D -m 0644 doc/thpeval.1 $(DESTDIR)$(PREFIX)/share/man/man1/thpeval.1
	install -D -m 0644 doc/results.schema.json $(DESTDIR)$(PREFIX)/share/thpeval/results.schema.json

# dpkg-buildpackage writes its results to the parent of the tree it builds: it
# builds a copy (the working tree's tracked and unignored files) in $(DEB_DIR)/,
# with a make of its own (the variables of this one not inherited; WERROR passed on)
DEB_DIR := $(O)/deb
DEB_SRC := $(DEB_DIR)/thpeval-$(VERSION)
deb:
	@command -v dpkg-buildpackage >/dev/null 2>&1 && command -v dh >/dev/null 2>&1 || \
		{ echo "make deb: needs dpkg-buildpackage and debhelper:" \
			"apt-get install --no-install-recommends dpkg-dev debhelper" >&2; exit 1; }
	$(call msg,DEB,$(DEB_DIR)/)
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			xargs -0 -r sh -c 'for f; do [ -e "$$f" ] || [ -L "$$f" ] && printf "%s\0" "$$f"; done' sh | \
			tar --null -T - -cf - | tar -xf - -C $(DEB_SRC); \
	else \
		tar --exclude=./$(O) --exclude=./bin --exclude=./$(SAN_DIR) -cf - . | tar -xf - -C $(DEB_SRC); \
	fi
	$(Q)cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL WERROR=$(WERROR) \
		dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "make deb: dpkg-buildpackage failed; log: $(DEB_DIR)/build.log" >&2; exit 1; }
	@ls $(DEB_DIR)/*.deb

# the package built and checked (contents, control fields, lintian, the extracted
# thpeval finding its guest program and, as root, running the 2x2; apt --simulate);
# part of `make check` (bench/README.md has the stages' times)
deb-check:
	@tests/run-stage.sh deb tests/integration/deb.sh

# the package installed by apt-get into a fresh debootstrap'd Debian 12 root (every
# dependency from the archive, Recommends too), then its thpeval run --host-thp=always
# there with the root's own libvirtd; downloads a few hundred MB and takes many minutes,
# so not part of `make check`. DEB=path takes a built package, FRESH=1 bootstraps anew,
# RUN=0 stops before booting guests, KEEP=1 keeps the root (the script's header says more)
deb-fresh:
	@tests/run-stage.sh deb-fresh tests/acceptance/deb_fresh.sh

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

clean:
	rm -rf $(O) bin $(SAN_DIR)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
