# rewind: one hand-written Makefile. `make` builds everything into build/;
# `make check` runs every test and ends with "N passed, N failed, N skipped".
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
# The engine includes from src/ and the public include/; its front ends
# (src/cli, src/serve, src/gdbstub) from include/ alone (FE_INC, below).
# Guest programs do not: their rewind.h is the guest SDK (guest/sdk).
INC     := -Isrc -Iinclude
FE_INC  := -Iinclude
LIBS    := -lcrypto -ljansson -lzstd -ldw -lelf -pthread -lm
# libmicrohttpd is loaded by serve when it starts (src/serve/mhd.c), not linked
LIBS    += -ldw
B       := build

# The engine, one folder per stage (docs/architecture.md); the CLI on top.
ENGINE_DIRS := util input vmm image home trace store archive explore run nix guestos
LIB_SRC := $(foreach d,$(ENGINE_DIRS),$(sort $(wildcard src/$(d)/*.c)))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/obj/%.o)
SERVE_SRC := $(sort $(wildcard src/serve/*.c))
SERVE_OBJ := $(SERVE_SRC:%.c=$(B)/obj/%.o) $(B)/obj/$(B)/gen/serve_assets.o
# rewind gdb's remote-protocol stub (src/gdbstub): a front end like cli/.
GDBS_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(sort $(wildcard src/gdbstub/*.c)))

.PHONY: all deps kernel check check-long unit system demo clean format man install uninstall deb
all: deps $(B)/rewind $(B)/rewind-init kernel $(B)/tools/kvm-probe $(B)/roots/test.stamp $(B)/roots/test.erofs $(B)/examples/director
all: man $(B)/examples/pool.erofs

# The version rewind --version prints and the package carries (VERSION).
VERSION := $(shell cat VERSION)
$(B)/obj/src/cli/main.o $(B)/fp/src/cli/main.o: FE_INC += -DREWIND_VERSION='"$(VERSION)"'
$(B)/obj/src/cli/main.o $(B)/fp/src/cli/main.o: VERSION

deps:
	@tools/deps.sh

$(B)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(INC) $(CFLAGS) -MMD -MP -c $< -o $@

# The front ends see include/ and their own folder only (docs/architecture.md,
# the layering rule): compiled with -Iinclude alone, and every header the
# compiler read (the .d file) checked, so a relative include of an engine
# header fails the build too. The CLI, the program, may include the entry
# headers of the front ends it starts (src/serve/serve.h, src/gdbstub/stub.h).
define FE_CHECK
	@for f in $$(sed -e 's/\\$$//' -e 's/^[^:]*://' $(basename $@).d | tr ' ' '\n' | grep '\.h$$'); do \
	    r=$$(realpath -m --relative-to=. "$$f"); \
	    case "$$r" in include/* | ../* | $(dir $<)*) continue ;; esac; \
	    case "$(dir $<):$$r" in src/cli/:src/serve/serve.h | src/cli/:src/gdbstub/stub.h) continue ;; esac; \
	    echo "$<: includes $$r: a front end includes only include/ and its own folder" >&2; \
	    rm -f $@; exit 1; \
	done
endef
$(B)/obj/src/cli/%.o: src/cli/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(FE_INC) $(CFLAGS) -MMD -MP -c $< -o $@
	$(FE_CHECK)
$(B)/obj/src/serve/%.o: src/serve/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(FE_INC) $(CFLAGS) -MMD -MP -c $< -o $@
	$(FE_CHECK)
$(B)/obj/src/gdbstub/%.o: src/gdbstub/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(FE_INC) $(CFLAGS) -MMD -MP -c $< -o $@
	$(FE_CHECK)

$(B)/librewind.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(B)/rewind: $(CLI_OBJ) $(SERVE_OBJ) $(GDBS_OBJ) $(B)/librewind.a
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

# rewind serve (src/serve, docs/serve.md): a front end linked into build/rewind,
# with the page (web/) embedded as C generated at build time. web/'s npm
# packages (xterm, playwright-core for tests/browser) come from its lockfile.
web/node_modules/.package-lock.json: web/package-lock.json web/package.json
	cd web && npm ci --no-audit --no-fund
	@touch $@
WEB_FILES := $(sort $(wildcard web/*.html web/*.css web/*.js))
WEB_VENDOR := vendor/xterm.js=web/node_modules/@xterm/xterm/lib/xterm.js \
              vendor/xterm.css=web/node_modules/@xterm/xterm/css/xterm.css
$(B)/gen/serve_assets.c: src/serve/embed.py $(WEB_FILES) web/node_modules/.package-lock.json
	@mkdir -p $(dir $@)
	python3 src/serve/embed.py $@ $(WEB_FILES) $(WEB_VENDOR)

# examples/director: a program that sees only include/rewind.h and librewind.
$(B)/examples/director: examples/director/director.c include/rewind.h $(B)/librewind.a
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -Iinclude $(CFLAGS) -o $@ $< $(B)/librewind.a $(LIBS)

# Every build rule waits for deps (order-only), so `make -j` on a fresh machine
# compiles nothing before tools/deps.sh has installed the headers.
$(B)/rewind-init: guest/init/init.c guest/init/nodes.c guest/init/nodes.h guest/include/rewind_abi.h | deps
	@mkdir -p $(B)
	$(CC) $(WARN) $(GUEST_MAP) -O2 -static -o $@ guest/init/init.c guest/init/nodes.c

# The probe alone, with the few engine files it uses (no libraries).
PROBE_SRC := src/vmm/probe.c src/vmm/kvmdev.c src/util/fail.c src/util/check.c
$(B)/tools/kvm-probe: tools/kvm-probe.c $(PROBE_SRC) src/vmm/probe.h src/vmm/kvm.h | deps
	@mkdir -p $(B)/tools
	$(CC) $(WARN) $(INC) -O2 -o $@.tmp tools/kvm-probe.c $(PROBE_SRC)
	mv -f $@.tmp $@

# Test programs run inside the VM: static C, built into the test root.
# GUEST_MAP keeps the clone's directory out of them (the debug information's
# compilation directory): the test root, so every run's id and the addresses
# a run shows, are the same in every clone (bench/RESULTS.md, "make
# check-long, session 23"); gdb then finds the sources from the repository's
# top (docs/debugging.md).
GUEST_MAP := -ffile-prefix-map=$(CURDIR)=.
GUEST_PROGS := $(patsubst tests/guest/%.c,$(B)/guest/%,$(wildcard tests/guest/*.c))
$(B)/guest/%: tests/guest/%.c guest/sdk/rewind.h | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O2 -static -pthread -Iguest/sdk -o $@ $<

# Programs for the debugger (rewind where, rewind gdb: docs/debugging.md):
# with debug information, not optimized, so every function has its frame.
$(B)/guest/dbg_%: tests/guest/dbg_%.c | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O0 -g -static -pthread -o $@ $<
# dbg_threads as a position-independent program (static-pie), for gdb's
# qXfer:auxv:read (docs/debugging.md).
GUEST_PROGS += $(B)/guest/dbg_threads_pie
$(B)/guest/dbg_threads_pie: tests/guest/dbg_threads.c | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O0 -g -static-pie -pthread -o $@ $<
# pool with debug information (the buggy one), for gdb at its SIGSEGV.
GUEST_PROGS += $(B)/guest/pool-g
$(B)/guest/pool-g: examples/pool/pool.c | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O1 -g -static -pthread -o $@ $<
# The race programs (issue 31, docs/tutorials/races.md): with debug
# information, so check's report and rewind where name their lines.
$(B)/guest/race_%: tests/guest/race_%.c tests/guest/race.h | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O1 -g -static -pthread -o $@ $<
# rewind watch's test program, with debug info for its source lines.
$(B)/guest/watchctr: tests/guest/watchctr.c | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O2 -g -static -pthread -o $@ $<

# The example of examples/pool, buggy and fixed, goes into the test root too.
GUEST_PROGS += $(B)/guest/pool $(B)/guest/pool-fixed
$(B)/guest/pool: examples/pool/pool.c | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O2 -static -pthread -o $@ $<
$(B)/guest/pool-fixed: examples/pool/pool.c | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O2 -static -pthread -DFIXED -o $@ $<

# The replicated key-value store of examples/kv (docs/faults.md): kv with
# its bug (a write acknowledged before the backups have it), kv-fixed without.
GUEST_PROGS += $(B)/guest/kv $(B)/guest/kv-fixed
$(B)/guest/kv: examples/kv/kv.c guest/sdk/rewind.h | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O2 -g -static -Iguest/sdk -DKV_ACK_EARLY -o $@ $<
$(B)/guest/kv-fixed: examples/kv/kv.c guest/sdk/rewind.h | deps
	@mkdir -p $(B)/guest
	$(CC) $(WARN) $(GUEST_MAP) -O2 -g -static -Iguest/sdk -o $@ $<

# The Go SDK's test program (Debian's golang-go), static, into the test root
# too; -trimpath keeps the build machine's paths out of its source locations,
# -buildvcs=false the checkout's commit and state out of the binary (so the
# test root is the same at every commit and in every clone).
GUEST_PROGS += $(B)/guest/sdk_go
$(B)/guest/sdk_go: tests/guest/sdk_go/main.go tests/guest/sdk_go/go.mod guest/sdk/go/go.mod guest/sdk/go/rewind/rewind.go | deps
	@mkdir -p $(B)/guest
	cd tests/guest/sdk_go && CGO_ENABLED=0 GOFLAGS=-mod=mod GOPROXY=off go build -trimpath -buildvcs=false -o $(abspath $@) .

# A CPU-bound goroutine per CPU the job sees (--cpus, docs/determinism.md).
GUEST_PROGS += $(B)/guest/gocpus
$(B)/guest/gocpus: tests/guest/gocpus/main.go tests/guest/gocpus/go.mod | deps
	@mkdir -p $(B)/guest
	cd tests/guest/gocpus && CGO_ENABLED=0 GOFLAGS=-mod=mod GOPROXY=off go build -trimpath -buildvcs=false -o $(abspath $@) .

$(B)/roots/test.stamp: tools/mkroot.sh $(GUEST_PROGS) | deps
	@mkdir -p $(B)/roots
	tools/mkroot.sh $(B)/roots/test $(GUEST_PROGS)
	@touch $@

# The same root as an erofs image: tests that do not test root handling use
# it, so a run does not walk the tree.
EROFS_FLAGS := --quiet -T0 --all-root -U 72657769-6e64-4572-6f66-730000000001
$(B)/roots/test.erofs: $(B)/roots/test.stamp
	mkfs.erofs $(EROFS_FLAGS) $@.tmp $(B)/roots/test
	mv $@.tmp $@

# The bundled example an installed rewind ships (docs/install.md): a
# busybox root with examples/pool's pool and pool-fixed, as an erofs image.
$(B)/examples/pool.erofs: tools/mkroot.sh $(B)/guest/pool $(B)/guest/pool-fixed | deps
	@mkdir -p $(B)/examples
	tools/mkroot.sh $(B)/examples/pool-root $(B)/guest/pool $(B)/guest/pool-fixed
	mkfs.erofs $(EROFS_FLAGS) $@.tmp $(B)/examples/pool-root
	mv $@.tmp $@

# Man pages and bash/zsh completions, generated from every command's --help
# (tools/mkman.py: one text per command, in its cmd_<name>.c).
man: $(B)/man/man1/rewind.1
$(B)/man/man1/rewind.1: $(B)/rewind tools/mkman.py VERSION
	rm -rf $(B)/man.tmp
	python3 tools/mkman.py $(B)/rewind $(B)/man.tmp $(VERSION)
	rm -rf $(B)/man
	mv $(B)/man.tmp $(B)/man

# make install [PREFIX=/usr/local] [DESTDIR=]: the layout of docs/install.md,
# from one list in tools/install.sh (which make uninstall removes).
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_FROM := $(B)/rewind $(B)/rewind-init kernel $(B)/librewind.a $(B)/man/man1/rewind.1 \
                $(B)/examples/pool.erofs
install: $(INSTALL_FROM)
	tools/install.sh "$(DESTDIR)" "$(PREFIX)" "$(VERSION)"
uninstall:
	tools/install.sh --uninstall "$(DESTDIR)" "$(PREFIX)" "$(VERSION)"

# make deb: build/rewind_VERSION_amd64.deb with dpkg-deb (tools/mkdeb.sh,
# which builds it again only when what it installs changed).
deb: $(INSTALL_FROM) | deps
	tools/mkdeb.sh "$(VERSION)" $(B)/rewind_$(VERSION)_amd64.deb

# The compatibility suite's Debian root (tests/compat/README.md): a Debian
# base cached in ~/.cache/rewind/roots by its recipe's hash, plus the
# workloads of tests/compat, as an erofs image (itself cached there by the
# hash of the recipe, the script and the suite's files: an unchanged suite
# is copied, not built). `make check-long` builds it (make check runs no
# test on it): from scratch it needs the Debian mirror and takes 2-7 min
# (bench/RESULTS.md).
COMPAT_SRC := $(shell find tests/compat -type f)
$(B)/roots/compat.erofs: tools/mkroot-debian.sh $(COMPAT_SRC) | deps
	@mkdir -p $(B)/roots
	tools/mkroot-debian.sh $@
LONG_BUILD := $(B)/roots/compat.erofs

# The etcd example's root (docs/faults.md, "etcd"): Debian's etcd-server and
# etcd-client with tests/etcd at /compat, by the same script with a cache
# directory of its own (the script keeps one image per cache directory).
ETCD_SRC := $(shell find tests/etcd -type f)
$(B)/roots/etcd.erofs: tools/mkroot-debian.sh $(ETCD_SRC) | deps
	@mkdir -p $(B)/roots
	XDG_CACHE_HOME=$${XDG_CACHE_HOME:-$$HOME/.cache}/rewind/etcd tools/mkroot-debian.sh $@ tests/etcd/packages.txt tests/etcd
# Only tier long runs it (t_faults.sh's etcd tests), so only make check-long
# builds it.
LONG_BUILD += $(B)/roots/etcd.erofs

# A root with Debian's python3 for t_sdk's Python test (tools/mkroot-python.sh).
$(B)/roots/python.erofs: tools/mkroot-python.sh $(B)/roots/test.stamp
	tools/mkroot-python.sh $@ $(B)/roots/test
all: $(B)/roots/python.erofs

kernel: | deps
	@guest/linux/build.sh $(B)/kernel

# Unit tests: pure modules, run directly, with sanitizers.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(wildcard tests/unit/*_test.c))
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer
# The engine is compiled once with sanitizers into librewind-san.a.
SAN_OBJ := $(LIB_SRC:%.c=$(B)/san/%.o)
$(B)/san/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(INC) -O1 -g $(SAN) -MMD -MP -c $< -o $@
$(B)/librewind-san.a: $(SAN_OBJ)
	rm -f $@
	ar rcs $@ $^
$(B)/unit/%: tests/unit/%.c $(B)/librewind-san.a $(wildcard tests/unit/*.h)
	@mkdir -p $(B)/unit
	$(CC) $(WARN) $(INC) -O1 -g $(SAN) -MMD -MP -o $@ $< $(B)/librewind-san.a $(LIBS)
# A unit test that includes a front end's .c (serve, gdbstub) is rebuilt when it changes.
-include $(UNIT_TESTS:=.d)

# Engine tests: the engine's paths in-process over fakes (a fixture home, a
# fake VM, made-up guest memory, a fake engine), with sanitizers; they share
# tests/unit's harness (unit.h, runfix.h). docs/testing.md, "Tiers".
ENGINE_TESTS := $(patsubst tests/engine/%.c,$(B)/engine/%,$(wildcard tests/engine/*_test.c))
$(B)/engine/%: tests/engine/%.c $(B)/librewind-san.a $(wildcard tests/unit/*.h)
	@mkdir -p $(B)/engine
	$(CC) $(WARN) $(INC) -Itests/unit -O1 -g $(SAN) -MMD -MP -o $@ $< $(B)/librewind-san.a $(LIBS) $(TEST_LD)
-include $(ENGINE_TESTS:=.d)
# kfalloc_test fails the engine's allocations one at a time: the linker
# sends its malloc and realloc calls to the test's wrappers.
$(B)/engine/kfalloc_test: TEST_LD := -Wl,--wrap=malloc,--wrap=realloc

unit: $(UNIT_TESTS) $(ENGINE_TESTS)

# What the tests need, built by one recursive make with a job per core
# (`make check` is typed without -j, and CI runs it so).
TEST_BUILD += all unit
JOBS ?= $(shell nproc)
check:
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BUILD)
	@tests/run-all.sh

# The long tier (docs/testing.md, "Tiers"): the system tests tagged
# `# tier: long` (soaks, checks over many schedules, the failpoint walk, the
# whole compatibility suite, the long browser test), with the unit and engine
# tests and the short fuzz stage: over an hour in the test host.
check-long:
	@$(MAKE) --no-print-directory -j$(JOBS) $(TEST_BUILD) $(LONG_BUILD)
	@REWIND_LONG=1 tests/run-all.sh

demo: all
	@tools/demo.sh

# Fuzzing (tests/fuzz/README.md): the engine compiled by clang with
# -fsanitize=fuzzer-no-link,address,undefined into its own objects, one
# libFuzzer binary per tests/fuzz/fuzz_<name>.c, seeds generated by
# build/fuzz/mkseeds from the unit tests' writers. `make fuzz FUZZ_S=N` runs
# each target N seconds and prints one table.
FUZZ_CC   ?= clang
FUZZ_S    ?= 60
FUZZ_SAN  := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# clang-only: the KVM structs with a flexible array inside another struct (vmm/snapshot.h).
FUZZ_WARN := $(WARN) -Wno-gnu-variable-sized-type-not-at-end
FUZZ_OBJ  := $(LIB_SRC:%.c=$(B)/fuzz/obj/%.o)
FUZZ_BINS := $(patsubst tests/fuzz/fuzz_%.c,$(B)/fuzz/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
$(B)/fuzz/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_WARN) $(INC) -O1 -g $(FUZZ_SAN) -MMD -MP -c $< -o $@
$(B)/librewind-fuzz.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $^
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(B)/librewind-fuzz.a
	$(FUZZ_CC) $(FUZZ_WARN) $(INC) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
		-o $@ $< $(B)/librewind-fuzz.a $(LIBS)
$(B)/fuzz/mkseeds: tests/fuzz/mkseeds.c tests/unit/runfix.h $(B)/librewind-san.a
	@mkdir -p $(B)/fuzz
	$(CC) $(WARN) $(INC) -Itests/unit -O1 -g $(SAN) -o $@ $< $(B)/librewind-san.a $(LIBS)
$(B)/fuzz/seeds.stamp: $(B)/fuzz/mkseeds
	rm -rf $(B)/fuzz/seeds
	$(B)/fuzz/mkseeds $(B)/fuzz/seeds
	@touch $@
.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS) $(B)/fuzz/seeds.stamp
fuzz: fuzz-build
	@tests/fuzz/run.sh $(FUZZ_S)
# `make check` runs a short fuzz stage (tests/run-all.sh).
TEST_BUILD += fuzz-build
-include $(FUZZ_OBJ:.o=.d)

# build/rewind-fp: the same sources with -DRW_FAILPOINTS (src/util/failpoint.h),
# for tests/system/t_crash.sh only; its own objects in build/fp/ (the web
# front end, which writes nothing, is linked as built for build/rewind).
FP_OBJ := $(LIB_SRC:%.c=$(B)/fp/%.o) $(CLI_SRC:%.c=$(B)/fp/%.o)
$(B)/fp/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(INC) $(CFLAGS) -DRW_FAILPOINTS -MMD -MP -c $< -o $@
$(B)/fp/src/cli/%.o: src/cli/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(FE_INC) $(CFLAGS) -DRW_FAILPOINTS -MMD -MP -c $< -o $@
$(B)/rewind-fp: $(FP_OBJ) $(SERVE_OBJ) $(GDBS_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)
# tests/system/t_crash.sh's failpoint walks need it; both are in tier long,
# so only make check-long builds it (a fourth compile of the engine that
# make check's tests never run).
LONG_BUILD += $(B)/rewind-fp
# tests/system/t_install.sh installs from build/ and reads the package,
# and installs it with apt into a fresh Debian 12 root (tools/mkroot-fresh.sh:
# built once per machine and Depends line, 1.5-4 min with the Debian mirror,
# cached in ~/.cache/rewind/roots; build/roots/fresh-debian links to it).
.PHONY: fresh-root
fresh-root: deb
	@tools/mkroot-fresh.sh $(B)/rewind_$(VERSION)_amd64.deb $(B)/roots/fresh-debian
TEST_BUILD += deb fresh-root
-include $(FP_OBJ:.o=.d)

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) guest/init/*.c tests/unit/*.c tests/engine/*.c

clean:
	rm -rf $(B)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SAN_OBJ:.o=.d)
-include $(SERVE_OBJ:.o=.d)
