/*
 * recuo_serve.h — `recuo serve` for the C tests of the libcurl glue (test_curl.c,
 * test_http.c): the server started as a child on a port of the kernel's choice and stopped,
 * response bodies collected into a buffer, and a GET whose body is read as JSON. Static
 * functions only, like check.h; include recuo_curl.h first. Each test sets `recuo_bin` (the
 * `recuo` binary to run) from its first argument before starting a server.
 */
#ifndef RECUO_TEST_RECUO_SERVE_H
#define RECUO_TEST_RECUO_SERVE_H

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "check.h"

static const char *recuo_bin;

struct serve {
    pid_t pid;
    unsigned port;
    char base[64];
};

/* Starts `recuo serve --port 0 --stop-after 60s ARGS...` (ARGS ends with NULL) and reads its
 * port from the first line it prints; BASE is http:// or https:// as it says. */
static int serve_start(struct serve *s, const char *const *args) {
    int out[2];
    if (pipe(out) != 0) {
        return -1;
    }
    const char *argv[24] = {recuo_bin, "serve", "--port", "0", "--stop-after", "60s"};
    size_t n = 6;
    for (size_t i = 0; args[i] != NULL && n < 23; i++) {
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    s->pid = fork();
    if (s->pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        int quiet = open("/dev/null", O_WRONLY);
        dup2(quiet, STDERR_FILENO); /* its summary at exit */
        close(out[0]);
        close(out[1]);
        execv(recuo_bin, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    char line[256] = "";
    int ok = f != NULL && fgets(line, sizeof line, f) != NULL &&
             sscanf(line, "listening on http%*[s]://127.0.0.1:%u", &s->port) == 1;
    if (!ok) {
        ok = sscanf(line, "listening on http://127.0.0.1:%u", &s->port) == 1;
    }
    if (f != NULL) {
        fclose(f); /* the server's later lines go nowhere: it ignores a closed stdout */
    }
    snprintf(s->base, sizeof s->base, "%s://127.0.0.1:%u", strstr(line, "https") ? "https" : "http",
             s->port);
    if (!ok) {
        fprintf(stderr, "recuo serve did not start: %s\n", line);
    }
    return ok ? 0 : -1;
}

/* serve_start, counted as a check. */
static bool serve_up(struct serve *s, const char *const *args) {
    int started = serve_start(s, args) == 0;
    CHECK_CTX(started, "recuo serve %s", args[0]);
    return started;
}

static void serve_stop(struct serve *s) {
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

/* A response body: what fits of it, NUL-terminated, and how often recuo_curl_perform reset
 * it (body_reset as the options' reset_body, the body as their user_data). */
struct body {
    char data[8192];
    size_t len;
    int resets;
};

static size_t body_write(char *ptr, size_t size, size_t nmemb, void *user_data) {
    struct body *b = user_data;
    size_t n = size * nmemb, room = sizeof b->data - 1 - b->len;
    memcpy(b->data + b->len, ptr, n < room ? n : room);
    b->len += n < room ? n : room;
    b->data[b->len] = '\0';
    return n;
}

static void body_reset(uint32_t attempt, void *user_data) {
    (void)attempt;
    struct body *b = user_data;
    b->len = 0;
    b->data[0] = '\0';
    b->resets++;
}

/* An easy handle for `url` that writes the response's body into `b`. */
static CURL *easy_for(const char *url, struct body *b) {
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, body_write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    return easy;
}

/* GET `url`, its body parsed (the caller frees it); NULL when the transfer or the JSON
 * failed. */
static cJSON *get_json(const char *url) {
    struct body b = {.len = 0};
    CURL *easy = easy_for(url, &b);
    CURLcode code = curl_easy_perform(easy);
    curl_easy_cleanup(easy);
    return code == CURLE_OK ? cJSON_Parse(b.data) : NULL;
}

#endif /* RECUO_TEST_RECUO_SERVE_H */
