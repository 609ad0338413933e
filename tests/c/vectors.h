/*
 * vectors.h — reading the shared vectors (the JSON files of tests/vectors) with cJSON, for the C tests
 * that run them (test_vectors.c, test_loops.c). A vector that is not as expected ends the run
 * with exit status 2: the file is wrong, not recuo.
 */
#ifndef RECUO_TEST_VECTORS_H
#define RECUO_TEST_VECTORS_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static char *read_file(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t n;
    while (text != NULL && (n = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(text, cap * 2);
            if (bigger == NULL) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (text == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        exit(2);
    }
    text[len] = '\0';
    return text;
}

static cJSON *parse(const char *text, const char *name) {
    cJSON *doc = cJSON_Parse(text);
    if (doc == NULL) {
        fprintf(stderr, "%s: invalid JSON near: %.40s\n", name, cJSON_GetErrorPtr());
        exit(2);
    }
    return doc;
}

static cJSON *field(const cJSON *object, const char *name) {
    cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
    if (item == NULL) {
        fprintf(stderr, "vector without \"%s\"\n", name);
        exit(2);
    }
    return item;
}

/* An integer field: cJSON reads numbers as doubles, exact up to 2^53, which the vectors
 * respect. */
static double number(const cJSON *object, const char *name) {
    cJSON *item = field(object, name);
    if (!cJSON_IsNumber(item) || item->valuedouble != floor(item->valuedouble)) {
        fprintf(stderr, "\"%s\" is not an integer\n", name);
        exit(2);
    }
    return item->valuedouble;
}

#endif /* RECUO_TEST_VECTORS_H */
