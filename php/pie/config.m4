dnl config.m4 for recuo — the PIE package's build (`phpize && ./configure && make && make
dnl install`, which is what `pie install` runs where no pre-packaged binary fits).
dnl
dnl The extension is Rust (ext-php-rs), so the C compiler builds nothing here: configure checks
dnl for cargo and adds Makefile.frag, whose rule runs `cargo build --release -p recuo-php` in
dnl the Rust workspace rust/ and puts the library at modules/recuo.so, where phpize's `make
dnl install` (and PIE) take it from. (The workspace is a directory of its own: configure runs
dnl `rm -f core` to clear core dumps, and complains about a directory core/, the core crate's.)

PHP_ARG_ENABLE([recuo],
  [whether to enable recuo],
  [AS_HELP_STRING([--disable-recuo], [Do not build the recuo extension])],
  [yes])

if test "$PHP_RECUO" != "no"; then
  dnl CARGO chooses the cargo to run (as in the repository's Makefile); by default `cargo`.
  AC_ARG_VAR([CARGO], [the cargo command that builds the extension [cargo]])
  RECUO_CARGO="${CARGO:-cargo}"
  AC_MSG_CHECKING([for cargo])
  if command -v "$RECUO_CARGO" >/dev/null 2>&1 && "$RECUO_CARGO" --version >/dev/null 2>&1; then
    AC_MSG_RESULT([$RECUO_CARGO, `"$RECUO_CARGO" --version 2>/dev/null`])
  else
    AC_MSG_RESULT([no])
    AC_MSG_ERROR([recuo: building the extension needs Rust (cargo); see https://rustup.rs, or use the pre-packaged binary])
  fi

  dnl ext-php-rs reads the PHP to build against from PHP and PHP_CONFIG: the one this configure
  dnl was run for (`--with-php-config`), not whichever `php` comes first on PATH.
  dnl (Paths, as ext-php-rs wants them: php-config as found on PATH.)
  RECUO_PHP_CONFIG=`command -v "$PHP_CONFIG"`
  RECUO_PHP="$PHP_EXECUTABLE"
  PHP_SUBST(RECUO_CARGO)
  PHP_SUBST(RECUO_PHP_CONFIG)
  PHP_SUBST(RECUO_PHP)

  dnl No C sources, so no PHP_NEW_EXTENSION: the module is the file Makefile.frag makes, in
  dnl modules/ (a build directory of its own, or phpize's mkdir of the build directories has
  dnl none to make and complains).
  PHP_MODULES="$PHP_MODULES \$(phplibdir)/recuo.so"
  PHP_ADD_BUILD_DIR([modules])
  PHP_ADD_MAKEFILE_FRAGMENT([$abs_srcdir/Makefile.frag], [$abs_srcdir], [$abs_builddir])
fi
