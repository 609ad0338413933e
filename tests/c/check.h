/*
 * check.h — the few assertions the C tests share. Each failure prints its place and
 * condition on stderr; check_summary() prints "PROGRAM: N passed, M failed" and gives the
 * exit status (failure also when no check ran).
 */
#ifndef RECUO_TEST_CHECK_H
#define RECUO_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_passed;
static int check_failed;

/* Counts one check; on failure prints the condition and the printf-style context. */
#define CHECK_CTX(cond, ...)                                                                 \
    do {                                                                                     \
        if (cond) {                                                                          \
            check_passed++;                                                                  \
        } else {                                                                             \
            check_failed++;                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

#define CHECK(cond) CHECK_CTX(cond, "%s", "")

/* Equality of two unsigned 64-bit values, printing both on failure. */
#define CHECK_EQ_U64(actual, expected)                                                       \
    do {                                                                                     \
        uint64_t check_a_ = (uint64_t)(actual), check_e_ = (uint64_t)(expected);             \
        CHECK_CTX(check_a_ == check_e_, "got %" PRIu64 ", expected %" PRIu64, check_a_,      \
                  check_e_);                                                                 \
    } while (0)

/* Equality of two recuo_status values, printing both names on failure. */
#define CHECK_STATUS(actual, expected)                                                       \
    do {                                                                                     \
        recuo_status check_a_ = (actual), check_e_ = (expected);                             \
        CHECK_CTX(check_a_ == check_e_, "got %s (%u), expected %s (%u)",                     \
                  recuo_status_name(check_a_), (unsigned)check_a_,                           \
                  recuo_status_name(check_e_), (unsigned)check_e_);                          \
    } while (0)

/* Prints the summary under the program's own name (argv[0] without its directory), so the
 * shared, static, pkg-config and sanitizer builds of one test tell their lines apart. */
static int check_summary(const char *argv0) {
    const char *name = strrchr(argv0, '/');
    name = name != NULL ? name + 1 : argv0;
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

#endif /* RECUO_TEST_CHECK_H */
