# mk/php.mk — the PHP extension (php/, tests/php/, examples/php/). Included by the Makefile,
# which defines ROOT and CARGO. The tests load the extension with `php -d extension=...` from
# target/debug; `make install-php` installs a release build system-wide (DESTDIR honoured).

PHP ?= php
PHPUNIT ?= /usr/bin/phpunit
PHP_EXTENSION := $(ROOT)/target/debug/librecuo_php.so
PHP_WITH_RECUO = $(PHP) -d extension=$(PHP_EXTENSION)
PHP_SOURCES = $(ROOT)/php/recuo.stub.php $(shell find $(ROOT)/php/lib -name "*.php") $(wildcard $(ROOT)/tests/php/*.php $(ROOT)/tests/php/support/*.php $(ROOT)/tests/dist/php*.php $(ROOT)/examples/php/*.php)

.PHONY: build-php lint-php test-php demo-php install-php uninstall-php build-php-release dist-php test-dist-php

# Where `make install-php` puts things: the extension directory and the ini directories of the
# PHP that `php-config` describes, and the PHP library (Guzzle, Symfony, buscarComRetry) in
# PHP_LIB_DIR — on Debian /usr/share/php/Recuo, inside PHP's default include_path.
PHP_CONFIG ?= php-config
PHP_EXT_DIR = $(shell $(PHP_CONFIG) --extension-dir)
PHP_INI_DIR = $(shell $(PHP_CONFIG) --ini-dir)
PHP_VERSION_MM = $(shell $(PHP_CONFIG) --version | cut -d. -f1,2)
PHP_MODS_DIR ?= /etc/php/$(PHP_VERSION_MM)/mods-available
PHP_LIB_DIR ?= $(shell $(PHP_CONFIG) --prefix)/share/php/Recuo
PHP_LIB_FILES = $(shell cd $(ROOT)/php/lib && find . -type f \( -name '*.php' -o -name composer.json \) | sort)

# The release build is made for the PHP that php-config describes: ext-php-rs reads the PHP
# to build against from PHP and PHP_CONFIG. These are the values the PIE package's configure
# passes by default too, so install-php, dist-php and the PIE source build of test-dist-php
# share cargo's build of ext-php-rs (a change in either variable reruns its bindgen).
# (ext-php-rs takes paths, not names: php-config as found on PATH.)
PHP_BINARY = $(shell $(PHP_CONFIG) --php-binary)
PHP_CARGO_ENV = PHP="$(PHP_BINARY)" PHP_CONFIG="$(shell command -v $(PHP_CONFIG))"

# What a PHP build needs, said in one line when it is missing: php-config (php-dev), cargo,
# and libclang, which ext-php-rs's bindgen loads to read PHP's headers. A prerequisite
# (php-tools-<target>), so that it runs before the target's recipe asks php-config anything.
php-tools-%:
	@$(call need,$(PHP_CONFIG),apt-get install php-dev)
	@$(NEED_CARGO)
	@found=$${LIBCLANG_PATH:-}; \
	for f in $$(llvm-config --libdir 2>/dev/null)/libclang*.so* /usr/lib/llvm-*/lib/libclang*.so* /usr/lib*/libclang*.so* \
		/usr/lib/*/libclang*.so* /usr/local/lib*/libclang*.so* /Library/Developer/CommandLineTools/usr/lib/libclang.dylib; do \
		[ -e "$$f" ] && found=$$f; \
	done; \
	[ -n "$$found" ] || { echo "$*: libclang is missing (ext-php-rs's bindgen needs it): apt-get install libclang-dev, or set LIBCLANG_PATH" >&2; exit 1; }

build-php: ## build the PHP extension (target/debug/librecuo_php.so)
	@cd $(ROOT) && $(CARGO) build --quiet -p recuo-php

lint-php: ## rustfmt and clippy for the PHP extension; php -l on the stub, tests and examples
	@cd $(ROOT) && $(CARGO) fmt -p recuo-php -- --check
	@cd $(ROOT) && $(CARGO) clippy --quiet -p recuo-php --all-targets -- -D warnings
	@for f in $(PHP_SOURCES); do \
		out=$$($(PHP) -l "$$f" 2>&1) || { echo "$$out" >&2; exit 1; }; \
	done

test-php: build-php lint-php ## run the PHP tests (phpunit) against the freshly built extension
	@cd $(ROOT) && RECUO_PHP_EXTENSION=$(PHP_EXTENSION) $(PHP_WITH_RECUO) $(PHPUNIT) --configuration tests/php/phpunit.xml

demo-php: build-php ## PHP: guide B's delays, comRetry, retry honouring server waits; the planner, a batch through a gate, a shared regulator; redacted records, who answered, stats
	@$(PHP_WITH_RECUO) $(ROOT)/examples/php/demo.php
	@echo
	@$(PHP_WITH_RECUO) $(ROOT)/examples/php/limits.php
	@echo
	@$(PHP_WITH_RECUO) $(ROOT)/examples/php/records.php

install-php: php-tools-install-php build-php-release ## install the PHP extension (release build, as recuo.so) with its ini file, and the PHP library in PHP_LIB_DIR; DESTDIR honoured; needs Rust, php-dev and libclang, and says which is missing
	@install -D -m 0755 $(ROOT)/target/release/librecuo_php.so $(DESTDIR)$(PHP_EXT_DIR)/recuo.so
	@if command -v phpenmod >/dev/null && [ -d $(PHP_MODS_DIR) ]; then \
		install -D -m 0644 $(ROOT)/php/recuo.ini $(DESTDIR)$(PHP_MODS_DIR)/recuo.ini; \
		if [ -z "$(DESTDIR)" ]; then phpenmod recuo; \
		else echo "install-php: staged in $(DESTDIR); run 'phpenmod recuo' once installed"; fi; \
	else \
		install -D -m 0644 $(ROOT)/php/recuo.ini $(DESTDIR)$(PHP_INI_DIR)/20-recuo.ini; \
	fi
	@for f in $(PHP_LIB_FILES); do install -D -m 0644 $(ROOT)/php/lib/$$f $(DESTDIR)$(PHP_LIB_DIR)/$$f; done
	@echo "install-php: $(DESTDIR)$(PHP_EXT_DIR)/recuo.so, the library in $(DESTDIR)$(PHP_LIB_DIR)"

uninstall-php: ## remove what make install-php installed (same DESTDIR)
	@if command -v phpdismod >/dev/null && [ -f $(DESTDIR)$(PHP_MODS_DIR)/recuo.ini ]; then \
		if [ -z "$(DESTDIR)" ]; then phpdismod recuo; fi; \
		rm -f $(DESTDIR)$(PHP_MODS_DIR)/recuo.ini; \
	fi
	@rm -f $(DESTDIR)$(PHP_EXT_DIR)/recuo.so $(DESTDIR)$(PHP_INI_DIR)/20-recuo.ini
	@for f in $(PHP_LIB_FILES); do rm -f $(DESTDIR)$(PHP_LIB_DIR)/$$f; done
	@if [ -d $(DESTDIR)$(PHP_LIB_DIR) ]; then find $(DESTDIR)$(PHP_LIB_DIR) -depth -type d -empty -delete; fi
	@# In a DESTDIR, the directories left empty go too (up to DESTDIR itself, which stays).
	@if [ -n "$(DESTDIR)" ]; then \
		for d in $(PHP_EXT_DIR) $(PHP_MODS_DIR) $(PHP_INI_DIR) $(PHP_LIB_DIR); do \
			p="$(DESTDIR)$$d"; \
			while [ "$$p" != "$(DESTDIR)" ] && [ "$$p" != / ]; do \
				if [ -d "$$p" ]; then rmdir "$$p" 2>/dev/null || break; fi; p=$$(dirname "$$p"); \
			done; \
		done; \
	fi

# ---- make dist-php, make test-dist-php (mk/dist.mk runs them) -----------------------------
# The pre-packaged binary's name as PIE looks for it,
# php_{extension}-{version}_php{X.Y}-{arch}-{os}-{libc}[-debug]-{nts|zts}.zip, from the PHP
# that php-config describes (the one the release build is made for).
PHP_PIE_PLATFORM = $(shell uname -m)-$(shell uname -s | tr A-Z a-z)-$(shell getconf GNU_LIBC_VERSION >/dev/null 2>&1 && echo glibc || echo musl)$(shell $(PHP_BINARY) -n -r 'echo PHP_DEBUG ? "-debug" : "", PHP_ZTS ? "-zts" : "-nts";')
PHP_PIE_BINARY = php_recuo-$(RECUO_VERSION)_php$(PHP_VERSION_MM)-$(PHP_PIE_PLATFORM).zip

build-php-release: php-tools-build-php-release ## the release build of the PHP extension for the PHP php-config describes (target/release/librecuo_php.so)
	@cd $(ROOT) && $(PHP_CARGO_ENV) $(CARGO) build --quiet --release -p recuo-php

dist-php: php-tools-dist-php build-php-release ## PHP's artifacts in DIST_DIR: the PIE package (recuo-ext-VERSION.zip), its pre-packaged binary (php_recuo-VERSION_php8.2-x86_64-linux-glibc-nts.zip), the Composer archive of php/lib (recuo-recuo-VERSION.zip)
	@CARGO="$(CARGO)" $(ROOT)/php/pie/dist.sh $(ROOT) $(DIST_DIR) $(RECUO_VERSION) $(PHP_PIE_BINARY)

test-dist-php: php-tools-test-dist-php ## install dist-php's artifacts as a user would: the binary and the Composer archive with no Rust on PATH, the PIE package built by phpize; the README's example against each
	@CARGO="$(CARGO)" PHP_CONFIG="$(PHP_CONFIG)" $(ROOT)/tests/dist/php.sh $(ROOT) $(DIST_DIR) $(RECUO_VERSION) $(PHP_PIE_BINARY)
