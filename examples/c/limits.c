/*
 * limits.c — one allowance for several processes: three worker processes (think PHP-FPM or
 * a pool of C workers) open the same regulator file and each makes its starts through it.
 * Together they keep to the rate, however they are scheduled: the parent prints who started
 * when, and the rate they reached together.
 *
 * Real time, real waits (recuo_regulator_acquire blocks until the next slot): 30 starts at
 * 50/s take about 0.6 s. Build: cc -std=c11 limits.c $(pkg-config --cflags --libs recuo)
 * (or: make example-limits-c).
 */
#define _POSIX_C_SOURCE 200809L /* fork, mkdtemp, pipes */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recuo.h"

#define WORKERS 3
#define STARTS 10 /* per worker */
#define RATE 50.0 /* starts per second, for all workers together */

/* A worker: its own handle on the shared file; each start is written to the pipe. */
static int worker(int id, const char *path, int out) {
    char detail[256];
    recuo_regulator *r;
    if (recuo_regulator_new_shared(path, strlen(path), RATE, 1, &r, detail, sizeof detail) !=
        RECUO_OK) {
        fprintf(stderr, "worker %d: %s\n", id, detail);
        return 1;
    }
    (void)recuo_monotonic_ns(); /* warm up: the first reading counts for nothing */
    int rc = 0;
    for (int i = 0; i < STARTS && rc == 0; i++) {
        if (recuo_regulator_acquire(r, 1, NULL) != RECUO_OK) {
            rc = 1;
            break;
        }
        /* ... send the request here ... */
        uint64_t start[2] = {(uint64_t)id, recuo_monotonic_ns()};
        if (write(out, start, sizeof start) != (ssize_t)sizeof start) {
            rc = 1;
        }
    }
    recuo_regulator_free(r);
    return rc;
}

static int by_time(const void *a, const void *b) {
    uint64_t x = ((const uint64_t *)a)[1], y = ((const uint64_t *)b)[1];
    return x < y ? -1 : x > y;
}

int main(void) {
    char dir[] = "/tmp/recuo-limits-XXXXXX", path[64];
    if (mkdtemp(dir) == NULL) {
        return 1;
    }
    snprintf(path, sizeof path, "%s/allowance", dir);
    int fds[2];
    if (pipe(fds) != 0) {
        return 1;
    }
    fflush(stdout);
    pid_t pids[WORKERS];
    for (int id = 0; id < WORKERS; id++) {
        pids[id] = fork();
        if (pids[id] == 0) {
            close(fds[0]);
            _exit(worker(id, path, fds[1]));
        }
    }
    close(fds[1]);

    /* The starts, as the workers report them (in the order they wrote), sorted by time. */
    uint64_t starts[WORKERS * STARTS][2];
    int n = 0;
    while (n < WORKERS * STARTS &&
           read(fds[0], starts[n], sizeof starts[n]) == (ssize_t)sizeof starts[n]) {
        n++;
    }
    qsort(starts, (size_t)n, sizeof starts[0], by_time);
    uint64_t first = n > 0 ? starts[0][1] : 0, last = first;
    for (int i = 0; i < n; i++) {
        last = starts[i][1];
        printf("%6.1f ms  worker %" PRIu64 "\n", (last - first) / 1e6, starts[i][0]);
    }
    close(fds[0]);
    int failed = 0;
    for (int id = 0; id < WORKERS; id++) {
        int status = 1;
        waitpid(pids[id], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    unlink(path);
    rmdir(dir);

    /* n starts with a burst of 1 take at least (n - 1) intervals. Each start is timed when its
     * worker was told to go, a little after its slot — under valgrind on a busy machine, the
     * first one up to an interval late: allow two intervals' worth. */
    double span_s = (last - first) / 1e9, together = n > 1 ? (n - 1) / span_s : 0;
    printf("%d starts from %d processes in %.3f s: %.1f/s together, for an allowance of "
           "%.0f/s\n",
           n, WORKERS, span_s, together, RATE);
    return failed || n != WORKERS * STARTS || span_s < (n - 3) / RATE;
}
