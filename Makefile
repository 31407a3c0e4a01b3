# SPDX-License-Identifier: MIT
#
# actrack: userspace library, CLI, tests, benchmarks (this Makefile) and the
# kernel module (Kbuild, through `make module`).
#
#   make                 library, CLI, examples, tests, benchmarks
#   make check           every test: host tests (gcc, then clang ASan+UBSan),
#                        then the module in a VM on Debian's 6.1 and 6.12
#                        kernels; ends "N passed, N failed, N skipped"
#   make check-host      host tests only (file-backed arenas)
#   make check-debug     the module in a VM on the debug kernel (KASAN,
#                        lockdep, kmemleak, UBSAN...: scripts/debug-kernel)
#   make module          actrack.ko against KERNELDIR (default: running kernel)
#   make demo            the main job (see README.md)
#   make bench           benchmarks with their in-run baselines
#   make fuzz            libFuzzer on the arena core (clang), FUZZ_SECONDS
#   make install         PREFIX=/usr/local: library, headers, .pc, CLI, man
#   CC=clang, SANITIZE=1 (ASan+UBSan) select the build.

CC       ?= gcc
O        ?= build
KSELFTEST ?= .cache/kselftest
KERNELDIR ?= /lib/modules/$(shell uname -r)/build

WARN     := -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow -Wundef \
	    -Wformat=2 -Wno-unused-parameter
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -fPIC -D_GNU_SOURCE \
	    -Iinclude -Iinclude/uapi -Iarena -Ilib
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=address,undefined
endif
LIBS     := $(shell pkg-config --libs liburcu-bp liburcu-cds 2>/dev/null || echo -lurcu-bp -lurcu-cds -lurcu-common) \
	    $(shell pkg-config --libs libmnl 2>/dev/null || echo -lmnl) -lpthread
CLI_LIBS := $(shell pkg-config --libs libdw 2>/dev/null || echo -ldw -lelf)

LIB_SRCS := $(sort $(wildcard lib/*.c)) arena/arena.c
LIB_OBJS := $(patsubst %.c,$(O)/%.o,$(LIB_SRCS))
CLI_SRCS := $(sort $(wildcard cli/*.c))
CLI_OBJS := $(patsubst %.c,$(O)/%.o,$(CLI_SRCS))
TEST_SRCS := $(sort $(wildcard selftests/actrack/*.c))
TESTS    := $(patsubst selftests/actrack/%.c,$(O)/selftests/%,$(TEST_SRCS))
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCHES  := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRCS))
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLES := $(patsubst examples/%.c,$(O)/examples/%,$(EXAMPLE_SRCS))

LIBA     := $(O)/libactrack.a
LIBSO    := $(O)/libactrack.so.1

.PHONY: all lib cli tests benches examples check check-host check-vm check-debug \
	module demo bench fuzz install clean setup

all: lib cli examples tests benches

lib: $(LIBA) $(LIBSO)
cli: $(O)/actrack
tests: $(TESTS)
benches: $(BENCHES)
examples: $(EXAMPLES)

$(O)/%.o: %.c $(wildcard include/*.h include/uapi/linux/*.h arena/*.h lib/*.h cli/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -c -o $@ $<

$(LIBA): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LIBSO): $(LIB_OBJS) lib/libactrack.map
	$(CC) -shared -Wl,-soname,libactrack.so.1 \
		-Wl,--version-script=lib/libactrack.map $(LDFLAGS) \
		-o $@ $(LIB_OBJS) $(LIBS)
	ln -sf libactrack.so.1 $(O)/libactrack.so

$(O)/actrack: $(CLI_OBJS) $(LIBA)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBA) $(LIBS) $(CLI_LIBS)

# The kselftest harness trips -Wsign-compare, -Wformat-nonliteral, -Wempty-body
# and -Wmisleading-indentation in its own macros: relaxed for tests only.
$(O)/selftests/%: selftests/actrack/%.c $(wildcard selftests/actrack/*.h) \
		$(LIBA) $(KSELFTEST)/kselftest_harness.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -isystem $(KSELFTEST) -Wno-missing-prototypes -Wno-shadow \
		-Wno-misleading-indentation -Wno-sign-compare \
		-Wno-format-nonliteral -Wno-empty-body \
		$(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# cli_json embeds the schema (.incbin).
$(O)/selftests/cli_json: docs/json-schema.json

$(O)/bench/%: bench/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

$(O)/examples/%: examples/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

$(KSELFTEST)/kselftest_harness.h:
	@echo "missing $@: run scripts/setup first" >&2; exit 1

setup:
	scripts/setup

module:
	$(MAKE) -C $(KERNELDIR) M=$(CURDIR) modules

check-host: all
	scripts/run-tests --host $(O)

check-vm: all
	scripts/vmtest --kernel all

# The whole VM suite on the debug kernel; its first run builds the kernel
# (cached in ~/.cache/actrack, see scripts/debug-kernel).
check-debug: all
	ACTRACK_VMTEST_ARGS="--kernel debug $(ACTRACK_VMTEST_ARGS)" scripts/run-tests --vm $(O)

# Host tests twice (the build, then clang with ASan+UBSan), then the VMs.
check: all
	$(MAKE) O=$(O)/sanitize CC=clang SANITIZE=1 lib cli tests examples
	scripts/run-tests --all $(O) $(O)/sanitize

demo: all
	scripts/demo

# libFuzzer over the arena core's readers (clang): FUZZ_SECONDS per run.
FUZZ_SECONDS ?= 60
fuzz:
	@mkdir -p $(O)/fuzz/corpus
	clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude/uapi -Iarena \
		-o $(O)/fuzz/arena_fuzz fuzz/arena_fuzz.c arena/arena.c
	$(O)/fuzz/arena_fuzz -max_total_time=$(FUZZ_SECONDS) $(O)/fuzz/corpus 2>&1 | tail -5

bench: benches
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

# make install [PREFIX=/usr/local] [DESTDIR=...]: library, headers, pkg-config
# file, CLI and man pages (the module: `make module` and insmod actrack.ko).
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^\#define ACTRACK_ABI_MAJOR\t*//p' include/uapi/linux/actrack.h).$(shell sed -n 's/^\#define ACTRACK_ABI_MINOR\t*//p' include/uapi/linux/actrack.h)
install: lib cli
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/include/linux \
		$(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libactrack.so.1 $(DESTDIR)$(PREFIX)/lib/libactrack.so
	install -m 644 include/actrack.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 include/uapi/linux/actrack.h \
		$(DESTDIR)$(PREFIX)/include/linux/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
		lib/libactrack.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/libactrack.pc
	install -m 755 $(O)/actrack $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf $(O)
	-$(MAKE) -C $(KERNELDIR) M=$(CURDIR) clean >/dev/null 2>&1
