# SPDX-License-Identifier: MIT
#
# actrack: userspace library, CLI, tests, benchmarks (this Makefile) and the
# kernel module (Kbuild, through `make module`).
#
#   make                 library, CLI, examples, tests, benchmarks
#   make check           every test: shellcheck and checkpatch, the
#                        fuzzers (15 s each), the kselftest layout in
#                        linux-source-6.1, the -m32 tests in the 6.12
#                        VM, host tests (gcc, clang ASan+UBSan, clang
#                        TSan, gcc -m32),
#                        then the module in a VM on Debian's 6.1 and 6.12
#                        kernels; ends "N passed, N failed, N skipped"
#   make check-host      host tests only (file-backed arenas)
#   make check-m32       the library, tests and examples built with -m32
#                        into build/m32, host tests from there
#   make check-m32-vm    those 32-bit tests against the module, 6.12 VM
#   make check-style     shellcheck on the shell scripts, checkpatch.pl on
#                        kmod/ and arena/ (both run first by make check)
#   make check-debug     the module in a VM on both debug kernels (KASAN,
#                        lockdep, kmemleak, UBSAN..., and the same with
#                        PREEMPT_RT: scripts/debug-kernel)
#   make module          actrack.ko against KERNELDIR (default: running kernel)
#   make demo            the main job (see README.md)
#   make bench           benchmarks with their in-run baselines (the
#                        host's, then the module's in a VM: bench-vm)
#   make fuzz            libFuzzer, every target (fuzz/fuzz.mk), FUZZ_SECONDS
#                        each; check-fuzz: 15 s each, for CI
#   make check-tsan      make check's TSan pass alone: host tests and
#                        stress tests built with clang -fsanitize=thread
#                        into build/tsan
#   make install         PREFIX=/usr/local: library, headers, .pc, CLI, man
#   make uninstall       the same files removed (same PREFIX, LIBDIR, DESTDIR)
#   make deb             Debian packages (debian/) into build/deb, lintian
#   make check-dkms      those packages' module source built by DKMS for
#                        5.10, 6.1, 6.12 and 7.2, older kernels refused:
#                        scripts/dkms-check
#   make check-system    those packages on a booted Debian 12 image (qemu,
#                        systemd): scripts/systemtest
#   CC=clang, SANITIZE=1 (ASan+UBSan), TSAN=1 (ThreadSanitizer) select
#   the build.

CC       ?= gcc
O        ?= build
KSELFTEST ?= .cache/kselftest
CHECKPATCH_DIR ?= .cache/checkpatch
KERNELDIR ?= /lib/modules/$(shell uname -r)/build

WARN     := -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow -Wundef \
	    -Wformat=2 -Wno-unused-parameter
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -fPIC -D_GNU_SOURCE \
	    -Iinclude -Iinclude/uapi
# 64-bit off_t on 32-bit builds too: arena files are mmap()ed whole and
# fstat() must not fail with EOVERFLOW on a large file it then refuses.
CFLAGS   += -D_FILE_OFFSET_BITS=64
# Each object and binary writes its header dependencies next to itself
# (foo.o: foo.d, a binary: name.d); they are included at the end.
CFLAGS   += -MMD -MP
# The sanitizers: for everything built here and for the tests (USERCFLAGS
# of selftests/actrack/Makefile).
ifeq ($(SANITIZE),1)
SAN_CFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all \
	       -fno-omit-frame-pointer
SAN_LDFLAGS := -fsanitize=address,undefined
endif
ifeq ($(TSAN),1)
SAN_CFLAGS  := -fsanitize=thread -fno-omit-frame-pointer
SAN_LDFLAGS := -fsanitize=thread
endif
CFLAGS   += $(SAN_CFLAGS)
LDFLAGS  += $(SAN_LDFLAGS)
LIBS     := $(shell pkg-config --libs libmnl 2>/dev/null || echo -lmnl) -lpthread
CLI_LIBS := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf)
# The journal (actrack monitor --journal, actrack deaths): libsystemd.
CLI_LIBS += $(shell pkg-config --libs libsystemd 2>/dev/null || echo -lsystemd)

LIB_SRCS := $(sort $(wildcard lib/*.c)) arena/arena.c arena/records.c
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS))
CLI_SRCS := $(sort $(wildcard cli/*.c))
# The --help pages are the man pages, made into C at build time
# (cli/man2help.awk): each page is written once.
MAN_PAGES := $(sort $(wildcard man/*.1))
CLI_OBJS := $(patsubst %.c,$(O)/%.o,$(CLI_SRCS)) $(O)/cli/help.o
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCHES  := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRCS))
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLES := $(patsubst examples/%.c,$(O)/examples/%,$(EXAMPLE_SRCS))

# Per-directory include paths, as liburing's: the private headers (arena/,
# lib/) are for the library and for the tests of its internals; the CLI,
# examples and benchmarks see only what `make install` installs.
$(LIB_OBJS): CFLAGS += -Iarena -Ilib

LIBA     := $(O)/libactrack.a
LIBSO    := $(O)/libactrack.so.2
# actrack run's LD_PRELOAD library (lib/preload/: not part of libactrack).
# Self-contained, so that an exec'd image loads one library, not three:
# the library's sources it needs are compiled a second time into
# $(O)/preload/ (initial-exec TLS, one section per function) and linked
# in statically; the monitor (netlink, libmnl) and the readers are not.
PRELOAD  := $(O)/libactrack-preload.so
PRELOAD_OBJ := $(O)/lib/preload/preload.o
PRELOAD_LIB_SRCS := $(filter-out lib/monitor.c lib/monitor_replay.c \
		    lib/monitor_socket.c \
		    lib/report_parse.c lib/save.c lib/snapshot.c lib/death.c \
		    lib/proc_copy.c,$(LIB_SRCS))
PRELOAD_LIB_OBJS := $(patsubst %.c,$(O)/preload/%.o,$(PRELOAD_LIB_SRCS))

.PHONY: all lib cli tests benches examples check check-host check-vm \
	check-debug check-tsan module demo bench fuzz install uninstall clean \
	setup m32 check-m32 check-m32-vm check-style check-kselftest \
	module-all check-kernels

all: lib cli examples tests benches

lib: $(LIBA) $(LIBSO) $(PRELOAD)
cli: $(O)/actrack
# The tests are selftests/actrack/Makefile's (the one place that knows
# how to build one), against this build's library and CLI objects, into
# $(O)/selftests.
tests: $(LIBA) $(LIBSO) $(CLI_OBJS) $(O)/header-std.stamp
	$(MAKE) -C selftests/actrack ACTRACK_O=$(abspath $(O)) \
		ACTRACK_SRC=$(CURDIR) KSELFTEST=$(abspath $(KSELFTEST)) \
		CC='$(CC)' USERCFLAGS='-Werror $(SAN_CFLAGS)' \
		USERLDFLAGS='$(SAN_LDFLAGS)'
benches: $(BENCHES)
examples: $(EXAMPLES)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -c -o $@ $<

$(LIBA): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIBSO): $(LIB_OBJS) lib/libactrack.map
	$(CC) -shared -Wl,-soname,libactrack.so.2 \
		-Wl,--version-script=lib/libactrack.map $(LDFLAGS) \
		-o $@ $(LIB_OBJS) $(LIBS)
	ln -sf libactrack.so.2 $(O)/libactrack.so

$(O)/cli/help.c: cli/man2help.awk $(MAN_PAGES)
	@mkdir -p $(dir $@)
	awk -f cli/man2help.awk $(MAN_PAGES) >$@.tmp
	mv $@.tmp $@

$(O)/cli/help.o: $(O)/cli/help.c cli/cli.h
	$(CC) $(CFLAGS) -Icli -fvisibility=hidden -c -o $@ $<

# The preload defines pread/pwrite/fcntl and their *64 twins itself: it
# must see the C library's names as they are, not renamed by
# _FILE_OFFSET_BITS.
$(PRELOAD_OBJ): private CFLAGS := $(filter-out -D_FILE_OFFSET_BITS=64,$(CFLAGS))
$(PRELOAD_OBJ): CFLAGS += -ffunction-sections -fdata-sections -Iarena -Ilib
# A preload is loaded at start: its thread-locals are in the static TLS
# block, reached without __tls_get_addr (nor a dependency on ld.so).
$(O)/preload/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iarena -Ilib -fvisibility=hidden \
		-ftls-model=initial-exec -ffunction-sections -fdata-sections \
		-c -o $@ $<
# Only the interposed calls are exported (lib/preload/preload.map); the
# library's code that only they reach is kept (--gc-sections drops the
# rest), and nothing it needs is found outside the C library.
$(PRELOAD): $(PRELOAD_OBJ) $(PRELOAD_LIB_OBJS) lib/preload/preload.map
	$(CC) -shared -Wl,-soname,libactrack-preload.so $(LDFLAGS) \
		-Wl,--version-script=lib/preload/preload.map \
		-Wl,--gc-sections -Wl,--as-needed -o $@ $(PRELOAD_OBJ) \
		$(PRELOAD_LIB_OBJS) -lpthread

# Where `actrack run` looks for the preload when it is not beside the CLI
# or in ../lib from it.
$(O)/cli/cmd_run.o: CFLAGS += -DACTRACK_LIBDIR='"$(LIBDIR)"'

$(O)/actrack: $(CLI_OBJS) $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBA) $(LIBS) $(CLI_LIBS)

# actrack.h compiles for strict C99 and C11 includers (no _GNU_SOURCE).
HEADER_USE := '\#include <actrack.h>\nint main(void) { unsigned t = actrack_push_task(1); actrack_pop(t); return !actrack_version(); }\n'
$(O)/header-std.stamp: include/actrack.h include/uapi/linux/actrack.h
	@mkdir -p $(dir $@)
	for std in c99 c11; do printf $(HEADER_USE) | \
		$(CC) -std=$$std -Wall -Wextra -Werror -Iinclude -Iinclude/uapi \
		-fsyntax-only -x c - || exit 1; done
	@touch $@

$(O)/bench/%: bench/%.c bench/bench.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# Three benchmarks measure the arena core itself (filling a 64 MiB arena
# block by block, bytes per record, the module's thread-exit walk): they
# see its private headers, as the tests do; every other benchmark sees
# only the public ones.
$(O)/bench/analyzer $(O)/bench/memory $(O)/bench/thread_exit: \
	private CFLAGS += -Iarena -Ilib

# bench/alloc times the arena core's allocator against the one before the
# reclaim window: arena/arena.c built again with the window off
# (bench/fullwalk/), its globals made local but for the one table
# bench/alloc calls, so that it links next to the library's core (and,
# in -m32 PIC code, the compiler's pc thunks, which are COMDAT globals).
OBJCOPY  ?= objcopy
$(O)/bench/fullwalk.o: bench/fullwalk/arena_fullwalk.c bench/fullwalk/fullwalk.h \
		arena/arena.c arena/arena.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iarena -c -o $(O)/bench/fullwalk-all.o $<
	$(OBJCOPY) -w --keep-global-symbol=bench_fullwalk \
		--keep-global-symbol='__x86.get_pc_thunk.*' \
		$(O)/bench/fullwalk-all.o $@
$(O)/bench/alloc: bench/alloc.c bench/bench.h bench/fullwalk/fullwalk.h \
		$(O)/bench/fullwalk.o $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iarena -Ilib -Ibench/fullwalk $(LDFLAGS) -o $@ $< \
		$(O)/bench/fullwalk.o $(LIBA) $(LIBS)

# The LTTng-UST tracepoint provider (bench/lttng/) is built for make bench
# only, where pkg-config finds lttng-ust (scripts/setup installs it);
# without it bench/run prints "bench lttng_ust SKIP".
LTTNG_UST := $(shell pkg-config --exists lttng-ust 2>/dev/null && echo yes)
$(O)/bench/lttng_ust: bench/lttng/lttng_ust.c bench/lttng/tp.h bench/bench.h \
		$(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ibench -Ibench/lttng \
		$(shell pkg-config --cflags lttng-ust) $(LDFLAGS) -o $@ $< \
		$(LIBA) $(LIBS) $(shell pkg-config --libs lttng-ust)

$(O)/examples/%: examples/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

setup:
	scripts/setup

module:
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) modules

check-host: all
	scripts/run-tests --host $(O)

# The library, tests, examples and benchmarks again as 32-bit code (gcc
# -m32, the i386 liburcu and libmnl of scripts/setup) in $(O)/m32: the
# uapi promises 32- and 64-bit programs one layout.  The CLI stays 64-bit
# (libdw-dev:i386 installs only where each shared dependency has the same
# version for both architectures, not so on this machine): the 32-bit tests
# run a copy of $(O)/actrack on the arenas they write, which checks the two
# ABIs against each other.  The CLI's objects are built 32-bit all the same
# and the copy comes last, so that a later `make O=$(O)/m32 install` (the
# cli_install test) finds the CLI up to date instead of relinking it.
M32_O    := $(O)/m32
# Can this machine build and link a 32-bit client?  (scripts/setup installs
# the toolchain when the mirror lets it; without it make check skips.)
M32_PROBE := printf 'int main(void){return 0;}\n' | \
	$(CC) -m32 -x c - -o /dev/null -lmnl -lurcu-common 2>/dev/null
M32_MISSING := no 32-bit toolchain (gcc-multilib, liburcu-dev:i386, \
	libmnl-dev:i386: scripts/setup could not install them)
# Can this machine's kernel run a 32-bit program?  Not where it was built
# without IA32 emulation (or booted with ia32_emulation=0); the VM's
# Debian kernel still runs the 32-bit tests against the module.  Expanded
# only where used.
M32_RUNS = $(shell t=$$(mktemp) && printf 'int main(void){return 0;}\n' | \
	$(CC) -m32 -x c - -o $$t 2>/dev/null && $$t 2>/dev/null && echo yes; \
	rm -f $$t)
M32_NO_EXEC := this kernel cannot run 32-bit programs (no IA32 emulation); \
	the 32-bit tests ran against the module in the 6.12 VM only
m32: cli
	$(MAKE) O=$(M32_O) CC='$(CC) -m32' TESTS_EXCLUDE="cli_render cli_minidump" \
		lib tests examples benches \
		$(patsubst %.c,$(M32_O)/%.o,$(CLI_SRCS)) $(M32_O)/cli/help.o
	rm -f $(M32_O)/actrack
	cp $(O)/actrack $(M32_O)/actrack

check-m32: m32
	@[ "$(M32_RUNS)" = yes ] || { echo "check-m32: $(M32_NO_EXEC)" >&2; exit 1; }
	scripts/run-tests --host $(M32_O)

# The 32-bit tests against the 64-bit module (its compat ioctls, the
# mapped arena, the netlink reports) in the 6.12 VM: every test but the
# three stress ones (vm_churn, vm_reload, vm_storm: 3.5 of its 5.3
# minutes, and no path a 32-bit client reaches differently).
M32_VM_TESTS := lib_* monitor_* snapshot_kmod vm_corrupt vm_death vm_device \
		vm_lifecycle vm_thread_exit vm_trust vm_uid vm_stack_policy \
		vm_killer vm_cgroup
check-m32-vm: m32
	scripts/vmtest --kernel 6.12 --build-dir $(M32_O) --tests '$(M32_VM_TESTS)'

# shellcheck on every shell script, with no exclusions but the commented
# inline ones; checkpatch.pl (linux-source-6.1's, extracted by scripts/setup)
# on the module and the arena core, failing on any ERROR or WARNING.
# kmod/compat.h is the one place for kernel-version tests, which checkpatch
# flags as it would in-tree code: there only, LINUX_VERSION_CODE and the
# "constant on the left" it reads into LINUX_VERSION_CODE >= KERNEL_VERSION()
# are ignored.
SHELL_SCRIPTS := $(filter-out %.config,$(wildcard scripts/*)) .ci/run fuzz/run \
		 bench/run bench/nginx
CHECKPATCH := $(CHECKPATCH_DIR)/checkpatch.pl
CHECKPATCH_FLAGS := --no-tree --quiet --show-types
CHECKPATCH_SRCS := $(filter-out kmod/compat.h,$(sort $(wildcard \
		   kmod/*.c kmod/*.h arena/*.c arena/*.h)))
check-style: $(CHECKPATCH)
	shellcheck $(SHELL_SCRIPTS)
	$(CHECKPATCH) $(CHECKPATCH_FLAGS) -f $(CHECKPATCH_SRCS)
	$(CHECKPATCH) $(CHECKPATCH_FLAGS) \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f kmod/compat.h

$(CHECKPATCH):
	@echo "missing $@: run scripts/setup first" >&2; exit 1

# The tests as kernel CI runs kselftests: selftests/actrack (its kselftest
# Makefile) copied into linux-source-6.1's tools/testing/selftests, then
# run_tests, kselftest_install.sh and the installed run_kselftest.sh.
check-kselftest:
	scripts/kselftest-tree

check-vm: all
	scripts/vmtest --kernel all

# Every supported kernel line: 5.10 (bullseye) and 7.2 (sid) are built in
# chroots of their suites with their own compilers (scripts/kernel-root,
# cached in ~/.cache/actrack), 6.1 and 6.12 on the host.  module-all
# builds actrack.ko for each with W=1 and sparse, every finding fatal;
# check-kernels runs the whole VM suite on each.  make check runs the
# whole suite on 6.1 and 6.12 and the module's core tests on 5.10 and 7.2.
KERNEL_LINES := 5.10,6.1,6.12,7.2
CORE_KERNELS := 5.10,7.2
CORE_VM_TESTS := vm_death vm_lifecycle vm_device vm_trust vm_thread_exit \
		 vm_backtrace vm_killer vm_cgroup
# Crash the 6.12 VM and read the last boot's arenas back (vmtest --persist).
PERSIST_VM_TESTS := vm_persist
module-all:
	scripts/vmtest --kernel $(KERNEL_LINES) --build-only

check-kernels: all
	scripts/vmtest --kernel $(KERNEL_LINES)

# The whole VM suite on both debug kernels: "debug" (KASAN, lockdep,
# PROVE_RCU, atomic-sleep checks, kmemleak, debugobjects, UBSAN) and
# "debug-rt" (the same with PREEMPT_RT); any finding in the kernel log or
# kmemleak fails the run.  Their first run builds the kernels (cached in
# ~/.cache/actrack, see scripts/debug-kernel).  The stress tests run their
# counts / 10 there (ACTRACK_VMTEST_DEBUG_DIVISOR, see scripts/vmtest
# --help).  Not part of `make check`: the two kernels cost 23 and ~30
# CPU-minutes to build on a fresh machine, and the suite runs 10-35 times
# slower on them, so the whole run takes well over an hour per kernel on
# the shared 2-core machine (figures: docs/reliability.md), far beyond
# the 20 minutes `make check` may grow by.
check-debug: all
	ACTRACK_VMTEST_ARGS="--kernel debug,debug-rt $(ACTRACK_VMTEST_ARGS)" scripts/run-tests --vm $(O)

# Every test: the style gates first (before anything is built), the
# fuzzers briefly, the suite as kernel CI runs kselftests (inside
# linux-source-6.1's tools/testing/selftests), the 32-bit tests against the module (a few minutes,
# with their own summary), then the host tests (gcc, clang ASan+UBSan,
# clang TSan, gcc -m32) and both VMs; the last line is run-tests'.
check: check-style
	$(MAKE) O=$(O) all
	$(MAKE) O=$(O) check-fuzz
	$(MAKE) O=$(O) check-kselftest
	$(MAKE) O=$(O)/sanitize CC=clang SANITIZE=1 lib cli tests examples
	$(MAKE) O=$(O)/tsan CC=clang TSAN=1 lib cli tests examples
	export ACTRACK_VMTEST_CORE_KERNELS='$(CORE_KERNELS)' \
		ACTRACK_VMTEST_CORE_TESTS='$(CORE_VM_TESTS)' \
		ACTRACK_VMTEST_PERSIST_TESTS='$(PERSIST_VM_TESTS)'; \
	if $(M32_PROBE); then \
		$(MAKE) O=$(O) check-m32-vm && \
		if [ "$(M32_RUNS)" = yes ]; then \
			scripts/run-tests --all $(O) $(O)/sanitize $(O)/tsan $(M32_O); \
		else \
			ACTRACK_SKIPPED_PASS="m32: $(M32_NO_EXEC)" \
			scripts/run-tests --all $(O) $(O)/sanitize $(O)/tsan; \
		fi; \
	else \
		ACTRACK_SKIPPED_PASS="m32: $(M32_MISSING)" \
		scripts/run-tests --all $(O) $(O)/sanitize $(O)/tsan; \
	fi

# make check's ThreadSanitizer pass alone: the host tests built with clang
# -fsanitize=thread (the stress_* tests among them), run by run-tests with
# the suppressions of selftests/actrack/tsan.supp and halt_on_error.
check-tsan:
	$(MAKE) O=$(O)/tsan CC=clang TSAN=1 lib cli tests examples
	ACTRACK_TEST_TIMEOUT=$${ACTRACK_TEST_TIMEOUT:-1800} \
		scripts/run-tests --host $(O)/tsan

# The demo needs the library, the CLI and examples/demo (scripts/vmtest
# builds actrack.ko for the VM's kernel): not the tests or benchmarks.
demo: lib cli examples
	scripts/demo

include fuzz/fuzz.mk

# The kernel's cost, as ratios inside one boot of the 6.12 VM (slow: TCG,
# about 90 s): bench/vm/vmbench.c, packed as the only program of its own
# build directory.  make bench runs it last; bench-vm runs it alone.
# VMBENCH="monitor threadexit" runs only those sections (default: all of
# them: cost, latency, monitor, threadexit, stacks, idle, signals,
# persist; the VM boots with vmtest --persist for the last).
$(O)/bench-vm/examples/vmbench: bench/vm/vmbench.c bench/bench.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ibench $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# Every figure one line "bench NAME value= unit= baseline= ratio=" (see
# bench/run and docs/benchmarks.md); callgrind, LTTng-UST, nginx and the
# VM's figures included.
bench: benches cli $(PRELOAD) $(O)/bench-vm/examples/vmbench \
		$(if $(LTTNG_UST),$(O)/bench/lttng_ust)
	bench/run $(O)
.PHONY: bench-vm
bench-vm: $(O)/bench-vm/examples/vmbench
	BENCH_SECTIONS=vm bench/run $(O)

# make install [PREFIX=/usr/local] [LIBDIR=$(PREFIX)/lib] [DESTDIR=...]:
# library, headers, pkg-config file, CLI and man pages (the module: `make
# module` and insmod actrack.ko).  make uninstall, with the same variables,
# removes exactly those files.  LIBDIR is for multiarch or lib64 layouts,
# e.g. LIBDIR=/usr/lib/x86_64-linux-gnu; the .pc file points at it.
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
BINDIR  ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
VERSION := $(shell sed -n 's/^\#define ACTRACK_VERSION\t*"\(.*\)"/\1/p' include/actrack.h)
MAN1    := $(sort $(wildcard man/*.1))
MAN3    := $(sort $(wildcard man/*.3))
install: lib cli
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR)/linux \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIBSO) $(PRELOAD) $(DESTDIR)$(LIBDIR)/
	ln -sf libactrack.so.2 $(DESTDIR)$(LIBDIR)/libactrack.so
	install -m 644 include/actrack.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 include/uapi/linux/actrack.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		lib/libactrack.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libactrack.pc
	install -m 755 $(O)/actrack $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/

# make deb: the Debian packages of debian/ (actrack-dkms, libactrack2,
# libactrack-dev, actrack), built by dpkg-buildpackage -us -uc -b from a
# copy of the tree in $(O)/deb/actrack-VERSION, so that the .debs, .changes
# and .buildinfo land in $(O)/deb and nothing is written outside the
# build directory; then lintian on the result (errors and warnings fail
# the target; debian/actrack.lintian-overrides says why its one override).
DEB_DIR := $(O)/deb
DEB_SRC := $(DEB_DIR)/actrack-$(VERSION)
.PHONY: deb
deb:
	rm -rf $(DEB_SRC) $(DEB_DIR)/*.deb $(DEB_DIR)/*.changes \
		$(DEB_DIR)/*.buildinfo
	mkdir -p $(DEB_SRC)
	tar -c --exclude=./$(O) --exclude=./build --exclude=./.cache \
		--exclude=./.git . | tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning --info $(DEB_DIR)/actrack_$(VERSION)_*.changes

# make check-dkms: actrack-dkms's source, unpacked from the .deb, added and
# built by DKMS for 5.10 and 7.2 (in scripts/kernel-root's chroots, with
# their suites' own dkms and compiler) and for 6.1 and 6.12 (the host's
# dkms and headers), each checked for actrack.ko with its kernel's
# vermagic; and DKMS refusing kernels older than 5.10
# (BUILD_EXCLUSIVE_KERNEL).  Nothing is installed into a kernel or loaded
# (scripts/dkms-check).  Not part of make check: figures in docs/install.md.
.PHONY: check-dkms
check-dkms: deb
	scripts/dkms-check --debs $(DEB_DIR) --build-dir $(O)

# make check-system: the packages installed on a booted Debian 12 image
# (mmdebstrap, cached in ~/.cache/actrack; qemu TCG, systemd): see
# scripts/systemtest.  Not part of make check: the image's first build
# takes 10-20 minutes and a run about 10 under TCG.  Needs debhelper,
# dh-dkms, dkms, lintian and mmdebstrap (docs/install.md).
.PHONY: check-system
check-system: deb
	scripts/vmtest --system --debs $(DEB_DIR)

# Files only, never directories: /usr/local/lib is not ours to remove.
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libactrack.a \
		$(DESTDIR)$(LIBDIR)/libactrack.so.2 \
		$(DESTDIR)$(LIBDIR)/libactrack.so \
		$(DESTDIR)$(LIBDIR)/libactrack-preload.so \
		$(DESTDIR)$(PKGCONFIGDIR)/libactrack.pc \
		$(DESTDIR)$(INCLUDEDIR)/actrack.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/actrack.h \
		$(DESTDIR)$(BINDIR)/actrack \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3)))

clean:
	rm -rf $(O)
	-$(MAKE) -C $(KERNELDIR) M=$(CURDIR) clean >/dev/null 2>&1

# Header dependencies from -MMD (CFLAGS); none before the first build.
-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(PRELOAD_OBJ:.o=.d) \
	$(PRELOAD_LIB_OBJS:.o=.d) \
	$(addsuffix .d,$(BENCHES) $(EXAMPLES) $(FUZZ_O)/gen_corpus)
