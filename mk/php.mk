# mk/php.mk — the PHP extension (php/, tests/php/, examples/php/). Included by the Makefile,
# which defines ROOT and CARGO. The tests load the extension with `php -d extension=...` from
# target/debug; `make install-php` installs a release build system-wide (DESTDIR honoured).

PHP ?= php
PHPUNIT ?= /usr/bin/phpunit
PHP_EXTENSION := $(ROOT)/target/debug/librecuo_php.so
PHP_WITH_RECUO = $(PHP) -d extension=$(PHP_EXTENSION)
PHP_SOURCES = $(ROOT)/php/recuo.stub.php $(shell find $(ROOT)/php/lib -name "*.php") $(wildcard $(ROOT)/tests/php/*.php $(ROOT)/tests/php/support/*.php $(ROOT)/examples/php/*.php)

.PHONY: build-php lint-php test-php demo-php install-php uninstall-php

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

install-php: ## install the PHP extension (release build, as recuo.so) with its ini file, and the PHP library in PHP_LIB_DIR; DESTDIR honoured
	@cd $(ROOT) && $(CARGO) build --quiet --release -p recuo-php
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
