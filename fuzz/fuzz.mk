# SPDX-License-Identifier: MIT
#
# libFuzzer targets (clang, ASan+UBSan), included by the Makefile.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="death writers"]
#       builds every target, makes the seed corpora, runs each target for
#       FUZZ_SECONDS and prints one line per target with its executions;
#       fails if any target found a crash, a leak or a hang (the input is
#       kept in $(O)/fuzz/artifacts/TARGET/).
#   make check-fuzz      the same, FUZZ_CHECK_SECONDS (15) per target: CI.
#   make fuzz-build      only build them.
#
#   arena     the arena core alone, built exactly as the kernel builds it
#   death     the exit monitor's netlink parsers (lib/monitor.c)
#   snapshot  an arbitrary file as --arena, through actrack_snapshot_take()
#   writers   dump --json and --trace (cli/json.c, cli/trace.c) on the
#             snapshots of arbitrary arenas; the CLI's objects without main
#   walk      the owner walk (arena/records.c) as the kernel builds it,
#             keyed and unkeyed, over hostile arenas (arena's seeds)
#
# The library and CLI objects are rebuilt here with coverage
# (-fsanitize=fuzzer-no-link) and the sanitizers, under $(O)/fuzz/obj.

FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 15
FUZZ_ALL     := arena death snapshot writers walk
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_O       := $(O)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -g -O1 $(WARN) -D_GNU_SOURCE -Iinclude \
		-Iinclude/uapi -Iarena -Ilib -Icli -Ifuzz $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_O)/obj/%.o,$(LIB_SRCS))
FUZZ_CLI_OBJS := $(patsubst %.c,$(FUZZ_O)/obj/%.o,$(filter-out cli/main.c,$(CLI_SRCS)))
FUZZ_BINS    := $(patsubst %,$(FUZZ_O)/%_fuzz,$(FUZZ_ALL))
FUZZ_HDRS    := $(wildcard include/*.h include/uapi/linux/*.h arena/*.h \
		  lib/*.h cli/*.h fuzz/*.h)

.PHONY: fuzz fuzz-build check-fuzz

$(FUZZ_O)/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# The arena core exactly as Kbuild compiles it: arena.c alone, its own
# headers and the uapi header, nothing from lib/.
$(FUZZ_O)/arena_fuzz: fuzz/arena_fuzz.c arena/arena.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	clang -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer -Iinclude/uapi -Iarena \
		-o $@ fuzz/arena_fuzz.c arena/arena.c

# The owner walk, also exactly as Kbuild compiles it: arena/ alone.
$(FUZZ_O)/walk_fuzz: fuzz/walk_fuzz.c arena/arena.c arena/records.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	clang -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer -Iinclude/uapi -Iarena \
		-o $@ fuzz/walk_fuzz.c arena/arena.c arena/records.c

$(FUZZ_O)/death_fuzz $(FUZZ_O)/snapshot_fuzz: $(FUZZ_O)/%: fuzz/%.c $(FUZZ_LIB_OBJS)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS) $(LIBS)

$(FUZZ_O)/writers_fuzz: fuzz/writers_fuzz.c $(FUZZ_LIB_OBJS) $(FUZZ_CLI_OBJS)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_CLI_OBJS) \
		$(FUZZ_LIB_OBJS) $(LIBS) $(CLI_LIBS)

# Seeds: real arenas and death reports made by the library (fuzz/gen_corpus.c).
$(FUZZ_O)/gen_corpus: CFLAGS += -Iarena -Ilib
$(FUZZ_O)/gen_corpus: fuzz/gen_corpus.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

$(FUZZ_O)/seeds/.done: $(FUZZ_O)/gen_corpus
	rm -rf $(FUZZ_O)/seeds
	$(FUZZ_O)/gen_corpus $(FUZZ_O)/seeds
	cp -r $(FUZZ_O)/seeds/arena $(FUZZ_O)/seeds/walk
	touch $@

fuzz-build: $(FUZZ_BINS) $(FUZZ_O)/seeds/.done

fuzz: fuzz-build
	fuzz/run $(FUZZ_O) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

check-fuzz: fuzz-build
	fuzz/run $(FUZZ_O) $(FUZZ_CHECK_SECONDS) $(FUZZ_ALL)
