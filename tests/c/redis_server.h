/*
 * redis_server.h — a real `redis-server` of a C test's own, on a free port of 127.0.0.1
 * (`--save "" --appendonly no`), started as a child (fork, then exec: valgrind does not follow
 * the exec, so the server runs natively) and stopped at the end. Every wait is bounded.
 * Shared by test_redis.c and test_curl.c; static functions only, like check.h.
 */
#ifndef RECUO_TEST_REDIS_SERVER_H
#define RECUO_TEST_REDIS_SERVER_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Milliseconds on CLOCK_MONOTONIC, read by the test itself. */
static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A port of 127.0.0.1 nothing listens on now (the kernel's choice); 0 on failure. */
static unsigned free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return 0;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    unsigned port = 0;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    close(fd);
    return port;
}

/* Whether something accepts connections on 127.0.0.1:port. */
static int listening(unsigned port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return 0;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    int ok = connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    close(fd);
    return ok;
}

struct server {
    pid_t pid;
    unsigned port;
    char url[64];
};

/* Starts redis-server on a free port and waits (at most 10 s) until it accepts connections. */
static int server_start(struct server *s) {
    s->pid = -1;
    s->port = free_port();
    if (s->port == 0) {
        return 0;
    }
    snprintf(s->url, sizeof s->url, "redis://127.0.0.1:%u", s->port);
    char port[16];
    snprintf(port, sizeof port, "%u", s->port);
    fflush(stdout);
    fflush(stderr);
    s->pid = fork();
    if (s->pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDIN_FILENO);
            dup2(null, STDOUT_FILENO);
            close(null);
        }
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save",
               "", "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    if (s->pid < 0) {
        return 0;
    }
    uint64_t give_up = now_ms() + 10000;
    while (now_ms() < give_up) {
        if (listening(s->port)) {
            return 1;
        }
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            s->pid = -1; /* it died: not installed, or the port was taken meanwhile */
            return 0;
        }
        sleep_ms(20);
    }
    return 0;
}

/* Stops the server: SIGTERM, then SIGKILL if it has not gone within 5 s. */
static void server_stop(struct server *s) {
    if (s->pid <= 0) {
        return;
    }
    kill(s->pid, SIGTERM);
    uint64_t give_up = now_ms() + 5000;
    int status;
    while (waitpid(s->pid, &status, WNOHANG) == 0) {
        if (now_ms() > give_up) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
            break;
        }
        sleep_ms(10);
    }
    s->pid = -1;
}

#endif /* RECUO_TEST_REDIS_SERVER_H */
