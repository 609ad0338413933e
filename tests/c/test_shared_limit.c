/*
 * test_shared_limit.c — the concurrency limit in a shared file from C (issue 28): four
 * fork()ed children on one file with a limit of 1; one holds the place and three wait; each
 * holder in turn is killed with SIGKILL, and the next waiter starts within the bound
 * docs/limits.md states (250 ms after the kill), never two at once. Then the refusals: a
 * limit of 0, another limit on the same file, a symbolic link, junk, every NULL argument.
 *
 * The children open their own handle after fork(), tell the parent through a pipe (one
 * write() of a short line each, atomic), and never return: they are killed, or _exit after
 * 20 s on their own. The parent opens its handle after the fork()s, so no child shares it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recuo.h"

#include "check.h"

#define CHILDREN 4
#define BOUND_NS UINT64_C(250000000)
#define CHILD_LIFE_MS UINT64_C(20000)

static void child(const char *path, int index, int out) {
    recuo_concurrency_limit *limit = NULL;
    if (recuo_concurrency_limit_new_shared(path, strlen(path), 1, &limit, NULL, 0) != RECUO_OK) {
        _exit(2);
    }
    recuo_permit *permit = NULL;
    char line[64];
    recuo_status st = recuo_concurrency_limit_try_acquire(limit, &permit);
    if (st == RECUO_WOULD_WAIT) {
        int n = snprintf(line, sizeof line, "W %d\n", index);
        if (write(out, line, (size_t)n) != n) {
            _exit(3);
        }
        st = recuo_concurrency_limit_acquire(limit, CHILD_LIFE_MS, NULL, &permit);
    }
    if (st == RECUO_OK) {
        int n = snprintf(line, sizeof line, "S %d %" PRIu64 "\n", index, recuo_monotonic_ns());
        if (write(out, line, (size_t)n) != n) {
            _exit(3);
        }
        struct timespec life = {(time_t)(CHILD_LIFE_MS / 1000), 0};
        while (nanosleep(&life, &life) != 0 && errno == EINTR) {
        }
        recuo_permit_release(permit);
    }
    recuo_concurrency_limit_free(limit);
    close(out);
    _exit(0);
}

/* Reads the next line a child wrote, within timeout_ms: 'W' (waiting) or 'S' (started, with
 * its instant); 0 when nothing came. */
static char next_line(int in, int timeout_ms, int *index, uint64_t *at) {
    static char buf[1024];
    static size_t have;
    for (;;) {
        char *nl = memchr(buf, '\n', have);
        if (nl != NULL) {
            *nl = '\0';
            char kind = buf[0];
            *at = 0;
            if (kind == 'S') {
                sscanf(buf, "S %d %" SCNu64, index, at);
            } else {
                sscanf(buf, "W %d", index);
            }
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, nl + 1, have - used);
            have -= used;
            return kind;
        }
        struct pollfd p = {in, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0 || have == sizeof buf) {
            return 0;
        }
        ssize_t n = read(in, buf + have, sizeof buf - have);
        if (n <= 0) {
            return 0;
        }
        have += (size_t)n;
    }
}

static void a_killed_holder_frees_its_place_at_once(const char *path) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            close(fds[0]);
            child(path, i, fds[1]);
        }
        CHECK(pids[i] > 0);
    }
    close(fds[1]);
    recuo_concurrency_limit *watcher = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new_shared(path, strlen(path), 1, &watcher, NULL, 0),
                 RECUO_OK);

    int holder = -1, waiting = 0, index = -1;
    uint64_t at = 0;
    while (holder < 0 || waiting < CHILDREN - 1) {
        char kind = next_line(fds[0], 10000, &index, &at);
        CHECK_CTX(kind == 'S' || kind == 'W', "every child starts or waits (got %d)", kind);
        if (kind == 'S') {
            CHECK_CTX(holder < 0, "two children started at once");
            holder = index;
        } else if (kind == 'W') {
            waiting++;
        } else {
            break;
        }
    }
    uint64_t delays[CHILDREN - 1] = {0};
    for (int k = 0; k < CHILDREN - 1 && holder >= 0 && holder < CHILDREN; k++) {
        CHECK_CTX(next_line(fds[0], 100, &index, &at) == 0, "nobody starts while one holds");
        CHECK_EQ_U64(recuo_concurrency_limit_in_flight(watcher), 1);
        uint64_t killed_at = recuo_monotonic_ns();
        CHECK(kill(pids[holder], SIGKILL) == 0);
        int status = 0;
        CHECK(waitpid(pids[holder], &status, 0) == pids[holder]);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        pids[holder] = -1;
        char kind = next_line(fds[0], 5000, &index, &at);
        CHECK_CTX(kind == 'S' && index != holder, "a waiter takes the place (got %d)", kind);
        if (kind != 'S') {
            break;
        }
        delays[k] = at > killed_at ? at - killed_at : 0;
        holder = index;
    }
    printf("test_shared_limit: from each kill to the next start: %" PRIu64 ", %" PRIu64
           ", %" PRIu64 " us\n",
           delays[0] / 1000, delays[1] / 1000, delays[2] / 1000);
    for (int k = 0; k < CHILDREN - 1; k++) {
        CHECK_CTX(delays[k] > 0 && delays[k] <= BOUND_NS, "delay %d: %" PRIu64 " ns", k,
                  delays[k]);
    }
    for (int i = 0; i < CHILDREN; i++) {
        if (pids[i] > 0) {
            kill(pids[i], SIGKILL);
            waitpid(pids[i], NULL, 0);
        }
    }
    close(fds[0]);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(watcher), 0);
    recuo_permit *permit = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(watcher, &permit), RECUO_OK);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(watcher), 1);
    CHECK_EQ_U64(recuo_concurrency_limit_max_in_flight(watcher), 1);
    recuo_permit_release(permit);
    recuo_concurrency_limit_free(watcher);
}

static void refusals(const char *dir) {
    char path[512], other[512], detail[256];
    snprintf(path, sizeof path, "%s/refused", dir);
    recuo_concurrency_limit *limit = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new_shared(path, strlen(path), 0, &limit, detail,
                                                    sizeof detail),
                 RECUO_ERR_ZERO_LIMIT);
    CHECK(limit == NULL);
    CHECK_STATUS(recuo_concurrency_limit_new_shared(path, strlen(path), 2, &limit, detail,
                                                    sizeof detail),
                 RECUO_OK);
    CHECK(strcmp(detail, "") == 0);
    recuo_concurrency_limit *again = NULL;
    CHECK_STATUS(recuo_concurrency_limit_new_shared(path, strlen(path), 3, &again, detail,
                                                    sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    char expected[700];
    snprintf(expected, sizeof expected,
             "shared state: %s holds a concurrency limit of 2; this process asked for 3",
             path);
    CHECK_CTX(strcmp(detail, expected) == 0, "%s", detail);
    CHECK(again == NULL);
    /* Two handles in one process: each its own description, one limit. */
    CHECK_STATUS(recuo_concurrency_limit_new_shared(path, strlen(path), 2, &again, NULL, 0),
                 RECUO_OK);
    recuo_permit *a = NULL, *b = NULL, *c = NULL;
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(limit, &a), RECUO_OK);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(again, &b), RECUO_OK);
    CHECK_STATUS(recuo_concurrency_limit_try_acquire(limit, &c), RECUO_WOULD_WAIT);
    CHECK_STATUS(recuo_concurrency_limit_acquire(again, 20, NULL, &c), RECUO_TIMED_OUT);
    CHECK(c == NULL);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(limit), 2);
    recuo_permit_release(a);
    CHECK_EQ_U64(recuo_concurrency_limit_in_flight(again), 1);
    recuo_permit_release(b);
    recuo_concurrency_limit_free(again);
    recuo_concurrency_limit_free(limit);

    snprintf(other, sizeof other, "%s/link", dir);
    CHECK(symlink(path, other) == 0);
    CHECK_STATUS(recuo_concurrency_limit_new_shared(other, strlen(other), 2, &limit, detail,
                                                    sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "symbolic link") != NULL, "%s", detail);
    unlink(other);

    snprintf(other, sizeof other, "%s/junk", dir);
    int fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0 && write(fd, "not a recuo state, 24 b.", 24) == 24);
    close(fd);
    CHECK_STATUS(recuo_concurrency_limit_new_shared(other, strlen(other), 2, &limit, detail,
                                                    sizeof detail),
                 RECUO_ERR_SHARED_MISMATCH);
    CHECK_CTX(strstr(detail, "lacks recuo's mark") != NULL, "%s", detail);
    unlink(other);

    CHECK_STATUS(recuo_concurrency_limit_new_shared(NULL, 3, 2, &limit, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_new_shared(path, strlen(path), 2, NULL, NULL, 0),
                 RECUO_ERR_NULL_ARGUMENT);
    CHECK_STATUS(recuo_concurrency_limit_new_shared("", 0, 2, &limit, NULL, 0), RECUO_ERR_IO);
    unlink(path);
}

int main(int argc, char **argv) {
    (void)argc;
    char dir[] = "/tmp/recuo-c-shared-limit-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/limit", dir);
    a_killed_holder_frees_its_place_at_once(path);
    unlink(path);
    refusals(dir);
    rmdir(dir);
    return check_summary(argv[0]);
}
