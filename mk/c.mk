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
# The library's SONAME, as ffi/build.rs gives it: librecuo.so.0.MINOR while the major is 0
# (the ABI may change between 0.x minors), librecuo.so.MAJOR from 1.0 on. Programs record it,
# so build-c links target/debug/$(C_SONAME) to the library cargo built there.
C_SONAME := librecuo.so.$(word 1,$(C_VERSION_NUMBERS))$(if $(filter 0,$(word 1,$(C_VERSION_NUMBERS))),.$(word 2,$(C_VERSION_NUMBERS)))
c_space := $(eval) $(eval)
C_REALNAME := librecuo.so.$(subst $(c_space),.,$(wordlist 1,3,$(C_VERSION_NUMBERS)))
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
# The concurrency limit in a shared file: fork()ed holders killed with SIGKILL, refusals.
C_TEST_SHARED_LIMIT := $(ROOT)/tests/c/test_shared_limit.c
C_TEST_RECORDS := $(ROOT)/tests/c/test_records.c
# Starts a redis-server of its own on 127.0.0.1 (make deps installs it) and stops it.
C_TEST_REDIS   := $(ROOT)/tests/c/test_redis.c
# Real Redis Clusters of its own (scripts/redis-cluster, 3 masters + 3 replicas): the limits on
# a cluster, over TLS, and a fleet of fork()ed processes through a failover (`recuo serve`).
C_TEST_CLUSTER := $(ROOT)/tests/c/test_cluster.c
C_CLUSTER_SCRIPT := $(ROOT)/scripts/redis-cluster
# Fake Redis servers of its own (fork()ed children on 127.0.0.1), a forced panic, keys and fork.
C_TEST_HOSTILE := $(ROOT)/tests/c/test_hostile.c
# The libcurl glue (include/recuo_curl.h) against `recuo serve` and servers of its own.
C_TEST_CURL    := $(ROOT)/tests/c/test_curl.c
# tests/vectors/http.json: the exports, and recuo_curl_perform against `recuo serve --script`.
C_TEST_HTTP    := $(ROOT)/tests/c/test_http.c
C_EXAMPLE      := $(ROOT)/examples/c/attempts.c
C_EXAMPLE_CURL_MULTI := $(ROOT)/examples/c/curl_multi.c
# libcurl, for the glue's test and example only: librecuo itself never links it.
C_CURL         := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
C_RECUO_BIN    := $(ROOT)/target/debug/recuo
C_EXAMPLE_LIMITS := $(ROOT)/examples/c/limits.c
C_EXAMPLE_RECORDS := $(ROOT)/examples/c/records.c
C_DOC          := $(ROOT)/docs/c.md
C_DOC_OUT      := $(C_OUT)/doc

.PHONY: build-c build-c-release header header-check pkgconfig-c test-c test-cluster-c demo-c \
	example-c example-limits-c example-records-c example-curl-c doc-c install-c uninstall-c \
	dist-c test-dist-c

# $(call c_cluster_run,WRAPPER,PROGRAM,ARGS): runs a build of test_cluster.c (under WRAPPER)
# with its clusters in a directory of this run's own, and stops them afterwards whatever
# happened; fails when the program did.
c_cluster_run = dir=$(C_OUT)/cluster-$$$$; \
	$(1) $(2) $(C_CLUSTER_SCRIPT) $(C_RECUO_BIN) $$dir $(3); status=$$?; \
	$(C_CLUSTER_SCRIPT) stop $$dir/plain; $(C_CLUSTER_SCRIPT) stop $$dir/tls; \
	rmdir $$dir 2>/dev/null; test $$status -eq 0

# $(c_need): the C library needs Rust (cargo) and a C compiler (rustc links with
# it) and nothing else — no scripts/install-deps.sh; says in one line what is missing (the
# top-level Makefile's `need`).
c_need = $(NEED_CARGO); $(call need,$(firstword $(CC)),a C compiler; Rust links with it (apt-get install gcc))

build-c: ## build the C library: target/debug/librecuo.so and librecuo.a
	@$(c_need)
	@$(CARGO) build -q -p recuo-ffi
	@ln -sfn librecuo.so $(C_LIBDIR)/$(C_SONAME)

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
	     -e 's|@url@|file://$(ROOT)/docs/c.md|' \
	     $(ROOT)/ffi/recuo.pc.in > $(C_PCDIR)/recuo.pc.tmp
	@mv $(C_PCDIR)/recuo.pc.tmp $(C_PCDIR)/recuo.pc

test-c: build-c pkgconfig-c ## C tests against recuo.h: shared, static, pkg-config, valgrind, ASan
	@mkdir -p $(C_OUT)
	@$(CARGO) build -q -p recuo-cli
	@! ldd $(C_LIBDIR)/librecuo.so | grep libcurl
	@echo "test-c: ldd librecuo.so shows no libcurl"
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_CURL) -o $(C_OUT)/test_curl $(C_SHARED) $(C_CURL) -lcjson -lm
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_CURL) -o $(C_OUT)/test_curl_static $(C_STATIC) \
	    $(C_CURL) -lcjson -lm
	@$(CC) $(C_FLAGS) $(C_TEST_HTTP) -o $(C_OUT)/test_http $(C_SHARED) $(C_CURL) -lcjson -lm
	@$(CC) $(C_FLAGS) $(C_EXAMPLE_CURL_MULTI) -o $(C_OUT)/example_curl_multi $(C_SHARED) \
	    $(C_CURL)
	@echo '#include "recuo_curl.h"' | $(CXX) -std=c++17 -Wall -Wextra -Werror -pedantic \
	    -I$(ROOT)/include -fsyntax-only -x c++ -
	@echo "test-c: recuo_curl.h and recuo.h compile as C++ too"
	@$(CC) $(C_FLAGS) $(C_TEST_VECTORS) -o $(C_OUT)/test_vectors $(C_SHARED) -lcjson -lm
	@$(CC) $(C_FLAGS) $(C_TEST_LOOPS) -o $(C_OUT)/test_loops $(C_SHARED) -lcjson -lm
	@$(CC) $(C_FLAGS) $(C_TEST_LOOPS) -o $(C_OUT)/test_loops_static $(C_STATIC) -lcjson
	@$(CC) $(C_FLAGS) $(C_EXPECT) $(C_TEST_API) -o $(C_OUT)/test_api $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) $(C_EXPECT) $(C_TEST_API) -o $(C_OUT)/test_api_static $(C_STATIC)
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_ENGINE) -o $(C_OUT)/test_engine $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_ENGINE) -o $(C_OUT)/test_engine_static $(C_STATIC)
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_LIMITS) -o $(C_OUT)/test_limits $(C_SHARED) -lm
	@$(CC) $(C_FLAGS) -pthread $(C_TEST_LIMITS) -o $(C_OUT)/test_limits_static $(C_STATIC)
	@$(CC) $(C_FLAGS) $(C_TEST_SHARED_LIMIT) -o $(C_OUT)/test_shared_limit $(C_SHARED)
	@$(CC) $(C_FLAGS) $(C_TEST_SHARED_LIMIT) -o $(C_OUT)/test_shared_limit_static $(C_STATIC)
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
	@$(C_VALGRIND) $(C_OUT)/test_shared_limit
	@$(C_OUT)/test_shared_limit_static
	@LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --variable=libdir recuo) \
	    $(C_VALGRIND) $(C_OUT)/test_limits_pkgconfig
	@$(C_VALGRIND) $(C_OUT)/test_records
	@$(C_VALGRIND) $(C_OUT)/test_records_static
	@LD_LIBRARY_PATH=$$(PKG_CONFIG_PATH=$(C_PCDIR) pkg-config --variable=libdir recuo) \
	    $(C_VALGRIND) $(C_OUT)/test_records_pkgconfig
	@$(C_VALGRIND) $(C_OUT)/test_redis
	@$(C_VALGRIND) $(C_OUT)/test_redis_static
	@$(MAKE) --no-print-directory test-cluster-c
	@$(C_VALGRIND) $(C_OUT)/test_hostile 2>$(C_OUT)/test_hostile.err || { cat $(C_OUT)/test_hostile.err; exit 1; }
	@$(C_VALGRIND) $(C_OUT)/test_hostile_static 2>$(C_OUT)/test_hostile.err || { cat $(C_OUT)/test_hostile.err; exit 1; }
	@$(C_VALGRIND) $(C_OUT)/test_curl $(C_RECUO_BIN) $(C_VECTORS)
	@$(C_OUT)/test_curl_static $(C_RECUO_BIN) $(C_VECTORS)
	@$(C_VALGRIND) $(C_OUT)/test_http $(C_RECUO_BIN) $(C_VECTORS)
	@$(ROOT)/tests/c/run_curl_multi.sh $(C_RECUO_BIN) $(C_OUT)/example_curl_multi $(C_VALGRIND)
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
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_SHARED_LIMIT) \
	        -o $(C_OUT)/test_shared_limit_asan $(C_SHARED) && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_RECORDS) \
	        -o $(C_OUT)/test_records_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) -pthread $(C_TEST_REDIS) \
	        -o $(C_OUT)/test_redis_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_HOSTILE) \
	        -o $(C_OUT)/test_hostile_asan $(C_SHARED) -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_CLUSTER) \
	        -o $(C_OUT)/test_cluster_asan $(C_SHARED) $(C_CURL) -lcjson -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) -pthread $(C_TEST_CURL) \
	        -o $(C_OUT)/test_curl_asan $(C_SHARED) $(C_CURL) -lcjson -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_TEST_HTTP) \
	        -o $(C_OUT)/test_http_asan $(C_SHARED) $(C_CURL) -lcjson -lm && \
	    $(CC) $(C_FLAGS) $(C_SANITIZE) $(C_EXAMPLE_CURL_MULTI) \
	        -o $(C_OUT)/example_curl_multi_asan $(C_SHARED) $(C_CURL) && \
	    $(C_OUT)/test_vectors_asan $(C_VECTORS) && \
	    $(C_OUT)/test_loops_asan $(C_VECTORS) && \
	    $(C_OUT)/test_api_asan && \
	    $(C_OUT)/test_engine_asan && \
	    $(C_OUT)/test_limits_asan && \
	    $(C_OUT)/test_shared_limit_asan && \
	    $(C_OUT)/test_records_asan && \
	    $(C_OUT)/test_redis_asan && \
	    ( $(call c_cluster_run,,$(C_OUT)/test_cluster_asan,--no-failover) ) && \
	    ( $(C_OUT)/test_hostile_asan 2>$(C_OUT)/test_hostile.err || \
	        { cat $(C_OUT)/test_hostile.err; false; } ) && \
	    $(C_OUT)/test_curl_asan $(C_RECUO_BIN) $(C_VECTORS) && \
	    $(C_OUT)/test_http_asan $(C_RECUO_BIN) $(C_VECTORS) && \
	    $(ROOT)/tests/c/run_curl_multi.sh $(C_RECUO_BIN) $(C_OUT)/example_curl_multi_asan; \
	else \
	    echo "test-c: $(CC) has no AddressSanitizer; the ASan runs were skipped"; \
	fi

# The plain cluster's part under valgrind; the TLS cluster's part and the failover natively (a
# process exec'd by the test: valgrind does not follow it). Prints the failover's figures.
test-cluster-c: build-c ## the C tests on real Redis Clusters: the limits, TLS, a fleet through a failover
	@mkdir -p $(C_OUT)
	@$(CARGO) build -q -p recuo-cli
	@$(CC) $(C_FLAGS) $(C_TEST_CLUSTER) -o $(C_OUT)/test_cluster $(C_SHARED) $(C_CURL) -lcjson -lm
	@$(call c_cluster_run,$(C_VALGRIND),$(C_OUT)/test_cluster,)

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

example-curl-c: build-c ## a curl_multi loop: many retried transfers against recuo serve (examples/c/curl_multi.c)
	@mkdir -p $(C_OUT)
	@$(CARGO) build -q -p recuo-cli
	@$(CC) $(C_FLAGS) $(C_EXAMPLE_CURL_MULTI) -o $(C_OUT)/example_curl_multi $(C_SHARED) \
	    $(C_CURL)
	@SHOW=1 $(ROOT)/tests/c/run_curl_multi.sh $(C_RECUO_BIN) $(C_OUT)/example_curl_multi

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


# ---- install-c, uninstall-c ---------------------------------------------------------------
# The release build, installed under $(DESTDIR) with the directories of the top-level Makefile
# (PREFIX, LIBDIR, INCLUDEDIR, PKGCONFIGDIR, DOCDIR): the shared library under its full name
# with the SONAME link and the development link, the static library, the two headers, the
# pkg-config file and the C guide with the pages it links to.
#
# install-c writes what it installed — the files, and the directories it had to create — to a
# manifest in target/install/, one per DESTDIR (as CMake's install_manifest.txt), and
# uninstall-c removes exactly that: the files, then those directories if nothing else was put
# in them since (a system's /usr/local/lib existed before, so it is never touched). Without a
# manifest (another checkout), uninstall-c removes the files this PREFIX and LIBDIR name.

C_RELEASE_DIR := $(ROOT)/target/release
C_DOCS := c.md names.md recipes.md policy.md backoff.md retry-after.md limits.md records.md telemetry.md
# The pkg-config URL: the installed C guide. The workspace's `repository` is a placeholder
# (https://example.invalid/recuo) until the project has a public home; a packager may pass
# C_URL=https://... once there is one.
C_URL = file://$(DOCDIR)/c.md
# $(LIBDIR) and $(INCLUDEDIR) as the .pc file says them: relative to ${prefix} when under it.
c_pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
C_INSTALLED = $(LIBDIR)/$(C_REALNAME) $(LIBDIR)/$(C_SONAME) $(LIBDIR)/librecuo.so \
	$(LIBDIR)/librecuo.a $(INCLUDEDIR)/recuo.h $(INCLUDEDIR)/recuo_curl.h \
	$(PKGCONFIGDIR)/recuo.pc $(addprefix $(DOCDIR)/,$(C_DOCS))
C_MANIFEST = $(ROOT)/target/install/c$(if $(DESTDIR),$(subst /,%,$(abspath $(DESTDIR))),-system).txt
c_ldconfig = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; \
	then ldconfig; fi

build-c-release: ## build the C library for installing: target/release/librecuo.so, .a
	@$(c_need)
	@$(CARGO) build -q --release -p recuo-ffi

install-c: build-c-release ## install librecuo, recuo.h, recuo_curl.h and recuo.pc (PREFIX, LIBDIR, DESTDIR)
	@mkdir -p $(dir $(C_MANIFEST))
	@{ [ -f '$(C_MANIFEST)' ] && grep '^d ' '$(C_MANIFEST)'; \
	   for p in $(LIBDIR) $(INCLUDEDIR) $(PKGCONFIGDIR) $(DOCDIR); do \
	       while [ "$$p" != / ] && [ ! -d "$(DESTDIR)$$p" ]; do echo "d $$p"; p=$$(dirname "$$p"); done; \
	   done; } | sort -u > '$(C_MANIFEST).tmp'; true
	@install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	    $(DESTDIR)$(DOCDIR)
	@install -m 755 $(C_RELEASE_DIR)/librecuo.so $(DESTDIR)$(LIBDIR)/$(C_REALNAME)
	@ln -sfn $(C_REALNAME) $(DESTDIR)$(LIBDIR)/$(C_SONAME)
	@ln -sfn $(C_SONAME) $(DESTDIR)$(LIBDIR)/librecuo.so
	@install -m 644 $(C_RELEASE_DIR)/librecuo.a $(DESTDIR)$(LIBDIR)/librecuo.a
	@install -m 644 $(ROOT)/include/recuo.h $(ROOT)/include/recuo_curl.h $(DESTDIR)$(INCLUDEDIR)
	@sed -e 's|@prefix@|$(PREFIX)|' \
	     -e 's|@includedir@|$(call c_pc_dir,$(INCLUDEDIR))|' \
	     -e 's|@libdir@|$(call c_pc_dir,$(LIBDIR))|' \
	     -e 's|@version@|$(C_VERSION)|' \
	     -e 's|@url@|$(C_URL)|' \
	     $(ROOT)/ffi/recuo.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/recuo.pc
	@chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/recuo.pc
	@install -m 644 $(addprefix $(ROOT)/docs/,$(C_DOCS)) $(DESTDIR)$(DOCDIR)
	@printf 'f %s\n' $(C_INSTALLED) >> '$(C_MANIFEST).tmp'
	@mv '$(C_MANIFEST).tmp' '$(C_MANIFEST)'
	@$(c_ldconfig)
	@echo "install-c: $(words $(C_INSTALLED)) files under $(DESTDIR)$(PREFIX)" \
	    "($(C_REALNAME), SONAME $(C_SONAME))"

uninstall-c: ## remove exactly what install-c installed (the same DESTDIR)
	@if [ -f '$(C_MANIFEST)' ]; then \
	    sed -n 's/^f //p' '$(C_MANIFEST)' | while read -r f; do rm -f "$(DESTDIR)$$f"; done; \
	    sed -n 's/^d //p' '$(C_MANIFEST)' | sort -r | \
	        while read -r d; do rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done; \
	    n=$$(grep -c '^f ' '$(C_MANIFEST)'); rm -f '$(C_MANIFEST)'; \
	else \
	    rm -f $(addprefix $(DESTDIR),$(C_INSTALLED)); n=$(words $(C_INSTALLED)); \
	fi; \
	echo "uninstall-c: removed $$n files under $(if $(DESTDIR),$(DESTDIR),/)"
	@$(c_ldconfig)


# ---- dist-c, test-dist-c --------------------------------------------------------------------
# The C tarball a release uploads, recuo-VERSION-x86_64-linux-gnu.tar.gz: one folder holding
# install-c's tree for PREFIX=<the folder> (lib/ with the SONAME links and librecuo.a, include/,
# share/doc/recuo/), with a relocatable lib/pkgconfig/recuo.pc (prefix=${pcfiledir}/../.., so
# it is right wherever the folder is untarred), bin/recuo, README.md and the two licences.
# Stripped as a distribution strips (dh_strip's options); reproducible: names sorted, owner 0,
# every mtime the last commit's (SOURCE_DATE_EPOCH when set), gzip without a name or time.
C_DIST_NAME    := recuo-$(RECUO_VERSION)-$(shell uname -m)-linux-gnu
C_DIST_TARBALL  = $(DIST_DIR)/$(C_DIST_NAME).tar.gz
C_DIST_STAGE   := $(ROOT)/target/dist-stage/c
C_DIST_TREE    := $(C_DIST_STAGE)/$(C_DIST_NAME)
C_DIST_EPOCH   := $(or $(SOURCE_DATE_EPOCH),$(shell git -C $(ROOT) log -1 --format=%ct 2>/dev/null),0)
C_STRIP_SHARED := strip --remove-section=.comment --remove-section=.note --strip-unneeded
C_STRIP_EXEC   := strip --remove-section=.comment --remove-section=.note
C_STRIP_STATIC := strip --strip-debug --remove-section=.comment --remove-section=.note \
	--enable-deterministic-archives
# tar's options for an archive that depends on the files' contents only.
C_TAR_REPRO     = --sort=name --owner=0 --group=0 --numeric-owner --format=gnu \
	--mtime=@$(C_DIST_EPOCH)

dist-c: build-c-release build-cli-release ## the C tarball: target/dist/recuo-VERSION-x86_64-linux-gnu.tar.gz (library, headers, relocatable recuo.pc, bin/recuo, docs)
	@rm -rf $(C_DIST_STAGE) && mkdir -p $(C_DIST_STAGE) $(DIST_DIR)
	@# install-c's own list of files, with every directory relative to the folder (PREFIX empty).
	@$(MAKE) -s --no-print-directory install-c DESTDIR=$(C_DIST_TREE) PREFIX= LIBDIR=/lib \
	    INCLUDEDIR=/include PKGCONFIGDIR=/lib/pkgconfig DOCDIR=/share/doc/recuo >/dev/null
	@rm -f '$(ROOT)/target/install/c$(subst /,%,$(C_DIST_TREE)).txt'
	@$(MAKE) -s --no-print-directory install-cli DESTDIR=$(C_DIST_TREE) PREFIX= BINDIR=/bin >/dev/null
	@sed -i -e 's|^prefix=.*|prefix=$${pcfiledir}/../..|' \
	    -e 's|^URL: .*|URL: file://$${prefix}/share/doc/recuo/c.md|' $(C_DIST_TREE)/lib/pkgconfig/recuo.pc
	@! grep -rlF '$(C_DIST_STAGE)' $(C_DIST_TREE)/lib/pkgconfig $(C_DIST_TREE)/include
	@$(C_STRIP_SHARED) $(C_DIST_TREE)/lib/$(C_REALNAME)
	@$(C_STRIP_STATIC) $(C_DIST_TREE)/lib/librecuo.a
	@$(C_STRIP_EXEC) $(C_DIST_TREE)/bin/recuo
	@install -m 644 $(ROOT)/README.md $(ROOT)/docs/cli.md $(C_DIST_TREE)/share/doc/recuo/
	@install -m 644 $(ROOT)/LICENSE-MIT $(ROOT)/LICENSE-APACHE $(C_DIST_TREE)/
	@find $(C_DIST_TREE) -type d -exec chmod 755 {} +
	@tar $(C_TAR_REPRO) -C $(C_DIST_STAGE) -cf - $(C_DIST_NAME) | gzip -9n > $(C_DIST_TARBALL).tmp
	@mv $(C_DIST_TARBALL).tmp $(C_DIST_TARBALL)
	@echo "dist-c: $(C_DIST_TARBALL) ($$(stat -c %s $(C_DIST_TARBALL)) bytes)"

test-dist-c: ## untar the C tarball with no Rust on PATH; the README's C example built with its pkg-config file, shared and static; bin/recuo runs
	@tests/dist/c_tarball.sh $(ROOT) $(C_DIST_TARBALL)
