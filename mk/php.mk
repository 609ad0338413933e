# mk/php.mk — the PHP extension (php/, tests/php/, examples/php/). Included by the Makefile,
# which defines ROOT and CARGO. The extension is loaded with `php -d extension=...` from
# target/debug: nothing is installed system-wide.

PHP ?= php
PHPUNIT ?= /usr/bin/phpunit
PHP_EXTENSION := $(ROOT)/target/debug/librecuo_php.so
PHP_WITH_RECUO = $(PHP) -d extension=$(PHP_EXTENSION)
PHP_SOURCES = $(ROOT)/php/recuo.stub.php $(wildcard $(ROOT)/tests/php/*.php $(ROOT)/tests/php/support/*.php $(ROOT)/examples/php/*.php)

.PHONY: build-php lint-php test-php demo-php

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
