# Makefile.frag for recuo (added by config.m4): cargo builds the extension in the Rust
# workspace rust/, and this rule copies it to modules/recuo.so, which phpize's `make install`
# installs into EXTENSION_DIR (under INSTALL_ROOT when given) and which PIE looks for after
# `make`.
#
# cargo decides what to rebuild, so the rule always asks it (recuo-cargo-build is phony).
# CARGO_TARGET_DIR, when set in the environment, is where cargo builds (relative to rust/);
# else rust/target. --locked: the dependencies are exactly Cargo.lock's.

RECUO_TARGET_DIR = $(if $(CARGO_TARGET_DIR),$(CARGO_TARGET_DIR),target)

$(phplibdir)/recuo.so: recuo-cargo-build
	@cd $(srcdir)/rust && PHP="$(RECUO_PHP)" PHP_CONFIG="$(RECUO_PHP_CONFIG)" \
		$(RECUO_CARGO) build --release --locked -p recuo-php
	@cd $(srcdir)/rust && cp "$(RECUO_TARGET_DIR)/release/librecuo_php.so" "$@"

.PHONY: recuo-cargo-build
recuo-cargo-build:
