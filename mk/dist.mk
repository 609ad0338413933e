# mk/dist.mk — what a release uploads (`make dist`, into target/dist/) and the tests that
# install each artifact as its user would (`make test-dist`, in `make test`). Each language's
# part defines its own dist-* and test-dist-* targets (mk/python.mk, mk/js.mk, mk/php.mk,
# mk/c.mk, mk/deb.mk); this file ties them together and writes SHA256SUMS. Included by the
# top-level Makefile, which defines ROOT, DIST_DIR and RECUO_VERSION.

.PHONY: dist test-dist dist-sums

DIST_PARTS := dist-python dist-js dist-php dist-c dist-deb
TEST_DIST_PARTS := test-dist-python test-dist-js test-dist-php test-dist-c test-dist-deb

dist: ## write to target/dist/ what a release uploads: wheel and sdist, npm tarball, PIE package and zip, Composer archive, C tarball, .debs, SHA256SUMS
	@rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	@$(MAKE) --no-print-directory $(DIST_PARTS)
	@$(MAKE) --no-print-directory dist-sums

dist-sums:
	@cd $(DIST_DIR) && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum > SHA256SUMS
	@cd $(DIST_DIR) && sha256sum --quiet -c SHA256SUMS
	@cd $(DIST_DIR) && find . -maxdepth 1 -type f -printf '%f\t%s\n' | sort | \
		awk -F'\t' '{printf "  %-62s %9d bytes\n", $$1, $$2}'

test-dist: dist ## install each artifact of make dist as its user would (no Rust on PATH; the sdist and the PIE source build with it) and run the README's example against it
	@$(MAKE) --no-print-directory $(TEST_DIST_PARTS)
	@echo "test-dist: every artifact installed and ran"
