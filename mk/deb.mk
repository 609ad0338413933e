# mk/deb.mk — the Debian binary packages of `make dist` and their test: librecuo0.1 (the
# shared library), librecuo-dev (headers, static library, pkg-config file), recuo (the
# command) and php8.2-recuo (the PHP extension and the PHP library), built with dpkg-deb alone
# from trees that make install-c, install-cli and install-php stage (DESTDIR), by
# packaging/deb/mkdeb.sh from the templates in packaging/deb/. Included by the top-level
# Makefile after mk/c.mk, mk/cli.mk and mk/php.mk, whose variables it uses.

.PHONY: dist-deb test-dist-deb

DEB_REVISION   ?= 1
DEB_VERSION     = $(RECUO_VERSION)-$(DEB_REVISION)
# Who answers for the packages (control's Maintainer, the copyright's Upstream-Contact): a
# placeholder until the project has a public address; a release passes DEB_MAINTAINER=....
DEB_MAINTAINER ?= The recuo developers <recuo@example.invalid>
DEB_ARCH       := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_MULTIARCH  := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch 2>/dev/null)
DEB_STAGE      := $(ROOT)/target/dist-stage/deb
# The library package is named after the SONAME (librecuo.so.0.1 → librecuo0.1), as Debian's
# policy wants, so that 0.1 and 0.2 can be installed side by side.
DEB_SONAME_VERSION = $(patsubst librecuo.so.%,%,$(C_SONAME))
DEB_LIBPKG         = librecuo$(DEB_SONAME_VERSION)
DEB_PHP_PKG        = php$(PHP_VERSION_MM)-recuo
DEB_PACKAGES       = $(DEB_LIBPKG) librecuo-dev recuo $(DEB_PHP_PKG)
DEB_FILES          = $(foreach p,$(DEB_PACKAGES),$(DIST_DIR)/$(p)_$(DEB_VERSION)_$(DEB_ARCH).deb)
# What packaging/deb/mkdeb.sh fills the templates with.
DEB_ENV = VERSION='$(RECUO_VERSION)' DEB_VERSION='$(DEB_VERSION)' ARCH='$(DEB_ARCH)' \
	MAINTAINER='$(DEB_MAINTAINER)' LIBPKG='$(DEB_LIBPKG)' SONAME_VERSION='$(DEB_SONAME_VERSION)' \
	PHP_VERSION='$(PHP_VERSION_MM)' PHP_API='$(shell $(PHP_CONFIG) --phpapi 2>/dev/null)' \
	SOURCE_DATE_EPOCH='$(C_DIST_EPOCH)'
DEB_MKDEB = $(DEB_ENV) $(ROOT)/packaging/deb/mkdeb.sh

dist-deb: ## the Debian packages: librecuo0.1, librecuo-dev, recuo, php8.2-recuo (.deb, in target/dist/)
	@for tool in dpkg-deb strip; do command -v $$tool >/dev/null || \
	    { echo "dist-deb: needs $$tool: apt-get install dpkg binutils" >&2; exit 1; }; done
	@command -v $(PHP_CONFIG) >/dev/null || { echo "dist-deb: needs $(PHP_CONFIG) for the PHP package: apt-get install php-dev" >&2; exit 1; }
	@[ -n "$(DEB_MULTIARCH)" ] || { echo "dist-deb: no multiarch triplet (dpkg-architecture, from dpkg-dev)" >&2; exit 1; }
	@rm -rf $(DEB_STAGE) && mkdir -p $(DEB_STAGE) $(DIST_DIR)
	@# The C library, as install-c lays it out for /usr and the multiarch libdir, then split:
	@# the real file and the SONAME link to the library package, the rest to -dev.
	@$(MAKE) -s --no-print-directory install-c DESTDIR=$(DEB_STAGE)/librecuo-dev PREFIX=/usr \
	    LIBDIR=/usr/lib/$(DEB_MULTIARCH) INCLUDEDIR=/usr/include \
	    PKGCONFIGDIR=/usr/lib/$(DEB_MULTIARCH)/pkgconfig DOCDIR=/usr/share/doc/librecuo-dev >/dev/null
	@rm -f '$(ROOT)/target/install/c$(subst /,%,$(DEB_STAGE)/librecuo-dev).txt'
	@install -d $(DEB_STAGE)/$(DEB_LIBPKG)/usr/lib/$(DEB_MULTIARCH)
	@mv $(DEB_STAGE)/librecuo-dev/usr/lib/$(DEB_MULTIARCH)/$(C_REALNAME) \
	    $(DEB_STAGE)/librecuo-dev/usr/lib/$(DEB_MULTIARCH)/$(C_SONAME) \
	    $(DEB_STAGE)/$(DEB_LIBPKG)/usr/lib/$(DEB_MULTIARCH)/
	@# The command, its manual page and its guide.
	@$(MAKE) -s --no-print-directory install-cli DESTDIR=$(DEB_STAGE)/recuo PREFIX=/usr >/dev/null
	@install -d $(DEB_STAGE)/recuo/usr/share/man/man1 $(DEB_STAGE)/recuo/usr/share/doc/recuo
	@sed 's|@VERSION@|$(RECUO_VERSION)|g' $(ROOT)/packaging/deb/recuo.1.in | gzip -9n \
	    > $(DEB_STAGE)/recuo/usr/share/man/man1/recuo.1.gz
	@install -m 644 $(ROOT)/docs/cli.md $(DEB_STAGE)/recuo/usr/share/doc/recuo/
	@# The PHP extension and library, as install-php stages them; its ini belongs in
	@# mods-available (phpenmod links it into each SAPI's conf.d on install), wherever
	@# install-php put it on a machine without phpenmod.
	@$(MAKE) -s --no-print-directory install-php DESTDIR=$(DEB_STAGE)/$(DEB_PHP_PKG) PREFIX=/usr >/dev/null
	@php=$(DEB_STAGE)/$(DEB_PHP_PKG); mods=$$php/etc/php/$(PHP_VERSION_MM)/mods-available; \
	    if [ ! -f $$mods/recuo.ini ]; then \
	        install -D -m 644 $(ROOT)/php/recuo.ini $$mods/recuo.ini; \
	        rm -f $$php$(PHP_INI_DIR)/20-recuo.ini; \
	        find $$php/etc -depth -type d -empty -delete; \
	    fi; \
	    install -D -m 644 $(ROOT)/docs/php.md $$php/usr/share/doc/$(DEB_PHP_PKG)/php.md
	@$(DEB_MKDEB) librecuo $(DEB_LIBPKG) $(DEB_STAGE)/$(DEB_LIBPKG) $(DIST_DIR)
	@$(DEB_MKDEB) librecuo-dev librecuo-dev $(DEB_STAGE)/librecuo-dev $(DIST_DIR)
	@$(DEB_MKDEB) recuo recuo $(DEB_STAGE)/recuo $(DIST_DIR)
	@$(DEB_MKDEB) php-recuo $(DEB_PHP_PKG) $(DEB_STAGE)/$(DEB_PHP_PKG) $(DIST_DIR)

test-dist-deb: ## the .debs through lintian, unpacked into a scratch root (never installed), the C example, recuo and the PHP extension loaded from there
	@PHP_VERSION_MM=$(PHP_VERSION_MM) DEB_MULTIARCH=$(DEB_MULTIARCH) \
	    tests/dist/deb_packages.sh $(ROOT) $(DEB_FILES)
