/*
 * test_hostile.c — hostile input through the C ABI (issue 11): a panic arrives as its
 * status, a Redis server that answers "é\r\n" or an endless line gives RECUO_ERR_IO with a
 * clear, short detail (never a panic, never the password), rediss:// is TLS or an error, a shared
 * file through a symbolic link is refused, and idempotency keys differ between a parent and
 * its fork() child and between two machines made with one seed.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recuo.h"

#include "check.h"

static void a_panic_is_a_status(void) {
    recuo_status rc = recuo_test_force_panic();
    CHECK_STATUS(rc, RECUO_ERR_PANIC);
    CHECK(strcmp(recuo_status_name(rc), "panic") == 0);
}

/*
 * A fake server on 127.0.0.1 in a child process: accepts one connection, reads the request,
 * answers `answer` (`repeat` times), and holds the connection until the client goes.
 * Stores the port in *port and answers the child's pid.
 */
static pid_t fake_server(const char *answer, size_t answer_len, int repeat, uint16_t *port) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(listener >= 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0);
    CHECK(listen(listener, 1) == 0);
    socklen_t len = sizeof addr;
    CHECK(getsockname(listener, (struct sockaddr *)&addr, &len) == 0);
    *port = ntohs(addr.sin_port);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGPIPE, SIG_IGN);
        int conn = accept(listener, NULL, NULL);
        char buf[4096];
        if (conn >= 0 && read(conn, buf, sizeof buf) > 0) {
            for (int i = 0; i < repeat; i++) {
                if (write(conn, answer, answer_len) < 0) {
                    break;
                }
            }
            while (read(conn, buf, sizeof buf) > 0) {
            }
        }
        _exit(0);
    }
    close(listener);
    return pid;
}

static recuo_status redis_against(const char *answer, size_t answer_len, int repeat,
                                  char *detail, size_t detail_len) {
    uint16_t port = 0;
    pid_t server = fake_server(answer, answer_len, repeat, &port);
    char url[64];
    int n = snprintf(url, sizeof url, "redis://:hunter2@127.0.0.1:%u", (unsigned)port);
    recuo_regulator *r = NULL;
    recuo_status rc = recuo_regulator_new_redis(url, (size_t)n, "k", 1, 1.0, 1, &r, detail,
                                                detail_len);
    CHECK(r == NULL);
    int status = 0;
    CHECK(waitpid(server, &status, 0) == server);
    return rc;
}

static void a_multi_byte_reply_is_a_clear_io_error(void) {
    char detail[256];
    recuo_status rc = redis_against("\xc3\xa9\r\n", 4, 1, detail, sizeof detail);
    CHECK_STATUS(rc, RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "bad reply: ") != NULL, "%s", detail);
    CHECK_CTX(strstr(detail, "hunter2") == NULL, "%s", detail);
}

static void an_endless_line_is_refused_at_its_cap(void) {
    char chunk[8192];
    memset(chunk, 'a', sizeof chunk);
    chunk[0] = '+';
    char detail[256];
    /* 80 MB if the client read it all; it hangs up after 4 MiB. */
    recuo_status rc = redis_against(chunk, sizeof chunk, 10000, detail, sizeof detail);
    CHECK_STATUS(rc, RECUO_ERR_IO);
    /* Refused at the reply cap, or (valgrind's pace) at the call's deadline: bounded both. */
    CHECK_CTX(strstr(detail, "a reply longer than 4194304 bytes (refused)") != NULL ||
                  strstr(detail, "no complete answer within the call's deadline") != NULL,
              "%s", detail);
    CHECK_CTX(strlen(detail) < 200, "%zu bytes", strlen(detail));
}

/* rediss:// is TLS or an error, never the password in plain text. */
static void rediss_is_tls_or_an_error(void) {
    const char *url = "rediss://u:hunter2@127.0.0.1:6380";
    char detail[256];
    recuo_regulator *r = NULL;
    CHECK_STATUS(recuo_regulator_new_redis(url, strlen(url), "k", 1, 1.0, 1, &r, detail,
                                           sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "Redis at 127.0.0.1:6380 (TLS): ") != NULL, "%s", detail);
    CHECK(strstr(detail, "hunter2") == NULL && r == NULL);
}

static void a_shared_file_through_a_link_is_refused(void) {
    char dir[] = "/tmp/recuo-hostile-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char victim[64], link[64];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    CHECK(symlink(victim, link) == 0);
    recuo_regulator *r = NULL;
    char detail[256];
    CHECK_STATUS(recuo_regulator_new_shared(link, strlen(link), 1.0, 1, &r, detail,
                                            sizeof detail),
                 RECUO_ERR_IO);
    CHECK_CTX(strstr(detail, "it is a symbolic link") != NULL, "%s", detail);
    struct stat st;
    CHECK(lstat(victim, &st) != 0); /* the dangling link created nothing */
    CHECK(unlink(link) == 0 && rmdir(dir) == 0);
}

static void key_of_a_new_machine(recuo_policy *p, int seeded, char key[RECUO_IDEMPOTENCY_KEY_SIZE]) {
    recuo_attempts *a = NULL;
    if (seeded) {
        CHECK_STATUS(recuo_attempts_new_seeded(p, 7, &a), RECUO_OK);
    } else {
        CHECK_STATUS(recuo_attempts_new(p, &a), RECUO_OK);
    }
    CHECK_STATUS(recuo_attempts_idempotency_key(a, key, RECUO_IDEMPOTENCY_KEY_SIZE, NULL),
                 RECUO_OK);
    recuo_attempts_free(a);
}

static void keys_differ_across_fork_and_seeds(void) {
    recuo_policy *p = recuo_policy_new();
    char seeded1[RECUO_IDEMPOTENCY_KEY_SIZE], seeded2[RECUO_IDEMPOTENCY_KEY_SIZE];
    key_of_a_new_machine(p, 1, seeded1);
    key_of_a_new_machine(p, 1, seeded2);
    CHECK_CTX(strcmp(seeded1, seeded2) != 0, "one seed, one key: %s", seeded1);

    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char k[RECUO_IDEMPOTENCY_KEY_SIZE];
        key_of_a_new_machine(p, 0, k);
        ssize_t w = write(fds[1], k, 36);
        key_of_a_new_machine(p, 1, k);
        w += write(fds[1], k, 36);
        recuo_policy_free(p);
        _exit(w == 72 ? 0 : 1);
    }
    close(fds[1]);
    char parent[2][RECUO_IDEMPOTENCY_KEY_SIZE];
    key_of_a_new_machine(p, 0, parent[0]);
    key_of_a_new_machine(p, 1, parent[1]);
    char got[72];
    size_t filled = 0;
    while (filled < sizeof got) {
        ssize_t n = read(fds[0], got + filled, sizeof got - filled);
        if (n <= 0) {
            break;
        }
        filled += (size_t)n;
    }
    close(fds[0]);
    int status = 0;
    /* Its exit status is not read: under valgrind a child that leaves with _exit reports the
     * parent's memory it inherited. The 72 bytes it wrote say it made both keys. */
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
    CHECK_EQ_U64(filled, 72);
    const char *all[6] = {seeded1, seeded2, parent[0], parent[1], got, got + 36};
    for (int i = 0; i < 6; i++) {
        for (int j = i + 1; j < 6; j++) {
            CHECK_CTX(strncmp(all[i], all[j], 36) != 0, "keys %d and %d: %.36s", i, j, all[i]);
        }
    }
    recuo_policy_free(p);
}

int main(int argc, char **argv) {
    (void)argc;
    /* No backtrace for the deliberate panic: symbolising one keeps megabytes of debug
     * information cached until exit, which valgrind would count as still reachable. */
    setenv("RUST_BACKTRACE", "0", 1);
    a_panic_is_a_status();
    a_multi_byte_reply_is_a_clear_io_error();
    an_endless_line_is_refused_at_its_cap();
    rediss_is_tls_or_an_error();
    a_shared_file_through_a_link_is_refused();
    keys_differ_across_fork_and_seeds();
    return check_summary(argv[0]);
}
