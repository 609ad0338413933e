# mk/c.mk — the C ABI: librecuo (ffi/), include/recuo.h, the C tests (tests/c/), the C
# examples (examples/c/), the C guide's example (docs/c.md) and the pkg-config file. Included
# by the top-level Makefile, which defines ROOT and CARGO. Everything built here lands in
# target/c/, never in the source tree.

C_LIBDIR  := $(ROOT)/target/debug
C_OUT     := $(ROOT)/target/c
C_PCDIR   := $(C_OUT)/pkgconfig
C_VECTORS := $(ROOT)/tests/vectors
C_FLAGS   := -std=c11 -Wall -Wextra -Werror -pedantic -g -I$(ROOT)/include
C_SHARED  := -L$(C_LIBDIR) -Wl,-rpath,$(C_LIBDIR) -lrecuo
C_STATIC  := $(C_LIBDIR)/librecuo.a -lpthread -ldl -lm
C_VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=all
C_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# The workspace version (root Cargo.toml, [workspace.package]): the C tests _Static_assert the
# header's RECUO_VERSION_* macros against it, so a stale header cannot even compile.
C_VERSION := $(shell sed -n 's/^version *= *"\([^"]*\)".*/\1/p' $(ROOT)/Cargo.toml | head -n 1)
C_VERSION_NUMBERS := $(subst ., ,$(firstword $(subst -, ,$(subst +, ,$(C_VERSION)))))
C_EXPECT := -DRECUO_EXPECT_VERSION='"$(C_VERSION)"' \
	-DRECUO_EXPECT_MAJOR=$(word 1,$(C_VERSION_NUMBERS)) \
	-DRECUO_EXPECT_MINOR=$(word 2,$(C_VERSION_NUMBERS)) \
	-DRECUO_EXPECT_PATCH=$(word 3,$(C_VERSION_NUMBERS))

C_TEST_API     := $(ROOT)/tests/c/test_api.c
C_TEST_ENGINE  := $(ROOT)/tests/c/test_engine.c
C_TEST_VECTORS := $(ROOT)/tests/c/test_vectors.c
# Every loop scenario of tests/vectors/loops.json through the step API (recuo_attempts_*).
C_TEST_LOOPS   := $(ROOT)/tests/c/test_loops.c
C_TEST_LIMITS  := $(ROOT)/tests/c/test_limits.c
C_TEST_RECORDS := $(ROOT)/tests/c/test_records.c
# Starts a redis-server of its own on 127.0.0.1 (make deps installs it) and stops it.
C_TEST_REDIS   := $(ROOT)/tests/c/test_redis.c
# Fake Redis servers of its own (fork()ed children on 127.0.0.1), a forced panic, keys and fork.
C_TEST_HOSTILE := $(ROOT)/tests/c/test_hostile.c
C_EXAMPLE      := $(ROOT)/examples/c/attempts.c
C_EXAMPLE_LIMITS := $(ROOT)/examples/c/limits.c
C_EXAMPLE_RECORDS := $(ROOT)/examples/c/records.c
C_DOC          := $(ROOT)/docs/c.md
C_DOC_OUT      := $(C_OUT)/doc

.PHONY: build-c header header-check pkgconfig-c test-c demo-c example-c example-limits-c \
	example-records-c doc-c

build-c: ## build the C library: target/debug/librecuo.so and librecuo.a
	@$(CARGO) build -q -p recuo-ffi

header: ## regenerate include/recuo.h with the pinned cbindgen
	@RECUO_UPDATE_HEADER=1 $(CARGO) test -q -p recuo-ffi --test header -- --test-threads=1

header-check: ## fail when include/recuo.h differs from what cbindgen generates now
	@$(CARGO) test -q -p recuo-ffi --test header

pkgconfig-c: ## write target/c/pkgconfig/recuo.pc for the library in target/debug
	@mkdir -p $(C_PCDIR)
	@sed -e 's|@prefix@|$(ROOT)|' \
	     -e 's|@includedir@|$${prefix}/include|' \
	     -e 's|@libdir@|$${prefix}/target/debug|' \
	     -e 's|@version@|$(C_VERSION)|' \
	     $(ROOT)/ffi/recuo.pc.in > $(C_PCDIR)/recuo.pc.tmp
	@mv $(C_PCDIR)/recuo.pc.tmp $(C_PCDIR)/recuo.pc

test-c: build-c pkgconfig-c ## C tests against recuo.h: shared, static, pkg-config, valgrind, ASan
	@mkdir -p $(C_OUT)
	@$(CC) $(C_FLAGS) $(C_TEST_VECTORS) -o $(C_OUT)/test_vectors $(C_SHARED) -lcjson -lm
	@$(CC) $(C_FLAGS) $(C_TEST_LOOPS) -o $(C_OUT)/test_loops $(C_SHARED) -lcjson -lm
	@$(CC) $(C_FLAGS) $(C_TEST_LOOPS) -o $(C_OUT)/test_loops_static $(C_STATIC) -lcjson
	@$(CC) $(C_FLAGS) $(C_EXPECT) $(C_TEST_API) -o $(C_OUT)/test_api $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) $(C_EXPECT) $(C_TEST_API) -o $(C_OUT)/test_api_static $(C_STATIC)
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_ENGINE) -o $(C_OUT)/test_engine $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_ENGINE) -o $(C_OUT)/test_engine_static $(C_STATIC)
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_LIMITS) -o $(C_OUT)/test_limits $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_LIMITS) -o $(C_OUT)/test_limits_static $(C_STATIC)
	@$(CC) $(C_FLAGS) $(C_TEST_RECORDS) -o $(C_OUT)/test_records $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) $(C_TEST_RECORDS) -o $(C_OUT)/test_records_static $(C_STATIC)
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_REDIS) -o $(C_OUT)/test_redis $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_REDIS) -o $(C_OUT)/test_redis_static $(C_STATIC)
	@$(CC) $(C_FLAGS) $(C_TEST_HOSTILE) -o $(C_OUT)/test_hostile $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) $(C_TEST_HOSTILE) -o $(C_OUT)/test_hostile_static $(C_STATIC)
	@$(CC) $(C_FLAGS) $(C_EXAMPLE) -o $(C_OUT)/example_attempts $(C_SHARED)
	@$(CC) $(C_FLAGS) $(C_EXAMPLE_LIMITS) -o $(C_OUT)/example_limits $(C_SHARED)
	@$(CC) $(C_FLAGS) $(C_EXAMPLE_RECORDS) -o $(C_OUT)/example_records $(C_SHARED)
	@PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --exists --print-errors 'recuo = $(C_VERSION)'
	@$(CC) $(C_EXPECT) $(filter-out -I%,$(C_FLAGS)) \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --cflags recuo) \
	    $(C_TEST_API) -o $(C_OUT)/test_api_pkgconfig \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --libs recuo) -lm
	@$(CC) $(filter-out -I%,$(C_FLAGS)) -pthread \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --cflags recuo) \
	    $(C_TEST_ENGINE) -o $(C_OUT)/test_engine_pkgconfig \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --libs recuo) -lm
	@$(CC) $(filter-out -I%,$(C_FLAGS)) -pthread \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --cflags recuo) \
	    $(C_TEST_LIMITS) -o $(C_OUT)/test_limits_pkgconfig \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --libs recuo) -lm
	@$(CC) $(filter-out -I%,$(C_FLAGS)) \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --cflags recuo) \
	    $(C_TEST_RECORDS) -o $(C_OUT)/test_records_pkgconfig \
	    $$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --libs recuo) -lm
	@$(C_VALGRIND) $(C_OUT)/test_vectors $(C_VECTORS)
	@$(C_VALGRIND) $(C_OUT)/test_loops $(C_VECTORS)
	@$(C_VALGRIND) $(C_OUT)/test_loops_static $(C_VECTORS)
	@$(C_VALGRIND) $(C_OUT)/test_api
	@$(C_VALGRIND) $(C_OUT)/test_api_static
	@LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --variable=libdir recuo) \
	    $(C_VALGRIND) $(C_OUT)/test_api_pkgconfig
	@$(C_VALGRIND) $(C_OUT)/test_engine
	@$(C_VALGRIND) $(C_OUT)/test_engine_static
	@LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --variable=libdir recuo) \
	    $(C_VALGRIND) $(C_OUT)/test_engine_pkgconfig
	@$(C_VALGRIND) $(C_OUT)/test_limits
	@$(C_VALGRIND) $(C_OUT)/test_limits_static
	@LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --variable=libdir recuo) \
	    $(C_VALGRIND) $(C_OUT)/test_limits_pkgconfig
	@$(C_VALGRIND) $(C_OUT)/test_records
	@$(C_VALGRIND) $(C_OUT)/test_records_static
	@LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --variable=libdir recuo) \
	    $(C_VALGRIND) $(C_OUT)/test_records_pkgconfig
	@$(C_VALGRIND) $(C_OUT)/test_redis
	@$(C_VALGRIND) $(C_OUT)/test_redis_static
	@$(C_VALGRIND) $(C_OUT)/test_hostile 2>$(C_OUT)/test_hostile.err || { cat $(C_OUT)/test_hostile.err; exit 1; }
	@$(C_VALGRIND) $(C_OUT)/test_hostile_static 2>$(C_OUT)/test_hostile.err || { cat $(C_OUT)/test_hostile.err; exit 1; }
	@$(C_VALGRIND) $(C_OUT)/example_attempts > $(C_OUT)/example_attempts.out
	@echo "example_attempts: ran clean under valgrind ($$(wc -l < $(C_OUT)/example_attempts.out) lines)"
	@$(C_VALGRIND) $(C_OUT)/example_limits > $(C_OUT)/example_limits.out
	@echo "example_limits: ran clean under valgrind ($$(tail -n 1 $(C_OUT)/example_limits.out))"
	@$(C_VALGRIND) $(C_OUT)/example_records > $(C_OUT)/example_records.out
	@! grep -E 'pa55word|AKx9fj3kd|ana\.souza|SECRET|ECHOED' $(C_OUT)/example_records.out
	@echo "example_records: ran clean under valgrind ($$(grep -c '^{' $(C_OUT)/example_records.out) records, no secret)"
	@$(MAKE) --no-print-directory doc-c C_DOC_RUN='$(C_VALGRIND)'
	@if echo 'int main(void) { return 0; }' | \
	    $(CC) $(C_SANITIZE) -x c - -o $(C_OUT)/sanitize_probe 2>/dev/null; then \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_VECTORS) -o $(C_OUT)/test_vectors_asan \
	        $(C_SHARED) -lcjson -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_LOOPS) -o $(C_OUT)/test_loops_asan \
	        $(C_SHARED) -lcjson -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_EXPECT) $(C_TEST_API) -o $(C_OUT)/test_api_asan \
	        $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) -pthread $(C_TEST_ENGINE) \
	        -o $(C_OUT)/test_engine_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) -pthread $(C_TEST_LIMITS) \
	        -o $(C_OUT)/test_limits_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_RECORDS) \
	        -o $(C_OUT)/test_records_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) -pthread $(C_TEST_REDIS) \
	        -o $(C_OUT)/test_redis_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_HOSTILE) \
	        -o $(C_OUT)/test_hostile_asan $(C_SHARED) -lm && \
	    $(C_OUT)/test_vectors_asan $(C_VECTORS) && \
	    $(C_OUT)/test_loops_asan $(C_VECTORS) && \
	    $(C_OUT)/test_api_asan && \
	    $(C_OUT)/test_engine_asan && \
	    $(C_OUT)/test_limits_asan && \
	    $(C_OUT)/test_records_asan && \
	    $(C_OUT)/test_redis_asan && \
	    ( $(C_OUT)/test_hostile_asan 2>$(C_OUT)/test_hostile.err || \
	        { cat $(C_OUT)/test_hostile.err; false; } ); \
	else \
	    echo "test-c: $(CC) has no AddressSanitizer; the ASan runs were skipped"; \
	fi

demo-c: build-c ## build and run the C examples (examples/c/demo.c, attempts.c, limits.c, records.c)
	@mkdir -p $(C_OUT)
	@$(CC) $(C_FLAGS) $(ROOT)/examples/c/demo.c -o $(C_OUT)/demo $(C_SHARED)
	@$(C_OUT)/demo
	@echo
	@$(MAKE) --no-print-directory example-c
	@echo
	@$(MAKE) --no-print-directory example-limits-c
	@echo
	@$(MAKE) --no-print-directory example-records-c

example-c: build-c ## build and run the state-machine example (examples/c/attempts.c, no network)
	@mkdir -p $(C_OUT)
	@$(CC) $(C_FLAGS) $(C_EXAMPLE) -o $(C_OUT)/example_attempts $(C_SHARED)
	@$(C_OUT)/example_attempts

example-limits-c: build-c ## three processes sharing one regulator file (examples/c/limits.c)
	@mkdir -p $(C_OUT)
	@$(CC) $(C_FLAGS) $(C_EXAMPLE_LIMITS) -o $(C_OUT)/example_limits $(C_SHARED)
	@$(C_OUT)/example_limits

example-records-c: build-c ## records of a C program's own loop, redacted (examples/c/records.c)
	@mkdir -p $(C_OUT)
	@$(CC) $(C_FLAGS) $(C_EXAMPLE_RECORDS) -o $(C_OUT)/example_records $(C_SHARED)
	@$(C_OUT)/example_records

# The complete programs of docs/c.md (its ```c blocks that define main) are compiled and run,
# so the guide cannot rot; the other blocks are fragments of them. C_DOC_RUN may wrap the run
# (test-c passes valgrind). Each runs with REDIS_URL naming a redis-server of its own
# (tests/c/with_redis.sh), for the guide's Redis example.
doc-c: build-c ## compile and run the example programs of docs/c.md
	@rm -rf $(C_DOC_OUT) && mkdir -p $(C_DOC_OUT)
	@awk -v dir=$(C_DOC_OUT) '/^```c$$/ { n++; inside = 1; next } \
	    /^```$$/ { inside = 0; next } \
	    inside { print > sprintf("%s/block_%02d.c", dir, n) }' $(C_DOC)
	@programs=0; for src in $(C_DOC_OUT)/block_*.c; do \
	    grep -q '^int main' $$src || continue; \
	    $(CC) $(C_FLAGS) $$src -o $${src%.c} $(C_SHARED) || exit 1; \
	    $(ROOT)/tests/c/with_redis.sh $(C_DOC_RUN) $${src%.c} > $${src%.c}.out || \
	        { cat $${src%.c}.out; exit 1; }; \
	    programs=$$((programs + 1)); \
	done; \
	test $$programs -gt 0 || { echo "docs/c.md: no complete C program found"; exit 1; }; \
	echo "docs/c.md: $$programs example program(s) compiled and ran clean"

